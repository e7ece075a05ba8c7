"""``SparseTensor`` and the sparse ops against ``tensorflow.compat.v1``: fetching and
feeding sparse values, to_dense, reduce_sum, sparse-dense matmul (with gradients) and
embedding_lookup_sparse."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow

pytestmark = pytest.mark.tf

tf1 = pytest.importorskip("tensorflow.compat.v1")

INDICES = np.array([[0, 1], [1, 0], [1, 2], [3, 1]], np.int64)
VALUES = np.array([2.0, -1.0, 0.5, 3.0], np.float32)
SHAPE = np.array([4, 3], np.int64)
DENSE = np.random.default_rng(0).normal(size=(3, 2)).astype(np.float32)


def program(tf):
    with tf.Graph().as_default():
        sp = tf.sparse_placeholder(tf.float32, name="sp")
        constant_sp = tf.SparseTensor(INDICES, VALUES, SHAPE)
        b = tf.Variable(DENSE)
        product = tf.sparse_tensor_dense_matmul(sp, b)
        other = tf.constant(np.arange(8.0, dtype=np.float32).reshape(2, 4))
        transposed = tf.sparse_tensor_dense_matmul(sp, other, adjoint_a=True, adjoint_b=True)
        grads = tf.gradients(
            tf.reduce_sum(product * product) + tf.reduce_sum(transposed), [b, sp.values]
        )
        fetches = {
            "sparse": constant_sp,
            "dense": tf.sparse_tensor_to_dense(sp, default_value=-7.0),
            "sum_all": tf.sparse_reduce_sum(sp),
            "sum_rows": tf.sparse_reduce_sum(sp, axis=1, keepdims=True),
            "product": product,
            "transposed": transposed,
            "grads": grads,
        }
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            feed = {sp: tf.SparseTensorValue(INDICES, VALUES, SHAPE)}
            out = sess.run(fetches, feed)
            out["tuple_feed"] = sess.run(
                tf.sparse_tensor_to_dense(sp), {sp: (INDICES, VALUES, SHAPE)}
            )
            out["shape"] = constant_sp.get_shape().as_list()
        return out


def test_sparse_programs_match_tf():
    ours, theirs = program(dataflow), program(tf1)
    assert type(ours["sparse"]).__name__ == "SparseTensorValue"
    for a, b in zip(ours["sparse"], theirs["sparse"], strict=True):
        np.testing.assert_array_equal(a, b)
    assert ours["shape"] == theirs["shape"] == [4, 3]
    for key in ("dense", "sum_all", "sum_rows", "product", "transposed", "tuple_feed"):
        np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-6, err_msg=key)
    for a, b in zip(ours["grads"], theirs["grads"], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5)


@pytest.mark.parametrize("combiner", ["sum", "mean", "sqrtn"])
@pytest.mark.parametrize("weighted", [False, True])
def test_embedding_lookup_sparse_matches_tf(combiner, weighted):
    params = np.random.default_rng(1).normal(size=(6, 4)).astype(np.float32)
    ids = (
        np.array([[0, 0], [0, 1], [1, 0], [2, 0], [2, 1], [2, 2]]),
        np.array([1, 4, 0, 5, 5, 2]),
        [3, 3],
    )
    weights = np.array([0.5, 2.0, 1.0, 1.5, 0.25, 1.0], np.float32)

    def run(tf):
        with tf.Graph().as_default():
            table = tf.Variable(params)
            sp_ids = tf.SparseTensor(ids[0], tf.constant(ids[1], tf.int64), ids[2])
            sp_weights = tf.SparseTensor(ids[0], weights, ids[2]) if weighted else None
            out = tf.nn.embedding_lookup_sparse(table, sp_ids, sp_weights, combiner=combiner)
            grad = tf.gradients(tf.reduce_sum(out * out), table)[0]
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                value, g = sess.run([out, grad])
        if hasattr(g, "indices"):
            dense = np.zeros_like(params)
            np.add.at(dense, g.indices, g.values)
            g = dense
        return value, g

    (ours, our_grad), (theirs, their_grad) = run(dataflow), run(tf1)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(our_grad, their_grad, rtol=1e-5, atol=1e-6)


def test_feeding_a_sparse_placeholder_badly_is_a_type_error():
    tf = dataflow
    sp = tf.sparse_placeholder(tf.float32, [2, 2])
    with tf.Session() as sess, pytest.raises(TypeError, match="SparseTensorValue"):
        sess.run(tf.sparse_tensor_to_dense(sp), {sp: np.zeros((2, 2))})
