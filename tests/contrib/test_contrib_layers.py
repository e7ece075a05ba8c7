"""``tf.contrib.layers`` against TF 1.15's semantics.

TF 2's ``tensorflow.compat.v1`` has no ``contrib``, so each contrib program is compared
with the core TF1 program TF 1.15's contrib source builds for it: the same variable
names (``fully_connected/weights``, ``Conv/biases``, ``BatchNorm/moving_mean``, ...), and,
from TF's initial values loaded by name, the same outputs, the same moving statistics
after the update ops, and the same variables after one gradient step.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import dataflow

pytestmark = [
    pytest.mark.tf,
    pytest.mark.filterwarnings("ignore:.*is deprecated:UserWarning"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]

tf1 = pytest.importorskip("tensorflow").compat.v1

RNG = np.random.default_rng(28)
X = RNG.normal(size=(6, 5)).astype(np.float32)
IMAGES = RNG.normal(size=(4, 7, 7, 3)).astype(np.float32)
SEQ = RNG.normal(size=(4, 3, 5)).astype(np.float32)


def run(tf, build, initial=None, updates=True):
    """Builds ``build(tf) -> (outputs, loss)`` in a fresh graph; returns variable
    shapes, TF's initial values, the outputs, the variables after the update ops and
    one SGD step of ``loss``."""
    with tf.Graph().as_default():
        outputs, loss = build(tf)
        step = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        if updates:
            step = tf.group(step, *tf.get_collection(tf.GraphKeys.UPDATE_OPS))
        variables = {v.name: v for v in tf.global_variables()}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for name, value in (initial or {}).items():
                variables[name].load(value, sess)
            start = {name: sess.run(v) for name, v in variables.items()}
            values = sess.run(outputs)
            sess.run(step)
            after = {name: sess.run(v) for name, v in variables.items()}
    shapes = {name: tuple(v.shape.as_list()) for name, v in variables.items()}
    return shapes, start, values, after


def check(contrib_program, reference_program, rtol=1e-5, atol=1e-5):
    their_shapes, initial, theirs, their_after = run(tf1, reference_program)
    our_shapes, _, ours, our_after = run(dataflow, contrib_program, initial)
    assert our_shapes == their_shapes
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)
    for key in their_after:
        np.testing.assert_allclose(
            our_after[key], their_after[key], rtol=rtol, atol=atol, err_msg=key
        )


# --- fully_connected ---------------------------------------------------------------------
def dense_reference(tf, x, units, scope, activation=None, bias=True):
    """TF 1.15's fully_connected: weights [in, units], biases, matmul, bias_add, act."""
    with tf.variable_scope(scope):
        w = tf.get_variable(
            "weights", [x.shape[-1], units], initializer=tf.glorot_uniform_initializer()
        )
        y = tf.matmul(x, w)
        if bias:
            y = tf.nn.bias_add(
                y, tf.get_variable("biases", [units], initializer=tf.zeros_initializer())
            )
    return activation(y) if activation else y


def test_fully_connected_matches_core_tf1():
    def contrib(tf):
        x = tf.constant(X)
        h = tf.contrib.layers.fully_connected(x, 4)
        y = tf.contrib.layers.fully_connected(h, 3, activation_fn=None, scope="logits")
        return [h, y], tf.reduce_sum(tf.square(y))

    def reference(tf):
        x = tf.constant(X)
        h = dense_reference(tf, x, 4, "fully_connected", tf.nn.relu)
        y = dense_reference(tf, h, 3, "logits")
        return [h, y], tf.reduce_sum(tf.square(y))

    check(contrib, reference)


def test_fully_connected_arg_scope_and_rank_3_inputs():
    def contrib(tf):
        x = tf.constant(SEQ)
        with tf.contrib.framework.arg_scope(
            [tf.contrib.layers.fully_connected], activation_fn=tf.nn.tanh
        ):
            y = tf.contrib.layers.fully_connected(x, 2, scope="proj")
        return [y], tf.reduce_sum(y)

    def reference(tf):
        with tf.variable_scope("proj"):
            w = tf.get_variable("weights", [5, 2])
            b = tf.get_variable("biases", [2], initializer=tf.zeros_initializer())
        y = tf.tanh(tf.tensordot(tf.constant(SEQ), w, [[2], [0]]) + b)
        return [y], tf.reduce_sum(y)

    check(contrib, reference)


def test_fully_connected_collections_regularizer_and_reuse():
    tf = dataflow
    x = tf.placeholder(tf.float32, [None, 5])
    y = tf.contrib.layers.fully_connected(
        x,
        3,
        weights_regularizer=tf.contrib.layers.l2_regularizer(0.5),
        scope="fc",
        outputs_collections="outs",
    )
    again = tf.contrib.layers.fully_connected(x, 3, scope="fc", reuse=True)
    names = [v.op.name for v in tf.model_variables()]
    assert names == ["fc/weights", "fc/biases"]
    assert tf.get_collection("outs") == [y]
    (penalty,) = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        w = sess.run(tf.model_variables()[0])
        a, b, p = sess.run([y, again, penalty], {x: X})
    np.testing.assert_allclose(a, b)
    np.testing.assert_allclose(p, 0.5 * np.sum(w.astype(np.float64) ** 2) / 2, rtol=1e-6)
    with pytest.raises(ValueError, match="num_outputs"):
        tf.contrib.layers.fully_connected(x, 2.0)
    with pytest.raises(ValueError, match="last dimension"):
        tf.contrib.layers.fully_connected(tf.placeholder(tf.float32, [2, None]), 2)


# --- conv2d, pooling, flatten ------------------------------------------------------------
def test_conv2d_pool_flatten_match_core_tf1():
    def contrib(tf):
        x = tf.constant(IMAGES)
        c1 = tf.contrib.layers.conv2d(x, 4, [3, 3])
        c2 = tf.contrib.layers.conv2d(c1, 2, 3, stride=2, padding="VALID", activation_fn=None)
        c3 = tf.contrib.layers.conv2d(c1, 2, 2, rate=2, scope="dilated")
        p = tf.contrib.layers.max_pool2d(c3, [2, 2])
        f = tf.contrib.layers.flatten(p)
        return [c1, c2, c3, p, f], tf.reduce_sum(c2) + tf.reduce_sum(tf.square(f))

    def conv(tf, x, out, k, scope, stride=1, padding="SAME", rate=1, act=True):
        with tf.variable_scope(scope):
            w = tf.get_variable("weights", [k, k, x.shape[-1], out])
            b = tf.get_variable("biases", [out], initializer=tf.zeros_initializer())
        # TF 1.15's contrib conv2d goes through nn.convolution, which builds a dilated
        # convolution from space_to_batch: plain Conv2D with dilations > 1 has no CPU
        # gradient kernel on every CPU (TF refuses it on some).
        y = tf.nn.convolution(x, w, padding, strides=[stride, stride], dilation_rate=[rate, rate])
        y = tf.nn.bias_add(y, b)
        return tf.nn.relu(y) if act else y

    def reference(tf):
        x = tf.constant(IMAGES)
        c1 = conv(tf, x, 4, 3, "Conv")
        c2 = conv(tf, c1, 2, 3, "Conv_1", stride=2, padding="VALID", act=False)
        c3 = conv(tf, c1, 2, 2, "dilated", rate=2)
        p = tf.nn.max_pool(c3, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
        f = tf.reshape(p, [4, -1])
        return [c1, c2, c3, p, f], tf.reduce_sum(c2) + tf.reduce_sum(tf.square(f))

    check(contrib, reference)


def test_conv2d_bad_input():
    tf = dataflow
    with pytest.raises(ValueError, match="rank 3"):
        tf.contrib.layers.conv2d(tf.zeros([2, 3, 4]), 2, 3)
    with pytest.raises(ValueError, match="kernel_size"):
        tf.contrib.layers.conv2d(tf.zeros([1, 5, 5, 2]), 2, [3, 3, 3])
    with pytest.raises(ValueError, match="data_format"):
        tf.contrib.layers.max_pool2d(tf.zeros([1, 4, 4, 1]), 2, data_format="NWHC")


# --- batch_norm, layer_norm --------------------------------------------------------------
def bn_reference(tf, x, decay, bessel, scope="BatchNorm", scale=False, eps=1e-3):
    """TF 1.15's batch_norm while training: batch statistics, and ``m -= (m - batch) *
    (1 - decay)``; the fused kernel (rank 2 and 4) reports the sample variance."""
    c = x.shape[-1]
    with tf.variable_scope(scope):
        beta = tf.get_variable("beta", [c], initializer=tf.zeros_initializer())
        gamma = tf.get_variable("gamma", [c], initializer=tf.ones_initializer()) if scale else None
        mm = tf.get_variable(
            "moving_mean", [c], initializer=tf.zeros_initializer(), trainable=False
        )
        mv = tf.get_variable(
            "moving_variance", [c], initializer=tf.ones_initializer(), trainable=False
        )
    axes = list(range(len(x.shape) - 1))
    mean, var = tf.nn.moments(x, axes)
    y = tf.nn.batch_normalization(x, mean, var, beta, gamma, eps)
    n = float(np.prod(x.shape.as_list()[:-1]))
    update_var = var * n / (n - 1.0) if bessel else var
    for moving, batch in ((mm, mean), (mv, update_var)):
        tf.add_to_collection(
            tf.GraphKeys.UPDATE_OPS, tf.assign_sub(moving, (moving - batch) * (1 - decay))
        )
    return y


@pytest.mark.parametrize("data", ["images", "matrix", "sequence"])
def test_batch_norm_training_matches_core_tf1(data):
    value = {"images": IMAGES, "matrix": X, "sequence": SEQ}[data]

    def contrib(tf):
        x = tf.constant(value)
        y = tf.contrib.layers.batch_norm(x, decay=0.9, scale=True)
        return [y], tf.reduce_sum(tf.square(y) * tf.range(1.0, 1.0 + value.shape[-1]))

    def reference(tf):
        x = tf.constant(value)
        y = bn_reference(tf, x, 0.9, bessel=value.ndim in (2, 4), scale=True)
        return [y], tf.reduce_sum(tf.square(y) * tf.range(1.0, 1.0 + value.shape[-1]))

    check(contrib, reference, rtol=1e-4, atol=1e-5)


def test_batch_norm_of_images_is_tf1_core_layer():
    """TF 1.15's batch_norm hands 4-D inputs with the default ``updates_collections``
    to ``tf.layers.BatchNormalization(momentum=decay, fused=True, name=scope)``."""

    def contrib(tf):
        y = tf.contrib.layers.batch_norm(tf.constant(IMAGES), decay=0.8, scale=True)
        return [y], tf.reduce_sum(tf.square(y) * tf.constant(IMAGES))

    def reference(tf):
        y = tf.layers.batch_normalization(
            tf.constant(IMAGES),
            momentum=0.8,
            epsilon=1e-3,
            fused=True,
            training=True,
            name="BatchNorm",
        )
        return [y], tf.reduce_sum(tf.square(y) * tf.constant(IMAGES))

    check(contrib, reference, rtol=1e-4, atol=1e-5)


def test_batch_norm_as_normalizer_with_is_training_tensor():
    tf = dataflow
    x = tf.placeholder(tf.float32, [None, 5])
    training = tf.placeholder(tf.bool, [])
    y = tf.contrib.layers.fully_connected(
        x,
        3,
        normalizer_fn=tf.contrib.layers.batch_norm,
        normalizer_params={"is_training": training, "updates_collections": None, "decay": 0.5},
    )
    names = [v.op.name for v in tf.global_variables()]
    assert names == [
        "fully_connected/weights",
        "fully_connected/BatchNorm/beta",
        "fully_connected/BatchNorm/moving_mean",
        "fully_connected/BatchNorm/moving_variance",
    ]
    w, _, mm, mv = tf.global_variables()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        wv = sess.run(w)
        h = X @ wv
        out = sess.run(y, {x: X, training: True})  # updates run with the output
        mean, var = h.mean(0), h.var(0)
        np.testing.assert_allclose(out, np.maximum((h - mean) / np.sqrt(var + 1e-3), 0), atol=1e-4)
        np.testing.assert_allclose(sess.run(mm), 0.5 * mean, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(sess.run(mv), 0.5 + 0.5 * var * 6 / 5, rtol=1e-5)
        before = sess.run([mm, mv])
        test = sess.run(y, {x: X, training: False})
        np.testing.assert_allclose(sess.run([mm, mv]), before)
    np.testing.assert_allclose(
        test, np.maximum((h - before[0]) / np.sqrt(before[1] + 1e-3), 0), rtol=1e-4, atol=1e-5
    )


def test_batch_norm_bad_input():
    tf = dataflow
    with pytest.raises(ValueError, match="data_format"):
        tf.contrib.layers.batch_norm(tf.zeros([2, 3]), data_format="NWC")
    with pytest.raises(ValueError, match="not provided"):
        tf.contrib.layers.batch_norm(tf.zeros([2, 3]), renorm=True)


def test_layer_norm_matches_core_tf1():
    def contrib(tf):
        y = tf.contrib.layers.layer_norm(tf.constant(SEQ))
        return [y], tf.reduce_sum(y * tf.constant(SEQ[::-1].copy()))

    def reference(tf):
        x = tf.constant(SEQ)
        with tf.variable_scope("LayerNorm"):
            beta = tf.get_variable("beta", [5], initializer=tf.zeros_initializer())
            gamma = tf.get_variable("gamma", [5], initializer=tf.ones_initializer())
        mean, var = tf.nn.moments(x, [1, 2], keep_dims=True)
        y = tf.nn.batch_normalization(x, mean, var, beta, gamma, 1e-12)
        return [y], tf.reduce_sum(y * tf.constant(SEQ[::-1].copy()))

    check(contrib, reference, rtol=1e-4, atol=1e-5)


# --- initializers, regularizers, small layers --------------------------------------------
@pytest.mark.parametrize("shape", [[300, 200], [3, 3, 16, 32]])
def test_xavier_initializer_is_glorot_uniform(shape):
    fan_in = shape[-2] * int(np.prod(shape[:-2]))
    fan_out = shape[-1] * int(np.prod(shape[:-2]))
    limit = math.sqrt(6.0 / (fan_in + fan_out))
    with tf1.Graph().as_default(), tf1.Session() as sess:
        theirs = sess.run(tf1.glorot_uniform_initializer(seed=3)(shape))
    with dataflow.Session() as sess:
        ours = sess.run(dataflow.contrib.layers.xavier_initializer(seed=3)(shape))
        glorot = sess.run(dataflow.glorot_uniform_initializer(seed=3)(shape))
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    # The same distribution as TF's: uniform on [-limit, limit]; and the same stream as
    # dataflow's own glorot_uniform_initializer for the same seed (contrib aliases it).
    np.testing.assert_array_equal(ours, glorot)
    for v in (ours, theirs):
        assert np.abs(v).max() <= limit and np.abs(v).max() > 0.98 * limit
    # std of n uniform draws: limit / sqrt(3), relative sampling error ~ 1 / sqrt(n)
    tol = 5 * limit / math.sqrt(3) / math.sqrt(ours.size)
    assert abs(ours.std() - theirs.std()) < tol


@pytest.mark.parametrize(
    "factor, mode, n", [(2.0, "FAN_IN", 64 * 9), (1.0, "FAN_AVG", (64 + 32) * 9 / 2)]
)
def test_variance_scaling_initializer_truncated_normal(factor, mode, n):
    """Contrib's normal: a truncated normal of stddev sqrt(1.3 factor / n)."""
    shape = [3, 3, 64, 32]
    stddev = math.sqrt(1.3 * factor / n)
    with tf1.Graph().as_default(), tf1.Session() as sess:
        theirs = sess.run(tf1.truncated_normal_initializer(stddev=stddev, seed=1)(shape))
    with dataflow.Session() as sess:
        init = dataflow.contrib.layers.variance_scaling_initializer(factor, mode, seed=1)
        ours = sess.run(init(shape))
    assert np.abs(ours).max() <= 2 * stddev * (1 + 1e-6)
    tol = 5 * stddev / math.sqrt(ours.size)
    assert abs(ours.std() - theirs.std()) < tol
    with pytest.raises(TypeError, match="Unknown mode"):
        dataflow.contrib.layers.variance_scaling_initializer(mode="fan_in")
    with pytest.raises(TypeError, match="non-floating"):
        dataflow.contrib.layers.xavier_initializer(dtype=dataflow.int32)


def test_regularizers_match_core_tf1():
    w = RNG.normal(size=(4, 3)).astype(np.float32)

    def build(tf, l1, l2):
        v = tf.constant(w)
        return [l1(v), l2(v)]

    with tf1.Graph().as_default(), tf1.Session() as sess:
        theirs = sess.run(
            build(
                tf1, lambda v: 0.3 * tf1.reduce_sum(tf1.abs(v)), lambda v: 0.2 * tf1.nn.l2_loss(v)
            )
        )
    tf = dataflow
    l1, l2 = tf.contrib.layers.l1_regularizer(0.3), tf.contrib.layers.l2_regularizer(0.2)
    ours_ops = build(tf, l1, l2)
    assert ours_ops[1].op.name == "l2_regularizer"
    total = tf.contrib.layers.apply_regularization(l2, [tf.constant(w), tf.constant(2 * w)])
    assert tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES) == [total]
    with tf.Session() as sess:
        ours = sess.run(ours_ops)
        np.testing.assert_allclose(sess.run(total), 5 * theirs[1], rtol=1e-6)
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)
    assert tf.contrib.layers.l2_regularizer(0.0)(tf.constant(w)) is None
    with pytest.raises(ValueError, match="integer"):
        tf.contrib.layers.l2_regularizer(1)
    with pytest.raises(ValueError, match="less than 0"):
        tf.contrib.layers.l1_regularizer(-0.1)


def test_dropout_one_hot_and_summaries(sess):
    tf = dataflow
    x = tf.constant(X)
    kept = tf.contrib.layers.dropout(x, keep_prob=0.5, is_training=False)
    dropped = tf.contrib.layers.dropout(x, keep_prob=0.5)
    hot = tf.contrib.layers.one_hot_encoding(tf.constant([0, 2, 1]), 3)
    summaries = tf.contrib.layers.summarize_activation(tf.nn.relu(x))
    a, b, h = sess.run([kept, dropped, hot])
    np.testing.assert_array_equal(a, X)
    assert set(np.unique(b[b != 0] / X[b != 0]).round(4)) == {2.0}
    np.testing.assert_array_equal(h, np.eye(3, dtype=np.float32)[[0, 2, 1]])
    assert [s.op.type for s in summaries] == ["HistogramSummary", "ScalarSummary"]
    assert len(tf.get_collection(tf.GraphKeys.SUMMARIES)) == 2
