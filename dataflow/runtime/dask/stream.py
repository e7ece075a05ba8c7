"""Step streams: the messages of a resident step, over Dask's own connections.

A step on a cluster is a handful of small messages: the client starts each worker's part
(``run``), workers hand tensors to each other (``send``), each worker replies with what
the client fetches, and ``abort`` stops a part. They travel on long-lived connections
opened with ``distributed.comm.connect`` to the workers' Dask addresses, so they use the
cluster's port, its protocol and its ``Security`` (a TLS cluster's certificates and
ciphers): there is no second port and nothing a Dask connection would not allow. The
first message on a connection is Dask's own ``{"op": "dataflow_steps"}``; the worker's
handler (``serve``) then keeps the connection for step messages until it closes.

Sent as Dask RPC messages each step message cost 300-400 us of CPU on each side (handler
dispatch, msgpack framing, ``sizeof``, metrics, and a hop through the client's event
loop), which capped two asynchronous replicas at a third of TF1's rate. On a stream:

* a message is ``pickle`` protocol 5 with its arrays out of band (no copies into the
  payload), framed as ``[u32 header length][header][payload][buffers...]`` where the
  header holds the payload and buffer lengths;
* the worker acknowledges the takeover with one byte, after which neither end holds
  unread bytes in tornado; workers then take the socket out of tornado and hand it to an
  asyncio protocol (``FrameProtocol``) whose parser (``FrameParser``) cuts messages out
  of the bytes as they arrive and hands each to the handler at once (no coroutine or
  task per message): on plain TCP over asyncio's own transport, under TLS over
  ``TlsTransport``, which keeps the ``SSLSocket`` and its TLS session;
* bytes are copied once, by the kernel (issue 34): a reader allocates each part of a
  message (payload, arrays) when its header arrives and receives a large part straight
  into it (``FrameProtocol.get_buffer``), small messages through one reused chunk; a
  writer hands a large message's arrays to the socket from their own memory (the
  client's ``sendall``, the workers' slices as the transport empties), never joined
  into one ``bytes``; a step's large requests to several workers go out at once, a
  thread each;
* the client takes its connection's socket out of tornado once Dask has connected it
  (handshake and TLS done) and talks over it with blocking calls from the calling thread
  (one set of connections per thread), so a step needs no hop through the client's
  event loop (``stream_client.py``). A TLS socket keeps its TLS session: bytes are
  encrypted as Dask's are;
* a client and worker on one host pass parts of 1 MB or more (over TLS, 64 KiB) in shared
  memory (``shm_parts``);
* a stream whose two ends run on one host moves to the worker's Unix socket once the
  worker agrees (``local_sockets``), TLS ones included: loopback TCP cost each small
  message of a step two to three times a Unix socket's; a worker's stream to a peer
  then sets shared memory up too (``share_memory``), its large tensors crossing in the
  writer's arena;
* a worker may answer a ``run`` in more than one message: fetched values of a stage that
  later stages of the step follow on that worker leave at once, in a reply whose status
  is ``EARLY`` (when the request says ``EARLY``: the client's streams do), and the
  client reads them while the worker runs the rest; the last reply has the step's
  status and the other values.

A comm that is not a tornado stream (a transport other than ``tcp://``/``tls://``)
carries the same frames inside ordinary Dask messages, on the client's event loop:
slower, same behaviour. The trust model is Dask's: its comms carry pickles too.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import ssl
from collections.abc import Callable
from typing import Any

from ..._util.comm_socket import detach
from . import local_sockets
from .frames import (
    TAKEOVER_ACK,
    FrameParser,
    FrameTooLarge,
    decode,
    encode,
    writes,
)
from .shared_memory import shm_parts
from .tls_transport import TlsTransport

STREAM_OP = "dataflow_steps"
EARLY = "early"  # a ``run`` request's flag (early replies welcome), such a reply's status


def raw_stream(comm: Any) -> Any:
    """The tornado stream under a Dask comm (``tcp://`` and ``tls://``), else ``None``."""
    from tornado.iostream import IOStream

    stream = getattr(comm, "stream", None)
    return stream if isinstance(stream, IOStream) else None


# --- event-loop side (workers) --------------------------------------------------------------
logger = logging.getLogger(__name__)


def refuse_stream(peer: Any, exc: FrameTooLarge) -> None:
    """Logs why a worker closes a step stream whose frame it refused."""
    logger.warning("closing the step stream from %s: %s", peer or "a client", exc)


_READ_CHUNK = 256 * 1024  # the reused buffer small messages are received through
# A part (payload or array) still missing at least this many bytes is received straight
# into its own memory; smaller reads go through one reused chunk, so that a small step's
# messages cost one system call for all their frames.
DIRECT_BYTES = 64 * 1024
# Frames of a large message reach the transport in slices of this size, each when the
# transport's buffer is empty: the kernel copies a slice out of the array, and at most
# what it left of one slice is copied into the transport's buffer (Python 3.11's
# ``writelines`` joins all frames into one ``bytes``, and ``write`` copies what the
# socket did not take: a second and third copy of the whole array).
WRITE_SLICE = 1 << 20


class FrameProtocol(asyncio.BufferedProtocol):
    """A plain TCP step stream on asyncio's transport, without streams: bytes are
    received into the ``FrameParser``'s message parts (``get_buffer``), and large
    messages written slice by slice as the socket takes them (``write``)."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.parser = FrameParser()
        self.link: shm_parts.Link | None = None  # (set with the parser's by ``serve``)
        self.lost = asyncio.get_running_loop().create_future()
        self._paused: asyncio.Future | None = None
        self._chunk = memoryview(bytearray(_READ_CHUNK))
        self._direct = False  # get_buffer handed out a view into a message part
        self._pending: collections.deque[memoryview] = collections.deque()

    def connection_made(self, transport: Any) -> None:
        self.transport = transport
        # Paused as soon as anything is buffered, resumed once it is all sent: the next
        # slice of a large message then goes to an empty buffer, straight to the socket.
        transport.set_write_buffer_limits(high=0)

    # --- reading ---
    def get_buffer(self, sizehint: int) -> memoryview:
        view = self.parser.part_buffer(DIRECT_BYTES)
        self._direct = view is not None
        return view if view is not None else self._chunk

    def buffer_updated(self, nbytes: int) -> None:
        try:
            if self._direct:
                self.parser.advance(nbytes)
            else:
                self.parser.feed(self._chunk[:nbytes])
        except FrameTooLarge as exc:
            refuse_stream(
                self.transport.get_extra_info("peername") if self.transport else None, exc
            )
            if self.transport is not None:
                self.transport.close()

    def connection_lost(self, exc: BaseException | None) -> None:
        self._pending.clear()
        if not self.lost.done():
            self.lost.set_result(exc)
        if self._paused is not None and not self._paused.done():
            self._paused.set_result(None)

    # --- writing (flow control: the transport pauses us while it buffers anything) ---
    def pause_writing(self) -> None:
        if self._paused is None or self._paused.done():
            self._paused = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        self._flush()
        transport = self.transport
        if self._pending or (transport is not None and transport.get_write_buffer_size()):
            return  # the transport paused us again: its next resume settles the wait
        if self._paused is not None and not self._paused.done():
            self._paused.set_result(None)

    def _flush(self) -> None:
        """Hands queued slices to the transport until it buffers some of one."""
        transport = self.transport
        while self._pending and transport is not None and not transport.is_closing():
            if transport.get_write_buffer_size():
                return
            transport.write(self._pending.popleft())
        if transport is None or transport.is_closing():
            self._pending.clear()

    def write(self, message: Any) -> Any:
        """Writes ``message``; ``None``, or a future to await while part of it waits
        for the socket."""
        assert self.transport is not None
        frames = writes(message, self.link)
        if len(frames) == 1 and not self._pending:
            self.transport.write(frames[0])
        else:
            for frame in frames:
                view = memoryview(frame).cast("B")
                for start in range(0, view.nbytes, WRITE_SLICE):
                    self._pending.append(view[start : start + WRITE_SLICE])
            self._flush()
            if self._pending and (self._paused is None or self._paused.done()):
                self._paused = asyncio.get_running_loop().create_future()
        paused = self._paused
        return paused if paused is not None and not paused.done() else None


class Endpoint:
    """One end of a step stream on an event loop: ``read()`` and ``send(message)``.

    Made by ``Endpoint.take(comm)``. A TCP or TLS socket leaves tornado for an asyncio
    transport with a frame parser (``FrameProtocol``), which keeps the descriptor
    registered instead of re-arming it for every read and write (a third of a small
    step's CPU on the workers) and spends no coroutine per message: asyncio's own for
    plain TCP, ``TlsTransport`` for an ``SSLSocket`` (whose TLS session asyncio's TLS
    transport cannot adopt); another transport keeps Dask's messages."""

    def __init__(self, comm: Any) -> None:
        self.comm = comm
        self.protocol: FrameProtocol | None = None
        self.link: shm_parts.Link | None = None
        self.tls = False  # the socket is an ``ssl.SSLSocket``

    @classmethod
    async def take(cls, comm: Any, accepted: bool) -> Endpoint:
        """Takes ``comm`` over for step messages; ``accepted``: the worker's end, which
        acknowledges once it reads step messages itself (the connecting end sends none
        before that, so tornado holds no bytes of them when the socket changes hands)."""
        end = cls(comm)
        stream = raw_stream(comm)
        if stream is None:
            return end
        if accepted:
            await stream.write(TAKEOVER_ACK)
        else:
            await stream.read_bytes(len(TAKEOVER_ACK))
        end.tls = isinstance(stream.socket, ssl.SSLSocket)
        sock = detach(comm, stream)
        if end.tls:  # the TLS session stays in the SSLSocket
            end.protocol = FrameProtocol()
            TlsTransport(sock, end.protocol)
        else:
            sock.setblocking(False)
            loop = asyncio.get_running_loop()
            _, end.protocol = await loop.create_connection(FrameProtocol, sock=sock)
        return end

    async def move_local(self, timeout: float) -> None:
        """Moves this outgoing stream to the peer's Unix socket when both run on one
        host (``local_sockets``); otherwise, or if anything fails, it stays."""
        request = local_sockets.offer_request()
        if request is None or self.protocol is None:
            return
        loop = asyncio.get_running_loop()
        answered: asyncio.Future = loop.create_future()
        self.protocol.parser.deliver_to(
            lambda message: None if answered.done() else answered.set_result(message)
        )
        await self.write(request)
        try:
            answer = await asyncio.wait_for(answered, timeout)
        except asyncio.TimeoutError:
            return
        sock = await local_sockets.connect(answer, timeout)
        if sock is None:
            return
        old = self.protocol
        try:
            _, self.protocol = await loop.create_unix_connection(FrameProtocol, sock=sock)
        except OSError:
            sock.close()
            return
        self.tls = False
        if old.transport is not None:
            old.transport.close()

    async def read(self) -> Any:
        if self.protocol is not None:  # (serve takes messages by callback instead)
            raise RuntimeError("a TCP or TLS step stream delivers messages to on_message")
        return decode((await self.comm.read())["frames"])

    def send(self, message: Any) -> Any:
        """Queues ``message``; returns ``None`` or an awaitable for its flush."""
        if self.protocol is not None:
            return self.protocol.write(message)
        return self.comm.write({"frames": encode(message)})

    async def write(self, message: Any) -> None:
        flushed = self.send(message)
        if flushed is not None:
            await flushed

    def closed(self) -> bool:
        if self.protocol is not None:
            transport = self.protocol.transport
            return transport is None or transport.is_closing() or self.protocol.lost.done()
        return self.comm.closed()

    async def aclose(self) -> None:
        if self.protocol is not None:
            if self.protocol.transport is not None:
                self.protocol.transport.close()
        else:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.comm.close(), 5)


async def serve(
    comm: Any,
    handler: Callable[[Any, Callable[[Any], None]], Any],
    listener: Callable[[], local_sockets.Listener | None] = lambda: None,
) -> None:
    """Keeps an accepted comm for step messages: ``handler(message, reply)`` for each,
    until the other end goes. ``reply(message)`` answers on this connection.

    ``listener()``: this worker's Unix socket (``local_sockets``), made on first use;
    a stream from this host that asks to move there continues on it, with the same
    handler and shared memory, until that connection goes too."""
    from distributed.comm import CommClosedError
    from tornado.iostream import StreamClosedError

    pending: set[Any] = set()
    end: Endpoint | None = None
    link, handler = shm_parts.serving(handler)
    answer_on: list[Callable[[Any], None]] = []  # the stream's current reply function
    loop = asyncio.get_running_loop()

    def acknowledge() -> None:
        # A peer's one-way stream: the header of this small message says what we
        # consumed, so the peer may reuse its arena's region (``shm_parts.Link.hello``).
        if answer_on:
            answer_on[-1]({"op": shm_parts.SHM_OP, "ack": True})

    def consumed() -> None:  # (any thread: a lent view's finalizer)
        with contextlib.suppress(RuntimeError):  # the loop closed: the stream is gone
            loop.call_soon_threadsafe(acknowledge)

    link.on_consumed = consumed

    def early_aware(send: Callable[[Any], Any], message: Any) -> Any:
        """``send(message)``; an early reply's parts read in place are flagged: this
        worker goes on computing while the client reads them (``frames.WRITER_BUSY``)."""
        if not (isinstance(message, dict) and message.get("status") == EARLY):
            return send(message)
        link.writer_busy = True
        try:
            return send(message)
        finally:
            link.writer_busy = False

    moved: list[FrameProtocol] = []  # the stream on a Unix socket, once it moved
    offers: list[Callable[[], None]] = []  # each withdraws an offer of ours to move it

    def reply(message: Any) -> None:
        assert end is not None
        if not end.closed():
            flushed = early_aware(end.send, message)
            if end.protocol is None:  # a Dask message: a coroutine
                task = asyncio.ensure_future(flushed)
                pending.add(task)
                task.add_done_callback(pending.discard)
            # Otherwise the transport buffers the reply; the client reads it at once, so
            # there is no backlog to wait for (and the handler must not block the loop).

    def attach(transport: Any) -> None:
        """The stream continues on the accepted Unix socket ``transport``."""
        protocol = FrameProtocol()
        protocol.link = protocol.parser.link = link
        link.over_unix_socket()
        transport.set_protocol(protocol)
        protocol.connection_made(transport)
        transport.write(TAKEOVER_ACK)

        def local_reply(message: Any) -> None:
            if not protocol.lost.done() and not transport.is_closing():
                early_aware(protocol.write, message)

        protocol.parser.deliver_to(lambda message: handler(message, local_reply))
        moved.append(protocol)
        answer_on.append(local_reply)

    def on_message(message: Any, answer: Callable[[Any], None]) -> None:
        if local_sockets.is_local_op(message):
            if end is None or end.protocol is None:  # (only a socket's stream moves)
                answer(local_sockets.REFUSED)
                return
            offer, withdraw = local_sockets.answer(listener, message, attach)
            if withdraw is not None:
                offers.append(withdraw)
            answer(offer)
            return
        handler(message, answer)

    gone = (StreamClosedError, CommClosedError, OSError, EOFError)
    with link, contextlib.suppress(*gone, asyncio.IncompleteReadError, asyncio.CancelledError):
        end = await Endpoint.take(comm, accepted=True)
        end.link = link
        answer_on.append(reply)
        if end.tls:
            link.over_tls()
        protocol = end.protocol
        if protocol is not None:
            protocol.link = protocol.parser.link = link
            protocol.parser.deliver_to(lambda message: on_message(message, reply))
            try:
                await protocol.lost
                for moved_protocol in moved:
                    await moved_protocol.lost
            finally:
                for withdraw in offers:  # (a claimed one is gone already)
                    withdraw()
                for each in (protocol, *moved):
                    if each.transport is not None:
                        each.transport.close()
            return
        while True:
            on_message(await end.read(), reply)


async def open_stream(address: str, connection_args: dict, timeout: float | None = None) -> Any:
    """A new Dask connection to ``address``, switched to step messages (``timeout``:
    Dask's connect timeout when ``None``; it retries a refused connection until then)."""
    from distributed.comm import connect

    comm = await connect(address, timeout=timeout, **connection_args)
    await comm.write({"op": STREAM_OP, "reply": False})
    return comm


# How long a worker may take to answer a stream's set-up messages (shared memory, the
# move to a Unix socket) before the stream gives up.
MOVE_TIMEOUT = 30.0


class PeerStreams:
    """A worker's outgoing step streams to its peers, opened once and kept."""

    def __init__(self, connection_args: dict) -> None:
        self._args = connection_args
        self._peers: dict[str, Endpoint] = {}
        self._connecting: dict[str, asyncio.Lock] = {}

    def send_now(self, address: str, message: Any) -> Any:
        """Queues one-way ``message`` to the worker at Dask address ``address`` now when
        its stream is open, and returns ``None`` (or an awaitable while the stream's
        buffer is full); otherwise returns a coroutine that connects, then sends."""
        end = self._peers.get(address)
        if end is not None and not end.closed():
            return end.send(message)
        return self._connect_and_send(address, message)

    async def send(self, address: str, message: Any) -> None:
        """One-way ``message`` to the worker at Dask address ``address``."""
        flushed = self.send_now(address, message)
        if flushed is not None:
            await flushed

    async def _connect_and_send(self, address: str, message: Any) -> None:
        async with self._connecting.setdefault(address, asyncio.Lock()):
            end = self._peers.get(address)
            if end is None or end.closed():
                if end is not None and end.link is not None:
                    end.link.close()
                comm = await open_stream(address, self._args)
                end = await Endpoint.take(comm, accepted=False)
                await end.move_local(MOVE_TIMEOUT)
                await share_memory(end, MOVE_TIMEOUT)
                self._peers[address] = end
        await end.write(message)

    async def aclose(self) -> None:
        peers = list(self._peers.values())
        self._peers.clear()
        for end in peers:
            await end.aclose()
            if end.link is not None:
                end.link.close()


async def share_memory(end: Endpoint, timeout: float) -> None:
    """Sets shared memory up on a worker's new stream to a peer on its host, as the
    client does on its own (``stream_client.client_link``), asking for acknowledgements in
    messages of their own: the peer sends nothing else back. Large tensors of a step
    then cross in the writer's arena and the peer lends them to its stages, where they
    went over the Unix socket (13 MB of a CNN's weights took 8 ms on the 2-core VM).
    Anything that fails leaves the socket path."""
    protocol = end.protocol
    if protocol is None:
        return
    link = shm_parts.Link()
    if end.tls:
        link.over_tls()
    hello = link.hello(acks=True)
    if hello is None:
        return
    answered: asyncio.Future = asyncio.get_running_loop().create_future()
    protocol.parser.deliver_to(
        lambda message: None if answered.done() else answered.set_result(message)
    )
    # The link from now on: the peer's answer comes with a shared-memory header.
    protocol.link = protocol.parser.link = end.link = link
    try:
        await end.write(hello)
        try:
            answer = await asyncio.wait_for(answered, timeout)
        except asyncio.TimeoutError:
            return  # (the link stays inactive: frames as on the socket path)
        finally:
            # Acknowledgements only: their headers say what the peer consumed.
            protocol.parser.deliver_to(lambda message: None)
        await end.write(link.answered(answer))
    except BaseException:
        link.close()  # (the stream broke: its arenas go with it)
        raise
