"""A TF-Slim program as TF1 users wrote it (``arg_scope`` over ``conv2d`` and
``fully_connected`` with ``batch_norm`` as the normalizer and an ``is_training``
placeholder, ``optimize_loss``), trained for a few steps and evaluated, against the core
TF1 program TF 1.15's contrib source builds for it (``tf.layers.batch_normalization``
in each layer's scope, ``MomentumOptimizer(0.9)`` in ``OptimizeLoss``, the update ops
before the loss): the same variables, losses, moving statistics and predictions."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow

pytestmark = [
    pytest.mark.tf,
    pytest.mark.filterwarnings("ignore:.*is deprecated:UserWarning"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]

tf1 = pytest.importorskip("tensorflow").compat.v1

RNG = np.random.default_rng(9)
IMAGES = RNG.normal(size=(6, 8, 8, 1)).astype(np.float32)
LABELS = RNG.integers(0, 3, size=6).astype(np.int32)
STEPS = 3


def slim_program(tf):
    slim = tf.contrib.slim
    x = tf.placeholder(tf.float32, [None, 8, 8, 1])
    y = tf.placeholder(tf.int32, [None])
    training = tf.placeholder_with_default(True, [])
    with slim.arg_scope(
        [slim.conv2d, slim.fully_connected],
        normalizer_fn=slim.batch_norm,
        normalizer_params={"is_training": training, "decay": 0.9},
    ):
        net = slim.conv2d(x, 4, [3, 3], scope="conv1")
        net = slim.max_pool2d(net, [2, 2], scope="pool1")
        net = slim.flatten(net)
        net = slim.fully_connected(net, 5, scope="fc1")
        logits = slim.fully_connected(
            net, 3, activation_fn=None, normalizer_fn=None, scope="logits"
        )
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    step = tf.train.get_or_create_global_step()
    train_op = tf.contrib.layers.optimize_loss(loss, step, 0.05, "Momentum", summaries=[])
    return x, y, training, logits, train_op


def core_program(tf):
    x = tf.placeholder(tf.float32, [None, 8, 8, 1])
    y = tf.placeholder(tf.int32, [None])
    training = tf.placeholder_with_default(True, [])

    def normalized(scope, inputs):
        # TF 1.15's batch_norm: rank 4 goes to the fused tf.layers layer; rank 2 to
        # contrib's own fused path, the same kernel on a [N, 1, 1, C] view.
        shape = inputs.shape.as_list()
        if len(shape) == 2:
            inputs = tf.reshape(inputs, [-1, 1, 1, shape[1]])
        with tf.variable_scope(scope):
            out = tf.layers.batch_normalization(
                inputs,
                momentum=0.9,
                epsilon=1e-3,
                scale=False,
                fused=True,
                training=training,
                name="BatchNorm",
            )
        return tf.nn.relu(tf.reshape(out, [-1, shape[1]]) if len(shape) == 2 else out)

    with tf.variable_scope("conv1"):
        w = tf.get_variable("weights", [3, 3, 1, 4], initializer=tf.glorot_uniform_initializer())
    net = normalized("conv1", tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME"))
    net = tf.nn.max_pool(net, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
    net = tf.reshape(net, [-1, 64])
    with tf.variable_scope("fc1"):
        w = tf.get_variable("weights", [64, 5])
    net = normalized("fc1", tf.matmul(net, w))
    with tf.variable_scope("logits"):
        w = tf.get_variable("weights", [5, 3])
        b = tf.get_variable("biases", [3], initializer=tf.zeros_initializer())
    logits = tf.matmul(net, w) + b
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    step = tf.train.get_or_create_global_step()
    with tf.variable_scope("OptimizeLoss"):
        loss = tf.identity(loss)
        with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
            loss = tf.identity(loss)
        lr = tf.get_variable(
            "learning_rate", [], trainable=False, initializer=tf.constant_initializer(0.05)
        )
        update = tf.train.MomentumOptimizer(lr, momentum=0.9).minimize(
            loss, global_step=step, name="train"
        )
        with tf.control_dependencies([update]):
            train_op = tf.identity(loss)
    return x, y, training, logits, train_op


def run(tf, program, initial=None):
    with tf.Graph().as_default():
        x, y, training, logits, train_op = program(tf)
        variables = {v.name: v for v in tf.global_variables()}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for name, value in (initial or {}).items():
                variables[name].load(value, sess)
            start = {n: sess.run(v) for n, v in variables.items()}
            losses = [sess.run(train_op, {x: IMAGES, y: LABELS}) for _ in range(STEPS)]
            predictions = sess.run(logits, {x: IMAGES, training: False})
            final = {n: sess.run(v) for n, v in variables.items()}
    return start, losses, predictions, final


def test_slim_program_trains_like_core_tf1():
    start, their_losses, theirs, their_final = run(tf1, core_program)
    _, our_losses, ours, our_final = run(dataflow, slim_program, start)
    assert sorted(our_final) == sorted(their_final)
    assert "fc1/BatchNorm/moving_variance:0" in our_final
    assert "OptimizeLoss/fc1/weights/Momentum:0" in our_final
    np.testing.assert_allclose(our_losses, their_losses, rtol=1e-5)
    for name in their_final:
        np.testing.assert_allclose(
            our_final[name], their_final[name], rtol=1e-4, atol=1e-5, err_msg=name
        )
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-5)
