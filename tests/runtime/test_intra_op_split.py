"""Kernels' own parallel loops (``_util/intra_op.py``): how a split shares its runs
out, and that a step's threads reach its kernels."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import dataflow as tf
from dataflow._util import intra_op
from dataflow.runtime.execute import blas_threads


def _ranges(count: int, grain: int, threads: int) -> tuple[list[tuple[int, int]], set[str]]:
    seen: list[tuple[int, int]] = []
    names: set[str] = set()
    lock = threading.Lock()

    def piece(lo: int, hi: int) -> None:
        with lock:
            seen.append((lo, hi))
            names.add(threading.current_thread().name)

    with intra_op.budget(threads):
        intra_op.split(count, piece, grain)
    return sorted(seen), names


def test_one_thread_runs_the_whole_range_at_once_on_the_caller():
    seen, names = _ranges(10, 3, 1)
    assert seen == [(0, 10)] and names == {threading.current_thread().name}
    assert intra_op.threads() == 1  # (outside a budget)


@pytest.mark.parametrize("count, grain", [(10, 3), (7, 1), (1000, 128), (5, 5), (6, 5)])
def test_runs_cover_the_range_once_each(count, grain):
    seen, _ = _ranges(count, grain, 3)
    if count <= grain:
        assert seen == [(0, count)]
        return
    assert seen == [(lo, min(count, lo + grain)) for lo in range(0, count, grain)]


@pytest.mark.skipif(blas_threads.available_cores() < 2, reason="helpers need a second core")
def test_helpers_take_runs_when_runs_are_long():
    names: set[str] = set()

    def piece(lo: int, hi: int) -> None:
        names.add(threading.current_thread().name)
        time.sleep(0.002)  # (work that lets go of the GIL, as BLAS and numba loops do)

    for _ in range(20):  # (a helper may start after the caller took every run)
        with intra_op.budget(2):
            intra_op.split(8, piece)
        if any(n.startswith("dataflow-intra-op") for n in names):
            break
    assert any(n.startswith("dataflow-intra-op") for n in names)


def test_helpers_run_their_loops_serially():
    inner: list[int] = []

    def piece(lo: int, hi: int) -> None:
        inner.append(intra_op.threads() if threading.current_thread().name != "MainThread" else 0)

    with intra_op.budget(4):
        intra_op.split(64, piece)
    assert all(t in (0, 1) for t in inner)  # a helper's own budget is one thread


def test_the_first_error_of_a_run_is_raised_after_every_run_ended():
    done: list[int] = []

    def piece(lo: int, hi: int) -> None:
        if lo == 3:
            raise ValueError("run 3 failed")
        done.append(lo)

    with intra_op.budget(3), pytest.raises(ValueError, match="run 3 failed"):
        intra_op.split(8, piece)
    assert sorted(done) == [0, 1, 2, 4, 5, 6, 7]


def test_blas_is_held_to_one_thread_while_a_split_calls_it(monkeypatch):
    calls: list[str] = []

    def hold():
        calls.append("hold")
        return lambda: calls.append("release")

    monkeypatch.setattr(intra_op, "_blas_hold", [hold])
    with intra_op.budget(2):
        intra_op.split(4, lambda lo, hi: calls.append("run"), blas=True)
        intra_op.split(4, lambda lo, hi: None)  # (no BLAS in it: no hold)
    assert calls[0] == "hold" and calls[-1] == "release" and calls.count("run") == 4
    assert calls.count("hold") == 1


def test_a_session_gives_its_steps_its_intra_op_threads():
    graph = tf.Graph()
    with graph.as_default():
        seen = tf.py_func(lambda: np.int64(intra_op.threads()), [], tf.int64)
    for threads in (1, 3):
        config = tf.ConfigProto(intra_op_parallelism_threads=threads)
        with tf.Session(graph=graph, config=config) as sess:
            assert sess.run(seen) == threads
    assert intra_op.threads() == 1


def test_finished_runs_let_go_of_their_piece():
    """A helper that starts after the last run still holds the runs (the pool's queue
    does until then); it must not hold the kernel's arrays the piece's closure holds."""
    import weakref

    class Arrays:
        pass

    arrays = Arrays()
    seen = weakref.ref(arrays)

    def piece(lo: int, hi: int, held=arrays) -> None:
        assert held is not None

    runs = intra_op._Runs(4, 1, piece)
    runs.take()
    runs.wait()
    del piece, arrays
    assert seen() is None
    runs.take()  # a late helper: nothing to do, nothing held
