"""Array ops: shapes, reshaping, slicing, joining, gathering, padding, and their gradients.

Every op type here is linear in its data input (or not differentiable), so each
gradient rule is the adjoint op, itself an op of this module with its own gradient:

=======================  ===========================================
forward                  gradient (adjoint)
=======================  ===========================================
Reshape, ExpandDims,     Reshape back to ``shape(x)``
Squeeze
Transpose(perm)          Transpose(invert_permutation(perm))
ReverseV2                ReverseV2
ConcatV2                 SplitV (sizes from the inputs' shapes)
Split, SplitV            ConcatV2
Pack                     Unpack, and back
Slice                    Pad (before = begin, after = rest)
StridedSlice             StridedSliceGrad (zeros with ``dy`` written at the
                         slice), whose gradient is StridedSlice again
Pad, PadV2               Slice
MirrorPad                MirrorPadGrad (folds the reflected borders back),
                         whose gradient is MirrorPad
Tile                     Reshape to ``[m0, d0, m1, d1, ...]`` + SumToShape
GatherV2                 UnsortedSegmentSum (dense, never IndexedSlices),
                         whose gradient is GatherV2
GatherNd                 ScatterNd, and back
Fill                     the pass's own SumToShape to a scalar
=======================  ===========================================

Static shapes: shape-valued inputs (a reshape's target, slice bounds, paddings) are
read at build time with ``_partial``, which extends ``tensor_util.constant_value`` to
vectors known only in part (``tf.stack([tf.shape(x)[0], -1])`` gives ``[None, -1]``),
so partial shapes from placeholders with ``None`` dims propagate as in TF.

Kernels get shape-valued inputs as small integer arrays and read them with
``.tolist()``/``.item()`` per call (cheap next to the data movement they drive).
"""

from __future__ import annotations

import builtins
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..framework import dtypes, registry
from ..framework.graph import (
    Operation,
    Tensor,
    convert_to_tensor,
    get_default_graph,
    register_operator,
)
from ..framework.tensor_shape import TensorShape, broadcast_shapes
from ..framework.tensor_util import constant_value
from .build import apply_op, apply_op_n, convert_inputs
from .constant import constant
from .control import identity
from .rules import normalize_axis, require_same_dtype, same_as_input

_INDEX_DTYPES = (dtypes.int32, dtypes.int64)


# --- build-time helpers ------------------------------------------------------------------
def _partial(t: Tensor, depth: int = 6) -> np.ndarray | None:
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
            return np.array(list(op.inputs[0].shape.as_tuple()), dtype=object)
        parts = None
        if op.type in ("Pack", "ConcatV2"):
            inputs = op.inputs if op.type == "Pack" else op.inputs[:-1]
            parts = [_partial(i, depth - 1) for i in inputs]
        if op.type == "Pack" and all(p is not None for p in parts):
            return np.stack(parts, axis=op.attrs["axis"])
        if op.type == "ConcatV2" and all(p is not None for p in parts):
            axis = constant_value(op.inputs[-1])
            if axis is not None and parts:
                return np.concatenate(parts, axis=int(axis))
        if op.type == "StridedSlice":
            base = _partial(op.inputs[0], depth - 1)
            key = _constant_slice_key(op)
            if base is not None and key is not None:
                return np.asarray(base[key], dtype=object)
        if op.type == "Identity":
            return _partial(op.inputs[0], depth - 1)
    shape = t.shape.as_tuple()
    if shape is None or None in shape:
        return None
    return np.full(shape, None, dtype=object)


def _partial_list(t: Tensor) -> list | None:
    """A 1-D integer tensor's elements (``None`` where unknown), or ``None``."""
    value = _partial(t)
    return None if value is None or value.ndim != 1 else list(value)


def _partial_int(t: Tensor) -> int | None:
    """A scalar (or one-element) integer tensor's value, or ``None`` if unknown."""
    value = _partial(t)
    if value is None or value.size != 1:
        return None
    return value.reshape(-1)[0]


def _require_index_dtype(t: Tensor, what: str, op_type: str) -> None:
    if t.dtype not in _INDEX_DTYPES:
        raise TypeError(f"'{what}' of '{op_type}' must be int32 or int64, got "
                        f"{t.dtype.name}")


def _require_rank(t: Tensor, ranks: Sequence[int], what: str, op_type: str) -> None:
    if t.shape.rank is not None and t.shape.rank not in ranks:
        want = " or ".join(str(r) for r in ranks)
        raise ValueError(f"'{what}' of '{op_type}' must have rank {want}, got shape "
                         f"{t.shape}")


def _int_tensor(value: Any, dtype: Any = dtypes.int32) -> Tensor:
    """Shapes, axes and index lists as an integer tensor (int64 if a value needs it)."""
    if isinstance(value, TensorShape):
        value = value.as_list()
    if isinstance(value, Tensor) or hasattr(value, "_as_graph_element"):
        return convert_to_tensor(value)
    if isinstance(value, (list, builtins.tuple)) and any(
            isinstance(v, Tensor) for v in value):
        return convert_to_tensor(list(value))
    array = np.asarray(value)
    if array.dtype.kind in "iu" and array.size and (
            array.max() > np.iinfo(np.int32).max or array.min() < np.iinfo(np.int32).min):
        dtype = dtypes.int64
    return constant(array if array.dtype.kind in "iub" else value, dtype=dtype)


def _static_axis(t: Tensor, rank: int | None, op_type: str, extra: int = 0) -> int | None:
    """The axis input's value normalized to ``[0, rank + extra)``, or ``None``."""
    axis = _partial_int(t)
    if axis is None or rank is None:
        return axis
    return normalize_axis(axis, rank + extra, op_type)


def _shape_of(t: Tensor, out_type: Any = dtypes.int32) -> Tensor:
    """``shape(t)``, as a constant when the static shape is fully known."""
    if t.shape.is_fully_defined():
        return constant(t.shape.as_list(), dtype=out_type)
    return shape(t, out_type=out_type)


# --- ZerosLike / OnesLike / Fill, zeros, ones ------------------------------------------
def _zeros_like_kernel(ctx: Any, attrs: dict) -> Any:
    return ctx.xp.zeros_like


def _ones_like_kernel(ctx: Any, attrs: dict) -> Any:
    return ctx.xp.ones_like


registry.register(registry.OpDef("ZerosLike", same_as_input, _zeros_like_kernel,
                                 registry.NOT_DIFFERENTIABLE, foldable=True))
registry.register(registry.OpDef("OnesLike", same_as_input, _ones_like_kernel,
                                 registry.NOT_DIFFERENTIABLE, foldable=True))


def zeros_like(tensor: Any, dtype: Any = None, name: str | None = None,
               optimize: bool = True) -> Tensor:
    """A tensor of zeros with the shape (and dtype, unless given) of ``tensor``."""
    tensor = convert_to_tensor(tensor)
    if dtype is not None and dtypes.as_dtype(dtype) != tensor.dtype:
        return zeros(_shape_of(tensor) if optimize else shape(tensor), dtype, name=name)
    return apply_op("ZerosLike", [tensor], name=name)


def ones_like(tensor: Any, dtype: Any = None, name: str | None = None,
              optimize: bool = True) -> Tensor:
    """A tensor of ones with the shape (and dtype, unless given) of ``tensor``."""
    tensor = convert_to_tensor(tensor)
    if dtype is not None and dtypes.as_dtype(dtype) != tensor.dtype:
        return ones(_shape_of(tensor) if optimize else shape(tensor), dtype, name=name)
    return apply_op("OnesLike", [tensor], name=name)


def _infer_fill(op: Operation) -> list:
    dims, value = op.inputs
    _require_index_dtype(dims, "dims", "Fill")
    _require_rank(dims, (1,), "dims", "Fill")
    _require_rank(value, (0,), "value", "Fill")
    known = _partial_list(dims)
    if known is not None and any(d is not None and d < 0 for d in known):
        raise ValueError(f"Fill dimensions must be >= 0, got {known}")
    return [(value.dtype, TensorShape(known))]


def _fill_kernel(ctx: Any, attrs: dict) -> Any:
    full = ctx.xp.full
    return lambda dims, value: full(dims.tolist(), value, dtype=value.dtype)


def _fill_grad(op: Operation, grad: Tensor) -> list:
    return [None, grad]  # the gradient pass sums it down to the scalar's shape


registry.register(registry.OpDef("Fill", _infer_fill, _fill_kernel, _fill_grad,
                                 foldable=True))


def fill(dims: Any, value: Any, name: str | None = None) -> Tensor:
    """A tensor of shape ``dims`` with every element equal to scalar ``value``.

    Args:
        dims: 1-D int32/int64 tensor (or list) of the output shape.
        value: a scalar; its dtype is the output dtype.
        name: the op name.
    """
    return apply_op("Fill", [_int_tensor(dims), convert_to_tensor(value)], name=name)


def _filled(shape_value: Any, dtype: Any, fill_value: int, name: str) -> Tensor:
    dtype = dtypes.as_dtype(dtype)
    np_dtype = dtype.as_numpy_dtype
    if not isinstance(shape_value, Tensor):
        static = shape_value.as_list() if isinstance(shape_value, TensorShape) else \
            shape_value
        if isinstance(static, (list, builtins.tuple, int, np.integer, np.ndarray)) and all(
                isinstance(d, (int, np.integer)) for d in np.reshape(static, [-1])):
            dims = [int(d) for d in np.reshape(static, [-1])]
            if int(np.prod(dims, dtype=np.int64)) < 1000:  # TF1 inlines small constants
                return constant(np.full(dims, fill_value, dtype=np_dtype), dtype=dtype,
                                name=name)
    dims = _int_tensor(shape_value)
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
    return lambda x: xp.asarray(x.shape, dtype=dtype)


registry.register(registry.OpDef("Shape", _infer_shape, _shape_kernel,
                                 registry.NOT_DIFFERENTIABLE, foldable=True))


def shape(input: Any, name: str | None = None, out_type: Any = dtypes.int32) -> Tensor:  # noqa: A002
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


registry.register(registry.OpDef("Size", _infer_size, _size_kernel,
                                 registry.NOT_DIFFERENTIABLE, foldable=True))
registry.register(registry.OpDef("Rank", _infer_rank, _rank_kernel,
                                 registry.NOT_DIFFERENTIABLE, foldable=True))


def size(input: Any, name: str | None = None, out_type: Any = dtypes.int32) -> Tensor:  # noqa: A002
    """The number of elements of ``input`` as a scalar (a constant when static)."""
    input = convert_to_tensor(input)  # noqa: A001
    out_type = dtypes.as_dtype(out_type)
    if input.shape.is_fully_defined():
        return constant(input.shape.num_elements(), dtype=out_type, name=name or "Size")
    return apply_op("Size", [input], {"out_type": out_type}, name)


def rank(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """The number of dimensions of ``input`` as an int32 scalar (a constant when
    static)."""
    input = convert_to_tensor(input)  # noqa: A001
    if input.shape.rank is not None:
        return constant(input.shape.rank, dtype=dtypes.int32, name=name or "Rank")
    return apply_op("Rank", [input], name=name)


# --- SumToShape / BroadcastTo: the pair that undoes and does broadcasting ---------------
def _infer_sum_to_shape(op: Operation) -> list:
    return [(op.inputs[0].dtype, TensorShape(_partial_list(op.inputs[1])))]


def _sum_to_shape_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp

    def sum_to_shape(x: Any, shape: Any) -> Any:
        target = tuple(int(d) for d in shape)
        if x.shape == target:
            return x
        lead = x.ndim - len(target)
        axes = tuple(builtins.range(lead)) + tuple(
            lead + i for i, d in enumerate(target) if d == 1 and x.shape[lead + i] != 1)
        return xp.sum(x, axis=axes, keepdims=False).reshape(target) if axes else \
            x.reshape(target)

    return sum_to_shape


def _sum_to_shape_grad(op: Operation, grad: Tensor) -> list:
    return [broadcast_to(grad, shape(op.inputs[0])), None]


registry.register(registry.OpDef("SumToShape", _infer_sum_to_shape, _sum_to_shape_kernel,
                                 _sum_to_shape_grad, foldable=True))


def sum_to_shape(x: Any, target_shape: Any, name: str | None = None) -> Tensor:
    """Sums ``x`` over the dimensions numpy broadcasting added to reach its shape from
    ``target_shape`` (the adjoint of ``broadcast_to``)."""
    return apply_op("SumToShape", [convert_to_tensor(x), _int_tensor(target_shape)],
                    name=name)


def _infer_broadcast_to(op: Operation) -> list:
    x = op.inputs[0]
    target = _partial_list(op.inputs[1])
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
    # Materialize: a broadcast view would alias its input and be read-only.
    return lambda x, shape: xp.array(xp.broadcast_to(x, tuple(int(d) for d in shape)))


def _broadcast_to_grad(op: Operation, grad: Tensor) -> list:
    return [sum_to_shape(grad, shape(op.inputs[0])), None]


registry.register(registry.OpDef("BroadcastTo", _infer_broadcast_to, _broadcast_to_kernel,
                                 _broadcast_to_grad, foldable=True))


def broadcast_to(input: Any, shape: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """Broadcasts ``input`` to ``shape`` (numpy rules)."""
    return apply_op("BroadcastTo", [convert_to_tensor(input), _int_tensor(shape)], name=name)


# --- Reshape / ExpandDims / Squeeze ------------------------------------------------------
def _infer_reshape(op: Operation) -> list:
    x, target = op.inputs
    _require_index_dtype(target, "shape", "Reshape")
    _require_rank(target, (1,), "shape", "Reshape")
    dims = _partial_list(target)
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
        raise ValueError(f"Cannot reshape a tensor with {n} elements to shape {dims} "
                         f"({known} elements)")
    if n is not None and len(missing) == 1:
        if known == 0:
            if n != 0:
                raise ValueError(f"Cannot reshape a tensor with {n} elements to shape "
                                 f"{dims} (0 elements)")
        elif n % known:
            raise ValueError(f"Cannot reshape a tensor with {n} elements to shape {dims}: "
                             f"{n} is not a multiple of {known}")
        else:
            out[missing[0]] = n // known
    return [(x.dtype, TensorShape(out))]


def _reshape_kernel(ctx: Any, attrs: dict) -> Any:
    reshape_ = ctx.xp.reshape
    return lambda x, shape: reshape_(x, shape.tolist())


def _reshape_like_input_grad(op: Operation, grad: Tensor) -> list:
    return [reshape(grad, _shape_of(op.inputs[0])), None]


registry.register(registry.OpDef("Reshape", _infer_reshape, _reshape_kernel,
                                 _reshape_like_input_grad, foldable=True))


def reshape(tensor: Any, shape: Any, name: str | None = None) -> Tensor:
    """Reshapes ``tensor`` to ``shape``; one dimension may be -1 (inferred).

    Raises:
        ValueError: the sizes cannot match (when known at build time).
    """
    return apply_op("Reshape", [convert_to_tensor(tensor), _int_tensor(shape)], name=name)


def _infer_expand_dims(op: Operation) -> list:
    x, dim = op.inputs
    _require_index_dtype(dim, "dim", "ExpandDims")
    if dim.shape.num_elements() not in (None, 1):
        raise ValueError(f"'dim' of 'ExpandDims' must be a scalar, got shape {dim.shape}")
    rank = x.shape.rank
    axis = _static_axis(dim, rank, "ExpandDims", extra=1)
    if rank is None:
        return [(x.dtype, TensorShape(None))]
    if axis is None:
        return [(x.dtype, TensorShape([None] * (rank + 1)))]
    dims = list(x.shape.as_tuple())
    return [(x.dtype, TensorShape(dims[:axis] + [1] + dims[axis:]))]


def _expand_dims_kernel(ctx: Any, attrs: dict) -> Any:
    expand = ctx.xp.expand_dims
    return lambda x, dim: expand(x, dim.item())


registry.register(registry.OpDef("ExpandDims", _infer_expand_dims, _expand_dims_kernel,
                                 _reshape_like_input_grad, foldable=True))


def expand_dims(input: Any, axis: Any = None, name: str | None = None,  # noqa: A002
                dim: Any = None) -> Tensor:
    """Inserts a dimension of size 1 at ``axis`` (in ``[-rank-1, rank]``).

    ``dim`` is the deprecated TF1 spelling of ``axis``.
    """
    if axis is not None and dim is not None:
        raise ValueError("Cannot specify both 'axis' and 'dim'")
    axis = dim if axis is None else axis
    if axis is None:
        raise ValueError("Must specify an axis argument to tf.expand_dims()")
    return apply_op("ExpandDims", [convert_to_tensor(input), _int_tensor(axis)], name=name)


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
            raise ValueError(f"Can not squeeze dim[{i}], expected a dimension of 1, got "
                             f"{dims[i]}")
        drop.add(i)
    return [(x.dtype, TensorShape([d for i, d in enumerate(dims) if i not in drop]))]


def _squeeze_kernel(ctx: Any, attrs: dict) -> Any:
    squeeze_ = ctx.xp.squeeze
    axes = builtins.tuple(attrs["squeeze_dims"])
    if not axes:
        return squeeze_
    return lambda x: squeeze_(x, axis=axes)


def _squeeze_grad(op: Operation, grad: Tensor) -> list:
    return [reshape(grad, _shape_of(op.inputs[0]))]


registry.register(registry.OpDef("Squeeze", _infer_squeeze, _squeeze_kernel, _squeeze_grad,
                                 foldable=True))


def squeeze(input: Any, axis: Any = None, name: str | None = None,  # noqa: A002
            squeeze_dims: Any = None) -> Tensor:
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


# --- Transpose / ConjugateTranspose / InvertPermutation / ReverseV2 ---------------------
def _infer_transpose(op: Operation) -> list:
    x, perm_t = op.inputs
    _require_index_dtype(perm_t, "perm", op.type)
    _require_rank(perm_t, (1,), "perm", op.type)
    perm = _partial_list(perm_t)
    dims = x.shape.as_tuple()
    if perm is None:
        return [(x.dtype, TensorShape(None if dims is None else [None] * len(dims)))]
    if dims is not None and len(perm) != len(dims):
        raise ValueError(f"transpose expects a permutation of size {len(dims)} (the rank "
                         f"of the input), got {perm}")
    if None not in perm and sorted(perm) != list(builtins.range(len(perm))):
        raise ValueError(f"{perm} is not a valid permutation of 0..{len(perm) - 1}")
    if dims is None:
        return [(x.dtype, TensorShape([None] * len(perm)))]
    return [(x.dtype, TensorShape([None if p is None else dims[p] for p in perm]))]


def _transpose_kernel(ctx: Any, attrs: dict) -> Any:
    transpose_ = ctx.xp.transpose
    return lambda x, perm: transpose_(x, perm.tolist())


def _conjugate_transpose_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    return lambda x, perm: xp.conj(xp.transpose(x, perm.tolist()))


def _transpose_grad(op: Operation, grad: Tensor) -> list:
    inverse = invert_permutation(op.inputs[1])
    return [apply_op(op.type, [grad, inverse]), None]


registry.register(registry.OpDef("Transpose", _infer_transpose, _transpose_kernel,
                                 _transpose_grad, foldable=True))
registry.register(registry.OpDef("ConjugateTranspose", _infer_transpose,
                                 _conjugate_transpose_kernel, _transpose_grad))


def _infer_invert_permutation(op: Operation) -> list:
    x = op.inputs[0]
    _require_index_dtype(x, "x", "InvertPermutation")
    _require_rank(x, (1,), "x", "InvertPermutation")
    return [(x.dtype, x.shape)]


def _invert_permutation_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp

    def invert(p: Any) -> Any:
        if sorted(p.tolist()) != list(builtins.range(p.size)):
            raise ValueError(f"{p.tolist()} is not a permutation of 0..{p.size - 1}")
        out = xp.empty_like(p)
        out[p] = xp.arange(p.size, dtype=p.dtype)
        return out

    return invert


registry.register(registry.OpDef("InvertPermutation", _infer_invert_permutation,
                                 _invert_permutation_kernel, registry.NOT_DIFFERENTIABLE,
                                 foldable=True))


def invert_permutation(x: Any, name: str | None = None) -> Tensor:
    """The inverse permutation ``y`` of ``x``: ``y[x[i]] = i``."""
    return apply_op("InvertPermutation", [_int_tensor(x)], name=name)


def transpose(a: Any, perm: Any = None, name: str = "transpose",
              conjugate: bool = False) -> Tensor:
    """Permutes the dimensions of ``a`` (reverses them when ``perm`` is ``None``).

    Args:
        a: a tensor.
        perm: a permutation of ``range(rank(a))``.
        name: the op name.
        conjugate: also conjugate complex values (``tf.math.conj(tf.transpose(a))``).
    """
    a = convert_to_tensor(a)
    if perm is None:
        if a.shape.rank is not None:
            perm = constant(list(builtins.range(a.shape.rank - 1, -1, -1)), dtype=dtypes.int32)
        else:
            perm = reverse(range_(rank(a)), [0])
    op_type = "ConjugateTranspose" if conjugate and a.dtype.is_complex else "Transpose"
    return apply_op(op_type, [a, _int_tensor(perm)], name=name)


def _infer_reverse(op: Operation) -> list:
    x, axis_t = op.inputs
    _require_index_dtype(axis_t, "axis", "ReverseV2")
    _require_rank(axis_t, (1,), "axis", "ReverseV2")
    axes = _partial_list(axis_t)
    rank = x.shape.rank
    if axes is not None and rank is not None and None not in axes:
        normalized = [normalize_axis(a, rank, "ReverseV2") for a in axes]
        if len(set(normalized)) != len(normalized):
            raise ValueError(f"axis {axes} of 'ReverseV2' lists a dimension twice")
    return [(x.dtype, x.shape)]


def _reverse_kernel(ctx: Any, attrs: dict) -> Any:
    flip = ctx.xp.flip
    return lambda x, axis: flip(x, axis=builtins.tuple(axis.tolist()))


def _reverse_grad(op: Operation, grad: Tensor) -> list:
    return [reverse(grad, op.inputs[1]), None]


registry.register(registry.OpDef("ReverseV2", _infer_reverse, _reverse_kernel,
                                 _reverse_grad, foldable=True))


def reverse(tensor: Any, axis: Any, name: str | None = None) -> Tensor:
    """Reverses ``tensor`` along each dimension listed in ``axis``."""
    if isinstance(axis, (int, np.integer)):
        axis = [axis]
    return apply_op("ReverseV2", [convert_to_tensor(tensor), _int_tensor(axis)], name=name)


# --- ConcatV2 / Pack / Unpack / Split / SplitV -------------------------------------------
def _merge_dims(shapes: Sequence[TensorShape], skip: int | None, op_type: str) -> list:
    """Merges same-rank shapes dimension by dimension (except ``skip``)."""
    out = list(shapes[0].as_tuple())
    for s in shapes[1:]:
        for i, d in enumerate(s.as_tuple()):
            if i == skip or d is None:
                continue
            if out[i] is not None and out[i] != d:
                raise ValueError(f"Dimension {i} in both shapes must be equal, but are "
                                 f"{out[i]} and {d}. Shapes are {shapes[0]} and {s} "
                                 f"(in '{op_type}')")
            out[i] = d
    return out


def _common_rank(shapes: Sequence[TensorShape], op_type: str) -> int | None:
    rank = None
    for s in shapes:
        if s.rank is None:
            continue
        if rank is not None and s.rank != rank:
            raise ValueError(f"Shape must be rank {rank} but is rank {s.rank} (the inputs "
                             f"of '{op_type}' have shapes "
                             + ", ".join(str(t) for t in shapes) + ")")
        rank = s.rank
    return rank


def _infer_concat(op: Operation) -> list:
    values, axis_t = op.inputs[:-1], op.inputs[-1]
    dtype = require_same_dtype(_Inputs(values, "ConcatV2"))
    _require_index_dtype(axis_t, "axis", "ConcatV2")
    _require_rank(axis_t, (0,), "axis", "ConcatV2")
    shapes = [t.shape for t in values]
    rank = _common_rank(shapes, "ConcatV2")
    if rank is None:
        return [(dtype, TensorShape(None))]
    if rank == 0:
        raise ValueError("Can't concatenate scalars (use tf.stack instead)")
    axis = _static_axis(axis_t, rank, "ConcatV2")
    known = [s for s in shapes if s.rank is not None]
    if axis is None:
        return [(dtype, TensorShape([None] * rank))]
    out = _merge_dims(known, axis, "ConcatV2")
    sizes = [s.as_tuple()[axis] if s.rank is not None else None for s in shapes]
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
    axis = _static_axis(axis_t, rank_, "ConcatV2")
    if axis is not None and rank_ is not None:
        sizes = [t.shape.as_tuple()[axis] if t.shape.rank is not None else None
                 for t in values]
        if None not in sizes:
            size_splits = constant(sizes, dtype=dtypes.int32)
        else:
            size_splits = stack([shape(t)[axis] for t in values])
    else:
        # The axis is only known when the step runs: normalize it there.
        from .math import floormod  # noqa: PLC0415 - math builds on this module
        axis32 = axis_t if axis_t.dtype == dtypes.int32 else _cast(axis_t, dtypes.int32)
        axis_nn = floormod(axis32, rank(values[0]))
        size_splits = stack([gather(shape(t), axis_nn) for t in values])
    return split(grad, size_splits, axis=axis_t, num=len(values)) + [None]


registry.register(registry.OpDef("ConcatV2", _infer_concat, _concat_kernel, _concat_grad,
                                 foldable=True))


def _cast(x: Tensor, dtype: Any) -> Tensor:
    from .math import cast  # noqa: PLC0415 - math builds on this module
    return cast(x, dtype)


def concat(values: Sequence[Any], axis: Any, name: str = "concat") -> Tensor:
    """Concatenates tensors along dimension ``axis``.

    Args:
        values: a list of tensors of one dtype and rank, equal in every dimension but
            ``axis``.
        axis: the dimension (negative counts from the end).
        name: the op name.

    Raises:
        ValueError: ranks or dimensions differ, or ``axis`` is out of range.
    """
    if not isinstance(values, (list, builtins.tuple)):
        values = [values]
    values = convert_inputs(list(values))
    axis_t = _int_tensor(axis)
    if len(values) == 1:
        # TF1 returns the single input itself, after checking the axis.
        rank_ = values[0].shape.rank
        axis_value = _partial_int(axis_t)
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


registry.register(registry.OpDef("Pack", _infer_pack, _pack_kernel, _pack_grad,
                                 foldable=True))


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
        raise ValueError(f"Cannot unpack dimension {axis} of size {dims[axis]} into {num} "
                         "tensors")
    out = TensorShape(dims[:axis] + dims[axis + 1:])
    return [(x.dtype, out)] * num


def _unpack_kernel(ctx: Any, attrs: dict) -> Any:
    moveaxis = ctx.xp.moveaxis
    num, axis = attrs["num"], attrs["axis"]

    def unpack(x: Any) -> Any:
        if x.shape[axis] != num:
            raise ValueError(f"Input of Unpack has size {x.shape[axis]} along axis {axis}, "
                             f"expected {num}")
        moved = moveaxis(x, axis, 0) if axis not in (0, -x.ndim) else x
        return moved[0] if num == 1 else builtins.tuple(moved)

    return unpack


def _unpack_grad(op: Operation, *grads: Tensor) -> list:
    return [stack(list(grads), axis=op.attrs["axis"])]


registry.register(registry.OpDef("Unpack", _infer_unpack, _unpack_kernel, _unpack_grad,
                                 foldable=True))


def unstack(value: Any, num: int | None = None, axis: int = 0,
            name: str = "unstack") -> list[Tensor]:
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
    return list(apply_op_n("Unpack", [value], {"num": int(num), "axis": int(axis)},
                           name=name).outputs)


def _infer_split(op: Operation) -> list:
    axis_t, x = op.inputs
    num = op.attrs["num_split"]
    _require_index_dtype(axis_t, "axis", "Split")
    dims = x.shape.as_tuple()
    if dims is None:
        return [(x.dtype, TensorShape(None))] * num
    axis = _static_axis(axis_t, len(dims), "Split")
    if axis is None:
        return [(x.dtype, TensorShape([None] * len(dims)))] * num
    out = list(dims)
    if dims[axis] is not None:
        if dims[axis] % num:
            raise ValueError(f"Dimension size must be evenly divisible by {num} but is "
                             f"{dims[axis]} (dimension {axis} of 'Split')")
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


registry.register(registry.OpDef("Split", _infer_split, _split_kernel, _split_grad,
                                 foldable=True))


def _infer_split_v(op: Operation) -> list:
    x, sizes_t, axis_t = op.inputs
    num = op.attrs["num_split"]
    _require_index_dtype(sizes_t, "size_splits", "SplitV")
    _require_index_dtype(axis_t, "axis", "SplitV")
    _require_rank(sizes_t, (1,), "size_splits", "SplitV")
    dims = x.shape.as_tuple()
    sizes = _partial_list(sizes_t)
    if sizes is not None and len(sizes) != num:
        raise ValueError(f"size_splits has {len(sizes)} entries, expected num_split={num}")
    if dims is None:
        return [(x.dtype, TensorShape(None))] * num
    axis = _static_axis(axis_t, len(dims), "SplitV")
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
                raise ValueError(f"size_splits {sizes} add up to more than dimension "
                                 f"{axis} of size {total}")
            sizes = [total - known if s == -1 else s for s in sizes]
        elif known != total:
            raise ValueError(f"size_splits {sizes} must add up to dimension {axis} of size "
                             f"{total} of the value being split")
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
            raise ValueError(f"size_splits {sizes} do not add up to {total}, the size of "
                             f"dimension {a} of the value being split")
        cuts, at = [], 0
        for s in sizes[:-1]:
            at += s
            cuts.append(at)
        parts = split_(x, cuts, axis=a)
        return parts[0] if num == 1 else builtins.tuple(parts)

    return split_v


def _split_v_grad(op: Operation, *grads: Tensor) -> list:
    return [concat(list(grads), op.inputs[2]), None, None]


registry.register(registry.OpDef("SplitV", _infer_split_v, _split_v_kernel, _split_v_grad,
                                 foldable=True))


def split(value: Any, num_or_size_splits: Any, axis: Any = 0, num: int | None = None,
          name: str = "split") -> list[Tensor]:
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
    axis_t = _int_tensor(axis)
    if isinstance(num_or_size_splits, (numbers.Integral,)) and not isinstance(
            num_or_size_splits, bool):
        n = int(num_or_size_splits)
        if n < 1:
            raise ValueError(f"num_or_size_splits must be >= 1, got {n}")
        return list(apply_op_n("Split", [axis_t, value], {"num_split": n},
                               name=name).outputs)
    sizes = _int_tensor(num_or_size_splits)
    if num is None:
        length = sizes.shape.as_tuple()[0] if sizes.shape.rank == 1 else None
        if length is None:
            raise ValueError(f"Cannot infer num from shape {sizes.shape}")
        num = length
    return list(apply_op_n("SplitV", [value, sizes, axis_t], {"num_split": int(num)},
                           name=name).outputs)


# --- Slice / StridedSlice / StridedSliceGrad, and Tensor.__getitem__ ----------------------
def _infer_slice(op: Operation) -> list:
    x, begin_t, size_t = op.inputs
    for t, what in ((begin_t, "begin"), (size_t, "size")):
        _require_index_dtype(t, what, "Slice")
        _require_rank(t, (1,), what, "Slice")
    dims = x.shape.as_tuple()
    begin, sizes = _partial_list(begin_t), _partial_list(size_t)
    n = len(begin) if begin is not None else len(sizes) if sizes is not None else None
    if dims is None and n is None:
        return [(x.dtype, TensorShape(None))]
    rank_ = len(dims) if dims is not None else n
    begin = begin if begin is not None else [None] * rank_
    sizes = sizes if sizes is not None else [None] * rank_
    if len(begin) != rank_ or len(sizes) != rank_:
        raise ValueError(f"Expected begin and size arguments to be 1-D tensors of size "
                         f"{rank_}, but got {len(begin)} and {len(sizes)} elements")
    dims = dims if dims is not None else (None,) * rank_
    out = []
    for i, (d, b, s) in enumerate(zip(dims, begin, sizes, strict=True)):
        if b is not None and (b < 0 or (d is not None and b > d)):
            raise ValueError(f"Expected begin[{i}] in [0, {d}], but got {b}")
        if s is not None and s < -1:
            raise ValueError(f"Expected size[{i}] >= -1, but got {s}")
        if s is not None and s >= 0 and b is not None and d is not None and b + s > d:
            raise ValueError(f"Expected size[{i}] in [0, {d - b}], but got {s}")
        if s == -1:
            out.append(d - b if d is not None and b is not None else None)
        else:
            out.append(s)
    return [(x.dtype, TensorShape(out))]


def _slice_kernel(ctx: Any, attrs: dict) -> Any:
    asarray = ctx.xp.asarray

    def slice_op(x: Any, begin: Any, size: Any) -> Any:
        key = []
        for i, (b, s) in enumerate(zip(begin.tolist(), size.tolist(), strict=True)):
            end = x.shape[i] if s == -1 else b + s
            if b < 0 or s < -1 or end > x.shape[i]:
                raise ValueError(f"Expected begin[{i}]={b} and size[{i}]={s} to fit in "
                                 f"dimension {i} of size {x.shape[i]}")
            key.append(builtins.slice(b, end))
        return asarray(x[builtins.tuple(key)])

    return slice_op


def _slice_grad(op: Operation, grad: Tensor) -> list:
    # Pad the gradient back: `begin` zeros before, the rest after (TF's _SliceGrad).
    from .math import subtract  # noqa: PLC0415 - math builds on this module
    x, begin = op.inputs[0], op.inputs[1]
    dtype = begin.dtype
    after = subtract(subtract(_shape_of(x, dtype), begin), _shape_of(op.outputs[0], dtype))
    return [pad(grad, stack([begin, after], axis=1)), None, None]


registry.register(registry.OpDef("Slice", _infer_slice, _slice_kernel, _slice_grad,
                                 foldable=True))


def slice_(input_: Any, begin: Any, size: Any, name: str | None = None) -> Tensor:
    """Extracts ``input_[begin[i] : begin[i] + size[i]]`` along every dimension ``i``
    (``tf.slice``; a size of -1 takes the rest of that dimension)."""
    input_ = convert_to_tensor(input_)
    begin_t = _int_tensor(begin)
    size_t = _int_tensor(size)
    if begin_t.dtype != size_t.dtype:
        begin_t, size_t = _same_index_dtype([begin_t, size_t])
    return apply_op("Slice", [input_, begin_t, size_t], name=name)


slice_.__name__ = "slice"


def _same_index_dtype(tensors: Sequence[Tensor]) -> list[Tensor]:
    """Index tensors in one dtype (int64 if any is int64), as TF promotes them."""
    want = dtypes.int64 if any(t.dtype == dtypes.int64 for t in tensors) else dtypes.int32
    out = []
    for t in tensors:
        if t.dtype != want:
            value = constant_value(t) if t.op.type == "Const" else None
            t = constant(value, dtype=want) if value is not None else _cast(t, want)
        out.append(t)
    return out


_UNKNOWN = object()  # a slice bound not known at build time


def _slice_key(begin: Sequence, end: Sequence, strides: Sequence, masks: tuple) -> tuple:
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
            key.append(builtins.slice(None if begin_mask & bit else b,
                                      None if end_mask & bit else e, s))
    return builtins.tuple(key)


def _masks(attrs: dict) -> tuple:
    return (attrs["begin_mask"], attrs["end_mask"], attrs["ellipsis_mask"],
            attrs["new_axis_mask"], attrs["shrink_axis_mask"])


def _constant_slice_key(op: Operation) -> tuple | None:
    values = [constant_value(t) for t in op.inputs[1:4]]
    if any(v is None for v in values):
        return None
    return _slice_key(*(v.tolist() for v in values), _masks(op.attrs))


def _sliced_shape(dims: tuple | None, key: tuple) -> TensorShape:
    """The static shape of ``x[key]`` for ``x`` of static dims ``dims``; key entries may
    hold ``_UNKNOWN`` bounds. Raises ``ValueError`` for indices known to be out of range."""
    if Ellipsis not in key and dims is None:
        return TensorShape(None)
    real = sum(1 for k in key if k is not None and k is not Ellipsis)
    if dims is None:
        return TensorShape(None)
    if real > len(dims):
        raise ValueError(f"Index out of range: {real} indices for a tensor of rank "
                         f"{len(dims)}")
    if Ellipsis in key:
        at = key.index(Ellipsis)
        key = key[:at] + (builtins.slice(None),) * (len(dims) - real) + key[at + 1:]
    else:
        key = key + (builtins.slice(None),) * (len(dims) - real)
    out: list[int | None] = []
    axis = 0
    for k in key:
        if k is None:
            out.append(1)
            continue
        d = dims[axis]
        if isinstance(k, builtins.slice):
            if k.step is _UNKNOWN or k.step is None:
                step = None if k.step is _UNKNOWN else 1
            else:
                step = k.step
            if step == 0:
                raise ValueError(f"Strides of a slice must be non-zero (dimension {axis})")
            if d is None or step is None or k.start is _UNKNOWN or k.stop is _UNKNOWN:
                full = k.start is None and k.stop is None and step in (1, -1)
                out.append(d if full else None)
            else:
                out.append(len(builtins.range(*builtins.slice(k.start, k.stop, step)
                                              .indices(d))))
        elif k is not _UNKNOWN and d is not None and not -d <= k < d:
            raise ValueError(f"slice index {k} of dimension {axis} out of bounds (size "
                             f"{d})")
        axis += 1
    return TensorShape(out)


def _infer_strided_slice(op: Operation, x: Tensor | None = None) -> TensorShape:
    """The shape of ``x`` sliced by ``op``'s spec (inputs 1-3 and masks); validates
    the spec alone when ``x`` is ``None``."""
    begin_t, end_t, strides_t = op.inputs[1:4]
    specs = []
    for t, what in ((begin_t, "begin"), (end_t, "end"), (strides_t, "strides")):
        _require_index_dtype(t, what, op.type)
        _require_rank(t, (1,), what, op.type)
        specs.append(_partial_list(t))
    lengths = {len(v) for v in specs if v is not None}
    if len(lengths) > 1:
        raise ValueError(f"begin, end and strides of '{op.type}' must have one length, "
                         f"got {[len(v) for v in specs if v is not None]}")
    masks = _masks(op.attrs)
    if masks[2] & (masks[2] - 1):
        raise ValueError("Multiple ellipses in slice spec not allowed")
    if not lengths:
        return TensorShape(None)
    n = lengths.pop()
    begin, end, strides = ([_UNKNOWN if v is None else v for v in spec] if spec is not None
                           else [_UNKNOWN] * n for spec in specs)
    return _sliced_shape(x.shape.as_tuple() if x is not None else None,
                         _slice_key(begin, end, strides, masks))


def _infer_strided_slice_op(op: Operation) -> list:
    x = op.inputs[0]
    return [(x.dtype, _infer_strided_slice(op, x))]


def _strided_slice_kernel(ctx: Any, attrs: dict) -> Any:
    asarray, masks = ctx.xp.asarray, _masks(attrs)
    # The spec is almost always constant: the executor passes the same read-only
    # arrays every step, so the numpy key is built once (an atomic tuple swap keeps
    # this safe when several steps run at once).
    memo: list = [(None, None, None, None)]

    def strided_slice_op(x: Any, begin: Any, end: Any, strides: Any) -> Any:
        b, e, s, key = memo[0]
        if begin is not b or end is not e or strides is not s:
            key = _slice_key(begin.tolist(), end.tolist(), strides.tolist(), masks)
            if not any(getattr(getattr(a, "flags", None), "writeable", True)
                       for a in (begin, end, strides)):
                memo[0] = (begin, end, strides, key)
        return asarray(x[key])

    return strided_slice_op


def _strided_slice_grad(op: Operation, grad: Tensor) -> list:
    x, begin, end, strides = op.inputs
    dx = apply_op("StridedSliceGrad", [_shape_of(x, begin.dtype), begin, end, strides, grad],
                  dict(op.attrs))
    return [dx, None, None, None]


registry.register(registry.OpDef("StridedSlice", _infer_strided_slice_op,
                                 _strided_slice_kernel, _strided_slice_grad, foldable=True))


def _infer_strided_slice_grad(op: Operation) -> list:
    shape_t, dy = op.inputs[0], op.inputs[4]
    _require_index_dtype(shape_t, "shape", "StridedSliceGrad")
    _infer_strided_slice(op)  # validates the spec
    return [(dy.dtype, TensorShape(_partial_list(shape_t)))]


def _strided_slice_grad_kernel(ctx: Any, attrs: dict) -> Any:
    zeros_, masks = ctx.xp.zeros, _masks(attrs)

    def strided_slice_grad(shape_: Any, begin: Any, end: Any, strides: Any, dy: Any) -> Any:
        out = zeros_(shape_.tolist(), dtype=dy.dtype)
        out[_slice_key(begin.tolist(), end.tolist(), strides.tolist(), masks)] = dy
        return out

    return strided_slice_grad


def _strided_slice_grad_grad(op: Operation, grad: Tensor) -> list:
    _, begin, end, strides, _ = op.inputs
    ddy = apply_op("StridedSlice", [grad, begin, end, strides], dict(op.attrs))
    return [None, None, None, None, ddy]


registry.register(registry.OpDef("StridedSliceGrad", _infer_strided_slice_grad,
                                 _strided_slice_grad_kernel, _strided_slice_grad_grad,
                                 foldable=True))


def strided_slice(input_: Any, begin: Any, end: Any, strides: Any = None,
                  begin_mask: int = 0, end_mask: int = 0, ellipsis_mask: int = 0,
                  new_axis_mask: int = 0, shrink_axis_mask: int = 0, var: Any = None,
                  name: str | None = None) -> Tensor:
    """Python-style strided slicing, ``input_[begin:end:strides]`` per dimension, with
    TF's masks (bit ``i`` refers to entry ``i`` of the spec):

    * ``begin_mask``/``end_mask``: ignore ``begin[i]``/``end[i]`` (slice from the start /
      to the end);
    * ``ellipsis_mask``: entry ``i`` is ``...``;
    * ``new_axis_mask``: entry ``i`` inserts a dimension of size 1 (``tf.newaxis``);
    * ``shrink_axis_mask``: entry ``i`` is the single index ``begin[i]`` (removing
      the dimension).

    ``tensor[...]`` builds this op.
    """
    input_ = convert_to_tensor(input_)
    begin_t, end_t = _int_tensor(begin), _int_tensor(end)
    strides_t = ones_like(begin_t) if strides is None else _int_tensor(strides)
    begin_t, end_t, strides_t = _same_index_dtype([begin_t, end_t, strides_t])
    attrs = {"begin_mask": int(begin_mask), "end_mask": int(end_mask),
             "ellipsis_mask": int(ellipsis_mask), "new_axis_mask": int(new_axis_mask),
             "shrink_axis_mask": int(shrink_axis_mask)}
    return apply_op("StridedSlice", [input_, begin_t, end_t, strides_t], attrs, name=name)


_INDEX_HELP = ("Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and "
               "scalar tf.int32/tf.int64 tensors are valid indices")


def _check_index(value: Any) -> None:
    if isinstance(value, (numbers.Integral, np.integer)):
        return
    if isinstance(value, Tensor) and value.dtype in _INDEX_DTYPES and \
            value.shape.rank in (None, 0):
        return
    raise TypeError(f"{_INDEX_HELP}, got {value!r}")


def _pack_indices(values: list) -> Tensor:
    if all(isinstance(v, (numbers.Integral, np.integer)) for v in values):
        return _int_tensor([int(v) for v in values])
    dtype = dtypes.int64 if any(isinstance(v, Tensor) and v.dtype == dtypes.int64
                                for v in values) else dtypes.int32
    parts = []
    for v in values:
        if isinstance(v, Tensor):
            parts.append(v if v.dtype == dtype else _cast(v, dtype))
        else:
            parts.append(constant(int(v), dtype=dtype))
    return stack(parts)


def _getitem(tensor: Any, key: Any) -> Tensor:
    """``tensor[key]`` (TF's ``_slice_helper``): ints, slices with steps, ``...``,
    ``tf.newaxis`` and scalar integer tensors, as a ``StridedSlice``."""
    if not isinstance(key, builtins.tuple):
        key = (key,)
    begin: list = []
    end: list = []
    strides: list = []
    begin_mask = end_mask = ellipsis_mask = new_axis_mask = shrink_mask = 0
    for i, s in enumerate(key):
        bit = 1 << i
        if isinstance(s, builtins.slice):
            for part in (s.start, s.stop, s.step):
                if part is not None:
                    _check_index(part)
            if s.start is None:
                begin.append(0)
                begin_mask |= bit
            else:
                begin.append(s.start)
            if s.stop is None:
                end.append(0)
                end_mask |= bit
            else:
                end.append(s.stop)
            strides.append(1 if s.step is None else s.step)
        elif s is Ellipsis:
            if ellipsis_mask:
                raise ValueError("Multiple ellipses in slice spec not allowed")
            begin.append(0)
            end.append(0)
            strides.append(1)
            ellipsis_mask |= bit
        elif s is None:
            begin.append(0)
            end.append(0)
            strides.append(1)
            new_axis_mask |= bit
        else:
            _check_index(s)
            begin.append(s)
            # The kernel ignores `end` on shrunk axes; s + 1 keeps TF's graph shape.
            end.append(int(s) + 1 if not isinstance(s, Tensor) else s)
            strides.append(1)
            shrink_mask |= bit
    graph = get_default_graph()
    with graph.name_scope("strided_slice") as scope:
        if begin:
            begin_t, end_t, strides_t = _same_index_dtype(
                [_pack_indices(begin), _pack_indices(end), _pack_indices(strides)])
        else:
            begin_t = end_t = strides_t = constant([], dtype=dtypes.int32)
        return strided_slice(tensor, begin_t, end_t, strides_t, begin_mask, end_mask,
                             ellipsis_mask, new_axis_mask, shrink_mask, name=scope)


register_operator("getitem", _getitem)


# --- Pad / PadV2 / MirrorPad / MirrorPadGrad, Tile ----------------------------------------
def _padded_dims(op: Operation, sign: int) -> list:
    """Output dims of padding (``sign=1``) or un-padding (``sign=-1``) input 0."""
    x, paddings_t = op.inputs[0], op.inputs[1]
    _require_index_dtype(paddings_t, "paddings", op.type)
    dims = x.shape.as_tuple()
    pshape = paddings_t.shape.as_tuple()
    if pshape is not None and (len(pshape) != 2 or pshape[1] not in (None, 2) or (
            dims is not None and pshape[0] not in (None, len(dims)))):
        rank_ = "?" if dims is None else len(dims)
        raise ValueError(f"paddings must be a matrix of shape [{rank_}, 2], got "
                         f"{paddings_t.shape}")
    pads = _partial(paddings_t)
    if dims is None:
        return None if pads is None else [None] * pads.shape[0]
    if pads is None:
        return [None] * len(dims)
    out = []
    mode = op.attrs.get("mode", "CONSTANT")
    for i, (d, (before, after)) in enumerate(zip(dims, pads.tolist(), strict=True)):
        for p in (before, after):
            if p is not None and p < 0:
                raise ValueError(f"paddings must be non-negative, got {p} for dimension {i}")
            limit = None if d is None or sign < 0 else d - 1 if mode == "REFLECT" else \
                d if mode == "SYMMETRIC" else None
            if p is not None and limit is not None and p > limit:
                raise ValueError(f"paddings of dimension {i} must be no greater than "
                                 f"{limit} in {mode} mode (the dimension has size {d}), "
                                 f"got {p}")
        if d is None or before is None or after is None:
            out.append(None)
        else:
            out.append(d + sign * (before + after))
    return out


def _infer_pad(op: Operation) -> list:
    x = op.inputs[0]
    if op.type == "PadV2":
        _require_rank(op.inputs[2], (0,), "constant_values", "PadV2")
        if op.inputs[2].dtype != x.dtype:
            raise TypeError(f"constant_values of dtype {op.inputs[2].dtype.name} do not "
                            f"match the input's dtype {x.dtype.name}")
    return [(x.dtype, TensorShape(_padded_dims(op, 1)))]


def _pad_kernel(ctx: Any, attrs: dict) -> Any:
    pad_ = ctx.xp.pad
    return lambda x, paddings, value=0: pad_(x, paddings.tolist(), mode="constant",
                                             constant_values=value)


def _pad_grad(op: Operation, grad: Tensor) -> list:
    x, paddings = op.inputs[0], op.inputs[1]
    begin = paddings[:, 0]
    dx = slice_(grad, begin, _shape_of(x, paddings.dtype))
    return [dx, None] + [None] * (len(op.inputs) - 2)


registry.register(registry.OpDef("Pad", _infer_pad, _pad_kernel, _pad_grad, foldable=True))
registry.register(registry.OpDef("PadV2", _infer_pad, _pad_kernel, _pad_grad,
                                 foldable=True))


def _mirror_pad_kernel(ctx: Any, attrs: dict) -> Any:
    pad_, mode = ctx.xp.pad, attrs["mode"].lower()
    return lambda x, paddings: pad_(x, paddings.tolist(), mode=mode)


def _mirror_pad_grad(op: Operation, grad: Tensor) -> list:
    dx = apply_op("MirrorPadGrad", [grad, op.inputs[1]], {"mode": op.attrs["mode"]})
    return [dx, None]


registry.register(registry.OpDef("MirrorPad", _infer_pad, _mirror_pad_kernel,
                                 _mirror_pad_grad, foldable=True))


def _infer_mirror_pad_grad(op: Operation) -> list:
    return [(op.inputs[0].dtype, TensorShape(_padded_dims(op, -1)))]


def _mirror_pad_grad_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    edge = 1 if attrs["mode"] == "REFLECT" else 0  # REFLECT mirrors around the edge

    def mirror_pad_grad(dy: Any, paddings: Any) -> Any:
        # Fold each padded border back onto the cells it copied, one axis at a time.
        out = dy
        for axis, (before, after) in enumerate(paddings.tolist()):
            if not before and not after:
                continue
            moved = xp.moveaxis(out, axis, 0)
            n = moved.shape[0] - before - after
            core = moved[before:before + n].copy()
            if before:
                core[edge:edge + before] += moved[:before][::-1]
            if after:
                core[n - edge - after:n - edge] += moved[before + n:][::-1]
            out = xp.moveaxis(core, 0, axis)
        return out

    return mirror_pad_grad


def _mirror_pad_grad_grad(op: Operation, grad: Tensor) -> list:
    ddy = apply_op("MirrorPad", [grad, op.inputs[1]], {"mode": op.attrs["mode"]})
    return [ddy, None]


registry.register(registry.OpDef("MirrorPadGrad", _infer_mirror_pad_grad,
                                 _mirror_pad_grad_kernel, _mirror_pad_grad_grad,
                                 foldable=True))


def pad(tensor: Any, paddings: Any, mode: str = "CONSTANT", name: str | None = None,
        constant_values: Any = 0) -> Tensor:
    """Pads ``tensor``: ``paddings[i] = [before, after]`` elements around dimension ``i``.

    Args:
        tensor: the tensor to pad.
        paddings: an int ``[rank, 2]`` matrix.
        mode: ``"CONSTANT"`` (with ``constant_values``), ``"REFLECT"`` (mirror without
            the edge; pads must be smaller than the dimension) or ``"SYMMETRIC"``
            (mirror with the edge; pads at most the dimension). Case-insensitive.
        name: the op name.
        constant_values: the scalar to pad with in ``"CONSTANT"`` mode.
    """
    tensor = convert_to_tensor(tensor)
    paddings_t = _int_tensor(paddings)
    mode = str(mode).upper()
    if mode == "CONSTANT":
        if not isinstance(constant_values, Tensor) and np.all(
                np.asarray(constant_values) == 0):
            return apply_op("Pad", [tensor, paddings_t], name=name)
        value = convert_to_tensor(constant_values, dtype=tensor.dtype)
        return apply_op("PadV2", [tensor, paddings_t, value], name=name)
    if mode not in ("REFLECT", "SYMMETRIC"):
        raise ValueError(f"Unknown padding mode: {mode}")
    return apply_op("MirrorPad", [tensor, paddings_t], {"mode": mode}, name=name)


def _infer_tile(op: Operation) -> list:
    x, multiples_t = op.inputs
    _require_index_dtype(multiples_t, "multiples", "Tile")
    _require_rank(multiples_t, (1,), "multiples", "Tile")
    multiples = _partial_list(multiples_t)
    dims = x.shape.as_tuple()
    if dims is None:
        return [(x.dtype, TensorShape(None if multiples is None else [None] * len(multiples)))]
    if multiples is None:
        return [(x.dtype, TensorShape([None] * len(dims)))]
    if len(multiples) != len(dims):
        raise ValueError(f"Expected multiples argument to be a vector of length {len(dims)}"
                         f" (the input's rank), got {len(multiples)} elements")
    if any(m is not None and m < 0 for m in multiples):
        raise ValueError(f"Expected multiples to be non-negative, got {multiples}")
    return [(x.dtype, TensorShape([None if d is None or m is None else d * m
                                   for d, m in zip(dims, multiples, strict=True)]))]


def _tile_kernel(ctx: Any, attrs: dict) -> Any:
    tile_ = ctx.xp.tile
    return lambda x, multiples: tile_(x, multiples.tolist())


def _tile_grad(op: Operation, grad: Tensor) -> list:
    # Tile copies x m_i times along each axis i, so the gradient, reshaped to
    # [m0, d0, m1, d1, ...], sums over the m axes (SumToShape to [1, d0, 1, d1, ...]).
    x, multiples = op.inputs
    dims = _shape_of(x, multiples.dtype)
    split_shape = reshape(stack([multiples, dims], axis=1), [-1])
    target = reshape(stack([ones_like(multiples), dims], axis=1), [-1])
    summed = sum_to_shape(reshape(grad, split_shape), target)
    return [reshape(summed, dims), None]


registry.register(registry.OpDef("Tile", _infer_tile, _tile_kernel, _tile_grad,
                                 foldable=True))


def tile(input: Any, multiples: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """Repeats ``input`` ``multiples[i]`` times along each dimension ``i``."""
    return apply_op("Tile", [convert_to_tensor(input), _int_tensor(multiples)], name=name)


# --- GatherV2 / UnsortedSegmentSum, GatherNd / ScatterNd, boolean_mask -----------------
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
    _require_index_dtype(indices, "indices", "GatherV2")
    _require_index_dtype(axis_t, "axis", "GatherV2")
    _require_rank(axis_t, (0,), "axis", "GatherV2")
    if op.attrs["batch_dims"] != 0:
        raise ValueError("GatherV2 supports batch_dims=0 only")
    pdims, idims = params.shape.as_tuple(), indices.shape.as_tuple()
    if pdims is not None and not pdims:
        raise ValueError("params of 'GatherV2' must be at least 1-D, got a scalar")
    axis = _static_axis(axis_t, None if pdims is None else len(pdims), "GatherV2")
    if pdims is None or idims is None:
        return [(params.dtype, TensorShape(None))]
    if axis is None:
        return [(params.dtype, TensorShape([None] * (len(pdims) + len(idims) - 1)))]
    return [(params.dtype, TensorShape(pdims[:axis] + idims + pdims[axis + 1:]))]


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
    axis = _static_axis(axis_t, None if pdims is None else len(pdims), "GatherV2")
    if axis is not None:
        num = _shape_of(params, indices.dtype)[axis]
    if axis == 0:
        return [unsorted_segment_sum(grad, indices, num), None, None]
    if axis is None or pdims is None or idims is None:
        raise ValueError(f"The gradient of gather along a non-leading axis needs the "
                         f"ranks of params and indices and the axis at build time "
                         f"(got shapes {params.shape}, {indices.shape})")
    # Move the gathered dimensions to the front, segment-sum, and move back.
    p, k = len(pdims), len(idims)
    to_front = (list(builtins.range(axis, axis + k)) + list(builtins.range(axis))
                + list(builtins.range(axis + k, p + k - 1)))
    summed = unsorted_segment_sum(transpose(grad, to_front), indices, num)
    back = list(builtins.range(1, axis + 1)) + [0] + list(builtins.range(axis + 1, p))
    return [transpose(summed, back), None, None]


registry.register(registry.OpDef("GatherV2", _infer_gather, _gather_kernel, _gather_grad,
                                  foldable=True))


def gather(params: Any, indices: Any, validate_indices: Any = None,
           name: str | None = None, axis: Any = None, batch_dims: int = 0) -> Tensor:
    """Gathers slices of ``params`` along ``axis`` at ``indices``.

    The output shape is ``params.shape[:axis] + indices.shape + params.shape[axis+1:]``.
    An index outside ``[0, params.shape[axis])`` is an ``InvalidArgumentError`` when the
    step runs. The gradient with respect to ``params`` is a dense tensor (summed with
    ``unsorted_segment_sum``), never ``IndexedSlices``.
    """
    params = convert_to_tensor(params)
    indices = _int_tensor(indices)
    axis_t = _int_tensor(0 if axis is None else axis, dtype=indices.dtype)
    return apply_op("GatherV2", [params, indices, axis_t], {"batch_dims": int(batch_dims)},
                    name=name)


def _infer_unsorted_segment_sum(op: Operation) -> list:
    data, ids, num_t = op.inputs
    _require_index_dtype(ids, "segment_ids", "UnsortedSegmentSum")
    _require_index_dtype(num_t, "num_segments", "UnsortedSegmentSum")
    _require_rank(num_t, (0,), "num_segments", "UnsortedSegmentSum")
    ddims, idims = data.shape.as_tuple(), ids.shape.as_tuple()
    if ddims is None or idims is None:
        return [(data.dtype, TensorShape(None))]
    if len(idims) > len(ddims) or not TensorShape(ddims[:len(idims)]).is_compatible_with(
            TensorShape(idims)):
        raise ValueError(f"segment_ids shape {ids.shape} must be a prefix of data shape "
                         f"{data.shape}")
    return [(data.dtype, TensorShape([_partial_int(num_t)] + list(ddims[len(idims):])))]


def _unsorted_segment_sum_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp

    def unsorted_segment_sum_op(data: Any, ids: Any, num: Any) -> Any:
        n = num.item()
        if ids.size and bool((ids >= n).any()):
            raise IndexError(f"segment_ids {ids[ids >= n].reshape(-1)[0]} is not in "
                             f"[0, {n})")
        if ids.size and bool((ids < 0).any()):  # TF drops negative ids
            keep = ids >= 0
            ids, data = ids[keep], data[keep]
        out = xp.zeros((n,) + data.shape[ids.ndim:], dtype=data.dtype)
        xp.add.at(out, ids, data)
        return out

    return unsorted_segment_sum_op


def _unsorted_segment_sum_grad(op: Operation, grad: Tensor) -> list:
    return [gather(grad, op.inputs[1]), None, None]


registry.register(registry.OpDef("UnsortedSegmentSum", _infer_unsorted_segment_sum,
                                 _unsorted_segment_sum_kernel, _unsorted_segment_sum_grad,
                                 foldable=True))


def unsorted_segment_sum(data: Any, segment_ids: Any, num_segments: Any,
                         name: str | None = None) -> Tensor:
    """``out[i, ...] = sum of data[j..., ...] over j with segment_ids[j...] == i``.

    ``segment_ids`` has the shape of a prefix of ``data``'s; ids below zero are dropped,
    ids at or above ``num_segments`` are an error when the step runs.
    """
    ids = _int_tensor(segment_ids)
    return apply_op("UnsortedSegmentSum",
                    [convert_to_tensor(data), ids, _int_tensor(num_segments, ids.dtype)],
                    name=name)


def _infer_gather_nd(op: Operation) -> list:
    params, indices = op.inputs
    _require_index_dtype(indices, "indices", "GatherNd")
    pdims, idims = params.shape.as_tuple(), indices.shape.as_tuple()
    if idims is not None and not idims:
        raise ValueError("indices of 'GatherNd' must be at least 1-D")
    if idims is None or idims[-1] is None or pdims is None:
        return [(params.dtype, TensorShape(None))]
    k = idims[-1]
    if k > len(pdims):
        raise ValueError(f"indices.shape[-1] must be <= params.rank, but saw indices "
                         f"shape {indices.shape} and params shape {params.shape}")
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
    return [scatter_nd(indices, grad, _shape_of(params, indices.dtype)), None]


registry.register(registry.OpDef("GatherNd", _infer_gather_nd, _gather_nd_kernel,
                                 _gather_nd_grad, foldable=True))


def gather_nd(params: Any, indices: Any, name: str | None = None,
              batch_dims: int = 0) -> Tensor:
    """Gathers ``params[tuple(indices[..., :])]``: the last dimension of ``indices``
    indexes the leading dimensions of ``params``."""
    if batch_dims != 0:
        raise ValueError("gather_nd supports batch_dims=0 only")
    return apply_op("GatherNd", [convert_to_tensor(params), _int_tensor(indices)], name=name)


def _infer_scatter_nd(op: Operation) -> list:
    indices, updates, shape_t = op.inputs
    _require_index_dtype(indices, "indices", "ScatterNd")
    _require_index_dtype(shape_t, "shape", "ScatterNd")
    _require_rank(shape_t, (1,), "shape", "ScatterNd")
    out = _partial_list(shape_t)
    idims, udims = indices.shape.as_tuple(), updates.shape.as_tuple()
    if out is not None and idims is not None and idims and idims[-1] is not None \
            and udims is not None:
        k = idims[-1]
        want = TensorShape(list(idims[:-1]) + out[k:])
        if k > len(out) or not want.is_compatible_with(updates.shape):
            raise ValueError(f"updates shape {updates.shape} must be indices.shape[:-1] + "
                             f"shape[indices.shape[-1]:] = {want}")
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


registry.register(registry.OpDef("ScatterNd", _infer_scatter_nd, _scatter_nd_kernel,
                                 _scatter_nd_grad, foldable=True))


def scatter_nd(indices: Any, updates: Any, shape: Any, name: str | None = None) -> Tensor:
    """A zero tensor of ``shape`` with ``updates`` added at ``indices`` (duplicates sum)."""
    indices = _int_tensor(indices)
    return apply_op("ScatterNd",
                    [indices, convert_to_tensor(updates), _int_tensor(shape, indices.dtype)],
                    name=name)


def boolean_mask(tensor: Any, mask: Any, name: str = "boolean_mask",
                 axis: Any = None) -> Tensor:
    """The elements (or slices) of ``tensor`` where the boolean ``mask`` is true.

    With ``mask`` of rank K, dimensions ``axis..axis+K-1`` of ``tensor`` must match
    ``mask``'s; they are replaced by one dimension holding the selected entries
    (unknown until the step runs). The gradient flows through a gather (dense).

    Raises:
        ValueError: the mask is a scalar, has unknown rank, or does not match.
    """
    graph = get_default_graph()
    with graph.name_scope(name):
        tensor = convert_to_tensor(tensor, name="tensor")
        mask = convert_to_tensor(mask, name="mask")
        if mask.dtype != dtypes.bool:
            raise TypeError(f"mask must be a bool tensor, got {mask.dtype.name}")
        k = mask.shape.rank
        if k is None:
            raise ValueError("Number of mask dimensions must be specified, even if some "
                             "dimensions are None. E.g. shape=[None] is ok, but "
                             "shape=None is not.")
        if k == 0:
            raise ValueError("mask cannot be scalar.")
        rank_ = tensor.shape.rank
        axis = 0 if axis is None else int(axis)
        if rank_ is not None:
            axis = normalize_axis(axis, rank_, "boolean_mask")
            if axis + k > rank_ or not tensor.shape[axis:axis + k].is_compatible_with(
                    mask.shape):
                raise ValueError(f"Shapes {tensor.shape[axis:axis + k]} and {mask.shape} "
                                 f"are incompatible (tensor dims {axis}..{axis + k - 1} "
                                 f"against the mask)")
        dims = _shape_of(tensor)
        flat_shape = concat([dims[:axis], [-1], dims[axis + k:]], 0)
        flat = reshape(tensor, flat_shape)
        from .math import where  # noqa: PLC0415 - math builds on this module
        indices = squeeze(where(reshape(mask, [-1])), axis=[1])
        return gather(flat, indices, axis=axis)


# --- Range / OneHot ---------------------------------------------------------------------
def _range_length(start: Any, limit: Any, delta: Any, integral: bool) -> int:
    """TF's Range size, computed in the element type (plain Python or 0-d arrays)."""
    if delta == 0:
        raise ValueError("Requires delta != 0")
    if delta > 0 and start > limit:
        raise ValueError(f"Requires start <= limit when delta > 0: {start}/{limit}")
    if delta < 0 and start < limit:
        raise ValueError(f"Requires start >= limit when delta < 0: {start}/{limit}")
    if integral:
        return int((abs(limit - start) + abs(delta) - 1) // abs(delta))
    return int(abs((limit - start) / delta) // 1 + (abs((limit - start) / delta) % 1 > 0))


def _infer_range(op: Operation) -> list:
    start, limit, delta = op.inputs
    dtype = require_same_dtype(op)
    if not (dtype.is_integer or dtype.is_floating):
        raise TypeError(f"Range needs integer or float inputs, got {dtype.name}")
    for t, what in ((start, "start"), (limit, "limit"), (delta, "delta")):
        _require_rank(t, (0,), what, "Range")
    values = [constant_value(t) for t in op.inputs]
    if any(v is None for v in values):
        return [(dtype, TensorShape([None]))]
    n = _range_length(*(np.asarray(v).reshape(()) for v in values), dtype.is_integer)
    return [(dtype, TensorShape([n]))]


def _range_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp

    def range_op(start: Any, limit: Any, delta: Any) -> Any:
        integral = start.dtype.kind in "iu"
        n = _range_length(start, limit, delta, integral)
        if integral:
            return xp.arange(start.item(), limit.item(), delta.item(), dtype=start.dtype)
        return start + xp.arange(n, dtype=start.dtype) * delta  # TF's size, in float

    return range_op


registry.register(registry.OpDef("Range", _infer_range, _range_kernel,
                                 registry.NOT_DIFFERENTIABLE, foldable=True))

_RANGE_DTYPES = (dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64)


def range_(start: Any, limit: Any = None, delta: Any = 1, dtype: Any = None,
           name: str = "range") -> Tensor:
    """A 1-D tensor ``[start, start + delta, ...]`` up to (excluding) ``limit``
    (``tf.range``; ``tf.range(n)`` counts from 0).

    The dtype is ``dtype`` if given, else the widest of the arguments' (Python ints are
    int32 and floats float32).
    """
    if limit is None:
        start, limit = 0, start
    graph = get_default_graph()
    with graph.name_scope(name) as scope:
        args = [start, limit, delta]
        if dtype is not None:
            target = dtypes.as_dtype(dtype)
        else:
            kinds = []
            for a in args:
                if isinstance(a, Tensor):
                    kinds.append(a.dtype)
                elif isinstance(a, (np.ndarray, np.generic)):
                    kinds.append(dtypes.as_dtype(a.dtype))
                else:
                    kinds.append(dtypes.float32 if isinstance(a, float) else dtypes.int32)
            target = max(kinds, key=lambda d: _RANGE_DTYPES.index(d)
                         if d in _RANGE_DTYPES else -1)
        tensors = []
        for a, what in zip(args, ("start", "limit", "delta"), strict=True):
            if isinstance(a, Tensor):
                tensors.append(a if a.dtype == target else _cast(a, target))
            else:
                tensors.append(constant(a, dtype=target, name=what))
        return apply_op("Range", tensors, name=scope)


range_.__name__ = "range"


def _infer_one_hot(op: Operation) -> list:
    indices, depth_t, on, off = op.inputs
    if not (indices.dtype.is_integer):
        raise TypeError(f"indices of 'OneHot' must be integers, got {indices.dtype.name}")
    _require_index_dtype(depth_t, "depth", "OneHot")
    _require_rank(depth_t, (0,), "depth", "OneHot")
    _require_rank(on, (0,), "on_value", "OneHot")
    _require_rank(off, (0,), "off_value", "OneHot")
    if on.dtype != off.dtype:
        raise TypeError(f"on_value ({on.dtype.name}) and off_value ({off.dtype.name}) must "
                        "have the same dtype")
    depth = _partial_int(depth_t)
    if depth is not None and depth < 0:
        raise ValueError(f"depth must be non-negative, got {depth}")
    dims = indices.shape.as_tuple()
    axis = op.attrs["axis"]
    if dims is None:
        return [(on.dtype, TensorShape(None))]
    if not -1 <= axis <= len(dims):
        raise ValueError(f"Expected axis to be -1 or between [0, {len(dims)}], but got "
                         f"{axis}")
    at = len(dims) if axis == -1 else axis
    return [(on.dtype, TensorShape(list(dims[:at]) + [depth] + list(dims[at:])))]


def _one_hot_kernel(ctx: Any, attrs: dict) -> Any:
    xp, axis = ctx.xp, attrs["axis"]

    def one_hot_op(indices: Any, depth: Any, on: Any, off: Any) -> Any:
        hot = xp.expand_dims(indices, -1) == xp.arange(depth.item(), dtype=indices.dtype)
        out = xp.where(hot, on, off)
        return out if axis in (-1, indices.ndim) else xp.moveaxis(out, -1, axis)

    return one_hot_op


registry.register(registry.OpDef("OneHot", _infer_one_hot, _one_hot_kernel,
                                 registry.NOT_DIFFERENTIABLE, foldable=True))


def one_hot(indices: Any, depth: Any, on_value: Any = None, off_value: Any = None,
            axis: int | None = None, dtype: Any = None, name: str | None = None) -> Tensor:
    """One-hot vectors: ``on_value`` where ``indices`` equals the position along a new
    dimension of size ``depth`` (at ``axis``, default last), ``off_value`` elsewhere
    (including for indices outside ``[0, depth)``).

    The dtype is ``dtype``, else that of ``on_value``/``off_value``, else float32.

    Raises:
        TypeError: ``on_value``, ``off_value`` and ``dtype`` disagree.
    """
    graph = get_default_graph()
    with graph.name_scope(name or "one_hot") as scope:
        on_dtype = convert_to_tensor(on_value).dtype if isinstance(on_value, Tensor) else (
            constant(on_value).dtype if on_value is not None else None)
        off_dtype = convert_to_tensor(off_value).dtype if isinstance(off_value, Tensor) \
            else (constant(off_value).dtype if off_value is not None else None)
        if on_dtype is not None and off_dtype is not None and on_dtype != off_dtype and (
                isinstance(on_value, Tensor) or isinstance(off_value, Tensor)):
            raise TypeError(f"dtype of on_value ({on_dtype.name}) is not the dtype of "
                            f"off_value ({off_dtype.name})")
        want = dtypes.as_dtype(dtype) if dtype is not None else \
            on_dtype or off_dtype or dtypes.float32
        if dtype is not None:
            for d, what in ((on_dtype, "on_value"), (off_dtype, "off_value")):
                given = on_value if what == "on_value" else off_value
                if d is not None and d != want and isinstance(given, Tensor):
                    raise TypeError(f"dtype {want.name} of one_hot is not the dtype "
                                    f"{d.name} of {what}")
        on = convert_to_tensor(1 if on_value is None else on_value, dtype=want)
        off = convert_to_tensor(0 if off_value is None else off_value, dtype=want)
        return apply_op("OneHot", [_int_tensor(indices), _int_tensor(depth), on, off],
                        {"axis": -1 if axis is None else int(axis)}, name=scope)
