"""``tf.compat``: text and bytes helpers, and ``tf.compat.v1``, the whole namespace again.

``import dataflow.compat.v1 as tf`` (how TF 2 era code spells TF1) gives the same module
as ``import dataflow as tf``.
"""

from __future__ import annotations

import contextlib
import datetime
import numbers
import os
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np

from .._util.missing_names import missing_name_hook
from ..framework.tensor_shape import Dimension

# ``tf.compat.v1`` is this package itself (registered so that ``import
# dataflow.compat.v1`` finds it).
v1 = sys.modules[__name__.rsplit(".", 1)[0]]
sys.modules[__name__ + ".v1"] = v1

bytes_or_text_types = (bytes, str)
integral_types = (numbers.Integral, np.integer)
real_types = (numbers.Real, np.integer, np.floating)
complex_types = (numbers.Complex, np.number)


def as_bytes(bytes_or_text: Any, encoding: str = "utf-8") -> bytes:
    """``bytes_or_text`` as bytes (text is encoded with ``encoding``)."""
    if isinstance(bytes_or_text, bytearray):
        return bytes(bytes_or_text)
    if isinstance(bytes_or_text, str):
        return bytes_or_text.encode(encoding)
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


def as_text(bytes_or_text: Any, encoding: str = "utf-8") -> str:
    """``bytes_or_text`` as str (bytes are decoded with ``encoding``)."""
    if isinstance(bytes_or_text, str):
        return bytes_or_text
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text.decode(encoding)
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


as_str = as_text


def as_str_any(value: Any, encoding: str = "utf-8") -> str:
    """``str(value)``, with bytes decoded."""
    return as_str(value, encoding) if isinstance(value, bytes) else str(value)


def path_to_str(path: Any) -> Any:
    """A path-like object as a str; anything else unchanged."""
    return os.fspath(path) if isinstance(path, os.PathLike) else path


def dimension_value(dimension: Any) -> int | None:
    """The int (or None) of a ``Dimension``, or ``dimension`` itself."""
    return dimension.value if isinstance(dimension, Dimension) else dimension


def dimension_at_index(shape: Any, index: int) -> Dimension:
    from ..framework.tensor_shape import as_shape

    shape = as_shape(shape)
    return Dimension(None) if shape.rank is None else shape.dims[index]


def forward_compatible(year: int, month: int, day: int) -> bool:
    """TF's forward-compatibility window: dataflow has none, so every date is past."""
    return True


@contextlib.contextmanager
def forward_compatibility_horizon(year: int, month: int, day: int) -> Iterator[None]:
    """A context in which ``forward_compatible`` reasons as if the date were this one:
    dataflow has no window, so it answers the same inside (every date is past)."""
    datetime.date(year, month, day)  # a date that does not exist is a ValueError, as TF1
    yield


__getattr__ = missing_name_hook("compat", __name__)

del missing_name_hook  # not a TF1 name: keep it out of the namespace
