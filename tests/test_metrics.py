"""``tf.metrics`` and ``confusion_matrix`` against ``tensorflow.compat.v1``: the same
streaming program (local variables initialized, update ops run per batch) gives the same
values after each batch, with the same variable names."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow

pytestmark = pytest.mark.tf

tf1 = pytest.importorskip("tensorflow.compat.v1")

RNG = np.random.default_rng(9)
LABELS = [RNG.integers(0, 3, 8) for _ in range(3)]
PREDICTIONS = [RNG.integers(0, 3, 8) for _ in range(3)]
SCORES = [RNG.random(8).astype(np.float32) for _ in range(3)]
BINARY = [RNG.integers(0, 2, 8) for _ in range(3)]
WEIGHTS = [RNG.random(8).astype(np.float32) for _ in range(3)]
VALUES = [RNG.normal(size=(2, 4)).astype(np.float32) for _ in range(3)]

METRICS = {
    "accuracy": lambda tf, lab, p, s, b, w, v: tf.metrics.accuracy(lab, p),
    "accuracy_weighted": lambda tf, lab, p, s, b, w, v: tf.metrics.accuracy(lab, p, weights=w),
    "mean": lambda tf, lab, p, s, b, w, v: tf.metrics.mean(v),
    "mean_weighted_named": lambda tf, lab, p, s, b, w, v: tf.metrics.mean(
        tf.reshape(v, [-1]), weights=w, name="running"
    ),
    "mse": lambda tf, lab, p, s, b, w, v: tf.metrics.mean_squared_error(s, tf.cast(b, tf.float32)),
    "precision": lambda tf, lab, p, s, b, w, v: tf.metrics.precision(b, s > 0.5),
    "recall_weighted": lambda tf, lab, p, s, b, w, v: tf.metrics.recall(b, s > 0.3, weights=w),
    "auc_roc": lambda tf, lab, p, s, b, w, v: tf.metrics.auc(b, s),
    "auc_pr_20": lambda tf, lab, p, s, b, w, v: tf.metrics.auc(b, s, num_thresholds=20, curve="PR"),
    "mean_iou": lambda tf, lab, p, s, b, w, v: tf.metrics.mean_iou(lab, p, num_classes=4),
}


def stream(tf, metric):
    with tf.Graph().as_default():
        lab = tf.placeholder(tf.int64, [None])
        p = tf.placeholder(tf.int64, [None])
        s = tf.placeholder(tf.float32, [None])
        b = tf.placeholder(tf.int64, [None])
        w = tf.placeholder(tf.float32, [None])
        v = tf.placeholder(tf.float32, [None, 4])
        value, update = metric(tf, lab, p, s, b, w, v)
        names = sorted(x.name for x in tf.local_variables())
        out = []
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            out.append(sess.run(value))
            for i in range(3):
                feed = {
                    lab: LABELS[i],
                    p: PREDICTIONS[i],
                    s: SCORES[i],
                    b: BINARY[i],
                    w: WEIGHTS[i],
                    v: VALUES[i],
                }
                out.append(sess.run(update, feed))
                out.append(sess.run(value))
        return names, out


@pytest.mark.parametrize("name", sorted(METRICS))
def test_metric_streams_like_tf(name):
    (our_names, ours), (their_names, theirs) = (
        stream(dataflow, METRICS[name]),
        stream(tf1, METRICS[name]),
    )
    assert our_names == their_names
    for a, b in zip(ours, theirs, strict=True):  # mean_iou's update_op is its matrix
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_confusion_matrix_matches_tf():
    def build(tf):
        with tf.Graph().as_default():
            outs = [
                tf.confusion_matrix([0, 2, 1, 2], [0, 1, 1, 2]),
                tf.confusion_matrix(
                    [0, 2], [1, 1], num_classes=4, weights=[2.0, 0.5], dtype=tf.float32
                ),
            ]
            with tf.Session() as sess:
                return sess.run(outs)

    for ours, theirs in zip(build(dataflow), build(tf1), strict=True):
        assert ours.dtype == theirs.dtype
        np.testing.assert_array_equal(ours, theirs)


def test_metric_variables_are_local_and_not_trainable():
    tf = dataflow
    value, update = tf.metrics.accuracy([1, 0], [1, 1])
    assert tf.trainable_variables() == [] and tf.global_variables() == []
    assert len(tf.get_collection(tf.GraphKeys.METRIC_VARIABLES)) == 2
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        assert sess.run(update) == pytest.approx(0.5)
        sess.run(tf.local_variables_initializer())  # starting over
        assert sess.run(value) == 0.0
