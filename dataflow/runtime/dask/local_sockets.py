"""Step streams between two processes of one host, moved to a Unix socket.

A step stream starts as a Dask connection to a worker (``stream.py``). When the
connecting end (the client, or a worker sending to a peer) runs on the worker's host, it
asks the worker, on that connection, to move the stream to a Unix socket, and every
step message travels there from then on. Why: each small message pays loopback TCP's
whole protocol stack on both ends, and a step is a chain of them (client -> ps ->
worker -> ps -> client for a ps and a worker). Measured on the project's 2-core VM, a
300-byte ping-pong between two processes took 88-95 us a round trip over loopback TCP
and 30-43 us over a Unix socket (29-33 against 9-13 us of system CPU).

Decisions, and why:

* **The offer goes over the Dask connection.** The connecting end sends ``{"op":
  "dataflow_local", "host": ...}`` as the stream's first step message (after the
  shared-memory set-up of ``shm_parts``); a worker on the same host (``host_identity``:
  kernel boot id and hostname) answers with its socket's address and a one-time random
  token, or with a refusal. On a TLS cluster the token travels encrypted.
* **One listening socket per worker process, in Linux's abstract namespace.** No file
  to create or clean up; the name is random and goes with the process. Anyone on the
  host can connect to an abstract name, so before reading anything else the worker
  checks the peer's user (``SO_PEERCRED``: the worker's own) and then the token, the
  first 16 raw bytes, before any frame is parsed (frames carry pickles). A process of
  the same user could read either process's memory anyway: the same trust as the
  shared-memory arenas of ``shm_parts``, and like them it skips TLS: on a TLS cluster
  the bytes of a moved stream are not encrypted, and never leave the machine.
* **Network namespaces.** Containers that share a kernel (same boot id) but not a
  network namespace cannot reach each other's abstract names: the connection fails and
  the stream stays where it was.
* **Large parts keep shared memory.** A 4 MB transfer over a Unix socket took 0.67 ms
  on the same VM, copying it into and out of an arena about 0.3 ms: the stream's
  ``shm_parts.Link`` moves along with it, with the plain-socket threshold (1 MB) now
  that no encryption is skipped below it.
* **Fallback.** ``DATAFLOW_UNIX_SOCKETS=0`` at either end, a system without abstract
  Unix sockets (only Linux has them), another host, or anything failing on the way:
  the stream stays on its Dask connection, silently, as between hosts.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import socket
import struct
import sys
from collections.abc import Callable
from typing import Any

from .frames import TAKEOVER_ACK
from .shared_memory.shm_parts import host_identity

LOCAL_OP = "dataflow_local"
TOKEN_BYTES = 16
CLAIM_SECONDS = 30.0  # how long a connection may take to present its token
_CREDENTIALS = struct.Struct("3i")  # struct ucred: pid, uid, gid


def enabled() -> bool:
    """Whether this process moves (or accepts moving) streams to Unix sockets
    (``DATAFLOW_UNIX_SOCKETS=0``: no)."""
    return (
        os.environ.get("DATAFLOW_UNIX_SOCKETS", "1") != "0"
        and sys.platform.startswith("linux")
        and hasattr(socket, "AF_UNIX")
        and hasattr(socket, "SO_PEERCRED")
    )


def offer_request() -> dict | None:
    """The connecting end's request to move its stream, or ``None`` when it is off."""
    if not enabled() or not host_identity():
        return None
    return {"op": LOCAL_OP, "host": host_identity()}


def is_local_op(message: Any) -> bool:
    return type(message) is dict and message.get("op") == LOCAL_OP


def same_user(sock: socket.socket) -> bool:
    """Whether the process at the other end of the Unix socket ``sock`` runs as us."""
    try:
        _, uid, _ = _CREDENTIALS.unpack(
            sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _CREDENTIALS.size)
        )
    except OSError:
        return False
    return uid == os.getuid()


class _Claim(asyncio.Protocol):
    """An accepted connection until its token is read: checks the peer's user and the
    token, then hands the transport to the stream it was offered for."""

    def __init__(self, listener: Listener) -> None:
        self.listener = listener
        self.transport: Any = None
        self.got = bytearray()
        self.timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: Any) -> None:
        self.transport = transport
        sock = transport.get_extra_info("socket")
        if sock is None or not same_user(sock):
            transport.abort()
            return
        # A connection that sends no token is not kept open for ever.
        self.timer = asyncio.get_running_loop().call_later(CLAIM_SECONDS, transport.abort)

    def data_received(self, data: bytes) -> None:
        self.got += data
        if len(self.got) < TOKEN_BYTES:
            return
        if self.timer is not None:
            self.timer.cancel()
        token, rest = bytes(self.got[:TOKEN_BYTES]), bytes(self.got[TOKEN_BYTES:])
        attach = self.listener.claims.pop(token, None)
        if attach is None or rest:  # (the other end sends nothing before our ack)
            self.transport.abort()
            return
        attach(self.transport)

    def connection_lost(self, exc: BaseException | None) -> None:
        if self.timer is not None:
            self.timer.cancel()
        self.transport = None


class Listener:
    """A worker's Unix socket for step streams moved off its Dask connections.

    ``offer(attach)`` answers a request: the address and a new token; the connection
    that presents the token is handed to ``attach(transport)`` (on the event loop),
    which takes it over and writes ``TAKEOVER_ACK``. Made on the worker's event loop."""

    def __init__(self) -> None:
        self.address = f"\0dataflow-steps-{os.getpid()}-{secrets.token_hex(12)}"
        self.claims: dict[bytes, Callable[[Any], None]] = {}
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.bind(self.address)
            sock.listen(128)
            sock.setblocking(False)
        except BaseException:
            sock.close()
            raise
        self._sock = sock
        self._closed = False
        self._server: asyncio.AbstractServer | None = None
        # Listening already: a connection made before the server's first accept waits
        # in the backlog.
        self._starting = asyncio.ensure_future(
            asyncio.get_running_loop().create_unix_server(lambda: _Claim(self), sock=sock)
        )
        self._starting.add_done_callback(self._started)

    def _started(self, task: asyncio.Future) -> None:
        if task.cancelled() or task.exception() is not None:
            self._sock.close()
            return
        self._server = task.result()
        if self._closed:  # (closed while the server was starting)
            self._server.close()

    def offer(self, attach: Callable[[Any], None]) -> tuple[dict, bytes]:
        """(the answer to send, its token); ``withdraw(token)`` when it goes unused."""
        token = secrets.token_bytes(TOKEN_BYTES)
        self.claims[token] = attach
        return {"op": LOCAL_OP, "address": self.address, "token": token}, token

    def withdraw(self, token: bytes) -> None:
        self.claims.pop(token, None)

    def close(self) -> None:
        self._closed = True
        self.claims.clear()
        if self._server is not None:
            self._server.close()  # (closes the listening socket)
        else:  # still starting: ``_started`` closes the socket or the server
            self._starting.cancel()


def worker_listener(worker: Any) -> Listener:
    """``worker``'s Unix socket for step streams from its own host, opened on first use
    (on the worker's event loop)."""
    listener = getattr(worker, "_dataflow_local", None)
    if listener is None:
        listener = worker._dataflow_local = Listener()
    return listener


def close_worker_listener(worker: Any) -> None:
    """Stops ``worker``'s Unix socket accepting; streams already on it go on."""
    listener = getattr(worker, "_dataflow_local", None)
    if listener is not None:
        worker._dataflow_local = None
        listener.close()


REFUSED = {"op": LOCAL_OP, "address": None}


def answer(
    listener: Callable[[], Listener | None], request: dict, attach: Callable
) -> tuple[dict, Callable[[], None] | None]:
    """A worker's answer to a stream's request to move, and what withdraws the offer if
    it goes unused (``None``: refused). The listener is made only for an offer."""
    if not enabled() or not host_identity() or request.get("host") != host_identity():
        return REFUSED, None
    try:
        local = listener()
    except OSError:
        return REFUSED, None
    if local is None:
        return REFUSED, None
    offer, token = local.offer(attach)
    return offer, lambda: local.withdraw(token)


def _address_and_token(answer: Any) -> tuple[str, bytes] | None:
    if not is_local_op(answer):
        return None
    address, token = answer.get("address"), answer.get("token")
    if not isinstance(address, str) or not isinstance(token, bytes) or len(token) != TOKEN_BYTES:
        return None
    return address, token


def connect_blocking(answer: Any, timeout: float) -> socket.socket | None:
    """The client's side: the Unix socket the worker offered in ``answer``, connected
    and taken over by the worker (blocking), or ``None`` (refused, or it failed)."""
    where = _address_and_token(answer)
    if where is None:
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        sock.connect(where[0])
        sock.sendall(where[1])
        if sock.recv(len(TAKEOVER_ACK)) != TAKEOVER_ACK:
            raise ConnectionError("the worker did not take the Unix socket over")
        sock.settimeout(None)
    except OSError:
        sock.close()
        return None
    return sock


async def connect(answer: Any, timeout: float) -> socket.socket | None:
    """A worker's side towards a peer: as ``connect_blocking``, on the event loop; the
    socket is non-blocking, for a transport."""
    where = _address_and_token(answer)
    if where is None:
        return None
    loop = asyncio.get_running_loop()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.setblocking(False)

    async def handshake() -> bytes:
        await loop.sock_connect(sock, where[0])
        await loop.sock_sendall(sock, where[1])
        return await loop.sock_recv(sock, len(TAKEOVER_ACK))

    try:
        if await asyncio.wait_for(handshake(), timeout) != TAKEOVER_ACK:
            raise ConnectionError("the peer did not take the Unix socket over")
    except (OSError, asyncio.TimeoutError):
        with contextlib.suppress(OSError):
            sock.close()
        return None
    return sock
