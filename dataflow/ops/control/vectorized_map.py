"""``tf.vectorized_map``: ``fn`` over the first dimension of ``elems``, stacked.

TF converts ``fn`` into batched ops (``pfor``) and falls back to a ``while_loop`` for
ops it cannot convert; here every case takes the loop (``map_fn``), which gives the same
values, dtypes and static shapes: the batch dimension of ``elems`` (static when known)
ahead of each result's shape. Unlike ``map_fn``, ``fn``'s results need not have
``elems``' dtypes or structure: ``fn`` is traced once on placeholders of an element's
dtype and shape (as TF traces it on a symbolic index) to learn them; those probe ops
are never run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..._util import nest
from ...framework.graph import Tensor, convert_to_tensor
from ...framework.scopes import name_scope
from ..constant import placeholder
from .map_scan import map_fn


def _as_tensor(value: Any) -> Tensor:
    return value if isinstance(value, Tensor) else convert_to_tensor(value)


def vectorized_map(
    fn: Callable, elems: Any, fallback_to_while_loop: bool = True, warn: bool = True
) -> Any:
    """``fn`` applied to each slice of ``elems`` (a tensor or a nested structure of
    tensors sharing their first dimension) along dimension 0, results stacked
    (``tf.vectorized_map``). ``fn`` may return any nested structure of tensors.

    ``fallback_to_while_loop`` and ``warn`` are accepted for TF compatibility: every
    ``fn`` runs as the loop TF falls back to, with the same values.

    Raises:
        TypeError: ``fn`` is not callable.
        ValueError: ``elems`` holds a scalar.
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {fn!r}")
    flat = [_as_tensor(e) for e in nest.flatten(elems)]
    for t in flat:
        if t.shape.ndims == 0:
            raise ValueError(f"elems must be at least rank 1, got {t.name} of shape ()")
    elems = nest.pack_sequence_as(elems, flat)
    with name_scope(None, "vectorized_map_probe"):
        probes = [placeholder(t.dtype, t.shape[1:]) for t in flat]
        probe_out = fn(nest.pack_sequence_as(elems, probes))
    out_dtypes = nest.pack_sequence_as(
        probe_out, [_as_tensor(r).dtype for r in nest.flatten(probe_out)]
    )

    def element_fn(element: Any) -> Any:
        result = fn(element)
        return nest.pack_sequence_as(result, [_as_tensor(r) for r in nest.flatten(result)])

    return map_fn(
        element_fn,
        elems,
        dtype=out_dtypes,
        name="vectorized_map",
    )
