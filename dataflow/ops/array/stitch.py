"""``dynamic_stitch`` (and ``parallel_dynamic_stitch``), and the gathering composites
``batch_gather`` and ``repeat``.

``DynamicStitch`` interleaves the rows of several tensors: with ``indices`` and ``data``
lists of the same length, ``merged[indices[m][i]] = data[m][i]``, the output having
``max(indices) + 1`` rows of shape ``data[0].shape[indices[0].rank:]``. Where an index
occurs more than once the last one (in list order, then row order) wins, as in TF1.

Kernel: flatten every index tensor and concatenate (``idx``, N entries) and every data
tensor to ``N`` rows (``rows``); the last occurrence of each index is the first
occurrence in the reversed vector, which ``unique(..., return_index=True)`` finds in one
sorted pass, so ``merged[u] = rows_reversed[first]`` writes each row once, the same on
numpy and CuPy (whose scatter with repeated indices is unordered). Positions no index
names stay zero.

Gradient (TF's rule): each ``data[m]`` gets ``gather(grad, indices[m])``, including rows
a later duplicate overwrote.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...framework import dtypes, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor, get_default_graph
from ...framework.tensor_shape import TensorShape
from ...framework.tensor_util import constant_value
from ..build import apply_op
from .indexing import gather
from .shape_helpers import shape_of
from .shapes import reshape


def _infer_stitch(op: Operation) -> list:
    n = op.attrs["N"]
    indices, data = op.inputs[:n], op.inputs[n:]
    for t in indices:
        if t.dtype != dtypes.int32:
            raise TypeError(f"DynamicStitch: indices must be int32, got {t.dtype.name}")
    dtype = data[0].dtype
    if any(d.dtype != dtype for d in data):
        raise TypeError("DynamicStitch: all data tensors must have the same dtype")
    row: TensorShape | None = None
    for i, d in zip(indices, data, strict=True):
        if i.shape.rank is None or d.shape.rank is None:
            continue
        if not d.shape[: i.shape.rank].is_compatible_with(i.shape):
            raise ValueError(
                f"DynamicStitch: data shape {d.shape} must start with indices shape {i.shape}"
            )
        rest = d.shape[i.shape.rank :]
        if row is not None and not row.is_compatible_with(rest):
            raise ValueError(f"DynamicStitch: inconsistent row shapes {row} and {rest}")
        row = rest if row is None else row.merge_with(rest)
    values = [constant_value(t) for t in indices]
    first: int | None = None
    known = [np.asarray(v) for v in values if v is not None]
    if len(known) == len(values):
        first = max((int(v.max()) + 1 for v in known if v.size), default=0)
    out = TensorShape([first]).concatenate(row if row is not None else TensorShape(None))
    return [(dtype, out)]


def _stitch_kernel(ctx: Any, attrs: dict) -> Any:
    xp, n = ctx.xp, attrs["N"]

    def stitch(*args: Any) -> Any:
        indices, data = args[:n], args[n:]
        idx = xp.concatenate([xp.reshape(i, (-1,)) for i in indices])
        row = data[0].shape[indices[0].ndim :]
        rows = xp.concatenate([xp.reshape(d, (-1, *row)) for d, i in zip(data, indices)])
        size = int(idx.max()) + 1 if idx.size else 0
        if idx.size and int(idx.min()) < 0:
            from ...framework import errors

            raise errors.InvalidArgumentError(None, None, "DynamicStitch: negative index")
        merged = xp.zeros((size, *row), dtype=data[0].dtype)
        last, first_rev = xp.unique(idx[::-1], return_index=True)
        merged[last] = rows[::-1][first_rev]
        return merged

    return stitch


def _stitch_grad(op: Operation, grad: Tensor) -> list:
    n = op.attrs["N"]
    return [None] * n + [gather(grad, i) for i in op.inputs[:n]]


for _type in ("DynamicStitch", "ParallelDynamicStitch"):
    registry.register(registry.OpDef(_type, _infer_stitch, _stitch_kernel, _stitch_grad))


def _stitch(op_type: str, indices: Any, data: Any, name: str | None) -> Tensor:
    indices, data = list(indices), list(data)
    if not indices or len(indices) != len(data):
        raise ValueError(f"{op_type}: indices and data must be non-empty lists of one length")
    index_ts = [convert_to_tensor(i, dtype=dtypes.int32, name="indices") for i in indices]
    data_ts = [convert_to_tensor(d, name="data") for d in data]
    return apply_op(op_type, [*index_ts, *data_ts], {"N": len(indices)}, name=name)


def dynamic_stitch(indices: Any, data: Any, name: str | None = None) -> Tensor:
    """Interleaves the values of the ``data`` tensors into one tensor
    (``tf.dynamic_stitch``): ``merged[indices[m][i, ...]] = data[m][i, ...]``.

    Args:
        indices: a list of int32 tensors.
        data: a list of tensors of one dtype, ``data[m].shape`` starting with
            ``indices[m].shape``, the rest equal across the list.
        name: the op name.

    Returns:
        ``[max(indices) + 1] + data[0].shape[indices[0].rank:]``; a repeated index takes
        the last value given for it.

    Raises:
        ValueError: lists of different lengths, or shapes that do not fit.
        TypeError: indices that are not int32, or data of several dtypes.
    """
    return _stitch("DynamicStitch", indices, data, name)


def parallel_dynamic_stitch(indices: Any, data: Any, name: str | None = None) -> Tensor:
    """``dynamic_stitch`` as TF's parallel kernel: the same values here (a repeated
    index takes the last value given)."""
    return _stitch("ParallelDynamicStitch", indices, data, name)


def batch_gather(params: Any, indices: Any, name: str | None = None) -> Tensor:
    """``gather`` along the first axis after the batch dimensions that ``params`` and
    ``indices`` share (``tf.batch_gather``, TF1's: ``indices.rank - 1`` batch axes).

    Raises:
        ValueError: ``indices`` of unknown rank, or rank 0.
    """
    with get_default_graph().name_scope(name or "BatchGather"):
        p = convert_to_tensor(params, name="params")
        idx = convert_to_tensor(indices, name="indices")
        rank = idx.shape.rank
        if rank is None or rank == 0:
            raise ValueError("batch_gather does not allow indices with unknown or zero rank")
        if rank == 1:
            return gather(p, idx)
        from ..math.arith import add, multiply
        from ..math.reduce import reduce_prod
        from .join import concat
        from .reorder import range_

        # one flat gather: row b of the batch starts at b * N in params' flattened rows
        p_shape, i_shape = shape_of(p, idx.dtype), shape_of(idx)
        batch = reduce_prod(i_shape[: rank - 1])
        offsets = multiply(range_(batch, dtype=idx.dtype), p_shape[rank - 1])
        flat_idx = add(reshape(idx, [batch, -1]), reshape(offsets, [-1, 1]))
        rows = reshape(p, concat([[-1], p_shape[rank:]], 0))
        out = gather(rows, reshape(flat_idx, i_shape))
        out.set_shape(idx.shape.concatenate(p.shape[rank:]) if p.shape.rank else None)
        return out


def repeat(input: Any, repeats: Any, axis: int | None = None, name: str | None = None) -> Tensor:
    """Each element of ``input`` repeated ``repeats`` times along ``axis``
    (``tf.repeat``, as ``numpy.repeat``; ``axis=None`` flattens first).

    A gather of ``input`` at the source row of every output row: output row ``p`` comes
    from the number of cumulative counts ``<= p`` (``searchsorted(cumsum(repeats), p,
    "right")``), so a zero count skips its row and the gradient sums the copies.

    Raises:
        ValueError: ``repeats`` of rank above 1.
    """
    from ..math.argmax_cumsum import cumsum
    from ..math.reduce import reduce_sum
    from .reorder import range_
    from .sets import searchsorted
    from .shapes import broadcast_to

    with get_default_graph().name_scope(name or "Repeat"):
        x = convert_to_tensor(input, name="input")
        reps = convert_to_tensor(repeats, dtype=dtypes.int32, name="repeats")
        if axis is None:
            x, axis = reshape(x, [-1]), 0
        if reps.shape.rank is not None and reps.shape.rank > 1:
            raise ValueError(f"repeats must be a scalar or a vector, got shape {reps.shape}")
        n = shape_of(x)[axis]
        reps = broadcast_to(reps, [n]) if reps.shape.rank == 0 else reps
        ends = cumsum(reps)
        total = reduce_sum(reps)
        source = searchsorted(ends, range_(total), side="right")
        return gather(x, source, axis=axis)
