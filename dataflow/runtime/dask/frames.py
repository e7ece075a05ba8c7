"""How step messages are framed (``dask/stream.py`` says what travels and why).

A message is ``pickle`` protocol 5 with its arrays out of band (no copies into the
payload), framed as ``[u32 header length][header][payload][buffers...]``, the header
holding the payload's and each buffer's length. This module writes and reads frames on
each kind of endpoint: a tornado stream (``write_tornado``), a blocking socket
(``recv_message``/``send_frames``, the client's side), and bytes as a socket or a TLS
stream hands them over (``FrameParser``, the workers' side).

A reader allocates a message's payload and buffers when its header arrives, before the
data, so a header may not announce more than a reader would ever accept
(``check_header``): at most ``MAX_BUFFERS`` buffers and ``max_message_bytes()`` in all,
Dask's own cap on what one of its TCP connections buffers (half the machine's memory,
``distributed.comm.tcp.MAX_BUFFER_SIZE``). A larger frame is refused with a
``FrameTooLarge`` before anything is allocated, and the connection is closed.
"""

from __future__ import annotations

import pickle
import socket
import struct
from collections.abc import Callable
from typing import Any

import numpy as np

SIZE = struct.Struct("!I")
COUNTS = struct.Struct("!QI")  # payload length, number of out-of-band buffers
BUFFER = struct.Struct("!Q")
# A message of a step carries one buffer per array it holds; a million is far beyond any
# step's, and keeps a lying header's own size (8 bytes a buffer) to 8 MB.
MAX_BUFFERS = 1 << 20


class FrameTooLarge(ValueError):
    """A frame header announced more than a reader accepts (or was malformed); nothing
    was allocated for it."""


def max_message_bytes() -> int:
    """The most bytes one message may announce: what Dask lets one TCP connection
    buffer (``distributed.comm.tcp.MAX_BUFFER_SIZE``, half the machine's memory)."""
    from distributed.comm.tcp import MAX_BUFFER_SIZE

    return int(MAX_BUFFER_SIZE)


def check_header_size(size: int) -> None:
    """Refuses a header longer than ``MAX_BUFFERS`` buffers' lengths need."""
    if size > COUNTS.size + MAX_BUFFERS * BUFFER.size:
        raise FrameTooLarge(
            f"step stream frame header of {size} bytes: at most "
            f"{COUNTS.size + MAX_BUFFERS * BUFFER.size} (a corrupt or foreign stream)"
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


def allocate(nbytes: int) -> Any:
    """Writable memory of ``nbytes`` for one part of a message, owned by that part
    alone (an array unpickled on it is a view of it, and nothing else uses it)."""
    if nbytes >= LARGE_PART:
        return np.empty(nbytes, np.uint8)
    return bytearray(nbytes)


def encode(message: Any) -> list[Any]:
    """The frames of ``message``: arrays travel as their own buffers, uncopied."""
    buffers: list[pickle.PickleBuffer] = []
    payload = pickle.dumps(message, protocol=5, buffer_callback=buffers.append)
    raws = [b.raw() for b in buffers]
    header = COUNTS.pack(len(payload), len(raws)) + b"".join(BUFFER.pack(r.nbytes) for r in raws)
    return [SIZE.pack(len(header)) + header + payload, *raws]


def decode_header(header: bytes) -> tuple[int, list[int]]:
    """(payload length, buffer lengths) of a frame header, checked against the caps
    (``FrameTooLarge``) and against the header's own length (``ValueError``)."""
    if len(header) < COUNTS.size:
        raise FrameTooLarge(f"step stream frame header of {len(header)} bytes is malformed")
    payload, count = COUNTS.unpack_from(header)
    if count > MAX_BUFFERS or len(header) < COUNTS.size + count * BUFFER.size:
        raise FrameTooLarge(
            f"step stream frame header announces {count} buffers in {len(header)} bytes "
            f"(at most {MAX_BUFFERS}, 8 bytes each)"
        )
    sizes = [BUFFER.unpack_from(header, COUNTS.size + i * BUFFER.size)[0] for i in range(count)]
    check_sizes(payload, sizes)
    return payload, sizes


def decode(frames: list[Any]) -> Any:
    """The message ``encode`` made ``frames`` of (frames as received)."""
    payload_size, sizes = decode_header(bytes(frames[0][SIZE.size :]))
    payload = bytes(frames[0][-payload_size:]) if payload_size else b""
    return pickle.loads(payload, buffers=[bytearray(f) for f in frames[1:]])


COALESCE_BYTES = 64 * 1024


def writes(message: Any) -> list[Any]:
    """The frames of ``message`` as they are best written: a small message as one
    buffer (one system call and segment: a message in several TCP segments costs the
    reader a wake-up per segment), a large one frame by frame (no copy of its arrays)."""
    frames = encode(message)
    if sum(memoryview(f).nbytes for f in frames) <= COALESCE_BYTES:
        return [b"".join(frames)]
    return frames


# --- a tornado stream -----------------------------------------------------------------------
def write_tornado(stream: Any, message: Any) -> Any:
    """Queues every frame of ``message`` at once (so that concurrent writers never
    interleave frames) and returns the future of the last write."""
    future = None
    for frame in writes(message):
        future = stream.write(frame)
    return future


class FrameParser:
    """Frames parsed as bytes arrive (``feed``): each whole message goes to
    ``on_message`` at once (until one is set, to ``backlog``), with no coroutine per
    message. Bytes go straight into the message's own payload and buffers: ``feed``
    copies a chunk a reader received into them, and a reader of a large part receives
    into the part itself (``part_buffer``, then ``advance``), with no copy at all."""

    def __init__(self) -> None:
        self.on_message: Callable[[Any], None] | None = None
        self.backlog: list[Any] = []
        self._head = bytearray()  # the frame's length prefix and header, as they come
        self._head_size: int | None = None
        self._parts: list[Any] | None = None  # payload, then buffers: being filled
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
                payload, sizes = decode_header(bytes(self._head[SIZE.size :]))
                self._parts = [allocate(payload)] + [allocate(n) for n in sizes]
                self._part = 0
                self._filled = 0
                self._skip_empty_parts()
        return pos + take

    def _skip_empty_parts(self) -> None:
        assert self._parts is not None
        while self._part < len(self._parts) and not len(self._parts[self._part]):
            self._part += 1
        if self._part == len(self._parts):
            payload, *buffers = self._parts
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
def recv_exactly(sock: socket.socket, n: int) -> Any:
    buffer = allocate(n)
    view = memoryview(buffer)
    got = 0
    while got < n:
        k = sock.recv_into(view[got:])
        if k == 0:
            raise ConnectionResetError("the worker closed the step stream")
        got += k
    return buffer


def recv_message(sock: socket.socket) -> Any:
    """The next message on ``sock``: its payload and each array are received into
    memory of their own, allocated from the header (an array comes back writable and
    owned, never a view into a buffer that is reused)."""
    (size,) = SIZE.unpack(recv_exactly(sock, SIZE.size))
    check_header_size(size)
    payload_size, sizes = decode_header(bytes(recv_exactly(sock, size)))
    payload = recv_exactly(sock, payload_size)
    buffers = [recv_exactly(sock, n) for n in sizes]
    return pickle.loads(payload, buffers=buffers)


def send_frames(sock: socket.socket, frames: list[Any]) -> None:
    """Sends ``writes(message)``'s frames, each from its own memory (no joins)."""
    for frame in frames:
        sock.sendall(frame)
