"""Rearranging composites: ``roll``, ``meshgrid``, ``unravel_index``, the NHWC
``space_to_depth``/``depth_to_space``, and ``dynamic_partition``.

Each is a builder over the family's primitives in a name scope, with no kernel or
gradient of its own, so gradients (and second order) come from those primitives:

==================  ============================================================
builder             composed of
==================  ============================================================
``roll``            per axis, ``slice`` + ``concat`` when the shift and the
                    dimension are known at build time; else a ``gather`` at
                    ``(range(n) - shift) mod n``
``meshgrid``        ``reshape`` each vector to a one-hot-ranked shape, then
                    ``broadcast_to`` the grid's shape (swapping the first two
                    axes for ``indexing="xy"``)
``unravel_index``   ``floormod(floordiv(indices, strides), dims)``, strides the
                    row-major products of ``dims``
``space_to_depth``  ``reshape`` to ``[B, H/b, b, W/b, b, C]``, ``transpose``
                    ``[0, 1, 3, 2, 4, 5]``, ``reshape`` to ``[B, H/b, W/b, b*b*C]``
``depth_to_space``  the inverse: ``reshape`` to ``[B, H, W, b, b, C/(b*b)]``, the
                    same ``transpose``, ``reshape`` to ``[B, H*b, W*b, C/(b*b)]``
==================  ============================================================

``dynamic_partition`` is ``boolean_mask(data, partitions == i)`` per partition, the ids
first gathered from ``range(num_partitions)`` so that an id out of range is the gather's
``InvalidArgumentError`` when the step runs, as in TF.

Static shapes come out as TF infers them: known dimensions are used as Python ints in
the reshape targets, unknown ones as run-time products of ``shape(x)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...framework import dtypes, errors
from ...framework.graph import Tensor, convert_to_tensor, get_default_graph
from ...framework.tensor_util import constant_value
from ..math.argmax_cumsum import cumprod
from ..math.arith import floordiv, floormod, multiply, subtract
from ..math.compare import equal
from .indexing import gather
from .join import concat, stack
from .reorder import range_, transpose
from .shape_helpers import shape_of
from .shapes import broadcast_to, expand_dims, reshape, size
from .slicing import boolean_mask, slice_


def _require_int(t: Tensor, what: str, op_type: str) -> None:
    if t.dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"{op_type}: {what} must be int32 or int64, got {t.dtype.name}")


# --- roll --------------------------------------------------------------------------------
def _roll_static(x: Tensor, shift: int, axis: int, dim: int) -> Tensor:
    """``x`` rolled by a known ``shift`` along ``axis`` of known size ``dim``."""
    k = shift % dim if dim else 0
    if k == 0:
        return x
    rank = x.shape.rank
    assert rank is not None
    begin_tail = [0] * rank
    begin_tail[axis] = dim - k
    size_head = [-1] * rank
    size_head[axis] = dim - k
    tail = slice_(x, begin_tail, [-1] * rank)
    head = slice_(x, [0] * rank, size_head)
    return concat([tail, head], axis)


def _roll_dynamic(x: Tensor, shift: Tensor, axis: int) -> Tensor:
    """``x`` rolled along ``axis`` by a shift or dimension known only when the step runs."""
    dim = x.shape.as_list()[axis]
    n = shape_of(x, shift.dtype)[axis] if dim is None else dim
    source = floormod(subtract(range_(n, dtype=shift.dtype), shift), n)
    return gather(x, source, axis=axis)


def roll(input: Any, shift: Any, axis: Any, name: str | None = None) -> Tensor:
    """Rolls ``input``'s elements along ``axis`` by ``shift`` (``tf.roll``).

    An element at index ``i`` moves to ``(i + shift) mod n``; a negative shift rolls the
    other way. ``shift`` and ``axis`` are scalars or same-length vectors; shifts on one
    axis add up.

    Args:
        input: the tensor to roll.
        shift: int32/int64 scalar or vector; may be a tensor known only when the step runs.
        axis: int32/int64 scalar or vector; must be known at graph build time here.
        name: the name scope.

    Raises:
        ValueError: ``shift`` and ``axis`` differ in size, or ``axis`` is not known at
            graph build time.
        InvalidArgumentError: an axis is out of range for ``input``'s rank.
        TypeError: ``shift`` or ``axis`` is not an integer tensor.
    """
    with get_default_graph().name_scope(name or "Roll"):
        x = convert_to_tensor(input, name="input")
        shift_t = convert_to_tensor(shift, name="shift")
        axis_t = convert_to_tensor(axis, name="axis")
        _require_int(shift_t, "shift", "Roll")
        _require_int(axis_t, "axis", "Roll")
        for t, what in ((shift_t, "shift"), (axis_t, "axis")):
            if t.shape.rank is not None and t.shape.rank > 1:
                raise ValueError(f"Roll: {what} must be a scalar or a 1-D vector, got {t.shape}")
        if shift_t.shape.num_elements() != axis_t.shape.num_elements() and (
            shift_t.shape.is_fully_defined() and axis_t.shape.is_fully_defined()
        ):
            raise ValueError(
                f"Roll: shift and axis must have the same size, got {shift_t.shape} "
                f"and {axis_t.shape}"
            )
        axis_value = constant_value(axis_t)
        rank = x.shape.rank
        if axis_value is None or rank is None:
            raise ValueError(
                "Roll: axis and the rank of input must be known at graph build time here"
            )
        axes = [int(a) for a in np.reshape(axis_value, [-1])]
        for a in axes:
            if not -rank <= a < rank:
                raise errors.InvalidArgumentError(
                    None, None, f"Roll: axis {a} is out of range for a tensor of rank {rank}"
                )
        shift_value = constant_value(shift_t)
        shifts: list[Any]
        if shift_value is not None:
            shifts = [int(s) for s in np.reshape(shift_value, [-1])]
        elif shift_t.shape.rank == 0:
            shifts = [shift_t]
        else:
            shifts = [shift_t[i] for i in range(len(axes))]
        total: dict[int, Any] = {}
        for s, a in zip(shifts, axes, strict=True):
            a %= rank
            total[a] = s if a not in total else total[a] + s
        for a, s in total.items():
            dim = x.shape.as_list()[a]
            if isinstance(s, int) and dim is not None:
                x = _roll_static(x, s, a, dim)
            else:
                x = _roll_dynamic(x, convert_to_tensor(s, dtype=shift_t.dtype), a)
        return x


# --- meshgrid ----------------------------------------------------------------------------
def meshgrid(*args: Any, **kwargs: Any) -> list[Tensor]:
    """Coordinate grids from N 1-D tensors (``tf.meshgrid``).

    Output ``i`` has rank N and holds ``args[i]`` repeated along the other axes. With
    ``indexing="xy"`` (the default, Cartesian) the first two axes are swapped relative to
    ``indexing="ij"`` (matrix), as in numpy.

    Args:
        *args: 1-D tensors (or scalars, read as length-1 vectors), all of one dtype.
        **kwargs: ``indexing`` (``"xy"`` or ``"ij"``) and ``name``.

    Raises:
        TypeError: an unknown keyword argument, or inputs of different dtypes.
        ValueError: ``indexing`` is neither ``"xy"`` nor ``"ij"``.
    """
    indexing = kwargs.pop("indexing", "xy")
    name = kwargs.pop("name", "meshgrid")
    if kwargs:
        key = next(iter(kwargs))
        raise TypeError(f"meshgrid: '{key}' is an invalid keyword argument for this function")
    if indexing not in ("xy", "ij"):
        raise ValueError(
            f"meshgrid: indexing parameter must be either 'xy' or 'ij', got {indexing!r}"
        )
    with get_default_graph().name_scope(name):
        ndim = len(args)
        vectors = [convert_to_tensor(a) for a in args]
        for v in vectors[1:]:
            if v.dtype != vectors[0].dtype:
                raise TypeError(
                    f"meshgrid: all inputs must have one dtype, got {vectors[0].dtype.name} "
                    f"and {v.dtype.name}"
                )
        sizes = [size(v) for v in vectors]
        outputs = []
        for i, v in enumerate(vectors):
            target = [1] * ndim
            target[i] = -1
            if indexing == "xy" and ndim > 1 and i < 2:
                target[0], target[1] = target[1], target[0]
            outputs.append(reshape(v, target))
        if indexing == "xy" and ndim > 1:
            sizes[0], sizes[1] = sizes[1], sizes[0]
        grid = stack(sizes) if sizes else None
        return [broadcast_to(o, grid) for o in outputs]


# --- unravel_index -----------------------------------------------------------------------
def unravel_index(indices: Any, dims: Any, name: str | None = None) -> Tensor:
    """Row-major coordinates of flat ``indices`` into an array of shape ``dims``
    (``tf.unravel_index``).

    A scalar index gives a vector of ``len(dims)`` coordinates; a vector of N indices
    gives a ``[len(dims), N]`` matrix, one column per index. The dtype is ``indices``'.

    Raises:
        TypeError: ``indices`` and ``dims`` are not both int32 or both int64.
        ValueError: ``dims`` is not a vector.
        InvalidArgumentError: ``indices`` has rank above 1 (TF finds it when the step
            runs, here at graph build time), or an index known at graph build time is outside
            ``[0, prod(dims))`` (one known only when the step runs is not checked).
    """
    with get_default_graph().name_scope(name or "UnravelIndex"):
        idx = convert_to_tensor(indices, name="indices")
        _require_int(idx, "indices", "UnravelIndex")
        shape_t = convert_to_tensor(dims, dtype=idx.dtype, name="dims")
        if idx.shape.rank is not None and idx.shape.rank > 1:
            raise errors.InvalidArgumentError(
                None, None, f"UnravelIndex: indices must be a scalar or a vector, got {idx.shape}"
            )
        if shape_t.shape.rank is not None and shape_t.shape.rank != 1:
            raise ValueError(f"UnravelIndex: dims must be a vector, got {shape_t.shape}")
        idx_value, dims_value = constant_value(idx), constant_value(shape_t)
        if idx_value is not None and dims_value is not None:
            total = int(np.prod(dims_value))
            bad = np.asarray(idx_value)[(idx_value < 0) | (idx_value >= total)]
            if bad.size:
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"UnravelIndex: index {int(bad.flat[0])} is out of bounds "
                    f"for dims {list(np.asarray(dims_value))}",
                )
        # strides[i] = prod(dims[i+1:]): an exclusive reverse cumulative product
        strides = cumprod(shape_t, exclusive=True, reverse=True)
        if idx.shape.rank != 0:
            strides = reshape(strides, [-1, 1])
            shape_col = reshape(shape_t, [-1, 1])
        else:
            shape_col = shape_t
        return floormod(floordiv(idx, strides), shape_col)


# --- space_to_depth / depth_to_space ----------------------------------------------------
def _check_blocks(x: Tensor, block_size: Any, data_format: str, op_type: str) -> int:
    block = int(block_size)
    if block < 2:
        raise ValueError(f"{op_type}: attribute block_size has value {block} less than minimum 2")
    if data_format != "NHWC":
        raise errors.InvalidArgumentError(
            None, None, f"{op_type}: only data_format NHWC is supported, got {data_format!r}"
        )
    if x.shape.rank is not None and x.shape.rank != 4:
        raise ValueError(f"{op_type}: input must be rank 4, got shape {x.shape}")
    return block


def _dims(x: Tensor) -> list[Any]:
    """``x``'s four dimensions: Python ints where known, scalar tensors elsewhere."""
    known = x.shape.as_list() if x.shape.rank is not None else [None] * 4
    if all(d is not None for d in known):
        return list(known)
    dynamic = shape_of(x)
    return [d if d is not None else dynamic[i] for i, d in enumerate(known)]


def _times(a: Any, b: int) -> Any:
    return a * b if isinstance(a, int) else multiply(a, b)


def _over(a: Any, b: int, what: str, op_type: str) -> Any:
    if not isinstance(a, int):
        return floordiv(a, b)
    if a % b:
        raise ValueError(f"{op_type}: {what} {a} is not evenly divisible by {b}")
    return a // b


def space_to_depth(
    input: Any, block_size: int, name: str | None = None, data_format: str = "NHWC"
) -> Tensor:
    """Moves ``block_size x block_size`` spatial blocks into the depth dimension
    (``tf.space_to_depth``, NHWC): ``[B, H, W, C]`` becomes
    ``[B, H/b, W/b, b*b*C]``, depth ordered by (block row, block column, channel).

    Raises:
        ValueError: ``block_size`` below 2, a rank other than 4, or a height or width
            known at graph build time that ``block_size`` does not divide.
        InvalidArgumentError: a ``data_format`` other than NHWC.
    """
    with get_default_graph().name_scope(name or "SpaceToDepth"):
        x = convert_to_tensor(input, name="input")
        b = _check_blocks(x, block_size, data_format, "SpaceToDepth")
        batch, h, w, c = _dims(x)
        h_out = _over(h, b, "height", "SpaceToDepth")
        w_out = _over(w, b, "width", "SpaceToDepth")
        blocks = reshape(x, [batch, h_out, b, w_out, b, c])
        moved = transpose(blocks, [0, 1, 3, 2, 4, 5])
        return reshape(moved, [batch, h_out, w_out, _times(c, b * b)])


def depth_to_space(
    input: Any, block_size: int, name: str | None = None, data_format: str = "NHWC"
) -> Tensor:
    """Moves depth into ``block_size x block_size`` spatial blocks
    (``tf.depth_to_space``, NHWC; the inverse of ``space_to_depth``): ``[B, H, W, C]``
    becomes ``[B, H*b, W*b, C/(b*b)]``.

    Raises:
        ValueError: ``block_size`` below 2, a rank other than 4, or a depth known at
            graph build time that ``block_size**2`` does not divide.
        InvalidArgumentError: a ``data_format`` other than NHWC.
    """
    with get_default_graph().name_scope(name or "DepthToSpace"):
        x = convert_to_tensor(input, name="input")
        b = _check_blocks(x, block_size, data_format, "DepthToSpace")
        batch, h, w, c = _dims(x)
        c_out = _over(c, b * b, "depth", "DepthToSpace")
        blocks = reshape(x, [batch, h, w, b, b, c_out])
        moved = transpose(blocks, [0, 1, 3, 2, 4, 5])
        return reshape(moved, [batch, _times(h, b), _times(w, b), c_out])


# --- dynamic_partition -------------------------------------------------------------------
def dynamic_partition(
    data: Any, partitions: Any, num_partitions: int, name: str | None = None
) -> list[Tensor]:
    """Splits ``data`` into ``num_partitions`` tensors by the ids in ``partitions``
    (``tf.dynamic_partition``).

    ``partitions``' shape is a prefix of ``data``'s; output ``i`` stacks, in order, the
    slices ``data[j]`` with ``partitions[j] == i``, so its shape is
    ``[None] + data.shape[partitions.rank:]``. The gradient gathers back (dense).

    Raises:
        ValueError: ``num_partitions`` below 1, ``partitions`` of unknown rank, or a
            shape that is not a prefix of ``data``'s.
        TypeError: ``partitions`` is not int32.
        InvalidArgumentError: (when the step runs) an id outside ``[0, num_partitions)``.
    """
    with get_default_graph().name_scope(name or "DynamicPartition"):
        x = convert_to_tensor(data, name="data")
        ids = convert_to_tensor(partitions, name="partitions")
        n = int(num_partitions)
        if n < 1:
            raise ValueError(
                f"DynamicPartition: attribute num_partitions has value {n} less than minimum 1"
            )
        if ids.dtype != dtypes.int32:
            raise TypeError(f"DynamicPartition: partitions must be int32, got {ids.dtype.name}")
        k = ids.shape.rank
        if k is None:
            raise ValueError("DynamicPartition: the rank of partitions must be known")
        if x.shape.rank is not None and (
            k > x.shape.rank or not x.shape[:k].is_compatible_with(ids.shape)
        ):
            raise ValueError(
                f"DynamicPartition: partitions shape {ids.shape} must be a prefix of data "
                f"shape {x.shape}"
            )
        if k == 0:
            x, ids = expand_dims(x, 0), expand_dims(ids, 0)
        # gathering the ids from range(n) checks each lies in [0, n) when the step runs
        checked = gather(range_(n), ids)
        return [boolean_mask(x, equal(checked, i)) for i in range(n)]
