"""The conversion functions ``convert_to_tensor`` tries for values that are not tensors
(``tf.register_tensor_conversion_function``).

Each entry is ``(base_type, fn)``; ``CONVERSION_FUNCS`` holds them in the order they are
tried, which is TF1's: lower ``priority`` first, and among equal priorities the order
of registration. The first entry whose ``base_type`` the value is an instance of, and
whose function does not return ``NotImplemented``, converts it. The library's own
entries (``Variable``, ``PartitionedVariable``, ``IndexedSlices``) take ``(value,
dtype=None, name=None)``; a function registered through the public
``register_tensor_conversion_function`` is called as TF1 calls it, with ``as_ref=False``
too, and must return a ``Tensor`` of the requested dtype (``RuntimeError`` otherwise).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np

from . import dtypes
from .operation import Tensor

# In the order ``convert_to_tensor`` tries them: sorted by (priority, registration).
CONVERSION_FUNCS: list[tuple[type | tuple[type, ...], Callable]] = []
_entries: list[tuple[int, int, type | tuple[type, ...], Callable]] = []
_order = itertools.count()

# Values ``convert_to_tensor`` always makes constants of (TF1 refuses to register them).
_UNCONVERTIBLE = (int, float, np.generic, np.ndarray)


def add_conversion_function(
    base_type: type | tuple[type, ...], fn: Callable, priority: int = 100
) -> None:
    """Adds ``fn(value, dtype=None, name=None) -> Tensor`` for instances of
    ``base_type`` (the library's own registrations; no checks)."""
    _entries.append((priority, next(_order), base_type, fn))
    _entries.sort(key=lambda e: (e[0], e[1]))
    CONVERSION_FUNCS[:] = [(base, f) for _, _, base, f in _entries]


def register_tensor_conversion_function(
    base_type: Any, conversion_func: Callable, priority: int = 100
) -> None:
    """Makes ``convert_to_tensor`` (and so every op taking tensors) convert instances of
    ``base_type`` (a type or tuple of types) with ``conversion_func(value, dtype=None,
    name=None, as_ref=False)`` (``tf.register_tensor_conversion_function``).

    Functions are tried in increasing ``priority``, then in registration order; one may
    return ``NotImplemented`` to let the next try. What it returns must be a ``Tensor``
    and, when ``dtype`` was asked for, of that dtype.

    Raises:
        TypeError: ``base_type`` is not a type or tuple of types, is a Python number or a
            numpy type (always constants), or ``conversion_func`` is not callable.
    """
    types = base_type if isinstance(base_type, tuple) else (base_type,)
    if not types or not all(isinstance(t, type) for t in types):
        raise TypeError("base_type must be a type or a tuple of types.")
    if any(issubclass(t, _UNCONVERTIBLE) for t in types):
        raise TypeError(
            "Cannot register conversions for Python numeric types and NumPy scalars and arrays."
        )
    if not callable(conversion_func):
        raise TypeError("conversion_func must be callable.")

    def convert(value: Any, dtype: Any = None, name: str | None = None) -> Any:
        result = conversion_func(value, dtype=dtype, name=name, as_ref=False)
        if result is NotImplemented:
            return result
        if not isinstance(result, Tensor):
            raise RuntimeError(
                f"Conversion function {conversion_func!r} for type {type(value)} returned "
                f"non-Tensor: {result!r}"
            )
        if dtype is not None and result.dtype != dtypes.as_dtype(dtype):
            raise RuntimeError(
                f"Conversion function {conversion_func!r} for type {type(value)} returned "
                f"incompatible dtype: requested = {dtypes.as_dtype(dtype).name}, "
                f"actual = {result.dtype.name}"
            )
        return result

    add_conversion_function(types, convert, priority)
