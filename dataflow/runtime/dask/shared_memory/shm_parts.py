"""Large message parts through shared memory when client and worker share a host.

A step stream (``stream.py``) moves each array of a message as a part of its own. When
both ends of the stream run on the same machine, a part of 1 MB or more (64 KiB or more
over TLS) can skip the socket: the writer copies it into shared memory and the socket
carries only the frame header, which names where the part lies. A loopback socket moves
40 MB in about the time TF1 takes for a whole 40 MB step (its worker 0 lives in the
client's process); two ``memcpy`` calls take a fraction of that.

Decisions, and why:

* **Memory that cannot leak.** Each end's outgoing parts live in one ``memfd_create``
  file of its own (an *arena*), which has no name in ``/dev/shm`` or anywhere else: the
  kernel frees it when the last descriptor and mapping go, whatever way the processes
  end (``kill -9`` included). The peer opens it through ``/proc/<pid>/fd/<fd>`` of the
  writer, which needs the writer's user (ptrace read access, as for ``/proc/<pid>/mem``),
  so no descriptor passing (a Unix socket beside Dask's TCP one) is needed. A random
  token the writer put at the start is checked after opening: a pid from another pid
  namespace or host cannot be mistaken for the writer.
* **Same host.** Both ends report ``host_identity()``: the kernel's boot id
  (``/proc/sys/kernel/random/boot_id``) and the hostname. The addresses alone say
  nothing (containers share loopback addresses; one host has many addresses).
* **One arena per connection and direction, reused.** A writer copies a message's large
  parts to the start of its arena (of a region of it: "Two regions" below) and grows it
  (``ftruncate``) to the largest message seen; nothing is created per step. It reuses a
  region only once the reader has *consumed* the last message written there: every
  frame header a reader sends carries the generation it last consumed (an
  acknowledgement), and a writer whose region is not acknowledged yet sends the next
  message's parts over the socket as before. A reader consumes a part by copying it
  into memory of its own when the frame header arrives, before the message is handed on
  (the client), or once the message's views are gone (a worker: next point).
* **Owned fetches, lent feeds.** The client copies each part of a reply out (a fetched
  array is writable and owned like the socket's, ``frames.allocate``: never a view into
  an arena a later step overwrites). A worker does not copy a client's request: it
  *lends* each shared part, handing the step a read-only view of the client's arena
  (kernels treat their inputs as read-only anyway, as they do Dask-computed feeds), and
  counts the message consumed only once every view of it is gone (``weakref.finalize``
  on the view), not when the header arrives. The copy was a large share of a large
  feed's step: a 40 MB one lands in pages the kernel must fault in afresh every step
  (glibc maps blocks over 32 MiB anew); a ``minimize`` step fed 40 MB took 18-22 ms with
  the copy and 12.5-15 ms lent on the AVX-512 VM, 4 MB 1.6-2.2 and 1.3-2.2 ms. A fed
  value the worker keeps as it is (a session tensor, ``get_session_handle``; an
  assigned variable copies it into its own buffer) keeps its view, and that region
  stays unwritable meanwhile: the client's large parts take the socket, correct and
  slower, until the value goes.
  Concurrent steps cannot see each other's bytes: the client has one connection, and so
  one arena, per thread and worker.
* **Two regions where the reader lends.** A step's feed views go when the worker's step
  is over, just after its reply is written, so that reply still says the message is in
  use. The client's arena is then two regions used in turn (the worker says it lends
  when it answers the offer): a message may go into a region once the message before
  the previous one is released, which the previous reply said. Growing the arena waits
  until every message is released (a larger region moves the second one).
* **Fallback.** The client offers shared memory when a connection opens; the worker
  answers with its own arena or a refusal, and the client then says whether it could
  open the worker's. Anything that fails (``DATAFLOW_SHM=0`` on either end, different
  hosts, no ``memfd_create``, ``/proc`` closed to us, a wrong token) leaves that
  direction on the socket, silently. Transports other than ``tcp://``/``tls://`` never
  use it.
* **Between workers too** (``stream.share_memory``), acknowledged in small messages of
  their own (``Link.hello(acks=True)``): a CNN's 13 MB of weights 8 -> 1.5 ms.
* **TLS too, from 64 KiB.** A TLS cluster's bytes never leave the machine this way
  either: only processes of the same user (who can read either process's memory anyway)
  can open an arena. The frame headers still travel encrypted. Over TLS, parts from
  64 KiB (``SHARED_PART_TLS``) take shared memory, not only those from 1 MB
  (``SHARED_PART``): encrypting a part on one side and decrypting it on the other cost
  more than the two copies (a 400 KB feed step went from 3.2 to 2.4 ms on the 2-core
  VM, docs/performance.md), while over plain TCP or a Unix socket, where the kernel's
  copies are all a socket costs, parts under 1 MB took as long either way, except
  towards a reader that lends: one copy into the arena against the socket's two, so
  those parts take shared memory from 64 KiB too (a 400 KB ``minimize`` feed step 0.98-
  1.43 -> 0.86-1.06 ms over a Unix socket; fetches, copied out by the client, were
  level and stay on the socket under 1 MB). (Below 64 KiB a message is joined into one
  write, ``frames.writes``.)
* **Large replies read in place.** A worker's reply part of ``PEER_READ_PART`` (8 MB)
  or more is not copied into its arena: the client copies it straight out of the
  worker's memory with ``process_vm_readv`` (one copy, made by the kernel, instead of
  the worker's into the arena and the client's out of it), and the worker keeps the
  array until the client's next message on the stream says it was read (a
  ``released`` message the client sends right after reading the reply). Reading
  another process's memory needs ptrace rights over it (the same user; under Yama's
  ``ptrace_scope=1``, only over one's descendants, as a ``LocalCluster``'s workers are);
  the worker's answer to the offer names its pid and the address of a random token,
  and the client reads the token back before it says it will read. Where it cannot
  (or ``DATAFLOW_PEER_READS=0`` on the client), replies take the arena as before. On
  the 2-core VM, fetches of 8, 20 and 40 MB took 2.5-2.8, 6.2-6.9 and 18.0-18.8 ms
  against 3.0-3.2, 7.9-8.2 and 19.5-19.9 ms through the arena (interleaved in one
  process); at 4 MB it was level or slower (the system call pins each page), so
  smaller parts keep the arena.
* **Copies on idle cores.** A part of 8 MB or more is copied into an arena, or out of
  one, by the calling thread and helper threads together when cores are idle
  (``parallel_copy.py``): the other end is waiting for it meanwhile.
* **Memory.** Each side keeps one arena as large as the largest message's large parts
  it sent on that connection, twice that for the client's when the worker lends (tmpfs
  pages, not the Python heap); the client's owned copies are the step's values, released
  with them. The arena goes when the connection closes.
"""

from __future__ import annotations

import mmap
import os
import secrets
import socket
import threading
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from . import handoff, parallel_copy
from .peer_memory import vm_read

SHM_OP = "dataflow_shm"
TOKEN_BYTES = 16
# The smallest part that goes through shared memory (the module docstring says why).
SHARED_PART = 1 << 20
SHARED_PART_TLS = 64 << 10
# The smallest part of a worker's reply that the client reads from the worker's memory
# where it may (module docstring, "Large replies read in place").
PEER_READ_PART = 8 << 20


def enabled() -> bool:
    """Whether this process offers or accepts shared memory (``DATAFLOW_SHM=0``: no)."""
    return os.environ.get("DATAFLOW_SHM", "1") != "0" and hasattr(os, "memfd_create")


def host_identity() -> str:
    """This machine's boot id and hostname: equal on both ends only on one host."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            boot = f.read().strip()
    except OSError:
        return ""
    return f"{boot}/{socket.gethostname()}"


def _unmap(mapping: mmap.mmap | None) -> None:
    """Unmaps now, or (a copy in another thread still using it: a connection closed
    mid-step) when the last view of it goes."""
    if mapping is not None:
        try:
            mapping.close()
        except BufferError:
            pass


class _MappedFile:
    """An arena's file descriptor and mapping, ours (``Arena``) or a peer's
    (``PeerArena``); ``close`` lets both go."""

    fd: int
    map: mmap.mmap | None

    def close(self) -> None:
        _unmap(self.map)
        self.map = None
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


class Arena(_MappedFile):
    """A writer's shared memory: one ``memfd`` that grows to the largest message."""

    def __init__(self) -> None:
        self.fd = os.memfd_create("dataflow-step-parts", os.MFD_CLOEXEC)
        self.token = secrets.token_bytes(TOKEN_BYTES)
        self.size = 0
        self.map: mmap.mmap | None = None
        self._grow(max(TOKEN_BYTES, mmap.PAGESIZE))
        assert self.map is not None
        self.map[:TOKEN_BYTES] = self.token

    def _grow(self, size: int) -> None:
        _unmap(self.map)
        self.map = None
        os.ftruncate(self.fd, size)
        self.map = mmap.mmap(self.fd, size)
        self.size = size

    def reserve(
        self, raws: list[memoryview], region: int = 0, regions: int = 1, may_grow: bool = True
    ) -> list[int] | None:
        """Offsets for ``raws`` one after another from the start of ``region`` (of
        ``regions`` equal ones), growing the arena to fit where ``may_grow``; ``None``
        where it must grow and may not."""
        need = sum(r.nbytes for r in raws)
        size = self.size // regions
        if need > size:
            if not may_grow:
                return None
            self._grow(max(need, size * 5 // 4) * regions)
            size = self.size // regions
        offsets = [region * size]
        for raw in raws[:-1]:
            offsets.append(offsets[-1] + raw.nbytes)
        return offsets

    def write(self, raws: list[memoryview], offsets: list[int]) -> None:
        assert self.map is not None
        target = np.frombuffer(self.map, np.uint8)
        for raw, at in zip(raws, offsets, strict=True):
            parallel_copy.copy(target[at : at + raw.nbytes], np.frombuffer(raw, np.uint8))
        del target

    def offer(self) -> dict:
        """What a peer on this host needs to open the arena."""
        return {"host": host_identity(), "pid": os.getpid(), "fd": self.fd, "token": self.token}


class Copy:
    """A message's large parts still to be copied into the writer's arena (before its
    frame header is sent: the reader takes them when the header arrives). A client
    copies each request's in the thread that sends it, so that several workers' batches
    are copied at once."""

    def __init__(self, arena: Arena, raws: list[memoryview], offsets: list[int]) -> None:
        self.arena, self.raws, self.offsets = arena, raws, offsets
        self.nbytes = sum(r.nbytes for r in raws)

    def __call__(self) -> None:
        raws, self.raws = self.raws, []
        self.arena.write(raws, self.offsets[: len(raws)])


class PeerArena(_MappedFile):
    """A reader's read-only mapping of the peer's arena, remapped when it grew."""

    def __init__(self, offer: dict) -> None:
        if offer.get("host") != host_identity() or not host_identity():
            raise OSError("the peer runs on another host")
        self.fd = os.open(f"/proc/{int(offer['pid'])}/fd/{int(offer['fd'])}", os.O_RDONLY)
        self.map: mmap.mmap | None = None
        self.size = 0
        try:
            self._remap()
            assert self.map is not None
            if self.map[:TOKEN_BYTES] != offer["token"]:
                raise OSError("the peer's arena is not the one it offered")
        except BaseException:
            self.close()
            raise

    def _remap(self) -> None:
        _unmap(self.map)
        self.map = None
        self.size = os.fstat(self.fd).st_size
        self.map = mmap.mmap(self.fd, self.size, prot=mmap.PROT_READ)

    def _reach(self, offset: int, nbytes: int) -> mmap.mmap:
        if offset + nbytes > self.size:
            self._remap()  # (views of the old mapping keep it until they go)
            if offset + nbytes > self.size:
                raise ValueError("a shared part lies beyond the peer's arena")
        assert self.map is not None
        return self.map

    def take(self, offset: int, nbytes: int, into: Any) -> Any:
        """Copies ``nbytes`` at ``offset`` into ``into`` (memory of the reader's own)."""
        source = np.frombuffer(self._reach(offset, nbytes), np.uint8, nbytes, offset)
        parallel_copy.copy(np.frombuffer(into, np.uint8), source)
        del source
        return into

    def view(self, offset: int, nbytes: int) -> memoryview:
        """A read-only view of ``nbytes`` at ``offset`` (the mapping is read-only)."""
        return memoryview(self._reach(offset, nbytes))[offset : offset + nbytes]


class Link:
    """One connection's shared memory, both directions, and their acknowledgements.

    ``tx``: our arena, once the peer has opened it; ``rx``: the peer's, opened by us.
    ``sent``: the generation of the last message whose parts we put in ``tx``;
    ``acked``: the last one the peer says it consumed; ``consumed``: the last generation
    of the peer's we consumed (sent back in each of our headers). A link with neither
    direction is inactive, and frames are exactly the socket path's."""

    def __init__(self, lends: bool = False) -> None:
        self.tx: Arena | None = None
        self.rx: PeerArena | None = None
        self.sent = 0
        self.acked = 0
        self.consumed = 0
        self.shared_bytes = 0  # bytes of parts that went through shared memory (both ways)
        self.min_part = SHARED_PART  # our smaller parts take the socket
        self._offered: Arena | None = None  # our arena, until the peer said it opened it
        # Reading: hand the peer's parts on as views (a worker's side of a client's
        # stream), and how many views of each generation are still alive.
        self.lends = lends
        # A one-way stream (a worker's to its peer): acknowledge in messages of our own.
        self.acks_wanted = False
        self.on_consumed: Callable[[], None] | None = None
        self._lent: dict[int, int] = {}
        self._received = 0
        self._lock = threading.Lock()  # (views are released in whatever thread drops them)
        # Writing: our arena's regions, 2 where the peer lends (it says so in its answer).
        self.regions = 1
        self._encrypted = False
        # Large replies read in place: on a worker, whether the client reads them from
        # our memory, and the parts it has still to read (hold number -> parts); on the
        # client, the worker's pid where we may, and the holds read, to release.
        self.peer_reads = False
        self.in_place_from = PEER_READ_PART
        self.writer_busy = False  # an early reply being written (``frames.WRITER_BUSY``)
        self._held: dict[int, list[memoryview]] = {}
        self._holds = 0
        self._probe: np.ndarray | None = None
        self.peer_pid: int | None = None
        self.read_holds: list[int] = []
        # Where the client reads our memory: slabs values are computed into and lent
        # (``handoff.py``; a ``WorkerSlabs`` on a worker, a ``ClientSlabs`` on a client).
        self.slabs: Any = None

    def __enter__(self) -> Link:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def over_tls(self) -> None:
        """The connection is TLS: parts from ``SHARED_PART_TLS`` bytes skip it."""
        self._encrypted = True
        self._choose_min_part()

    def over_unix_socket(self) -> None:
        """The stream moved to a Unix socket (``local_sockets``): no encryption to skip,
        so parts from ``SHARED_PART`` bytes, as on plain TCP, unless the peer lends."""
        self._encrypted = False
        self._choose_min_part()

    def _choose_min_part(self) -> None:
        """Our smallest part for shared memory (module docstring, "TLS too")."""
        lent = self.regions > 1  # (two regions: the peer lends)
        self.min_part = SHARED_PART_TLS if self._encrypted or lent else SHARED_PART

    @property
    def active(self) -> bool:
        return self.tx is not None or self.rx is not None

    def writable(self) -> Arena | None:
        """Our arena when the next message's parts may go there (the peer consumed the
        last message in the region it takes), else ``None``."""
        if self.tx is None or self.acked < self.sent - (self.regions - 1):
            return None
        return self.tx

    def place(self, raws: list[memoryview]) -> tuple[int, list[int], Copy] | None:
        """Places ``raws`` in our arena: (their generation, offsets, the copy to run), or
        ``None`` where the arena must grow while the peer still uses a region."""
        assert self.tx is not None
        generation = self.sent + 1
        offsets = self.tx.reserve(
            raws, generation % self.regions, self.regions, self.acked == self.sent
        )
        if offsets is None:
            return None
        self.sent = generation
        self.shared_bytes += sum(r.nbytes for r in raws)
        return generation, offsets, Copy(self.tx, raws, offsets)

    def take(self, generation: int, offset: int, nbytes: int, into: Any) -> Any:
        """Copies one part out of the peer's arena (and counts it consumed)."""
        if self.rx is None:
            raise ValueError("a frame names shared memory that was never set up")
        self.rx.take(offset, nbytes, into)
        with self._lock:
            self._received = max(self._received, generation)
            advanced = self._account()
        self._acknowledge(advanced)
        self.shared_bytes += nbytes
        return into

    def hold(self, raws: list[memoryview]) -> tuple[int, list[int]]:
        """Keeps ``raws`` (a reply's large parts) until the client says it read them:
        (the hold's number, each part's address in this process)."""
        with self._lock:
            self._holds += 1
            hold = self._holds
            self._held[hold] = raws
        self.shared_bytes += sum(r.nbytes for r in raws)
        return hold, [np.frombuffer(r, np.uint8).ctypes.data for r in raws]

    def release(self, holds: list[int]) -> None:
        """The client read the parts of ``holds``: they go."""
        with self._lock:
            for hold in holds:
                self._held.pop(hold, None)

    @property
    def holding(self) -> int:
        """Holds whose parts the client has not released yet."""
        return len(self._held)

    def read(self, hold: int, address: int, nbytes: int, into: Any, alone: bool = False) -> Any:
        """Copies one part of a reply out of the worker's memory into ``into`` (``alone``:
        on this thread only, ``frames.WRITER_BUSY``); the hold goes with the next
        ``release_message``."""
        if self.peer_pid is None:
            raise ValueError("a frame names the worker's memory, which we may not read")
        pid, target = self.peer_pid, np.frombuffer(into, np.uint8)

        def piece(at: int, end: int) -> None:
            vm_read(pid, address + at, target[at:end])

        parallel_copy.spread(nbytes, piece, alone)
        if hold not in self.read_holds:
            self.read_holds.append(hold)
        self.shared_bytes += nbytes
        return into

    def release_message(self) -> dict | None:
        """What tells the worker the holds read since the last one may go (``None``:
        nothing to tell)."""
        slabs = self.slabs.gone() if self.slabs is not None else []
        if not self.read_holds and not slabs:
            return None
        holds, self.read_holds = self.read_holds, []
        message = {"op": SHM_OP, "released": holds}
        if slabs:  # (``handoff.py``: slabs whose arrays went)
            message["slabs"] = slabs
        return message

    def lend(self, generation: int, offset: int, nbytes: int) -> np.ndarray:
        """A read-only view of one part in the peer's arena (uint8); its message counts
        as consumed once this view and every other of it are gone. (An array, not the
        memoryview: an array unpickled on it keeps it as its base, while numpy would
        keep only the mapping behind a memoryview, which would go at once.)"""
        if self.rx is None:
            raise ValueError("a frame names shared memory that was never set up")
        view = np.frombuffer(self.rx.view(offset, nbytes), np.uint8)
        with self._lock:
            self._lent[generation] = self._lent.get(generation, 0) + 1
            self._received = max(self._received, generation)
            advanced = self._account()
        self._acknowledge(advanced)
        weakref.finalize(view, self._returned, generation)
        self.shared_bytes += nbytes
        return view

    def _returned(self, generation: int) -> None:
        with self._lock:
            left = self._lent[generation] - 1
            if left:
                self._lent[generation] = left
            else:
                del self._lent[generation]
            advanced = self._account()
        self._acknowledge(advanced)

    def _account(self) -> bool:
        """``consumed``: the last generation before the oldest one still lent (under
        the lock); whether it went up."""
        before = self.consumed
        self.consumed = min(self._lent) - 1 if self._lent else self._received
        return self.consumed > before

    def _acknowledge(self, advanced: bool) -> None:
        """Tells a one-way stream's writer (``hello(acks=True)``) what we consumed."""
        if advanced and self.acks_wanted and self.on_consumed is not None:
            self.on_consumed()  # (any thread: the hook hands the message to the loop)

    # --- setting up (the client offers, the worker answers, the client confirms) ---
    def hello(self, acks: bool = False) -> dict | None:
        """The client's offer, or ``None`` when shared memory is off or unavailable;
        ``acks``: the peer should acknowledge in messages of their own (a one-way
        stream)."""
        if not enabled() or not host_identity():
            return None
        try:
            arena = Arena()
        except OSError:
            return None
        self._offered = arena
        return {"op": SHM_OP, "offer": arena.offer(), "acks": acks}

    def answer(self, message: dict) -> dict:
        """The worker's answer to a client's ``hello`` (or ``confirm``: ``{}``)."""
        if "rx" in message:  # the client's confirmation: may we write to it?
            offered = self._offered
            if message["rx"] and offered is not None:
                self.tx = offered
                self.peer_reads = bool(message.get("reads"))
                slabs = self.peer_reads and handoff.enabled()
                self.slabs = handoff.WorkerSlabs() if slabs else None
            elif offered is not None:
                offered.close()
            self._offered = None
            self._probe = None
            return {}
        refused = {"op": SHM_OP, "offer": None}
        if not enabled() or message.get("offer") is None:
            return refused
        self.acks_wanted = bool(message.get("acks"))
        try:
            self.rx = PeerArena(message["offer"])
            self._offered = Arena()
        except (OSError, ValueError, KeyError, TypeError):
            self.close()
            return refused
        # Bytes the client reads from our memory to learn whether it may.
        self._probe = np.frombuffer(secrets.token_bytes(TOKEN_BYTES), np.uint8).copy()
        reads = {"pid": os.getpid(), "address": self._probe.ctypes.data}
        reads["token"] = self._probe.tobytes()
        return {
            "op": SHM_OP,
            "offer": self._offered.offer(),
            "lends": self.lends,
            "reads": reads,
        }

    def answered(self, message: dict) -> dict:
        """The client's confirmation for the worker's answer ``message``."""
        offered = self._offered
        self._offered = None
        if message.get("offer") is None:  # refused: the socket path both ways
            if offered is not None:
                offered.close()
            return {"op": SHM_OP, "rx": False}
        self.tx = offered
        if message.get("lends"):
            self.regions = 2
            self._choose_min_part()
        try:
            self.rx = PeerArena(message["offer"])
        except (OSError, ValueError, KeyError, TypeError):
            return {"op": SHM_OP, "rx": False}
        return {"op": SHM_OP, "rx": True, "reads": self._may_read(message.get("reads"))}

    def _may_read(self, reads: dict | None) -> bool:
        """Whether we can read the worker's memory (its probe's bytes, read through
        ``process_vm_readv``, are the token it sent); the worker's pid is kept if so."""
        if not reads or os.environ.get("DATAFLOW_PEER_READS", "1") == "0":
            return False
        probe = bytearray(TOKEN_BYTES)
        try:
            vm_read(int(reads["pid"]), int(reads["address"]), probe)
        except (OSError, ValueError, KeyError, TypeError, OverflowError):
            return False
        if bytes(probe) != reads.get("token"):
            return False
        self.peer_pid = int(reads["pid"])
        self.slabs = handoff.ClientSlabs(self.peer_pid)
        return True

    def close(self) -> None:
        with self._lock:
            self._held.clear()
        if self.slabs is not None:
            self.slabs.close()
        offered = self._offered
        for arena in (self.tx, self.rx, offered):
            if arena is not None:
                arena.close()
        self.tx = self.rx = self._offered = None


def serving(handler: Any) -> tuple[Link, Any]:
    """A worker's step stream's link (it lends the client's parts), and
    ``handler(message, reply)`` wrapped to answer the client's shared-memory messages
    on it."""
    link = Link(lends=True)

    def on_message(message: Any, reply: Any) -> None:
        if type(message) is dict and message.get("op") == SHM_OP:
            if "released" in message:
                link.release(message["released"])
                if link.slabs is not None:
                    link.slabs.returned(message.get("slabs", ()))
                return
            answer = link.answer(message)
            if answer:
                reply(answer)
            return
        if link.slabs is not None and type(message) is dict:
            message["slabs"] = link.slabs  # (a step's fetched values may go on them)
        handler(message, reply)

    return link, on_message
