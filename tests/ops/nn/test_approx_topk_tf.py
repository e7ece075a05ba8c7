"""``tf.nn.approx_max_k``/``approx_min_k`` (exact top-k) against numpy's sort and
against TensorFlow's own ``approx_max_k``/``approx_min_k`` (XLA-compiled: its CPU
kernel exists only there), whose result on small inputs is exact."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow

pytestmark = [
    pytest.mark.tf,
    pytest.mark.filterwarnings("ignore::UserWarning"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]
tf = pytest.importorskip("tensorflow")

X = np.random.default_rng(9).standard_normal((3, 6, 4)).astype(np.float32)


@pytest.mark.parametrize("dim", [-1, 0, 1, 2])
@pytest.mark.parametrize("largest", [True, False])
def test_against_numpy_and_tf(dim, largest):
    k = 2
    with dataflow.Graph().as_default():
        build = dataflow.nn.approx_max_k if largest else dataflow.nn.approx_min_k
        values, indices = build(X, k, reduction_dimension=dim)
        assert indices.dtype == dataflow.int32
        with dataflow.Session() as sess:
            got_v, got_i = sess.run([values, indices])
    order = np.argsort(-X if largest else X, axis=dim, kind="stable")
    want_i = np.take(order, np.arange(k), axis=dim)
    np.testing.assert_array_equal(got_i, want_i)
    np.testing.assert_array_equal(got_v, np.take_along_axis(X, want_i, axis=dim))
    reference = tf.math.approx_max_k if largest else tf.math.approx_min_k
    compiled = tf.function(lambda a: reference(a, k, reduction_dimension=dim), jit_compile=True)
    # In a graph and a session: the suite's TF1 tests turn eager execution off when they
    # are collected, so .numpy() on an eager result would not exist in a full run.
    with tf.compat.v1.Graph().as_default():
        outputs = compiled(tf.constant(X))
        with tf.compat.v1.Session() as sess:
            tf_v, tf_i = sess.run(outputs)
    np.testing.assert_array_equal(got_v, tf_v)
    np.testing.assert_array_equal(got_i, tf_i)


@pytest.mark.parametrize(
    "kwargs",
    [{"k": 7}, {"k": 2, "reduction_dimension": 3}, {"k": 2, "recall_target": 0.0}],
)
def test_bad_arguments_are_value_errors(kwargs):
    with dataflow.Graph().as_default(), pytest.raises(ValueError):
        dataflow.nn.approx_max_k(X, **kwargs)
