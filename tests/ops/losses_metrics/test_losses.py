"""tf.losses: weighted reductions (TF1's formulas written out in numpy), the LOSSES
collection, gradients, and get_total_loss."""

from __future__ import annotations

import autograd.numpy as anp
import numpy as np
import pytest

import dataflow as tf
from dataflow.testing.grad_check import check_op

rng = np.random.default_rng(3)
R = tf.losses.Reduction


def _reduce(per_element, weights, reduction):
    """TF1's compute_weighted_loss, in numpy."""
    w = np.broadcast_to(np.asarray(weights, np.float64), per_element.shape)
    weighted = per_element * w
    if reduction == R.NONE:
        return weighted
    total = weighted.sum()
    if reduction == R.SUM:
        return total
    if reduction == R.MEAN:
        denom = w.sum()
    elif reduction == R.SUM_OVER_BATCH_SIZE:
        denom = per_element.size
    else:
        denom = np.count_nonzero(w)
    return total / denom if denom else 0.0


def _log_softmax(x):
    s = x - x.max(axis=-1, keepdims=True)
    return s - np.log(np.exp(s).sum(axis=-1, keepdims=True))


WEIGHTS = {
    "scalar": 1.0,
    "scalar2.5": 2.5,
    "per_row": np.array([[1.0], [0.0], [2.0], [0.5]]),
    "full": np.array([[1.0, 0, 2], [0, 0, 0], [3, 1, 1], [0.5, 0, 1]]),
    "all_zero": np.zeros((4, 1)),
}


@pytest.mark.parametrize("reduction", R.all()[:5])
@pytest.mark.parametrize("wname", sorted(WEIGHTS))
def test_mean_squared_error(sess, reduction, wname):
    labels = rng.standard_normal((4, 3)).astype(np.float32)
    preds = rng.standard_normal((4, 3)).astype(np.float32)
    weights = WEIGHTS[wname]
    loss = tf.losses.mean_squared_error(labels, preds, weights=weights, reduction=reduction)
    assert loss.dtype == tf.float32
    want = _reduce((preds.astype(np.float64) - labels) ** 2, weights, reduction)
    np.testing.assert_allclose(sess.run(loss), want, rtol=1e-5, atol=1e-7)
    assert tf.get_collection(tf.GraphKeys.LOSSES) == [loss]


def test_default_reduction_is_sum_by_nonzero_weights(sess):
    labels = np.zeros((2, 2), np.float32)
    preds = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    loss = tf.losses.mean_squared_error(labels, preds, weights=[[1.0], [0.0]])
    assert sess.run(loss) == pytest.approx((1 + 4) / 2)


def test_mean_squared_error_gradients():
    labels = rng.standard_normal((4, 3))
    weights = np.array([[1.0], [0.0], [2.0], [0.5]])

    def ref(p, lab):
        return anp.sum((p - lab) ** 2 * weights) / np.count_nonzero(
            np.broadcast_to(weights, (4, 3))
        )

    check_op(
        lambda p, lab: tf.losses.mean_squared_error(lab, p, weights=weights),
        ref,
        [rng.standard_normal((4, 3)), labels],
    )


def test_float64_stays_float64(sess):
    labels = rng.standard_normal((3, 2))
    preds = labels + 1e-9
    loss = tf.losses.mean_squared_error(labels, preds)
    assert loss.dtype == tf.float64
    np.testing.assert_allclose(sess.run(loss), 1e-18, rtol=1e-6)


@pytest.mark.parametrize("smoothing", [0.0, 0.1])
@pytest.mark.parametrize("wname", ["scalar", "per_example", "zero_some"])
def test_softmax_cross_entropy(sess, smoothing, wname):
    logits = rng.standard_normal((4, 5)).astype(np.float32) * 3
    onehot = np.eye(5, dtype=np.float32)[[0, 4, 2, 2]]
    weights = {
        "scalar": 1.0,
        "per_example": np.array([1.0, 2.0, 0.5, 1.0]),
        "zero_some": np.array([0.0, 1.0, 0.0, 3.0]),
    }[wname]
    loss = tf.losses.softmax_cross_entropy(
        onehot, logits, weights=weights, label_smoothing=smoothing
    )
    labels = onehot * (1 - smoothing) + smoothing / 5
    per_example = -(labels * _log_softmax(logits.astype(np.float64))).sum(-1)
    want = _reduce(per_example, weights, R.SUM_BY_NONZERO_WEIGHTS)
    np.testing.assert_allclose(sess.run(loss), want, rtol=1e-5)
    assert loss in tf.losses.get_losses()


def test_softmax_cross_entropy_gradient_and_no_label_gradient(sess):
    logits = tf.constant(rng.standard_normal((3, 4)))
    onehot = tf.constant(np.eye(4)[[1, 0, 3]])
    loss = tf.losses.softmax_cross_entropy(onehot, logits)
    g_logits, g_labels = tf.gradients(loss, [logits, onehot])
    assert g_labels is None
    want = (sess.run(tf.nn.softmax(logits)) - np.eye(4)[[1, 0, 3]]) / 3
    np.testing.assert_allclose(sess.run(g_logits), want, rtol=1e-12)


@pytest.mark.parametrize("labels_shape", ["flat", "column"])
def test_sparse_softmax_cross_entropy(sess, labels_shape):
    logits = rng.standard_normal((4, 3)).astype(np.float32)
    ids = np.array([2, 0, 1, 2], np.int32)
    weights = np.array([1.0, 0.0, 2.0, 1.0], np.float32)
    labels = ids if labels_shape == "flat" else ids[:, None]
    w = weights if labels_shape == "flat" else weights[:, None]
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits, weights=w)
    per_example = -_log_softmax(logits.astype(np.float64))[np.arange(4), ids]
    np.testing.assert_allclose(
        sess.run(loss), _reduce(per_example, weights, R.SUM_BY_NONZERO_WEIGHTS), rtol=1e-5
    )


def test_reduction_none_keeps_shape(sess):
    logits = rng.standard_normal((4, 3)).astype(np.float32)
    loss = tf.losses.sparse_softmax_cross_entropy([0, 1, 2, 0], logits, reduction=R.NONE)
    assert loss.shape.as_list() == [4]
    assert sess.run(loss).shape == (4,)


def test_total_loss_and_collections(sess):
    a = tf.losses.mean_squared_error([1.0, 2.0], [1.0, 4.0])
    b = tf.losses.mean_squared_error([0.0], [3.0], loss_collection=None)
    c = tf.losses.sparse_softmax_cross_entropy([0], [[0.0, 0.0]])
    tf.add_to_collection(tf.GraphKeys.REGULARIZATION_LOSSES, tf.constant(0.5))
    assert tf.losses.get_losses() == [a, c]
    total = tf.losses.get_total_loss()
    no_reg = tf.losses.get_total_loss(add_regularization_losses=False)
    assert sess.run(total) == pytest.approx(2.0 + np.log(2) + 0.5, rel=1e-6)
    assert sess.run(no_reg) == pytest.approx(2.0 + np.log(2), rel=1e-6)
    assert sess.run(tf.losses.get_regularization_loss()) == pytest.approx(0.5)
    assert sess.run(b) == pytest.approx(9.0)


def test_errors():
    with pytest.raises(ValueError, match="No losses"):
        tf.losses.get_total_loss()
    with pytest.raises(ValueError, match="Invalid Reduction"):
        tf.losses.mean_squared_error([1.0], [1.0], reduction="mean")
    with pytest.raises(ValueError, match="incompatible"):
        tf.losses.mean_squared_error([1.0, 2.0], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="broadcast"):
        tf.losses.mean_squared_error(tf.zeros([2, 3]), tf.zeros([2, 3]), weights=tf.ones([3, 3]))
    with pytest.raises(ValueError, match="must not be None"):
        tf.losses.softmax_cross_entropy(None, tf.zeros([2, 2]))


def _sigmoid_xent(lab, lg):
    return np.maximum(lg, 0) - lg * lab + np.log1p(np.exp(-np.abs(lg)))


def _huber(e, delta):
    a = np.abs(e)
    q = np.minimum(a, delta)
    return 0.5 * q**2 + delta * (a - q)


OTHER_LOSSES = {
    "absolute_difference": (
        lambda lab, p, w: tf.losses.absolute_difference(lab, p, w),
        lambda lab, p: np.abs(p - lab),
    ),
    "huber_loss": (
        lambda lab, p, w: tf.losses.huber_loss(lab, p, w, delta=0.7),
        lambda lab, p: _huber(p - lab, 0.7),
    ),
    "log_loss": (
        lambda lab, p, w: tf.losses.log_loss(lab, tf.sigmoid(p), w),
        lambda lab, p: (
            -lab * np.log(1 / (1 + np.exp(-p)) + 1e-7)
            - (1 - lab) * np.log(1 - 1 / (1 + np.exp(-p)) + 1e-7)
        ),
    ),
    "sigmoid_cross_entropy": (
        lambda lab, p, w: tf.losses.sigmoid_cross_entropy(lab, p, w),
        _sigmoid_xent,
    ),
    "sigmoid_cross_entropy_smoothed": (
        lambda lab, p, w: tf.losses.sigmoid_cross_entropy(lab, p, w, label_smoothing=0.2),
        lambda lab, p: _sigmoid_xent(lab * 0.8 + 0.1, p),
    ),
    "hinge_loss": (
        lambda lab, p, w: tf.losses.hinge_loss(lab, p, w),
        lambda lab, p: np.maximum(0, 1 - (2 * lab - 1) * p),
    ),
}


@pytest.mark.parametrize("name", sorted(OTHER_LOSSES))
def test_other_losses(sess, name):
    build, per_element = OTHER_LOSSES[name]
    labels = (rng.random((4, 3)) > 0.5).astype(np.float64)
    preds = rng.standard_normal((4, 3)) * 2
    weights = WEIGHTS["per_row"]
    loss = build(tf.constant(labels), tf.constant(preds), weights)
    want = _reduce(per_element(labels, preds), weights, R.SUM_BY_NONZERO_WEIGHTS)
    np.testing.assert_allclose(sess.run(loss), want, rtol=1e-9)
    assert tf.losses.get_losses() == [loss]


def test_cosine_distance(sess):
    a = rng.standard_normal((4, 3))
    b = rng.standard_normal((4, 3))
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    b /= np.linalg.norm(b, axis=1, keepdims=True)
    loss = tf.losses.cosine_distance(a, b, axis=1)
    np.testing.assert_allclose(sess.run(loss), np.mean(1 - (a * b).sum(1)), rtol=1e-12)
    with pytest.raises(ValueError, match="axis"):
        tf.losses.cosine_distance(a, b)
