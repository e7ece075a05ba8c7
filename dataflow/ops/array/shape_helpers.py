"""Build-time helpers the array op families share: what is known of an integer tensor's
value while building (``partial_value`` and friends), index dtype and rank checks for
shape rules, small int tensors, static axes, and the normalized key of a strided slice
(``array/shapes.py`` explains why they live at the bottom of the family).
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...framework import dtypes
from ...framework.graph import Operation, Tensor, convert_to_tensor
from ...framework.tensor_shape import TensorShape
from ...framework.tensor_util import constant_value
from ..build import apply_op
from ..constant import constant
from ..rules import normalize_axis

INDEX_DTYPES = (dtypes.int32, dtypes.int64)


# --- build-time helpers ------------------------------------------------------------------
def partial_value(t: Tensor, depth: int = 6) -> np.ndarray | None:
    """The value of integer tensor ``t`` as far as it is known while building.

    An object array of ints, with ``None`` for unknown elements, or ``None`` when even
    the shape of ``t`` is unknown. Folds constants, and looks through the shape
    arithmetic TF1 code writes by hand: ``Shape`` of a partially known tensor,
    ``Pack``, ``ConcatV2``, ``StridedSlice``, ``Identity``.
    """
    value = constant_value(t)
    if value is not None:
        return np.asarray(value).astype(object)
    op = t.op
    if depth > 0:
        if op.type == "Shape" and op.inputs[0].shape.rank is not None:
            return np.array(op.inputs[0].shape.as_list(), dtype=object)
        if op.type in ("Pack", "ConcatV2"):
            inputs = op.inputs if op.type == "Pack" else op.inputs[:-1]
            parts = [partial_value(i, depth - 1) for i in inputs]
            known = [p for p in parts if p is not None]
            if op.type == "Pack" and len(known) == len(parts):
                return np.stack(known, axis=op.attrs["axis"])
            if op.type == "ConcatV2" and len(known) == len(parts):
                axis = constant_value(op.inputs[-1])
                if axis is not None and known:
                    return np.concatenate(known, axis=int(axis))
        if op.type == "StridedSlice":
            base = partial_value(op.inputs[0], depth - 1)
            key = _constant_slice_key(op)
            if base is not None and key is not None:
                return np.asarray(base[key], dtype=object)
        if op.type == "Identity":
            return partial_value(op.inputs[0], depth - 1)
    shape = t.shape.as_tuple()
    if shape is None or None in shape:
        return None
    return np.full(shape, None, dtype=object)


def partial_list(t: Tensor) -> list | None:
    """A 1-D integer tensor's elements (``None`` where unknown), or ``None``."""
    value = partial_value(t)
    return None if value is None or value.ndim != 1 else list(value)


def partial_int(t: Tensor) -> int | None:
    """A scalar (or one-element) integer tensor's value, or ``None`` if unknown."""
    value = partial_value(t)
    if value is None or value.size != 1:
        return None
    return value.reshape(-1)[0]


def require_index_dtype(t: Tensor, what: str, op_type: str) -> None:
    if t.dtype not in INDEX_DTYPES:
        raise TypeError(f"'{what}' of '{op_type}' must be int32 or int64, got {t.dtype.name}")


def require_rank(t: Tensor, ranks: Sequence[int], what: str, op_type: str) -> None:
    if t.shape.rank is not None and t.shape.rank not in ranks:
        want = " or ".join(str(r) for r in ranks)
        raise ValueError(f"'{what}' of '{op_type}' must have rank {want}, got shape {t.shape}")


def int_tensor(value: Any, dtype: Any = dtypes.int32) -> Tensor:
    """Shapes, axes and index lists as an integer tensor (int64 if a value needs it)."""
    if isinstance(value, TensorShape):
        value = value.as_list()
    if isinstance(value, Tensor) or hasattr(value, "_as_graph_element"):
        return convert_to_tensor(value)
    if isinstance(value, (list, builtins.tuple)) and any(isinstance(v, Tensor) for v in value):
        return convert_to_tensor(list(value))
    array = np.asarray(value)
    if (
        array.dtype.kind in "iu"
        and array.size
        and (array.max() > np.iinfo(np.int32).max or array.min() < np.iinfo(np.int32).min)
    ):
        dtype = dtypes.int64
    return constant(array if array.dtype.kind in "iub" else value, dtype=dtype)


def static_axis(t: Tensor, rank: int | None, op_type: str, extra: int = 0) -> int | None:
    """The axis input's value normalized to ``[0, rank + extra)``, or ``None``."""
    axis = partial_int(t)
    if axis is None or rank is None:
        return axis
    return normalize_axis(axis, rank + extra, op_type)


def shape_of(t: Tensor, out_type: Any = dtypes.int32) -> Tensor:
    """``shape(t)``, as a constant when the static shape is fully known."""
    if t.shape.is_fully_defined():
        return constant(t.shape.as_list(), dtype=out_type)
    # The Shape op by its type: its builder (array_shape.shape) lives above this module.
    return apply_op("Shape", [t], {"out_type": dtypes.as_dtype(out_type)})


# strided-slice specs, read here by ``partial_value`` (the ops are in ``slicing``)
def slice_key(begin: Sequence, end: Sequence, strides: Sequence, masks: tuple) -> tuple:
    """The numpy index equivalent to a strided-slice spec (TF's masks, bit i for entry i)."""
    begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_mask = masks
    key: list[Any] = []
    for i, (b, e, s) in enumerate(zip(begin, end, strides, strict=True)):
        bit = 1 << i
        if ellipsis_mask & bit:
            key.append(Ellipsis)
        elif new_axis_mask & bit:
            key.append(None)
        elif shrink_mask & bit:
            key.append(b)
        else:
            key.append(
                builtins.slice(None if begin_mask & bit else b, None if end_mask & bit else e, s)
            )
    return builtins.tuple(key)


def slice_masks(attrs: dict) -> tuple:
    return (
        attrs["begin_mask"],
        attrs["end_mask"],
        attrs["ellipsis_mask"],
        attrs["new_axis_mask"],
        attrs["shrink_axis_mask"],
    )


def _constant_slice_key(op: Operation) -> tuple | None:
    values = [constant_value(t) for t in op.inputs[1:4]]
    known = [v.tolist() for v in values if v is not None]
    if len(known) < len(values):
        return None
    begin, end, strides = known
    return slice_key(begin, end, strides, slice_masks(op.attrs))
