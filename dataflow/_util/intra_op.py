"""Kernels' own parallel loops on the session's intra-op threads.

TF1 runs the parallel work inside each kernel on the session's intra-op pool
(``ConfigProto.intra_op_parallelism_threads``, by default one thread per core). Here the
kernels split their own work over the step's threads with this module: large matmuls
(by rows, columns or batch), convolutions (by image, or by pixel for a filter
gradient), pools and their gradients (by image), blocked products with an epilogue,
copies. Before, only BLAS used the threads and everything else ran on the step's
thread alone: a default session's CNN step on two cores took 1.14-1.43x TF1's, whose
oneDNN kernels all use both (docs/performance.md).

How:

* **A budget per step.** The runtime sets the calling thread's thread count for the
  length of a step (``set_threads``; ``budget`` does the same as a ``with`` block); a
  kernel asks ``threads()``. Any other thread (a Dask
  worker's, the helpers below, an inter-op pool's) sees 1 and runs its loops serially,
  so a loop inside a piece never splits again.
* **Pieces from one counter.** ``split(count, piece)`` runs ``piece(lo, hi)`` over
  ``[0, count)`` in runs of ``grain`` items: the calling thread and up to
  ``threads() - 1`` helper threads take runs from one counter until none is left, then
  the caller waits for the runs still being done. A helper that starts late takes
  nothing and touches nothing; a helper held up by the kernel's scheduler (a loaded
  machine) delays the kernel by the one run it holds, not by a static share.
* **One BLAS thread.** Pieces that called BLAS at once from several threads would each
  start BLAS's own threads, more threads than cores, spinning while they wait for each
  other; and BLAS's threads spin for a while after each call, on the cores the helpers
  need. So the runtime holds BLAS to one thread for the whole of a step
  (``runtime/execute/embedded_backend.py``), and the step's large products are split
  here instead (``ops/parallel_products.py``). ``split(..., blas=True)`` asks for
  that hold where a split runs outside such a step (a hook the runtime registers,
  ``set_blas_hold``: this layer cannot import it).

Example: ``split(4, piece)`` with a budget of 2 may call ``piece(0, 1)``, ``piece(2, 3)``
on the caller and ``piece(1, 2)``, ``piece(3, 4)`` on a helper, in any order; it returns
once all four are done, raising the first error any of them raised.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

# The bytes a memory-bound kernel moves (a matrix-vector product reads its matrix, an
# elementwise op reads its input and writes its output) from which it is split over the
# step's threads even though its arithmetic is small: one core does not draw the memory
# bandwidth that two do. On the 2-core AMD EPYC VM (32 MB of L3), 40 MB ``X @ beta``
# took 2.1 ms whole and 1.6 ms split, ``X.T @ r`` 2.6 and 1.7 ms, ``X * 2`` into a
# written array 3.0 and 2.0 ms (16 MB: 1.4 -> 0.7 ms); at 10 MB, in cache, level.
STREAMED_FROM = 16 << 20

_local = threading.local()
_pool_lock = threading.Lock()
_pools: list[ThreadPoolExecutor] = []
_blas_hold: list[Callable[[], Callable[[], None]]] = []
_blas_threaded: list[Callable[[int, Callable[[], Any]], Any]] = []


def threads() -> int:
    """The intra-op threads the calling thread's step may use (1 outside a step)."""
    return getattr(_local, "threads", 1)


def set_threads(n: int) -> int:
    """Sets the calling thread's count (the runtime, at a step's start and end, where
    a ``with budget`` costs more than the step's smallest kernels); returns the one it
    replaces."""
    before = getattr(_local, "threads", 1)
    _local.threads = n
    return before


class budget:
    """``with budget(n):`` the calling thread's loops may use ``n`` threads."""

    def __init__(self, n: int) -> None:
        self.n = max(1, int(n))

    def __enter__(self) -> budget:
        self._before = set_threads(self.n)
        return self

    def __exit__(self, *exc: object) -> None:
        set_threads(self._before)


def set_blas_hold(hold: Callable[[], Callable[[], None]]) -> None:
    """Registers ``hold()``: holds BLAS to one thread and returns what ends the hold."""
    _blas_hold[:] = [hold]


def set_blas_threaded(run: Callable[[int, Callable[[], Any]], Any]) -> None:
    """Registers ``run(threads, call)``: ``call()`` with BLAS on up to ``threads``
    threads where this step's hold is the only one, its result."""
    _blas_threaded[:] = [run]


def with_blas_threads(call: Callable[[], Any]) -> Any:
    """``call()`` (one large LAPACK routine on one matrix: nothing to split it by) with
    BLAS on the step's intra-op threads for its length; BLAS's threads then spin for a
    while beside the step's next kernels, so only work long enough to pay for that
    asks (``ops/parallel_products.per_matrix``)."""
    if threads() < 2 or not _blas_threaded:
        return call()
    return _blas_threaded[0](threads(), call)


def _helpers() -> ThreadPoolExecutor:
    with _pool_lock:
        if not _pools:
            _pools.append(
                ThreadPoolExecutor(
                    max(1, (os.cpu_count() or 2) - 1), thread_name_prefix="dataflow-intra-op"
                )
            )
        return _pools[0]


class _Runs:
    """One split's runs, taken by whichever thread asks next."""

    def __init__(self, count: int, grain: int, piece: Callable[[int, int], object]) -> None:
        self.count, self.grain = count, grain
        self.piece: Callable[[int, int], object] | None = piece
        self.runs = -(-count // grain)
        self._next = itertools.count()  # (``next`` on it is atomic under the GIL)
        self._lock = threading.Lock()
        self._done = 0
        self._error: BaseException | None = None
        self.finished = threading.Event()

    def take(self) -> None:
        """Does runs until none is left to take."""
        piece = self.piece
        while piece is not None:
            i = next(self._next)
            if i >= self.runs:
                return
            lo = i * self.grain
            try:
                piece(lo, min(self.count, lo + self.grain))
            except BaseException as exc:  # (re-raised in the caller)
                if self._error is None:
                    self._error = exc
            with self._lock:
                self._done += 1
                if self._done == self.runs:
                    self.finished.set()

    def wait(self) -> None:
        self.finished.wait()
        # A helper that starts late still holds these runs (the pool's queue does until
        # then): without the piece, not the kernel's arrays its closure holds (which
        # would keep them from reuse: ``_util/recycler``, ``runtime/dask/frames``).
        self.piece = None
        if self._error is not None:
            raise self._error


def run_pieces(
    count: int, piece: Callable[[int, int], object], helpers: int, grain: int = 1
) -> None:
    """``piece(lo, hi)`` over ``[0, count)`` in runs of ``grain``, on the calling
    thread and up to ``helpers`` helper threads (module docstring)."""
    if count <= 0:
        return
    helpers = min(helpers, -(-count // grain) - 1)
    if helpers <= 0:
        piece(0, count)
        return
    runs = _Runs(count, grain, piece)
    pool = _helpers()
    for _ in range(helpers):
        pool.submit(runs.take)
    runs.take()
    runs.wait()


def split(
    count: int, piece: Callable[[int, int], object], grain: int = 1, blas: bool = False
) -> None:
    """``piece(lo, hi)`` over ``[0, count)``: at once where the step has one thread (or
    the work one run), else in runs of ``grain`` on the step's intra-op threads; with
    ``blas``, BLAS is held to one thread meanwhile (the pieces call it)."""
    helpers = threads() - 1
    if helpers <= 0 or count <= grain:
        piece(0, count)
        return
    release = _blas_hold[0]() if blas and _blas_hold else None
    try:
        run_pieces(count, piece, helpers, grain)
    finally:
        if release is not None:
            release()


def split_per_thread(count: int, piece: Callable[[int, int], object], blas: bool = False) -> None:
    """``split`` in one run per thread: for work whose runs cost the same (the rows of a
    product, the images of a batch), where more runs would only add hand-overs."""
    split(count, piece, -(-count // threads()), blas)


# Runs per thread of a memory-bound split (``split_streamed``).
STREAMED_RUNS_PER_THREAD = 4


def split_streamed(count: int, piece: Callable[[int, int], object], blas: bool = False) -> None:
    """``split`` for memory-bound work (``STREAMED_FROM``) in ``STREAMED_RUNS_PER_THREAD``
    runs per thread, not one: where another process holds a core (a client reading a
    worker's reply), a helper that starts late leaves most of its share to the threads
    already running, where one run per thread would make them wait for its whole share
    (measured: a 40 MB product split in two halves took longer than whole beside a
    client's read on the 2-core VM)."""
    split(count, piece, max(1, -(-count // (threads() * STREAMED_RUNS_PER_THREAD))), blas)
