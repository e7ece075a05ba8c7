"""The nested structure of a dataset's elements, as ``tf.data`` defines it.

Tuples, namedtuples and dicts are structure; anything else, lists included, is one
tensor (``from_tensor_slices([1, 2, 3])`` has one component, as in TF1). Dict leaves are
ordered by sorted key, as TF's ``nest`` orders them. A leaf of an element's structure
is a ``Spec`` (dtype and static shape).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..framework import dtypes
from ..framework.graph import Tensor, convert_to_tensor
from ..framework.tensor_shape import TensorShape, as_shape


@dataclass(frozen=True)
class Spec:
    dtype: dtypes.DType
    shape: TensorShape


def _is_structure(value: Any) -> bool:
    return isinstance(value, (tuple, Mapping))


def flatten(structure: Any) -> list[Any]:
    if isinstance(structure, Mapping):
        return [leaf for key in sorted(structure) for leaf in flatten(structure[key])]
    if isinstance(structure, tuple):
        return [leaf for item in structure for leaf in flatten(item)]
    return [structure]


def pack(structure: Any, flat: list[Any]) -> Any:
    """``structure`` with its leaves replaced, in ``flatten`` order, by ``flat``."""
    it = iter(flat)

    def build(item: Any) -> Any:
        if isinstance(item, Mapping):
            built = {key: build(item[key]) for key in sorted(item)}  # leaves in key order
            return {key: built[key] for key in item}
        if isinstance(item, tuple):
            values = [build(v) for v in item]
            return type(item)(*values) if hasattr(type(item), "_fields") else tuple(values)
        return next(it)

    out = build(structure)
    if next(it, None) is not None:
        raise ValueError("pack: more values than the structure has leaves")
    return out


def map_structure(fn: Callable[[Any], Any], structure: Any) -> Any:
    return pack(structure, [fn(leaf) for leaf in flatten(structure)])


def to_tensors(value: Any, what: str) -> Any:
    """``value`` with every leaf converted to a tensor (lists become tensors)."""
    if isinstance(value, list):
        value = convert_to_tensor(value)
    if _is_structure(value):
        return map_structure(lambda leaf: to_tensors(leaf, what), value)
    try:
        return convert_to_tensor(value)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"{what}: {value!r} is not a tensor or a structure of them ({exc})"
        ) from None


def specs_of(tensors: Any) -> Any:
    return map_structure(lambda t: Spec(t.dtype, t.shape), tensors)


def types_of(specs: Any) -> Any:
    return map_structure(lambda s: s.dtype, specs)


def shapes_of(specs: Any) -> Any:
    return map_structure(lambda s: s.shape, specs)


def classes_of(specs: Any) -> Any:
    return map_structure(lambda s: Tensor, specs)


def specs_from(types: Any, shapes: Any = None) -> Any:
    """Specs from ``output_types`` and (optionally) ``output_shapes`` structures."""
    flat_types = [dtypes.as_dtype(t) for t in flatten(types)]
    if shapes is None:
        flat_shapes = [TensorShape(None)] * len(flat_types)
    else:
        flat_shapes = [as_shape(s) for s in flatten_shapes(shapes, types)]
        if len(flat_shapes) != len(flat_types):
            raise ValueError(
                f"output_shapes {shapes!r} does not match the structure of output_types {types!r}"
            )
    return pack(types, [Spec(t, s) for t, s in zip(flat_types, flat_shapes, strict=True)])


def flatten_shapes(shapes: Any, like: Any) -> list[Any]:
    """Leaves of a shapes structure; a list of ints/None is one shape, not structure."""
    if isinstance(like, Mapping):
        return [leaf for key in sorted(like) for leaf in flatten_shapes(shapes[key], like[key])]
    if isinstance(like, tuple):
        if len(shapes) != len(like):
            raise ValueError(f"shapes {shapes!r} do not match the structure {like!r}")
        return [
            leaf for s, part in zip(shapes, like, strict=True) for leaf in flatten_shapes(s, part)
        ]
    return [shapes]


def same_structure(a: Any, b: Any) -> bool:
    if isinstance(a, Mapping) or isinstance(b, Mapping):
        return (
            isinstance(a, Mapping)
            and isinstance(b, Mapping)
            and sorted(a) == sorted(b)
            and all(same_structure(a[k], b[k]) for k in a)
        )
    if isinstance(a, tuple) or isinstance(b, tuple):
        return (
            isinstance(a, tuple)
            and isinstance(b, tuple)
            and len(a) == len(b)
            and all(same_structure(x, y) for x, y in zip(a, b, strict=True))
        )
    return True


def most_specific(a: TensorShape, b: TensorShape) -> TensorShape:
    """The shape both fit: dims that agree are kept, the others unknown."""
    if a.rank is None or b.rank is None or a.rank != b.rank:
        return TensorShape(None)
    return TensorShape(
        [x if x == y else None for x, y in zip(a.as_list(), b.as_list(), strict=True)]
    )
