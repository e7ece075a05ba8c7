"""One TensorBoard event file: ``Event`` protos appended as TFRecords, flushed in the
background.

The records are TFRecords framed by ``ops/io/tf_record.py`` (length, masked CRC32C,
data, CRC, with the ``crc32c`` package's checksum: byte for byte what ``tensorboard``'s
``RecordWriter`` writes, without its pure-Python CRC), the events are ``tensorboard``'s
``event_pb2.Event``, and the file is named as
TensorBoard expects (``events.out.tfevents.<time>.<host>.<pid>.<n><suffix>``). We do not
use ``tensorboard``'s ``EventFileWriter`` itself: it opens files through
``tensorboard.compat.tf``, which imports the whole of TensorFlow into the process when
it is installed. Files are opened with ``fsspec``, so a log directory may be any URL
fsspec knows (``memory://``, ``s3://``), as TF1's ``gfile`` allowed.

A log that is never closed still reaches its file: a background thread flushes it every
``flush_secs``, and an ``atexit`` hook flushes every open log when the interpreter
exits (the background thread is a daemon and would die with pending events). Both hold
the log weakly, so a writer the program drops is closed (``__del__``) as before.
"""

from __future__ import annotations

import atexit
import itertools
import os
import socket
import threading
import time
import weakref
from typing import Any

from tensorboard.compat.proto import event_pb2

from ..framework import errors
from ..ops.io import tf_record

_FILE_NUMBERS = itertools.count()
_OPEN: weakref.WeakSet = weakref.WeakSet()  # logs to flush at exit


def _flush_open_logs() -> None:
    for log in list(_OPEN):
        try:
            log.flush()
        except (OSError, ValueError):  # its file system went away: nothing to do
            pass


atexit.register(_flush_open_logs)


def os_error(exc: OSError, logdir: str) -> errors.OpError:
    """TF1's error for an ``OSError`` met making the log directory or its file: a file
    in the way is ``FailedPreconditionError``, as TF1's ``gfile`` says it."""
    what = exc.strerror or str(exc)
    if isinstance(exc, (FileExistsError, NotADirectoryError)):
        return errors.FailedPreconditionError(
            None, None, f"FileWriter: {logdir} is not a directory (a file is in the way: {what})"
        )
    if isinstance(exc, PermissionError):
        return errors.PermissionDeniedError(None, None, f"FileWriter: {logdir}: {what}")
    if isinstance(exc, FileNotFoundError):
        return errors.NotFoundError(None, None, f"FileWriter: {logdir}: {what}")
    return errors.UnknownError(None, None, f"FileWriter: {logdir}: {what}")


class EventLog:
    """Appends events to a new event file in ``logdir``; thread-safe.

    Events wait in memory until ``max_queue`` of them are pending, ``flush_secs`` have
    passed (a background timer), or ``flush``/``close`` is called, as TF1's writer does.
    """

    def __init__(
        self, logdir: str, max_queue: int = 10, flush_secs: float = 120, filename_suffix: str = ""
    ):
        # Imported here, not at ``import dataflow`` (0.03 s of it).
        import fsspec

        self._fs, self._dir = fsspec.core.url_to_fs(logdir)
        name = (
            f"events.out.tfevents.{int(time.time()):010d}.{socket.gethostname()}."
            f"{os.getpid()}.{next(_FILE_NUMBERS)}{filename_suffix or ''}"
        )
        self.path = f"{self._dir.rstrip('/')}/{name}"
        try:
            self._fs.makedirs(self._dir, exist_ok=True)
            self._file = self._fs.open(self.path, "wb")
        except OSError as exc:
            raise os_error(exc, logdir) from None
        self._pending: list[bytes] = []
        self._max_queue = max(1, int(max_queue))
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._timer = threading.Thread(
            target=_flush_every,
            args=(weakref.ref(self), self._closed, float(flush_secs)),
            daemon=True,
            name="EventLog",
        )
        self.add(event_pb2.Event(wall_time=time.time(), file_version="brain.Event:2"))
        self.flush()
        _OPEN.add(self)
        self._timer.start()

    def add(self, event: event_pb2.Event) -> None:
        if self._closed.is_set():
            raise ValueError(f"the event file {self.path} is closed")
        data = event.SerializeToString()
        with self._lock:
            self._pending.append(data)
            full = len(self._pending) >= self._max_queue
        if full:
            self.flush()

    def flush(self) -> None:
        """Writes the pending events and flushes the file."""
        with self._lock:
            pending, self._pending = self._pending, []
            if self._file.closed:
                return
            # TFRecord framing with the crc32c package's CRC (tensorboard's own
            # RecordWriter computes it in pure Python: ~3.6 ms a histogram record).
            self._file.write(b"".join(map(tf_record.frame, pending)))
            self._file.flush()

    def close(self) -> None:
        if self._closed.is_set():
            return
        self.flush()
        self._closed.set()
        _OPEN.discard(self)
        with self._lock:
            self._file.close()

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown: nothing left to report to
            pass


def _flush_every(ref: weakref.ref, closed: threading.Event, seconds: float) -> None:
    """The background flush of one log, every ``seconds`` until it is closed or gone
    (holding it only while flushing, so that dropping the writer still closes it)."""
    while not closed.wait(seconds):
        log = ref()
        if log is None:
            return
        try:
            log.flush()
        except (OSError, ValueError):  # closed under us, or the disk went away
            return
        del log


def event(**fields: Any) -> event_pb2.Event:
    """An ``Event`` stamped with the current wall time."""
    return event_pb2.Event(wall_time=time.time(), **fields)
