"""The dense optimizer updates as compiled loops (``train/optimizers/fused_updates.py``,
numba): the ufunc kernels' order of operations, so their values (and TF1's, where those
match TF1's); sparse rows; a held buffer updated into a fresh one; numpy's routes
where numba is missing, switched off or refuses a loop (``ops/compiled.py``)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys

import numpy as np
import pytest

import dataflow as tf
from dataflow.ops import compiled
from dataflow.train.optimizers import adam_blas, fused_updates

from .test_adam_blas import HYPER, _problem, train_holding_the_buffer

pytest.importorskip("numba")

SHAPE = (67, 61)  # 4,087 elements: an odd count, so the vector loop's tail runs too

# name: (optimizer class, its arguments, the slot names)
OPTIMIZERS = {
    "gradient_descent": ("GradientDescentOptimizer", {"learning_rate": 0.1}, ()),
    "momentum": ("MomentumOptimizer", {"learning_rate": 0.05, "momentum": 0.9}, ("momentum",)),
    "nesterov": (
        "MomentumOptimizer",
        {"learning_rate": 0.05, "momentum": 0.7, "use_nesterov": True},
        ("momentum",),
    ),
    "adagrad": ("AdagradOptimizer", {"learning_rate": 0.3}, ("accumulator",)),
    "rms_prop": (
        "RMSPropOptimizer",
        {"learning_rate": 0.01, "decay": 0.8, "momentum": 0.5, "epsilon": 1e-6},
        ("rms", "momentum"),
    ),
    "centered_rms_prop": (
        "RMSPropOptimizer",
        {"learning_rate": 0.01, "decay": 0.8, "momentum": 0.5, "epsilon": 1e-6, "centered": True},
        ("rms", "momentum", "mg"),
    ),
    "adam": ("AdamOptimizer", HYPER, ("m", "v")),
}


@pytest.fixture
def small_loops(monkeypatch):
    monkeypatch.setattr(fused_updates, "MIN_SIZE", 100)


def _count_loops(monkeypatch) -> list:
    """Records each loop's answer (the test must know which route ran)."""
    runs = []
    real = fused_updates.FusedUpdate.update

    def counted(self, *args):
        done = real(self, *args)
        runs.append(done)
        return done

    monkeypatch.setattr(fused_updates.FusedUpdate, "update", counted)
    return runs


def _ufunc_kernels_only(monkeypatch):
    monkeypatch.setattr(fused_updates, "applies_to", lambda arrays: False)
    monkeypatch.setattr(adam_blas, "applies_to", lambda arrays: False)


def _train(lib, name, w0, grads, sparse_rows=None):
    """``len(grads)`` steps of optimizer ``name`` in ``lib`` (dataflow or TF1) on one
    variable; returns it and its slots. ``sparse_rows``: the gradient is an
    ``IndexedSlices`` of those rows (a gather's gradient), fed by its rows' values."""
    cls, hyper, slot_names = OPTIMIZERS[name]
    graph = lib.Graph()
    with graph.as_default():
        w = lib.Variable(w0, name="w")
        opt = getattr(lib.train, cls)(**hyper)
        if sparse_rows is None:
            g = lib.placeholder(w0.dtype, w0.shape)
            train = opt.apply_gradients([(g, w)])
        else:
            g = lib.placeholder(w0.dtype, (len(sparse_rows), *w0.shape[1:]))
            slices = lib.IndexedSlices(g, lib.constant(sparse_rows), lib.constant(w0.shape))
            train = opt.apply_gradients([(slices, w)])
        init = lib.global_variables_initializer()
        slots = [opt.get_slot(w, s) for s in slot_names]
    with lib.Session(graph=graph) as sess:
        sess.run(init)
        for grad in grads:
            sess.run(train, {g: grad})
        return sess.run([w, *slots])


def _assert_within_roundings(got, want, steps):
    """Both routes round each operation once in the same order: on this project's x86-64
    VM they agree bit for bit. The bound allows a few roundings of the largest value per
    step (a compiler that fused a multiply and an add would round once where the other
    rounds twice), so the tests hold on any CPU."""
    for a, b in zip(got, want, strict=True):
        assert a.dtype == b.dtype
        assert np.abs(a - b).max() <= steps * 4 * np.finfo(a.dtype).eps * np.abs(b).max()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_each_loop_gives_its_ufunc_kernels_values(name, dtype, small_loops, monkeypatch):
    w0, grads = _problem(dtype, 12, seed=5, shape=SHAPE)
    runs = _count_loops(monkeypatch)
    fused = _train(tf, name, w0, grads)
    assert runs == [True] * 12
    _ufunc_kernels_only(monkeypatch)
    runs.clear()
    ufunc = _train(tf, name, w0, grads)
    assert runs == [False] * 12
    _assert_within_roundings(fused, ufunc, 12)
    if name != "adagrad":  # (Adagrad's first step moves by lr whatever the gradient)
        np.testing.assert_array_equal(fused[0][:, 0], w0[:, 0])  # zero gradients: no move


@pytest.mark.parametrize("name", ["momentum", "adagrad", "rms_prop"])
def test_sparse_rows_take_the_loop_on_their_rows(name, small_loops, monkeypatch):
    """(Adam's sparse update is TF1's ``_apply_sparse_shared``: every row moves, a
    kernel of its own, not a loop over the rows.)"""
    rows = np.array([3, 60, 7, 22, 41, 0, 13, 50, 33, 19], np.int64)
    w0, grads = _problem(np.float32, 6, seed=8, shape=SHAPE)
    grads = [g[: len(rows)] for g in grads]
    runs = _count_loops(monkeypatch)
    fused = _train(tf, name, w0, grads, sparse_rows=rows)
    assert runs and all(runs)
    _ufunc_kernels_only(monkeypatch)
    ufunc = _train(tf, name, w0, grads, sparse_rows=rows)
    _assert_within_roundings(fused, ufunc, 6)
    untouched = np.setdiff1d(np.arange(SHAPE[0]), rows)
    np.testing.assert_array_equal(fused[0][untouched], w0[untouched])


@pytest.mark.tf
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_each_loop_against_tf1(name, dtype, small_loops, monkeypatch):
    """Within a few roundings a step (bit for bit on this project's x86-64 VM, except
    Adagrad: TF1's kernel multiplies by ``rsqrt`` of the accumulator where ours divides
    by its ``sqrt``)."""
    tf1 = pytest.importorskip("tensorflow").compat.v1
    w0, grads = _problem(dtype, 30, seed=6, shape=SHAPE)
    runs = _count_loops(monkeypatch)
    ours = _train(tf, name, w0, grads)
    assert runs == [True] * 30
    theirs = _train(tf1, name, w0, grads)
    _assert_within_roundings(ours, theirs, 30)  # (Adagrad measured: 1.2 eps of the largest)


def test_a_held_variable_is_updated_into_a_fresh_buffer(small_loops, monkeypatch):
    w0, grads = _problem(np.float32, 3, seed=7, shape=SHAPE)
    runs = _count_loops(monkeypatch)
    got = train_holding_the_buffer(w0, grads)
    assert runs == [True] * 3
    want = _train(tf, "adam", w0, grads)  # nobody holds anything: all in place
    for a, b in zip(got, want, strict=True):
        np.testing.assert_array_equal(a, b)


def test_what_the_loops_take():
    big = np.zeros(fused_updates.MIN_SIZE, np.float32)
    assert fused_updates.applies_to((big, big.copy()))
    assert fused_updates.applies_to((big.astype(np.float64),))
    assert not fused_updates.applies_to((big[:-1],))  # small: the ufunc kernel
    assert not fused_updates.applies_to((big, big.astype(np.float64)))  # mixed dtypes
    assert not fused_updates.applies_to((big.astype(np.float16),))
    assert not fused_updates.applies_to((big.astype(np.complex64),))
    assert not fused_updates.applies_to((np.zeros((64, 128), np.float32).T,))  # strided
    unaligned = np.zeros(4 * fused_updates.MIN_SIZE + 1, np.uint8)[1:].view(np.float32)
    assert not fused_updates.applies_to((unaligned,))


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
        "import sys, numpy as np\n"
        "from dataflow.train.optimizers import fused_updates\n"
        "a = [np.ones(8192, np.float32) for _ in range(4)]\n"
        "f = np.float32\n"
        "hyper = (f(0.1), f(0.1), f(0.001), f(1e-8))\n"
        "assert fused_updates.ADAM.update(a[:3], a[:3], a[3], *hyper) is False\n"
        "assert np.all(a[0] == 1)\n"
        "assert 'numba' not in sys.modules\n"
    )
    env = {**os.environ, "DATAFLOW_NUMBA": "0"}
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
