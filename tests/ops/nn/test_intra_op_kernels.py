"""Kernels split over a step's intra-op threads (``_util/intra_op``) give the values of
the same step on one thread: matmuls by rows, columns and batch, convolutions (im2col
and Fourier routes, forward and both gradients), pools and their ReLU gradients, the
LSTM sequence. A split computes each output element as the whole does, except sums
over the batch (a filter gradient), which add the threads' partial sums: compared
within float32 rounding of the largest term."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow as tf
from dataflow.ops import parallel_products


def _run(build, feeds_of, threads: int) -> list[np.ndarray]:
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(7)
        placeholders, fetches = build()
        init = tf.global_variables_initializer()
    config = tf.ConfigProto(intra_op_parallelism_threads=threads)
    with tf.Session(graph=graph, config=config) as sess:
        sess.run(init)
        return sess.run(fetches, dict(zip(placeholders, feeds_of(), strict=True)))


def _same(build, feeds_of, rtol: float = 2e-6) -> None:
    one = _run(build, feeds_of, 1)
    three = _run(build, feeds_of, 3)
    for a, b in zip(one, three, strict=True):
        scale = float(np.max(np.abs(a))) or 1.0
        np.testing.assert_allclose(b, a, rtol=rtol, atol=rtol * scale * 8)


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


@pytest.mark.parametrize(
    "m, k, n, ta, tb",
    [
        (96, 700, 640, False, False),  # more columns: split by columns
        (640, 700, 96, False, False),  # more rows: split by rows
        (700, 96, 640, True, False),  # transposed views
        (640, 700, 96, False, True),
    ],
)
def test_matmul_split_by_rows_or_columns(m, k, n, ta, tb):
    assert m * k * n >= parallel_products.SPLIT_FROM
    a = _rng(1).standard_normal((k, m) if ta else (m, k)).astype(np.float32)
    b = _rng(2).standard_normal((n, k) if tb else (k, n)).astype(np.float32)

    def build():
        x = tf.placeholder(tf.float32, a.shape)
        y = tf.placeholder(tf.float32, b.shape)
        product = tf.matmul(x, y, transpose_a=ta, transpose_b=tb)
        return [x, y], [product, *tf.gradients(tf.reduce_sum(product**2), [x, y])]

    _same(build, lambda: [a, b], rtol=2e-6)


@pytest.mark.parametrize(
    "a_shape, b_shape",
    [
        ((8, 128, 256), (8, 256, 160)),
        ((16, 128, 256), (256, 160)),  # one weight for the whole batch (broadcast)
        ((1, 128, 256), (16, 256, 160)),  # a broadcast first operand
        ((4, 4, 128, 256), (4, 1, 256, 160)),  # two batch dimensions, one broadcast
    ],
)
def test_batch_matmul_split_over_the_batch(a_shape, b_shape):
    a = _rng(3).standard_normal(a_shape).astype(np.float32)
    b = _rng(4).standard_normal(b_shape).astype(np.float32)

    def build():
        x = tf.placeholder(tf.float32, a.shape)
        y = tf.placeholder(tf.float32, b.shape)
        product = tf.matmul(x, y)
        return [x, y], [product, *tf.gradients(tf.reduce_sum(product**2), [x, y])]

    _same(build, lambda: [a, b])


def _cnn(channels: int):
    """A conv layer with bias and ReLU, a 2x2 max pool, and a loss: the forward pass
    and every gradient (the first conv of ``channels`` input channels)."""
    images = _rng(5).random((64, 28, 28, channels), dtype=np.float32)

    def build():
        x = tf.placeholder(tf.float32, images.shape)
        h = tf.layers.conv2d(x, 32, 5, padding="same", activation=tf.nn.relu)
        pooled = tf.layers.max_pooling2d(h, 2, 2)
        h2 = tf.layers.conv2d(pooled, 64, 5, padding="same", activation=tf.nn.relu)
        pooled2 = tf.layers.max_pooling2d(h2, 2, 2)
        loss = tf.reduce_sum(pooled2**2)
        weights = tf.trainable_variables()
        return [x], [pooled, pooled2, *tf.gradients(loss, [x, *weights])]

    return build, lambda: [images]


@pytest.mark.parametrize("channels", [1, 3])
def test_a_cnn_forward_and_backward(channels):
    # (channels 1: the tap-column route and the pixel-split filter gradient; the second
    # layer, 32 -> 64 channels, takes the Fourier route split by image)
    build, feeds = _cnn(channels)
    _same(build, feeds, rtol=1e-5)


def test_the_lstm_sequence():
    inputs = _rng(6).standard_normal((12, 64, 300)).astype(np.float32)

    def build():
        x = tf.placeholder(tf.float32, inputs.shape)
        cell = tf.nn.rnn_cell.LSTMCell(256)
        outputs, _ = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32, time_major=True)
        loss = tf.reduce_sum(outputs**2)
        return [x], [outputs, *tf.gradients(loss, [x, *tf.trainable_variables()])]

    _same(build, lambda: [inputs], rtol=1e-5)


@pytest.mark.parametrize(
    "equation, shapes",
    [
        ("btc,cd->btd", [(16, 64, 300), (300, 256)]),  # a dense layer on a sequence
        ("abc,cbd->ad", [(40, 30, 50), (50, 30, 600)]),  # two contracted labels
        ("ij,kj->ki", [(400, 300), (500, 300)]),  # output transposed
        ("bij,bjk->bik", [(8, 128, 256), (8, 256, 160)]),  # BatchMatMul as an einsum
        ("bhqd,bhkd->bhqk", [(8, 4, 128, 64), (8, 4, 128, 64)]),  # attention scores
        ("bhqk,bkhd->bqhd", [(8, 4, 128, 128), (8, 128, 4, 64)]),  # scores times values
    ],
)
def test_einsum_as_one_product_or_a_batch_of_them(equation, shapes):
    inputs, output = equation.split("->")
    plan = parallel_products.contraction_plan(inputs.split(","), output)
    assert plan is not None
    first, second = inputs.split(",")
    assert bool(plan[0]) == (output[0] in first and output[0] in second)  # batch labels
    values = [_rng(8 + i).standard_normal(s).astype(np.float32) for i, s in enumerate(shapes)]

    def build():
        xs = [tf.placeholder(tf.float32, s) for s in shapes]
        out = tf.einsum(equation, *xs)
        return xs, [out, *tf.gradients(tf.reduce_sum(out**2), xs)]

    _same(build, lambda: values)
    got = _run(build, lambda: values, 3)[0]
    np.testing.assert_allclose(got, np.einsum(equation, *values), rtol=2e-5, atol=2e-3)


def test_strided_convolutions_without_an_epilogue():
    """A stride-2 convolution with no bias (the im2col product into a reused buffer,
    unfused) and its input gradient (a product per filter tap), 2-D and 3-D."""
    images = _rng(12).standard_normal((8, 64, 64, 64)).astype(np.float32)
    volumes = _rng(13).standard_normal((2, 16, 16, 16, 16)).astype(np.float32)

    def build():
        x = tf.placeholder(tf.float32, images.shape)
        v = tf.placeholder(tf.float32, volumes.shape)
        f2 = tf.Variable(tf.random_normal([3, 3, 64, 128], stddev=0.1))
        f3 = tf.Variable(tf.random_normal([3, 3, 3, 16, 32], stddev=0.1))
        y2 = tf.nn.conv2d(x, f2, strides=[1, 2, 2, 1], padding="SAME")
        y3 = tf.nn.conv3d(v, f3, strides=[1, 1, 1, 1, 1], padding="SAME")
        loss = tf.reduce_sum(y2**2) + tf.reduce_sum(y3**2)
        return [x, v], [y2, y3, *tf.gradients(loss, [x, v, f2, f3])]

    _same(build, lambda: [images, volumes], rtol=1e-5)


def test_batched_matrix_functions_split_by_matrix():
    """Inverse, solve, Cholesky, determinants, eigen, singular value and QR
    decompositions of a batch of 64 matrices (and gradients): each matrix's result is
    the whole batch's."""
    rng = _rng(14)
    a = rng.standard_normal((64, 96, 96))
    spd = a @ np.swapaxes(a, -1, -2) + 96 * np.eye(96)
    rhs = rng.standard_normal((64, 96, 8))

    def build():
        x = tf.placeholder(tf.float64, spd.shape)
        b = tf.placeholder(tf.float64, rhs.shape)
        e, v = tf.linalg.eigh(x)
        outs = [tf.linalg.inv(x), tf.linalg.solve(x, b), tf.linalg.cholesky(x)]
        outs += [tf.linalg.det(x / 96.0), e, tf.abs(v)]  # (an eigenvector's sign is free)
        outs += [tf.linalg.svd(x, compute_uv=False), tf.linalg.slogdet(x)[1]]
        outs += [tf.abs(q) for q in tf.linalg.qr(x)]  # (signs as LAPACK's choice)
        loss = sum(tf.reduce_sum(o) for o in outs[:5])
        return [x, b], [*outs, *tf.gradients(loss, [x, b])]

    _same(build, lambda: [spd, rhs], rtol=1e-10)


def test_dense_on_a_sequence():
    inputs = _rng(11).standard_normal((32, 50, 400)).astype(np.float32)

    def build():
        x = tf.placeholder(tf.float32, inputs.shape)
        y = tf.layers.dense(x, 512, activation=tf.nn.relu)
        return [x], [y, *tf.gradients(tf.reduce_sum(y**2), [x, *tf.trainable_variables()])]

    _same(build, lambda: [inputs], rtol=1e-5)


@pytest.mark.parametrize(
    "inputs, output",
    [
        (["ab", "bc"], "c"),  # a label summed away from one operand alone
        (["ii", "ij"], "j"),  # a label twice in one operand
        (["a...c", "cd"], "a...d"),  # an ellipsis
        (["ab", "bc", "cd"], "ad"),  # three operands
    ],
)
def test_einsums_that_are_not_products_keep_numpys_route(inputs, output):
    assert parallel_products.contraction_plan(inputs, output) is None


def test_a_batch_of_matrices_fewer_runs_than_threads():
    """Five matrices on four threads are three runs of two (the grain rounds up): every
    run's result is joined, none missing."""
    rng = _rng(15)
    a = rng.standard_normal((5, 400, 400))
    spd = a @ np.swapaxes(a, -1, -2) + 400 * np.eye(400)

    def build():
        x = tf.placeholder(tf.float64, spd.shape)
        return [x], [tf.linalg.inv(x), tf.linalg.eigh(x)[0]]

    got = _run(build, lambda: [spd], 4)
    np.testing.assert_allclose(got[0], np.linalg.inv(spd), rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(got[1], np.linalg.eigvalsh(spd), rtol=1e-10)


def test_a_linear_models_memory_bound_products_split_and_match_float64(intra_op_splits):
    """``X @ beta`` and its gradient ``X.T @ r`` over a 20 MB ``X`` have few
    multiply-adds but stream ``X`` from memory: split (by rows, and over the rows of X
    summed in order) on two threads, each within float32 rounding of a float64
    reference (the gradient's bound: its terms' absolute sum times the float32 epsilon
    times the terms one thread sums)."""
    from dataflow._util import intra_op

    rows, cols = 50_000, 100
    assert rows * cols * 4 >= intra_op.STREAMED_FROM
    assert rows * cols < parallel_products.SPLIT_FROM
    x_value = _rng(16).standard_normal((rows, cols)).astype(np.float32)
    beta_value = _rng(17).standard_normal((cols, 1)).astype(np.float32)
    target = _rng(18).standard_normal((rows, 1)).astype(np.float32)

    def build():
        x = tf.placeholder(tf.float32, x_value.shape)
        beta = tf.placeholder(tf.float32, beta_value.shape)
        residual = tf.matmul(x, beta) - target
        return [x, beta], [residual, tf.matmul(x, residual, transpose_a=True)]

    counts = intra_op_splits
    residual, grad = _run(build, lambda: [x_value, beta_value], 2)
    assert rows in counts  # both products asked to split over X's rows
    assert counts.count(rows) == 2
    x64 = x_value.astype(np.float64)
    want_residual = x64 @ beta_value - target
    eps = np.finfo(np.float32).eps
    scale = np.abs(x64) @ np.abs(beta_value.astype(np.float64)) + np.abs(target)
    assert np.all(np.abs(residual - want_residual) <= 4 * cols * eps * scale)
    r64 = residual.astype(np.float64)
    want_grad = x64.T @ r64
    bound = (rows // 2 + 2) * eps * (np.abs(x64).T @ np.abs(r64))
    assert np.all(np.abs(grad - want_grad) <= bound)


def test_small_memory_bound_products_stay_whole(intra_op_splits):
    x_value = _rng(19).standard_normal((10_000, 100)).astype(np.float32)  # 4 MB

    def build():
        x = tf.placeholder(tf.float32, x_value.shape)
        return [x], [tf.matmul(x, tf.ones([100, 1]))]

    counts = intra_op_splits
    (got,) = _run(build, lambda: [x_value], 2)
    assert counts == []
    np.testing.assert_allclose(got, x_value.sum(1, keepdims=True), rtol=1e-4, atol=1e-4)
