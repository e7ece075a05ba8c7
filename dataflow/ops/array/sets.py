"""``setdiff1d`` (``ListDiff``) and ``searchsorted`` (``LowerBound``/``UpperBound``):
finding the elements of one vector in another. None is differentiable (TF1 registers
no gradient for them either).

``ListDiff(x, y)`` keeps the elements of ``x`` that are not in ``y``, in order and with
their repeats, and their positions in ``x``: ``xp.isin`` marks them (a sort of ``y``).

``LowerBound``/``UpperBound`` find, row by row, where each of ``values[..., M]`` would
go into ``sorted_sequence[..., N]``: the number of entries ``< v`` (left) or ``<= v``
(right). One merge for all rows at once: tag each sequence entry 1 and each value 0,
sort every (row, value, tag) triple with three stable argsorts (least significant key
first, so any dtype works on numpy and CuPy); a value then lands after exactly the
sequence entries of its row that are smaller (ties: values first for left, last for
right, by the tag order), and a running count of sequence tags read at its place,
minus the entries of earlier rows, is its index.

Worked example: sequence ``[1, 3, 3, 5]``, values ``[3, 6]``: left gives ``[1, 4]``,
right ``[3, 4]``.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from ...framework import dtypes, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor
from ...framework.tensor_shape import TensorShape
from ..build import apply_op, apply_op_n

SetDiff1DOutput = namedtuple("SetDiff1DOutput", ["out", "idx"])


def _infer_list_diff(op: Operation) -> list:
    x, y = op.inputs
    for t, what in ((x, "x"), (y, "y")):
        if t.shape.rank not in (None, 1):
            raise ValueError(f"ListDiff: {what} must be a vector, got shape {t.shape}")
    if x.dtype != y.dtype:
        raise TypeError(
            f"ListDiff: x and y must have one dtype, got {x.dtype.name}, {y.dtype.name}"
        )
    return [(x.dtype, TensorShape([None])), (op.attrs["out_idx"], TensorShape([None]))]


def _list_diff_kernel(ctx: Any, attrs: dict) -> Any:
    xp, index_dtype = ctx.xp, attrs["out_idx"].as_numpy_dtype

    def list_diff(x: Any, y: Any) -> Any:
        keep = xp.nonzero(~xp.isin(x, y))[0]
        return x[keep], keep.astype(index_dtype)

    return list_diff


registry.register(
    registry.OpDef("ListDiff", _infer_list_diff, _list_diff_kernel, registry.NOT_DIFFERENTIABLE)
)


def setdiff1d(
    x: Any, y: Any, index_dtype: Any = dtypes.int32, name: str | None = None
) -> SetDiff1DOutput:
    """The elements of the vector ``x`` that are not in ``y`` (``out``, in ``x``'s order,
    repeats kept) and their positions in ``x`` (``idx``): ``tf.setdiff1d``.

    Raises:
        ValueError: ``x`` or ``y`` is not a vector.
        TypeError: ``x`` and ``y`` differ in dtype, or ``index_dtype`` is not int32/int64.
    """
    out_idx = dtypes.as_dtype(index_dtype)
    if out_idx not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"ListDiff: out_idx must be int32 or int64, got {out_idx.name}")
    x_t = convert_to_tensor(x, name="x")
    y_t = convert_to_tensor(y, dtype=x_t.dtype, name="y")
    op = apply_op_n("ListDiff", [x_t, y_t], {"out_idx": out_idx}, name=name)
    return SetDiff1DOutput(*op.outputs)


def _infer_bound(op: Operation) -> list:
    seq, values = op.inputs
    if seq.dtype != values.dtype:
        raise TypeError(
            f"{op.type}: sorted_inputs and values differ in dtype "
            f"({seq.dtype.name}, {values.dtype.name})"
        )
    for t, what in ((seq, "sorted_inputs"), (values, "values")):
        if t.shape.rank == 0:
            raise ValueError(f"{op.type}: {what} must have rank at least 1")
    if seq.shape.rank is not None and values.shape.rank is not None:
        if seq.shape.rank != values.shape.rank or not seq.shape[:-1].is_compatible_with(
            values.shape[:-1]
        ):
            raise ValueError(
                f"{op.type}: sorted_inputs {seq.shape} and values {values.shape} must have "
                "the same leading dimensions"
            )
    return [(op.attrs["out_type"], values.shape)]


def _bound_kernel(right: bool) -> Any:
    return lambda ctx, attrs: _bound(ctx.xp, right, attrs["out_type"].as_numpy_dtype)


def _bound(xp: Any, right: bool, out_dtype: Any) -> Any:

    def bound(seq: Any, values: Any) -> Any:
        n, m = seq.shape[-1], values.shape[-1]
        rows = seq.reshape(-1, n)
        vals = values.reshape(-1, m)
        b = rows.shape[0]
        keys = xp.concatenate([rows, vals], axis=1).reshape(-1)
        tags = xp.concatenate(
            [xp.ones((b, n), dtype=xp.int8), xp.zeros((b, m), dtype=xp.int8)], axis=1
        ).reshape(-1)
        if right:  # equal sequence entries before the value
            tags = 1 - tags
        row = xp.repeat(xp.arange(b), n + m)
        order = xp.argsort(tags, kind="stable")
        order = order[xp.argsort(keys[order], kind="stable")]
        order = order[xp.argsort(row[order], kind="stable")]
        is_seq = (order % (n + m)) < n
        before = xp.cumsum(is_seq) - is_seq  # sequence entries ahead of each place
        place = xp.empty_like(order)
        place[order] = xp.arange(order.shape[0])
        at_values = place.reshape(b, n + m)[:, n:]
        index = before[at_values] - (xp.arange(b) * n)[:, None]
        return index.reshape(values.shape).astype(out_dtype)

    return bound


for _type, _right in (("LowerBound", False), ("UpperBound", True)):
    registry.register(
        registry.OpDef(_type, _infer_bound, _bound_kernel(_right), registry.NOT_DIFFERENTIABLE)
    )


def searchsorted(
    sorted_sequence: Any,
    values: Any,
    side: str = "left",
    out_type: Any = dtypes.int32,
    name: str | None = None,
) -> Tensor:
    """Where each of ``values`` would be inserted into the innermost, ascending
    ``sorted_sequence`` to keep it sorted (``tf.searchsorted``), row by row over the
    leading dimensions: the number of entries ``< v`` (``side="left"``) or ``<= v``
    (``"right"``).

    Args:
        sorted_sequence: ``[..., N]``, sorted along its last axis.
        values: ``[..., M]``, the same leading dimensions.
        side: ``"left"`` or ``"right"``.
        out_type: int32 or int64.
        name: the op name.

    Raises:
        ValueError: another ``side``, rank 0 or mismatched leading dimensions.
        TypeError: the two differ in dtype.
    """
    if side not in ("left", "right"):
        raise ValueError(f"side must be either 'right' or 'left', got {side!r}")
    out = dtypes.as_dtype(out_type)
    if out not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"searchsorted: out_type must be int32 or int64, got {out.name}")
    seq = convert_to_tensor(sorted_sequence, name="sorted_sequence")
    vals = convert_to_tensor(values, dtype=seq.dtype, name="values")
    op_type = "UpperBound" if side == "right" else "LowerBound"
    return apply_op(op_type, [seq, vals], {"out_type": out}, name=name)
