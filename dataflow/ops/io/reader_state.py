"""The state behind a reader op: the work unit (file) being read and TF's counters.

A reader (``tf.TextLineReader`` and the others, ``io/readers.py``) turns work units,
strings it dequeues from a queue (file names, usually from ``string_input_producer``),
into records, ``(key, value)`` pairs of strings. One ``ReaderState`` lives in the
resource store of the reader's device; its read ops run there, beside the queue.

``read_up_to(queue, n)`` follows TF's ``ReaderBase::ReadUpTo``, under one lock (a reader
serves one read at a time, so records of a file come out in order however many threads
read):

* with no work unit in progress, it dequeues one (blocking while the queue is empty; a
  closed, drained queue raises ``OutOfRangeError``, which ends an epoch) and opens it
  (``work_started += 1``); a file that cannot be opened raises and is skipped;
* it takes records from the open unit until it has ``n``; at the unit's end it marks
  the unit finished (``work_finished = work_started``) and returns what it has, or, with
  nothing yet, moves on to the next unit (so an empty file yields nothing);
* ``num_records_produced`` counts records over the reader's life; ``reset`` drops the
  open unit and zeroes the counters.

Each kind of reader is a ``records(work)`` function: the records of one work unit as
``(key, value)`` bytes, opened at once (errors surface when the unit starts) and read
lazily. Keys are TF's: ``file:line`` (1-based, header lines counted) for text,
``file:offset`` (the record's byte offset, in the decompressed stream) for TFRecords,
``file:index`` for fixed-length records, the file name for whole files, and the work
string itself for the identity reader. Example: a text file ``a.txt`` holding
``h\\nx\\ny\\n`` read with ``skip_header_lines=1`` gives ``(b"a.txt:2", b"x")``, then
``(b"a.txt:3", b"y")``.

A plain class with a lock; no Dask, testable alone.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

from ...framework import errors
from ..queue.queue_state import QueueState
from . import tf_record

Record = tuple[bytes, bytes]
Records = Callable[[bytes], Iterator[Record]]


def _path(work: bytes) -> str:
    return work.decode()


def _opened(work: bytes) -> Any:
    import fsspec  # on first use: it costs 0.03 s of ``import dataflow``

    try:
        return fsspec.open(_path(work), "rb").open()
    except (FileNotFoundError, IsADirectoryError):
        raise errors.NotFoundError(
            None, None, f"{_path(work)}; No such file or directory"
        ) from None


def text_lines(skip_header_lines: int) -> Records:
    """Lines without their ``\\n`` (nor a ``\\r`` before it); keys ``file:line``."""

    def records(work: bytes) -> Iterator[Record]:
        f = _opened(work)
        number = 0
        lines = iter(f)
        for _ in range(skip_header_lines):  # a file shorter than its header yields nothing
            if next(lines, None) is None:
                break
            number += 1
        return _numbered_lines(f, lines, work, number)

    return records


def _numbered_lines(f: Any, lines: Iterator[bytes], work: bytes, number: int) -> Iterator[Record]:
    with f:
        for line in lines:
            number += 1
            if line.endswith(b"\n"):
                line = line[:-1]
            if line.endswith(b"\r"):
                line = line[:-1]
            yield work + b":%d" % number, line


def tf_records(compression: str) -> Records:
    """TFRecord files (``""``, ``"ZLIB"`` or ``"GZIP"``); keys ``file:offset``."""

    def records(work: bytes) -> Iterator[Record]:
        stream = tf_record.open_stream(_path(work), compression)
        return _offset_records(stream, work)

    return records


def _offset_records(stream: Any, work: bytes) -> Iterator[Record]:
    offset = 0
    try:
        for data in tf_record.read_records(stream, _path(work)):
            yield work + b":%d" % offset, data
            offset += len(data) + 16  # 12 bytes of header, 4 of footer
    finally:
        stream.close()


def fixed_length(
    record_bytes: int, header_bytes: int, footer_bytes: int, hop_bytes: int, encoding: str
) -> Records:
    """Records of ``record_bytes`` after ``header_bytes``, starting every ``hop_bytes``
    (``record_bytes`` when 0), leaving ``footer_bytes`` at the end; keys ``file:index``.
    A tail too short for a record and the footer is dropped, as TF drops it."""
    hop = hop_bytes or record_bytes

    def records(work: bytes) -> Iterator[Record]:
        stream = tf_record.open_stream(_path(work), encoding)
        return _windows(stream, work)

    def _windows(stream: Any, work: bytes) -> Iterator[Record]:
        try:
            data = _read_all(stream)
        finally:
            stream.close()
        index, start = 0, header_bytes
        while start + record_bytes + footer_bytes <= len(data):
            yield work + b":%d" % index, data[start : start + record_bytes]
            index += 1
            start += hop

    return records


def _read_all(stream: Any) -> bytes:
    parts: list[bytes] = []
    while True:
        chunk = stream.read(1 << 20)
        if not chunk:
            return b"".join(parts)
        parts.append(chunk)


def whole_file(work: bytes) -> Iterator[Record]:
    """One record per file: key the file name, value its contents."""
    f = _opened(work)
    with f:
        data = f.read()
    return iter([(work, data)])


def identity(work: bytes) -> Iterator[Record]:
    """One record per work unit: the work string as both key and value."""
    return iter([(work, work)])


class ReaderState:
    """One reader's open work unit and counters (see the module doc)."""

    def __init__(self, name: str, records: Records) -> None:
        self.name = name
        self._records = records
        self._lock = threading.Lock()
        self._current: Iterator[Record] | None = None
        self._work_started = 0
        self._work_finished = 0
        self._produced = 0

    def read_up_to(self, queue: QueueState, n: int, waiter: Any = None) -> list[Record]:
        """Up to ``n`` records (at least one; fewer at the end of a work unit)."""
        out: list[Record] = []
        with self._lock:
            while len(out) < n:
                if self._current is None:
                    (element,) = queue.dequeue_many(1, waiter=waiter)
                    self._current = self._records(_work_string(element[0]))
                    self._work_started += 1
                record = next(self._current, None)
                if record is None:
                    self._current = None
                    self._work_finished = self._work_started
                    if out:
                        break
                    continue
                out.append(record)
                self._produced += 1
        return out

    def num_records_produced(self) -> int:
        with self._lock:
            return self._produced

    def num_work_units_completed(self) -> int:
        with self._lock:
            return self._work_finished

    def reset(self) -> None:
        with self._lock:
            close = getattr(self._current, "close", None)
            if close is not None:
                close()  # a generator: closes its file
            self._current = None
            self._work_started = self._work_finished = self._produced = 0


def _work_string(value: Any) -> bytes:
    """A dequeued work unit (a scalar string array, bytes or str) as bytes."""
    item = value.item() if hasattr(value, "item") else value
    return item if isinstance(item, bytes) else str(item).encode()
