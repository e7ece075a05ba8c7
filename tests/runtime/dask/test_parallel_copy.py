"""Large copies of step parts spread over idle cores
(``runtime/dask/shared_memory/parallel_copy.py``)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from dataflow._util import intra_op
from dataflow.runtime.dask.shared_memory import parallel_copy
from dataflow.runtime.execute import blas_threads

MULTI_CORE = blas_threads.available_cores() > 1


def _source(nbytes: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, nbytes, dtype=np.uint8)


@pytest.fixture
def idle_machine(monkeypatch):
    """The reading says only the caller runs: helpers are allowed."""
    monkeypatch.setattr(parallel_copy, "runnable_now", lambda: 1)


@pytest.mark.parametrize(
    "nbytes",
    [
        0,
        1,
        parallel_copy.SPLIT_FROM - 1,
        parallel_copy.SPLIT_FROM,
        3 * parallel_copy.CHUNK + 12_345,
        5 * parallel_copy.SPLIT_FROM + 7,
    ],
)
def test_copy_is_exact_at_every_size(idle_machine, nbytes):
    source = _source(nbytes, nbytes)
    target = np.zeros(nbytes, np.uint8)
    parallel_copy.copy(target, source)
    assert np.array_equal(target, source)


def test_how_many_helpers(monkeypatch):
    cores = blas_threads.available_cores()
    large = 8 * parallel_copy.SPLIT_FROM
    monkeypatch.setattr(parallel_copy, "runnable_now", lambda: 1)
    assert parallel_copy.helpers_for(parallel_copy.SPLIT_FROM - 1) == 0
    assert parallel_copy.helpers_for(large) == min(parallel_copy.MAX_HELPERS, cores - 1)
    # One other runnable thread still leaves room for a helper; the cores' worth does not.
    monkeypatch.setattr(parallel_copy, "runnable_now", lambda: 2)
    assert parallel_copy.helpers_for(large) == min(parallel_copy.MAX_HELPERS, cores - 1)
    monkeypatch.setattr(parallel_copy, "runnable_now", lambda: cores + 1)
    assert parallel_copy.helpers_for(large) == 0
    monkeypatch.setattr(parallel_copy, "runnable_now", lambda: None)  # no /proc
    assert parallel_copy.helpers_for(large) == 0


def test_runnable_now_reads_a_count():
    running = parallel_copy.runnable_now()
    assert running is None or running >= 1  # (this thread runs)


@pytest.mark.skipif(not MULTI_CORE, reason="helpers need a second core")
def test_helpers_take_pieces(idle_machine, monkeypatch):
    takers: set[str] = set()

    class RecordingNumpy:
        """numpy, noting which threads copy pieces."""

        def __getattr__(self, name):
            return getattr(np, name)

        def copyto(self, target, source):
            takers.add(threading.current_thread().name)
            np.copyto(target, source)

    monkeypatch.setattr(parallel_copy, "np", RecordingNumpy())
    source = _source(4 * parallel_copy.SPLIT_FROM)
    target = np.zeros_like(source)
    for _ in range(20):  # (a helper may start after the caller took every piece)
        parallel_copy.copy(target, source)
        if any(name.startswith("dataflow-intra-op") for name in takers):
            break
    assert np.array_equal(target, source)
    assert any(name.startswith("dataflow-intra-op") for name in takers)


def test_busy_helpers_leave_the_copy_to_the_caller(idle_machine):
    """Helpers that cannot start (every pool thread busy) delay nothing: the caller
    copies every piece and returns; when they start later they touch nothing."""
    pool = intra_op._helpers()
    release = threading.Event()
    started = [threading.Event() for _ in range(pool._max_workers)]
    blockers = []
    for event in started:
        blockers.append(pool.submit(lambda e=event: (e.set(), release.wait(30))))
    for event in started:
        assert event.wait(10)
    try:
        source = _source(3 * parallel_copy.SPLIT_FROM, 1)
        target = np.zeros_like(source)
        parallel_copy.copy(target, source)
        assert np.array_equal(target, source)
        target[:] = 7  # what a late helper must not overwrite
    finally:
        release.set()
    for blocker in blockers:
        blocker.result(10)
    pool.submit(lambda: None).result(10)  # (the late helpers have run by now)
    assert (target == 7).all()


def test_copies_from_several_threads_at_once(idle_machine):
    sources = [_source(2 * parallel_copy.SPLIT_FROM + i, i) for i in range(4)]
    targets = [np.zeros_like(s) for s in sources]
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            for _ in range(3):
                parallel_copy.copy(targets[i], sources[i])
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors
    for source, target in zip(sources, targets, strict=True):
        assert np.array_equal(target, source)


def test_lengths_must_match():
    with pytest.raises(ValueError, match="copy of 10 bytes into 9"):
        parallel_copy.copy(np.zeros(9, np.uint8), np.zeros(10, np.uint8))
