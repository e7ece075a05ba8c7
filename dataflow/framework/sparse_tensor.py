"""``tf.SparseTensor``: a sparse value as three dense tensors, as in TF1.

``indices`` (int64 ``[N, rank]``, the coordinates of the present entries), ``values``
(``[N]``) and ``dense_shape`` (int64 ``[rank]``). Ops that take a sparse tensor are
composites over the three (``ops/sparse/sparse_ops.py``). A session fetches a ``SparseTensor``
as a ``SparseTensorValue`` of arrays, and a ``feed_dict`` entry keyed by one (a
``sparse_placeholder``) takes a ``SparseTensorValue`` or an ``(indices, values,
dense_shape)`` tuple: ``expand_sparse_fetches`` and ``expand_sparse_feeds`` turn both
into their three tensors.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Mapping
from typing import Any

from . import dtypes
from .graph import convert_to_tensor
from .indexed_slices import IndexedSlices, IndexedSlicesValue
from .operation import run_using_default_session
from .tensor_shape import TensorShape
from .tensor_util import constant_value

SparseTensorValue = namedtuple("SparseTensorValue", ["indices", "values", "dense_shape"])


class SparseTensor:
    """A sparse tensor of ``dense_shape`` with ``values`` at ``indices``.

    Raises:
        ValueError: ``indices`` is not a matrix, ``values`` not a vector, or
            ``dense_shape`` not a vector (when known).
    """

    def __init__(self, indices: Any, values: Any, dense_shape: Any):
        self._indices = convert_to_tensor(indices, dtype=dtypes.int64, name="indices")
        self._values = convert_to_tensor(values, name="values")
        self._dense_shape = convert_to_tensor(dense_shape, dtype=dtypes.int64, name="dense_shape")
        if self._indices.shape.rank not in (None, 2):
            raise ValueError(f"indices must be a matrix, got shape {self._indices.shape}")
        if self._values.shape.rank not in (None, 1):
            raise ValueError(f"values must be a vector, got shape {self._values.shape}")
        if self._dense_shape.shape.rank not in (None, 1):
            raise ValueError(f"dense_shape must be a vector, got shape {self._dense_shape.shape}")

    @classmethod
    def from_value(cls, value: Any) -> SparseTensor:
        if isinstance(value, SparseTensor):
            return value
        return cls(value.indices, value.values, value.dense_shape)

    indices = property(lambda self: self._indices)
    values = property(lambda self: self._values)
    dense_shape = property(lambda self: self._dense_shape)
    dtype = property(lambda self: self._values.dtype)
    op = property(lambda self: self._values.op)
    graph = property(lambda self: self._values.graph)

    @property
    def shape(self) -> TensorShape:
        """The static dense shape: known where ``dense_shape`` is a constant."""
        known = constant_value(self._dense_shape)
        if known is not None:
            return TensorShape([int(d) for d in known])
        rank = self._dense_shape.shape.as_list()[0] if self._dense_shape.shape.rank else None
        return TensorShape(None if rank is None else [None] * rank)

    def get_shape(self) -> TensorShape:
        return self.shape

    def eval(self, feed_dict: dict | None = None, session: Any = None) -> SparseTensorValue:
        """The value in ``session`` (the default session if none)."""
        return run_using_default_session(self, feed_dict, self.graph, session)

    def __repr__(self) -> str:
        return (
            f"SparseTensor(indices={self._indices!r}, values={self._values!r}, "
            f"dense_shape={self._dense_shape!r})"
        )


def convert_to_tensor_or_sparse_tensor(
    value: Any, dtype: Any = None, name: str | None = None
) -> Any:
    """``value`` as a ``SparseTensor`` if it is one (or a ``SparseTensorValue``), else as a
    ``Tensor`` (``tf.convert_to_tensor_or_sparse_tensor``).

    Raises:
        RuntimeError: a sparse ``value`` whose dtype is not ``dtype`` (TF1's class).
    """
    if isinstance(value, SparseTensorValue):
        value = SparseTensor.from_value(value)
    if isinstance(value, SparseTensor):
        if dtype is not None and value.dtype != dtypes.as_dtype(dtype):
            raise RuntimeError(
                f"Sparse dtype: requested = {dtypes.as_dtype(dtype).name}, "
                f"actual = {value.dtype.name}"
            )
        return value
    return convert_to_tensor(value, dtype=dtype, name=name)


def expand_sparse_fetches(fetches: Any) -> Any:
    """``fetches`` with each ``SparseTensor`` replaced by a ``SparseTensorValue`` of its
    three tensors (fetched, re-packed, they come back as a value of arrays), and each
    ``IndexedSlices`` by an ``IndexedSlicesValue`` likewise."""
    if isinstance(fetches, SparseTensor):
        return SparseTensorValue(fetches.indices, fetches.values, fetches.dense_shape)
    if isinstance(fetches, IndexedSlices):
        if fetches.dense_shape is None:
            raise TypeError(f"cannot fetch an IndexedSlices without a dense_shape: {fetches!r}")
        return IndexedSlicesValue(fetches.values, fetches.indices, fetches.dense_shape)
    if isinstance(fetches, Mapping):
        return type(fetches)((k, expand_sparse_fetches(v)) for k, v in fetches.items())  # type: ignore[call-arg]
    if isinstance(fetches, tuple) and hasattr(type(fetches), "_fields"):
        return type(fetches)(*(expand_sparse_fetches(v) for v in fetches))
    if isinstance(fetches, (list, tuple)):
        return type(fetches)(expand_sparse_fetches(v) for v in fetches)
    return fetches


def has_sparse(fetches: Any) -> bool:
    if isinstance(fetches, (SparseTensor, IndexedSlices)):
        return True
    if isinstance(fetches, Mapping):
        return any(has_sparse(v) for v in fetches.values())
    if isinstance(fetches, (list, tuple)):
        return any(has_sparse(v) for v in fetches)
    return False


def expand_sparse_feeds(feed_dict: dict) -> dict:
    """``feed_dict`` with each ``SparseTensor`` key fed through its three tensors.

    Raises:
        TypeError: a sparse key's value is not a ``SparseTensorValue`` or a 3-tuple.
    """
    out: dict = {}
    for key, value in feed_dict.items():
        if not isinstance(key, SparseTensor):
            out[key] = value
            continue
        if isinstance(value, (SparseTensor,)):
            raise TypeError("a SparseTensor is fed a SparseTensorValue, not a SparseTensor")
        try:
            indices, values, dense_shape = value
        except (TypeError, ValueError):
            raise TypeError(
                "a SparseTensor must be fed a SparseTensorValue or an (indices, values, "
                f"dense_shape) tuple, got {type(value).__name__}"
            ) from None
        out[key.indices], out[key.values], out[key.dense_shape] = indices, values, dense_shape
    return out
