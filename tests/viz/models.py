"""Graphs the viz tests draw: a two-layer MLP on ps/worker, and a 10,000-op network."""

from __future__ import annotations

import dataflow as tf


def mlp(colocate_gradients_with_ops: bool = False):
    """TF1's two-layer MLP: variables on /job:ps, compute on /job:worker/task:1, trained
    with gradient descent (gradient and update ops built outside any device scope)."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 784], name="x")
        labels = tf.placeholder(tf.int64, [None], name="labels")
        with tf.device("/job:ps/task:0"):
            with tf.variable_scope("layer1"):
                w1 = tf.get_variable("w", [784, 100])
                b1 = tf.get_variable("b", [100], initializer=tf.zeros_initializer())
            with tf.variable_scope("layer2"):
                w2 = tf.get_variable("w", [100, 10])
                b2 = tf.get_variable("b", [10], initializer=tf.zeros_initializer())
        with tf.device("/job:worker/task:1"):
            with tf.name_scope("hidden"):
                h = tf.nn.relu(tf.matmul(x, w1) + b1)
            with tf.name_scope("logits"):
                logits = tf.matmul(h, w2) + b2
            with tf.name_scope("loss"):
                loss = tf.reduce_mean(
                    tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
                )
        train = tf.train.GradientDescentOptimizer(0.1).minimize(
            loss, colocate_gradients_with_ops=colocate_gradients_with_ops
        )
    return graph, train


def deep(blocks: int = 190):
    """A residual network of ``blocks`` dense blocks over two workers with Adam:
    10,000 ops for the default ``blocks``."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 64], name="x")
        y = tf.placeholder(tf.float32, [None, 64], name="y")
        h = x
        for i in range(blocks):
            with tf.device(f"/job:worker/task:{i % 2}"), tf.variable_scope(f"block{i}"):
                w = tf.get_variable("w", [64, 64])
                b = tf.get_variable("b", [64], initializer=tf.zeros_initializer())
                h = tf.nn.relu(tf.matmul(h, w) + b) + h
        with tf.name_scope("loss"):
            loss = tf.reduce_mean(tf.square(h - y))
        train = tf.train.AdamOptimizer(1e-3).minimize(loss)
    return graph, train
