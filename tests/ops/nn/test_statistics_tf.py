"""``tf.nn.sufficient_statistics``, ``normalize_moments``, ``weighted_moments``,
``batch_norm_with_global_normalization``, ``compute_average_loss`` and
``scale_regularization_loss`` against ``tensorflow.compat.v1``: values, gradients,
static shapes and dtypes, build-time errors; weighted moments also against numpy."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow
from dataflow.testing.tf_parity import assert_parity_on_constants

pytestmark = [
    pytest.mark.tf,
    pytest.mark.filterwarnings("ignore::UserWarning"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]
tf1 = pytest.importorskip("tensorflow.compat.v1")

rng = np.random.default_rng(5)


def _f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("keep", [False, True])
def test_sufficient_statistics_and_normalize_moments(keep):
    def program(tf, x, s):
        c, m, v, _ = tf.nn.sufficient_statistics(x, [0, 2], keep_dims=keep)
        c2, m2, v2, sh = tf.nn.sufficient_statistics(x, [1], shift=s, keepdims=True)
        mean, var = tf.nn.normalize_moments(c, m, v, None)
        mean2, var2 = tf.nn.normalize_moments(c2, m2, v2, sh)
        outs = [c, m, v, c2, m2, v2, mean, var, mean2, var2]
        loss = tf.reduce_sum(var * mean) + tf.reduce_sum(var2 * mean2)
        return outs + tf.gradients(loss, [x, s])

    assert_parity_on_constants(tf1, program, _f32(3, 4, 5), _f32(3, 1, 5), rtol=1e-5, atol=1e-5)


def test_sufficient_statistics_with_unknown_dims_counts_at_run_time():
    x = _f32(3, 4, 5)
    got = {}
    for tf in (tf1, dataflow):
        with tf.Graph().as_default():
            p = tf.placeholder(tf.float32, [None, 4, None])
            c, m, v, s = tf.nn.sufficient_statistics(p, [0, 1])
            assert s is None
            shapes = [t.shape.as_list() for t in (c, m, v)]
            with tf.Session() as sess:
                got[tf is tf1] = shapes, sess.run([c, m, v], {p: x})
    assert got[True][0] == got[False][0]
    for ours, theirs in zip(got[False][1], got[True][1]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5)


@pytest.mark.parametrize("keep", [False, True])
def test_weighted_moments(keep):
    def program(tf, x, w):
        mean, var = tf.nn.weighted_moments(x, [0, 1], w, keep_dims=keep)
        mean2, var2 = tf.nn.weighted_moments(x, [2], w[:, :1, :] * 0 + 2.0, keepdims=keep)
        loss = tf.reduce_sum(mean * var) + tf.reduce_sum(mean2 + var2)
        return [mean, var, mean2, var2, *tf.gradients(loss, [x, w])]

    x, w = _f32(3, 4, 2), np.abs(_f32(3, 4, 1)) + 0.1
    assert_parity_on_constants(tf1, program, x, w, rtol=1e-5, atol=1e-5)
    # and against numpy's weighted average
    with dataflow.Graph().as_default():
        mean, var = dataflow.nn.weighted_moments(x.astype(np.float64), [0, 1], w.astype(np.float64))
        with dataflow.Session() as sess:
            got_mean, got_var = sess.run([mean, var])
    wb = np.broadcast_to(w, x.shape).reshape(-1, 2)
    want_mean = np.average(x.reshape(-1, 2), axis=0, weights=wb)
    want_var = np.average((x.reshape(-1, 2) - want_mean) ** 2, axis=0, weights=wb)
    np.testing.assert_allclose(got_mean, want_mean, rtol=1e-6)
    np.testing.assert_allclose(got_var, want_var, rtol=1e-6)


def test_weighted_moments_float16_and_integer_weights():
    def program(tf, x):
        mean, var = tf.nn.weighted_moments(x, [0], tf.constant([[1], [2], [3]]))
        return [mean, var]

    assert_parity_on_constants(tf1, program, _f32(3, 4).astype(np.float16), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("scale", [False, True])
def test_batch_norm_with_global_normalization(scale):
    def program(tf, x, m, v, b, g):
        y = tf.nn.batch_norm_with_global_normalization(x, m, v, b, g, 1e-3, scale)
        y2 = tf.nn.batch_norm_with_global_normalization(
            input=x, mean=m, variance=v, beta=b, gamma=g, variance_epsilon=0.1,
            scale_after_normalization=scale,
        )  # fmt: skip
        loss = tf.reduce_sum(y * y) + tf.reduce_sum(y2)
        grads = tf.gradients(loss, [x, m, v, b, g])
        assert (grads[-1] is None) == (not scale)  # gamma unused without scaling
        return [y, y2, *(d for d in grads if d is not None)]

    v = np.abs(_f32(3)) + 0.5
    assert_parity_on_constants(
        tf1, program, _f32(2, 4, 4, 3), _f32(3), v, _f32(3), _f32(3), rtol=1e-5, atol=1e-4
    )


def test_compute_average_loss_and_scale_regularization_loss():
    def program(tf, loss, w, reg):
        p = tf.placeholder_with_default(loss, [None, 3])
        outs = [
            tf.nn.compute_average_loss(loss),
            tf.nn.compute_average_loss(p),
            tf.nn.compute_average_loss(loss, sample_weight=w),
            tf.nn.compute_average_loss(loss, sample_weight=w[:, :1], global_batch_size=8),
            tf.nn.compute_average_loss(loss, sample_weight=2.0, global_batch_size=0),
            tf.nn.compute_average_loss(tf.cast(loss, tf.float64), global_batch_size=tf.constant(3)),
            tf.nn.scale_regularization_loss(reg),
            tf.nn.scale_regularization_loss(tf.reduce_sum(reg)),
        ]
        return outs + tf.gradients(tf.add_n(outs[:5] + outs[6:]), [loss, w, reg])

    assert_parity_on_constants(tf1, program, _f32(4, 3), _f32(4, 3), _f32(5), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "build,error",
    [
        (lambda tf: tf.nn.compute_average_loss(tf.constant(1.0)), ValueError),
        (lambda tf: tf.nn.compute_average_loss(tf.zeros([3]), global_batch_size=2.0), TypeError),
        (
            lambda tf: tf.nn.sufficient_statistics(
                tf.zeros([2]), [0], keep_dims=True, keepdims=True
            ),
            ValueError,
        ),
        (
            lambda tf: tf.nn.weighted_moments(
                tf.zeros([2]), [0], 1.0, keep_dims=True, keepdims=False
            ),
            ValueError,
        ),
    ],
)
def test_build_time_errors_match_tf(build, error):
    with tf1.Graph().as_default(), pytest.raises(error):
        build(tf1)
    with dataflow.Graph().as_default(), pytest.raises(error):
        build(dataflow)


def test_negative_global_batch_size():
    for tf in (tf1, dataflow):
        with tf.Graph().as_default(), pytest.raises(tf.errors.InvalidArgumentError):
            loss = tf.nn.compute_average_loss(tf.zeros([3]), global_batch_size=-1)
            with tf.Session() as sess:
                sess.run(loss)
