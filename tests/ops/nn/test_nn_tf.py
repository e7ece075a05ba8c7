"""TF1 parity: the same tf.nn / tf.losses programs, run with ``import dataflow as tf``
and with ``tensorflow.compat.v1``, give the same float32 numbers (within 1e-5), values
and gradients."""

from __future__ import annotations

import numpy as np
import pytest

from dataflow.testing.tf_parity import assert_parity_on_constants

pytestmark = pytest.mark.tf
tf1 = pytest.importorskip("tensorflow.compat.v1")

rng = np.random.default_rng(4)


def _assert_parity(program, *inputs, rtol=1e-5, atol=1e-5):
    assert_parity_on_constants(tf1, program, *inputs, rtol=rtol, atol=atol)


def _f32(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


CONV = [
    ((2, 9, 8, 3), (3, 3, 3, 4), 1, "SAME", 1),
    ((2, 9, 8, 3), (3, 3, 3, 4), 2, "SAME", 1),
    ((2, 9, 8, 3), (3, 2, 3, 4), 2, "VALID", 1),
    ((1, 7, 7, 2), (5, 5, 2, 3), 3, "SAME", 1),
    ((2, 9, 9, 3), (3, 3, 3, 2), 1, "SAME", 2),
    ((1, 6, 6, 4), (1, 1, 4, 5), 1, "VALID", 1),
]


@pytest.mark.parametrize("x_shape,f_shape,stride,padding,dilation", CONV)
def test_conv2d_and_gradients(x_shape, f_shape, stride, padding, dilation):
    def program(tf, x, f):
        if tf is tf1 and dilation > 1:
            # TF's own CPU conv kernels refuse dilations > 1 unless oneDNN is on (which
            # depends on the CPU): its atrous_conv2d, the same convolution computed
            # through space_to_batch, is the reference that runs everywhere.
            assert stride == 1
            y = tf.nn.atrous_conv2d(x, f, rate=dilation, padding=padding)
        else:
            y = tf.nn.conv2d(
                x,
                f,
                strides=[1, stride, stride, 1],
                padding=padding,
                dilations=[1, dilation, dilation, 1],
            )
        loss = tf.reduce_sum(y * y)
        gx, gf = tf.gradients(loss, [x, f])
        return [y, gx, gf]

    _assert_parity(program, _f32(*x_shape), _f32(*f_shape), rtol=1e-5, atol=1e-4)


def test_conv2d_transpose_and_conv1d():
    def program(tf, value, f, x1, f1):
        t = tf.nn.conv2d_transpose(value, f, [2, 9, 8, 3], strides=[1, 2, 2, 1], padding="SAME")
        c1 = tf.nn.conv1d(x1, f1, stride=2, padding="VALID")
        loss = tf.reduce_sum(t * t) + tf.reduce_sum(c1 * c1)
        return [t, c1] + tf.gradients(loss, [value, f, x1, f1])

    _assert_parity(
        program, _f32(2, 5, 4, 4), _f32(3, 3, 3, 4), _f32(2, 11, 3), _f32(3, 3, 2), atol=1e-4
    )


POOL = [(2, 3, "SAME"), (2, 2, "VALID"), (3, 2, "SAME"), (3, 1, "VALID"), (3, 3, "SAME")]


@pytest.mark.parametrize("k,stride,padding", POOL)
def test_pools_and_gradients(k, stride, padding):
    def program(tf, x, w):
        mp = tf.nn.max_pool(x, [1, k, k, 1], [1, stride, stride, 1], padding)
        ap = tf.nn.avg_pool(x, [1, k, k, 1], [1, stride, stride, 1], padding)
        loss = tf.reduce_sum(mp * mp * w) + tf.reduce_sum(ap * ap * w)
        return [mp, ap, tf.gradients(loss, x)[0]]

    x = _f32(2, 7, 8, 3)
    w = {"SAME": 1.0, "VALID": 2.0}[padding]
    _assert_parity(program, x, np.float32(w))


def test_softmax_family():
    def program(tf, logits, labels):
        v2 = tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)
        v1 = tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits)
        ax0 = tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits, axis=0)
        sparse = tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=tf.argmax(labels, 1), logits=logits
        )
        sig = tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)
        sm, lsm = tf.nn.softmax(logits), tf.nn.log_softmax(logits, axis=0)
        loss = (
            tf.reduce_sum(v2 * v2)
            + tf.reduce_sum(v1)
            + tf.reduce_sum(sparse * sparse)
            + tf.reduce_sum(sig)
            + tf.reduce_sum(sm * sm)
            + tf.reduce_sum(lsm * lsm)
            + tf.reduce_sum(ax0)
        )
        return [v2, v1, ax0, sparse, sig, sm, lsm] + tf.gradients(loss, [logits, labels])

    logits = _f32(6, 5, scale=3)
    labels = np.eye(5, dtype=np.float32)[rng.integers(0, 5, 6)] * 0.8 + 0.04
    _assert_parity(program, logits, labels)


def test_cross_entropies_with_huge_logits():
    def program(tf, logits, labels):
        return [
            tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits),
            tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=tf.argmax(labels, 1), logits=logits
            ),
            tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits),
        ]

    logits = np.array([[1e4, 0, -1e4], [-1e4, 1e4, 3], [2e4, 2e4, 0]], np.float32)
    labels = np.eye(3, dtype=np.float32)[[0, 2, 1]]
    _assert_parity(program, logits, labels)


def test_activations_and_helpers():
    def program(tf, x, b):
        outs = [
            tf.nn.relu(x),
            tf.nn.relu6(x),
            tf.nn.elu(x),
            tf.nn.selu(x),
            tf.nn.softplus(x),
            tf.nn.leaky_relu(x),
            tf.nn.leaky_relu(x, alpha=0.3),
            tf.nn.sigmoid(x),
            tf.nn.tanh(x),
            tf.nn.bias_add(x, b),
            tf.nn.l2_loss(x),
            tf.nn.l2_normalize(x, axis=1),
            *tf.nn.moments(x, [0]),
            *tf.nn.moments(x, [0, 1], keep_dims=True),
            tf.nn.softsign(x),
            tf.nn.swish(x),
            tf.nn.crelu(x),
            tf.nn.xw_plus_b(x, tf.transpose(x), b[:1] + x[:, 0]),
            tf.nn.batch_normalization(x, b, b * b + 1, b, -b, 1e-3),
            tf.nn.weighted_cross_entropy_with_logits(
                labels=tf.sigmoid(x), logits=x, pos_weight=1.7
            ),
        ]
        loss = tf.add_n([tf.reduce_sum(o * o) for o in outs])
        return outs + tf.gradients(loss, [x, b])

    _assert_parity(program, _f32(5, 4, scale=4), _f32(4))


@pytest.mark.parametrize("strategy", ["mod", "div"])
def test_embedding_lookup_sharded(strategy):
    def program(tf, a, b, c):
        ids = tf.constant([[0, 9, 4], [7, 7, 2]])
        out = tf.nn.embedding_lookup([a, b, c], ids, partition_strategy=strategy)
        grads = tf.gradients(tf.reduce_sum(out * out), [a, b, c])
        return [out] + [tf.convert_to_tensor(g) for g in grads]

    _assert_parity(program, _f32(4, 3), _f32(3, 3), _f32(3, 3))


@pytest.mark.parametrize(
    "reduction",
    [
        "weighted_sum_by_nonzero_weights",
        "weighted_sum",
        "weighted_mean",
        "weighted_sum_over_batch_size",
        "none",
    ],
)
def test_losses(reduction):
    def program(tf, preds, labels, logits, weights):
        onehot = tf.one_hot([0, 2, 1, 2], 3)
        mse = tf.losses.mean_squared_error(
            labels, preds, weights=weights[:, None], reduction=reduction
        )
        sce = tf.losses.softmax_cross_entropy(
            onehot, logits, weights=weights, label_smoothing=0.1, reduction=reduction
        )
        sparse = tf.losses.sparse_softmax_cross_entropy(
            [0, 2, 1, 2], logits, weights=weights, reduction=reduction
        )
        w = weights[:, None]
        others = [
            tf.losses.absolute_difference(labels, preds, w, reduction=reduction),
            tf.losses.huber_loss(labels, preds, w, delta=0.5, reduction=reduction),
            tf.losses.log_loss(tf.sigmoid(labels), tf.sigmoid(preds), w, reduction=reduction),
            tf.losses.sigmoid_cross_entropy(
                tf.sigmoid(labels), logits, w, label_smoothing=0.1, reduction=reduction
            ),
            tf.losses.hinge_loss(tf.sigmoid(labels), logits, w, reduction=reduction),
            tf.losses.cosine_distance(
                tf.nn.l2_normalize(labels, 1),
                tf.nn.l2_normalize(preds, 1),
                axis=1,
                weights=w,
                reduction=reduction,
            ),
        ]
        loss = tf.add_n([tf.reduce_sum(t) for t in [mse, sce, sparse] + others])
        grads = tf.gradients(loss, [preds, logits])
        if reduction == "none":  # per-element losses of different shapes: no total
            return [mse, sce, sparse] + others + grads
        return [mse, sce, sparse, tf.losses.get_total_loss()] + others + grads

    weights = np.array([1.0, 0.0, 2.0, 0.5], np.float32)
    _assert_parity(program, _f32(4, 3), _f32(4, 3), _f32(4, 3, scale=2), weights)
