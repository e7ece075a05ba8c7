"""``unique`` and ``unique_with_counts``: the distinct elements of a vector.

One op type each (``Unique``, ``UniqueWithCounts``), as in TF1: ``y`` holds the distinct
values in the order they first occur, ``idx`` maps every input element to its place in
``y`` (``x == gather(y, idx)``), and ``count`` says how often each value occurs. The
number of distinct values is known only when the step runs, so ``y`` has shape
``[None]``. Neither op has a gradient in TF1, nor here.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from ...framework import dtypes, registry
from ...framework.graph import Operation
from ...framework.tensor_shape import TensorShape
from ..build import apply_op_n

UniqueOutput = namedtuple("UniqueOutput", ["y", "idx"])
UniqueWithCountsOutput = namedtuple("UniqueWithCountsOutput", ["y", "idx", "count"])


def _infer_unique(op: Operation) -> list:
    x = op.inputs[0]
    if x.shape.rank not in (None, 1):
        raise ValueError(f"Shape must be rank 1 but is rank {x.shape.rank}: unique takes a vector")
    idx_type = op.attrs["out_idx"]
    length = x.shape.as_list()[0] if x.shape.rank == 1 else None
    outputs = [(x.dtype, TensorShape([None])), (idx_type, TensorShape([length]))]
    if op.type == "UniqueWithCounts":
        outputs.append((idx_type, TensorShape([None])))
    return outputs


def _unique_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    index_dtype = attrs["out_idx"].as_numpy_dtype
    with_counts = attrs["with_counts"]

    def unique(x: Any) -> Any:
        # xp.unique sorts; TF1 orders the values by first occurrence, so re-rank them.
        values, first, inverse, counts = xp.unique(
            x, return_index=True, return_inverse=True, return_counts=True
        )
        order = xp.argsort(first, kind="stable")
        rank = xp.empty_like(order)
        rank[order] = xp.arange(order.shape[0])
        y = values[order]
        idx = rank[inverse.reshape(-1)].astype(index_dtype)
        if with_counts:
            return y, idx, counts[order].astype(index_dtype)
        return y, idx

    return unique


for _type in ("Unique", "UniqueWithCounts"):
    registry.register(
        registry.OpDef(_type, _infer_unique, _unique_kernel, registry.NOT_DIFFERENTIABLE)
    )


def _check_index_type(out_idx: Any, op_name: str) -> dtypes.DType:
    dtype = dtypes.as_dtype(out_idx)
    if dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"{op_name}: out_idx must be int32 or int64, got {dtype.name}")
    return dtype


def unique(x: Any, out_idx: Any = dtypes.int32, name: str | None = None) -> UniqueOutput:
    """The distinct values of the vector ``x`` in order of first occurrence (``y``) and,
    for each element of ``x``, the position of its value in ``y`` (``idx``).

    Raises:
        ValueError: ``x`` is not a vector (known at build time).
        TypeError: ``out_idx`` is not int32 or int64.
    """
    attrs = {"out_idx": _check_index_type(out_idx, "Unique"), "with_counts": False}
    return UniqueOutput(*apply_op_n("Unique", [x], attrs, name=name).outputs)


def unique_with_counts(
    x: Any, out_idx: Any = dtypes.int32, name: str | None = None
) -> UniqueWithCountsOutput:
    """``unique`` plus ``count``: how many elements of ``x`` have each value of ``y``."""
    attrs = {"out_idx": _check_index_type(out_idx, "UniqueWithCounts"), "with_counts": True}
    return UniqueWithCountsOutput(*apply_op_n("UniqueWithCounts", [x], attrs, name=name).outputs)
