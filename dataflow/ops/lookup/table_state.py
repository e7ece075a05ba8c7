"""The state behind a hash table: its keys and values on one device.

TF1's ``HashTable`` semantics (``lookup_table_op.cc``):

* a table is empty and *uninitialized* until an initializer inserts its entries; a
  lookup before that fails with ``FailedPreconditionError`` ("Table not initialized."),
  while ``size`` is 0;
* one initialization inserts every entry; a key given twice with different values is
  ``FailedPreconditionError`` (a vocabulary file with a repeated line), twice with the
  same value is one entry;
* running an initializer again with the same entries does nothing (every worker of a
  cluster may run ``tables_initializer``), with other entries it is
  ``FailedPreconditionError``.

The entries are kept as arrays: integer keys sorted, so a lookup is one
``searchsorted`` over the batch; string keys (``bytes``, a host object array) in a dict,
one C-level dict probe per element. Entries never change once initialized, so lookups
take no lock; initialization holds one.

A plain class; no Dask, testable alone.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from ...framework import errors


class TableState:
    """The entries of one table; see the module docstring."""

    def __init__(self, name: str, key_dtype: Any, value_dtype: Any) -> None:
        self.name = name
        self.key_dtype, self.value_dtype = np.dtype(key_dtype), np.dtype(value_dtype)
        self.string_keys = self.key_dtype.kind == "O"
        self._lock = threading.Lock()
        self._keys: np.ndarray | None = None  # sorted keys (integers) / dict order (strings)
        self._values: np.ndarray | None = None
        self._index: dict[Any, int] | None = None  # string key -> row

    @property
    def initialized(self) -> bool:
        return self._keys is not None

    def _check(self) -> tuple[np.ndarray, np.ndarray]:
        keys, values = self._keys, self._values
        if keys is None or values is None:
            raise errors.FailedPreconditionError(
                None, None, f"Table not initialized. (table '{self.name}')"
            )
        return keys, values

    def initialize(self, keys: np.ndarray, values: np.ndarray) -> None:
        """Inserts ``keys[i] -> values[i]`` (1-D host arrays of one length)."""
        if keys.shape != values.shape:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"Expected shape {list(keys.shape)} for value, got {list(values.shape)} "
                f"(table '{self.name}')",
            )
        unique_keys, unique_values = self._entries(keys, values)
        with self._lock:
            if self._keys is not None:
                if not self._same(unique_keys, unique_values):
                    raise errors.FailedPreconditionError(
                        None,
                        None,
                        f"Table was already initialized with different data. (table '{self.name}')",
                    )
                return
            if self.string_keys:
                self._index = {k: i for i, k in enumerate(unique_keys.tolist())}
            self._values = unique_values
            self._keys = unique_keys

    def _duplicate(self, key: Any, first: Any, second: Any) -> Exception:
        text = key.decode(errors="replace") if isinstance(key, bytes) else key
        show = [v.decode(errors="replace") if isinstance(v, bytes) else v for v in (first, second)]
        return errors.FailedPreconditionError(
            None,
            None,
            f"HashTable has different value for same key. Key {text} has {show[0]} and "
            f"trying to add value {show[1]} (table '{self.name}')",
        )

    def _entries(self, keys: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The distinct entries (integer keys sorted); a conflicting duplicate raises."""
        if self.string_keys:
            seen: dict[Any, Any] = {}
            for key, value in zip(keys.tolist(), values.tolist()):
                first = seen.setdefault(key, value)
                if first != value:
                    raise self._duplicate(key, first, value)
            out_keys = np.empty(len(seen), dtype=object)
            out_keys[:] = list(seen)
            out_values = np.empty(len(seen), dtype=values.dtype)
            out_values[:] = list(seen.values())
            return out_keys, out_values
        order = np.argsort(keys, kind="stable")
        keys, values = keys[order], values[order]
        same_key = keys[1:] == keys[:-1]
        clash = np.flatnonzero(same_key & (values[1:] != values[:-1]))
        if clash.size:
            i = int(clash[0])
            raise self._duplicate(keys[i].item(), values[i].item(), values[i + 1].item())
        keep = np.concatenate([[True], ~same_key])[: len(keys)]
        return keys[keep], values[keep]

    def _same(self, keys: np.ndarray, values: np.ndarray) -> bool:
        mine_keys, mine_values = self._check()
        if len(keys) != len(mine_keys):
            return False
        if self.string_keys:
            assert self._index is not None
            rows = [self._index.get(k, -1) for k in keys.tolist()]
            if min(rows, default=0) < 0:
                return False
            return bool(np.array_equal(mine_values[rows], values))
        return bool(np.array_equal(mine_keys, keys) and np.array_equal(mine_values, values))

    def find(self, keys: np.ndarray, default: Any) -> np.ndarray:
        """The value of each key (``default`` where absent), in ``keys``' shape."""
        table_keys, table_values = self._check()
        flat = keys.reshape(-1)
        if self.string_keys:
            assert self._index is not None
            index = self._index
            keys_list = flat.tolist()
            rows = np.fromiter(map(index.get, keys_list, [-1] * len(keys_list)), np.int64)
        else:
            pos = np.minimum(np.searchsorted(table_keys, flat), max(len(table_keys) - 1, 0))
            found = table_keys[pos] == flat if len(table_keys) else np.zeros(len(flat), bool)
            rows = np.where(found, pos, -1)
        hit = rows >= 0
        out = np.empty(len(flat), dtype=table_values.dtype)
        out[:] = default
        out[hit] = table_values[rows[hit]]
        return out.reshape(keys.shape)

    def size(self) -> int:
        return 0 if self._keys is None else len(self._keys)

    def export(self) -> tuple[np.ndarray, np.ndarray]:
        """Every key and its value (an uninitialized table has none)."""
        if self._keys is None or self._values is None:
            return np.empty(0, self.key_dtype), np.empty(0, self.value_dtype)
        return self._keys.copy(), self._values.copy()
