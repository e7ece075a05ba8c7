"""Slicing: ``Slice``, ``StridedSlice``/``StridedSliceGrad`` (and ``Tensor.__getitem__``),
and ``boolean_mask``. Padding, the adjoint of slicing, is in ``array/padding.py``.

Each op type is one record (shape rule, kernel, gradient) next to its builder. Slicing
and padding are each other's adjoints:

=======================  ===========================================
forward                  gradient (adjoint)
=======================  ===========================================
Slice                    Pad (before = begin, after = rest)
StridedSlice             StridedSliceGrad (zeros with ``dy`` written at the
                         slice), whose gradient is StridedSlice again
Pad, PadV2               Slice
MirrorPad                MirrorPadGrad (folds the reflected borders back),
                         whose gradient is MirrorPad
=======================  ===========================================

A strided-slice spec (``begin``, ``end``, ``strides`` and TF's five bit masks) becomes
one numpy index tuple (``shape_helpers.slice_key``); the shape rule applies the same key
to the static dims, with ``_UNKNOWN`` for bounds not known at build time
(``_sliced_shape``), and the kernel builds the key once when the spec is constant.
``tensor[...]`` (``_getitem``, TF's ``_slice_helper``) turns ints, slices, ``...``,
``tf.newaxis`` and scalar integer tensors into one ``StridedSlice``. ``boolean_mask`` is
a composite: a reshape, ``where`` and a gather.
"""

from __future__ import annotations

import builtins
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...framework import dtypes, registry
from ...framework.graph import (
    Operation,
    Tensor,
    convert_to_tensor,
    get_default_graph,
)
from ...framework.operation import register_operator
from ...framework.tensor_shape import TensorShape
from ...framework.tensor_util import constant_value
from ..build import apply_op
from ..cast import cast
from ..constant import constant
from ..math.arith import subtract
from ..math.compare import where
from ..rules import normalize_axis
from .indexing import gather
from .join import concat, stack
from .padding import pad
from .shape_helpers import (
    INDEX_DTYPES,
    int_tensor,
    partial_list,
    require_index_dtype,
    require_rank,
    shape_of,
    slice_key,
    slice_masks,
)
from .shapes import ones_like, reshape, squeeze


# --- Slice / StridedSlice / StridedSliceGrad, and Tensor.__getitem__ ----------------------
def _infer_slice(op: Operation) -> list:
    x, begin_t, size_t = op.inputs
    for t, what in ((begin_t, "begin"), (size_t, "size")):
        require_index_dtype(t, what, "Slice")
        require_rank(t, (1,), what, "Slice")
    dims = x.shape.as_tuple()
    begin, sizes = partial_list(begin_t), partial_list(size_t)
    n = len(begin) if begin is not None else len(sizes) if sizes is not None else None
    if dims is not None:
        rank_ = len(dims)
    elif n is not None:
        rank_ = n
    else:
        return [(x.dtype, TensorShape(None))]
    begin = begin if begin is not None else [None] * rank_
    sizes = sizes if sizes is not None else [None] * rank_
    if len(begin) != rank_ or len(sizes) != rank_:
        raise ValueError(
            f"Expected begin and size arguments to be 1-D tensors of size "
            f"{rank_}, but got {len(begin)} and {len(sizes)} elements"
        )
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
                raise ValueError(
                    f"Expected begin[{i}]={b} and size[{i}]={s} to fit in "
                    f"dimension {i} of size {x.shape[i]}"
                )
            key.append(builtins.slice(b, end))
        return asarray(x[builtins.tuple(key)])

    return slice_op


def _slice_grad(op: Operation, grad: Tensor) -> list:
    # Pad the gradient back: `begin` zeros before, the rest after (TF's _SliceGrad).
    x, begin = op.inputs[0], op.inputs[1]
    dtype = begin.dtype
    after = subtract(subtract(shape_of(x, dtype), begin), shape_of(op.outputs[0], dtype))
    return [pad(grad, stack([begin, after], axis=1)), None, None]


registry.register(registry.OpDef("Slice", _infer_slice, _slice_kernel, _slice_grad, foldable=True))


def slice_(input_: Any, begin: Any, size: Any, name: str | None = None) -> Tensor:
    """Extracts ``input_[begin[i] : begin[i] + size[i]]`` along every dimension ``i``
    (``tf.slice``; a size of -1 takes the rest of that dimension)."""
    input_ = convert_to_tensor(input_)
    begin_t = int_tensor(begin)
    size_t = int_tensor(size)
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
            t = constant(value, dtype=want) if value is not None else cast(t, want)
        out.append(t)
    return out


_UNKNOWN = object()  # a slice bound not known at build time


def _sliced_shape(dims: tuple | None, key: tuple) -> TensorShape:
    """The static shape of ``x[key]`` for ``x`` of static dims ``dims``; key entries may
    hold ``_UNKNOWN`` bounds. Raises ``ValueError`` for indices known to be out of range."""
    if Ellipsis not in key and dims is None:
        return TensorShape(None)
    real = sum(1 for k in key if k is not None and k is not Ellipsis)
    if dims is None:
        return TensorShape(None)
    if real > len(dims):
        raise ValueError(f"Index out of range: {real} indices for a tensor of rank {len(dims)}")
    if Ellipsis in key:
        at = key.index(Ellipsis)
        key = key[:at] + (builtins.slice(None),) * (len(dims) - real) + key[at + 1 :]
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
                out.append(len(builtins.range(*builtins.slice(k.start, k.stop, step).indices(d))))
        elif k is not _UNKNOWN and d is not None and not -d <= k < d:
            raise ValueError(f"slice index {k} of dimension {axis} out of bounds (size {d})")
        axis += 1
    return TensorShape(out)


def _infer_strided_slice(op: Operation, x: Tensor | None = None) -> TensorShape:
    """The shape of ``x`` sliced by ``op``'s spec (inputs 1-3 and masks); validates
    the spec alone when ``x`` is ``None``."""
    begin_t, end_t, strides_t = op.inputs[1:4]
    specs = []
    for t, what in ((begin_t, "begin"), (end_t, "end"), (strides_t, "strides")):
        require_index_dtype(t, what, op.type)
        require_rank(t, (1,), what, op.type)
        specs.append(partial_list(t))
    lengths = {len(v) for v in specs if v is not None}
    if len(lengths) > 1:
        raise ValueError(
            f"begin, end and strides of '{op.type}' must have one length, "
            f"got {[len(v) for v in specs if v is not None]}"
        )
    masks = slice_masks(op.attrs)
    if masks[2] & (masks[2] - 1):
        raise ValueError("Multiple ellipses in slice spec not allowed")
    if not lengths:
        return TensorShape(None)
    n = lengths.pop()
    begin, end, strides = (
        [_UNKNOWN if v is None else v for v in spec] if spec is not None else [_UNKNOWN] * n
        for spec in specs
    )
    return _sliced_shape(
        x.shape.as_tuple() if x is not None else None, slice_key(begin, end, strides, masks)
    )


def _infer_strided_slice_op(op: Operation) -> list:
    x = op.inputs[0]
    return [(x.dtype, _infer_strided_slice(op, x))]


def _strided_slice_kernel(ctx: Any, attrs: dict) -> Any:
    asarray, masks = ctx.xp.asarray, slice_masks(attrs)
    # The spec is almost always constant: the executor passes the same read-only
    # arrays every step, so the numpy key is built once (an atomic tuple swap keeps
    # this safe when several steps run at once).
    memo: list = [(None, None, None, None)]

    def strided_slice_op(x: Any, begin: Any, end: Any, strides: Any) -> Any:
        b, e, s, key = memo[0]
        if begin is not b or end is not e or strides is not s:
            key = slice_key(begin.tolist(), end.tolist(), strides.tolist(), masks)
            if not any(
                getattr(getattr(a, "flags", None), "writeable", True) for a in (begin, end, strides)
            ):
                memo[0] = (begin, end, strides, key)
        return asarray(x[key])

    return strided_slice_op


def _strided_slice_grad(op: Operation, grad: Tensor) -> list:
    x, begin, end, strides = op.inputs
    dx = apply_op(
        "StridedSliceGrad", [shape_of(x, begin.dtype), begin, end, strides, grad], dict(op.attrs)
    )
    return [dx, None, None, None]


registry.register(
    registry.OpDef(
        "StridedSlice",
        _infer_strided_slice_op,
        _strided_slice_kernel,
        _strided_slice_grad,
        foldable=True,
    )
)


def _infer_strided_slice_grad(op: Operation) -> list:
    shape_t, dy = op.inputs[0], op.inputs[4]
    require_index_dtype(shape_t, "shape", "StridedSliceGrad")
    _infer_strided_slice(op)  # validates the spec
    return [(dy.dtype, TensorShape(partial_list(shape_t)))]


def _strided_slice_grad_kernel(ctx: Any, attrs: dict) -> Any:
    zeros_, masks = ctx.xp.zeros, slice_masks(attrs)

    def strided_slice_grad(shape_: Any, begin: Any, end: Any, strides: Any, dy: Any) -> Any:
        out = zeros_(shape_.tolist(), dtype=dy.dtype)
        out[slice_key(begin.tolist(), end.tolist(), strides.tolist(), masks)] = dy
        return out

    return strided_slice_grad


def _strided_slice_grad_grad(op: Operation, grad: Tensor) -> list:
    _, begin, end, strides, _ = op.inputs
    ddy = apply_op("StridedSlice", [grad, begin, end, strides], dict(op.attrs))
    return [None, None, None, None, ddy]


registry.register(
    registry.OpDef(
        "StridedSliceGrad",
        _infer_strided_slice_grad,
        _strided_slice_grad_kernel,
        _strided_slice_grad_grad,
        foldable=True,
    )
)


def strided_slice(
    input_: Any,
    begin: Any,
    end: Any,
    strides: Any = None,
    begin_mask: int = 0,
    end_mask: int = 0,
    ellipsis_mask: int = 0,
    new_axis_mask: int = 0,
    shrink_axis_mask: int = 0,
    var: Any = None,
    name: str | None = None,
) -> Tensor:
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
    begin_t, end_t = int_tensor(begin), int_tensor(end)
    strides_t = ones_like(begin_t) if strides is None else int_tensor(strides)
    begin_t, end_t, strides_t = _same_index_dtype([begin_t, end_t, strides_t])
    attrs = {
        "begin_mask": int(begin_mask),
        "end_mask": int(end_mask),
        "ellipsis_mask": int(ellipsis_mask),
        "new_axis_mask": int(new_axis_mask),
        "shrink_axis_mask": int(shrink_axis_mask),
    }
    return apply_op("StridedSlice", [input_, begin_t, end_t, strides_t], attrs, name=name)


_INDEX_HELP = (
    "Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and "
    "scalar tf.int32/tf.int64 tensors are valid indices"
)


def _check_index(value: Any) -> None:
    if isinstance(value, (numbers.Integral, np.integer)):
        return
    if isinstance(value, Tensor) and value.dtype in INDEX_DTYPES and value.shape.rank in (None, 0):
        return
    raise TypeError(f"{_INDEX_HELP}, got {value!r}")


def _pack_indices(values: list) -> Tensor:
    if all(isinstance(v, (numbers.Integral, np.integer)) for v in values):
        return int_tensor([int(v) for v in values])
    dtype = (
        dtypes.int64
        if any(isinstance(v, Tensor) and v.dtype == dtypes.int64 for v in values)
        else dtypes.int32
    )
    parts = []
    for v in values:
        if isinstance(v, Tensor):
            parts.append(v if v.dtype == dtype else cast(v, dtype))
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
                [_pack_indices(begin), _pack_indices(end), _pack_indices(strides)]
            )
        else:
            begin_t = end_t = strides_t = constant([], dtype=dtypes.int32)
        return strided_slice(
            tensor,
            begin_t,
            end_t,
            strides_t,
            begin_mask,
            end_mask,
            ellipsis_mask,
            new_axis_mask,
            shrink_mask,
            name=scope,
        )


register_operator("getitem", _getitem)


# --- boolean_mask ------------------------------------------------------------------------
def boolean_mask(tensor: Any, mask: Any, name: str = "boolean_mask", axis: Any = None) -> Tensor:
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
            raise ValueError(
                "Number of mask dimensions must be specified, even if some "
                "dimensions are None. E.g. shape=[None] is ok, but "
                "shape=None is not."
            )
        if k == 0:
            raise ValueError("mask cannot be scalar.")
        rank_ = tensor.shape.rank
        axis = 0 if axis is None else int(axis)
        if rank_ is not None:
            axis = normalize_axis(axis, rank_, "boolean_mask")
            if axis + k > rank_ or not tensor.shape[axis : axis + k].is_compatible_with(mask.shape):
                raise ValueError(
                    f"Shapes {tensor.shape[axis : axis + k]} and {mask.shape} "
                    f"are incompatible (tensor dims {axis}..{axis + k - 1} "
                    f"against the mask)"
                )
        dims = shape_of(tensor)
        flat_shape = concat([dims[:axis], [-1], dims[axis + k :]], 0)
        flat = reshape(tensor, flat_shape)
        indices = squeeze(where(reshape(mask, [-1])), axis=[1])
        return gather(flat, indices, axis=axis)
