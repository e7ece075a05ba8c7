"""Convolutions keep TF's exact zeros (issue 28, defect 3): an output whose every product
is zero (a window of blank pixels, a filter tap no nonzero gradient meets) is exactly 0,
on the Fourier route as on im2col, in the fused convolution + bias (+ ReLU) kernels, and
in both gradients; and a 2-layer MNIST-like CNN on images with blank borders gets TF1's
gradients (where ReLU and max-pool route them depends on those zeros)."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow as tf
from dataflow.ops.nn.conv import fourier as conv_fourier
from dataflow.ops.nn.conv import geometry as conv_geometry
from dataflow.testing.tf_parity import run_in_fresh_graph

pytestmark = pytest.mark.tf


def _tf1():
    tf1 = pytest.importorskip("tensorflow").compat.v1
    tf1.disable_eager_execution()
    return tf1


def _fourier_route(x_shape, f_shape) -> bool:
    attrs = {
        "strides": [1, 1, 1, 1],
        "padding": "SAME",
        "explicit_paddings": [],
        "data_format": "NHWC",
        "dilations": [1, 1, 1, 1],
    }
    g = conv_geometry.geometry_cache(conv_geometry.params(attrs))(x_shape, *f_shape[:2])
    return conv_fourier.fourier_pays(g, *f_shape[2:])


def _both(build):
    return run_in_fresh_graph(tf, build), run_in_fresh_graph(_tf1(), build)


def test_issue_repro_blank_rows_give_exact_zeros():
    """The issue's reproduction: rows 0-6 of the input are zero, so SAME outputs in rows
    0-4 see only zeros (a 5x5 window reaches two rows down): TF gives 0.0 there."""
    rng = np.random.RandomState(0)
    x = rng.rand(8, 14, 14, 16).astype("f4")
    x[:, :7] = 0
    w = rng.randn(5, 5, 16, 32).astype("f4") * 0.05
    assert _fourier_route(x.shape, w.shape)

    def build(tf):
        return [tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME")], None

    (ours,), (theirs,) = _both(build)
    assert abs(theirs[:, :5]).max() == 0.0
    assert abs(ours[:, :5]).max() == 0.0
    # Elsewhere: float32 sums of 400 products of magnitude <= 0.2, both routes rounded.
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("relu", [False, True], ids=["bias", "bias_relu"])
@pytest.mark.parametrize("channels", [1, 16], ids=["im2col", "fourier"])
def test_fused_conv_bias_keeps_zeros(relu, channels):
    """``relu(conv2d(x, f) + b)`` runs as one fused kernel (``Conv2DBiasAdd(Relu)``); over
    blank windows it is ``b`` (``relu(b)``) exactly, as ``0 + b`` is in TF."""
    rng = np.random.default_rng(1)
    x = rng.random((4, 14, 14, channels), dtype=np.float32)
    x[:, 9:] = 0
    f = (rng.standard_normal((5, 5, channels, 32)) * 0.05).astype(np.float32)
    b = rng.standard_normal(32).astype(np.float32)
    assert _fourier_route(x.shape, f.shape) == (channels > 1)

    def build(tf):
        inp = tf.placeholder(tf.float32, [None, 14, 14, channels])
        y = tf.nn.bias_add(tf.nn.conv2d(inp, f, [1, 1, 1, 1], "SAME"), b)
        return [tf.nn.relu(y) if relu else y], {inp: x}

    with tf.Graph().as_default():
        (y,), feed = build(tf)
        with tf.Session() as sess:
            types = sess.compiled_plan(y, feed).call_types
    assert ("Conv2DBiasAddRelu" if relu else "Conv2DBiasAdd") in types
    (ours,), (theirs,) = _both(build)
    blank = np.broadcast_to(np.maximum(b, 0) if relu else b, ours[:, 12:].shape)
    np.testing.assert_array_equal(theirs[:, 12:], blank)
    np.testing.assert_array_equal(ours[:, 12:], blank)
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-5)


def test_gradients_keep_zeros():
    """Both gradients on the Fourier route: the input gradient is 0 where no nonzero
    ``dy`` reaches (rows 0-4 when ``dy`` starts at row 7), the filter gradient is 0 on the
    taps where no nonzero input meets a nonzero ``dy`` (``x`` in rows 0-3, ``dy`` from row
    4: SAME tap row ``i`` pairs ``dy`` row ``r`` with input row ``r + i - 2``, so rows
    ``i >= 2`` meet only zeros) and on a dead output channel."""
    rng = np.random.default_rng(2)
    x = rng.random((4, 14, 14, 16), dtype=np.float32)
    x[:, 4:] = 0
    f = (rng.standard_normal((5, 5, 16, 32)) * 0.05).astype(np.float32)
    dy = rng.standard_normal((4, 14, 14, 32)).astype(np.float32)
    dy[:, :4] = 0
    dy[..., 5] = 0
    dy_late = dy.copy()
    dy_late[:, :7] = 0
    assert _fourier_route(x.shape, f.shape)

    def build(tf):
        a, w = tf.constant(x), tf.constant(f)
        y = tf.nn.conv2d(a, w, [1, 1, 1, 1], "SAME")
        (dx,) = tf.gradients(y, [a], grad_ys=dy_late)
        return [dx, *tf.gradients(y, [a, w], grad_ys=dy)], None

    (dx_late, dx, df), (dx_late_tf, dx_tf, df_tf) = _both(build)
    assert abs(dx_late_tf[:, :5]).max() == 0.0 and abs(dx_late[:, :5]).max() == 0.0
    assert abs(df_tf[2:]).max() == 0.0 and abs(df[2:]).max() == 0.0
    assert abs(df_tf[..., 5]).max() == 0.0 and abs(df[..., 5]).max() == 0.0
    for ours, theirs in [(dx_late, dx_late_tf), (dx, dx_tf), (df, df_tf)]:
        np.testing.assert_array_equal(ours == 0, theirs == 0)
        # Sums of up to 4*14*14 = 784 float32 products of magnitude <= 4.
        np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=2e-5 * abs(theirs).max())


def _mnist_like(rng, n):
    """Digits-like images: strokes (half the pixels 0) in a 20x8 box, a "1" drawn in the
    middle of a blank 28x28 image, so both convolutions see windows of zeros at the sides."""
    images = np.zeros((n, 28, 28, 1), np.float32)
    box = rng.random((n, 20, 8, 1), dtype=np.float32)
    images[:, 4:24, 10:18] = np.where(box > 0.5, box, 0)
    return images, rng.integers(0, 10, n)


def _cnn_step(tf, images, labels, w1, w2, w3):
    """The TF1 tutorial's CNN with the given weights: one step's gradients and pooled
    second block, then the weights after the step."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 28, 28, 1])
        y = tf.placeholder(tf.int64, [None])
        k1, b1 = tf.Variable(w1), tf.Variable(tf.zeros([32]))
        k2, b2 = tf.Variable(w2), tf.Variable(tf.zeros([64]))
        k3, b3 = tf.Variable(w3), tf.Variable(tf.zeros([10]))
        h = tf.nn.relu(tf.nn.conv2d(x, k1, strides=[1, 1, 1, 1], padding="SAME") + b1)
        h = tf.nn.max_pool(h, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")
        h = tf.nn.relu(tf.nn.conv2d(h, k2, strides=[1, 1, 1, 1], padding="SAME") + b2)
        h = tf.nn.max_pool(h, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")
        logits = tf.matmul(tf.reshape(h, [-1, 7 * 7 * 64]), k3) + b3
        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits)
        )
        opt = tf.train.AdamOptimizer(1e-3)
        grads_and_vars = opt.compute_gradients(loss)
        train = opt.apply_gradients(grads_and_vars)
        feed = {x: images, y: labels}
        with tf.Session(graph=graph) as sess:
            sess.run(tf.global_variables_initializer())
            before = sess.run([g for g, _ in grads_and_vars] + [h], feed)
            sess.run(train, feed)
            return before, sess.run([k1, b1, k2, b2, k3, b3])


def test_two_layer_cnn_gradients_match_tf1():
    """The TF1 tutorial's CNN (two conv 5x5 + ReLU + max-pool blocks, zero biases as
    ``tf.layers`` makes them, a dense layer, softmax cross-entropy, Adam) with identical
    weights: one step's gradients and updated weights against TF1. Blank borders give
    all-zero windows in both convolutions; noise in place of those zeros sent the max
    pool's gradient elsewhere and moved the second bias's gradient by 31%."""
    rng = np.random.default_rng(3)
    images, labels = _mnist_like(rng, 16)
    w1 = (rng.standard_normal((5, 5, 1, 32)) * 0.1).astype(np.float32)
    w2 = (rng.standard_normal((5, 5, 32, 64)) * 0.1).astype(np.float32)
    w3 = (rng.standard_normal((7 * 7 * 64, 10)) * 0.05).astype(np.float32)
    assert _fourier_route((16, 14, 14, 32), w2.shape)
    ours, ours_after = _cnn_step(tf, images, labels, w1, w2, w3)
    theirs, theirs_after = _cnn_step(_tf1(), images, labels, w1, w2, w3)
    # The pooled second block: zero exactly where TF's is (blank windows, dead units).
    np.testing.assert_array_equal(ours[-1] == 0, theirs[-1] == 0)
    # Gradients: float32 sums over the batch through two convolutions on different
    # routes (Fourier, TF's direct): measured 2e-7..1.2e-6 of each gradient's largest
    # entry. A misrouted pool moves whole entries (b2 off by 0.15 of 0.16 before).
    names = ["w1", "b1", "w2", "b2", "w3", "b3"]
    for name, a, b in zip(names, ours[:-1], theirs[:-1], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-5 * abs(b).max(), err_msg=name)
    # Adam's first step moves each weight by lr * g / (|g| + 1e-8): rounding in a gradient
    # near 1e-8 moves it by a part of lr, as do the few filter-gradient entries that are
    # exactly 0 in TF and 1e-12..4e-10 here (a zero nn.conv.fourier does not detect: one
    # input channel and one output channel never nonzero together at one tap). Measured
    # 1.3e-6 on w2 and 9.5e-6 on w3 (lr = 1e-3).
    for name, a, b in zip(names, ours_after, theirs_after, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=2e-5, err_msg=name)
