"""``ConfigProto(intra_op_parallelism_threads=N)``: a session's steps split their kernels'
work over ``N`` threads (``_util/intra_op``) and hold BLAS to one thread meanwhile, and
only during steps (``runtime/execute/blas_threads.py``, ``embedded_backend.py``)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

import dataflow as tf
from dataflow._util import intra_op
from dataflow.ops import parallel_products
from dataflow.runtime.execute import blas_threads


def _blas_threads(scipys_own: bool = False) -> list[int]:
    """The thread counts of the loaded BLAS libraries: numpy's (and any other), or the
    ones scipy ships for itself (held to one thread in steps)."""
    return [
        lib["num_threads"]
        for lib in threadpool_info()
        if lib["user_api"] == "blas" and blas_threads.scipys_own(lib["filepath"]) == scipys_own
    ]


def _session_reporting_threads(config: tf.ConfigProto | None) -> tuple[tf.Session, object]:
    """A session whose step runs a matmul and reports, from inside the step, the
    kernels' thread count and the BLAS threads threadpoolctl sees, as ``kernels * 1000 +
    BLAS`` (a py_func between the matmul and the fetch; the BLAS libraries' counts are
    one reading, asserted equal)."""
    graph = tf.Graph()
    with graph.as_default():
        a = tf.constant(np.ones((64, 64), np.float32))
        product = tf.matmul(a, a)

        def report(x: np.ndarray) -> np.ndarray:
            threads = _blas_threads()
            assert min(threads) == max(threads), threads
            return np.array(intra_op.threads() * 1000 + max(threads), np.int64)

        seen = tf.py_func(report, [product], tf.int64)
    return tf.Session(graph=graph, config=config), seen


@pytest.fixture
def two_blas_threads():
    blas_threads.load_blas()
    with threadpool_limits(limits=2, user_api="blas"):
        yield


def test_intra_op_one_runs_the_step_on_one_blas_thread(two_blas_threads):
    sess, seen = _session_reporting_threads(tf.ConfigProto(intra_op_parallelism_threads=1))
    with sess:
        assert sess.run(seen) == 1001
        assert _blas_threads() == [2] * len(_blas_threads())  # put back after the step
        assert sess.run(seen) == 1001


def test_intra_op_n_gives_the_kernels_exactly_n_and_blas_one(two_blas_threads):
    """N threads for the step's kernels even above BLAS's own setting, as TF1 sizes its
    pool to N; BLAS runs on one meanwhile (its threads spin after each call, on the
    cores the kernels' threads need) and gets its setting back after the step."""
    sess, seen = _session_reporting_threads(tf.ConfigProto(intra_op_parallelism_threads=3))
    with sess:
        assert sess.run(seen) == 3001
        assert set(_blas_threads()) == {2}
    assert intra_op.threads() == 1  # (outside a step)


def test_default_is_at_most_the_cores_and_the_current_setting_and_restores(two_blas_threads):
    sess, seen = _session_reporting_threads(None)
    with sess:
        kernels, blas = divmod(int(sess.run(seen)), 1000)
        assert 1 <= kernels <= min(2, blas_threads.available_cores()) and blas == 1
        assert set(_blas_threads()) == {2}
    with threadpool_limits(limits=1, user_api="blas"):  # an enclosing limit still rules
        sess, seen = _session_reporting_threads(tf.ConfigProto())
        with sess:
            assert sess.run(seen) == 1001


def test_the_default_is_the_cores_whatever_the_load(monkeypatch):
    """One thread per core this process may use (at most BLAS's own setting), as TF1's
    pool: CPU hogs beside the step do not lower it (a kernel's runs are taken by
    threads that block, and more threads get the step a larger share of busy cores)."""
    cores = blas_threads.available_cores()
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        time.sleep(0.2)
        with threadpool_limits(limits=64, user_api="blas"):
            assert blas_threads.kernel_threads(0) == min(cores, blas_threads.library_threads())
        with threadpool_limits(limits=1, user_api="blas"):
            assert blas_threads.kernel_threads(0) == 1
            assert blas_threads.kernel_threads(3) == 3  # (explicit: exactly)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    monkeypatch.setattr(blas_threads, "available_cores", lambda: 1)
    assert blas_threads.kernel_threads(0) == 1


def test_overlapping_holds_use_the_smallest_and_the_last_restores(two_blas_threads):
    first = blas_threads.hold(4)
    assert set(_blas_threads()) == {4}
    second = blas_threads.hold(1)
    assert set(_blas_threads()) == {1}
    blas_threads.release(second)
    assert set(_blas_threads()) == {4}
    blas_threads.release(first)
    assert set(_blas_threads()) == {2}


def test_a_call_given_blas_threads_gets_them_only_where_its_hold_is_alone(two_blas_threads):
    """``intra_op.with_blas_threads`` (one large LAPACK routine): BLAS on the step's
    threads (at most its setting outside steps) for the call, one thread again after;
    with another hold running, one thread throughout; scipy's own BLAS stays at one."""
    seen: list[int] = []

    def look() -> str:
        seen.extend(_blas_threads())
        assert set(_blas_threads(scipys_own=True)) <= {1}
        return "result"

    token = blas_threads.hold(1)
    try:
        with intra_op.budget(4):
            assert intra_op.with_blas_threads(look) == "result"
            assert set(seen) == {2}  # 4 asked, 2 set outside the steps
            assert set(_blas_threads()) == {1}
            other = blas_threads.hold(1)
            seen.clear()
            intra_op.with_blas_threads(look)
            blas_threads.release(other)
            assert set(seen) == {1}
        seen.clear()
        intra_op.with_blas_threads(look)  # the calling thread's budget is 1 again
        assert set(seen) == {1}
    finally:
        blas_threads.release(token)
    assert set(_blas_threads()) == {2}


def test_one_large_matrix_runs_its_lapack_call_on_the_steps_threads(two_blas_threads):
    """A 1300x1300 inverse in a step of two threads sees two BLAS threads; the step's
    other kernels see one, before and after."""
    n = 1300
    assert n**3 >= parallel_products.LAPACK_THREADED_FROM
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float64, [n, n])
        inverse = tf.linalg.inv(x)
        seen = []

        def report(a: np.ndarray) -> np.ndarray:
            seen.extend(_blas_threads())
            return a

        checked = tf.py_func(report, [inverse[:2, :2]], tf.float64)
    value = np.eye(n) * 2.0 + np.random.default_rng(0).standard_normal((n, n)) / n
    calls: list[int] = []
    inv = np.linalg.inv

    def spying(a: np.ndarray) -> np.ndarray:
        calls.extend(_blas_threads())
        return inv(a)

    config = tf.ConfigProto(intra_op_parallelism_threads=2)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(np.linalg, "inv", spying)
        with tf.Session(graph=graph, config=config) as sess:
            got, _ = sess.run([inverse, checked], {x: value})
    assert set(calls) == {2} and set(seen) == {1}
    np.testing.assert_allclose(got @ value, np.eye(n), atol=1e-9)
    assert set(_blas_threads()) == {2}


def test_steps_of_two_sessions_in_threads_never_exceed_either_limit(two_blas_threads):
    """Two sessions stepping at once in two threads: each step sees at most its own
    limit, and the process's setting is back afterwards."""
    one, seen_one = _session_reporting_threads(tf.ConfigProto(intra_op_parallelism_threads=1))
    two, seen_two = _session_reporting_threads(tf.ConfigProto(intra_op_parallelism_threads=2))
    results: dict[str, list[int]] = {"one": [], "two": []}

    def loop(sess: tf.Session, seen: object, key: str) -> None:
        for _ in range(30):
            results[key].append(int(sess.run(seen)))

    threads = [
        threading.Thread(target=loop, args=(one, seen_one, "one")),
        threading.Thread(target=loop, args=(two, seen_two, "two")),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert set(results["one"]) == {1001}
    assert set(results["two"]) == {2001}  # (the kernels' count is the step thread's own)
    assert set(_blas_threads()) == {2}
    one.close()
    two.close()


def test_scipys_own_blas_runs_on_one_thread_in_steps(two_blas_threads):
    """Adam's level-1 update calls scipy's own OpenBLAS (a pip-installed scipy ships one
    beside numpy's): during a step it is held to one thread, as numpy's is, and put back
    after."""
    graph = tf.Graph()
    with graph.as_default():
        a = tf.constant(np.ones((64, 64), np.float32))

        def report(x: np.ndarray) -> np.ndarray:
            return np.array([max(_blas_threads(scipys_own=True)), max(_blas_threads())])

        seen = tf.py_func(report, [tf.matmul(a, a)], tf.int64)
    if not _blas_threads(scipys_own=True):
        pytest.skip("scipy shares numpy's BLAS library here (one pool)")
    config = tf.ConfigProto(intra_op_parallelism_threads=2)
    with tf.Session(graph=graph, config=config) as sess:
        assert sess.run(seen).tolist() == [1, 1]
    assert set(_blas_threads(scipys_own=True)) == {2}  # put back after the step
