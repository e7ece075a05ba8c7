"""Large fetched values computed straight into memory the client then maps: no copy.

A worker's reply part of 8 MB or more is read by the client out of the worker's memory
(``shm_parts.py``, "Large replies read in place"): one copy, made by the kernel; one of
1 MB or more crosses in the arenas, two copies. That copy was most of what a 40 MB
fetch cost beyond TF1's step, whose worker 0 is the client's process: on the 2-core
AMD EPYC VM a step fetching ``X * 2`` over 40 MB took 13-14 ms with it and 8.3 ms where
the client skipped it (an experiment), and it runs beside the worker's next kernels,
on the same memory bandwidth.

So a worker computes such a value into a *slab*: a ``memfd_create`` file of the value's
size, mapped in the worker, that the client maps too. No byte is copied: the frame
header names the slab (its number and the worker's descriptor), and the client's array
lies on its own mapping of the slab.

Decisions, and why:

* **Which values.** Those the client fetches that an elementwise op computes into an
  output of its own (``runtime/execute/large_outputs.py``: one numpy ufunc, a fully
  known static shape, ``HANDED_OFF_FROM`` = 256 KiB or more), on a stream where the
  client may read the worker's memory (the rights that opening ``/proc/<pid>/fd/<fd>``
  needs too). The op's kernel asks the stage's *memory* (``large_outputs.handing_off``,
  which the worker sets from the client's stream for the length of a stage) for its
  output array, and a part that lies on a slab goes out as the slab. Any other value
  takes the copy (and any value, where no slab can be had).
* **The client's array is its own.** The client maps the slab privately
  (``MAP_PRIVATE``): it reads the worker's pages, and a write of its own goes to a
  private copy of the page, which the worker never sees; so the fetched array is
  writable and no other process's writes reach it.
* **The client keeps its mapping** for the slab's next value (its page tables stay
  filled), unless the program wrote a page of it: such a page is the program's own
  copy, which would hide the slab's next value (``/proc/self/pagemap`` tells, 0.5-0.7
  ms for 40 MB; ``_unwritten``). A new mapping's page tables are filled when it is made
  (``MADV_POPULATE_READ``; 2.2 ms for 40 MB on one thread, on the cores that are idle
  as a copy's pieces are), not on the program's first reads. Mapping every value anew
  measured no faster than the copy (0.96x on the 40 MB fetch); keeping the mapping,
  0.80x.
* **A slab is lent until the client's array goes.** The worker writes a slab again only
  once the client's mapping is gone (a ``weakref.finalize`` on the client's array; the
  client says so in its next message on the stream, before its next request) and the
  worker itself holds no array on it (a kept value: a session handle; its reference
  count shows, as ``_util/recycler.py``'s arrays do). A program that keeps every
  fetched value keeps the slabs lent: the worker makes new ones up to
  ``MAX_SLAB_BYTES`` and ``MAX_SLABS`` (a descriptor each) per stream (free ones of
  other sizes are closed first), then falls back to the copy. Steady state for a loop
  that fetches one value a step: one or two slabs.
* **Off switch.** ``DATAFLOW_SLABS=0`` in a worker's environment keeps its replies on
  the copy path.
* **Memory cannot leak.** A slab has no name; the kernel frees it when the last
  descriptor and mapping go, whichever process ends first and however.
"""

from __future__ import annotations

import collections
import itertools
import mmap
import os
import sys
import threading
import weakref
from math import prod
from typing import Any

import numpy as np

from . import parallel_copy

# Bytes of slabs one client stream keeps on a worker (lent or free): beyond them, values
# take the copy path.
MAX_SLAB_BYTES = 1 << 30
# ... and slabs: each holds a descriptor of the worker's (the client opens the slab
# through it), so a program keeping every fetched value of 256 KiB would otherwise use
# 4,096 of them within the byte budget, past a common limit of 1,024 a process, and the
# worker's own connections would fail.
MAX_SLABS = 64
MADV_POPULATE_READ = 22  # Linux 5.14+ (older kernels: pages fault in on first reads)
# Mappings of slabs the client keeps for their next values (a slab the worker dropped
# stays in memory while the client keeps its mapping: these few at most).
KEPT_MAPPINGS = 4
_NAME = "dataflow-slab-{}"
_NOTHING = np.empty(0, np.uint8)


def enabled() -> bool:
    """Whether this process's streams may lend slabs (``DATAFLOW_SLABS``)."""
    return os.environ.get("DATAFLOW_SLABS", "1") != "0"


class Slab:
    """One memfd file of ``nbytes``, mapped in the worker."""

    __slots__ = ("ident", "fd", "nbytes", "mapping", "base", "free_count", "lent")

    def __init__(self, ident: int, nbytes: int) -> None:
        self.ident, self.nbytes = ident, nbytes
        self.fd = os.memfd_create(_NAME.format(ident), os.MFD_CLOEXEC)
        try:
            os.ftruncate(self.fd, nbytes)
            self.mapping = mmap.mmap(self.fd, nbytes)
        except OSError:
            os.close(self.fd)
            raise
        self.base = np.frombuffer(self.mapping, np.uint8)
        self.free_count = sys.getrefcount(self.base)  # (every array on it holds ``base``)
        self.lent = False

    def unused(self) -> bool:
        """Neither the client nor anything in this process holds an array on it."""
        return not self.lent and sys.getrefcount(self.base) <= self.free_count

    def close(self) -> None:
        self.base = _NOTHING  # (ours was an export of the mapping, which close refuses)
        try:
            self.mapping.close()
        except BufferError:  # an array still lies on it: the mapping goes with it
            pass
        os.close(self.fd)


class WorkerSlabs:
    """A worker's slabs for one client stream (module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._slabs: dict[int, Slab] = {}
        self._at: dict[int, Slab] = {}  # by the address of its memory
        self._ids = itertools.count(1)
        self._bytes = 0

    def empty(self, shape: tuple, dtype: Any) -> np.ndarray | None:
        """An array on an unused slab of its size (a new slab where none is), or
        ``None`` where the stream's slabs would pass ``MAX_SLAB_BYTES`` or
        ``MAX_SLABS`` (after closing unused slabs of other sizes)."""
        dtype = np.dtype(dtype)
        nbytes = prod(shape) * dtype.itemsize
        with self._lock:
            slab = next(
                (s for s in self._slabs.values() if s.nbytes == nbytes and s.unused()), None
            )
            if slab is None:
                slab = self._new(nbytes)
                if slab is None:
                    return None
            return slab.base.view(dtype).reshape(shape)

    def _new(self, nbytes: int) -> Slab | None:
        def room() -> bool:
            return self._bytes + nbytes <= MAX_SLAB_BYTES and len(self._slabs) < MAX_SLABS

        for slab in list(self._slabs.values()):  # room first: unused slabs of other sizes
            if room():
                break
            if slab.unused():
                self._drop(slab)
        if not room():
            return None
        try:
            slab = Slab(next(self._ids), nbytes)
        except OSError:  # no memfd_create, out of descriptors: the copy path
            return None
        self._slabs[slab.ident] = slab
        self._at[slab.base.ctypes.data] = slab
        self._bytes += nbytes
        return slab

    def _drop(self, slab: Slab) -> None:
        del self._slabs[slab.ident]
        del self._at[slab.base.ctypes.data]
        self._bytes -= slab.nbytes
        slab.close()

    def claim(self, part: memoryview) -> Slab | None:
        """The slab ``part`` (a reply's buffer) is exactly, now lent to the client; or
        ``None`` for memory of another kind."""
        slab = self._at.get(np.frombuffer(part, np.uint8).ctypes.data)
        if slab is None or slab.nbytes != part.nbytes:
            return None
        with self._lock:
            slab.lent = True
        return slab

    def returned(self, idents: list[int]) -> None:
        """The client's arrays on these slabs are gone."""
        with self._lock:
            for ident in idents:
                slab = self._slabs.get(ident)
                if slab is not None:
                    slab.lent = False

    def gone(self) -> list[int]:
        """(A worker lends its slabs; it has none of another's to give back.)"""
        return []

    def close(self) -> None:
        with self._lock:
            for slab in list(self._slabs.values()):
                self._drop(slab)


class ClientSlabs:
    """The client's side: maps the worker's slabs (keeping the last ``KEPT_MAPPINGS``
    mappings for the next values on them), and collects the slabs whose arrays went
    for the next message to the worker."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self._gone: list[int] = []
        self._lock = threading.Lock()
        self._mappings: collections.OrderedDict[int, mmap.mmap] = collections.OrderedDict()
        self._live: dict[int, int] = {}  # slab -> our arrays on it still alive

    def map(self, ident: int, fd: int, nbytes: int, alone: bool = False) -> np.ndarray:
        """A writable private mapping of the worker's slab ``ident`` (descriptor ``fd``
        in the worker) as ``uint8``, its page tables filled (``alone``: on this thread
        only, the worker is computing meanwhile): the one kept from the slab's last
        value where the program wrote none of its pages, else a new one.
        ``OSError``/``ValueError`` where it is not the slab the frame named."""
        with self._lock:
            # (A slab named twice at once, two fetches of one value: each array its own
            # mapping, so that neither sees the other's writes.)
            mapping = None if self._live.get(ident) else self._mappings.pop(ident, None)
            self._live[ident] = self._live.get(ident, 0) + 1
        if mapping is not None and (len(mapping) != nbytes or not _unwritten(mapping)):
            mapping = None  # (a page the program wrote is a copy of its own: map anew)
        if mapping is None:
            try:
                mapping = self._open(ident, fd, nbytes)
            except BaseException:
                self._went(ident, mapped=False)
                raise
            _populate(mapping, nbytes, alone)
        with self._lock:
            self._mappings[ident] = mapping
            while len(self._mappings) > KEPT_MAPPINGS:
                self._mappings.popitem(last=False)  # (its arrays, if any, keep it)
        # An array, not the mapping: an array unpickled on it keeps it as its base, so
        # the finalizer runs once the program's last array on the slab goes.
        view = np.frombuffer(mapping, np.uint8)
        weakref.finalize(view, self._went, ident)
        return view

    def _open(self, ident: int, fd: int, nbytes: int) -> mmap.mmap:
        path = f"/proc/{self.pid}/fd/{fd}"
        if os.readlink(path) != f"/memfd:{_NAME.format(ident)} (deleted)":
            raise ValueError(f"descriptor {fd} of process {self.pid} is not slab {ident}")
        file = os.open(path, os.O_RDONLY)
        try:
            if os.fstat(file).st_size != nbytes:
                raise ValueError(f"slab {ident} is not {nbytes} bytes")
            return mmap.mmap(
                file, nbytes, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ | mmap.PROT_WRITE
            )
        finally:
            os.close(file)

    def _went(self, ident: int, mapped: bool = True) -> None:
        with self._lock:
            left = self._live[ident] - 1
            if left:
                self._live[ident] = left
                return
            del self._live[ident]
            if mapped:  # (our last array on it: the worker may write it again)
                self._gone.append(ident)

    def gone(self) -> list[int]:
        """Slabs whose arrays went since the last call (to tell the worker)."""
        with self._lock:
            gone, self._gone = self._gone, []
        return gone

    def close(self) -> None:
        """Lets the kept mappings go (those the program's arrays lie on stay with them)."""
        with self._lock:
            self._mappings.clear()


_pagemap: list[int] = []  # this process's /proc/self/pagemap, opened once (-1: none)
_PRESENT, _SWAPPED, _FILE = (np.uint64(1 << bit) for bit in (63, 62, 61))


def _unwritten(mapping: mmap.mmap) -> bool:
    """Whether every page of our private ``mapping`` still maps the slab's own (its
    page table entries in ``/proc/self/pagemap``: no page present as anonymous memory,
    none swapped out, which only a page copied on the program's write can be). Reads
    8 bytes a page: 0.5-0.7 ms for 40 MB on the 2-core VM, against 2.2 ms for
    mapping anew. ``False`` where it cannot tell."""
    if not _pagemap:
        try:
            _pagemap.append(os.open("/proc/self/pagemap", os.O_RDONLY | os.O_CLOEXEC))
        except OSError:
            _pagemap.append(-1)
    if _pagemap[0] < 0:
        return False
    address = np.frombuffer(mapping, np.uint8).ctypes.data
    pages = -(-len(mapping) // mmap.PAGESIZE)
    try:
        raw = os.pread(_pagemap[0], pages * 8, address // mmap.PAGESIZE * 8)
    except OSError:
        return False
    entries = np.frombuffer(raw, np.uint64)
    if entries.size != pages:
        return False
    own = ((entries & _PRESENT) != 0) & ((entries & _FILE) == 0)
    return not (own.any() or ((entries & _SWAPPED) != 0).any())


_no_populate: list[bool] = []  # set once the kernel refused MADV_POPULATE_READ


def _populate(mapping: mmap.mmap, nbytes: int, alone: bool) -> None:
    """Fills the page tables of ``mapping`` now, in ``CHUNK`` pieces on idle cores
    (``parallel_copy``) unless ``alone``."""
    if _no_populate:
        return

    def piece(at: int, end: int) -> None:
        mapping.madvise(MADV_POPULATE_READ, at, end - at)

    try:
        parallel_copy.spread(nbytes, piece, alone)  # (``CHUNK`` is a multiple of the page)
    except OSError:
        _no_populate.append(True)
