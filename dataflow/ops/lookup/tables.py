"""``tf.lookup.StaticHashTable`` (and TF1's ``HashTable``), its initializers and
``tf.tables_initializer``.

A table is a resource on its device, like a queue (``queue/queues.py``): a
``HashTableV2`` handle op names it (a ``resource`` tensor), and the ops that take the
handle (initialize, find, size, export) are colocated with it, so they run where its
``TableState`` (``lookup/table_state.py``) lives in that device's resource store. A table
built with no shared name belongs to the session running it, as TF1's does (its store
name is ``kernel_context.private_name``; a closing session releases it); a text-file
table is shared under TF1's name for it
(``hash_table_<file>_<vocab_size>_<key_index>_<value_index>``), so the sessions of a
cluster reach one table per device.

Each initializer's op goes to ``GraphKeys.TABLE_INITIALIZERS``; ``tables_initializer()``
groups them, and ``Scaffold``'s default ``local_init_op`` runs it, as TF1's does.
``TextFileInitializer`` reads its file when the initializer runs, on the table's device:
a missing file is ``NotFoundError``, a short one (``vocab_size``) or a bad field
``InvalidArgumentError``, a repeated key with another value ``FailedPreconditionError``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...framework import dtypes, errors, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor, get_default_graph
from ...framework.kernel_context import Folded, private_name
from ...framework.scopes import name_scope
from ...framework.sparse_tensor import SparseTensor
from ...framework.tensor_shape import TensorShape, scalar
from ...framework.tensor_util import constant_value
from ..control.group import group, no_op
from ..host import to_host
from ..state.variables import GraphKeys
from .table_state import TableState

NOT_DIFF = registry.NOT_DIFFERENTIABLE


class TextFileIndex:
    """Special column indices of ``TextFileInitializer``: the whole line, or its
    (0-based) line number."""

    WHOLE_LINE = -2
    LINE_NUMBER = -1


def _key(name: str) -> str:
    return f"table:{name}"


def _state(ctx: Any, name: str) -> TableState:
    def missing() -> TableState:
        raise errors.NotFoundError(None, None, f"Table '{name}' does not exist on {ctx.device}")

    return ctx.resources.get_or_create(_key(name), missing)


# --- kernels -----------------------------------------------------------------------------
def _handle_kernel(ctx: Any, attrs: dict) -> Folded:
    # Without a shared name the table is the running session's own, as TF1's (private
    # to its kernel): another client's session on the same worker has a table of its own.
    name = attrs["shared_name"] or private_name(ctx.op_name, getattr(ctx, "session", ""))
    key_dtype, value_dtype = attrs["key_dtype"], attrs["value_dtype"]
    ctx.resources.get_or_create(
        _key(name),
        lambda: TableState(name, key_dtype.as_numpy_dtype, value_dtype.as_numpy_dtype),
        signature=f"HashTable of {key_dtype.name} keys to {value_dtype.name} values",
    )
    return Folded(name)


def _host(value: Any, dtype: dtypes.DType) -> np.ndarray:
    array = np.asarray(to_host(value))
    if dtype == dtypes.string:
        return np.asarray(array, dtype=object)
    return array.astype(dtype.as_numpy_dtype, copy=False)


def _init_kernel(ctx: Any, attrs: dict) -> Any:
    key_dtype, value_dtype = attrs["key_dtype"], attrs["value_dtype"]

    def initialize(handle: str, keys: Any, values: Any) -> None:
        _state(ctx, handle).initialize(_host(keys, key_dtype), _host(values, value_dtype))

    return initialize


def _field(text: bytes, dtype: dtypes.DType, line: int) -> Any:
    if dtype == dtypes.string:
        return text
    try:
        return int(text) if dtype.is_integer else float(text)
    except ValueError:
        raise errors.InvalidArgumentError(
            None,
            None,
            f"Field {text.decode(errors='replace')} in line {line} is not a valid {dtype.name}.",
        ) from None


def read_text_file(path: str, attrs: dict) -> tuple[np.ndarray, np.ndarray]:
    """The keys and values a ``TextFileInitializer`` with ``attrs`` reads from ``path``:
    lines without their ``\\n`` (or ``\\r\\n``), the first ``vocab_size`` of them when
    given, each cut at ``delimiter`` when a column index is asked for."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise errors.NotFoundError(None, None, f"{path}; No such file or directory") from None
    except IsADirectoryError:
        raise errors.FailedPreconditionError(None, None, f"{path}; Is a directory") from None
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    lines = [line[:-1] if line.endswith(b"\r") else line for line in lines]
    vocab_size = attrs["vocab_size"]
    if vocab_size != -1:
        if len(lines) < vocab_size:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"Invalid vocab_size in {path}: expected {vocab_size} but got {len(lines)}",
            )
        lines = lines[:vocab_size]
    delimiter = attrs["delimiter"].encode()
    key_index, value_index = attrs["key_index"], attrs["value_index"]
    columns = max(key_index, value_index) + 1
    split = None
    if columns > 0:
        split = [line.split(delimiter) for line in lines]
        for i, parts in enumerate(split):
            if len(parts) < columns:
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"Invalid number of columns in {path} line {i} "
                    f"({lines[i].decode(errors='replace')}) : expected {columns} got "
                    f"{len(parts)}",
                )

    def column(index: int, dtype: dtypes.DType) -> np.ndarray:
        if index == TextFileIndex.LINE_NUMBER:
            return np.arange(len(lines), dtype=np.int64)
        texts = lines if index == TextFileIndex.WHOLE_LINE else [p[index] for p in split or ()]
        out = np.empty(len(texts), dtype=object if dtype == dtypes.string else dtype.as_numpy_dtype)
        out[:] = [_field(t, dtype, i) for i, t in enumerate(texts)]
        return out

    return column(key_index, attrs["key_dtype"]), column(value_index, attrs["value_dtype"])


def _init_file_kernel(ctx: Any, attrs: dict) -> Any:
    def initialize(handle: str, filename: Any) -> None:
        path = np.asarray(to_host(filename)).item()
        path = path.decode() if isinstance(path, bytes) else str(path)
        _state(ctx, handle).initialize(*read_text_file(path, attrs))

    return initialize


def _find_kernel(ctx: Any, attrs: dict) -> Any:
    xp, key_dtype, value_dtype = ctx.xp, attrs["key_dtype"], attrs["value_dtype"]

    def find(handle: str, keys: Any, default: Any) -> Any:
        state = _state(ctx, handle)
        out = state.find(_host(keys, key_dtype), _host(default, value_dtype).item())
        return out if value_dtype == dtypes.string else xp.asarray(out)

    return find


def _size_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    return lambda handle: xp.asarray(_state(ctx, handle).size(), dtype=xp.int64)


def _export_kernel(ctx: Any, attrs: dict) -> Any:
    xp, value_dtype = ctx.xp, attrs["value_dtype"]

    def export(handle: str) -> tuple:
        keys, values = _state(ctx, handle).export()
        return keys, (values if value_dtype == dtypes.string else xp.asarray(values))

    return export


# --- shape rules -------------------------------------------------------------------------
def _infer_handle(op: Operation) -> list:
    return [(dtypes.resource, scalar())]


def _infer_init(op: Operation) -> list:
    _, keys, values = op.inputs
    _check_dtypes(op, keys.dtype, values.dtype)
    for what, t in (("keys", keys), ("values", values)):
        if t.shape.rank is not None and t.shape.rank != 1:
            raise ValueError(f"Shape must be rank 1 but is rank {t.shape.rank} for {what}")
    if not keys.shape.is_compatible_with(values.shape):
        raise ValueError(
            f"Shapes {keys.shape} and {values.shape} are incompatible: keys and values "
            "must have one length"
        )
    return []


def _infer_init_file(op: Operation) -> list:
    filename = op.inputs[1]
    if filename.dtype != dtypes.string or not filename.shape.is_compatible_with(scalar()):
        raise ValueError(f"filename must be a string scalar, got {filename!r}")
    return []


def _infer_find(op: Operation) -> list:
    _, keys, default = op.inputs
    _check_dtypes(op, keys.dtype, default.dtype)
    if default.shape.rank not in (None, 0):
        raise ValueError(f"Expected shape [] for default value, got {default.shape}")
    return [(op.attrs["value_dtype"], TensorShape(keys.shape))]


def _infer_size(op: Operation) -> list:
    return [(dtypes.int64, scalar())]


def _infer_export(op: Operation) -> list:
    vector = TensorShape([None])
    return [(op.attrs["key_dtype"], vector), (op.attrs["value_dtype"], vector)]


def _check_dtypes(op: Operation, key_dtype: dtypes.DType, value_dtype: dtypes.DType) -> None:
    if key_dtype != op.attrs["key_dtype"]:
        raise TypeError(
            f"Signature mismatch. Keys must be dtype {op.attrs['key_dtype'].name}, got "
            f"{key_dtype.name}."
        )
    if value_dtype != op.attrs["value_dtype"]:
        raise TypeError(
            f"Signature mismatch. Values must be dtype {op.attrs['value_dtype'].name}, got "
            f"{value_dtype.name}."
        )


for _type, _infer, _kernel in (
    ("HashTableV2", _infer_handle, _handle_kernel),
    ("InitializeTableV2", _infer_init, _init_kernel),
    ("InitializeTableFromTextFileV2", _infer_init_file, _init_file_kernel),
    ("LookupTableFindV2", _infer_find, _find_kernel),
    ("LookupTableSizeV2", _infer_size, _size_kernel),
    ("LookupTableExportV2", _infer_export, _export_kernel),
):
    registry.register(
        registry.OpDef(
            _type,
            _infer,
            _kernel,
            NOT_DIFF,
            stateful=True,
            gpu_kernel=False,  # as TF1's: tables live in host memory
        )
    )


# --- initializers ------------------------------------------------------------------------
class TableInitializerBase:
    """What initializes a table: its key and value dtypes and ``initialize(table)``."""

    def __init__(self, key_dtype: Any, value_dtype: Any) -> None:
        self._key_dtype = dtypes.as_dtype(key_dtype)
        self._value_dtype = dtypes.as_dtype(value_dtype)

    @property
    def key_dtype(self) -> dtypes.DType:
        return self._key_dtype

    @property
    def value_dtype(self) -> dtypes.DType:
        return self._value_dtype

    @property
    def shared_name(self) -> str | None:
        """The name tables initialized by this share their state under (None: private)."""
        return None

    def initialize(self, table: Any) -> Operation:
        raise NotImplementedError  # each initializer says how it fills a table

    def _add(self, table: Any, op_type: str, inputs: list, attrs: dict, name: str) -> Operation:
        """The op initializing ``table``, colocated with it, in TABLE_INITIALIZERS."""
        if self._key_dtype != table.key_dtype:
            raise TypeError(
                f"Invalid key dtype, expected {table.key_dtype.name} but got "
                f"{self._key_dtype.name}."
            )
        if self._value_dtype != table.value_dtype:
            raise TypeError(
                f"Invalid value dtype, expected {table.value_dtype.name} but got "
                f"{self._value_dtype.name}."
            )
        graph = get_default_graph()
        handle = table.resource_handle
        with graph.name_scope(name), graph.colocate_with(handle.op):
            op = graph.create_op(
                op_type,
                [handle, *inputs],
                dict(attrs, key_dtype=self._key_dtype, value_dtype=self._value_dtype),
                name=op_type,
            )
        graph.add_to_collection(GraphKeys.TABLE_INITIALIZERS, op)
        return op


class KeyValueTensorInitializer(TableInitializerBase):
    """Initializes a table from a tensor of keys and a tensor of values (1-D, one
    length).

    Args:
        keys: the keys (converted to ``key_dtype`` when given).
        values: the values (converted to ``value_dtype`` when given).
        key_dtype, value_dtype: optional dtypes.
        name: the initializer's name scope (default ``key_value_init``).
    """

    def __init__(
        self,
        keys: Any,
        values: Any,
        key_dtype: Any = None,
        value_dtype: Any = None,
        name: str | None = None,
    ) -> None:
        self._keys = convert_to_tensor(keys, dtype=key_dtype, name="keys")
        self._values = convert_to_tensor(values, dtype=value_dtype, name="values")
        self._name = name if name is not None else "key_value_init"
        super().__init__(self._keys.dtype, self._values.dtype)

    def initialize(self, table: Any) -> Operation:
        """The op filling ``table`` (added to ``GraphKeys.TABLE_INITIALIZERS``)."""
        return self._add(table, "InitializeTableV2", [self._keys, self._values], {}, self._name)


class TextFileInitializer(TableInitializerBase):
    """Initializes a table from a text file, one entry per line.

    Args:
        filename: the file's path (a string or a string scalar tensor).
        key_dtype: the keys' dtype.
        key_index: the column holding the key, or ``TextFileIndex.WHOLE_LINE`` /
            ``TextFileIndex.LINE_NUMBER``.
        value_dtype: the values' dtype.
        value_index: the column holding the value (or one of those two).
        vocab_size: read only this many lines (the file must have as many).
        delimiter: what separates columns (default a tab).
        name: the initializer's name scope (default ``text_file_init``).
    """

    def __init__(
        self,
        filename: Any,
        key_dtype: Any,
        key_index: int,
        value_dtype: Any,
        value_index: int,
        vocab_size: int | None = None,
        delimiter: str = "\t",
        name: str | None = None,
    ) -> None:
        key_dtype, value_dtype = dtypes.as_dtype(key_dtype), dtypes.as_dtype(value_dtype)
        for what, index, dtype in (
            ("key", key_index, key_dtype),
            ("value", value_index, value_dtype),
        ):
            if index < -2:
                raise ValueError(f"Invalid {what} index {index}.")
            if index == TextFileIndex.LINE_NUMBER and dtype != dtypes.int64:
                raise ValueError(
                    f"Signature mismatch. {what.capitalize()}s must be dtype int64, got "
                    f"{dtype.name}."
                )
        if key_index == TextFileIndex.WHOLE_LINE and not (
            key_dtype.is_integer or key_dtype == dtypes.string
        ):
            raise ValueError(
                f"Signature mismatch. Keys must be integer or string, got {key_dtype.name}."
            )
        if value_index == TextFileIndex.WHOLE_LINE and value_dtype != dtypes.string:
            raise ValueError(
                f"Signature mismatch. Values must be dtype string, got {value_dtype.name}."
            )
        if vocab_size is not None and vocab_size <= 0:
            raise ValueError(f"Invalid vocab_size {vocab_size}.")
        self._filename_arg = filename
        self._key_index, self._value_index = key_index, value_index
        self._vocab_size, self._delimiter = vocab_size, delimiter
        self._name = name if name is not None else "text_file_init"
        super().__init__(key_dtype, value_dtype)

    @property
    def shared_name(self) -> str | None:
        if not isinstance(self._filename_arg, (str, bytes)):
            return None  # a file named by a tensor: the table is the session's own
        filename = self._filename_arg
        filename = filename.decode() if isinstance(filename, bytes) else filename
        if self._vocab_size:
            return f"hash_table_{filename}_{self._vocab_size}_{self._key_index}_{self._value_index}"
        return f"hash_table_{filename}_{self._key_index}_{self._value_index}"

    def initialize(self, table: Any) -> Operation:
        """The op reading the file into ``table`` (added to
        ``GraphKeys.TABLE_INITIALIZERS``; a constant file name also to
        ``GraphKeys.ASSET_FILEPATHS``)."""
        graph = get_default_graph()
        with graph.name_scope(self._name) as scope:
            filename = convert_to_tensor(self._filename_arg, dtypes.string, name="asset_filepath")
        attrs = {
            "key_index": self._key_index,
            "value_index": self._value_index,
            "vocab_size": self._vocab_size or -1,
            "delimiter": self._delimiter,
        }
        op = self._add(table, "InitializeTableFromTextFileV2", [filename], attrs, scope)
        if constant_value(filename) is not None:
            graph.add_to_collection(GraphKeys.ASSET_FILEPATHS, filename)
        return op


# --- tables ------------------------------------------------------------------------------
class StaticHashTable:
    """A table of fixed entries, filled once by its initializer
    (``tf.lookup.StaticHashTable``).

    Args:
        initializer: a ``KeyValueTensorInitializer`` or ``TextFileInitializer``.
        default_value: the value of a key the table does not hold.
        name: the table's name (default ``hash_table``).
    """

    def __init__(self, initializer: Any, default_value: Any, name: str | None = None) -> None:
        self._initializer = initializer
        self._key_dtype = initializer.key_dtype
        self._value_dtype = initializer.value_dtype
        graph = get_default_graph()
        with graph.name_scope(name or "hash_table") as scope:
            self._handle = graph.create_op(
                "HashTableV2",
                [],
                {
                    "shared_name": initializer.shared_name or "",
                    "key_dtype": self._key_dtype,
                    "value_dtype": self._value_dtype,
                },
                name=scope,
            ).outputs[0]
            self._default_value = convert_to_tensor(
                default_value, dtype=self._value_dtype, name="Const"
            )
            self._init_op = initializer.initialize(self)

    @property
    def resource_handle(self) -> Tensor:
        return self._handle

    @property
    def name(self) -> str:
        return self._handle.op.name.rsplit("/", 1)[-1]

    @property
    def key_dtype(self) -> dtypes.DType:
        return self._key_dtype

    @property
    def value_dtype(self) -> dtypes.DType:
        return self._value_dtype

    @property
    def default_value(self) -> Tensor:
        return self._default_value

    @property
    def initializer(self) -> Operation:
        """The op filling the table."""
        return self._init_op

    @property
    def init(self) -> Operation:
        """TF1's other name for ``initializer``."""
        return self._init_op

    def _op(self, op_type: str, inputs: list, name: str) -> Operation:
        graph = get_default_graph()
        with graph.colocate_with(self._handle.op):
            return graph.create_op(
                op_type,
                [self._handle, *inputs],
                {"key_dtype": self._key_dtype, "value_dtype": self._value_dtype},
                name=name,
            )

    def size(self, name: str | None = None) -> Tensor:
        """The number of entries (an int64 scalar; 0 before initialization)."""
        with name_scope(name, f"{self.name}_Size"):
            return self._op("LookupTableSizeV2", [], "LookupTableSizeV2").outputs[0]

    def lookup(self, keys: Any, name: str | None = None) -> Any:
        """The value of each key (``default_value`` where absent), in ``keys``' shape.

        ``keys`` may be a ``SparseTensor``: its values are looked up. A key dtype other
        than the table's is a ``TypeError``; looking up before the initializer has run
        fails with ``FailedPreconditionError``.
        """
        sparse = keys if isinstance(keys, SparseTensor) else None
        key_tensor = sparse.values if sparse is not None else convert_to_tensor(keys)
        if key_tensor.dtype != self._key_dtype:
            raise TypeError(
                f"Signature mismatch. Keys must be dtype {self._key_dtype.name}, got "
                f"{key_tensor.dtype.name}."
            )
        with name_scope(name, f"{self.name}_Lookup"):
            values = self._op(
                "LookupTableFindV2",
                [key_tensor, self._default_value],
                "LookupTableFindV2",
            ).outputs[0]
        if sparse is not None:
            return SparseTensor(sparse.indices, values, sparse.dense_shape)
        return values


class HashTable(StaticHashTable):
    """TF1's ``tf.contrib.lookup.HashTable``: a ``StaticHashTable`` that can also
    ``export`` its entries."""

    @property
    def table_ref(self) -> Tensor:
        return self._handle

    def export(self, name: str | None = None) -> tuple[Tensor, Tensor]:
        """Every key and its value (two vectors, in no particular order)."""
        with name_scope(name, f"{self.name}_lookup_table_export_values"):
            op = self._op("LookupTableExportV2", [], "LookupTableExportV2")
        return op.outputs[0], op.outputs[1]


def tables_initializer(name: str = "init_all_tables") -> Operation:
    """One op running every table initializer of the graph
    (``GraphKeys.TABLE_INITIALIZERS``), or a no-op when there is none."""
    initializers = get_default_graph().get_collection(GraphKeys.TABLE_INITIALIZERS)
    if initializers:
        return group(*initializers, name=name)
    return no_op(name=name)


def initialize_all_tables(name: str = "init_all_tables") -> Operation:
    """TF1's deprecated name of ``tables_initializer``."""
    return tables_initializer(name)
