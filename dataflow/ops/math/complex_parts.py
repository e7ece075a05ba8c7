"""Complex numbers from and to their parts: ``Complex``, ``Real``, ``Imag``, ``Conj``,
``Angle`` and ``ComplexAbs``, with TF1's builders (``tf.complex``, ``tf.real``, ...).

A complex tensor is ``complex64`` (parts ``float32``) or ``complex128`` (``float64``).
The builders follow TF1 on real inputs: ``real`` and ``conj`` return a real tensor
itself, ``imag`` its zeros, ``angle`` ``pi`` where it is negative and ``0`` elsewhere.

Gradients use TF's convention for a real loss ``L`` of a complex ``z``: the gradient is
``dL/d(Re z) + i dL/d(Im z)``. So ``Real``'s is ``complex(g, 0)``, ``Imag``'s
``complex(0, g)``, ``Complex``'s ``(real(g), imag(g))``, ``Conj``'s ``conj(g)``,
``ComplexAbs``'s ``g z / |z|`` and ``Angle``'s ``g (-Im z + i Re z) / |z|^2``; each is
written with these ops and real arithmetic only, so second derivatives work.
"""

from __future__ import annotations

import math as _pymath
from typing import Any

from ...framework import dtypes, registry
from ...framework.graph import Operation, Tensor
from ..array.shapes import zeros_like
from ..build import apply_op, convert_inputs
from ..constant import constant
from ..rules import broadcast
from .arith import abs as arith_abs
from .arith import add, div_no_nan, multiply, negative, realdiv, square
from .compare import less, select

_COMPLEX_OF = {dtypes.float32: dtypes.complex64, dtypes.float64: dtypes.complex128}
_REAL_OF = {c: r for r, c in _COMPLEX_OF.items()}


def complex_dtype_of(dtype: dtypes.DType) -> dtypes.DType:
    """The complex dtype whose parts are ``dtype`` (float32 or float64), else TypeError."""
    if dtype not in _COMPLEX_OF:
        raise TypeError(f"complex parts must be float32 or float64, got {dtype.name}")
    return _COMPLEX_OF[dtype]


def real_dtype_of(dtype: dtypes.DType) -> dtypes.DType:
    """The dtype of the parts of ``dtype`` (complex64 or complex128), else TypeError."""
    if dtype not in _REAL_OF:
        raise TypeError(f"expected a complex64 or complex128 tensor, got {dtype.name}")
    return _REAL_OF[dtype]


# --- rules -----------------------------------------------------------------------------
def _infer_complex(op: Operation) -> list:
    re, im = op.inputs
    if re.dtype != im.dtype:
        raise TypeError(
            f"'Complex' parts must share one dtype, got {re.dtype.name} and {im.dtype.name}"
        )
    return [(complex_dtype_of(re.dtype), broadcast(op))]


def _infer_part(op: Operation) -> list:
    x = op.inputs[0]
    return [(real_dtype_of(x.dtype), x.shape)]


def _infer_conj(op: Operation) -> list:
    x = op.inputs[0]
    real_dtype_of(x.dtype)
    return [(x.dtype, x.shape)]


# --- kernels ---------------------------------------------------------------------------
def _complex_kernel(ctx: Any, attrs: dict) -> Any:
    dtype = attrs["Tout"].as_numpy_dtype

    def make_complex(re: Any, im: Any) -> Any:
        return (re + im * 1j).astype(dtype, copy=False)

    return make_complex


def _part_kernel(part: str) -> Any:
    def factory(ctx: Any, attrs: dict) -> Any:
        xp = ctx.xp
        fn = getattr(xp, part)

        def part_of(z: Any) -> Any:
            out = fn(z)
            # A part of a strided view, made contiguous; ``ascontiguousarray`` would turn
            # a scalar into shape [1].
            return out if out.ndim == 0 else xp.ascontiguousarray(out)

        return part_of

    factory.__name__ = f"_{part}_kernel"
    return factory


def _abs_kernel(ctx: Any, attrs: dict) -> Any:
    return ctx.xp.abs


def _conj_kernel(ctx: Any, attrs: dict) -> Any:
    return ctx.xp.conj


# --- gradients -------------------------------------------------------------------------
def _complex_grad(op: Operation, grad: Tensor) -> list:
    return [real(grad), imag(grad)]


def _real_grad(op: Operation, grad: Tensor) -> list:
    return [complex(grad, zeros_like(grad))]


def _imag_grad(op: Operation, grad: Tensor) -> list:
    return [complex(zeros_like(grad), grad)]


def _conj_grad(op: Operation, grad: Tensor) -> list:
    return [conj(grad)]


def _abs_grad(op: Operation, grad: Tensor) -> list:
    # d|z| = (Re z dRe + Im z dIm) / |z|: the gradient is g z / |z| (0 at z = 0, as TF).
    z, r = op.inputs[0], op.outputs[0]
    scale = div_no_nan(grad, r)
    return [complex(multiply(scale, real(z)), multiply(scale, imag(z)))]


def _angle_grad(op: Operation, grad: Tensor) -> list:
    # angle = atan2(Im z, Re z): d/dRe = -Im/|z|^2, d/dIm = Re/|z|^2.
    z = op.inputs[0]
    re, im = real(z), imag(z)
    scale = realdiv(grad, add(square(re), square(im)))
    return [complex(negative(multiply(scale, im)), multiply(scale, re))]


registry.register(registry.OpDef("Complex", _infer_complex, _complex_kernel, _complex_grad))
registry.register(registry.OpDef("Real", _infer_part, _part_kernel("real"), _real_grad))
registry.register(registry.OpDef("Imag", _infer_part, _part_kernel("imag"), _imag_grad))
registry.register(registry.OpDef("Angle", _infer_part, _part_kernel("angle"), _angle_grad))
registry.register(registry.OpDef("ComplexAbs", _infer_part, _abs_kernel, _abs_grad))
registry.register(registry.OpDef("Conj", _infer_conj, _conj_kernel, _conj_grad))


# --- builders --------------------------------------------------------------------------
def complex(real: Any, imag: Any, name: str | None = None) -> Tensor:
    """Returns ``real + i imag`` elementwise (with numpy broadcasting).

    Args:
        real: a float32 or float64 tensor.
        imag: a tensor of ``real``'s dtype.
        name: a name for the op.

    Returns:
        A complex64 (float32 parts) or complex128 (float64 parts) tensor.

    Raises:
        TypeError: the parts' dtypes differ or are not float32/float64.
    """
    re, im = convert_inputs([real, imag])
    tout = complex_dtype_of(re.dtype) if re.dtype == im.dtype else dtypes.complex64
    return apply_op("Complex", [re, im], {"T": re.dtype, "Tout": tout}, name=name)


def _part(op_type: str, input: Any, name: str | None) -> Tensor:
    x = convert_inputs([input])[0]
    return apply_op(op_type, [x], {"T": x.dtype, "Tout": real_dtype_of(x.dtype)}, name=name)


def real(input: Any, name: str | None = None) -> Tensor:
    """Returns the real parts of a complex tensor (a real tensor is returned itself)."""
    x = convert_inputs([input])[0]
    if not x.dtype.is_complex:
        return x
    return _part("Real", x, name)


def imag(input: Any, name: str | None = None) -> Tensor:
    """Returns the imaginary parts of a complex tensor (zeros for a real tensor)."""
    x = convert_inputs([input])[0]
    if not x.dtype.is_complex:
        return zeros_like(x, name=name)
    return _part("Imag", x, name)


def angle(input: Any, name: str | None = None) -> Tensor:
    """Returns the arguments ``atan2(Im z, Re z)`` of a complex tensor; for a real tensor,
    ``pi`` where it is negative and ``0`` elsewhere (as TF1)."""
    x = convert_inputs([input])[0]
    if not x.dtype.is_complex:
        zeros = zeros_like(x)
        pi = add(zeros, constant(_pymath.pi, dtype=x.dtype))
        return select(less(x, zeros), pi, zeros, name=name)
    return _part("Angle", x, name)


def complex_abs(x: Any, name: str | None = None) -> Tensor:
    """Returns the moduli ``|z|`` of a complex tensor, as a real tensor."""
    return _part("ComplexAbs", x, name)


def abs(x: Any, name: str | None = None) -> Tensor:
    """Returns ``|x|`` elementwise: of ``x``'s dtype for a real tensor, the (real) moduli
    for a complex one (TF1's ``tf.abs``)."""
    t = convert_inputs([x])[0]
    if t.dtype.is_complex:
        return _part("ComplexAbs", t, name)
    return arith_abs(t, name=name)


def conj(x: Any, name: str | None = None) -> Tensor:
    """Returns the complex conjugates of ``x``; a real numeric tensor is returned itself.

    Raises:
        TypeError: ``x`` is not numeric (as TF1).
    """
    t = convert_inputs([x])[0]
    if t.dtype.is_complex:
        return apply_op("Conj", [t], {"T": t.dtype}, name=name)
    if not t.dtype.is_numeric:
        raise TypeError(f"Expected numeric or variant tensor, got dtype {t.dtype.name}")
    return t
