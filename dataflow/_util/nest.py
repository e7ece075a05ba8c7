"""Flattening and re-packing nested fetch structures.

``Session.run`` accepts a tensor, an op, a name, or any nesting of lists, tuples, dicts
and namedtuples of those, and returns values in the same nesting. ``flatten`` lists the
leaves depth-first (dicts in insertion order, as TF1 does for fetches) and
``pack_sequence_as`` rebuilds the structure from a flat list of values.
``flatten_dict_items`` flattens a ``feed_dict`` whose keys are structures of tensors (an
RNN's state tuple) against values of the same structure, as TF1's ``Session.run`` does.
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


def flatten_dict_items(dictionary: Mapping) -> dict:
    """``dictionary`` with each tuple key (a structure of leaves) replaced by its leaves,
    each mapped to the matching leaf of its value.

    Raises:
        ValueError: a value's structure has another number of leaves than its key's, or
            a leaf appears twice.
    """
    flat: dict = {}
    for key, value in dictionary.items():
        if isinstance(key, tuple):
            keys, values = flatten(key), flatten(value)
            if len(keys) != len(values):
                raise ValueError(
                    f"Could not flatten dictionary. Key had {len(keys)} elements, but value "
                    f"had {len(values)} elements. Key: {keys}, value: {values}."
                )
        else:
            keys, values = [key], [value]
        for k, v in zip(keys, values):
            if k in flat:
                raise ValueError(f"Could not flatten dictionary: key {k} is not unique.")
            flat[k] = v
    return flat
