"""The array ops beyond their op-table rows (``tests/ops/specs_array.py``): tensor
indices, autopacking, iteration, gathers on variables, refused arguments and gradients
with unknown shapes."""

from __future__ import annotations

import autograd.numpy as anp
import numpy as np
import pytest

import dataflow as tf

RNG = np.random.default_rng(7)


def rand(*shape):
    return RNG.standard_normal(shape)


def test_getitem_with_tensor_indices(sess):
    x = tf.placeholder(tf.float64, [None, 4])
    i = tf.placeholder(tf.int32, [])
    j = tf.placeholder(tf.int64, [])
    value = rand(5, 4)
    y = x[i, j:]
    z = x[i : i + 2, ::-1][:, j]
    assert y.shape.as_list() == [None] and z.shape.as_list() == [None]
    got_y, got_z = sess.run([y, z], {x: value, i: 3, j: 1})
    np.testing.assert_array_equal(got_y, value[3, 1:])
    np.testing.assert_array_equal(got_z, value[3:5, ::-1][:, 1])
    (g,) = tf.gradients(tf.reduce_sum(y * y), x)
    want = np.zeros_like(value)
    want[3, 1:] = 2 * value[3, 1:]
    np.testing.assert_allclose(sess.run(g, {x: value, i: 3, j: 1}), want)


def test_list_of_tensors_autopacks(sess):
    x = tf.placeholder(tf.int64, [])
    y = tf.placeholder(tf.float32, [])
    packed = tf.convert_to_tensor([[x, 2], [3, x]])
    floats = tf.convert_to_tensor([y, 1])
    assert packed.dtype == tf.int64 and packed.shape.as_list() == [2, 2]
    assert floats.dtype == tf.float32
    got = sess.run([packed, floats], {x: 5, y: 0.5})
    np.testing.assert_array_equal(got[0], [[5, 2], [3, 5]])
    np.testing.assert_array_equal(got[1], np.array([0.5, 1], np.float32))


def test_tensor_iteration_uses_getitem(sess):
    x = tf.constant([[1, 2], [3, 4]])
    rows = list(x)
    assert [r.shape.as_list() for r in rows] == [[2], [2]]
    np.testing.assert_array_equal(sess.run(rows), [[1, 2], [3, 4]])


def test_gather_on_variable_gives_indexed_slices(sess):
    table = tf.Variable(np.arange(8.0).reshape(4, 2))
    loss = tf.reduce_sum(tf.gather(table, [1, 3, 1]))
    (g,) = tf.gradients(loss, table)
    assert isinstance(g, tf.IndexedSlices)  # TF1's: the gathered rows
    sess.run(tf.global_variables_initializer())
    got = sess.run(g)
    np.testing.assert_array_equal(got.indices, [1, 3, 1])
    np.testing.assert_array_equal(got.dense_shape, [4, 2])
    dense = sess.run(tf.convert_to_tensor(g))
    np.testing.assert_array_equal(dense, [[0, 0], [2, 2], [0, 0], [1, 1]])


def test_float_indices_are_refused_not_rounded() -> None:
    # TF1: a TypeError naming the argument, for integral floats too ([1.0] was taken as 1).
    for build in (
        lambda: tf.gather(tf.zeros([3]), [1.0]),
        lambda: tf.gather_nd(tf.zeros([3]), [[1.0]]),
        lambda: tf.one_hot([1.0], 3),
        lambda: tf.unsorted_segment_sum(tf.zeros([2]), [0.0, 1.0], 2),
        lambda: tf.scatter_nd([[1.0]], [1.0], [3]),
    ):
        with pytest.raises(TypeError, match="indices|segment_ids"):
            build()


def test_one_hot_refuses_a_negative_depth(sess) -> None:
    with pytest.raises(ValueError, match="depth must be non-negative, got -3"):
        tf.one_hot([0, 1], -3)
    depth = tf.placeholder(tf.int32, [])
    y = tf.one_hot([0, 1], depth, name="hot")
    with pytest.raises(
        tf.errors.InvalidArgumentError, match=r"(?s)depth must be non-negative, got -1.*node hot "
    ):
        sess.run(y, {depth: -1})
    assert sess.run(y, {depth: 2}).tolist() == [[1.0, 0.0], [0.0, 1.0]]


def test_unknown_shape_gradients(sess):
    # Gradients built for placeholders of unknown dims use shape() at run time.
    x = tf.placeholder(tf.float64, [None, None])
    y = tf.concat([tf.tile(x, [1, 2]), tf.pad(x[1:], [[0, 1], [1, 1]])], 0)
    y = tf.reshape(tf.transpose(y), [-1])
    (g,) = tf.gradients(tf.reduce_sum(y * y), x)
    value = rand(3, 2)

    def ref(a):
        b = anp.concatenate([anp.tile(a, (1, 2)), anp.pad(a[1:], [[0, 1], [1, 1]], "constant")], 0)
        return anp.sum(anp.reshape(anp.transpose(b), -1) ** 2)

    import autograd

    np.testing.assert_allclose(sess.run(g, {x: value}), autograd.grad(ref)(value))
