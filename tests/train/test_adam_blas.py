"""Adam's dense update through BLAS (``train/optimizers/adam_blas.py``) on host arrays: against
a float64 numpy reference in TF1's formula, against TF1 itself, and against the ufunc
kernel (TF1's order of operations, the path cupy takes). Blocks are made small here so
that several blocks and a short tail run on small variables. The compiled loop
(``fused_updates``, taken first where numba is installed) is kept out of these tests:
its own are in test_fused_updates.py."""

from __future__ import annotations

import platform

import numpy as np
import pytest

import dataflow as tf
from dataflow.train.optimizers import adam_blas, fused_updates, training_ops

from .test_optimizers import ref_adam

HYPER = {"learning_rate": 0.01, "beta1": 0.8, "beta2": 0.95, "epsilon": 1e-6}
SHAPE = (37, 5)  # 185 elements: blocks of 64, 64 and 57


@pytest.fixture(autouse=True)
def no_compiled_loop(monkeypatch):
    monkeypatch.setattr(fused_updates, "applies_to", lambda arrays: False)


@pytest.fixture
def small_blocks(monkeypatch):
    monkeypatch.setattr(adam_blas, "BLOCK", 64)
    monkeypatch.setattr(adam_blas, "MIN_SIZE", 100)


def _ufunc_path_only(monkeypatch):
    monkeypatch.setattr(adam_blas, "applies_to", lambda arrays: False)


def _train(lib, w0, grads, hyper=HYPER, transpose_grad=False):
    """``len(grads)`` Adam steps on one variable in ``lib`` (dataflow or TF1); returns
    var, m and v. ``transpose_grad``: the fed gradients are transposed in the graph."""
    graph = lib.Graph()
    with graph.as_default():
        w = lib.Variable(w0, name="w")
        g = lib.placeholder(w0.dtype, grads[0].shape)
        opt = lib.train.AdamOptimizer(**hyper)
        # A transposed gradient is a non-contiguous view in dataflow: the ufunc path.
        train = opt.apply_gradients([(lib.transpose(g) if transpose_grad else g, w)])
        init = lib.global_variables_initializer()
        slots = [opt.get_slot(w, "m"), opt.get_slot(w, "v")]
    with lib.Session(graph=graph) as sess:
        sess.run(init)
        for grad in grads:
            sess.run(train, {g: grad})
        return sess.run([w, *slots])


def _problem(dtype, steps, seed=0, shape=SHAPE):
    rng = np.random.default_rng(seed)
    w0 = (rng.standard_normal(shape) * 0.1).astype(dtype)
    # Gradients over eight decades, and a column of zeros (v stays 0: the epsilon
    # alone keeps the denominator positive).
    grads = []
    for _ in range(steps):
        grad = rng.standard_normal(shape) * 10.0 ** rng.integers(-6, 2, shape)
        grad[:, 0] = 0
        grads.append(grad.astype(dtype))
    return w0, grads


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_blas_update_in_blocks_matches_the_formula(dtype, small_blocks):
    w0, grads = _problem(dtype, 6)
    got = _train(tf, w0, grads)
    want_w, want = ref_adam(w0.astype(np.float64), [g.astype(np.float64) for g in grads], **HYPER)
    scale = {np.float32: 1e-6, np.float64: 1e-14}[dtype]
    for value, reference in zip(got, [want_w, want["m"], want["v"]], strict=True):
        assert value.dtype == dtype
        np.testing.assert_allclose(value, reference, rtol=20 * scale, atol=scale)
    np.testing.assert_array_equal(got[0][:, 0], w0[:, 0])  # zero gradients: m = 0, no move


def test_the_blas_path_runs_on_large_host_float_arrays_only(monkeypatch):
    monkeypatch.setattr(adam_blas, "MIN_SIZE", 4)
    f32 = np.zeros(4, np.float32)
    assert adam_blas.applies_to((f32, f32.copy()))
    assert adam_blas.applies_to((np.zeros(4), np.zeros(4)))
    assert not adam_blas.applies_to((f32[:3], f32[:3]))  # small: the ufunc kernel
    assert not adam_blas.applies_to((f32, np.zeros(4)))  # mixed dtypes: scipy would copy
    assert not adam_blas.applies_to((np.zeros((4, 4), np.float32).T, f32))  # strided
    assert not adam_blas.applies_to((np.zeros(4, np.float16),))
    assert not adam_blas.applies_to((np.zeros(4, np.complex64),))
    unaligned = np.zeros(17, np.uint8)[1:].view(np.float32)
    assert not adam_blas.applies_to((unaligned,))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_non_contiguous_gradient_takes_the_ufunc_path_with_close_values(dtype, small_blocks):
    w0, grads = _problem(dtype, 5, seed=3, shape=(9, 30))
    blas = _train(tf, w0, grads)
    transposed = _train(tf, w0, [g.T.copy() for g in grads], transpose_grad=True)
    tol = {np.float32: 1e-6, np.float64: 1e-15}[dtype]
    for a, b in zip(blas, transposed, strict=True):
        np.testing.assert_allclose(a, b, rtol=10 * tol, atol=tol)


def train_holding_the_buffer(w0, grads):
    """Three Adam steps (``grads``) on ``w0``, a ``py_func`` holding the variable's stored
    buffer across the second: checks that step wrote a new buffer (the held one is
    unchanged) and returns var, m and v after the third."""
    kept = []
    w = tf.Variable(w0, name="w")
    g = tf.placeholder(w0.dtype, w0.shape)
    opt = tf.train.AdamOptimizer(**HYPER)
    train = opt.apply_gradients([(g, w)])
    keep = tf.py_func(lambda a: kept.append(a) or a.dtype.type(0), [w.read_value()], w0.dtype)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train, {g: grads[0]})
        sess.run(keep)  # holds the stored buffer itself
        held = kept[0].copy()
        sess.run(train, {g: grads[1]})
        np.testing.assert_array_equal(kept[0], held)  # the update went to a new buffer
        kept.clear()
        sess.run(train, {g: grads[2]})
        return sess.run([w, opt.get_slot(w, "m"), opt.get_slot(w, "v")])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_held_variable_is_updated_into_a_fresh_buffer_block_by_block(dtype, small_blocks):
    w0, grads = _problem(dtype, 3, seed=4)
    got = train_holding_the_buffer(w0, grads)
    want = _train(tf, w0, grads)  # nobody holds anything: all in place
    for a, b in zip(got, want, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.tf
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_many_steps_stay_close_to_tf1(dtype, monkeypatch):
    """300 steps on a 100x41 variable in blocks of 1024 (and a tail): the rearranged
    formulas keep var, m and v within a few parts in 10^6 (float32) or 10^15 (float64)
    of the largest values of TF1's. Measured: float32 1.1e-6, float64 4.4e-15 (m)."""
    tf1 = pytest.importorskip("tensorflow").compat.v1
    monkeypatch.setattr(adam_blas, "BLOCK", 1024)
    monkeypatch.setattr(adam_blas, "MIN_SIZE", 1024)
    w0, grads = _problem(dtype, 300, seed=1, shape=(100, 41))
    ours = _train(tf, w0, grads, {"learning_rate": 0.001})
    theirs = _train(tf1, w0, grads, {"learning_rate": 0.001})
    bound = {np.float32: 1e-5, np.float64: 5e-14}[dtype]
    for a, b in zip(ours, theirs, strict=True):
        assert a.dtype == b.dtype == dtype
        scale = np.abs(b).max()
        assert np.abs(a - b).max() <= bound * scale


@pytest.mark.tf
@pytest.mark.parametrize("chunk", [None, 64])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_ufunc_path_equals_tf1_bit_for_bit(dtype, chunk, monkeypatch):
    # TF1's order of operations, each rounded as TF1's CPU kernel rounds it: the path a
    # GPU (cupy), small variables and complex or non-contiguous arrays take; on the
    # host, large variables a chunk at a time (made small here: 185 elements in 64s).
    tf1 = pytest.importorskip("tensorflow").compat.v1
    _ufunc_path_only(monkeypatch)
    if chunk is not None:
        monkeypatch.setattr(training_ops, "_ADAM_CHUNK", chunk)
    w0, grads = _problem(dtype, 50, seed=2)
    ours = _train(tf, w0, grads)
    theirs = _train(tf1, w0, grads)
    for a, b in zip(ours, theirs, strict=True):
        if platform.machine().lower() in ("x86_64", "amd64"):
            # TF's x86-64 wheels are built without fused multiply-adds: every op of its
            # Eigen kernel rounds once, as each numpy ufunc call does, on any x86-64 CPU.
            np.testing.assert_array_equal(a, b)
        else:
            # Elsewhere (ARM) the compiler may fuse a multiply and an add of TF's kernel
            # into one rounding: at most one rounding of the largest value apart per step.
            assert np.abs(a - b).max() <= 50 * np.finfo(dtype).eps * np.abs(b).max()
