"""An asyncio transport over a TLS socket whose handshake Dask already did.

A worker's TLS step stream began as a Dask comm: tornado's ``SSLIOStream`` connected it
and did the TLS handshake, and the TLS session lives in the ``ssl.SSLSocket``. Kept in
tornado, each step cost the worker about twice the event-loop iterations of a plain TCP
step (a future per read, seven ``SSLSocket`` reads and eight loop turns for a 40 KB feed
step, against four), 0.7 ms a step over TCP's. asyncio's own TLS transport cannot adopt a
socket whose session is already established (it runs TLS itself, through memory BIOs).

``TlsTransport`` takes the ``SSLSocket`` out of tornado as the plain TCP socket is taken
(``comm_socket.detach``), keeps it non-blocking, and drives it with the loop's
``add_reader``/``add_writer``, calling the same ``asyncio.BufferedProtocol`` interface the
plain transport calls (``get_buffer``/``buffer_updated``, ``pause_writing``/
``resume_writing``), so ``stream.FrameProtocol`` serves both. (Measured on a 2-core
VM: the worker's CPU for a 40 KB TLS feed step went from 0.95-1.18 to 0.80-0.85 ms,
the step from 1.59-1.88 to 1.32-1.71 ms; docs/performance.md.)

What TLS changes against a plain socket:

* decrypted bytes can wait inside the ``SSLSocket`` where the selector cannot see them
  (``pending()``), and a large part arrives one TLS record (16 KB) at a time: a
  readable event reads until the socket would block (and is queued again if it stopped
  at its cap with decrypted bytes still inside);
* a write that would block must be retried with the same bytes (OpenSSL's rule; Python
  allows them to move), so the unsent rest of a write is kept as it was and retried
  when the socket is writable; a read or write may also need the other direction (a
  renegotiation): a read that must write is retried when the socket is writable, a write
  that must read after the next read.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import socket
import ssl
from typing import Any

logger = logging.getLogger(__name__)

# One readable event reads at most this many times (a TLS record, up to 16 KB, each), so
# one busy stream cannot starve the loop's other work.
_MAX_READS_PER_EVENT = 64


class TlsTransport(asyncio.Transport):
    """``protocol`` (an ``asyncio.BufferedProtocol``) on ``sock``, an ``ssl.SSLSocket``
    whose handshake is done (made non-blocking here)."""

    def __init__(self, sock: socket.socket, protocol: asyncio.BufferedProtocol) -> None:
        super().__init__()
        if not isinstance(sock, ssl.SSLSocket):
            raise TypeError(f"TlsTransport takes an ssl.SSLSocket, not {type(sock).__name__}")
        self._loop = asyncio.get_running_loop()
        self._sock = sock
        self._fd = sock.fileno()
        self._protocol = protocol
        self._extra = {"socket": sock, "peername": _peername(sock)}
        self._unsent: collections.deque[memoryview] = collections.deque()
        self._unsent_bytes = 0
        self._writing = False  # add_writer is registered
        self._read_wants_write = False  # a read raised SSLWantWriteError
        self._write_wants_read = False  # a write raised SSLWantReadError
        self._paused = False  # the protocol was told to pause writing
        self._closing = False
        sock.setblocking(False)
        protocol.connection_made(self)
        self._loop.add_reader(self._fd, self._on_readable)

    # --- the Transport interface that FrameProtocol and serve use ---
    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self._extra.get(name, default)

    def is_closing(self) -> bool:
        return self._closing

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        pass  # the protocol is paused while anything at all is unsent

    def get_write_buffer_size(self) -> int:
        return self._unsent_bytes

    def write(self, data: Any) -> None:
        if self._closing:
            return
        view = memoryview(data).cast("B")
        if not view.nbytes:
            return
        # Queued with the caller's memory (the frames of a message are not changed until
        # they are sent), not a copy; sent at once when nothing was waiting before it.
        self._unsent.append(view)
        self._unsent_bytes += view.nbytes
        if len(self._unsent) == 1:
            self._send_unsent()
        if self._unsent and not self._closing:  # the rest waits for a writable socket
            self._want_write()
            if not self._paused:
                self._paused = True
                self._protocol.pause_writing()

    def close(self) -> None:
        self._shut(None)

    def abort(self) -> None:
        self._shut(None)

    # --- reading ---
    def _on_readable(self) -> None:
        self._read_all()
        if self._write_wants_read and not self._closing:
            self._write_wants_read = False  # what the TLS session had to read came
            self._on_writable()

    def _read_all(self) -> None:
        # Reads until the socket would block: decrypted bytes can wait inside the
        # SSLSocket where the selector does not see them, and a large part arrives one
        # TLS record at a time. (One read that finds nothing costs a few microseconds.)
        for _ in range(_MAX_READS_PER_EVENT):
            if self._closing:
                return
            try:
                nbytes = self._sock.recv_into(self._protocol.get_buffer(-1))
            except ssl.SSLWantReadError:
                return
            except ssl.SSLWantWriteError:
                self._read_wants_write = True
                self._want_write()
                return
            except (ssl.SSLEOFError, ssl.SSLZeroReturnError):
                self._shut(None)
                return
            except OSError as exc:
                self._shut(exc)
                return
            if nbytes == 0:
                self._shut(None)
                return
            self._protocol.buffer_updated(nbytes)
        if not self._closing and self._sock.pending():
            # (the selector would not wake for bytes already decrypted)
            self._loop.call_soon(self._on_readable)

    # --- writing ---
    def _send(self, view: memoryview) -> int | None:
        """Sends what the socket takes of ``view``: the count, ``None`` on an error."""
        try:
            return self._sock.send(view)
        except ssl.SSLWantReadError:
            # The TLS session must read first (a renegotiation): retried after the next
            # read, not on writable events, which would come at once and spin.
            self._write_wants_read = True
            return 0
        except (ssl.SSLWantWriteError, BlockingIOError):
            return 0
        except OSError as exc:
            self._shut(exc)
            return None

    def _send_unsent(self) -> None:
        """Sends queued bytes until the socket would block or the stream fails."""
        while self._unsent and not self._closing:
            view = self._unsent[0]
            sent = self._send(view)
            if sent is None:
                return
            self._unsent_bytes -= sent
            if sent < view.nbytes:
                self._unsent[0] = view[sent:]
                return
            self._unsent.popleft()

    def _want_write(self) -> None:
        if not self._writing and not self._closing and not self._write_wants_read:
            self._writing = True
            self._loop.add_writer(self._fd, self._on_writable)

    def _on_writable(self) -> None:
        if self._read_wants_write:
            self._read_wants_write = False
            self._on_readable()
        self._send_unsent()
        if self._closing:
            return
        if self._unsent:
            if self._write_wants_read and not self._read_wants_write:
                self._stop_writing()  # (the next read retries)
            return
        if not self._read_wants_write:
            self._stop_writing()
        if self._paused:
            self._paused = False
            self._protocol.resume_writing()

    def _stop_writing(self) -> None:
        if self._writing:
            self._writing = False
            self._loop.remove_writer(self._fd)

    # --- closing ---
    def _shut(self, exc: Exception | None) -> None:
        if self._closing:
            return
        self._closing = True
        if exc is not None:
            logger.debug("TLS step stream to %s failed: %r", self._extra["peername"], exc)
        self._loop.remove_reader(self._fd)
        self._stop_writing()
        self._unsent.clear()
        self._unsent_bytes = 0
        with contextlib.suppress(OSError):
            self._sock.close()
        self._loop.call_soon(self._protocol.connection_lost, exc)


def _peername(sock: Any) -> Any:
    try:
        return sock.getpeername()
    except OSError:
        return None
