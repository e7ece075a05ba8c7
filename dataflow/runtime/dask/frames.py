"""How step messages are framed (``dask/stream.py`` says what travels and why).

A message is ``pickle`` protocol 5 with its arrays out of band (no copies into the
payload), framed as ``[u32 header length][header][payload][buffers...]``, the header
holding the payload's and each buffer's length. This module writes and reads frames on
each kind of endpoint: a blocking socket (``recv_message``/``send_frames``, the
client's side), and bytes as a plain or TLS transport hands them over (``FrameParser``,
the workers' side; ``writes`` gives the frames their transports send).

A reader allocates a message's payload and buffers when its header arrives, before the
data, so a header may not announce more than a reader would ever accept
(``check_header``): at most ``MAX_BUFFERS`` buffers and ``max_message_bytes()`` in all,
Dask's own cap on what one of its TCP connections buffers (half the machine's memory,
``distributed.comm.tcp.MAX_BUFFER_SIZE``). A larger frame is refused with a
``FrameTooLarge`` before anything is allocated, and the connection is closed.

Between a client and a worker on one host, large parts may travel in shared memory
(``shm_parts.py`` says how and why): the header then flags such a part (``SHARED``) with
its arena generation and offset instead of sending its bytes, and a header of a stream
that set shared memory up (``EXTENDED`` in its count) ends with the generation of the
peer's arena its writer last consumed. A reader copies a shared part into memory of its
own when the header arrives (``shm_parts.Link.take``). A part of a worker's reply that
the client reads from the worker's own memory (``IN_PLACE`` beside ``SHARED``) carries
the worker's hold number and the part's address instead (``shm_parts.Link.read``); one
that lies on a slab the client maps (``HANDOFF`` beside both) carries the slab's number
and the worker's descriptor of it (``handoff.py``).
"""

from __future__ import annotations

import functools
import pickle
import socket
import struct
from collections.abc import Callable
from typing import Any

import numpy as np

from ..._util.recycler import Recycler
from ..execute.large_outputs import HANDED_OFF_FROM

# The byte a worker sends once it has taken a connection over (a Dask connection, or a
# Unix socket a stream moved to): step frames may follow.
TAKEOVER_ACK = b"\x06"
SIZE = struct.Struct("!I")
COUNTS = struct.Struct("!QI")  # payload length, number of out-of-band buffers
BUFFER = struct.Struct("!Q")
# A message of a step carries one buffer per array it holds; a million is far beyond any
# step's, and keeps a lying header's own size (8 bytes a buffer) to 8 MB.
MAX_BUFFERS = 1 << 20
EXTENDED = 1 << 31  # in the buffer count: the header ends with an acknowledgement
SHARED = 1 << 63  # in a buffer's length: the part is in the writer's arena
IN_PLACE = 1 << 62  # with SHARED: the part is in the writer's own memory (peer reads)
# With IN_PLACE: the writer goes on computing while the part is read (an early reply,
# ``stream.py``), so the reader copies it on its own thread, leaving the writer a core.
WRITER_BUSY = 1 << 61
HANDOFF = 1 << 60  # with IN_PLACE: the part is a slab the reader maps (``handoff.py``)
SHARED_ENTRY = 3 * BUFFER.size  # length, arena generation, offset


class FrameTooLarge(ValueError):
    """A frame header announced more than a reader accepts (or was malformed); nothing
    was allocated for it."""


# Cached: read for every message, where the import statement alone took 3% of a ps's
# CPU in a profiled 40 KB step.
@functools.cache
def max_message_bytes() -> int:
    """The most bytes one message may announce: what Dask lets one TCP connection
    buffer (``distributed.comm.tcp.MAX_BUFFER_SIZE``, half the machine's memory)."""
    from distributed.comm.tcp import MAX_BUFFER_SIZE

    return int(MAX_BUFFER_SIZE)


def check_header_size(size: int) -> None:
    """Refuses a header longer than ``MAX_BUFFERS`` buffers' entries need."""
    most = COUNTS.size + MAX_BUFFERS * SHARED_ENTRY + BUFFER.size
    if size > most:
        raise FrameTooLarge(
            f"step stream frame header of {size} bytes: at most {most} (a corrupt or "
            "foreign stream)"
        )


def check_sizes(payload: int, sizes: list[int]) -> None:
    """Refuses a message announcing more bytes than ``max_message_bytes()``."""
    total = payload + sum(sizes)
    limit = max_message_bytes()
    if total > limit:
        raise FrameTooLarge(
            f"step stream message announces {total} bytes ({len(sizes)} buffers), over the "
            f"cap of {limit} bytes (Dask's distributed.comm.tcp.MAX_BUFFER_SIZE, half this "
            "machine's memory); nothing was allocated and the connection is closed"
        )


# A part at least this large is allocated by numpy: uninitialized, and on Linux in huge
# pages (numpy advises them for large arrays), where ``bytearray(n)`` zero-fills fresh
# 4 KB pages one fault at a time. Receiving 40 MB into a new bytearray took 3-5x as long
# as receiving it into a reused one on loopback; into ``np.empty``, about as long.
LARGE_PART = 1 << 20


# A part at least this large is received into memory kept from one message to the next
# (``_kept_parts``): glibc maps every block over 32 MiB afresh, its largest mmap
# threshold, and a client read 40 MB of a worker's reply in 6.6 ms into new memory
# against 3.3 ms into memory read before.
KEPT_PART = 32 << 20
# Up to four such parts stay between messages; one is handed out again only once nothing
# but this holds it (a fetched array the program keeps, or any view of it, holds it).
_kept_parts = Recycler(np, 4)


def allocate(nbytes: int) -> Any:
    """Writable memory of ``nbytes`` for one part of a message, owned by that part
    alone (an array unpickled on it is a view of it, and nothing else uses it while
    that array or any view of it lives)."""
    if nbytes >= KEPT_PART:
        return _kept_parts.empty((nbytes,), np.uint8)
    if nbytes >= LARGE_PART:
        return np.empty(nbytes, np.uint8)
    return bytearray(nbytes)


def encode(message: Any, link: Any = None, defer: bool = False) -> list[Any]:
    """The frames of ``message``: arrays travel as their own buffers, uncopied, or, on
    a stream with shared memory (``link``, a ``shm_parts.Link``), those of
    ``link.min_part`` bytes or more are copied into the writer's arena: now, or with
    ``defer`` by the ``shm_parts.Copy`` put first in the frames (``send_frames`` runs
    it)."""
    buffers: list[pickle.PickleBuffer] = []
    payload = pickle.dumps(message, protocol=5, buffer_callback=buffers.append)
    raws = [b.raw() for b in buffers]
    if link is None or not link.active:
        header = COUNTS.pack(len(payload), len(raws)) + b"".join(
            BUFFER.pack(r.nbytes) for r in raws
        )
        return [SIZE.pack(len(header)) + header + payload, *raws]
    # The payload is a part too (first): a non-contiguous array is pickled into it.
    parts: list[Any] = [memoryview(payload), *raws]
    entries = [BUFFER.pack(p.nbytes) for p in parts]
    copies: list[Any] = []
    if link.peer_reads:  # (a worker whose client reads large parts from its memory)
        for i, p in enumerate(parts) if link.slabs is not None else ():
            slab = link.slabs.claim(p) if i and p.nbytes >= HANDED_OFF_FROM else None
            if slab is not None:  # (a slab the client maps: ``handoff.py``)
                flags = SHARED | IN_PLACE | HANDOFF | (WRITER_BUSY if link.writer_busy else 0)
                entries[i] = SHARED_HEAD.pack(slab.nbytes | flags, slab.ident, slab.fd)
                parts[i] = None
        in_place = [
            i for i, p in enumerate(parts) if i and p is not None and p.nbytes >= link.in_place_from
        ]
        if in_place:
            hold, addresses = link.hold([parts[i] for i in in_place])
            flags = SHARED | IN_PLACE | (WRITER_BUSY if link.writer_busy else 0)
            for i, address in zip(in_place, addresses, strict=True):
                entries[i] = SHARED_HEAD.pack(parts[i].nbytes | flags, hold, address)
                parts[i] = None
    large = [i for i, p in enumerate(parts) if p is not None and p.nbytes >= link.min_part]
    placed = None
    if large and link.writable() is not None:
        placed = link.place([parts[i] for i in large])  # (None: the arena cannot grow yet)
    if placed is not None:
        generation, offsets, copy = placed
        if defer:
            copies.append(copy)
        else:
            copy()
        for i, offset in zip(large, offsets, strict=True):
            entries[i] = SHARED_HEAD.pack(parts[i].nbytes | SHARED, generation, offset)
            parts[i] = None
    header = COUNTS.pack(0, len(raws) | EXTENDED) + b"".join(entries) + BUFFER.pack(link.consumed)
    return [*copies, SIZE.pack(len(header)) + header, *(p for p in parts if p is not None)]


SHARED_HEAD = struct.Struct("!QQQ")


def decode_header(header: bytes, link: Any = None) -> tuple[Any, list[Any]]:
    """(payload length, buffer lengths) of a frame header, checked against the caps
    (``FrameTooLarge``) and against the header's own length (``ValueError``). A part in
    shared memory is ``(length, generation, offset)`` instead of a length. An extended
    header describes the payload as its first part and ends with an acknowledgement,
    which goes to ``link`` (a ``shm_parts.Link``)."""
    if len(header) < COUNTS.size:
        raise FrameTooLarge(f"step stream frame header of {len(header)} bytes is malformed")
    payload, count = COUNTS.unpack_from(header)
    extended = bool(count & EXTENDED)
    count &= ~EXTENDED
    if count > MAX_BUFFERS or len(header) < COUNTS.size + count * BUFFER.size + (
        BUFFER.size if extended else 0
    ):
        raise FrameTooLarge(
            f"step stream frame header announces {count} buffers in {len(header)} bytes "
            f"(at most {MAX_BUFFERS}, 8 bytes each)"
        )
    if extended and link is None:
        raise FrameTooLarge("step stream frame header names shared memory on a plain stream")
    sizes: list[Any] = []
    at = COUNTS.size
    for _ in range(count + extended):
        if at + BUFFER.size > len(header):
            raise FrameTooLarge("step stream frame header is truncated")
        (size,) = BUFFER.unpack_from(header, at)
        if size & SHARED:
            if not extended or at + SHARED_ENTRY > len(header):
                raise FrameTooLarge("step stream frame header has a malformed shared part")
            _, generation, offset = SHARED_HEAD.unpack_from(header, at)
            nbytes = size & ~(SHARED | IN_PLACE | WRITER_BUSY | HANDOFF)
            # (an in-place part: hold and address in the writer's memory, or slab and
            # descriptor, flagged)
            in_place = bool(size & IN_PLACE)
            busy = in_place and bool(size & WRITER_BUSY)
            slab = in_place and bool(size & HANDOFF)
            sizes.append((nbytes, generation, offset, in_place, busy, slab))
            at += SHARED_ENTRY
        else:
            sizes.append(size)
            at += BUFFER.size
    if extended:
        if at + BUFFER.size != len(header):
            raise FrameTooLarge("step stream frame header is malformed")
        (acked,) = BUFFER.unpack_from(header, at)
        link.acked = max(link.acked, acked)
        payload = sizes.pop(0)
    check_sizes(0, [s if isinstance(s, int) else s[0] for s in [payload, *sizes]])
    return payload, sizes


def part_memory(sizes: list[Any], link: Any) -> tuple[list[Any], list[Any]]:
    """(every buffer of a message, those the socket fills): a shared part is copied out
    of the peer's arena now, into memory of its own, or, where the link lends
    (``shm_parts``: a worker reading its client), is a read-only view of it (never the
    payload, the first: it is parsed at once); the others are allocated empty."""
    buffers, received = [], []
    for i, size in enumerate(sizes):
        if isinstance(size, int):
            buffers.append(allocate(size))
            received.append(buffers[-1])
            continue
        nbytes, generation, offset, in_place, writer_busy, slab = size
        try:
            if in_place:
                if link.lends or not i:
                    raise ValueError("only a worker's reply may name its own memory")
                if slab:
                    if link.slabs is None:
                        raise ValueError("a frame names a slab, which we may not map")
                    buffers.append(link.slabs.map(generation, offset, nbytes, writer_busy))
                    continue
                into = allocate(nbytes)
                buffers.append(link.read(generation, offset, nbytes, into, writer_busy))
                continue
            if i and link.lends:
                buffers.append(link.lend(generation, offset, nbytes))
                continue
            buffers.append(link.take(generation, offset, nbytes, allocate(nbytes)))
        except (OSError, ValueError) as exc:
            raise FrameTooLarge(f"step stream frame names unreadable shared memory: {exc}") from exc
    return buffers, received


def decode(frames: list[Any]) -> Any:
    """The message ``encode`` made ``frames`` of (frames as received)."""
    payload_size, sizes = decode_header(bytes(frames[0][SIZE.size :]))
    payload = bytes(frames[0][-payload_size:]) if payload_size else b""
    return pickle.loads(payload, buffers=[bytearray(f) for f in frames[1:]])


COALESCE_BYTES = 64 * 1024


def frame_bytes(frames: list[Any]) -> int:
    """The bytes ``frames`` move (a deferred copy's included)."""
    return sum(f.nbytes if callable(f) else memoryview(f).nbytes for f in frames)


def writes(message: Any, link: Any = None, defer: bool = False) -> list[Any]:
    """The frames of ``message`` as they are best written: a small message as one
    buffer (one system call and segment: a message in several TCP segments costs the
    reader a wake-up per segment), a large one frame by frame (no copy of its arrays)."""
    frames = encode(message, link, defer)
    if frame_bytes(frames) <= COALESCE_BYTES and not callable(frames[0]):
        return [b"".join(frames)]  # (a deferred copy, which comes first, stays a frame)
    return frames


# --- the workers' side: bytes as a transport hands them over --------------------------------
class FrameParser:
    """Frames parsed as bytes arrive (``feed``): each whole message goes to
    ``on_message`` at once (until one is set, to ``backlog``), with no coroutine per
    message. Bytes go straight into the message's own payload and buffers: ``feed``
    copies a chunk a reader received into them, and a reader of a large part receives
    into the part itself (``part_buffer``, then ``advance``), with no copy at all."""

    def __init__(self, link: Any = None) -> None:
        self.link = link  # the stream's shared memory (``shm_parts.Link``), if any
        self.on_message: Callable[[Any], None] | None = None
        self.backlog: list[Any] = []
        self._head = bytearray()  # the frame's length prefix and header, as they come
        self._head_size: int | None = None
        self._parts: list[Any] | None = None  # payload, then buffers: being filled
        self._buffers: list[Any] = []  # the message's buffers (shared ones filled)
        self._part = 0
        self._filled = 0

    def feed(self, data: bytes | memoryview) -> None:
        """Parses ``data``, copying what belongs to a message into it (``data`` may be
        reused by the caller afterwards)."""
        view = memoryview(data)
        pos, end = 0, view.nbytes
        while pos < end:
            if self._parts is None:
                pos = self._take_head(view, pos, end)
            else:
                part = self._parts[self._part]
                take = min(len(part) - self._filled, end - pos)
                part[self._filled : self._filled + take] = view[pos : pos + take]
                pos += take
                self.advance(take)

    def part_buffer(self, at_least: int) -> memoryview | None:
        """The unfilled rest of the payload or buffer being received, when at least
        ``at_least`` bytes of it are missing, for a reader to receive into directly
        (then ``advance``): a large array crosses from the socket into its own memory
        with no copy in between. ``None`` between messages and near a part's end."""
        if self._parts is None:
            return None
        part = self._parts[self._part]
        if len(part) - self._filled < at_least:
            return None
        return memoryview(part)[self._filled :]

    def advance(self, nbytes: int) -> None:
        """Counts ``nbytes`` written into the view ``part_buffer`` returned."""
        assert self._parts is not None
        self._filled += nbytes
        if self._filled == len(self._parts[self._part]):
            self._part += 1
            self._filled = 0
            self._skip_empty_parts()

    def _take_head(self, view: memoryview, pos: int, end: int) -> int:
        want = SIZE.size if self._head_size is None else SIZE.size + self._head_size
        take = min(want - len(self._head), end - pos)
        self._head += view[pos : pos + take]
        if len(self._head) == want:
            if self._head_size is None:
                (self._head_size,) = SIZE.unpack(self._head)
                check_header_size(self._head_size)
            else:
                payload, sizes = decode_header(bytes(self._head[SIZE.size :]), self.link)
                self._buffers, self._parts = part_memory([payload, *sizes], self.link)
                self._part = 0
                self._filled = 0
                self._skip_empty_parts()
        return pos + take

    def _skip_empty_parts(self) -> None:
        assert self._parts is not None
        while self._part < len(self._parts) and not len(self._parts[self._part]):
            self._part += 1
        if self._part == len(self._parts):
            payload, *buffers = self._buffers
            self._buffers = []
            self._head = bytearray()
            self._head_size = None
            self._parts = None
            message = pickle.loads(payload, buffers=buffers) if len(payload) else None
            if self.on_message is None:
                self.backlog.append(message)
            else:
                self.on_message(message)

    def deliver_to(self, on_message: Callable[[Any], None]) -> None:
        """Sends this and every later message to ``on_message``, the backlog first."""
        self.on_message = on_message
        backlog, self.backlog = self.backlog, []
        for message in backlog:
            on_message(message)


# --- a blocking socket (the client) -----------------------------------------------------------
def recv_into(sock: socket.socket, buffer: Any) -> Any:
    """Fills ``buffer`` from ``sock``; returns it."""
    view = memoryview(buffer).cast("B")
    got = 0
    while got < view.nbytes:
        k = sock.recv_into(view[got:])
        if k == 0:
            raise ConnectionResetError("the worker closed the step stream")
        got += k
    return buffer


def recv_exactly(sock: socket.socket, n: int) -> Any:
    return recv_into(sock, allocate(n))


def recv_message(sock: socket.socket, link: Any = None) -> Any:
    """The next message on ``sock``: its payload and each array are received into
    memory of their own, allocated from the header (an array comes back owned, never a
    view into a buffer that is reused, and writable unless it was read-only where it
    was pickled: pickle keeps that flag)."""
    (size,) = SIZE.unpack(recv_exactly(sock, SIZE.size))
    check_header_size(size)
    payload_size, sizes = decode_header(bytes(recv_exactly(sock, size)), link)
    (payload, *buffers), received = part_memory([payload_size, *sizes], link)
    for buffer in received:
        recv_into(sock, buffer)
    message = pickle.loads(payload, buffers=buffers)
    release = link.release_message() if link is not None else None
    if release is not None:  # (the worker holds what we read from its memory until now)
        try:
            send_frames(sock, writes(release, link))
        except OSError:
            pass  # the connection broke: the worker lets go as it closes, and the
            # next request on it fails as any would
    return message


def send_frames(sock: socket.socket, frames: list[Any]) -> None:
    """Sends ``writes(message)``'s frames, each from its own memory (no joins), after
    running the deferred copies into shared memory among them (they come first)."""
    for frame in frames:
        if callable(frame):
            frame()
        else:
            sock.sendall(frame)
