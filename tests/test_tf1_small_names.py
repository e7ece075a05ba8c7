"""Small TF1 names (issue 32) against ``tensorflow.compat.v1``: the unsigned dtypes
through placeholders, casts, constants and GraphDefs; ``tf.dtypes.complex``; the complex
casts; ``get_logger``; ``convert_to_tensor_or_sparse_tensor``; ``tf.nest``;
``tf.data.AUTOTUNE``; ``compat.forward_compatibility_horizon``."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import dataflow as tf

pytestmark = pytest.mark.tf
tf1 = pytest.importorskip("tensorflow").compat.v1
tf1.disable_eager_execution()


@pytest.mark.parametrize("name", ["uint16", "uint32", "uint64"])
def test_unsigned_dtypes_feed_cast_and_cross_graph_defs(name) -> None:
    dtype = getattr(tf, name)
    assert dtype is getattr(tf.dtypes, name) and dtype.is_unsigned and dtype.is_integer
    assert dtype.as_numpy_dtype == np.dtype(name) and tf.as_dtype(name) is dtype
    big = np.array([0, 7, np.iinfo(name).max], dtype=name)
    with tf.Graph().as_default() as graph:
        x = tf.placeholder(dtype, [3], name="x")
        c = tf.constant(big, name="c")
        y = tf.cast(x, tf.float64, name="y")
        back = tf.cast(tf.constant([1.0, 2.5]), dtype)
        with tf.Session() as sess:
            got_x, got_c, got_y, got_back = sess.run([x, c, y, back], {x: big})
        graph_def = graph.as_graph_def()
    assert got_x.dtype == np.dtype(name) and (got_x == big).all() and (got_c == big).all()
    np.testing.assert_array_equal(got_y, big.astype(np.float64))
    with tf1.Graph().as_default():
        theirs_back = tf1.Session().run(tf1.cast(tf1.constant([1.0, 2.5]), getattr(tf1, name)))
    np.testing.assert_array_equal(got_back, theirs_back)
    with tf1.Graph().as_default():  # TF imports our GraphDef and reads the constant
        tf1.import_graph_def(tf1.GraphDef.FromString(graph_def.SerializeToString()), name="")
        with tf1.Session() as sess:
            np.testing.assert_array_equal(sess.run("c:0"), big)


def test_dtypes_complex_and_complex_casts() -> None:
    assert tf.dtypes.complex is tf.complex
    with tf.Graph().as_default(), tf.Session() as sess:
        z = tf.dtypes.complex(tf.constant([1.0, 2.0]), tf.constant([3.0, -1.0]))
        c64, c128 = tf.to_complex64(tf.constant([1.5])), tf.to_complex128(tf.constant([2]))
        assert (c64.dtype, c128.dtype) == (tf.complex64, tf.complex128)
        assert c64.op.name == "ToComplex64" and c128.op.name == "ToComplex128"
        np.testing.assert_array_equal(sess.run(z), [1 + 3j, 2 - 1j])
        np.testing.assert_array_equal(sess.run([c64, c128]), [[1.5 + 0j], [2 + 0j]])


def test_get_logger_is_tf_logging_s_logger() -> None:
    assert isinstance(tf.get_logger(), logging.Logger)
    assert tf.get_logger() is tf.logging.get_logger()


def test_convert_to_tensor_or_sparse_tensor_matches_tf1() -> None:
    for lib in (tf, tf1):
        with lib.Graph().as_default():
            value = lib.SparseTensorValue([[0, 1]], [3.0], [2, 2])
            sparse = lib.convert_to_tensor_or_sparse_tensor(value)
            assert isinstance(sparse, lib.SparseTensor) and sparse.dtype == lib.float32
            dense = lib.convert_to_tensor_or_sparse_tensor([1, 2], dtype=lib.int64)
            assert dense.dtype == lib.int64
            with pytest.raises(RuntimeError, match="Sparse dtype"):
                lib.convert_to_tensor_or_sparse_tensor(sparse, dtype=lib.int32)


def test_nest_matches_tf1() -> None:
    structure = {"b": (1, [2, 3]), "a": 4}  # keys out of order: TF1 sorts them
    for name in ("flatten", "is_nested"):
        assert getattr(tf.nest, name)(structure) == getattr(tf1.nest, name)(structure)
    doubled = tf.nest.map_structure(lambda v: v * 2, structure)
    assert doubled == tf1.nest.map_structure(lambda v: v * 2, structure)
    assert tf.nest.pack_sequence_as(structure, [9, 8, 7, 6]) == tf1.nest.pack_sequence_as(
        structure, [9, 8, 7, 6]
    )
    with pytest.raises((ValueError, TypeError)):
        tf.nest.assert_same_structure((1, 2), [1, 2, 3])


def test_data_autotune_and_forward_compatibility_horizon() -> None:
    assert tf.data.AUTOTUNE == tf1.data.AUTOTUNE == tf.data.experimental.AUTOTUNE
    with tf.compat.forward_compatibility_horizon(2030, 1, 1):
        assert tf.compat.forward_compatible(2029, 12, 31)
    with pytest.raises(ValueError):
        with tf.compat.forward_compatibility_horizon(2021, 2, 30):
            pass
