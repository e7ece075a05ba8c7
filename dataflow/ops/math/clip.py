"""Gradient clipping as TF1 writes it: ``clip_by_norm``, ``global_norm``,
``clip_by_global_norm`` and ``clip_by_average_norm``, composites of existing ops (their
gradients come from those ops). ``None`` entries of a list stay ``None``; a list entry
that is an ``IndexedSlices`` contributes its values."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...framework.graph import Tensor, convert_to_tensor
from ...framework.scopes import name_scope
from .. import array as array_ops
from ..cast import cast
from ..control.group import identity
from .arith import maximum, minimum, rsqrt, sqrt
from .compare import greater, where
from .reduce import reduce_sum


def clip_by_norm(t: Any, clip_norm: Any, axes: Any = None, name: str | None = None) -> Tensor:
    """``t * clip_norm / max(l2norm(t), clip_norm)``: ``t`` rescaled so that its L2 norm
    (over ``axes``, or all of it) is at most ``clip_norm``."""
    with name_scope(name, "clip_by_norm", [t, clip_norm]) as scope:
        t = convert_to_tensor(t)
        squares = reduce_sum(t * t, axes, keepdims=True)
        positive = greater(squares, 0.0)
        # sqrt(0) has an infinite derivative: take it only where the sum is positive.
        safe = where(positive, squares, array_ops.ones_like(squares))
        norm = where(positive, sqrt(safe), squares)
        clip = convert_to_tensor(clip_norm, dtype=t.dtype)
        return identity(t * clip / maximum(norm, clip), name=scope)


def _values(t: Any) -> Any:
    return getattr(t, "values", t) if t is not None and not isinstance(t, Tensor) else t


def global_norm(t_list: Sequence[Any], name: str | None = None) -> Tensor:
    """``sqrt(sum of the squares of every entry of every tensor in t_list)``.

    Raises:
        TypeError: ``t_list`` is not a sequence.
    """
    if isinstance(t_list, (str, bytes)) or not isinstance(t_list, Sequence):
        raise TypeError("t_list should be a sequence")
    present = [convert_to_tensor(_values(t)) for t in t_list if t is not None]
    with name_scope(name, "global_norm", present) as scope:
        halves = [reduce_sum(t * t) / 2.0 for t in present]
        half_squared = reduce_sum(array_ops.stack(halves)) if halves else convert_to_tensor(0.0)
        return sqrt(half_squared * 2.0, name=scope)


def clip_by_global_norm(
    t_list: Sequence[Any], clip_norm: Any, use_norm: Any = None, name: str | None = None
) -> tuple[list[Any], Tensor]:
    """Every tensor of ``t_list`` scaled by ``clip_norm / max(global_norm, clip_norm)``;
    returns the clipped list and the global norm (``use_norm`` if given). An infinite
    norm makes every entry NaN, as in TF1.

    Raises:
        TypeError: ``t_list`` is not a sequence.
    """
    if isinstance(t_list, (str, bytes)) or not isinstance(t_list, Sequence):
        raise TypeError("t_list should be a sequence")
    norm = global_norm(t_list) if use_norm is None else convert_to_tensor(use_norm)
    with name_scope(name, "clip_by_global_norm", [norm]):
        clip = convert_to_tensor(clip_norm, dtype=norm.dtype)
        scale = clip * minimum(1.0 / norm, 1.0 / clip)
        scale = scale + (norm - norm)  # inf - inf: NaN for an infinite norm (TF1's rule)
        clipped: list[Any] = []
        for t in t_list:
            if t is None:
                clipped.append(None)
                continue
            values = convert_to_tensor(_values(t))
            scaled = identity(values * cast(scale, values.dtype))
            clipped.append(scaled if values is t or isinstance(t, Tensor) else _rebuild(t, scaled))
        return clipped, norm


def _rebuild(t: Any, values: Tensor) -> Any:
    """An ``IndexedSlices`` with new values (same indices and dense shape)."""
    return type(t)(values, t.indices, getattr(t, "dense_shape", None))


def clip_by_average_norm(t: Any, clip_norm: Any, name: str | None = None) -> Tensor:
    """``t`` scaled so that its L2 norm divided by its number of entries is at most
    ``clip_norm``."""
    with name_scope(name, "clip_by_average_norm", [t, clip_norm]) as scope:
        t = convert_to_tensor(t)
        count = cast(array_ops.size(t), t.dtype)
        inverse_norm = rsqrt(reduce_sum(t * t))
        clip = convert_to_tensor(clip_norm, dtype=t.dtype)
        return identity(t * clip * minimum(inverse_norm * count, 1.0 / clip), name=scope)
