"""Shapes and shape-filled tensors: ``Shape``/``Size``/``Rank``, ``Reshape``/
``ExpandDims``/``Squeeze``, ``SumToShape``/``BroadcastTo``, ``ZerosLike``/``OnesLike``/
``Fill`` (``zeros``, ``ones``). The build-time helpers every array module uses are in
``array/shape_helpers.py``.

Each op type is one record (shape rule, kernel, gradient) next to its builder. The ops
here are linear in their data input (or not differentiable), so each gradient is the
adjoint op: ``Reshape``, ``ExpandDims`` and ``Squeeze`` reshape back to ``shape(x)``;
``SumToShape`` (sum over the dimensions broadcasting added, which the gradient pass
applies to undo broadcasting) and ``BroadcastTo`` are each other's adjoints; ``Fill``'s
gradient is the pass's own ``SumToShape`` down to the scalar.

Static shapes: shape-valued inputs (a reshape's target, slice bounds, paddings) are
read at build time with ``shape_helpers.partial_value``, which extends
``tensor_util.constant_value`` to vectors known only in part (``tf.stack([tf.shape(x)[0],
-1])`` gives ``[None, -1]``), so partial shapes from placeholders with ``None`` dims
propagate as in TF. It looks
through ``Shape``, ``Pack``, ``ConcatV2``, ``Identity`` and ``StridedSlice``, which is
why the strided-slice spec helpers (``slice_key``, ``slice_masks``) live with it rather
than in ``slicing``. ``int_tensor`` turns shapes, axes and index lists into int32 (or,
when a value needs it, int64) constants.

This module and ``array/shape_helpers.py`` are the bottom of the array family: the other
``array_*`` modules import them, and they import none of those; ``cast`` comes from
``cast.py``, below both the array and the math families.

Kernels get shape-valued inputs as small integer arrays and read them with
``.tolist()``/``.item()`` per call (cheap next to the data movement they drive).
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from ...framework import dtypes, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor, get_default_graph
from ...framework.tensor_shape import TensorShape, broadcast_shapes
from ..build import apply_op
from ..constant import constant
from ..host import is_host_namespace
from ..rules import normalize_axis, same_as_input
from .shape_helpers import (
    int_tensor,
    partial_list,
    require_index_dtype,
    require_rank,
    shape_of,
    static_axis,
)


# --- ZerosLike / OnesLike / Fill, zeros, ones ------------------------------------------
def _zeros_like_kernel(ctx: Any, attrs: dict) -> Any:
    return ctx.xp.zeros_like


def _ones_like_kernel(ctx: Any, attrs: dict) -> Any:
    return ctx.xp.ones_like


registry.register(
    registry.OpDef(
        "ZerosLike", same_as_input, _zeros_like_kernel, registry.NOT_DIFFERENTIABLE, foldable=True
    )
)
registry.register(
    registry.OpDef(
        "OnesLike", same_as_input, _ones_like_kernel, registry.NOT_DIFFERENTIABLE, foldable=True
    )
)


def zeros_like(
    tensor: Any, dtype: Any = None, name: str | None = None, optimize: bool = True
) -> Tensor:
    """A tensor of zeros with the shape (and dtype, unless given) of ``tensor``."""
    tensor = convert_to_tensor(tensor)
    if tensor.dtype == dtypes.variant and dtype is None:
        # A tensor list's zero (a gradient): nothing written (ops/control/tensor_list.py).
        return apply_op("TensorListZerosLike", [tensor], name=name)
    if dtype is not None and dtypes.as_dtype(dtype) != tensor.dtype:
        return zeros(shape_of(tensor) if optimize else shape(tensor), dtype, name=name)
    return apply_op("ZerosLike", [tensor], name=name)


def ones_like(
    tensor: Any, dtype: Any = None, name: str | None = None, optimize: bool = True
) -> Tensor:
    """A tensor of ones with the shape (and dtype, unless given) of ``tensor``."""
    tensor = convert_to_tensor(tensor)
    if dtype is not None and dtypes.as_dtype(dtype) != tensor.dtype:
        return ones(shape_of(tensor) if optimize else shape(tensor), dtype, name=name)
    return apply_op("OnesLike", [tensor], name=name)


def _infer_fill(op: Operation) -> list:
    dims, value = op.inputs
    require_index_dtype(dims, "dims", "Fill")
    require_rank(dims, (1,), "dims", "Fill")
    require_rank(value, (0,), "value", "Fill")
    known = partial_list(dims)
    if known is not None and any(d is not None and d < 0 for d in known):
        raise ValueError(f"Fill dimensions must be >= 0, got {known}")
    return [(value.dtype, TensorShape(known))]


def _fill_kernel(ctx: Any, attrs: dict) -> Any:
    full = ctx.xp.full
    return lambda dims, value: full(dims.tolist(), value, dtype=value.dtype)


def _fill_grad(op: Operation, grad: Tensor) -> list:
    return [None, grad]  # the gradient pass sums it down to the scalar's shape


registry.register(registry.OpDef("Fill", _infer_fill, _fill_kernel, _fill_grad, foldable=True))


def fill(dims: Any, value: Any, name: str | None = None) -> Tensor:
    """A tensor of shape ``dims`` with every element equal to scalar ``value``.

    Args:
        dims: 1-D int32/int64 tensor (or list) of the output shape.
        value: a scalar; its dtype is the output dtype.
        name: the op name.
    """
    return apply_op("Fill", [int_tensor(dims), convert_to_tensor(value)], name=name)


def _filled(shape_value: Any, dtype: Any, fill_value: int, name: str) -> Tensor:
    dtype = dtypes.as_dtype(dtype)
    np_dtype = dtype.as_numpy_dtype
    if not isinstance(shape_value, Tensor):
        static: Any = shape_value.as_list() if isinstance(shape_value, TensorShape) else shape_value
        if isinstance(static, (list, builtins.tuple, int, np.integer, np.ndarray)) and all(
            isinstance(d, (int, np.integer)) for d in np.reshape(static, [-1])
        ):
            static_dims = [int(d) for d in np.reshape(static, [-1])]
            if any(d < 0 for d in static_dims):
                raise ValueError(f"'{name}': Fill dimensions must be >= 0, got shape {static_dims}")
            if int(np.prod(static_dims, dtype=np.int64)) < 1000:  # TF1 inlines small constants
                return constant(
                    np.full(static_dims, fill_value, dtype=np_dtype), dtype=dtype, name=name
                )
    dims = int_tensor(shape_value)
    with get_default_graph().name_scope(name) as scope:
        value = constant(fill_value, dtype=dtype)
        return apply_op("Fill", [dims, value], name=scope)


def zeros(shape: Any, dtype: Any = dtypes.float32, name: str | None = None) -> Tensor:
    """A tensor of the given shape with all elements zero.

    Args:
        shape: a list of ints, a ``TensorShape``, or a 1-D int32/int64 tensor.
        dtype: the element type (default float32).
        name: the op name.
    """
    return _filled(shape, dtype, 0, name or "zeros")


def ones(shape: Any, dtype: Any = dtypes.float32, name: str | None = None) -> Tensor:
    """A tensor of the given shape with all elements one (see ``zeros``)."""
    return _filled(shape, dtype, 1, name or "ones")


# --- Shape / Size / Rank ---------------------------------------------------------------
def _infer_shape(op: Operation) -> list:
    rank = op.inputs[0].shape.rank
    return [(op.attrs["out_type"], TensorShape([rank]))]


def _shape_kernel(ctx: Any, attrs: dict) -> Any:
    xp, dtype = ctx.xp, attrs["out_type"].as_numpy_dtype
    if is_host_namespace(xp):
        return lambda x: xp.asarray(x.shape, dtype=dtype)
    # On a GPU, making the shape an array is a copy to the device, and the kernels that
    # read it (reshape targets, gradient shapes) copy it back: the array made for the
    # last shape is handed out again while the shape stays, so a steady step copies
    # nothing and those readers, which remember the last array they read, skip their
    # copy too. Kernels never write into their inputs, and device arrays are never
    # recycled (``BufferPool`` recycles numpy arrays only), so sharing it is safe.
    last: list = [None, None]

    def shape(x: Any) -> Any:
        if last[0] != x.shape:
            last[1] = xp.asarray(x.shape, dtype=dtype)
            last[0] = x.shape
        return last[1]

    return shape


registry.register(
    registry.OpDef("Shape", _infer_shape, _shape_kernel, registry.NOT_DIFFERENTIABLE, foldable=True)
)


def shape(input: Any, name: str | None = None, out_type: Any = dtypes.int32) -> Tensor:
    """The shape of ``input`` as a 1-D integer tensor."""
    return apply_op("Shape", [input], {"out_type": dtypes.as_dtype(out_type)}, name)


def _infer_size(op: Operation) -> list:
    return [(op.attrs["out_type"], TensorShape([]))]


def _size_kernel(ctx: Any, attrs: dict) -> Any:
    xp, dtype = ctx.xp, attrs["out_type"].as_numpy_dtype
    return lambda x: xp.asarray(x.size, dtype=dtype)


def _infer_rank(op: Operation) -> list:
    return [(dtypes.int32, TensorShape([]))]


def _rank_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    return lambda x: xp.asarray(x.ndim, dtype=xp.int32)


registry.register(
    registry.OpDef("Size", _infer_size, _size_kernel, registry.NOT_DIFFERENTIABLE, foldable=True)
)
registry.register(
    registry.OpDef("Rank", _infer_rank, _rank_kernel, registry.NOT_DIFFERENTIABLE, foldable=True)
)


def size(input: Any, name: str | None = None, out_type: Any = dtypes.int32) -> Tensor:
    """The number of elements of ``input`` as a scalar (a constant when static)."""
    input = convert_to_tensor(input)
    out_type = dtypes.as_dtype(out_type)
    if input.shape.is_fully_defined():
        return constant(input.shape.num_elements(), dtype=out_type, name=name or "Size")
    return apply_op("Size", [input], {"out_type": out_type}, name)


def rank(input: Any, name: str | None = None) -> Tensor:
    """The number of dimensions of ``input`` as an int32 scalar (a constant when
    static)."""
    input = convert_to_tensor(input)
    if input.shape.rank is not None:
        return constant(input.shape.rank, dtype=dtypes.int32, name=name or "Rank")
    return apply_op("Rank", [input], name=name)


# --- SumToShape / BroadcastTo: the pair that undoes and does broadcasting ---------------
def _infer_sum_to_shape(op: Operation) -> list:
    return [(op.inputs[0].dtype, TensorShape(partial_list(op.inputs[1])))]


def _sum_to_shape_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp

    def sum_to_shape(x: Any, shape: Any) -> Any:
        target = tuple(int(d) for d in shape)
        if x.shape == target:
            return x
        lead = x.ndim - len(target)
        axes = tuple(builtins.range(lead)) + tuple(
            lead + i for i, d in enumerate(target) if d == 1 and x.shape[lead + i] != 1
        )
        return xp.sum(x, axis=axes, keepdims=False).reshape(target) if axes else x.reshape(target)

    return sum_to_shape


def _sum_to_shape_grad(op: Operation, grad: Tensor) -> list:
    return [broadcast_to(grad, shape(op.inputs[0])), None]


registry.register(
    registry.OpDef(
        "SumToShape", _infer_sum_to_shape, _sum_to_shape_kernel, _sum_to_shape_grad, foldable=True
    )
)


def sum_to_shape(x: Any, target_shape: Any, name: str | None = None) -> Tensor:
    """Sums ``x`` over the dimensions numpy broadcasting added to reach its shape from
    ``target_shape`` (the adjoint of ``broadcast_to``)."""
    return apply_op("SumToShape", [convert_to_tensor(x), int_tensor(target_shape)], name=name)


def _infer_sum_like(op: Operation) -> list:
    return [(op.inputs[0].dtype, op.inputs[1].shape)]


def _sum_like_kernel(ctx: Any, attrs: dict) -> Any:
    reduce = _sum_to_shape_kernel(ctx, attrs)

    def sum_like(x: Any, like: Any) -> Any:
        # The common case at run time: nothing was broadcast, one tuple comparison.
        return x if x.shape == like.shape else reduce(x, like.shape)

    return sum_like


# Same adjoint as SumToShape: broadcast back to the summed input's shape.
registry.register(
    registry.OpDef("SumLike", _infer_sum_like, _sum_like_kernel, _sum_to_shape_grad, foldable=True)
)


def sum_like(x: Any, like: Any, name: str | None = None) -> Tensor:
    """``sum_to_shape(x, shape(like))`` as one op: what the gradient pass uses to undo
    broadcasting when shapes are known only at run time (no separate ``Shape`` op)."""
    return apply_op("SumLike", [convert_to_tensor(x), convert_to_tensor(like)], name=name)


def _infer_broadcast_to(op: Operation) -> list:
    x = op.inputs[0]
    target = partial_list(op.inputs[1])
    if target is None:
        return [(x.dtype, TensorShape(None))]
    if x.shape.rank is None:  # e.g. a py_func output: checked when the kernel runs
        return [(x.dtype, TensorShape(target))]
    out = broadcast_shapes(x.shape, TensorShape(target))
    if out.rank != len(target) or not out.is_compatible_with(TensorShape(target)):
        raise ValueError(f"cannot broadcast shape {x.shape} to {target}")
    return [(x.dtype, TensorShape(target).merge_with(out))]


def _broadcast_to_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    # A read-only broadcast view, not a copy: kernels never write into their inputs, and
    # a fetched read-only array is copied for the caller (Session._host_value).
    return lambda x, shape: xp.broadcast_to(x, tuple(int(d) for d in shape))


def _broadcast_to_grad(op: Operation, grad: Tensor) -> list:
    return [sum_to_shape(grad, shape(op.inputs[0])), None]


registry.register(
    registry.OpDef(
        "BroadcastTo", _infer_broadcast_to, _broadcast_to_kernel, _broadcast_to_grad, foldable=True
    )
)


def broadcast_to(input: Any, shape: Any, name: str | None = None) -> Tensor:
    """Broadcasts ``input`` to ``shape`` (numpy rules)."""
    return apply_op("BroadcastTo", [convert_to_tensor(input), int_tensor(shape)], name=name)


# --- Reshape / ExpandDims / Squeeze ------------------------------------------------------
def _infer_reshape(op: Operation) -> list:
    x, target = op.inputs
    require_index_dtype(target, "shape", "Reshape")
    require_rank(target, (1,), "shape", "Reshape")
    dims = partial_list(target)
    if dims is None:
        return [(x.dtype, TensorShape(None))]
    if any(d is not None and d < -1 for d in dims):
        raise ValueError(f"Reshape dimensions must be >= -1, got {dims}")
    if sum(d == -1 for d in dims) > 1:
        raise ValueError(f"Reshape can infer at most one dimension (-1), got {dims}")
    out = [None if d == -1 else d for d in dims]
    known = int(np.prod([d for d in out if d is not None], dtype=np.int64))
    missing = [i for i, d in enumerate(out) if d is None]
    n = x.shape.num_elements()
    if n is not None and not missing and known != n:
        raise ValueError(
            f"Cannot reshape a tensor with {n} elements to shape {dims} ({known} elements)"
        )
    if n is not None and len(missing) == 1:
        if known == 0:
            if n != 0:
                raise ValueError(
                    f"Cannot reshape a tensor with {n} elements to shape {dims} (0 elements)"
                )
        elif n % known:
            raise ValueError(
                f"Cannot reshape a tensor with {n} elements to shape {dims}: "
                f"{n} is not a multiple of {known}"
            )
        else:
            out[missing[0]] = n // known
    return [(x.dtype, TensorShape(out))]


def _reshape_kernel(ctx: Any, attrs: dict) -> Any:
    reshape_ = ctx.xp.reshape
    return lambda x, shape: reshape_(x, shape.tolist())


def _reshape_like_input_grad(op: Operation, grad: Tensor) -> list:
    return [reshape(grad, shape_of(op.inputs[0])), None]


registry.register(
    registry.OpDef(
        "Reshape", _infer_reshape, _reshape_kernel, _reshape_like_input_grad, foldable=True
    )
)


def reshape(tensor: Any, shape: Any, name: str | None = None) -> Tensor:
    """Reshapes ``tensor`` to ``shape``; one dimension may be -1 (inferred).

    Raises:
        ValueError: the sizes cannot match (when known at build time).
    """
    return apply_op("Reshape", [convert_to_tensor(tensor), int_tensor(shape)], name=name)


def _infer_expand_dims(op: Operation) -> list:
    x, dim = op.inputs
    require_index_dtype(dim, "dim", "ExpandDims")
    if dim.shape.num_elements() not in (None, 1):
        raise ValueError(f"'dim' of 'ExpandDims' must be a scalar, got shape {dim.shape}")
    rank = x.shape.rank
    axis = static_axis(dim, rank, "ExpandDims", extra=1)
    if rank is None:
        return [(x.dtype, TensorShape(None))]
    if axis is None:
        return [(x.dtype, TensorShape([None] * (rank + 1)))]
    dims = x.shape.as_list()
    return [(x.dtype, TensorShape(dims[:axis] + [1] + dims[axis:]))]


def _expand_dims_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    expand = xp.expand_dims
    if is_host_namespace(xp):
        return lambda x, dim: expand(x, dim.item())
    # On a GPU, reading ``dim`` is a copy back and a wait for the device, every step;
    # ``dim`` is nearly always a constant, bound once per plan: the axis read from the
    # last ``dim`` array is reused while the same array comes (device arrays are never
    # written after they are made, see ``_shape_kernel``).
    last: list = [None, 0]

    def expand_dims(x: Any, dim: Any) -> Any:
        if dim is not last[0]:
            last[1] = int(dim.item())
            last[0] = dim
        return expand(x, last[1])

    return expand_dims


registry.register(
    registry.OpDef(
        "ExpandDims",
        _infer_expand_dims,
        _expand_dims_kernel,
        _reshape_like_input_grad,
        foldable=True,
    )
)


def expand_dims(
    input: Any,
    axis: Any = None,
    name: str | None = None,
    dim: Any = None,
) -> Tensor:
    """Inserts a dimension of size 1 at ``axis`` (in ``[-rank-1, rank]``).

    ``dim`` is the deprecated TF1 spelling of ``axis``.
    """
    if axis is not None and dim is not None:
        raise ValueError("Cannot specify both 'axis' and 'dim'")
    axis = dim if axis is None else axis
    if axis is None:
        raise ValueError("Must specify an axis argument to tf.expand_dims()")
    return apply_op("ExpandDims", [convert_to_tensor(input), int_tensor(axis)], name=name)


def _infer_squeeze(op: Operation) -> list:
    x = op.inputs[0]
    dims = x.shape.as_tuple()
    axes = op.attrs["squeeze_dims"]
    if dims is None:
        return [(x.dtype, TensorShape(None))]
    if not axes:
        if None in dims:
            return [(x.dtype, TensorShape(None))]
        return [(x.dtype, TensorShape([d for d in dims if d != 1]))]
    drop = set()
    for a in axes:
        i = normalize_axis(a, len(dims), "Squeeze")
        if dims[i] is not None and dims[i] != 1:
            raise ValueError(f"Can not squeeze dim[{i}], expected a dimension of 1, got {dims[i]}")
        drop.add(i)
    return [(x.dtype, TensorShape([d for i, d in enumerate(dims) if i not in drop]))]


def _squeeze_kernel(ctx: Any, attrs: dict) -> Any:
    squeeze_ = ctx.xp.squeeze
    axes = builtins.tuple(attrs["squeeze_dims"])
    if not axes:
        return squeeze_
    return lambda x: squeeze_(x, axis=axes)


def _squeeze_grad(op: Operation, grad: Tensor) -> list:
    return [reshape(grad, shape_of(op.inputs[0]))]


registry.register(
    registry.OpDef("Squeeze", _infer_squeeze, _squeeze_kernel, _squeeze_grad, foldable=True)
)


def squeeze(
    input: Any,
    axis: Any = None,
    name: str | None = None,
    squeeze_dims: Any = None,
) -> Tensor:
    """Removes dimensions of size 1 (all of them, or those listed in ``axis``).

    ``squeeze_dims`` is the deprecated TF1 spelling of ``axis``.

    Raises:
        ValueError: a listed dimension is known not to be 1, or is out of range.
    """
    if axis is not None and squeeze_dims is not None:
        raise ValueError("Cannot specify both 'axis' and 'squeeze_dims'")
    axis = squeeze_dims if axis is None else axis
    if isinstance(axis, (int, np.integer)):
        axis = [axis]
    axes = builtins.tuple(int(a) for a in axis) if axis is not None else ()
    return apply_op("Squeeze", [input], {"squeeze_dims": axes}, name=name)
