"""Diagonals, bands and identity matrices: ``matrix_diag``, ``matrix_diag_part``,
``matrix_set_diag``, ``matrix_band_part``, ``eye``, and ``trace``.

Primitives (one record each): ``MatrixDiag``, ``MatrixDiagPart``, ``MatrixSetDiag``
(main diagonal only, ``k=0``), ``MatrixBandPart`` (bounds known at build time; the
kernel caches its 0/1 mask per matrix shape) and ``Eye`` (a private, non-differentiable
op for an identity whose size is known only when the step runs; ``eye`` of static size
is a constant). ``trace`` is a composite: the sum of ``matrix_diag_part``.

Every op here moves or masks entries, so each gradient is another op of this module:
``MatrixDiag`` and ``MatrixDiagPart`` are each other's adjoints, ``MatrixSetDiag``
splits its gradient into the off-diagonal part and the diagonal, and the adjoint of
``MatrixBandPart`` is the same band.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...framework import dtypes, registry
from ...framework.graph import Operation, Tensor
from ...framework.scopes import name_scope
from ...framework.tensor_shape import TensorShape
from ...framework.tensor_util import constant_value
from .. import array as array_ops
from .. import math as math_ops
from ..build import apply_op, convert_inputs
from ..constant import constant
from .contraction import MAX_CACHED_SHAPES, require_rank_at_least


# --- diagonals and bands ----------------------------------------------------------------
def _infer_matrix_diag(op: Operation) -> list:
    x = op.inputs[0]
    dims = require_rank_at_least(x, 1)
    if dims is None:
        return [(x.dtype, TensorShape(None))]
    return [(x.dtype, TensorShape([*dims, dims[-1]]))]


def _matrix_diag_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp

    def matrix_diag_(d: Any) -> Any:
        n = d.shape[-1]
        out = xp.zeros(d.shape + (n,), dtype=d.dtype)
        index = xp.arange(n)
        out[..., index, index] = d
        return out

    return matrix_diag_


def _matrix_diag_grad(op: Operation, grad: Tensor) -> list:
    return [matrix_diag_part(grad)]


registry.register(
    registry.OpDef("MatrixDiag", _infer_matrix_diag, _matrix_diag_kernel, _matrix_diag_grad)
)


def _check_k(k: Any, what: str) -> None:
    if not (isinstance(k, (int, np.integer)) and int(k) == 0):
        raise NotImplementedError(f"{what} supports only the main diagonal (k=0), got k={k}")


def matrix_diag(
    diagonal: Any,
    name: str = "diag",
    k: int = 0,
    num_rows: int = -1,
    num_cols: int = -1,
    padding_value: Any = 0,
    align: str = "RIGHT_LEFT",
) -> Tensor:
    """Square matrices with the given diagonals (``[..., N]`` -> ``[..., N, N]``).

    Only the main diagonal (``k=0``), square outputs and zero padding are supported.
    """
    _check_k(k, "matrix_diag")
    if num_rows not in (-1, None) or num_cols not in (-1, None) or padding_value != 0:
        raise NotImplementedError("matrix_diag supports only square outputs padded with 0")
    return apply_op("MatrixDiag", [diagonal], name=name)


def _infer_matrix_diag_part(op: Operation) -> list:
    x = op.inputs[0]
    dims = require_rank_at_least(x, 2)
    if dims is None:
        return [(x.dtype, TensorShape(None))]
    m, n = dims[-2:]
    k = None if m is None or n is None else min(m, n)
    return [(x.dtype, TensorShape([*dims[:-2], k]))]


def _matrix_diag_part_kernel(ctx: Any, attrs: dict) -> Any:
    diagonal = ctx.xp.diagonal
    return lambda x: diagonal(x, 0, -2, -1).copy()  # the view is read-only and aliases x


def _matrix_diag_part_grad(op: Operation, grad: Tensor) -> list:
    return [matrix_set_diag(array_ops.zeros_like(op.inputs[0]), grad)]


registry.register(
    registry.OpDef(
        "MatrixDiagPart", _infer_matrix_diag_part, _matrix_diag_part_kernel, _matrix_diag_part_grad
    )
)


def matrix_diag_part(
    input: Any,
    name: str = "diag_part",
    k: int = 0,
    padding_value: Any = 0,
    align: str = "RIGHT_LEFT",
) -> Tensor:
    """The main diagonals of the matrices of ``input`` (``[..., M, N]`` ->
    ``[..., min(M, N)]``). Only ``k=0`` is supported."""
    _check_k(k, "matrix_diag_part")
    return apply_op("MatrixDiagPart", [input], name=name)


def _infer_matrix_set_diag(op: Operation) -> list:
    x, d = op.inputs
    if x.dtype != d.dtype:
        raise TypeError(
            f"matrix_set_diag: diagonal dtype {d.dtype.name} differs from "
            f"input dtype {x.dtype.name}"
        )
    (want,) = [s for _, s in _infer_matrix_diag_part(op)]
    if not want.is_compatible_with(d.shape):
        raise ValueError(
            f"The diagonal must have shape {want} for an input of shape {x.shape}, got {d.shape}"
        )
    return [(x.dtype, x.shape)]


def _matrix_set_diag_kernel(ctx: Any, attrs: dict) -> Any:
    arange = ctx.xp.arange

    def matrix_set_diag_(x: Any, d: Any) -> Any:
        out = x.copy()
        index = arange(d.shape[-1])
        out[..., index, index] = d
        return out

    return matrix_set_diag_


def _matrix_set_diag_grad(op: Operation, grad: Tensor) -> list:
    diagonal = op.inputs[1]
    return [matrix_set_diag(grad, array_ops.zeros_like(diagonal)), matrix_diag_part(grad)]


registry.register(
    registry.OpDef(
        "MatrixSetDiag", _infer_matrix_set_diag, _matrix_set_diag_kernel, _matrix_set_diag_grad
    )
)


def matrix_set_diag(
    input: Any,
    diagonal: Any,
    name: str = "set_diag",
    k: int = 0,
    align: str = "RIGHT_LEFT",
) -> Tensor:
    """``input`` with its main diagonals replaced by ``diagonal``. Only ``k=0``."""
    _check_k(k, "matrix_set_diag")
    x = convert_inputs([input])[0]
    d = convert_inputs([diagonal], dtype_hint=x.dtype)[0]
    return apply_op("MatrixSetDiag", [x, d], name=name)


def _infer_band_part(op: Operation) -> list:
    x = op.inputs[0]
    require_rank_at_least(x, 2)
    return [(x.dtype, x.shape)]


def _band_part_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    lower, upper = attrs["num_lower"], attrs["num_upper"]
    masks: dict[tuple, Any] = {}

    def band_part(x: Any) -> Any:
        key = (x.shape[-2:], x.dtype)
        cached = masks.get(key)
        if cached is None:
            if len(masks) >= MAX_CACHED_SHAPES:
                masks.clear()
            m, n = x.shape[-2:]
            rows = xp.arange(m).reshape(m, 1)
            cols = xp.arange(n).reshape(1, n)
            keep = xp.ones((m, n), dtype=bool)
            if lower >= 0:
                keep = keep & (rows - cols <= lower)
            if upper >= 0:
                keep = keep & (cols - rows <= upper)
            cached = masks[key] = (keep, xp.zeros((), dtype=x.dtype))
        keep, zero = cached
        return xp.where(keep, x, zero)

    return band_part


def _band_part_grad(op: Operation, grad: Tensor) -> list:
    return [matrix_band_part(grad, op.attrs["num_lower"], op.attrs["num_upper"])]


registry.register(
    registry.OpDef("MatrixBandPart", _infer_band_part, _band_part_kernel, _band_part_grad)
)


def matrix_band_part(
    input: Any,
    num_lower: Any,
    num_upper: Any,
    name: str | None = None,
) -> Tensor:
    """Keeps a band of each matrix: ``num_lower`` subdiagonals and ``num_upper``
    superdiagonals (negative: the whole triangle), zeroing the rest.

    ``band_part(x, -1, 0)`` is the lower triangle, ``band_part(x, 0, 0)`` the diagonal.
    ``num_lower``/``num_upper`` must be known at build time.
    """
    bounds = []
    for value, what in ((num_lower, "num_lower"), (num_upper, "num_upper")):
        if isinstance(value, Tensor):
            folded = constant_value(value)
            if folded is None:
                raise ValueError(f"matrix_band_part needs {what} known at build time")
            value = folded
        bounds.append(int(value))
    return apply_op(
        "MatrixBandPart", [input], {"num_lower": bounds[0], "num_upper": bounds[1]}, name=name
    )


# --- trace ----------------------------------------------------------------------------------
def trace(x: Any, name: str | None = None) -> Tensor:
    """The sums of the main diagonals of the matrices of ``x`` (``[..., M, N]`` ->
    ``[...]``)."""
    with name_scope(name, "Trace", [x]):
        return math_ops.reduce_sum(matrix_diag_part(x), axis=-1)


# --- eye ----------------------------------------------------------------------------------
def _infer_eye(op: Operation) -> list:
    rows, cols, batch = op.inputs
    for t in op.inputs:
        if not t.dtype.is_integer:
            raise TypeError(f"eye needs integer sizes, got {t.dtype.name} for '{t.name}'")
    dims: list[int | None] = []
    batch_value = constant_value(batch)
    if batch_value is not None:
        dims.extend(int(d) for d in np.reshape(batch_value, [-1]))
    elif batch.shape.rank == 1 and batch.shape[0].value is not None:
        dims.extend([None] * batch.shape[0].value)
    else:
        return [(op.attrs["dtype"], TensorShape(None))]
    for t in (rows, cols):
        value = constant_value(t)
        dims.append(None if value is None else int(value))
    return [(op.attrs["dtype"], TensorShape(dims))]


def _eye_kernel(ctx: Any, attrs: dict) -> Any:
    xp, dtype = ctx.xp, attrs["dtype"].as_numpy_dtype

    def eye_(rows: Any, cols: Any, batch: Any) -> Any:
        matrix = xp.eye(int(rows), int(cols), dtype=dtype)
        shape = tuple(int(d) for d in batch) + matrix.shape
        return matrix if len(shape) == 2 else xp.array(xp.broadcast_to(matrix, shape))

    return eye_


registry.register(
    registry.OpDef("Eye", _infer_eye, _eye_kernel, registry.NOT_DIFFERENTIABLE, foldable=True)
)


def _static_int(value: Any) -> int | None:
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, Tensor):
        folded = constant_value(value)
        return None if folded is None or np.ndim(folded) else int(folded)
    return int(value)


def eye(
    num_rows: Any,
    num_columns: Any = None,
    batch_shape: Any = None,
    dtype: Any = dtypes.float32,
    name: str | None = None,
) -> Tensor:
    """Identity matrices (ones on the main diagonal), optionally batched.

    Args:
        num_rows: the number of rows, an int or a scalar int tensor.
        num_columns: the number of columns (default: ``num_rows``).
        batch_shape: leading batch dimensions, a list of ints or a 1-D int tensor.
        dtype: the element type.
        name: the op name.

    Returns:
        A tensor of shape ``batch_shape + [num_rows, num_columns]``; a constant when
        every size is known at build time.
    """
    dtype = dtypes.as_dtype(dtype)
    if num_columns is None:
        num_columns = num_rows
    rows, cols = _static_int(num_rows), _static_int(num_columns)
    if isinstance(batch_shape, Tensor):
        folded = constant_value(batch_shape)
        batch = None if folded is None else [int(d) for d in np.reshape(folded, [-1])]
    else:
        batch = [] if batch_shape is None else [int(d) for d in batch_shape]
    if rows is not None and cols is not None and batch is not None:
        if rows < 0 or cols < 0:
            raise ValueError(f"eye needs non-negative sizes, got {rows} x {cols}")
        value = np.broadcast_to(
            np.eye(rows, cols, dtype=dtype.as_numpy_dtype), [*batch, rows, cols]
        ).copy()
        return constant(value, dtype=dtype, name=name or "eye")
    batch_tensor = batch_shape if batch_shape is not None else constant([], dtype=dtypes.int32)
    sizes = convert_inputs([num_rows, num_columns, batch_tensor], dtype_hint=dtypes.int32)
    return apply_op("Eye", sizes, {"dtype": dtype}, name=name or "eye")
