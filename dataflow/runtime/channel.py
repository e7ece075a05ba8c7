"""Step channels: the resident path's own wire, plain TCP with framed pickle messages.

A resident step (``ConfigProto(resident_steps=True)``) is a handful of small messages:
the client starts each worker's part, workers hand tensors to each other, and each
worker replies with what the client fetches. Sent through ``distributed``'s RPC layer
each message costs 300-400 us of CPU on each side (comm handlers, msgpack framing,
``sizeof``, metrics, an event-loop hop in the client), which is what capped two
asynchronous ridge replicas at a third of TF1's rate. A step channel carries the same
messages with none of that:

* a message is ``pickle`` protocol 5 with its arrays out of band (no copies into the
  payload), framed as ``[u32 header length][header][payload][buffers...]`` where the
  header holds the payload and buffer lengths;
* each worker listens on its own port (``ChannelServer``, started on the worker's event
  loop the first time a client asks for its address, on the host its Dask address
  names);
* the client talks to workers over blocking sockets from the calling thread (one set
  per thread), so a step needs no hop through the client's event loop.

Dask still places, installs plans, watches workers and serves the dashboard; this is
only the per-step transport. It is used for ``tcp://`` clusters. A cluster secured with
TLS keeps Dask's comms (which carry its certificates): a plain socket would bypass them.
The trust model is Dask's own on an unsecured cluster, whose comms carry pickles too.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import pickle
import select
import socket
import struct
import threading
import time
from collections.abc import Callable
from typing import Any

_SIZE = struct.Struct("!I")
_COUNTS = struct.Struct("!QI")  # payload length, number of out-of-band buffers
_BUFFER = struct.Struct("!Q")


def encode(message: Any) -> list[Any]:
    """The frames of ``message``: arrays travel as their own buffers, uncopied."""
    buffers: list[pickle.PickleBuffer] = []
    payload = pickle.dumps(message, protocol=5, buffer_callback=buffers.append)
    raws = [b.raw() for b in buffers]
    header = _COUNTS.pack(len(payload), len(raws)) + b"".join(_BUFFER.pack(r.nbytes) for r in raws)
    return [_SIZE.pack(len(header)) + header + payload, *raws]


def _decode_header(header: bytes) -> tuple[int, list[int]]:
    payload, count = _COUNTS.unpack_from(header)
    sizes = [_BUFFER.unpack_from(header, _COUNTS.size + i * _BUFFER.size)[0] for i in range(count)]
    return payload, sizes


# --- asyncio side (workers) -----------------------------------------------------------------
async def read_message(reader: asyncio.StreamReader) -> Any:
    (size,) = _SIZE.unpack(await reader.readexactly(_SIZE.size))
    payload_size, sizes = _decode_header(await reader.readexactly(size))
    payload = await reader.readexactly(payload_size)
    # bytearrays: the arrays rebuilt on them are writeable, as after any unpickling.
    buffers = [bytearray(await reader.readexactly(n)) if n else bytearray() for n in sizes]
    return pickle.loads(payload, buffers=buffers)


def write_message(writer: asyncio.StreamWriter, message: Any) -> None:
    writer.writelines(encode(message))


class ChannelServer:
    """A worker's listening end: runs ``handler(message, reply)`` for each message.

    ``reply(message)`` answers on the connection the message came by. Peer connections
    (this worker's sends to others) are opened once and kept.
    """

    def __init__(self, handler: Callable[[Any, Callable[[Any], None]], Any] | None = None) -> None:
        self.handler = handler
        self._server: asyncio.AbstractServer | None = None
        self._peers: dict[str, asyncio.StreamWriter] = {}
        self._connecting: dict[str, asyncio.Lock] = {}
        self._serving: set[asyncio.Task] = set()  # one per accepted connection
        self.address = ""

    async def start(self, host: str) -> str:
        self._server = await asyncio.start_server(self._serve, host, 0)
        port = self._server.sockets[0].getsockname()[1]
        self.address = f"{host}:{port}"
        return self.address

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        _no_delay(writer)
        task = asyncio.current_task()
        if task is not None:
            self._serving.add(task)

        def reply(message: Any) -> None:
            if not writer.is_closing():
                write_message(writer, message)

        try:
            while True:
                message = await read_message(reader)
                if self.handler is not None:
                    self.handler(message, reply)
        except (asyncio.IncompleteReadError, ConnectionError, OSError):
            pass  # the other end went away: its steps are aborted by their own logic
        except asyncio.CancelledError:
            pass  # the worker is closing
        finally:
            writer.close()
            if task is not None:
                self._serving.discard(task)

    async def send(self, address: str, message: Any) -> None:
        """One-way ``message`` to the worker whose channel is at ``address``."""
        writer = self._peers.get(address)
        if writer is None or writer.is_closing():
            lock = self._connecting.setdefault(address, asyncio.Lock())
            async with lock:
                writer = self._peers.get(address)
                if writer is None or writer.is_closing():
                    host, port = address.rsplit(":", 1)
                    _, writer = await asyncio.open_connection(host, int(port))
                    _no_delay(writer)
                    self._peers[address] = writer
        write_message(writer, message)
        await writer.drain()

    async def aclose(self) -> None:
        """Stops listening and closes every connection (on the server's loop)."""
        # Let accepts in flight finish first: asyncio (3.11) builds an accepted
        # connection's transport a loop turn later, and if the server is closed by then
        # that transport is dropped unclosed.
        await asyncio.sleep(0.005)
        if self._server is not None:
            self._server.close()
        peers = list(self._peers.values())
        self._peers.clear()
        for writer in peers:
            writer.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(writer.wait_closed(), 5)
        for task in list(self._serving):
            task.cancel()
        if self._serving:
            await asyncio.wait(list(self._serving), timeout=5)
        await asyncio.sleep(0.01)  # closing transports finish on the next loop turns


def _no_delay(writer: asyncio.StreamWriter) -> None:
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


# --- blocking side (the client) -------------------------------------------------------------
def _recv_exactly(sock: socket.socket, n: int) -> bytearray:
    buffer = bytearray(n)
    view = memoryview(buffer)
    got = 0
    while got < n:
        k = sock.recv_into(view[got:])
        if k == 0:
            raise ConnectionResetError("the worker closed the step channel")
        got += k
    return buffer


def recv_message(sock: socket.socket) -> Any:
    (size,) = _SIZE.unpack(_recv_exactly(sock, _SIZE.size))
    payload_size, sizes = _decode_header(bytes(_recv_exactly(sock, size)))
    payload = _recv_exactly(sock, payload_size)
    buffers = [_recv_exactly(sock, n) for n in sizes]
    return pickle.loads(payload, buffers=buffers)


def send_message(sock: socket.socket, message: Any) -> None:
    for frame in encode(message):
        sock.sendall(frame)


class Lost(Exception):
    """A worker the step needs was lost (``watch()`` said so) before all replies came."""


class ChannelClient:
    """The client's connections to worker channels, one socket per (thread, address)."""

    def __init__(self, connect_timeout: float = 10.0) -> None:
        self._local = threading.local()
        self._connect_timeout = connect_timeout
        self._ids = itertools.count(1)  # request ids (``next`` is atomic in CPython)
        self._lock = threading.Lock()
        self._every: set[socket.socket] = set()  # all threads' sockets, for close()

    def _sockets(self) -> dict[str, socket.socket]:
        socks = getattr(self._local, "sockets", None)
        if socks is None:
            socks = self._local.sockets = {}
        return socks

    def _socket(self, address: str) -> socket.socket:
        socks = self._sockets()
        sock = socks.get(address)
        if sock is None:
            host, port = address.rsplit(":", 1)
            sock = socket.create_connection((host, int(port)), self._connect_timeout)
            sock.settimeout(None)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            socks[address] = sock
            with self._lock:
                self._every.add(sock)
        return sock

    def drop(self, address: str) -> None:
        """Closes this thread's connection to ``address`` (late replies die with it)."""
        sock = self._sockets().pop(address, None)
        if sock is not None:
            with self._lock:
                self._every.discard(sock)
            with contextlib.suppress(OSError):
                sock.close()

    def request_all(
        self,
        requests: dict[str, tuple[str, dict]],
        lost: Callable[[], bool],
        deadline: float | None,
    ) -> dict[str, Any]:
        """Sends each ``name -> (address, message)`` and waits for every reply.

        Returns ``name -> reply``, or the exception a connection failed with. Raises
        ``Lost`` when ``lost()`` turns true, ``TimeoutError`` past ``deadline``
        (``time.monotonic()``); connections still owing a reply are then dropped.
        """
        request_id = next(self._ids)
        out: dict[str, Any] = {}
        waiting: dict[socket.socket, tuple[str, str]] = {}
        for name, (address, message) in requests.items():
            try:
                sock = self._socket(address)
                send_message(sock, {**message, "id": request_id})
                waiting[sock] = (name, address)
            except OSError as exc:
                self.drop(address)
                out[name] = exc
        if out:
            # A worker did not take its part: the others' parts cannot finish (the
            # caller aborts them); their connections are dropped with any late reply.
            for name, address in waiting.values():
                self.drop(address)
                out[name] = {"status": "aborted", "reason": "a peer could not be reached"}
            return out
        try:
            while waiting:
                wait = 0.25 if deadline is None else min(0.25, deadline - time.monotonic())
                if wait <= 0:
                    raise TimeoutError
                ready, _, _ = select.select(list(waiting), [], [], wait)
                for sock in ready:
                    name, address = waiting[sock]
                    try:
                        reply = recv_message(sock)
                    except (OSError, EOFError, pickle.UnpicklingError) as exc:
                        del waiting[sock]
                        self.drop(address)
                        out[name] = exc
                        continue
                    if reply.get("id") == request_id:  # else a late reply of an old step
                        del waiting[sock]
                        out[name] = reply
                if waiting and lost():
                    raise Lost
        except BaseException:
            for _, address in waiting.values():
                self.drop(address)
            raise
        return out

    def close(self) -> None:
        """Closes every thread's connections."""
        with self._lock:
            every, self._every = self._every, set()
        for sock in every:
            with contextlib.suppress(OSError):
                sock.close()
