"""Large copies of a step's parts spread over the cores that are idle at that moment.

A step moving a large array between a client and a worker on one host copies it once or
twice (``shm_parts.py``): the client into its arena (a feed), the worker into its arena
and the client out of it into memory of its own (a fetch). While one side copies, the
other waits for the message, so the copy runs on one core of a machine whose other
cores sit idle. One core does not reach the memory's bandwidth: on the 2-core AMD EPYC
VM (Zen 4), copying 40 MB into an arena took 3.8-4.2 ms on one thread and 1.7-2.3 ms on
two, 16 MB 1.26 and 0.73 ms, while at 4 MB and below two threads gained nothing (the
hand-over costs what they save; docs/performance.md).

How: the copy is cut into ``CHUNK``-byte pieces, and the calling thread and helper
threads take pieces from one counter until none is left (``_util/intra_op.run_pieces``,
which the kernels' own parallel loops use too); the caller then waits for the pieces
still being copied. A helper that starts late finds nothing left and returns
without touching the arrays. So a helper that the kernel does not run in time (a loaded
machine) delays the copy by at most the one piece it holds, unlike a static split,
which would wait for the helper's whole half.

How many helpers: none under ``SPLIT_FROM`` bytes; else one less than the cores this
process may use (``blas_threads.available_cores()``), at most ``MAX_HELPERS``, and no
more than the cores that the other runnable threads leave (``/proc/loadavg``'s fourth
field, read at each such copy: ~15 us beside a copy of half a millisecond or more).
That reading counts one other thread as leaving room for a helper: in a step the peer
is often finishing a short piece of work as the copy starts (the ps applying an update:
on the 2-core VM a reading of two runnable threads came with most copies), and a helper
that starts late only takes fewer pieces. Two other threads on two cores (CPU hogs) mean
no helper; without ``/proc``, none either.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ...._util.intra_op import run_pieces
from ...execute import blas_threads

# Measured on the 2-core VM (module docstring): two threads gain from 8 MB on.
SPLIT_FROM = 8 << 20
CHUNK = 2 << 20
# Two or three threads already reach a socket's memory bandwidth on common servers.
MAX_HELPERS = 3


def runnable_now() -> int | None:
    """The system's runnable threads at this instant, the caller's included (``None``
    without ``/proc``)."""
    try:
        with open("/proc/loadavg") as f:
            return int(f.read().split()[3].partition("/")[0])
    except (OSError, ValueError, IndexError):
        return None


def helpers_for(nbytes: int) -> int:
    """Helper threads a copy of ``nbytes`` gets now (0: the caller copies alone)."""
    if nbytes < SPLIT_FROM:
        return 0
    running = runnable_now()
    if running is None:
        return 0
    cores = blas_threads.available_cores()
    others = max(0, running - 1)  # (the caller is one of the runnable threads)
    return max(0, min(MAX_HELPERS, cores - 1, cores - others, nbytes // CHUNK - 1))


def copy(target: np.ndarray, source: np.ndarray) -> None:
    """``target[:] = source`` for two ``uint8`` arrays of one length, on the calling
    thread and, when the copy is large and cores are idle, helper threads."""
    if target.nbytes != source.nbytes:
        raise ValueError(f"copy of {source.nbytes} bytes into {target.nbytes}")

    def piece(at: int, end: int) -> None:
        np.copyto(target[at:end], source[at:end])

    spread(source.nbytes, piece)


def spread(nbytes: int, piece: Callable[[int, int], object], alone: bool = False) -> None:
    """``piece(at, end)`` over the byte ranges of a copy of ``nbytes`` (``CHUNK`` each,
    or all at once when no helper is due), on the calling thread and helpers; ``alone``:
    at once on the calling thread (the peer computes meanwhile: ``frames.WRITER_BUSY``)."""
    run_pieces(nbytes, piece, 0 if alone else helpers_for(nbytes), CHUNK)
