"""Elementwise bitwise ops on integers (TF1's ``bitwise_ops``): ``BitwiseAnd BitwiseOr
BitwiseXor LeftShift RightShift`` (binary, numpy broadcasting) and ``Invert`` (unary).

Each op type is one row of ``_BITWISE``, registered as the arithmetic rows are
(``arith._BINARY``): an integer-only ``check_rule`` and the namespace's ufunc as kernel.
None has a gradient: they are integer ops (``registry.NOT_DIFFERENTIABLE``).

Shifts follow TF's kernels, which differ from numpy's for a shift outside
``[0, bits)``: TF clamps the shift amount to ``[0, bits - 1]`` (so ``1 << 40`` on
int32 is ``1 << 31``, and ``-8 >> 40`` is ``-1``), where numpy's result is
platform-defined.
"""

from __future__ import annotations

from typing import Any

from ...framework import dtypes, registry
from ...framework.graph import Tensor
from ..build import apply_op
from ..rules import with_arity
from .compare import check_rule, ufunc_kernel


def _is_integer(d: dtypes.DType) -> bool:
    return d.is_integer


def _shift_kernel(ufunc_name: str) -> Any:
    """Kernel factory: ``ufunc_name`` with the shift clamped to ``[0, bits - 1]`` as TF's."""

    def factory(ctx: Any, attrs: dict) -> Any:
        xp = ctx.xp
        fn = getattr(xp, ufunc_name)

        def shift(x: Any, y: Any) -> Any:
            bits = x.dtype.itemsize * 8
            return fn(x, xp.clip(y, 0, bits - 1).astype(x.dtype))

        return shift

    factory.__name__ = f"_{ufunc_name}_kernel"
    return factory


# (type, kernel, arity)
_BITWISE: list[tuple[str, Any, int]] = [
    ("BitwiseAnd", ufunc_kernel("bitwise_and"), 2),
    ("BitwiseOr", ufunc_kernel("bitwise_or"), 2),
    ("BitwiseXor", ufunc_kernel("bitwise_xor"), 2),
    ("LeftShift", _shift_kernel("left_shift"), 2),
    ("RightShift", _shift_kernel("right_shift"), 2),
    ("Invert", ufunc_kernel("invert"), 1),
]
for _type, _kernel, _arity in _BITWISE:
    _rule = with_arity(check_rule(_is_integer, "integer"), _arity)
    registry.register(
        registry.OpDef(_type, _rule, _kernel, registry.NOT_DIFFERENTIABLE, foldable=True)
    )


def bitwise_and(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Returns ``x & y`` elementwise for integer tensors of one dtype, with broadcasting.

    Raises:
        TypeError: the inputs are not integers, or their dtypes differ.
    """
    return apply_op("BitwiseAnd", [x, y], name=name)


def bitwise_or(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Returns ``x | y`` elementwise for integer tensors of one dtype, with broadcasting."""
    return apply_op("BitwiseOr", [x, y], name=name)


def bitwise_xor(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Returns ``x ^ y`` elementwise for integer tensors of one dtype, with broadcasting."""
    return apply_op("BitwiseXor", [x, y], name=name)


def left_shift(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Returns ``x << y`` elementwise; a shift outside ``[0, bits)`` is clamped, as TF's."""
    return apply_op("LeftShift", [x, y], name=name)


def right_shift(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Returns ``x >> y`` (arithmetic for signed ``x``); shifts are clamped as TF's."""
    return apply_op("RightShift", [x, y], name=name)


def invert(x: Any, name: str | None = None) -> Tensor:
    """Returns ``~x`` elementwise (every bit flipped) for an integer tensor."""
    return apply_op("Invert", [x], name=name)
