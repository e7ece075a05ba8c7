"""``serialize_sparse``, ``serialize_many_sparse`` and ``deserialize_many_sparse``
against ``tensorflow.compat.v1``: the serialized parts (parsed back as tensors), the
stacked result, round trips in both directions between TF's strings and ours, static
shapes and errors."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow

pytestmark = pytest.mark.tf

INDICES = np.array([[0, 0, 1], [0, 2, 0], [2, 1, 1], [2, 1, 3], [3, 0, 0]], np.int64)
VALUES = np.array([1.5, -2.0, 3.25, 4.0, 5.5], np.float32)
SHAPE = np.array([4, 3, 5], np.int64)
WORDS = np.array([b"a", b"", b"cd", b"e", b"fgh"], object)


def _program(tf):
    sp = tf.SparseTensor(INDICES, VALUES, SHAPE)
    words = tf.SparseTensor(INDICES, WORDS, SHAPE)
    many = tf.io.serialize_many_sparse(sp)
    back = tf.io.deserialize_many_sparse(many, tf.float32, rank=3)
    words_back = tf.deserialize_many_sparse(tf.serialize_many_sparse(words), tf.string)
    return [
        tf.io.serialize_sparse(sp),
        tf.serialize_sparse(words),
        many,
        back.indices,
        back.values,
        back.dense_shape,
        words_back.indices,
        words_back.values,
        words_back.dense_shape,
    ]


def _parsed(tf, sess, strings, dtypes):
    flat = strings.reshape(-1)
    outs = [tf.io.parse_tensor(s, d) for s, d in zip(flat, dtypes * (flat.size // len(dtypes)))]
    return sess.run(outs)


def test_matches_tf1() -> None:
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    with tf1.Graph().as_default():
        with tf1.Session() as sess:
            expected = sess.run(_program(tf1))
    with dataflow.Graph().as_default():
        outs = _program(dataflow)
        assert outs[0].shape.as_list() == [3]
        assert outs[2].shape.as_list() == [None, 3]
        assert outs[3].shape.as_list() == [None, 3]
        assert outs[5].shape.as_list() == [3]
        with dataflow.Session() as sess:
            got = sess.run(outs)
    for i in (3, 4, 5, 6, 7, 8):
        np.testing.assert_array_equal(got[i], expected[i])
    kinds = {0: ["int64", "float32", "int64"], 1: ["int64", "string", "int64"]}
    kinds[2] = kinds[0]
    for i, names in kinds.items():
        assert got[i].shape == expected[i].shape
        with tf1.Graph().as_default(), tf1.Session() as sess:
            types = [getattr(tf1, n) for n in names]
            ours, theirs = _parsed(tf1, sess, got[i], types), _parsed(tf1, sess, expected[i], types)
        for a, b in zip(ours, theirs):
            np.testing.assert_array_equal(a, b)


def test_reads_tf1_strings() -> None:
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    with tf1.Graph().as_default(), tf1.Session() as sess:
        theirs = sess.run(tf1.serialize_many_sparse(tf1.SparseTensor(INDICES, VALUES, SHAPE)))
    with dataflow.Graph().as_default(), dataflow.Session() as sess:
        back = sess.run(dataflow.io.deserialize_many_sparse(theirs, dataflow.float32))
    np.testing.assert_array_equal(back.indices, INDICES)
    np.testing.assert_array_equal(back.values, VALUES)
    np.testing.assert_array_equal(back.dense_shape, SHAPE)


def test_errors() -> None:
    with dataflow.Graph().as_default():
        sp = dataflow.SparseTensor(INDICES, VALUES, SHAPE)
        with pytest.raises(ValueError):
            dataflow.io.deserialize_many_sparse(dataflow.constant(["a", "b"]), dataflow.float32)
        with pytest.raises(TypeError):
            dataflow.io.serialize_sparse(sp, out_type=dataflow.int32)
        wrong = dataflow.io.deserialize_many_sparse(
            dataflow.io.serialize_many_sparse(sp), dataflow.int32
        )
        vector = dataflow.io.serialize_many_sparse(dataflow.SparseTensor([[1]], [1.0], [3]))
        with dataflow.Session() as sess:
            with pytest.raises(dataflow.errors.InvalidArgumentError):
                sess.run(wrong.values)
            with pytest.raises(dataflow.errors.InvalidArgumentError):
                sess.run(vector)
