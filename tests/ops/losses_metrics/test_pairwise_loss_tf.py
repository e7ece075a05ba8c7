"""``tf.losses.mean_pairwise_squared_error`` against ``tensorflow.compat.v1``: values
with scalar, per-sample and zero weights, ranks 2 and 3, its name, its collection, and its
gradient (TF's, and finite differences)."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow as tf

pytestmark = pytest.mark.tf
tf1 = pytest.importorskip("tensorflow").compat.v1
tf1.disable_eager_execution()

RNG = np.random.default_rng(3)


def _run(lib, labels, predictions, weights):
    graph = lib.Graph()
    with graph.as_default():
        p = lib.constant(predictions)
        loss = lib.losses.mean_pairwise_squared_error(lib.constant(labels), p, weights)
        (grad,) = lib.gradients(loss, [p])
        in_collection = loss in lib.get_collection(lib.GraphKeys.LOSSES)
        with lib.Session(graph=graph) as sess:
            value, g = sess.run([loss, grad])
    return loss.name, value, g, in_collection


@pytest.mark.parametrize("shape", [(4, 3), (3, 2, 5), (2, 1)])
@pytest.mark.parametrize(
    "weights", ["scalar", "per_sample", "some_zero", "all_zero"], ids=lambda w: w
)
def test_values_and_gradients_match_tf1(shape, weights) -> None:
    labels = RNG.normal(size=shape).astype(np.float32)
    predictions = RNG.normal(size=shape).astype(np.float32)
    per_sample = (shape[0],) + (1,) * (len(shape) - 1)  # broadcastable, as TF requires
    w = {
        "scalar": 2.5,
        "per_sample": RNG.uniform(0.5, 2, size=per_sample).astype(np.float32),
        "some_zero": np.array([0.0] + [1.5] * (shape[0] - 1), np.float32).reshape(per_sample),
        "all_zero": 0.0,
    }[weights]
    ours = _run(tf, labels, predictions, w)
    theirs = _run(tf1, labels, predictions, w)
    assert ours[0] == theirs[0] == "mean_pairwise_squared_error/value_2:0"
    assert ours[3] and theirs[3]
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-5, atol=1e-6)


def test_value_is_the_mean_over_pairs_of_squared_difference_of_differences() -> None:
    labels = RNG.normal(size=(3, 4))
    predictions = RNG.normal(size=(3, 4))
    d = predictions - labels
    want = sum(
        np.mean([(d[i, j] - d[i, k]) ** 2 for j in range(4) for k in range(4) if j < k])
        for i in range(3)
    )
    with tf.Graph().as_default(), tf.Session() as sess:
        got = sess.run(tf.losses.mean_pairwise_squared_error(labels, predictions))
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_gradient_matches_finite_differences_in_float64() -> None:
    labels = RNG.normal(size=(2, 3))
    x0 = RNG.normal(size=(2, 3))
    with tf.Graph().as_default(), tf.Session() as sess:
        p = tf.placeholder(tf.float64, [2, 3])
        loss = tf.losses.mean_pairwise_squared_error(labels, p, weights=[[1.0], [3.0]])
        (grad,) = tf.gradients(loss, [p])
        analytic = sess.run(grad, {p: x0})
        numeric = np.zeros_like(x0)
        for index in np.ndindex(*x0.shape):
            step = np.zeros_like(x0)
            step[index] = 1e-6
            up, down = sess.run(loss, {p: x0 + step}), sess.run(loss, {p: x0 - step})
            numeric[index] = (up - down) / 2e-6
    np.testing.assert_allclose(analytic, numeric, rtol=1e-6, atol=1e-8)


def test_incompatible_shapes_and_weights_are_refused_at_build_time() -> None:
    with tf.Graph().as_default(), pytest.raises(ValueError, match="incompatible"):
        tf.losses.mean_pairwise_squared_error(np.zeros((2, 3)), np.zeros((2, 4)))
    for lib in (tf, tf1):  # one weight per sample must be [batch, 1], as in TF1
        with lib.Graph().as_default(), pytest.raises(ValueError, match="broadcast"):
            lib.losses.mean_pairwise_squared_error(np.zeros((2, 3)), np.zeros((2, 3)), [1.0, 2.0])
