"""Tensor element types, mirroring ``tf.DType``.

A ``DType`` wraps a numpy dtype and answers the questions shape/dtype rules ask
(floating? integer? its base type?). ``resource`` is the type of variable handles and
``string`` of byte strings; neither maps to a numeric numpy type.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np


class DType:
    """An element type of a tensor (``tf.float32`` and friends)."""

    # The kind answers are fixed per type and asked by every shape rule, so they are
    # worked out once here rather than with ``np.issubdtype`` on each question.
    __slots__ = ("_name", "_np", "_floating", "_complex", "_integer", "_unsigned")

    def __init__(self, name: str, np_dtype: Any):
        self._name = name
        self._np = np_dtype

        def kind(group: Any) -> builtins.bool:
            return np_dtype is not None and builtins.bool(np.issubdtype(np_dtype, group))

        self._floating = kind(np.floating)
        self._complex = kind(np.complexfloating)
        self._integer = kind(np.integer)
        self._unsigned = kind(np.unsignedinteger)

    @property
    def name(self) -> str:
        return self._name

    @property
    def as_numpy_dtype(self) -> Any:
        return self._np

    @property
    def base_dtype(self) -> DType:
        return self

    @property
    def is_floating(self) -> builtins.bool:
        return self._floating

    @property
    def is_complex(self) -> builtins.bool:
        return self._complex

    @property
    def is_integer(self) -> builtins.bool:
        return self._integer

    @property
    def is_unsigned(self) -> builtins.bool:
        return self._unsigned

    @property
    def is_bool(self) -> builtins.bool:
        return self._np is np.bool_

    @property
    def is_numeric(self) -> builtins.bool:
        return self._floating or self._integer or self._complex

    @property
    def size(self) -> int:
        return np.dtype(self._np).itemsize if self._np is not None else 0

    @property
    def min(self):
        return np.finfo(self._np).min if self.is_floating else np.iinfo(self._np).min

    @property
    def max(self):
        return np.finfo(self._np).max if self.is_floating else np.iinfo(self._np).max

    def is_compatible_with(self, other: Any) -> builtins.bool:
        return self is as_dtype(other)

    def __repr__(self) -> str:
        return f"tf.{self._name}"

    def __eq__(self, other: object) -> builtins.bool:
        if other is self:
            return True
        if other is None:
            return False
        try:
            return self is as_dtype(other)
        except TypeError:
            return False

    def __ne__(self, other: object) -> builtins.bool:
        return other is not self and not self.__eq__(other)

    def __hash__(self) -> int:
        return hash(self._name)

    def __reduce__(self):
        return as_dtype, (self._name,)


float16 = DType("float16", np.float16)
float32 = DType("float32", np.float32)
float64 = DType("float64", np.float64)
int8 = DType("int8", np.int8)
int16 = DType("int16", np.int16)
int32 = DType("int32", np.int32)
int64 = DType("int64", np.int64)
uint8 = DType("uint8", np.uint8)
uint16 = DType("uint16", np.uint16)
uint32 = DType("uint32", np.uint32)
uint64 = DType("uint64", np.uint64)
bool = DType("bool", np.bool_)
complex64 = DType("complex64", np.complex64)
complex128 = DType("complex128", np.complex128)
string = DType("string", np.object_)
resource = DType("resource", None)
# A dataset (tf.data): its value is a host-side Python object, never an array.
variant = DType("variant", None)

half = float16
double = float64

_ALL = [
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
    bool,
    complex64,
    complex128,
    string,
    resource,
    variant,
]
_BY_NAME = {d.name: d for d in _ALL}
_BY_NAME.update({"half": float16, "double": float64, "float": float32})
_BY_NP = {np.dtype(d.as_numpy_dtype): d for d in _ALL if d.as_numpy_dtype is not None}
_BY_NP[np.dtype(np.str_)] = string
_BY_NP[np.dtype(np.bytes_)] = string


def as_dtype(value: Any) -> DType:
    """Converts a ``DType``, numpy dtype, type name or Python type to a ``DType``."""
    if isinstance(value, DType):
        return value
    if isinstance(value, str) and value in _BY_NAME:
        return _BY_NAME[value]
    if value is float:
        return float32
    if value is int:
        return int32
    if value is builtins.bool:
        return bool
    try:
        npd = np.dtype(value)
    except TypeError:
        raise TypeError(f"Cannot convert {value!r} to a dataflow DType.") from None
    if npd.kind in "US":
        return string
    if npd in _BY_NP:
        return _BY_NP[npd]
    raise TypeError(f"Cannot convert {value!r} to a dataflow DType.")
