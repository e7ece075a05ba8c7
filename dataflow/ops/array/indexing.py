"""Indexing by integer tensors: ``GatherV2``, ``UnsortedSegmentSum``, ``GatherNd``,
``ScatterNd``, and ``OneHot``.

Each op type is one record (shape rule, kernel, gradient) next to its builder. The
pairs are each other's adjoints, so second derivatives stay inside this module:

=======================  ===========================================
forward                  gradient (adjoint)
=======================  ===========================================
GatherV2                 UnsortedSegmentSum (a non-leading axis is moved
                         to the front and back with Transpose), whose
                         gradient is GatherV2; but IndexedSlices (below)
                         for a gather along axis 0 from a variable read
GatherNd                 ScatterNd, and back
=======================  ===========================================

As in TF1, the gradient of a gather from a variable (``embedding_lookup``) is an
``IndexedSlices``: the upstream gradient as the values, the gathered ids as the indices,
the variable's shape as the dense shape, so an optimizer updates only the gathered rows.
TF1 gives one for any ``params``; here only a variable read (``ReadVariableOp``) does,
so the gradient of a gather from a computed tensor stays a dense tensor everywhere it
flows. The gradient pass concatenates several ``IndexedSlices`` reaching one tensor and
densifies them when they meet a dense gradient or an op other than the read. This
module also registers their conversion to a dense tensor: one ``UnsortedSegmentSum``.

Kernels reject indices outside ``[0, limit)`` as TF does (numpy would wrap negative
ones) with ``_check_indices``; ``UnsortedSegmentSum`` drops negative segment ids, as
TF's does. ``OneHot`` (not differentiable) is the dense encoding of an index tensor,
``gather`` of the rows of an identity matrix.
"""

from __future__ import annotations

import builtins
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...framework import dtypes, errors, registry
from ...framework.graph import (
    Operation,
    Tensor,
    convert_to_tensor,
    get_default_graph,
    register_tensor_conversion_function,
)
from ...framework.indexed_slices import IndexedSlices
from ...framework.tensor_shape import TensorShape
from ...framework.tensor_util import constant_value
from ..build import apply_op
from ..constant import constant
from .reorder import transpose
from .shape_helpers import (
    int_tensor,
    partial_int,
    partial_list,
    require_index_dtype,
    require_rank,
    shape_of,
    static_axis,
)
from .shapes import reshape


def _index_tensor(value: Any) -> Tensor:
    """Indices as an integer tensor; floating-point values stay floating point, so that
    the op's rule refuses them with TF1's ``TypeError`` (never rounded into indices)."""
    if (
        not isinstance(value, Tensor)
        and not hasattr(value, "_as_graph_element")
        and np.asarray(value).dtype.kind in "fc"
    ):
        return convert_to_tensor(value)
    return int_tensor(value)


# --- GatherV2 / UnsortedSegmentSum, GatherNd / ScatterNd -------------------------------
def _check_indices(xp: Any, indices: Any, limit: Any, what: str) -> None:
    """TF rejects indices outside ``[0, limit)`` (numpy would wrap negative ones).
    ``limit`` is an int, or an array broadcasting against ``indices``."""
    if not indices.size:
        return
    if isinstance(limit, int):
        if indices.min() >= 0 and indices.max() < limit:  # two reductions, no temporaries
            return
    elif not bool(((indices < 0) | (indices >= limit)).any()):
        return
    bad = indices[(indices < 0) | (indices >= limit)].reshape(-1)[0]
    raise IndexError(f"{what} {bad} is not in [0, {limit})")


def _infer_gather(op: Operation) -> list:
    params, indices, axis_t = op.inputs
    require_index_dtype(indices, "indices", "GatherV2")
    require_index_dtype(axis_t, "axis", "GatherV2")
    require_rank(axis_t, (0,), "axis", "GatherV2")
    if op.attrs["batch_dims"] != 0:
        raise ValueError("GatherV2 supports batch_dims=0 only")
    pdims, idims = params.shape.as_tuple(), indices.shape.as_tuple()
    if pdims is not None and not pdims:
        raise ValueError("params of 'GatherV2' must be at least 1-D, got a scalar")
    axis = static_axis(axis_t, None if pdims is None else len(pdims), "GatherV2")
    if pdims is None or idims is None:
        return [(params.dtype, TensorShape(None))]
    if axis is None:
        return [(params.dtype, TensorShape([None] * (len(pdims) + len(idims) - 1)))]
    return [(params.dtype, TensorShape(pdims[:axis] + idims + pdims[axis + 1 :]))]


def _gather_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp

    def gather_op(params: Any, indices: Any, axis: Any) -> Any:
        a = axis.item()
        _check_indices(xp, indices, params.shape[a], "indices value")
        return xp.take(params, indices, axis=a)

    return gather_op


def _gather_grad(op: Operation, grad: Tensor) -> list:
    params, indices, axis_t = op.inputs
    pdims, idims = params.shape.as_tuple(), indices.shape.as_tuple()
    axis = static_axis(axis_t, None if pdims is None else len(pdims), "GatherV2")
    if axis == 0 and params.op.type == "ReadVariableOp":
        slices = _gathered_rows(params, indices, grad)
        if slices is not None:
            return [slices, None, None]
    if axis is not None:
        num = shape_of(params, indices.dtype)[axis]
    if axis == 0:
        return [unsorted_segment_sum(grad, indices, num), None, None]
    if axis is None or pdims is None or idims is None:
        raise ValueError(
            f"The gradient of gather along a non-leading axis needs the "
            f"ranks of params and indices and the axis at build time "
            f"(got shapes {params.shape}, {indices.shape})"
        )
    # Move the gathered dimensions to the front, segment-sum, and move back.
    p, k = len(pdims), len(idims)
    to_front = (
        list(builtins.range(axis, axis + k))
        + list(builtins.range(axis))
        + list(builtins.range(axis + k, p + k - 1))
    )
    summed = unsorted_segment_sum(transpose(grad, to_front), indices, num)
    back = list(builtins.range(1, axis + 1)) + [0] + list(builtins.range(axis + 1, p))
    return [transpose(summed, back), None, None]


def _gathered_rows(params: Tensor, indices: Tensor, grad: Tensor) -> IndexedSlices | None:
    """TF1's ``IndexedSlices`` gradient of a gather along axis 0: ``grad`` with the ids'
    dimensions flattened into one, the flattened ids, and ``params``' shape (int32).
    None when the flattening needs a shape this module cannot build without ``concat``
    (ids of rank other than 1 and ``params.shape[1:]`` unknown): then the dense rule."""
    if params.shape.is_fully_defined():
        dense_shape = constant(params.shape.as_list(), dtype=dtypes.int32)
    else:
        dense_shape = shape_of(params, dtypes.int32)
    if indices.shape.rank == 1:
        return IndexedSlices(grad, indices, dense_shape)
    rest = params.shape[1:]
    if not rest.is_fully_defined():
        return None
    return IndexedSlices(reshape(grad, [-1] + rest.as_list()), reshape(indices, [-1]), dense_shape)


registry.register(
    registry.OpDef("GatherV2", _infer_gather, _gather_kernel, _gather_grad, foldable=True)
)


_LARGE_DENSE = 100_000_000  # TF1 warns when a densified IndexedSlices is this large


def _indexed_slices_to_tensor(
    value: IndexedSlices, dtype: Any = None, name: str | None = None
) -> Tensor:
    """TF1's conversion: the dense sum of the slices, with one ``UnsortedSegmentSum``.

    Raises:
        ValueError: ``dtype`` differs from the slices', or there is no ``dense_shape``.
    """
    if dtype is not None and dtypes.as_dtype(dtype) != value.dtype:
        raise ValueError(
            f"Tensor conversion requested dtype {dtypes.as_dtype(dtype).name} for "
            f"IndexedSlices with dtype {value.dtype.name}: {value!r}"
        )
    if value.dense_shape is None:
        raise ValueError(
            f"Tensor conversion requested for IndexedSlices without dense_shape: {value!r}"
        )
    known = constant_value(value.dense_shape)
    if known is not None and int(np.prod(known)) >= _LARGE_DENSE:
        warnings.warn(
            f"Converting sparse IndexedSlices to a dense Tensor with {int(np.prod(known))} "
            "elements. This may consume a large amount of memory.",
            stacklevel=3,
        )
    rows = int(known[0]) if known is not None else value.dense_shape[0]
    return unsorted_segment_sum(value.values, value.indices, rows, name=name)


register_tensor_conversion_function(IndexedSlices, _indexed_slices_to_tensor)


def gather(
    params: Any,
    indices: Any,
    validate_indices: Any = None,
    name: str | None = None,
    axis: Any = None,
    batch_dims: int = 0,
) -> Tensor:
    """Gathers slices of ``params`` along ``axis`` at ``indices``.

    The output shape is ``params.shape[:axis] + indices.shape + params.shape[axis+1:]``.
    An index outside ``[0, params.shape[axis])`` is an ``InvalidArgumentError`` when the
    step runs. The gradient with respect to a variable gathered along axis 0 is an
    ``IndexedSlices`` (as in TF1); otherwise a dense tensor (``unsorted_segment_sum``).
    """
    params = convert_to_tensor(params)
    indices = _index_tensor(indices)
    axis_t = int_tensor(
        0 if axis is None else axis,
        dtype=indices.dtype if indices.dtype.is_integer else dtypes.int32,
    )
    return apply_op(
        "GatherV2", [params, indices, axis_t], {"batch_dims": int(batch_dims)}, name=name
    )


def _infer_unsorted_segment_sum(op: Operation) -> list:
    data, ids, num_t = op.inputs
    require_index_dtype(ids, "segment_ids", "UnsortedSegmentSum")
    require_index_dtype(num_t, "num_segments", "UnsortedSegmentSum")
    require_rank(num_t, (0,), "num_segments", "UnsortedSegmentSum")
    ddims, idims = data.shape.as_tuple(), ids.shape.as_tuple()
    if ddims is None or idims is None:
        return [(data.dtype, TensorShape(None))]
    if len(idims) > len(ddims) or not TensorShape(ddims[: len(idims)]).is_compatible_with(
        TensorShape(idims)
    ):
        raise ValueError(
            f"segment_ids shape {ids.shape} must be a prefix of data shape {data.shape}"
        )
    return [(data.dtype, TensorShape([partial_int(num_t)] + list(ddims[len(idims) :])))]


def _unsorted_segment_sum_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp

    def unsorted_segment_sum_op(data: Any, ids: Any, num: Any) -> Any:
        n = num.item()
        if ids.size and bool((ids >= n).any()):
            raise IndexError(f"segment_ids {ids[ids >= n].reshape(-1)[0]} is not in [0, {n})")
        if ids.size and bool((ids < 0).any()):  # TF drops negative ids
            keep = ids >= 0
            ids, data = ids[keep], data[keep]
        out = xp.zeros((n,) + data.shape[ids.ndim :], dtype=data.dtype)
        xp.add.at(out, ids, data)
        return out

    return unsorted_segment_sum_op


def _unsorted_segment_sum_grad(op: Operation, grad: Tensor) -> list:
    return [gather(grad, op.inputs[1]), None, None]


registry.register(
    registry.OpDef(
        "UnsortedSegmentSum",
        _infer_unsorted_segment_sum,
        _unsorted_segment_sum_kernel,
        _unsorted_segment_sum_grad,
        foldable=True,
    )
)


def unsorted_segment_sum(
    data: Any, segment_ids: Any, num_segments: Any, name: str | None = None
) -> Tensor:
    """``out[i, ...] = sum of data[j..., ...] over j with segment_ids[j...] == i``.

    ``segment_ids`` has the shape of a prefix of ``data``'s; ids below zero are dropped,
    ids at or above ``num_segments`` are an error when the step runs.
    """
    ids = _index_tensor(segment_ids)
    return apply_op(
        "UnsortedSegmentSum",
        [
            convert_to_tensor(data),
            ids,
            int_tensor(num_segments, ids.dtype if ids.dtype.is_integer else dtypes.int32),
        ],
        name=name,
    )


def _infer_gather_nd(op: Operation) -> list:
    params, indices = op.inputs
    require_index_dtype(indices, "indices", "GatherNd")
    pdims, idims = params.shape.as_tuple(), indices.shape.as_tuple()
    if idims is not None and not idims:
        raise ValueError("indices of 'GatherNd' must be at least 1-D")
    if idims is None or idims[-1] is None or pdims is None:
        return [(params.dtype, TensorShape(None))]
    k = idims[-1]
    if k > len(pdims):
        raise ValueError(
            f"indices.shape[-1] must be <= params.rank, but saw indices "
            f"shape {indices.shape} and params shape {params.shape}"
        )
    return [(params.dtype, TensorShape(idims[:-1] + pdims[k:]))]


def _nd_index(xp: Any, indices: Any, shape_: Sequence[int]) -> tuple:
    k = indices.shape[-1]
    limits = xp.asarray(list(shape_[:k]), dtype=indices.dtype)
    _check_indices(xp, indices, limits, "index")
    return builtins.tuple(indices[..., i] for i in builtins.range(k))


def _gather_nd_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp

    def gather_nd_op(params: Any, indices: Any) -> Any:
        if indices.shape[-1] == 0:
            return xp.array(xp.broadcast_to(params, indices.shape[:-1] + params.shape))
        return params[_nd_index(xp, indices, params.shape)]

    return gather_nd_op


def _gather_nd_grad(op: Operation, grad: Tensor) -> list:
    params, indices = op.inputs
    return [scatter_nd(indices, grad, shape_of(params, indices.dtype)), None]


registry.register(
    registry.OpDef("GatherNd", _infer_gather_nd, _gather_nd_kernel, _gather_nd_grad, foldable=True)
)


def gather_nd(params: Any, indices: Any, name: str | None = None, batch_dims: int = 0) -> Tensor:
    """Gathers ``params[tuple(indices[..., :])]``: the last dimension of ``indices``
    indexes the leading dimensions of ``params``."""
    if batch_dims != 0:
        raise ValueError("gather_nd supports batch_dims=0 only")
    return apply_op("GatherNd", [convert_to_tensor(params), _index_tensor(indices)], name=name)


def _infer_scatter_nd(op: Operation) -> list:
    indices, updates, shape_t = op.inputs
    require_index_dtype(indices, "indices", "ScatterNd")
    require_index_dtype(shape_t, "shape", "ScatterNd")
    require_rank(shape_t, (1,), "shape", "ScatterNd")
    out = partial_list(shape_t)
    idims, udims = indices.shape.as_tuple(), updates.shape.as_tuple()
    if (
        out is not None
        and idims is not None
        and idims
        and idims[-1] is not None
        and udims is not None
    ):
        k = idims[-1]
        want = TensorShape(list(idims[:-1]) + out[k:])
        if k > len(out) or not want.is_compatible_with(updates.shape):
            raise ValueError(
                f"updates shape {updates.shape} must be indices.shape[:-1] + "
                f"shape[indices.shape[-1]:] = {want}"
            )
    return [(updates.dtype, TensorShape(out))]


def _scatter_nd_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp

    def scatter_nd_op(indices: Any, updates: Any, shape_: Any) -> Any:
        dims = shape_.tolist()
        out = xp.zeros(dims, dtype=updates.dtype)
        xp.add.at(out, _nd_index(xp, indices, dims), updates)  # duplicates add up
        return out

    return scatter_nd_op


def _scatter_nd_grad(op: Operation, grad: Tensor) -> list:
    return [None, gather_nd(grad, op.inputs[0]), None]


registry.register(
    registry.OpDef(
        "ScatterNd", _infer_scatter_nd, _scatter_nd_kernel, _scatter_nd_grad, foldable=True
    )
)


def scatter_nd(indices: Any, updates: Any, shape: Any, name: str | None = None) -> Tensor:
    """A zero tensor of ``shape`` with ``updates`` added at ``indices`` (duplicates sum)."""
    indices = _index_tensor(indices)
    index_dtype = indices.dtype if indices.dtype.is_integer else dtypes.int32
    return apply_op(
        "ScatterNd",
        [indices, convert_to_tensor(updates), int_tensor(shape, index_dtype)],
        name=name,
    )


# --- OneHot -----------------------------------------------------------------------------


def _infer_one_hot(op: Operation) -> list:
    indices, depth_t, on, off = op.inputs
    if not (indices.dtype.is_integer):
        raise TypeError(f"indices of 'OneHot' must be integers, got {indices.dtype.name}")
    require_index_dtype(depth_t, "depth", "OneHot")
    require_rank(depth_t, (0,), "depth", "OneHot")
    require_rank(on, (0,), "on_value", "OneHot")
    require_rank(off, (0,), "off_value", "OneHot")
    if on.dtype != off.dtype:
        raise TypeError(
            f"on_value ({on.dtype.name}) and off_value ({off.dtype.name}) must have the same dtype"
        )
    depth = partial_int(depth_t)
    if depth is not None and depth < 0:
        raise ValueError(f"depth must be non-negative, got {depth}")
    dims = indices.shape.as_tuple()
    axis = op.attrs["axis"]
    if dims is None:
        return [(on.dtype, TensorShape(None))]
    if not -1 <= axis <= len(dims):
        raise ValueError(f"Expected axis to be -1 or between [0, {len(dims)}], but got {axis}")
    at = len(dims) if axis == -1 else axis
    return [(on.dtype, TensorShape(list(dims[:at]) + [depth] + list(dims[at:])))]


def _one_hot_kernel(ctx: Any, attrs: dict) -> Any:
    xp, axis = ctx.xp, attrs["axis"]

    def one_hot_op(indices: Any, depth: Any, on: Any, off: Any) -> Any:
        size = depth.item()
        if size < 0:
            raise errors.InvalidArgumentError(
                None, None, f"one_hot: depth must be non-negative, got {size}"
            )
        hot = xp.expand_dims(indices, -1) == xp.arange(size, dtype=indices.dtype)
        out = xp.where(hot, on, off)
        return out if axis in (-1, indices.ndim) else xp.moveaxis(out, -1, axis)

    return one_hot_op


registry.register(
    registry.OpDef(
        "OneHot", _infer_one_hot, _one_hot_kernel, registry.NOT_DIFFERENTIABLE, foldable=True
    )
)


def one_hot(
    indices: Any,
    depth: Any,
    on_value: Any = None,
    off_value: Any = None,
    axis: int | None = None,
    dtype: Any = None,
    name: str | None = None,
) -> Tensor:
    """One-hot vectors: ``on_value`` where ``indices`` equals the position along a new
    dimension of size ``depth`` (at ``axis``, default last), ``off_value`` elsewhere
    (including for indices outside ``[0, depth)``).

    The dtype is ``dtype``, else that of ``on_value``/``off_value``, else float32.

    Raises:
        TypeError: ``on_value``, ``off_value`` and ``dtype`` disagree.
    """
    graph = get_default_graph()
    with graph.name_scope(name or "one_hot") as scope:
        on_dtype = (
            convert_to_tensor(on_value).dtype
            if isinstance(on_value, Tensor)
            else (constant(on_value).dtype if on_value is not None else None)
        )
        off_dtype = (
            convert_to_tensor(off_value).dtype
            if isinstance(off_value, Tensor)
            else (constant(off_value).dtype if off_value is not None else None)
        )
        if (
            on_dtype is not None
            and off_dtype is not None
            and on_dtype != off_dtype
            and (isinstance(on_value, Tensor) or isinstance(off_value, Tensor))
        ):
            raise TypeError(
                f"dtype of on_value ({on_dtype.name}) is not the dtype of "
                f"off_value ({off_dtype.name})"
            )
        want = (
            dtypes.as_dtype(dtype) if dtype is not None else on_dtype or off_dtype or dtypes.float32
        )
        if dtype is not None:
            for d, what in ((on_dtype, "on_value"), (off_dtype, "off_value")):
                given = on_value if what == "on_value" else off_value
                if d is not None and d != want and isinstance(given, Tensor):
                    raise TypeError(
                        f"dtype {want.name} of one_hot is not the dtype {d.name} of {what}"
                    )
        on = convert_to_tensor(1 if on_value is None else on_value, dtype=want)
        off = convert_to_tensor(0 if off_value is None else off_value, dtype=want)
        return apply_op(
            "OneHot",
            [_index_tensor(indices), int_tensor(depth), on, off],
            {"axis": -1 if axis is None else int(axis)},
            name=scope,
        )
