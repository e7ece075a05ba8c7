"""Reordering along axes: ``Transpose``/``ConjugateTranspose``, ``InvertPermutation``,
``ReverseV2``, and ``Range``.

Each op type is one record (shape rule, kernel, gradient) next to its builder. The
gradients are the adjoint permutations: ``Transpose(perm)``'s is
``Transpose(invert_permutation(perm))``, ``ReverseV2``'s is ``ReverseV2`` on the same
axes; ``InvertPermutation`` and ``Range`` are not differentiable. ``Range`` is here
because ``transpose`` of an input of unknown rank reverses ``range(rank)``; its size
follows TF's rule, computed in the element type (``_range_length``).
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from ...framework import dtypes, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor, get_default_graph
from ...framework.tensor_shape import TensorShape
from ...framework.tensor_util import constant_value
from ..build import apply_op
from ..cast import cast
from ..constant import constant
from ..rules import normalize_axis, require_same_dtype
from .shape_helpers import int_tensor, partial_list, require_index_dtype, require_rank
from .shapes import rank


# --- Transpose / ConjugateTranspose / InvertPermutation / ReverseV2 ---------------------
def _infer_transpose(op: Operation) -> list:
    x, perm_t = op.inputs
    require_index_dtype(perm_t, "perm", op.type)
    require_rank(perm_t, (1,), "perm", op.type)
    perm = partial_list(perm_t)
    dims = x.shape.as_tuple()
    if perm is None:
        return [(x.dtype, TensorShape(None if dims is None else [None] * len(dims)))]
    if dims is not None and len(perm) != len(dims):
        raise ValueError(
            f"transpose expects a permutation of size {len(dims)} (the rank "
            f"of the input), got {perm}"
        )
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


registry.register(
    registry.OpDef("Transpose", _infer_transpose, _transpose_kernel, _transpose_grad, foldable=True)
)
registry.register(
    registry.OpDef(
        "ConjugateTranspose", _infer_transpose, _conjugate_transpose_kernel, _transpose_grad
    )
)


def _infer_invert_permutation(op: Operation) -> list:
    x = op.inputs[0]
    require_index_dtype(x, "x", "InvertPermutation")
    require_rank(x, (1,), "x", "InvertPermutation")
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


registry.register(
    registry.OpDef(
        "InvertPermutation",
        _infer_invert_permutation,
        _invert_permutation_kernel,
        registry.NOT_DIFFERENTIABLE,
        foldable=True,
    )
)


def invert_permutation(x: Any, name: str | None = None) -> Tensor:
    """The inverse permutation ``y`` of ``x``: ``y[x[i]] = i``."""
    return apply_op("InvertPermutation", [int_tensor(x)], name=name)


def transpose(a: Any, perm: Any = None, name: str = "transpose", conjugate: bool = False) -> Tensor:
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
    return apply_op(op_type, [a, int_tensor(perm)], name=name)


def _infer_reverse(op: Operation) -> list:
    x, axis_t = op.inputs
    require_index_dtype(axis_t, "axis", "ReverseV2")
    require_rank(axis_t, (1,), "axis", "ReverseV2")
    axes = partial_list(axis_t)
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


registry.register(
    registry.OpDef("ReverseV2", _infer_reverse, _reverse_kernel, _reverse_grad, foldable=True)
)


def reverse(tensor: Any, axis: Any, name: str | None = None) -> Tensor:
    """Reverses ``tensor`` along each dimension listed in ``axis``."""
    if isinstance(axis, (int, np.integer)):
        axis = [axis]
    return apply_op("ReverseV2", [convert_to_tensor(tensor), int_tensor(axis)], name=name)


# --- Range ------------------------------------------------------------------------------
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
        require_rank(t, (0,), what, "Range")
    values = [constant_value(t) for t in op.inputs]
    if any(v is None for v in values):
        return [(dtype, TensorShape([None]))]
    start_v, limit_v, delta_v = (np.asarray(v).reshape(()) for v in values)
    n = _range_length(start_v, limit_v, delta_v, dtype.is_integer)
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


registry.register(
    registry.OpDef("Range", _infer_range, _range_kernel, registry.NOT_DIFFERENTIABLE, foldable=True)
)

_RANGE_DTYPES = (dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64)


def range_(
    start: Any, limit: Any = None, delta: Any = 1, dtype: Any = None, name: str = "range"
) -> Tensor:
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
            target = max(kinds, key=lambda d: _RANGE_DTYPES.index(d) if d in _RANGE_DTYPES else -1)
        tensors = []
        for a, what in zip(args, ("start", "limit", "delta"), strict=True):
            if isinstance(a, Tensor):
                tensors.append(a if a.dtype == target else cast(a, target))
            else:
                tensors.append(constant(a, dtype=target, name=what))
        return apply_op("Range", tensors, name=scope)


range_.__name__ = "range"
