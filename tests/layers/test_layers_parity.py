"""``tf.layers`` against ``tensorflow.compat.v1.layers``: the same programs make variables
of the same names and shapes; given TF's initial values, they compute the same outputs,
gradients steps and moving statistics, and fail the same way."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow

pytestmark = [
    pytest.mark.tf,
    # The reference warns that tf.compat.v1.layers is deprecated, on every call.
    pytest.mark.filterwarnings("ignore:`tf.layers.*is deprecated:UserWarning"),
]

tf1 = pytest.importorskip("tensorflow.compat.v1")
if not hasattr(tf1, "layers") or not hasattr(tf1.layers, "dense"):
    pytest.skip("tensorflow.compat.v1.layers needs tf-keras", allow_module_level=True)

RNG = np.random.default_rng(0)
IMAGES = RNG.normal(size=(4, 8, 8, 3)).astype(np.float32)
LABELS = np.array([0, 2, 1, 2])
SEQUENCES = RNG.normal(size=(3, 10, 2)).astype(np.float32)


def cnn(tf):
    x = tf.placeholder(tf.float32, [None, 8, 8, 3], name="x")
    y = tf.placeholder(tf.int64, [None], name="y")
    h = tf.layers.conv2d(x, 4, 3, padding="same", activation=tf.nn.relu)
    h = tf.layers.max_pooling2d(h, 2, 2)
    h = tf.layers.conv2d(
        h,
        6,
        [2, 2],
        strides=2,
        padding="valid",
        kernel_regularizer=lambda w: 0.01 * tf.nn.l2_loss(w),
    )
    h = tf.layers.average_pooling2d(h, 2, 1, padding="same")
    h = tf.layers.flatten(h)
    h = tf.layers.dense(h, 5, activation=tf.tanh, bias_regularizer=lambda b: tf.reduce_sum(b))
    h = tf.layers.dropout(h, 0.5, training=False)
    logits = tf.layers.dense(h, 3, name="logits")
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    loss = loss + tf.losses.get_regularization_loss()
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    return {x: IMAGES, y: LABELS}, [logits, loss], [train]


def batch_norm(tf):
    x = tf.placeholder(tf.float32, [None, 8, 8, 3], name="x")
    training = tf.placeholder_with_default(True, [], name="training")
    h = tf.layers.batch_normalization(x, training=True, momentum=0.9)  # fused path
    h = tf.layers.conv2d(h, 2, 1)
    flat = tf.layers.flatten(h)
    out = tf.layers.batch_normalization(flat, training=training, center=False)  # 2-D
    loss = tf.reduce_mean(tf.square(out))
    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    return {x: IMAGES}, [out, loss], [train]


def sequences_and_transpose(tf):
    x = tf.placeholder(tf.float32, [None, 10, 2], name="x")
    h = tf.layers.conv1d(x, 3, 3, padding="same", activation=tf.nn.relu)
    h = tf.layers.max_pooling1d(h, 2, 2)
    h = tf.layers.average_pooling1d(h, 2, 1)
    projected = tf.layers.dense(h, 4)  # rank 3: over the last dimension
    image = tf.reshape(projected, [-1, 4, 4, 1])
    up_same = tf.layers.conv2d_transpose(image, 2, 3, strides=2, padding="same")
    up_valid = tf.layers.conv2d_transpose(image, 3, [2, 3], strides=(1, 2), padding="valid")
    loss = tf.reduce_sum(up_same) + tf.reduce_sum(tf.square(up_valid))
    train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
    return {x: SEQUENCES}, [projected, up_same, up_valid, loss], [train]


def scopes_and_reuse(tf):
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    with tf.variable_scope("model"):
        a = tf.layers.dense(x, 2)
        b = tf.layers.dense(x, 2)
        c = tf.layers.dense(x, 2, name="shared")
        d = tf.layers.dense(x, 2, name="shared", reuse=True)
    head = tf.layers.Dense(2, name="head")
    e, f = head(x), head(x * 2.0)
    return {x: IMAGES[:2, 0, 0, :]}, [a, b, c, d, e, f], []


def separable(tf):
    x = tf.placeholder(tf.float32, [None, 8, 8, 3], name="x")
    h = tf.layers.separable_conv2d(
        x, 4, 3, padding="same", depth_multiplier=2, activation=tf.nn.relu
    )
    h = tf.layers.separable_conv2d(h, 2, [2, 2], strides=2, use_bias=False, name="second")
    loss = tf.reduce_sum(tf.square(h))
    train = tf.train.GradientDescentOptimizer(0.001).minimize(loss)
    return {x: IMAGES}, [h, loss], [train]


PROGRAMS = {
    "separable": separable,
    "cnn": cnn,
    "batch_norm": batch_norm,
    "sequences_and_transpose": sequences_and_transpose,
    "scopes_and_reuse": scopes_and_reuse,
}


def run(tf, program, initial=None, steps=2):
    """Builds ``program``; returns variable shapes by name, their initial values, the
    fetches before training, and the variables after ``steps`` training steps."""
    with tf.Graph().as_default():
        feed_values, fetches, trains = program(tf)
        variables = {v.name: v for v in tf.global_variables()}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            if initial is not None:
                for name, value in initial.items():
                    variables[name].load(value, sess)
            start = {name: sess.run(v) for name, v in variables.items()}
            before = sess.run(fetches, feed_values)
            for _ in range(steps if trains else 0):
                sess.run(trains, feed_values)
            after = {name: sess.run(v) for name, v in variables.items()}
        shapes = {name: tuple(v.shape.as_list()) for name, v in variables.items()}
    return shapes, start, before, after


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_matches_tf(name):
    program = PROGRAMS[name]
    their_shapes, initial, their_before, their_after = run(tf1, program)
    our_shapes, _, our_before, our_after = run(dataflow, program, initial)
    assert our_shapes == their_shapes
    for ours, theirs in zip(our_before, their_before, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=2e-5, atol=2e-5)
    for key in their_after:
        np.testing.assert_allclose(
            our_after[key], their_after[key], rtol=2e-5, atol=2e-5, err_msg=key
        )


def _error_class(tf, build):
    with tf.Graph().as_default():
        try:
            build(tf)
        except Exception as exc:
            return type(exc).__name__
    return None


@pytest.mark.parametrize(
    "build",
    [
        lambda tf: [tf.layers.dense(tf.zeros([2, 3]), 2, name="fc") for _ in range(2)],
        lambda tf: tf.layers.dense(tf.placeholder(tf.float32, [2, None]), 2),
        lambda tf: tf.layers.conv2d(tf.zeros([2, 5, 3]), 2, 3),
        lambda tf: tf.layers.dense(tf.zeros([2, 3]), 2, name="new", reuse=True),
    ],
    ids=["same_name_twice", "unknown_last_dim", "conv_rank", "reuse_missing"],
)
def test_bad_input_raises_tf1s_error_class(build):
    ours = _error_class(dataflow, build)
    assert ours is not None and ours == _error_class(tf1, build)
