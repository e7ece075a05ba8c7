"""Static shapes with unknown dimensions, mirroring ``tf.TensorShape``.

A shape is either of unknown rank (``dims is None``) or a tuple of dimensions, each an
``int`` or ``None`` (unknown). Shape rules combine them with ``merge_with`` (both must
agree where known) and ``broadcast_shapes`` (numpy broadcasting with unknowns).
"""

from __future__ import annotations

from typing import Any


class Dimension:
    """One dimension of a static shape; ``value`` is an int or ``None``."""

    __slots__ = ("_value",)

    def __init__(self, value: Any):
        if isinstance(value, Dimension):
            value = value.value
        if value is not None:
            value = int(value)
            if value < 0:
                raise ValueError(f"Dimension {value} must be >= 0")
        self._value = value

    @property
    def value(self) -> int | None:
        return self._value

    def is_compatible_with(self, other: Any) -> bool:
        other = as_dimension(other)
        return self._value is None or other.value is None or self._value == other.value

    def merge_with(self, other: Any) -> Dimension:
        other = as_dimension(other)
        if not self.is_compatible_with(other):
            raise ValueError(f"Dimensions {self} and {other} are not compatible")
        return self if self._value is not None else other

    def __eq__(self, other: object) -> Any:
        try:
            other = as_dimension(other)
        except (TypeError, ValueError):
            return NotImplemented
        if self._value is None or other.value is None:
            return None
        return self._value == other.value

    def __hash__(self) -> int:
        return hash(self._value)

    def __int__(self) -> int:
        if self._value is None:
            raise TypeError("unknown dimension has no int value")
        return self._value

    __index__ = __int__

    def __repr__(self) -> str:
        return f"Dimension({self._value})"

    def __str__(self) -> str:
        return "?" if self._value is None else str(self._value)


def as_dimension(value: Any) -> Dimension:
    return value if isinstance(value, Dimension) else Dimension(value)


class TensorShape:
    """A possibly-partial static shape."""

    __slots__ = ("_dims",)

    def __init__(self, dims: Any):
        self._dims: tuple[int | None, ...] | None
        if dims is None:
            self._dims = None
        elif isinstance(dims, TensorShape):
            self._dims = dims._dims
        elif isinstance(dims, (int, Dimension)):
            self._dims = (as_dimension(dims).value,)
        elif type(dims) is tuple and all(type(d) is int and d >= 0 for d in dims):
            self._dims = dims  # an array's shape: already what the general path makes
        else:
            self._dims = tuple(as_dimension(d).value for d in dims)

    # --- inspection -------------------------------------------------------------------
    @property
    def dims(self) -> list[Dimension] | None:
        return None if self._dims is None else [Dimension(d) for d in self._dims]

    @property
    def rank(self) -> int | None:
        return None if self._dims is None else len(self._dims)

    ndims = rank

    def as_list(self) -> list[int | None]:
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return list(self._dims)

    def as_tuple(self) -> tuple | None:
        """The dims as a plain tuple of ints/None, or None for unknown rank."""
        return self._dims

    def is_fully_defined(self) -> bool:
        return self._dims is not None and all(d is not None for d in self._dims)

    def num_elements(self) -> int | None:
        if self._dims is None:
            return None
        n = 1
        for d in self._dims:
            if d is None:
                return None
            n *= d
        return n

    def __len__(self) -> int:
        if self._dims is None:
            raise ValueError("Cannot take the length of a shape with unknown rank.")
        return len(self._dims)

    def __iter__(self):
        if self._dims is None:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        return iter(Dimension(d) for d in self._dims)

    def __getitem__(self, key: Any) -> Any:
        if self._dims is None:
            return TensorShape(None) if isinstance(key, slice) else Dimension(None)
        if isinstance(key, slice):
            return TensorShape(self._dims[key])
        return Dimension(self._dims[key])

    # --- combination --------------------------------------------------------------------
    def is_compatible_with(self, other: Any) -> bool:
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return True
        if len(self._dims) != len(other._dims):
            return False
        return all(a is None or b is None or a == b for a, b in zip(self._dims, other._dims))

    def merge_with(self, other: Any) -> TensorShape:
        other = as_shape(other)
        if self._dims is None:
            return other
        if other._dims is None:
            return self
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {other} are not compatible")
        return TensorShape([a if a is not None else b for a, b in zip(self._dims, other._dims)])

    def concatenate(self, other: Any) -> TensorShape:
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return TensorShape(None)
        return TensorShape(self._dims + other._dims)

    def with_rank(self, rank: int) -> TensorShape:
        if self._dims is not None and len(self._dims) != rank:
            raise ValueError(f"Shape {self} must have rank {rank}")
        return self if self._dims is not None else TensorShape([None] * rank)

    def with_rank_at_least(self, rank: int) -> TensorShape:
        if self._dims is not None and len(self._dims) < rank:
            raise ValueError(f"Shape {self} must have rank at least {rank}")
        return self

    def assert_is_compatible_with(self, other: Any) -> None:
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {as_shape(other)} are incompatible")

    def assert_has_rank(self, rank: int) -> None:
        if self._dims is not None and len(self._dims) != rank:
            raise ValueError(f"Shape {self} must have rank {rank}")

    def __eq__(self, other: object) -> bool:
        try:
            other = as_shape(other)
        except (TypeError, ValueError):
            return NotImplemented
        return self._dims == other._dims

    def __hash__(self) -> int:
        return hash(self._dims)

    def __repr__(self) -> str:
        if self._dims is None:
            return "TensorShape(None)"
        return f"TensorShape({list(self._dims)})"

    def __str__(self) -> str:
        if self._dims is None:
            return "<unknown>"
        inner = ", ".join("?" if d is None else str(d) for d in self._dims)
        return f"({inner},)" if len(self._dims) == 1 else f"({inner})"

    def __reduce__(self):
        return TensorShape, (self._dims,)


def as_shape(value: Any) -> TensorShape:
    return value if isinstance(value, TensorShape) else TensorShape(value)


def scalar() -> TensorShape:
    return TensorShape(())


# Shapes never change once made, so the shapes of arrays (constants' values, most of
# them scalars) are made once and shared; the table is emptied if it ever grows large.
_ARRAY_SHAPES: dict[tuple[int, ...], TensorShape] = {}


def array_shape(dims: tuple[int, ...]) -> TensorShape:
    """The ``TensorShape`` of an array of shape ``dims`` (one object per distinct shape)."""
    shape = _ARRAY_SHAPES.get(dims)
    if shape is None:
        if len(_ARRAY_SHAPES) >= 1024:
            _ARRAY_SHAPES.clear()
        shape = _ARRAY_SHAPES[dims] = TensorShape(dims)
    return shape


def broadcast_shapes(*shapes: TensorShape) -> TensorShape:
    """Numpy broadcasting of static shapes; unknown dims stay unknown unless forced.

    Raises ``ValueError`` when two known dims differ and neither is 1.
    """
    if len(shapes) == 2 and shapes[0]._dims is not None and shapes[1]._dims is not None:
        # Most binary ops while building a model: a tensor and a scalar (``x * 2.0``).
        if not shapes[1]._dims:
            return shapes[0]
        if not shapes[0]._dims:
            return shapes[1]
    known_ranks = [s._dims for s in shapes if s._dims is not None]
    if len(known_ranks) < len(shapes):
        return TensorShape(None)
    # The common cases while building a model, without the per-axis walk: a tensor and
    # a scalar (``x * 2.0``), and equal shapes.
    non_scalar = [s for s, d in zip(shapes, known_ranks) if d]
    if len(non_scalar) <= 1:
        return non_scalar[0] if non_scalar else shapes[0]
    if all(d == known_ranks[0] for d in known_ranks) and None not in known_ranks[0]:
        return shapes[0]
    rank = max((len(d) for d in known_ranks), default=0)
    out: list[int | None] = []
    for axis in range(-rank, 0):
        dims = [d[axis] for d in known_ranks if len(d) >= -axis]
        known = {d for d in dims if d is not None and d != 1}
        if len(known) > 1:
            raise ValueError(
                "Incompatible shapes for broadcasting: " + ", ".join(str(s) for s in shapes)
            )
        if known:
            out.append(known.pop())
        elif any(d is None for d in dims):
            out.append(None)
        else:
            out.append(1)
    return TensorShape(out)
