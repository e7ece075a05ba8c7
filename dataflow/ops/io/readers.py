"""Readers: ``TextLineReader``, ``TFRecordReader``, ``FixedLengthRecordReader``,
``WholeFileReader``, ``IdentityReader``.

A reader is a handle op (``TextLineReaderV2`` and the others, TF's types: a ``resource``
tensor naming the reader) plus ops that take it: ``ReaderReadV2`` and
``ReaderReadUpToV2`` (which also take the queue of work units), ``ReaderNumRecordsProducedV2``,
``ReaderNumWorkUnitsCompletedV2`` and ``ReaderResetV2``. They are colocated with the
reader's handle, and the read ops with the queue's handle too, so a reader, its queue
and its reads share a device (TF's placer does the same for ops on one resource). The
state, the open file and the counters, is a ``ReaderState`` (``io/reader_state.py``) in
that device's resource store; keys and values are host string tensors.

Example:
    >>> import dataflow as tf, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "a.txt")
    >>> with open(path, "w") as f:
    ...     _ = f.write("x\\ny\\n")
    >>> queue = tf.FIFOQueue(2, tf.string)
    >>> key, value = tf.TextLineReader().read(queue)
    >>> with tf.Session() as sess:
    ...     sess.run(queue.enqueue(path))
    ...     sess.run(value)
    b'x'
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...framework import dtypes, errors, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor, get_default_graph
from ...framework.kernel_context import Folded, blocking_waiter
from ...framework.tensor_shape import TensorShape, scalar
from ..queue.queues import lookup_queue
from . import reader_state, tf_record


def _reader_key(name: str) -> str:
    return f"reader:{name}"


def _records(attrs: dict) -> reader_state.Records:
    kind = attrs["kind"]
    if kind == "TextLineReaderV2":
        return reader_state.text_lines(attrs["skip_header_lines"])
    if kind == "TFRecordReaderV2":
        return reader_state.tf_records(attrs["compression_type"])
    if kind == "FixedLengthRecordReaderV2":
        return reader_state.fixed_length(
            attrs["record_bytes"],
            attrs["header_bytes"],
            attrs["footer_bytes"],
            attrs["hop_bytes"],
            attrs["encoding"],
        )
    if kind == "WholeFileReaderV2":
        return reader_state.whole_file
    return reader_state.identity


def _lookup(ctx: Any, name: str) -> reader_state.ReaderState:
    def missing() -> reader_state.ReaderState:
        raise errors.NotFoundError(None, None, f"Reader '{name}' does not exist on {ctx.device}")

    return ctx.resources.get_or_create(_reader_key(name), missing)


# --- kernels ---------------------------------------------------------------------------
def _handle_kernel(ctx: Any, attrs: dict) -> Folded:
    name = attrs["shared_name"]
    signature = tuple(sorted((k, v) for k, v in attrs.items() if k != "shared_name"))
    ctx.resources.get_or_create(
        _reader_key(name),
        lambda: reader_state.ReaderState(name, _records(attrs)),
        signature=signature,
    )
    return Folded(name)


def _strings(values: list[bytes]) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _read_kernel(ctx: Any, attrs: dict) -> Any:
    waiter = blocking_waiter(ctx)

    def read(reader: str, queue: str) -> tuple:
        ((key, value),) = _lookup(ctx, reader).read_up_to(lookup_queue(ctx, queue), 1, waiter)
        return np.asarray(key, dtype=object), np.asarray(value, dtype=object)

    return read


def _read_up_to_kernel(ctx: Any, attrs: dict) -> Any:
    waiter = blocking_waiter(ctx)

    def read_up_to(reader: str, queue: str, num_records: Any) -> tuple:
        n = int(num_records)
        if n <= 0:
            raise errors.InvalidArgumentError(
                None, None, f"num_records must be positive, got {n} (reader '{reader}')"
            )
        records = _lookup(ctx, reader).read_up_to(lookup_queue(ctx, queue), n, waiter)
        return _strings([k for k, _ in records]), _strings([v for _, v in records])

    return read_up_to


def _num_records_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    return lambda reader: xp.asarray(_lookup(ctx, reader).num_records_produced(), dtype=xp.int64)


def _num_work_units_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    return lambda reader: xp.asarray(
        _lookup(ctx, reader).num_work_units_completed(), dtype=xp.int64
    )


def _reset_kernel(ctx: Any, attrs: dict) -> Any:
    return lambda reader: _lookup(ctx, reader).reset()


# --- shape rules ----------------------------------------------------------------------
def _check_handles(op: Operation) -> None:
    for t in op.inputs[:2]:
        if t.dtype != dtypes.resource:
            raise TypeError(f"expected a reader or queue handle (resource), got {t.dtype.name}")


def _infer_handle(op: Operation) -> list:
    return [(dtypes.resource, scalar())]


def _infer_read(op: Operation) -> list:
    _check_handles(op)
    return [(dtypes.string, scalar()), (dtypes.string, scalar())]


def _infer_read_up_to(op: Operation) -> list:
    _check_handles(op)
    if not op.inputs[2].dtype.is_integer:
        raise TypeError(f"num_records must be an integer, got {op.inputs[2].dtype.name}")
    return [(dtypes.string, TensorShape([None])), (dtypes.string, TensorShape([None]))]


def _infer_count(op: Operation) -> list:
    return [(dtypes.int64, scalar())]


def _infer_reset(op: Operation) -> list:
    return []


_KINDS = (
    "TextLineReaderV2",
    "TFRecordReaderV2",
    "FixedLengthRecordReaderV2",
    "WholeFileReaderV2",
    "IdentityReaderV2",
)

for _type, _infer, _kernel in (
    *((kind, _infer_handle, _handle_kernel) for kind in _KINDS),
    ("ReaderReadV2", _infer_read, _read_kernel),
    ("ReaderReadUpToV2", _infer_read_up_to, _read_up_to_kernel),
    ("ReaderNumRecordsProducedV2", _infer_count, _num_records_kernel),
    ("ReaderNumWorkUnitsCompletedV2", _infer_count, _num_work_units_kernel),
    ("ReaderResetV2", _infer_reset, _reset_kernel),
):
    registry.register(
        registry.OpDef(
            _type,
            _infer,
            _kernel,
            registry.NOT_DIFFERENTIABLE,
            stateful=True,
            gpu_kernel=False,  # readers read files into host memory
        )
    )


# --- the reader classes -------------------------------------------------------------------
def _queue_ref(queue: Any) -> Tensor:
    """A queue object's handle, or a handle tensor as given."""
    ref = getattr(queue, "queue_ref", queue)
    if not isinstance(ref, Tensor):
        raise TypeError(f"expected a queue (or its queue_ref), got {queue!r}")
    return ref


class ReaderBase:
    """What every reader offers: ``read``, ``read_up_to``, counters and ``reset``.

    A reader dequeues a work unit (a file name) from ``queue`` whenever it has none in
    progress, and produces that unit's records one by one; a closed, drained queue ends
    reading with ``OutOfRangeError``.
    """

    def __init__(self, kind: str, attrs: dict, name: str | None) -> None:
        graph = get_default_graph()
        op_name = graph.unique_name(name or kind)
        self._handle = graph.create_op(
            kind, [], dict(attrs, kind=kind, shared_name=op_name), name=op_name + "/"
        ).outputs[0]

    @property
    def reader_ref(self) -> Tensor:
        """The reader's handle (a ``resource`` tensor)."""
        return self._handle

    @property
    def supports_serialize(self) -> bool:
        """Whether ``serialize_state`` works (it is not offered here)."""
        return False

    def _op(self, op_type: str, inputs: list[Tensor], name: str | None) -> Operation:
        graph = get_default_graph()
        with graph.colocate_with(self._handle.op):
            if inputs:
                with graph.colocate_with(inputs[0].op):
                    return graph.create_op(op_type, [self._handle, *inputs], {}, name=name)
            return graph.create_op(op_type, [self._handle], {}, name=name)

    def read(self, queue: Any, name: str | None = None) -> tuple[Tensor, Tensor]:
        """The next record: ``(key, value)``, scalar strings.

        Raises (at run time):
            OutOfRangeError: the queue is closed and no work unit is left.
        """
        op = self._op("ReaderReadV2", [_queue_ref(queue)], name)
        return op.outputs[0], op.outputs[1]

    def read_up_to(
        self, queue: Any, num_records: Any, name: str | None = None
    ) -> tuple[Tensor, Tensor]:
        """Up to ``num_records`` records: ``(keys, values)``, vectors of strings (fewer
        at the end of a work unit, never none)."""
        n = convert_to_tensor(num_records, dtype=dtypes.int64)
        op = self._op("ReaderReadUpToV2", [_queue_ref(queue), n], name)
        return op.outputs[0], op.outputs[1]

    def num_records_produced(self, name: str | None = None) -> Tensor:
        """How many records this reader has produced (an int64 scalar)."""
        return self._op("ReaderNumRecordsProducedV2", [], name).outputs[0]

    def num_work_units_completed(self, name: str | None = None) -> Tensor:
        """How many work units this reader has finished (an int64 scalar)."""
        return self._op("ReaderNumWorkUnitsCompletedV2", [], name).outputs[0]

    def reset(self, name: str | None = None) -> Operation:
        """Drops the work unit in progress and zeroes the counters."""
        return self._op("ReaderResetV2", [], name)


class TextLineReader(ReaderBase):
    """Lines of text files (without the newline); keys ``b"file:line"``.

    Args:
        skip_header_lines: lines to skip at the start of each file (they still count in
            the keys' line numbers).
        name: the op name.
    """

    def __init__(self, skip_header_lines: int | None = None, name: str | None = None):
        super().__init__(
            "TextLineReaderV2", {"skip_header_lines": int(skip_header_lines or 0)}, name
        )


class TFRecordReader(ReaderBase):
    """Records of TFRecord files; keys ``b"file:offset"``.

    Args:
        name: the op name.
        options: a ``tf.python_io.TFRecordOptions`` (or a compression type) for
            ``ZLIB``/``GZIP`` files.
    """

    def __init__(self, name: str | None = None, options: Any = None):
        compression = tf_record.TFRecordOptions.get_compression_type_string(options)
        super().__init__("TFRecordReaderV2", {"compression_type": compression}, name)


class FixedLengthRecordReader(ReaderBase):
    """Fixed-length records of binary files; keys ``b"file:index"``.

    Args:
        record_bytes: bytes per record.
        header_bytes: bytes to skip at the start of each file.
        footer_bytes: bytes to ignore at the end of each file.
        hop_bytes: bytes between the starts of two records (default ``record_bytes``).
        name: the op name.
        encoding: ``"ZLIB"`` or ``"GZIP"`` for compressed files.
    """

    def __init__(
        self,
        record_bytes: int,
        header_bytes: int | None = None,
        footer_bytes: int | None = None,
        hop_bytes: int | None = None,
        name: str | None = None,
        encoding: str | None = None,
    ):
        if record_bytes <= 0:
            raise ValueError(f"record_bytes must be positive, got {record_bytes}")
        attrs = {
            "record_bytes": int(record_bytes),
            "header_bytes": int(header_bytes or 0),
            "footer_bytes": int(footer_bytes or 0),
            "hop_bytes": int(hop_bytes or 0),
            "encoding": (encoding or "").upper(),
        }
        super().__init__("FixedLengthRecordReaderV2", attrs, name)


class WholeFileReader(ReaderBase):
    """Whole files as records: key the file name, value its contents."""

    def __init__(self, name: str | None = None):
        super().__init__("WholeFileReaderV2", {}, name)


class IdentityReader(ReaderBase):
    """Work units as records: the queued string as both key and value."""

    def __init__(self, name: str | None = None):
        super().__init__("IdentityReaderV2", {}, name)
