"""Adam's dense update as one compiled loop (``train/optimizers/adam_fused.py``, numba):
TF1's order of operations, so the same values as the ufunc kernel and as TF1 itself; a
held buffer updated into a fresh one; numpy's routes where numba is missing, switched
off or refuses a loop (``ops/compiled.py``)."""

from __future__ import annotations

import logging
import platform
import subprocess
import sys

import numpy as np
import pytest

import dataflow as tf
from dataflow.ops import compiled
from dataflow.train.optimizers import adam_blas, adam_fused

from .test_adam_blas import HYPER, _problem, _train

pytest.importorskip("numba")

X86_64 = platform.machine().lower() in ("x86_64", "amd64")
SHAPE = (67, 61)  # 4,087 elements: an odd count, so the vector loop's tail runs too


@pytest.fixture
def small_loops(monkeypatch):
    monkeypatch.setattr(adam_fused, "MIN_SIZE", 100)


def _calls(monkeypatch) -> list:
    """Counts the compiled loop's runs (the test must know which route ran)."""
    runs = []
    real = adam_fused.update

    def counted(*args):
        done = real(*args)
        runs.append(done)
        return done

    monkeypatch.setattr(adam_fused, "update", counted)
    return runs


def _assert_same_or_one_rounding(got, want):
    for a, b in zip(got, want, strict=True):
        assert a.dtype == b.dtype
        if X86_64:
            # No fused multiply-adds on either side: every operation rounds once.
            np.testing.assert_array_equal(a, b)
        else:
            assert np.abs(a - b).max() <= 50 * np.finfo(a.dtype).eps * np.abs(b).max()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_loop_gives_the_ufunc_kernels_values(dtype, small_loops, monkeypatch):
    w0, grads = _problem(dtype, 20, seed=5, shape=SHAPE)
    runs = _calls(monkeypatch)
    fused = _train(tf, w0, grads)
    assert runs == [True] * 20
    monkeypatch.setattr(adam_fused, "applies_to", lambda arrays: False)
    monkeypatch.setattr(adam_blas, "applies_to", lambda arrays: False)
    ufunc = _train(tf, w0, grads)
    _assert_same_or_one_rounding(fused, ufunc)
    np.testing.assert_array_equal(fused[0][:, 0], w0[:, 0])  # zero gradients: no move


@pytest.mark.tf
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_loop_gives_tf1s_values(dtype, small_loops, monkeypatch):
    tf1 = pytest.importorskip("tensorflow").compat.v1
    w0, grads = _problem(dtype, 50, seed=6, shape=SHAPE)
    runs = _calls(monkeypatch)
    ours = _train(tf, w0, grads, {"learning_rate": 0.001})
    assert all(runs) and len(runs) == 50
    theirs = _train(tf1, w0, grads, {"learning_rate": 0.001})
    _assert_same_or_one_rounding(ours, theirs)


def test_a_held_variable_is_updated_into_a_fresh_buffer(small_loops, monkeypatch):
    kept = []
    w0, grads = _problem(np.float32, 3, seed=7, shape=SHAPE)
    w = tf.Variable(w0, name="w")
    g = tf.placeholder(tf.float32, SHAPE)
    opt = tf.train.AdamOptimizer(**HYPER)
    train = opt.apply_gradients([(g, w)])
    keep = tf.py_func(lambda a: kept.append(a) or np.float32(0), [w.read_value()], tf.float32)
    runs = _calls(monkeypatch)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train, {g: grads[0]})
        sess.run(keep)  # holds the stored buffer itself
        held = kept[0].copy()
        sess.run(train, {g: grads[1]})
        np.testing.assert_array_equal(kept[0], held)  # the update went to a new buffer
        kept.clear()
        sess.run(train, {g: grads[2]})
        got = sess.run([w, opt.get_slot(w, "m"), opt.get_slot(w, "v")])
    assert runs == [True] * 3
    want = _train(tf, w0, grads)  # nobody holds anything: all in place
    for a, b in zip(got, want, strict=True):
        np.testing.assert_array_equal(a, b)


def test_what_the_loop_takes():
    big = np.zeros(adam_fused.MIN_SIZE, np.float32)
    assert adam_fused.applies_to((big, big.copy()))
    assert adam_fused.applies_to((big.astype(np.float64),))
    assert not adam_fused.applies_to((big[:-1],))  # small: the ufunc kernel
    assert not adam_fused.applies_to((big, big.astype(np.float64)))  # mixed dtypes
    assert not adam_fused.applies_to((big.astype(np.float16),))
    assert not adam_fused.applies_to((np.zeros((64, 128), np.float32).T,))  # strided
    unaligned = np.zeros(4 * adam_fused.MIN_SIZE + 1, np.uint8)[1:].view(np.float32)
    assert not adam_fused.applies_to((unaligned,))


def test_a_loop_numba_refuses_falls_back_and_says_why(dataflow_log):
    def makes_python_objects(out):  # numba cannot type ``object()``
        for i in range(out.shape[0]):
            out[i] = hash(object())

    kernel = compiled.Kernel(makes_python_objects)
    assert kernel(np.zeros(3)) == (False, None)
    assert kernel(np.zeros(3)) == (False, None)  # given up: no second attempt, no second log
    said = [r.getMessage() for r in dataflow_log.records if r.levelno == logging.WARNING]
    assert len(said) == 1 and "numba cannot compile" in said[0], said


def test_switched_off_numba_leaves_every_update_on_numpy():
    code = (
        "import numpy as np\n"
        "from dataflow.train.optimizers import adam_fused\n"
        "a = [np.ones(8192, np.float32) for _ in range(4)]\n"
        "f = np.float32\n"
        "assert adam_fused.update(a[:3], a[:3], a[3], f(0.1), f(0.9), f(0.999), f(1e-8)) is False\n"
        "assert np.all(a[0] == 1)\n"
        "import sys\n"
        "assert 'numba' not in sys.modules\n"
    )
    env = {**__import__("os").environ, "DATAFLOW_NUMBA": "0"}
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=120)


def test_numba_loads_on_the_first_large_update_only():
    code = (
        "import sys, numpy as np\n"
        "import dataflow as tf\n"
        "def run(shape):\n"
        "    g = tf.Graph()\n"
        "    with g.as_default():\n"
        "        w = tf.Variable(np.ones(shape, np.float32))\n"
        "        step = tf.train.AdamOptimizer(0.1).minimize(tf.reduce_sum(w * w))\n"
        "        init = tf.global_variables_initializer()\n"
        "    with tf.Session(graph=g) as s:\n"
        "        s.run(init)\n"
        "        s.run(step)\n"
        "        return s.run(w)\n"
        "run((10, 10))\n"
        "assert 'numba' not in sys.modules\n"
        "w = run((100, 100))\n"
        "assert 'numba' in sys.modules\n"
        "assert np.all(w < 1)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=300)
