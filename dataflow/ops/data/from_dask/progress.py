"""How a ``from_dask`` reader's progress reports reach the scheduler's share book.

A replica reports, as each batch leaves ``get_next``, how many rows of each claimed
partition it has delivered (``shares``). That is a message per step, and sent
the way Dask workers send the scheduler anything (a message on the worker's batched
stream, put there from the worker's event loop) it cost about 300 us of CPU on the
reading worker and as much on the scheduler: a hop onto the event loop, a tornado
coroutine waking, Dask's framing and ``sizeof`` on each side, a fifth of a fast
linear model's step.

So each worker process keeps one **progress line** to the scheduler: a Dask connection
(the cluster's address, protocol and ``Security``, as any of its comms) whose first
message is Dask's own ``{"op": PROGRESS_LINE_OP}``; the scheduler's handler
(``serve_line``) acknowledges it with one byte and from then on reads report frames
(``[u32 length][pickle]``) off the connection's stream and applies them to the book.
The worker then takes the socket out of tornado and writes each report with one
blocking ``sendall`` from the thread that hands the rows out (under a lock: several
readers of one worker share the line). A report is in the kernel's socket buffer
before ``get_next`` returns, so it reaches the scheduler even if the worker is killed
right after the step (the kernel sends what a dying process wrote); the batched
stream, which sent a report up to 2 ms after the rows left, could lose it then.

A connection that is not a tornado stream (a transport other than ``tcp://``/``tls://``),
a line that fails, or a report made on the event loop's own thread (where a blocking
connect would stall the loop) goes the old way, on the batched stream
(``shares.PROGRESS_OP``).
"""

from __future__ import annotations

import contextlib
import pickle
import socket
import struct
import threading
from typing import Any

from ...._util.comm_socket import detach

PROGRESS_LINE_OP = "dataflow_share_progress_line"
_ACK = b"\x06"  # the scheduler reads reports off the connection itself from now on
_SIZE = struct.Struct("!I")
_READ_CHUNK = 64 * 1024


# --- the worker's end ----------------------------------------------------------------------
class ProgressLine:
    """One worker process's connection to the scheduler for progress reports."""

    def __init__(self, sock: socket.socket):
        self._sock = sock
        self._lock = threading.Lock()
        self.broken = False

    def send(self, report: tuple) -> bool:
        """Writes ``report`` (``(name, epoch, replica, counts)``); ``False`` when the
        line is broken (the caller reports another way)."""
        data = pickle.dumps(report, protocol=5)
        frame = _SIZE.pack(len(data)) + data
        with self._lock:
            if self.broken:
                return False
            try:
                self._sock.sendall(frame)
                return True
            except OSError:  # the scheduler went away: later reports take the stream
                self.broken = True
                with contextlib.suppress(OSError):
                    self._sock.close()
                return False


# (worker, scheduler) -> its line, or None where it has none (another transport)
_LINES: dict[tuple[int, str], ProgressLine | None] = {}
_OPENING = threading.Lock()


def line_for(worker: Any) -> ProgressLine | None:
    """``worker``'s progress line, opened on first use (``None``: there is none, report
    on the batched stream). Called from a thread of the worker other than its event
    loop's, after a ``begin`` readied the scheduler (``serve_line``)."""
    if worker.thread_id == threading.get_ident():
        return None  # a blocking connect would stall the loop
    key = (id(worker), str(worker.scheduler.address))
    with _OPENING:  # once per pass: no cost that counts
        line = _LINES.get(key)
        if key not in _LINES or (line is not None and line.broken):
            try:
                line = _LINES[key] = _open(worker)
            except Exception:  # not now (the scheduler is away); the next pass tries again
                return None
        return line


def _open(worker: Any) -> ProgressLine | None:
    from distributed.utils import sync

    sock = sync(worker.loop, _connect, worker)
    return ProgressLine(sock) if sock is not None else None


async def _connect(worker: Any) -> socket.socket | None:
    from distributed.comm import connect
    from tornado.iostream import IOStream

    comm = await connect(worker.scheduler.address, **worker.connection_args)
    stream = getattr(comm, "stream", None)
    if not isinstance(stream, IOStream):  # another transport: no socket to write to
        comm.abort()
        return None
    await comm.write({"op": PROGRESS_LINE_OP, "reply": False})
    if bytes(await stream.read_bytes(len(_ACK))) != _ACK:
        comm.abort()
        return None
    return detach(comm, stream)  # the scheduler sends nothing after its byte


# --- the scheduler's end -------------------------------------------------------------------
def serve_line(apply: Any) -> Any:
    """The scheduler's handler for ``PROGRESS_LINE_OP``: ``apply(*report)`` for every
    report the worker writes, in order, until the connection closes."""

    async def dataflow_share_progress_line(comm: Any) -> Any:
        from distributed.core import Status
        from tornado.iostream import IOStream, StreamClosedError

        stream = getattr(comm, "stream", None)
        if not isinstance(stream, IOStream):
            return Status.dont_reply
        buffer = bytearray()
        with contextlib.suppress(StreamClosedError, OSError):
            await stream.write(_ACK)
            while True:
                buffer += await stream.read_bytes(_READ_CHUNK, partial=True)
                start = 0
                while len(buffer) - start >= _SIZE.size:
                    (size,) = _SIZE.unpack_from(buffer, start)
                    end = start + _SIZE.size + size
                    if end > len(buffer):
                        break
                    apply(*pickle.loads(bytes(buffer[start + _SIZE.size : end])))
                    start = end
                del buffer[:start]
        comm.abort()
        return Status.dont_reply

    return dataflow_share_progress_line
