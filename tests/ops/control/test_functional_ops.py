"""``tf.foldl``/``tf.foldr`` against ``tensorflow.compat.v1``: values and gradients, with
and without an initializer, over nested elements and accumulators."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow

pytestmark = pytest.mark.tf

tf1 = pytest.importorskip("tensorflow.compat.v1")

X = np.random.default_rng(6).normal(size=(5, 3))

PROGRAMS = {
    "foldl_no_initializer": lambda tf, x: tf.foldl(lambda a, e: a * 0.5 + tf.tanh(e), x),
    "foldr_initializer": lambda tf, x: tf.foldr(
        lambda a, e: a * e + 1.0, x, initializer=tf.ones([3], tf.float64)
    ),
    "foldl_nested": lambda tf, x: tf.foldl(
        lambda acc, e: (acc[0] + e[0] * e[1], acc[1] * tf.reduce_sum(e[1])),
        (x, x * 2.0),
        initializer=(tf.zeros([3], tf.float64), tf.constant(1.0, tf.float64)),
    ),
    "foldr_scalar_elements": lambda tf, x: tf.foldr(lambda a, e: a * 0.9 + e, tf.reduce_sum(x, 1)),
}


def run(tf, program):
    with tf.Graph().as_default():
        x = tf.constant(X)
        out = program(tf, x)
        flat = list(out) if isinstance(out, tuple) else [out]
        total = tf.add_n([tf.reduce_sum(o * o) for o in flat])
        with tf.Session() as sess:
            return sess.run([flat, tf.gradients(total, x)[0]])


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_fold_matches_tf(name):
    (ours, our_grad), (theirs, their_grad) = run(dataflow, PROGRAMS[name]), run(tf1, PROGRAMS[name])
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10)
    np.testing.assert_allclose(our_grad, their_grad, rtol=1e-9)


def test_fold_errors():
    tf = dataflow
    with pytest.raises(ValueError, match="at least 1-D"):
        tf.foldl(lambda a, e: a + e, tf.constant(1.0))
    with pytest.raises(TypeError, match="callable"):
        tf.foldl(3, tf.constant([1.0]))
