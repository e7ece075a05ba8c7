"""Vocabulary tables: ``tf.lookup.StaticVocabularyTable``, TF1's
``tf.contrib.lookup.IdTableWithHashBuckets`` and the builders
``index_table_from_file``/``_from_tensor`` and
``index_to_string_table_from_file``/``_from_tensor`` (``tf.contrib.lookup`` in TF 1.15).

A vocabulary table maps a token to its id: the vocabulary's own ids from a hash table
(``lookup/tables.py``, default -1), and each out-of-vocabulary token to one of
``num_oov_buckets`` extra ids after them, ``vocab_size + Fingerprint64(token) %
num_oov_buckets`` (``lookup/fingerprint.py``), so an unseen token still gets an
embedding row. The composite is TF1's: a find, a hash, and a ``where`` choosing between
them, in a name scope.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from ...framework import dtypes
from ...framework.graph import Tensor, convert_to_tensor
from ...framework.scopes import name_scope
from ...framework.sparse_tensor import SparseTensor
from ..array import range_, size
from ..cast import cast
from ..math.arith import add
from ..math.compare import not_equal, where
from .fingerprint import hash_bucket_fast
from .tables import (
    HashTable,
    KeyValueTensorInitializer,
    StaticHashTable,
    TextFileIndex,
    TextFileInitializer,
)

HasherSpec = namedtuple("HasherSpec", ["hasher", "key"])
HasherSpec.__doc__ = "How out-of-vocabulary keys are hashed: ``hasher`` and its ``key``."
FastHashSpec = HasherSpec("fasthash", None)


def _oov_ids(table: Any, keys: Any, num_oov_buckets: int, name: str | None) -> Any:
    """``table``'s id of each key, and a bucket id after the vocabulary for the rest."""
    sparse = keys if isinstance(keys, SparseTensor) else None
    values = sparse.values if sparse is not None else convert_to_tensor(keys)
    with name_scope(name, "hash_table_Lookup"):
        buckets = hash_bucket_fast(values, num_oov_buckets, name="hash_bucket")
        if table is not None:
            ids = table.lookup(values)
            buckets = add(buckets, table.size())
            ids = where(not_equal(ids, table.default_value), ids, buckets)
        else:
            ids = buckets
    if sparse is not None:
        return SparseTensor(sparse.indices, ids, sparse.dense_shape)
    return ids


class StaticVocabularyTable:
    """A vocabulary's ids, and ``num_oov_buckets`` ids after them for other keys
    (``tf.lookup.StaticVocabularyTable``).

    Args:
        initializer: fills the vocabulary (int64 values: the ids).
        num_oov_buckets: how many out-of-vocabulary ids (> 0).
        lookup_key_dtype: the dtype of looked-up keys (default the initializer's).
        name: the table's name scope.
    """

    def __init__(
        self,
        initializer: Any,
        num_oov_buckets: int,
        lookup_key_dtype: Any = None,
        name: str | None = None,
    ) -> None:
        if num_oov_buckets <= 0:
            raise ValueError("oov_buckets must be > 0.")
        if initializer.value_dtype != dtypes.int64:
            raise TypeError(
                f"Invalid value dtype, expected int64 but got {initializer.value_dtype.name}."
            )
        key_dtype = initializer.key_dtype
        if not (key_dtype.is_integer or key_dtype == dtypes.string):
            raise TypeError(f"Invalid key dtype, expected integer or string, got {key_dtype}.")
        self._key_dtype = dtypes.as_dtype(lookup_key_dtype or key_dtype)
        self._num_oov_buckets = num_oov_buckets
        with name_scope(name, "hash_table") as scope:
            self._name = scope[:-1].rsplit("/", 1)[-1]
            self._table = StaticHashTable(initializer, -1, name="table")

    @property
    def name(self) -> str:
        return self._name

    @property
    def key_dtype(self) -> dtypes.DType:
        return self._key_dtype

    @property
    def value_dtype(self) -> dtypes.DType:
        return dtypes.int64

    @property
    def resource_handle(self) -> Tensor:
        return self._table.resource_handle

    @property
    def initializer(self) -> Any:
        return self._table.initializer

    def size(self, name: str | None = None) -> Tensor:
        """The vocabulary's size plus the number of buckets (int64)."""
        with name_scope(name, f"{self._name}_Size"):
            return add(self._table.size(), self._num_oov_buckets)

    def lookup(self, keys: Any, name: str | None = None) -> Any:
        """The id of each key (a ``Tensor``, or a ``SparseTensor`` for one)."""
        values = keys.values if isinstance(keys, SparseTensor) else convert_to_tensor(keys)
        if values.dtype != self._key_dtype:
            raise TypeError(
                f"Signature mismatch. Keys must be dtype {self._key_dtype.name}, got "
                f"{values.dtype.name}."
            )
        if values.dtype.is_integer and values.dtype != dtypes.int64:
            keys = _cast_keys(keys)
        return _oov_ids(self._table, keys, self._num_oov_buckets, name or f"{self._name}_Lookup")


def _cast_keys(keys: Any) -> Any:
    if isinstance(keys, SparseTensor):
        return SparseTensor(keys.indices, cast(keys.values, dtypes.int64), keys.dense_shape)
    return cast(keys, dtypes.int64)


class IdTableWithHashBuckets:
    """TF1's ``tf.contrib.lookup.IdTableWithHashBuckets``: ``table``'s ids, and
    ``num_oov_buckets`` hashed ids after them (``table`` may be None: only buckets).

    Args:
        table: a table of int64 ids (its default value marks a missing key), or None.
        num_oov_buckets: how many out-of-vocabulary ids (>= 0).
        hasher_spec: ``FastHashSpec`` (FarmHash ``Fingerprint64``, TF1's default).
        name: the lookup's name scope.
        key_dtype: the dtype of looked-up keys (default the table's).
    """

    def __init__(
        self,
        table: Any,
        num_oov_buckets: int,
        hasher_spec: Any = FastHashSpec,
        name: str | None = None,
        key_dtype: Any = None,
    ) -> None:
        if table is None and num_oov_buckets <= 0:
            raise ValueError("oov_buckets must be > 0 if no table is supplied.")
        if num_oov_buckets < 0:
            raise ValueError(f"num_oov_buckets must be >= 0, got {num_oov_buckets}.")
        if not isinstance(hasher_spec, HasherSpec) or hasher_spec.hasher != "fasthash":
            raise ValueError(
                f"hasher_spec {hasher_spec!r}: dataflow hashes with FastHashSpec "
                "(FarmHash Fingerprint64), TF1's default; StrongHashSpec is not provided"
            )
        if table is not None and table.value_dtype != dtypes.int64:
            raise TypeError(f"Invalid value dtype, expected int64 but got {table.value_dtype}.")
        self._table = table
        self._num_oov_buckets = num_oov_buckets
        self._key_dtype = dtypes.as_dtype(
            key_dtype or (table.key_dtype if table is not None else dtypes.string)
        )
        self._name = name or (table.name if table is not None else "hash_bucket")

    @property
    def name(self) -> str:
        return self._name

    @property
    def key_dtype(self) -> dtypes.DType:
        return self._key_dtype

    @property
    def value_dtype(self) -> dtypes.DType:
        return dtypes.int64

    @property
    def init(self) -> Any:
        return self._table.init if self._table is not None else None

    def size(self, name: str | None = None) -> Tensor:
        """The table's size plus the number of buckets (int64)."""
        with name_scope(name, f"{self._name}_Size"):
            if self._table is None:
                return convert_to_tensor(self._num_oov_buckets, dtypes.int64)
            return add(self._table.size(), self._num_oov_buckets)

    def lookup(self, keys: Any, name: str | None = None) -> Any:
        """The id of each key (a ``Tensor``, or a ``SparseTensor`` for one)."""
        values = keys.values if isinstance(keys, SparseTensor) else convert_to_tensor(keys)
        if values.dtype != self._key_dtype:
            raise TypeError(
                f"Signature mismatch. Keys must be dtype {self._key_dtype.name}, got "
                f"{values.dtype.name}."
            )
        if values.dtype.is_integer and values.dtype != dtypes.int64:
            keys = _cast_keys(keys)
        if self._num_oov_buckets == 0:
            assert self._table is not None
            return self._table.lookup(keys, name=name)
        return _oov_ids(self._table, keys, self._num_oov_buckets, name or f"{self._name}_Lookup")


def _check_keys(key_dtype: dtypes.DType, num_oov_buckets: int) -> None:
    if not (key_dtype.is_integer or key_dtype == dtypes.string):
        raise ValueError("Only integer and string keys are supported.")
    if num_oov_buckets < 0:
        raise ValueError(f"num_oov_buckets must be greater or equal than 0, got {num_oov_buckets}.")


def _with_buckets(table: Any, num_oov_buckets: int, hasher_spec: Any, key_dtype: Any) -> Any:
    if not num_oov_buckets and key_dtype in (dtypes.string, dtypes.int64):
        return table
    return IdTableWithHashBuckets(
        table, num_oov_buckets, hasher_spec=hasher_spec, key_dtype=key_dtype
    )


def index_table_from_file(
    vocabulary_file: Any = None,
    num_oov_buckets: int = 0,
    vocab_size: int | None = None,
    default_value: int = -1,
    hasher_spec: Any = FastHashSpec,
    key_dtype: Any = dtypes.string,
    name: str | None = None,
    key_column_index: int = TextFileIndex.WHOLE_LINE,
    value_column_index: int = TextFileIndex.LINE_NUMBER,
    delimiter: str = "\t",
) -> Any:
    """A table mapping each line of ``vocabulary_file`` (or a column of it) to its line
    number; other keys get ``default_value``, or one of ``num_oov_buckets`` ids after
    the vocabulary (TF 1.15's ``tf.contrib.lookup.index_table_from_file``).

    Args:
        vocabulary_file: the file, one token per line.
        num_oov_buckets: ids for out-of-vocabulary keys (0: ``default_value``).
        vocab_size: read only the first ``vocab_size`` lines.
        default_value: the id of a missing key when there are no buckets.
        hasher_spec: how keys are hashed to buckets (``FastHashSpec``).
        key_dtype: the keys' dtype (string or integer).
        name: the name scope (default ``string_to_index``).
        key_column_index, value_column_index, delimiter: which columns of a
            ``delimiter``-separated file hold keys and ids.

    Returns:
        A table whose ``lookup`` gives int64 ids; run ``tf.tables_initializer()`` first.
    """
    if not vocabulary_file:
        raise ValueError("vocabulary_file must be specified and must not be empty.")
    key_dtype = dtypes.as_dtype(key_dtype)
    _check_keys(key_dtype, num_oov_buckets)
    if vocab_size is not None and vocab_size < 1:
        raise ValueError(f"vocab_size must be greater than 0, got {vocab_size}.")
    with name_scope(name, "string_to_index"):
        file_keys = dtypes.int64 if key_dtype.is_integer else dtypes.string
        init = TextFileInitializer(
            vocabulary_file,
            file_keys,
            key_column_index,
            dtypes.int64,
            value_column_index,
            vocab_size=vocab_size,
            delimiter=delimiter,
            name="table_init",
        )
        table = HashTable(init, default_value)
        return _with_buckets(table, num_oov_buckets, hasher_spec, key_dtype)


def index_table_from_tensor(
    vocabulary_list: Any,
    num_oov_buckets: int = 0,
    default_value: int = -1,
    hasher_spec: Any = FastHashSpec,
    dtype: Any = dtypes.string,
    name: str | None = None,
) -> Any:
    """A table mapping each entry of ``vocabulary_list`` (a 1-D tensor of distinct
    tokens) to its position; other keys get ``default_value`` or a bucket id after the
    vocabulary (TF 1.15's ``tf.contrib.lookup.index_table_from_tensor``)."""
    if vocabulary_list is None:
        raise ValueError("vocabulary_list must be specified.")
    dtype = dtypes.as_dtype(dtype)
    _check_keys(dtype, num_oov_buckets)
    with name_scope(name, "string_to_index"):
        keys = convert_to_tensor(vocabulary_list)
        if keys.dtype.is_integer != dtype.is_integer:
            raise ValueError(f"Expected {dtype.name}, got {keys.dtype.name}.")
        if keys.dtype.is_integer:
            keys = cast(keys, dtypes.int64)
        ids = range_(0, _vector_size(keys), dtype=dtypes.int64)
        init = KeyValueTensorInitializer(keys, ids, name="table_init")
        table = HashTable(init, default_value)
        return _with_buckets(table, num_oov_buckets, hasher_spec, dtype)


def _vector_size(t: Tensor) -> Any:
    return cast(size(t), dtypes.int64)


def index_to_string_table_from_file(
    vocabulary_file: Any,
    vocab_size: int | None = None,
    default_value: Any = "UNK",
    name: str | None = None,
    key_column_index: int = TextFileIndex.LINE_NUMBER,
    value_column_index: int = TextFileIndex.WHOLE_LINE,
    delimiter: str = "\t",
) -> HashTable:
    """A table mapping an int64 id to line ``id`` of ``vocabulary_file`` (missing ids:
    ``default_value``), TF 1.15's ``tf.contrib.lookup.index_to_string_table_from_file``."""
    if not vocabulary_file:
        raise ValueError("vocabulary_file must be specified and must not be empty.")
    if vocab_size is not None and vocab_size < 1:
        raise ValueError(f"vocab_size must be greater than 0, got {vocab_size}.")
    with name_scope(name, "index_to_string"):
        init = TextFileInitializer(
            vocabulary_file,
            dtypes.int64,
            key_column_index,
            dtypes.string,
            value_column_index,
            vocab_size=vocab_size,
            delimiter=delimiter,
            name="table_init",
        )
        return HashTable(init, default_value)


def index_to_string_table_from_tensor(
    vocabulary_list: Any, default_value: Any = "UNK", name: str | None = None
) -> HashTable:
    """A table mapping an int64 id to entry ``id`` of ``vocabulary_list`` (a 1-D string
    tensor; missing ids: ``default_value``), TF 1.15's
    ``tf.contrib.lookup.index_to_string_table_from_tensor``."""
    if vocabulary_list is None:
        raise ValueError("vocabulary_list must be specified.")
    with name_scope(name, "index_to_string"):
        values = convert_to_tensor(vocabulary_list, dtypes.string)
        ids = range_(0, _vector_size(values), dtype=dtypes.int64)
        init = KeyValueTensorInitializer(ids, values, name="table_init")
        return HashTable(init, default_value)
