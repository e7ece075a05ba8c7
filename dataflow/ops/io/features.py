"""The feature specs of ``tf.io``'s parsers (``FixedLenFeature``, ``VarLenFeature``,
``FixedLenSequenceFeature``, ``SparseFeature``) and how a ``SparseFeature`` is parsed.

A ``SparseFeature`` is not parsed by the kernel: as in TF, its index keys and its value
key are parsed as ``VarLenFeature``s (int64 indices) and then merged, a composite of
graph ops: the entry ``j`` of the values list of a proto gets the coordinates ``(batch
row, index_0[j], ..., index_k[j])`` (no batch row for a single proto), the dense shape is
``[batch] + size``, and unless ``already_sorted`` the entries are put in row-major order
(a stable ``argsort`` of their linear positions). The helper ``VarLenFeature``s are
dropped from the result unless the caller asked for those keys too.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from ...framework import dtypes
from ...framework.graph import Tensor
from ...framework.scopes import name_scope
from ...framework.sparse_tensor import SparseTensor
from .. import array as array_ops
from ..cast import cast
from ..constant import constant
from ..math.ordering import argsort

FixedLenFeature = namedtuple("FixedLenFeature", ["shape", "dtype", "default_value"])
FixedLenFeature.__new__.__defaults__ = (None,)
FixedLenFeature.__doc__ = "A dense feature of a fixed shape (``default_value`` when absent)."
VarLenFeature = namedtuple("VarLenFeature", ["dtype"])
VarLenFeature.__doc__ = "A feature of any length, parsed into a ``SparseTensor``."
FixedLenSequenceFeature = namedtuple(
    "FixedLenSequenceFeature", ["shape", "dtype", "allow_missing", "default_value"]
)
FixedLenSequenceFeature.__new__.__defaults__ = (False, None)
FixedLenSequenceFeature.__doc__ = (
    "A dense feature of rows of ``shape``, as many as the proto holds (padded to the "
    "longest in a batch with ``default_value``)."
)
SparseFeature = namedtuple(
    "SparseFeature", ["index_key", "value_key", "dtype", "size", "already_sorted"]
)
SparseFeature.__new__.__defaults__ = (False,)
SparseFeature.__doc__ = (
    "A ``SparseTensor`` built from an index feature per dimension (``index_key``, a key "
    "or a list of keys, int64) and a value feature (``value_key``), of dense shape "
    "``size`` (an int or a list, one per index key)."
)


def _as_list(value: Any) -> list:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def expand_sparse_features(features: dict) -> dict:
    """``features`` with each ``SparseFeature`` replaced by the ``VarLenFeature``s of its
    index and value keys.

    Raises:
        ValueError: index keys and sizes of different lengths, or one key asked for with
            two different specs.
    """
    plain = {k: v for k, v in features.items() if not isinstance(v, SparseFeature)}
    for key, spec in features.items():
        if not isinstance(spec, SparseFeature):
            continue
        index_keys, sizes = _as_list(spec.index_key), _as_list(spec.size)
        if len(index_keys) != len(sizes):
            raise ValueError(
                f"SparseFeature {key}: index_key and size must have the same number of "
                f"entries, got {index_keys} and {sizes}"
            )
        wanted = [(k, VarLenFeature(dtypes.int64)) for k in index_keys]
        wanted.append((spec.value_key, VarLenFeature(dtypes.as_dtype(spec.dtype))))
        for helper_key, helper in wanted:
            known = plain.setdefault(helper_key, helper)
            if not isinstance(known, VarLenFeature) or dtypes.as_dtype(
                known.dtype
            ) != dtypes.as_dtype(helper.dtype):
                raise ValueError(f"Conflicting types for feature {helper_key}: {known}, {helper}")
    return plain


def merge_sparse_features(parsed: dict, features: dict) -> dict:
    """The parser's result for ``expand_sparse_features(features)`` turned into the
    result for ``features``: each ``SparseFeature`` merged, helper keys dropped."""
    out = {key: parsed[key] for key in features if not isinstance(features[key], SparseFeature)}
    for key, spec in features.items():
        if isinstance(spec, SparseFeature):
            ids = [parsed[k] for k in _as_list(spec.index_key)]
            sizes = [int(s) for s in _as_list(spec.size)]
            out[key] = _merge(ids, parsed[spec.value_key], sizes, bool(spec.already_sorted))
    return out


def _merge(ids: list, values: SparseTensor, sizes: list, already_sorted: bool) -> SparseTensor:
    with name_scope(None, "SparseMerge", [values.indices, values.values]):
        rank = values.indices.shape.as_list()[1]
        prefix = values.indices[:, : rank - 1]  # the batch row, or nothing for one proto
        columns = [array_ops.reshape(cast(sp.values, dtypes.int64), [-1, 1]) for sp in ids]
        indices = array_ops.concat([prefix, *columns], axis=1)
        size = constant(sizes, dtypes.int64)
        shape = array_ops.concat([values.dense_shape[: rank - 1], size], axis=0)
        if already_sorted:
            return SparseTensor(indices, values.values, shape)
        linear: Tensor = indices[:, 0]
        for j in range(1, rank - 1 + len(sizes)):
            linear = linear * shape[j] + indices[:, j]
        order = argsort(linear, stable=True)
        return SparseTensor(
            array_ops.gather(indices, order), array_ops.gather(values.values, order), shape
        )
