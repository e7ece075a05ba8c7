"""BLAS threads of the embedded runtime's steps, and the steps' thread count
(``ConfigProto.intra_op_parallelism_threads``).

TF1 runs an op's own parallel work on the session's intra-op pool:
``intra_op_parallelism_threads=N`` gives it ``N`` threads, ``0`` one per core the process
may use. Here a step's kernels split their work over ``N`` threads themselves
(``_util/intra_op``: pools, convolutions, large matmuls split by rows, columns or batch,
``ops/parallel_products.py``), and a session holds the loaded BLAS libraries
(numpy's and scipy's OpenBLAS, MKL: whatever ``threadpoolctl`` finds) to **one** thread
*for the duration of each of its steps* (``hold``), putting back what it found when the
step ends. (Until 2026-12-07 BLAS got the ``N`` threads and the other kernels ran on
one. OpenBLAS's threads spin for about 0.1 s after each call, so beside them a kernel's
own helper threads found no free core: the CNN's default-session step went from
62-88 ms to 51-54 ms on two cores when BLAS stopped threading, docs/performance.md.)
Outside a session's steps the process's setting is untouched: code that calls numpy
between steps, and other sessions, see their own limits. ``kernel_threads`` gives a
step's count; the sections below say how the default is chosen (it was BLAS's count).

**The default** (``0``). The number of cores this process may use
(``os.sched_getaffinity``, which a container's or ``taskset``'s CPU set narrows),
never more than BLAS is set to outside steps (so ``OPENBLAS_NUM_THREADS`` or an
enclosing ``threadpoolctl`` limit still rules), whatever else the machine runs, as
TF1's pool has one thread per core. It used to be fewer under load (the cores less the
threads others ran), for BLAS's sake: a two-thread OpenBLAS call splits its work in
fixed halves and waits for a descheduled half, its idle threads spinning, so beside CPU
hogs two threads ran the CNN far slower than one. The kernels' runs are taken from a
counter by threads that block when idle, so a descheduled helper delays only the run it
holds, while each more thread gets the step a larger share of the busy cores: beside
two and four hogs on the 2-core VM the CNN step took 112 and 172 ms on two threads
against 133 and 249 ms on one (TF1: 114 and 169 ms; docs/performance.md).

**Several sessions at once.** BLAS's thread count is one setting per library and process,
not per thread. While holds asking for different counts overlap in time, the smallest
count asked for applies to all of them; when the last ends, the setting found before
the first one began is put back. Steps ask for one (so do ``inter_op``'s stages); a
step's kernel threads are its own (a thread-local budget), whatever other sessions
run.

**Explicit ``N``** gives the step's kernels exactly ``N`` threads, more than BLAS's
setting included, as TF1 sizes its pool to ``N`` whatever the cores.

**scipy's own BLAS runs on one thread during steps.** A pip-installed scipy brings an
OpenBLAS of its own, separate from numpy's; in a step only Adam's level-1 update
(``train/optimizers/adam_blas.py``) calls it, on cache-sized blocks. Given threads too,
its pool and numpy's took turns on the cores: each pool's idle threads spin for a while
after a call, so right after a matmul on numpy's pool, a two-thread ``axpy`` waited for
its descheduled half. On the 2-core AMD EPYC VM a tutorial CNN's Adam update of 800K
parameters took 23 ms instead of about 3, and the whole program ran 1.16x TF1's time
(0.57x with one thread for both). So a library that lives in scipy's own folder is
held to one thread while steps run, as numpy's now is too.
"""

from __future__ import annotations

import importlib
import os
import threading
import time
from typing import Any

from ..._util import intra_op

# Seconds a reading of the CPU affinity set is trusted (``available_cores``).
_CORES_EVERY = 1.0
_cores: list[float] = [float("-inf"), 1.0]  # [when read, the count then]
_found = [0]  # numpy's BLAS setting found by the first running hold (0: none runs)
_lock = threading.Lock()
_controller: list[Any] = []
_active: dict[int, int] = {}  # token -> threads asked for, by steps running now
_saved: list[int] | None = None  # per library: its setting before the first step began
_applied: int = 0  # what the running steps hold the libraries to now (0: nothing)
_next_token = [0]


def load_blas() -> None:
    """Loads scipy's BLAS library (Adam's host update calls it, ``train.adam_blas``) if it
    is not loaded yet, so that a thread limit taken next covers it: ``import dataflow``
    leaves it unloaded (0.11 s), and threadpoolctl limits only the libraries loaded when
    the limit is taken."""
    importlib.import_module("scipy.linalg.blas")


def controller() -> Any:
    """threadpoolctl's view of the loaded BLAS libraries, found once (finding them walks
    the process's shared libraries, which takes milliseconds)."""
    if not _controller:
        from threadpoolctl import ThreadpoolController

        load_blas()
        _controller.append(ThreadpoolController().select(user_api="blas"))
    return _controller[0]


class _Library:
    """One BLAS library's thread count, read and set. For OpenBLAS built with pthreads
    the library's own functions are called: threadpoolctl (3.8) lets only the first
    Python thread that set a limit set OpenBLAS's later (others' calls do nothing), so
    a session stepping in another thread could not hold its limit; the holds here are
    serialized by this module's lock instead. threadpoolctl's calls cost ~5 us, these
    well under one."""

    __slots__ = ("get", "set", "level1_only")

    def __init__(self, lib: Any) -> None:
        self.get, self.set = lib.get_num_threads, lib.set_num_threads
        self.level1_only = scipys_own(getattr(lib, "filepath", "") or "")
        symbol = getattr(lib, "_get_symbol", None)
        if lib.internal_api == "openblas" and lib.threading_layer != "openmp" and symbol:
            get, put = symbol("openblas_get_num_threads"), symbol("openblas_set_num_threads")
            if get is not None and put is not None:
                self.get, self.set = get, put


def scipys_own(path: str) -> bool:
    """Whether the library at ``path`` is one scipy ships for itself (in its package
    folder or the ``scipy.libs`` folder beside it), not numpy's."""
    try:
        import scipy
    except ImportError:
        return False
    root = os.path.dirname(os.path.realpath(scipy.__file__))
    real = os.path.realpath(path) if path else ""
    return real.startswith((root + os.sep, root + ".libs" + os.sep))


def _set_all(libs: list[_Library], threads: int) -> None:
    for lib in libs:
        lib.set(1 if lib.level1_only else threads)


_libs: list[list[_Library]] = []


def _libraries() -> list[_Library]:
    if not _libs:
        _libs.append([_Library(lib) for lib in controller().lib_controllers])
    return _libs[0]


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity set), read at most once a
    second (a system call at every step's start showed in a 20-op step's 15 us)."""
    now = time.monotonic()
    if now - _cores[0] > _CORES_EVERY:
        try:
            count = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):  # not Linux
            count = os.cpu_count() or 1
        _cores[:] = [now, max(1, count)]
    return int(_cores[1])


def library_threads() -> int:
    """What numpy's BLAS is set to outside the steps (``OPENBLAS_NUM_THREADS``, an
    enclosing ``threadpoolctl`` limit): the setting found before the running holds, or
    the current one when none runs (scipy's own library, held to one, aside)."""
    if _active and _found[0]:  # (worked out by the first running hold)
        return _found[0]
    libs = _libs[0] if _libs else _libraries()
    return _numpys_count(libs, [lib.get() or 0 for lib in libs])


def _numpys_count(libs: list[_Library], counts: list[int]) -> int:
    known = [n for lib, n in zip(libs, counts) if n > 0 and not lib.level1_only]
    return max(1, min(known)) if known else 1


def kernel_threads(intra_op: int) -> int:
    """The threads one step's kernels split their work over (``_util/intra_op``):
    ``intra_op`` when positive (exactly, as TF1 sizes its pool), else the cores this
    process may use, never above what BLAS is set to outside steps (a process pinned to
    one BLAS thread, as the benchmarks are, runs its steps on one)."""
    if intra_op > 0:
        return intra_op
    return max(1, min(available_cores(), library_threads()))


def hold(threads: int) -> int:
    """Holds BLAS to ``threads`` (the smallest of all running holds) until ``release``
    of the returned token."""
    global _saved, _applied
    libs = _libs[0] if _libs else _libraries()
    with _lock:
        if not _active:
            _saved = [lib.get() or 0 for lib in libs]
            _found[0] = _numpys_count(libs, _saved)
            # Libraries already at one setting need no call when a hold asks for it
            # (scipy's own one is set to one thread by the first hold unless it is
            # there already: a Dask worker's libraries all start at one, and its every
            # stage holds them, ``dask/worker_state.py``).
            same = len(set(_saved)) == 1 and (
                _saved[0] == 1 or not any(lib.level1_only for lib in libs)
            )
            _applied = _saved[0] if same else 0
        token = _next_token[0] = _next_token[0] + 1
        _active[token] = threads
        want = min(_active.values())
        if want != _applied:
            _set_all(libs, want)
            _applied = want
        return token


def _one_thread() -> Any:
    """Holds BLAS to one thread (``intra_op.split``'s pieces call it from several
    threads at once); returns what ends the hold."""
    token = hold(1)
    return lambda: release(token)


intra_op.set_blas_hold(_one_thread)


def _threaded(threads: int, call: Any) -> Any:
    """``call()`` with numpy's BLAS on ``threads`` threads (at most its setting outside
    steps) where the calling step's hold is the only one running; with other holds,
    ``call()`` as it is (the smallest hold rules: a hold that starts meanwhile puts one
    thread back at once)."""
    global _applied
    libs = _libs[0] if _libs else _libraries()
    with _lock:
        threads = min(threads, _found[0] or 1)
        raise_now = len(_active) == 1 and _applied == 1 and threads > 1
        if raise_now:
            for lib in libs:
                if not lib.level1_only:
                    lib.set(threads)
            _applied = threads
    try:
        return call()
    finally:
        if raise_now:
            with _lock:
                want = min(_active.values()) if _active else 0
                if want and want != _applied:
                    _set_all(libs, want)
                    _applied = want


intra_op.set_blas_threaded(_threaded)


def release(token: int) -> None:
    """Ends the hold ``token``: the smallest remaining hold applies, or, with none left,
    each library gets back the setting found before the first."""
    global _saved, _applied
    with _lock:
        del _active[token]
        libs = _libraries()
        if _active:
            want = min(_active.values())
            if want != _applied:
                _set_all(libs, want)
                _applied = want
            return
        if _saved is not None:
            for lib, n in zip(libs, _saved):
                if n > 0 and n != (1 if lib.level1_only else _applied):
                    lib.set(n)
        _saved = None
        _found[0] = 0
        _applied = 0
