"""Joining and splitting: ``ConcatV2``, ``Pack``/``Unpack`` (``stack``/``unstack``),
``Split``/``SplitV``, and ``Tile``.

Each op type is one record (shape rule, kernel, gradient) next to its builder, and each
gradient is the adjoint op:

=======================  ===========================================
forward                  gradient (adjoint)
=======================  ===========================================
ConcatV2                 SplitV (sizes from the inputs' shapes; a gather
                         of their run-time shapes when the axis is
                         known only when the step runs)
Split, SplitV            ConcatV2
Pack                     Unpack, and back
Tile                     Reshape to ``[m0, d0, m1, d1, ...]`` + SumToShape
=======================  ===========================================

Shape rules merge the inputs' static shapes dimension by dimension (``_merge_dims``),
so a known size in one input fills an unknown one in another, as in TF. The ``pack``
hook registered here lets ``convert_to_tensor`` turn a list mixing tensors and numbers
into a ``Pack`` (TF's auto-packing), with the numbers in the tensors' dtype.
"""

from __future__ import annotations

import builtins
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...framework import dtypes, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor
from ...framework.operation import register_operator
from ...framework.tensor_shape import TensorShape
from ..build import apply_op, apply_op_n, convert_inputs
from ..cast import cast
from ..constant import constant
from ..control.group import identity
from ..math.arith import floormod
from ..rules import normalize_axis, require_same_dtype
from .indexing import gather
from .shape_helpers import (
    int_tensor,
    partial_int,
    partial_list,
    require_index_dtype,
    require_rank,
    shape_of,
    static_axis,
)
from .shapes import ones_like, rank, reshape, shape, sum_to_shape


# --- ConcatV2 / Pack / Unpack / Split / SplitV -------------------------------------------
def _merge_dims(shapes: Sequence[TensorShape], skip: int | None, op_type: str) -> list:
    """Merges same-rank shapes dimension by dimension (except ``skip``)."""
    out = shapes[0].as_list()
    for s in shapes[1:]:
        for i, d in enumerate(s.as_list()):
            if i == skip or d is None:
                continue
            if out[i] is not None and out[i] != d:
                raise ValueError(
                    f"Dimension {i} in both shapes must be equal, but are "
                    f"{out[i]} and {d}. Shapes are {shapes[0]} and {s} "
                    f"(in '{op_type}')"
                )
            out[i] = d
    return out


def _common_rank(shapes: Sequence[TensorShape], op_type: str) -> int | None:
    rank = None
    for s in shapes:
        if s.rank is None:
            continue
        if rank is not None and s.rank != rank:
            raise ValueError(
                f"Shape must be rank {rank} but is rank {s.rank} (the inputs "
                f"of '{op_type}' have shapes " + ", ".join(str(t) for t in shapes) + ")"
            )
        rank = s.rank
    return rank


def _infer_concat(op: Operation) -> list:
    values, axis_t = op.inputs[:-1], op.inputs[-1]
    dtype = require_same_dtype(_Inputs(values, "ConcatV2"))
    require_index_dtype(axis_t, "axis", "ConcatV2")
    require_rank(axis_t, (0,), "axis", "ConcatV2")
    shapes = [t.shape for t in values]
    rank = _common_rank(shapes, "ConcatV2")
    if rank is None:
        return [(dtype, TensorShape(None))]
    if rank == 0:
        raise ValueError("Can't concatenate scalars (use tf.stack instead)")
    axis = static_axis(axis_t, rank, "ConcatV2")
    known = [s for s in shapes if s.rank is not None]
    if axis is None:
        return [(dtype, TensorShape([None] * rank))]
    out = _merge_dims(known, axis, "ConcatV2")
    sizes = [s[axis].value for s in shapes]  # None for an unknown rank or size
    out[axis] = None if None in sizes else sum(sizes)
    return [(dtype, TensorShape(out))]


class _Inputs:
    """Lets ``require_same_dtype`` check a subset of an op's inputs."""

    def __init__(self, inputs: Sequence[Tensor], op_type: str = "ConcatV2"):
        self.inputs = list(inputs)
        self.type = op_type


def _concat_kernel(ctx: Any, attrs: dict) -> Any:
    concatenate = ctx.xp.concatenate

    def concat_(*args: Any) -> Any:
        return concatenate(args[:-1], axis=args[-1].item())

    return concat_


def _concat_grad(op: Operation, grad: Tensor) -> list:
    values, axis_t = op.inputs[:-1], op.inputs[-1]
    rank_ = _common_rank([t.shape for t in values], "ConcatV2")
    axis = static_axis(axis_t, rank_, "ConcatV2")
    if axis is not None and rank_ is not None:
        sizes = [t.shape[axis].value for t in values]  # None for an unknown rank or size
        if None not in sizes:
            size_splits = constant(sizes, dtype=dtypes.int32)
        else:
            size_splits = stack([shape(t)[axis] for t in values])
    else:
        # The axis is only known when the step runs: normalize it there.
        axis32 = axis_t if axis_t.dtype == dtypes.int32 else cast(axis_t, dtypes.int32)
        axis_nn = floormod(axis32, rank(values[0]))
        size_splits = stack([gather(shape(t), axis_nn) for t in values])
    return split(grad, size_splits, axis=axis_t, num=len(values)) + [None]


registry.register(
    registry.OpDef("ConcatV2", _infer_concat, _concat_kernel, _concat_grad, foldable=True)
)


def concat(values: Sequence[Any], axis: Any, name: str = "concat") -> Tensor:
    """Concatenates tensors along dimension ``axis``.

    Args:
        values: a list of tensors of one dtype and rank, equal in every dimension but
            ``axis``.
        axis: the dimension (negative counts from the end).
        name: the op name.

    Raises:
        ValueError: ``values`` is empty, ranks or dimensions differ, or ``axis`` is out
            of range.
    """
    if not isinstance(values, (list, builtins.tuple)):
        values = [values]
    if not values:
        raise ValueError(f"concat '{name}' needs at least one tensor in 'values', got none")
    values = convert_inputs(list(values))
    axis_t = int_tensor(axis)
    if len(values) == 1:
        # TF1 returns the single input itself, after checking the axis.
        rank_ = values[0].shape.rank
        axis_value = partial_int(axis_t)
        if rank_ is not None and axis_value is not None:
            normalize_axis(axis_value, rank_, "ConcatV2")
        return identity(values[0], name=name)
    return apply_op("ConcatV2", [*values, axis_t], name=name)


def _infer_pack(op: Operation) -> list:
    dtype = require_same_dtype(op)
    shapes = [t.shape for t in op.inputs]
    rank_ = _common_rank(shapes, "Pack")
    axis = op.attrs["axis"]
    if rank_ is None:
        return [(dtype, TensorShape(None))]
    axis = normalize_axis(axis, rank_ + 1, "Pack")
    dims = _merge_dims([s for s in shapes if s.rank is not None], None, "Pack")
    return [(dtype, TensorShape(dims[:axis] + [len(op.inputs)] + dims[axis:]))]


def _pack_kernel(ctx: Any, attrs: dict) -> Any:
    stack_, axis = ctx.xp.stack, attrs["axis"]
    return lambda *values: stack_(values, axis=axis)


def _pack_grad(op: Operation, grad: Tensor) -> list:
    return unstack(grad, num=len(op.inputs), axis=op.attrs["axis"])


registry.register(registry.OpDef("Pack", _infer_pack, _pack_kernel, _pack_grad, foldable=True))


def stack(values: Sequence[Any], axis: int = 0, name: str = "stack") -> Tensor:
    """Stacks a list of rank-R tensors into one rank-(R+1) tensor along ``axis``.

    Raises:
        ValueError: shapes differ, or ``axis`` is not in ``[-(R+1), R]``.
    """
    values = list(values)
    if not values:
        raise ValueError("stack needs at least one tensor")
    return apply_op("Pack", convert_inputs(values), {"axis": int(axis)}, name=name)


def _autopack(values: Sequence[Tensor], name: str | None = None) -> Tensor:
    """``convert_to_tensor`` of a list mixing tensors and numbers (TF's auto-packing).

    Numbers were converted with default dtypes; rebuild those constants in the dtype of
    the first real tensor so that ``[x, 1]`` packs with an int64 or float ``x``.
    """
    values = list(values)
    target = next((v.dtype for v in values if v.op.type != "Const"), values[0].dtype)
    fixed = []
    for v in values:
        if v.dtype != target and v.op.type == "Const":
            value = v.op.attrs["value"]
            cast_value = value.astype(target.as_numpy_dtype)
            if np.array_equal(cast_value, value):
                v = constant(cast_value, dtype=target)
        fixed.append(v)
    return stack(fixed, name=name or "packed")


register_operator("pack", _autopack)


def _infer_unpack(op: Operation) -> list:
    x = op.inputs[0]
    num, axis = op.attrs["num"], op.attrs["axis"]
    dims = x.shape.as_tuple()
    if dims is None:
        return [(x.dtype, TensorShape(None))] * num
    axis = normalize_axis(axis, len(dims), "Unpack")
    if dims[axis] is not None and dims[axis] != num:
        raise ValueError(f"Cannot unpack dimension {axis} of size {dims[axis]} into {num} tensors")
    out = TensorShape(dims[:axis] + dims[axis + 1 :])
    return [(x.dtype, out)] * num


def _unpack_kernel(ctx: Any, attrs: dict) -> Any:
    moveaxis = ctx.xp.moveaxis
    num, axis = attrs["num"], attrs["axis"]

    def unpack(x: Any) -> Any:
        if x.shape[axis] != num:
            raise ValueError(
                f"Input of Unpack has size {x.shape[axis]} along axis {axis}, expected {num}"
            )
        moved = moveaxis(x, axis, 0) if axis not in (0, -x.ndim) else x
        return moved[0] if num == 1 else builtins.tuple(moved)

    return unpack


def _unpack_grad(op: Operation, *grads: Tensor) -> list:
    return [stack(list(grads), axis=op.attrs["axis"])]


registry.register(
    registry.OpDef("Unpack", _infer_unpack, _unpack_kernel, _unpack_grad, foldable=True)
)


def unstack(
    value: Any, num: int | None = None, axis: int = 0, name: str = "unstack"
) -> list[Tensor]:
    """Splits dimension ``axis`` of a rank-R tensor into a list of rank-(R-1) tensors.

    Raises:
        ValueError: ``num`` is not given and the dimension is not statically known.
    """
    value = convert_to_tensor(value)
    dims = value.shape.as_tuple()
    if num is None:
        if dims is None:
            raise ValueError(f"Cannot infer num from shape {value.shape}")
        num = dims[normalize_axis(axis, len(dims), "Unpack")]
        if num is None:
            raise ValueError(f"Cannot infer num from shape {value.shape}")
    return list(
        apply_op_n("Unpack", [value], {"num": int(num), "axis": int(axis)}, name=name).outputs
    )


def _infer_split(op: Operation) -> list:
    axis_t, x = op.inputs
    num = op.attrs["num_split"]
    require_index_dtype(axis_t, "axis", "Split")
    dims = x.shape.as_tuple()
    if dims is None:
        return [(x.dtype, TensorShape(None))] * num
    axis = static_axis(axis_t, len(dims), "Split")
    if axis is None:
        return [(x.dtype, TensorShape([None] * len(dims)))] * num
    out = list(dims)
    if dims[axis] is not None:
        if dims[axis] % num:
            raise ValueError(
                f"Dimension size must be evenly divisible by {num} but is "
                f"{dims[axis]} (dimension {axis} of 'Split')"
            )
        out[axis] = dims[axis] // num
    return [(x.dtype, TensorShape(out))] * num


def _split_kernel(ctx: Any, attrs: dict) -> Any:
    split_, num = ctx.xp.split, attrs["num_split"]

    def split_even(axis: Any, x: Any) -> Any:
        parts = split_(x, num, axis=axis.item())
        return parts[0] if num == 1 else builtins.tuple(parts)

    return split_even


def _split_grad(op: Operation, *grads: Tensor) -> list:
    return [None, concat(list(grads), op.inputs[0])]


registry.register(registry.OpDef("Split", _infer_split, _split_kernel, _split_grad, foldable=True))


def _infer_split_v(op: Operation) -> list:
    x, sizes_t, axis_t = op.inputs
    num = op.attrs["num_split"]
    require_index_dtype(sizes_t, "size_splits", "SplitV")
    require_index_dtype(axis_t, "axis", "SplitV")
    require_rank(sizes_t, (1,), "size_splits", "SplitV")
    dims = x.shape.as_tuple()
    sizes = partial_list(sizes_t)
    if sizes is not None and len(sizes) != num:
        raise ValueError(f"size_splits has {len(sizes)} entries, expected num_split={num}")
    if dims is None:
        return [(x.dtype, TensorShape(None))] * num
    axis = static_axis(axis_t, len(dims), "SplitV")
    if axis is None:
        return [(x.dtype, TensorShape([None] * len(dims)))] * num
    sizes = sizes if sizes is not None else [None] * num
    if sum(s == -1 for s in sizes) > 1:
        raise ValueError(f"size_splits may contain at most one -1, got {sizes}")
    if any(s is not None and s < -1 for s in sizes):
        raise ValueError(f"size_splits must be >= -1, got {sizes}")
    known = sum(s for s in sizes if s is not None and s >= 0)
    total = dims[axis]
    if total is not None and None not in sizes:
        if -1 in sizes:
            if known > total:
                raise ValueError(
                    f"size_splits {sizes} add up to more than dimension {axis} of size {total}"
                )
            sizes = [total - known if s == -1 else s for s in sizes]
        elif known != total:
            raise ValueError(
                f"size_splits {sizes} must add up to dimension {axis} of size "
                f"{total} of the value being split"
            )
    outs = []
    for s in sizes:
        d = list(dims)
        d[axis] = None if s is None or s == -1 else s
        outs.append((x.dtype, TensorShape(d)))
    return outs


def _split_v_kernel(ctx: Any, attrs: dict) -> Any:
    split_, num = ctx.xp.split, attrs["num_split"]

    def split_v(x: Any, sizes: Any, axis: Any) -> Any:
        a = axis.item()
        sizes = sizes.tolist()
        total = x.shape[a]
        if -1 in sizes:
            sizes[sizes.index(-1)] = total - (sum(sizes) + 1)
        if sum(sizes) != total or min(sizes) < 0:
            raise ValueError(
                f"size_splits {sizes} do not add up to {total}, the size of "
                f"dimension {a} of the value being split"
            )
        cuts, at = [], 0
        for s in sizes[:-1]:
            at += s
            cuts.append(at)
        parts = split_(x, cuts, axis=a)
        return parts[0] if num == 1 else builtins.tuple(parts)

    return split_v


def _split_v_grad(op: Operation, *grads: Tensor) -> list:
    return [concat(list(grads), op.inputs[2]), None, None]


registry.register(
    registry.OpDef("SplitV", _infer_split_v, _split_v_kernel, _split_v_grad, foldable=True)
)


def split(
    value: Any, num_or_size_splits: Any, axis: Any = 0, num: int | None = None, name: str = "split"
) -> list[Tensor]:
    """Splits ``value`` along ``axis`` into equal parts or parts of given sizes.

    Args:
        value: the tensor to split.
        num_or_size_splits: an int (that many equal parts) or a 1-D list/tensor of
            sizes (one may be -1).
        axis: the dimension to split.
        num: the number of parts, when ``size_splits`` is a tensor of unknown length.
        name: the op name.

    Returns:
        A list of tensors.
    """
    value = convert_to_tensor(value)
    axis_t = int_tensor(axis)
    if isinstance(num_or_size_splits, (numbers.Integral,)) and not isinstance(
        num_or_size_splits, bool
    ):
        n = int(num_or_size_splits)
        if n < 1:
            raise ValueError(f"num_or_size_splits must be >= 1, got {n}")
        return list(apply_op_n("Split", [axis_t, value], {"num_split": n}, name=name).outputs)
    sizes = int_tensor(num_or_size_splits)
    if num is None:
        length = sizes.shape[0].value if sizes.shape.rank == 1 else None
        if length is None:
            raise ValueError(f"Cannot infer num from shape {sizes.shape}")
        num = length
    return list(
        apply_op_n("SplitV", [value, sizes, axis_t], {"num_split": int(num)}, name=name).outputs
    )


# --- Tile -------------------------------------------------------------------------------
def _infer_tile(op: Operation) -> list:
    x, multiples_t = op.inputs
    require_index_dtype(multiples_t, "multiples", "Tile")
    require_rank(multiples_t, (1,), "multiples", "Tile")
    multiples = partial_list(multiples_t)
    dims = x.shape.as_tuple()
    if dims is None:
        return [(x.dtype, TensorShape(None if multiples is None else [None] * len(multiples)))]
    if multiples is None:
        return [(x.dtype, TensorShape([None] * len(dims)))]
    if len(multiples) != len(dims):
        raise ValueError(
            f"Expected multiples argument to be a vector of length {len(dims)}"
            f" (the input's rank), got {len(multiples)} elements"
        )
    if any(m is not None and m < 0 for m in multiples):
        raise ValueError(f"Expected multiples to be non-negative, got {multiples}")
    return [
        (
            x.dtype,
            TensorShape(
                [
                    None if d is None or m is None else d * m
                    for d, m in zip(dims, multiples, strict=True)
                ]
            ),
        )
    ]


def _tile_kernel(ctx: Any, attrs: dict) -> Any:
    tile_ = ctx.xp.tile
    return lambda x, multiples: tile_(x, multiples.tolist())


def _tile_grad(op: Operation, grad: Tensor) -> list:
    # Tile copies x m_i times along each axis i, so the gradient, reshaped to
    # [m0, d0, m1, d1, ...], sums over the m axes (SumToShape to [1, d0, 1, d1, ...]).
    x, multiples = op.inputs
    dims = shape_of(x, multiples.dtype)
    split_shape = reshape(stack([multiples, dims], axis=1), [-1])
    target = reshape(stack([ones_like(multiples), dims], axis=1), [-1])
    summed = sum_to_shape(reshape(grad, split_shape), target)
    return [reshape(summed, dims), None]


registry.register(registry.OpDef("Tile", _infer_tile, _tile_kernel, _tile_grad, foldable=True))


def tile(input: Any, multiples: Any, name: str | None = None) -> Tensor:
    """Repeats ``input`` ``multiples[i]`` times along each dimension ``i``."""
    return apply_op("Tile", [convert_to_tensor(input), int_tensor(multiples)], name=name)
