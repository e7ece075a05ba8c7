"""The ``Cast`` op and TF1's ``to_float``-style shorthands.

Its own module, below both the array and the math families: shape and index helpers
(``array_shape``) cast indices, and the math family's gradients cast back to their
input's dtype, so both import this and it imports neither.
"""

from __future__ import annotations

from typing import Any

from ..framework import dtypes, errors, registry
from ..framework.graph import Operation, Tensor, convert_to_tensor
from .build import apply_op
from .rules import is_float


def _infer_cast(op: Operation) -> list:
    return [(op.attrs["DstT"], op.inputs[0].shape)]


def _cast_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    src, dst = attrs.get("SrcT"), attrs["DstT"]
    if src is not None and (src == dtypes.string) != (dst == dtypes.string):
        # TF1 has no such kernel (parsing numbers is ``tf.strings.to_number``'s job).
        raise errors.UnimplementedError(
            None, None, f"Cast {src.name} to {dst.name} is not supported"
        )
    np_dst = dst.as_numpy_dtype
    if dst.is_complex or (src is not None and not src.is_complex):
        return lambda x: x.astype(np_dst)
    # From complex (or an unrecorded source dtype): keep the real part, as TF does.
    return lambda x: (xp.real(x) if x.dtype.kind == "c" else x).astype(np_dst)


def _cast_grad(op: Operation, grad: Tensor) -> list:
    src = op.inputs[0].dtype
    if is_float(src) and is_float(op.outputs[0].dtype):
        return [cast(grad, src)]
    return [None]


registry.register(registry.OpDef("Cast", _infer_cast, _cast_kernel, _cast_grad, foldable=True))


def cast(x: Any, dtype: Any, name: str | None = None) -> Tensor:
    """Casts ``x`` to ``dtype``. Returns ``x`` itself when it already has that dtype.

    Floats cast to integers truncate toward zero; nonzero values cast to bool are True;
    complex values cast to a real dtype keep their real part.
    """
    dst = dtypes.as_dtype(dtype)
    x = convert_to_tensor(x)
    if x.dtype == dst:
        return x
    return apply_op("Cast", [x], {"SrcT": x.dtype, "DstT": dst}, name=name)


def to_float(x: Any, name: str = "ToFloat") -> Tensor:
    """Casts ``x`` to float32 (deprecated in TF1: use ``cast``)."""
    return cast(x, dtypes.float32, name=name)


def to_complex64(x: Any, name: str = "ToComplex64") -> Tensor:
    """Casts ``x`` to complex64 (deprecated in TF1: use ``cast``)."""
    return cast(x, dtypes.complex64, name=name)


def to_complex128(x: Any, name: str = "ToComplex128") -> Tensor:
    """Casts ``x`` to complex128 (deprecated in TF1: use ``cast``)."""
    return cast(x, dtypes.complex128, name=name)


def to_double(x: Any, name: str = "ToDouble") -> Tensor:
    """Casts ``x`` to float64 (deprecated in TF1: use ``cast``)."""
    return cast(x, dtypes.float64, name=name)


def to_int32(x: Any, name: str = "ToInt32") -> Tensor:
    """Casts ``x`` to int32 (deprecated in TF1: use ``cast``)."""
    return cast(x, dtypes.int32, name=name)


def to_int64(x: Any, name: str = "ToInt64") -> Tensor:
    """Casts ``x`` to int64 (deprecated in TF1: use ``cast``)."""
    return cast(x, dtypes.int64, name=name)
