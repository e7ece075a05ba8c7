"""``tf.IndexedSlices``: the value class, its conversion to a dense tensor, fetching it,
and the gradients that are one (gathers from variables), against
``tensorflow.compat.v1``."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dataflow


def test_attributes_and_shape() -> None:
    tf = dataflow
    with tf.Graph().as_default() as graph:
        values = tf.constant([[1.0, 2.0], [3.0, 4.0]], name="v")
        s = tf.IndexedSlices(values, tf.constant([2, 0]), tf.constant([3, 2]))
        assert s.values is values and s.dtype == tf.float32
        assert s.name == values.name and s.op is values.op and s.graph is graph
        assert s.device == values.device
        assert s.shape.as_list() == [3, 2] and s.get_shape().as_list() == [3, 2]
        assert tf.IndexedSlices(values, [0, 1]).shape.as_list() == [None, 2]
        assert "IndexedSlices(indices=" in repr(s)
        neg = -s
        assert isinstance(neg, tf.IndexedSlices) and neg.indices is s.indices
        assert tf.convert_to_tensor_or_indexed_slices(s) is s
        assert isinstance(tf.convert_to_tensor_or_indexed_slices([1.0]), tf.Tensor)
        with pytest.raises(ValueError, match="requested dtype"):
            tf.convert_to_tensor_or_indexed_slices(s, dtype=tf.float64)
        with pytest.raises(TypeError, match="integers"):
            tf.IndexedSlices(values, [0.5, 1.0])
        dense = tf.convert_to_tensor(s)
        consumers = s.consumers()
        assert dense.op in consumers or any(op.type == "UnsortedSegmentSum" for op in consumers)
        with tf.Session() as sess:
            got, fetched, negated = sess.run([dense, s, neg])
    np.testing.assert_array_equal(got, [[3, 4], [0, 0], [1, 2]])
    assert type(fetched).__name__ == "IndexedSlicesValue"
    assert isinstance(fetched, tf.IndexedSlicesValue)
    np.testing.assert_array_equal(fetched.indices, [2, 0])
    np.testing.assert_array_equal(fetched.dense_shape, [3, 2])
    np.testing.assert_array_equal(negated.values, [[-1, -2], [-3, -4]])


def test_conversion_errors_and_repeated_rows() -> None:
    tf = dataflow
    with tf.Graph().as_default():
        s = tf.IndexedSlices(tf.constant([[1.0], [2.0], [4.0]]), [1, 1, 0], [3, 1])
        with pytest.raises(ValueError, match="requested dtype"):
            tf.convert_to_tensor(s, dtype=tf.float64)
        with pytest.raises(ValueError, match="without dense_shape"):
            tf.convert_to_tensor(tf.IndexedSlices(tf.constant([[1.0]]), [0]))
        doubled = s.values * 2.0  # ops given one take its dense value
        total = tf.reduce_sum(s)
        with tf.Session() as sess:
            assert sess.run(total) == 7.0
            np.testing.assert_array_equal(sess.run(tf.convert_to_tensor(s)).ravel(), [4, 3, 0])
            np.testing.assert_array_equal(sess.run(doubled).ravel(), [2, 4, 8])


def test_large_conversion_warns_as_tf1() -> None:
    tf = dataflow
    with tf.Graph().as_default():
        s = tf.IndexedSlices(tf.zeros([1, 1000]), [0], [100_000, 1000])
        with pytest.warns(UserWarning, match="100000000 elements"):
            tf.convert_to_tensor(s)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            tf.convert_to_tensor(tf.IndexedSlices(tf.zeros([1, 10]), [0], [1000, 10]))


def _gradient_program(tf):
    """Gradients of gathers from variables: one gather (2-D ids with repeats), two
    gathers of one table (concatenated), a gather mixed with a dense use (dense), a
    gather from a computed tensor (dense here, IndexedSlices in TF1), a table gathered
    with int64 ids, and a gradient of a variable read tensor."""
    with tf.Graph().as_default():
        rng = np.random.default_rng(1)
        a = tf.Variable(rng.standard_normal((6, 2)).astype(np.float32), name="a")
        b = tf.Variable(rng.standard_normal((5, 3)).astype(np.float32), name="b")
        c = tf.Variable(rng.standard_normal((4, 2)).astype(np.float32), name="c")
        d = tf.Variable(rng.standard_normal((7, 2)).astype(np.float32), name="d")
        ya = tf.nn.embedding_lookup(a, tf.constant([[1, 3], [1, 5]]))
        yb = tf.gather(b, [4, 0]) * 2.0 + tf.gather(b, tf.constant([0, 0, 2]))[:2]
        yc = tf.gather(c, [3, 3]) + c[:2]
        yd = tf.nn.embedding_lookup(d, tf.constant([6, 0, 6], tf.int64))
        loss = (
            tf.reduce_sum(ya * ya)
            + tf.reduce_sum(tf.sin(yb))
            + tf.reduce_sum(yc * yc)
            + tf.reduce_sum(yd)
        )
        grads = tf.gradients(loss, [a, b, c, d])
        kinds = [type(g).__name__ for g in grads]
        dense = [tf.convert_to_tensor(g) for g in grads]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            return kinds, sess.run(grads), sess.run(dense)


@pytest.mark.tf
def test_gradients_match_tf1() -> None:
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    tf1.disable_eager_execution()
    kinds, ours, ours_dense = _gradient_program(dataflow)
    tkinds, theirs, theirs_dense = _gradient_program(tf1)
    # c is gathered and also used densely: its gradient is densified, in both.
    assert kinds == ["IndexedSlices", "IndexedSlices", "Tensor", "IndexedSlices"]
    assert [k.replace("Symbolic", "") for k in tkinds] == kinds
    for i in (0, 3):  # single gathers: the same values, indices and dense shape
        for x, y in zip(ours[i], theirs[i], strict=True):
            assert x.dtype == y.dtype
            np.testing.assert_allclose(x, y, rtol=1e-6)
    # Two gathers of b: concatenated; the order of the pieces may differ from TF1's.
    assert sorted(ours[1].indices.tolist()) == sorted(theirs[1].indices.tolist())
    np.testing.assert_array_equal(ours[1].dense_shape, theirs[1].dense_shape)
    for x, y in zip(ours_dense, theirs_dense, strict=True):
        np.testing.assert_allclose(x, y, rtol=1e-6)


def test_gather_from_a_computed_tensor_has_a_dense_gradient() -> None:
    tf = dataflow
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [4, 2])
        (g,) = tf.gradients(tf.reduce_sum(tf.gather(x * 2.0, [1, 1])), x)
        assert isinstance(g, tf.Tensor)
        w = tf.Variable(np.ones((4, 2), np.float32))
        (h,) = tf.gradients(tf.reduce_sum(tf.gather(w, [1, 2], axis=1)), w)
        assert isinstance(h, tf.Tensor)  # not along axis 0: dense, as in TF1
        # Second order through the IndexedSlices: d/dw of sum(grad^2) where the gather
        # gradient is IndexedSlices of w's rows.
        y = tf.reduce_sum(tf.square(tf.nn.embedding_lookup(w, [0, 0, 3])))
        (gw,) = tf.gradients(y, w)
        (hw,) = tf.gradients(tf.reduce_sum(tf.square(gw.values)), w)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got = sess.run(tf.convert_to_tensor(hw))
    # gw.values = 2 * w[ids]; sum(gw.values ** 2) = 4 * sum(w[ids] ** 2): d/dw = 8 w[ids]
    want = np.zeros((4, 2), np.float32)
    want[0], want[3] = 16.0, 8.0
    np.testing.assert_allclose(got, want)
