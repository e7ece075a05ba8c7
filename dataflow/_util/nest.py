"""Flattening and re-packing nested fetch structures.

``Session.run`` accepts a tensor, an op, a name, or any nesting of lists, tuples, dicts
and namedtuples of those, and returns values in the same nesting. ``flatten`` lists the
leaves depth-first (dicts in insertion order, as TF1 does for fetches) and
``pack_sequence_as`` rebuilds the structure from a flat list of values.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def is_namedtuple(value: Any) -> bool:
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


def is_nested(value: Any) -> bool:
    return isinstance(value, (list, tuple, Mapping))


def flatten(structure: Any) -> list[Any]:
    """Leaves of ``structure`` in depth-first order (iteratively)."""
    out: list[Any] = []
    stack = [structure]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, (list, tuple)):
            stack.extend(reversed(item))
        else:
            out.append(item)
    return out


def pack_sequence_as(structure: Any, flat: list[Any]) -> Any:
    """Rebuilds ``structure`` with its leaves replaced, in order, by ``flat``."""
    it = iter(flat)

    def build(item: Any) -> Any:
        # Recursion here follows the user's fetch nesting, which is shallow by nature.
        if isinstance(item, Mapping):
            pairs = [(k, build(v)) for k, v in item.items()]
            # The user's own mapping type, rebuilt from pairs (OrderedDict and the like).
            return dict(pairs) if type(item) is dict else type(item)(pairs)  # type: ignore[call-arg]
        if is_namedtuple(item):
            return type(item)(*[build(v) for v in item])
        if isinstance(item, (list, tuple)):
            return type(item)(build(v) for v in item)
        return next(it)

    return build(structure)
