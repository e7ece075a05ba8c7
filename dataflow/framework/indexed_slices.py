"""``tf.IndexedSlices``: a tensor given by some of its slices along dimension 0, as in TF1.

``values`` holds slices (shape ``[N] + dense_shape[1:]``), ``indices`` (an int vector of
length ``N``) says which row of the dense tensor each slice is, and ``dense_shape``
(optional) the dense tensor's shape. Rows may repeat: the dense tensor is the *sum* of
the slices at each row, zeros elsewhere. The gradient of a gather from a variable is one
(``ops/array/indexing.py``): a step touching 1,000 rows of a 1,000,000-row embedding never
builds a dense 1,000,000-row gradient, and optimizers update just those rows.

It is a plain value class holding three tensors, not an op output: converting it to a
``Tensor`` (``convert_to_tensor``, or any op given it) builds the dense sum with one
``UnsortedSegmentSum`` (the op library registers that conversion; this layer has no
ops). A session fetches it as an ``IndexedSlicesValue`` of arrays.

Example: ``IndexedSlices(values=[[1., 2.], [3., 4.]], indices=[2, 0], dense_shape=[3, 2])``
is the dense ``[[3., 4.], [0., 0.], [1., 2.]]``.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from . import dtypes
from .graph import convert_to_tensor
from .operation import Operation, Tensor
from .tensor_shape import TensorShape
from .tensor_util import constant_value

IndexedSlicesValue = namedtuple("IndexedSlicesValue", ["values", "indices", "dense_shape"])


class IndexedSlices:
    """A sparse representation of a set of tensor slices at given indices.

    Args:
        values: a tensor of shape ``[N] + dense_shape[1:]``.
        indices: an integer vector of length ``N``: the row of each slice.
        dense_shape: optional integer vector, the shape of the dense tensor.
    """

    def __init__(self, values: Any, indices: Any, dense_shape: Any = None):
        self._values = convert_to_tensor(values)
        self._indices = convert_to_tensor(indices)
        self._dense_shape = None if dense_shape is None else convert_to_tensor(dense_shape)
        if not self._indices.dtype.is_integer:
            raise TypeError(f"IndexedSlices indices must be integers, got {self._indices.dtype}")

    values = property(lambda self: self._values, doc="The slices, ``[N] + dense_shape[1:]``.")
    indices = property(lambda self: self._indices, doc="The row of each slice, ``[N]``.")
    dense_shape = property(lambda self: self._dense_shape, doc="The dense shape, or None.")

    @property
    def dtype(self) -> Any:
        return self._values.dtype

    @property
    def name(self) -> str:
        return self._values.name

    @property
    def op(self) -> Operation:
        return self._values.op

    @property
    def graph(self) -> Any:
        return self._values.graph

    @property
    def device(self) -> str:
        return self._values.device

    @property
    def shape(self) -> TensorShape:
        """The static dense shape: ``dense_shape``'s value where known at build time,
        else what the values' shape says of dimensions 1 and up."""
        if self._dense_shape is not None:
            known = constant_value(self._dense_shape)
            if known is not None:
                return TensorShape([int(d) for d in known])
        rest = self._values.shape
        if rest.rank is None:
            return TensorShape(None)
        return TensorShape([None]).concatenate(rest[1:])

    def get_shape(self) -> TensorShape:
        return self.shape

    def consumers(self) -> list[Operation]:
        """The ops using any of the three tensors."""
        tensors = [self._values, self._indices] + (
            [self._dense_shape] if self._dense_shape is not None else []
        )
        seen: dict[Operation, None] = {}
        for t in tensors:
            seen.update(dict.fromkeys(t.consumers()))
        return list(seen)

    def __neg__(self) -> IndexedSlices:
        return IndexedSlices(-self._values, self._indices, self._dense_shape)

    def __repr__(self) -> str:
        shape = "" if self._dense_shape is None else f", dense_shape={self._dense_shape!r}"
        return f"IndexedSlices(indices={self._indices!r}, values={self._values!r}{shape})"


def convert_to_tensor_or_indexed_slices(
    value: Any, dtype: Any = None, name: str | None = None
) -> Tensor | IndexedSlices:
    """``value`` itself when it is an ``IndexedSlices`` (of ``dtype`` if given), else
    ``convert_to_tensor(value, dtype, name)``.

    Raises:
        ValueError: ``dtype`` differs from the ``IndexedSlices``' dtype.
    """
    if isinstance(value, IndexedSlices):
        if dtype is not None and value.dtype != dtypes.as_dtype(dtype):
            raise ValueError(
                f"Tensor conversion requested dtype {dtype} for IndexedSlices with dtype "
                f"{value.dtype.name}: {value!r}"
            )
        return value
    return convert_to_tensor(value, dtype=dtype, name=name)
