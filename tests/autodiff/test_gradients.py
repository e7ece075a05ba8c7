"""The gradient pass's ``stop_gradients`` (issue 11), checked against TF1.

TF1's rule: the op producing a stopped tensor passes no gradient to its inputs (one
stopped output stops the whole op), but the stopped tensor itself still collects its
gradient, so it is returned when it is one of ``xs``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import dataflow


def _stop_gradient_cases(tf: Any) -> list:
    """``(name, gradients)`` pairs; ``None`` stays ``None``, tensors are fetched."""
    x = tf.constant(2.0)
    y = x * 3.0
    z = y * y
    a, b = tf.split(tf.constant([1.0, 2.0]) * x, 2)
    w = tf.reduce_sum(a * b)
    return [
        ("a stopped x gets its gradient", tf.gradients(z, [x, y], stop_gradients=[y])),
        ("other paths still flow", tf.gradients(z + x, [x, y], stop_gradients=[y])),
        ("a stopped y", tf.gradients(z, [z, y], stop_gradients=[z])),
        ("one output stops the op", tf.gradients(w, [x, a, b], stop_gradients=[a])),
        ("stopping an x itself", tf.gradients(z, [x], stop_gradients=[x])),
        ("unstopped", tf.gradients(z, [x, y])),
    ]


def _run(tf: Any) -> list:
    graph = tf.Graph()
    with graph.as_default():
        cases = _stop_gradient_cases(tf)
        with tf.Session(graph=graph) as sess:
            return [
                (name, [None if g is None else np.asarray(sess.run(g)).tolist() for g in grads])
                for name, grads in cases
            ]


def test_stop_gradients_stop_propagation_not_the_stopped_tensor() -> None:
    got = dict(_run(dataflow))
    assert got["a stopped x gets its gradient"] == [None, 12.0]
    assert got["other paths still flow"] == [1.0, 12.0]
    assert got["a stopped y"] == [1.0, None]
    assert got["one output stops the op"] == [None, [4.0], [2.0]]
    assert got["stopping an x itself"] == [36.0]
    assert got["unstopped"] == [36.0, 12.0]


@pytest.mark.tf
def test_stop_gradients_match_tf1() -> None:
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    tf1.disable_eager_execution()
    assert _run(dataflow) == _run(tf1)
