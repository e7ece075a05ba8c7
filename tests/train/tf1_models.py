"""Models written by ``tensorflow.compat.v1`` for the scoring tests: an MLP and a small CNN
frozen with TF's ``convert_variables_to_constants``, and TF's reference outputs on whole
arrays. Each writer takes the ``tensorflow.compat.v1`` module (graph mode)."""

from __future__ import annotations

import numpy as np


def mlp(tf1, width=8, hidden=32, classes=3, extra=0):
    """A frozen MLP: ``x`` [None, width] -> ``probs`` (softmax) and ``logits``.
    ``extra`` adds an unused-by-default constant of that many floats (a bigger graph),
    reachable from the outputs through a zero-weighted term."""
    graph = tf1.Graph()
    with graph.as_default():
        tf1.set_random_seed(3)
        x = tf1.placeholder(tf1.float32, [None, width], name="x")
        w1 = tf1.get_variable("w1", [width, hidden])
        b1 = tf1.get_variable("b1", [hidden], initializer=tf1.random_normal_initializer(seed=1))
        h = tf1.nn.relu(tf1.matmul(x, w1) + b1)
        w2 = tf1.get_variable("w2", [hidden, classes])
        logits = tf1.matmul(h, w2)
        if extra:
            big = tf1.get_variable("big", [extra], initializer=tf1.random_normal_initializer())
            logits = logits + 0.0 * tf1.reduce_sum(big)
        logits = tf1.identity(logits, name="logits")
        tf1.nn.softmax(logits, name="probs")
        with tf1.Session(graph=graph) as sess:
            sess.run(tf1.global_variables_initializer())
            frozen = tf1.graph_util.convert_variables_to_constants(
                sess, graph.as_graph_def(), ["probs", "logits"]
            )
    return frozen


def cnn(tf1):
    """A frozen CNN: ``image`` [None, 10, 10, 2] and ``scale`` [None] -> ``scores``
    [None, 4] and ``features`` [None, 5, 5, 3]."""
    graph = tf1.Graph()
    with graph.as_default():
        tf1.set_random_seed(4)
        image = tf1.placeholder(tf1.float32, [None, 10, 10, 2], name="image")
        scale = tf1.placeholder(tf1.float32, [None], name="scale")
        k = tf1.get_variable("k", [3, 3, 2, 3])
        kb = tf1.get_variable("kb", [3], initializer=tf1.constant_initializer(0.1))
        h = tf1.nn.relu(tf1.nn.bias_add(tf1.nn.conv2d(image, k, [1, 1, 1, 1], "SAME"), kb))
        h = tf1.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
        tf1.identity(h, name="features")
        flat = tf1.reshape(h, [-1, 5 * 5 * 3])
        w = tf1.get_variable("w", [75, 4])
        tf1.multiply(tf1.matmul(flat, w), scale[:, None], name="scores")
        with tf1.Session(graph=graph) as sess:
            sess.run(tf1.global_variables_initializer())
            frozen = tf1.graph_util.convert_variables_to_constants(
                sess, graph.as_graph_def(), ["scores", "features"]
            )
    return frozen


def run(tf1, graph_def, fetches, feed):
    """TF's outputs of ``graph_def`` on whole arrays (``feed``: tensor name -> array)."""
    graph = tf1.Graph()
    with graph.as_default():
        tf1.import_graph_def(graph_def, name="")
        with tf1.Session(graph=graph) as sess:
            return sess.run(list(fetches), {k: np.asarray(v) for k, v in feed.items()})


def saved_mlp(tf1, export_dir):
    """A SavedModel ``simple_save`` wrote: variables (not frozen), the signature
    ``serving_default`` with inputs ``features`` [None, 6], ``weight`` [None] and outputs
    ``probs`` [None, 4], ``score`` [None]."""
    graph = tf1.Graph()
    with graph.as_default():
        tf1.set_random_seed(5)
        x = tf1.placeholder(tf1.float32, [None, 6], name="features")
        weight = tf1.placeholder(tf1.float32, [None], name="weight")
        w = tf1.get_variable("w", [6, 4])
        b = tf1.get_variable("b", [4], initializer=tf1.constant_initializer([0.3, -0.2, 0.1, 0.5]))
        probs = tf1.nn.softmax(tf1.tanh(tf1.matmul(x, w) + b), name="probs")
        score = tf1.reduce_max(probs, axis=1) * weight
        with tf1.Session(graph=graph) as sess:
            sess.run(tf1.global_variables_initializer())
            tf1.saved_model.simple_save(
                sess,
                export_dir,
                inputs={"features": x, "weight": weight},
                outputs={"probs": probs, "score": score},
            )


def run_saved(tf1, export_dir, outputs, feed):
    """TF's outputs of the ``serving_default`` signature on whole arrays (by keys)."""
    graph = tf1.Graph()
    with tf1.Session(graph=graph) as sess:
        meta = tf1.saved_model.loader.load(sess, ["serve"], export_dir)
        signature = meta.signature_def["serving_default"]
        fetches = [signature.outputs[k].name for k in outputs]
        return sess.run(fetches, {signature.inputs[k].name: v for k, v in feed.items()})
