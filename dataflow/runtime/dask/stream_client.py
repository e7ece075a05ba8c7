"""The client's end of step streams (``stream.py`` says what travels and why).

The client takes each connection's socket out of tornado once Dask has connected it
(handshake and TLS done), sets shared memory up on it (``shm_parts``), moves it to the
worker's Unix socket when both run on one host (``local_sockets``), and then talks over
it with blocking calls from the calling thread (one set of connections per thread), so
a step needs no hop through the client's event loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import itertools
import pickle
import select
import socket
import ssl
import threading
import time
from collections.abc import Callable
from typing import Any

from ..._util.comm_socket import detach
from . import local_sockets
from .frames import TAKEOVER_ACK, frame_bytes, recv_message, send_frames, writes
from .shared_memory import shm_parts
from .stream import EARLY, MOVE_TIMEOUT, Endpoint, open_stream, raw_stream


def _readable(socks: list[socket.socket], wait: float) -> list[socket.socket]:
    # A TLS socket may hold decrypted bytes that select() cannot see.
    ready: list[socket.socket] = [s for s in socks if isinstance(s, ssl.SSLSocket) and s.pending()]
    if ready:
        return ready
    return select.select(socks, [], [], wait)[0]


# Requests of at least this many bytes each are sent in parallel when a step has two or
# more of them (at most SENDER_THREADS at once).
PARALLEL_BYTES = 1 << 20
SENDER_THREADS = 8


def _try_send(conn: socket.socket, frames: list[Any]) -> OSError | None:
    try:
        send_frames(conn, frames)
    except OSError as exc:
        return exc
    return None


def _wait_readable(sock: socket.socket, timeout: float) -> None:
    if not select.select([sock], [], [], timeout)[0]:
        raise TimeoutError("the worker did not answer the shared-memory offer")


def client_link(sock: socket.socket, timeout: float) -> shm_parts.Link | None:
    """Sets shared memory up on the client's new step stream ``sock`` (blocking):
    the link, or ``None`` when it is off here (nothing was sent then)."""
    link = shm_parts.Link()
    if isinstance(sock, ssl.SSLSocket):
        link.over_tls()
    hello = link.hello()
    if hello is None:
        return None
    try:
        send_frames(sock, writes(hello, link))
        _wait_readable(sock, timeout)
        confirm = link.answered(recv_message(sock, link))
        send_frames(sock, writes(confirm, link))
    except BaseException:
        link.close()
        raise
    return link


def _moved_local(sock: socket.socket, link: shm_parts.Link | None, timeout: float) -> Any:
    """The client's new stream ``sock``, moved to the worker's Unix socket when both run
    on one host (``local_sockets``), else ``sock`` itself (blocking)."""
    request = local_sockets.offer_request()
    if request is None:
        return sock
    send_frames(sock, writes(request, link))
    if not _readable([sock], timeout):
        raise TimeoutError("the worker did not answer the request to move the step stream")
    local = local_sockets.connect_blocking(recv_message(sock, link), timeout)
    if local is None:
        return sock
    if link is not None:
        link.over_unix_socket()
    sock.close()
    return local


class Lost(Exception):
    """A worker the step needs was lost (``lost()`` said so) before all replies came."""


class StepStreamClient:
    """The client's step streams to workers, one connection per (thread, address).

    ``client`` is the ``distributed.Client`` whose security and event loop open them;
    a worker that cannot be reached within ``connect_timeout`` seconds is an error."""

    def __init__(self, client: Any, connect_timeout: float = 10.0) -> None:
        self._client = client
        self._connect_timeout = connect_timeout
        self._local = threading.local()
        self._ids = itertools.count(1)  # request ids (``next`` is atomic in CPython)
        self._lock = threading.Lock()
        self._every: set[Any] = set()  # all threads' connections, for close()
        self._links: dict[Any, shm_parts.Link | None] = {}  # a connection's shared memory
        self._senders: concurrent.futures.ThreadPoolExecutor | None = None  # (``_send``)

    def _connections(self) -> dict[str, Any]:
        if not hasattr(self._local, "connections"):
            self._local.connections = {}
        return self._local.connections

    async def _open(self, address: str) -> Any:
        comm = await open_stream(address, self._client.connection_args, self._connect_timeout)
        stream = raw_stream(comm)
        if stream is None:
            return comm
        await stream.read_bytes(len(TAKEOVER_ACK))  # the worker reads steps itself now
        return detach(comm, stream)

    def _connection(self, address: str) -> Any:
        conns = self._connections()
        conn = conns.get(address)
        if conn is None:
            conn = self._client.sync(self._open, address)
            link = None
            if isinstance(conn, socket.socket):
                timeout = max(self._connect_timeout, MOVE_TIMEOUT)
                try:
                    link = client_link(conn, timeout)
                    conn = _moved_local(conn, link, timeout)
                except BaseException:
                    if link is not None:
                        link.close()
                    conn.close()
                    raise
                self._links[conn] = link  # (a dict's set and pop are atomic)
            conns[address] = conn
            with self._lock:
                self._every.add(conn)
        return conn

    def drop(self, address: str) -> None:
        """Closes this thread's connection to ``address`` (late replies die with it)."""
        conn = self._connections().pop(address, None)
        if conn is not None:
            with self._lock:
                self._every.discard(conn)
            self._close_one(conn)

    def request_all(
        self,
        requests: dict[str, tuple[str, dict]],
        lost: Callable[[], bool],
        deadline: float | None,
        timings: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Sends each ``name -> (address, message)`` and waits for every reply.

        Returns ``name -> reply``, or the exception a connection failed with. Raises
        ``Lost`` when ``lost()`` turns true, ``TimeoutError`` past ``deadline``
        (``time.monotonic()``); connections still owing a reply are then dropped.
        ``timings`` (a traced step) receives ``"send"``: (start, end) of writing the
        requests and ``"receive"``: name -> (start, end) of reading each reply, in
        ``perf_counter()`` seconds.
        """
        request_id = next(self._ids)
        send_start = time.perf_counter()
        out: dict[str, Any] = {}
        waiting: dict[Any, tuple[str, str]] = {}
        sends: list[tuple[str, str, socket.socket, list[Any]]] = []
        for name, (address, message) in requests.items():
            try:
                conn = self._connection(address)
                message = {**message, "id": request_id}
                if isinstance(conn, socket.socket):
                    link = self._links.get(conn)
                    frames = writes(message, link, defer=True)
                    release = link.release_message() if link is not None else None
                    if release is not None:  # (slabs whose arrays went: the worker's again)
                        frames = [*writes(release, link), *frames]
                    sends.append((name, address, conn, frames))
                else:
                    self._client.sync(Endpoint(conn).write, message)
                waiting[conn] = (name, address)
            except OSError as exc:
                self.drop(address)
                out[name] = exc
            except Exception as exc:  # a Dask comm error on a non-socket transport
                self.drop(address)
                out[name] = OSError(f"{type(exc).__name__}: {exc}")
        for (name, address, conn, _), failed in zip(sends, self._send(sends), strict=True):
            if failed is not None:
                del waiting[conn]
                self.drop(address)
                out[name] = failed
        if out:
            # A worker did not take its part: the others' parts cannot finish (the
            # caller aborts them); their connections are dropped with any late reply.
            for name, address in waiting.values():
                self.drop(address)
                out[name] = {"status": "aborted", "reason": "a peer could not be reached"}
            return out
        if timings is not None:
            timings["send"] = (send_start, time.perf_counter())
            timings["receive"] = {}
        try:
            self._collect(waiting, out, request_id, lost, deadline, timings)
        except BaseException:
            for _, address in waiting.values():
                self.drop(address)
            raise
        return out

    def _send(self, sends: list[tuple[str, str, socket.socket, list[Any]]]) -> list[Any]:
        """Writes each request's frames; the error of each (``None``: sent). Two or more
        large requests (a batch per replica) go out at once, one thread each: a blocking
        ``sendall`` releases the GIL while the kernel copies."""
        large = sum(frame_bytes(frames) >= PARALLEL_BYTES for *_, frames in sends)
        if large < 2:
            return [_try_send(conn, frames) for _, _, conn, frames in sends]
        with self._lock:
            if self._senders is None:
                self._senders = concurrent.futures.ThreadPoolExecutor(
                    SENDER_THREADS, thread_name_prefix="dataflow-send"
                )
            senders = self._senders
        futures = [senders.submit(_try_send, conn, frames) for _, _, conn, frames in sends]
        return [f.result() for f in futures]

    def _collect(
        self,
        waiting: dict[Any, tuple[str, str]],
        out: dict[str, Any],
        request_id: int,
        lost: Callable[[], bool],
        deadline: float | None,
        timings: dict[str, Any] | None,
    ) -> None:
        reads: dict[Any, concurrent.futures.Future] = {}  # non-socket comms' reads
        early: dict[str, dict] = {}  # name -> values its worker sent before its reply
        while waiting:
            wait = 0.25 if deadline is None else min(0.25, deadline - time.monotonic())
            if wait <= 0:
                raise TimeoutError
            for conn in waiting:
                if not isinstance(conn, socket.socket) and conn not in reads:
                    reads[conn] = asyncio.run_coroutine_threadsafe(
                        Endpoint(conn).read(), self._client.loop.asyncio_loop
                    )
            socks = [c for c in waiting if isinstance(c, socket.socket)]
            if reads:
                concurrent.futures.wait(
                    list(reads.values()), wait / 2 if socks else wait, "FIRST_COMPLETED"
                )
            ready: list[Any] = [c for c, f in reads.items() if f.done()]
            if socks:
                ready += _readable(socks, 0 if ready else wait)
            for conn in ready:
                name, address = waiting[conn]
                read_start = time.perf_counter()
                try:
                    if isinstance(conn, socket.socket):
                        reply = recv_message(conn, self._links.get(conn))
                    else:
                        reply = reads.pop(conn).result()
                except (OSError, EOFError, pickle.UnpicklingError) as exc:
                    del waiting[conn]
                    self.drop(address)
                    out[name] = exc
                    continue
                except Exception as exc:  # CommClosedError and the like
                    del waiting[conn]
                    self.drop(address)
                    out[name] = OSError(f"{type(exc).__name__}: {exc}")
                    continue
                if reply.get("id") != request_id:
                    continue  # a late reply of an old step
                is_early = reply.get("status") == EARLY  # (``stream.py``: more follows)
                if timings is not None:
                    kind = timings.setdefault("early", {}) if is_early else timings["receive"]
                    kind[name] = (read_start, time.perf_counter())
                if is_early:
                    early.setdefault(name, {}).update(reply["values"])
                    continue
                del waiting[conn]
                if name in early and "values" in reply:
                    reply["values"] = {**early.pop(name), **reply["values"]}
                out[name] = reply
            if waiting and lost():
                raise Lost

    def _close_one(self, conn: Any) -> None:
        link = self._links.pop(conn, None)
        if link is not None:
            link.close()
        if isinstance(conn, socket.socket):
            with contextlib.suppress(OSError):
                conn.close()
        else:
            conn.abort()

    def close(self) -> None:
        """Closes every thread's connections."""
        with self._lock:
            every, self._every = self._every, set()
            senders, self._senders = self._senders, None
        if senders is not None:
            senders.shutdown(wait=False)
        for conn in every:
            self._close_one(conn)
