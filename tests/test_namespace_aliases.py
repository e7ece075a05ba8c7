"""The namespace aliases TF1 code uses (issue 32): ``tf.dtypes``, ``tf.queue``,
``tf.manip``, ``tf.version`` and ``tf.bitwise``.

Each namespace holds the names TF1's does (those dataflow provides), as the same objects
as the top level where TF1 has both; a small program over each namespace gives TF1's
values; a name TF1 has that dataflow lacks fails with ``NotProvidedError``. The bitwise
ops' values and static shapes are checked row by row in the op table too
(``tests/ops/specs_math.py``, ``BITWISE``).
"""

from __future__ import annotations

import numpy as np
import pytest

import dataflow as tf
from dataflow._util.missing_names import NotProvidedError, tf1_names

NAMESPACES = ["dtypes", "queue", "manip", "version", "bitwise"]
# TF1 names left out, each with why (docs/api.md lists them).
LEFT_OUT = {
    "dtypes": {
        "QUANTIZED_DTYPES",
        "qint8",
        "qint16",
        "qint32",
        "quint8",
        "quint16",  # no quantized ops
        "bfloat16",  # a dtype dataflow does not have (numpy has none)
        "experimental",  # TF 2's
    },
    "queue": set(),
    "manip": set(),
    "version": set(),
    "bitwise": set(),
}


def _tf1():
    return pytest.importorskip("tensorflow.compat.v1")


def _run(lib, build):
    with lib.Graph().as_default():
        fetches = build(lib)
        with lib.Session() as sess:
            return sess.run(fetches)


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_each_namespace_has_tf1s_names_but_those_left_out(namespace: str) -> None:
    tf1 = _tf1()
    theirs = {n for n in dir(getattr(tf1, namespace)) if not n.startswith("_")}
    ours = {n for n in dir(getattr(tf, namespace)) if not n.startswith("_")}
    assert theirs == set(tf1_names()[namespace])
    assert ours == theirs - LEFT_OUT[namespace]
    for name in sorted(LEFT_OUT[namespace]):
        with pytest.raises(NotProvidedError, match=f"tf.{namespace}.{name} is a TensorFlow 1"):
            getattr(getattr(tf, namespace), name)
    # The same objects as the top level, where TF1 has the name at the top too.
    for name in sorted(ours & set(tf1_names()[""])):
        if hasattr(tf, name):  # a top-level name dataflow provides
            assert getattr(getattr(tf, namespace), name) is getattr(tf, name), name


@pytest.mark.parametrize("lib_name", ["dataflow", "dataflow.compat.v1"])
def test_the_namespaces_are_in_compat_v1(lib_name: str) -> None:
    import importlib

    lib = importlib.import_module(lib_name)
    for namespace in NAMESPACES:
        assert getattr(lib, namespace) is getattr(tf, namespace)


def _dtypes_program(tf):
    x = tf.constant([1.7, -2.2, 3.5], tf.dtypes.float32)
    return {
        "cast": tf.dtypes.cast(x, tf.dtypes.int32),
        "as_dtype": tf.zeros([2], tf.dtypes.as_dtype(np.int16)),
        "double": tf.dtypes.cast(x, tf.dtypes.double),
    }


def test_dtypes_program_matches_tf1() -> None:
    tf1 = _tf1()
    ours, theirs = _run(tf, _dtypes_program), _run(tf1, _dtypes_program)
    for key in theirs:
        assert ours[key].dtype == theirs[key].dtype, key
        np.testing.assert_array_equal(ours[key], theirs[key])
    for name in ("float32", "int64", "uint8", "bool", "complex128", "string", "half"):
        assert getattr(tf.dtypes, name).name == getattr(tf1.dtypes, name).name
        ours_np, theirs_np = getattr(tf.dtypes, name), getattr(tf1.dtypes, name)
        assert np.dtype(ours_np.as_numpy_dtype) == np.dtype(theirs_np.as_numpy_dtype)
    assert isinstance(tf.dtypes.float32, tf.dtypes.DType)


def _queue_program(tf):
    q = tf.queue.FIFOQueue(4, [tf.float32], shapes=[[2]])
    enqueue = q.enqueue_many([[[1.0, 2.0], [3.0, 4.0]]])
    with tf.control_dependencies([enqueue]):
        first = q.dequeue()
    padded = tf.queue.PaddingFIFOQueue(2, [tf.int32], shapes=[[None]])
    with tf.control_dependencies([padded.enqueue([[1, 2, 3]])]):
        second = padded.enqueue([[4]])  # after the first: a queue keeps the order
    with tf.control_dependencies([second]):
        batch = padded.dequeue_many(2)
    shuffled = tf.queue.RandomShuffleQueue(4, 0, [tf.int32], shapes=[[]], seed=3)
    with tf.control_dependencies([shuffled.enqueue_many([[5, 6, 7]])]):
        size = shuffled.size()
    return {"first": first, "batch": batch, "size": size}


def test_queue_program_matches_tf1() -> None:
    tf1 = _tf1()
    ours, theirs = _run(tf, _queue_program), _run(tf1, _queue_program)
    for key in theirs:
        np.testing.assert_array_equal(ours[key], theirs[key])
    assert issubclass(tf.queue.FIFOQueue, tf.queue.QueueBase)
    assert issubclass(tf.queue.RandomShuffleQueue, tf.queue.QueueBase)


def _manip_program(tf):
    x = tf.reshape(tf.range(6), [2, 3])
    return {
        "reshape": tf.manip.reshape(x, [3, 2]),
        "tile": tf.manip.tile(x, [2, 1]),
        "reverse": tf.manip.reverse(x, [1]),
        "gather_nd": tf.manip.gather_nd(x, [[1, 2], [0, 0]]),
        "scatter_nd": tf.manip.scatter_nd([[1], [3]], [9, 8], [5]),
        "roll": tf.manip.roll(x, shift=[1, -1], axis=[0, 1]),
    }


def test_manip_program_matches_tf1() -> None:
    tf1 = _tf1()
    ours, theirs = _run(tf, _manip_program), _run(tf1, _manip_program)
    for key in theirs:
        assert ours[key].dtype == theirs[key].dtype, key
        np.testing.assert_array_equal(ours[key], theirs[key], err_msg=key)


def _bitwise_program(tf):
    x = tf.constant([12, -7, 255, 0], tf.int64)
    y = tf.constant([10, 3, 1, -1], tf.int64)
    return {
        "and": tf.bitwise.bitwise_and(x, y),
        "or": tf.bitwise.bitwise_or(x, y),
        "xor": tf.bitwise.bitwise_xor(x, y),
        "invert": tf.bitwise.invert(tf.constant([0, 1, 200], tf.uint8)),
        "left": tf.bitwise.left_shift(x, tf.constant([1, 2, 63, 70], tf.int64)),
        "right": tf.bitwise.right_shift(x, tf.constant([2, 1, 70, -4], tf.int64)),
    }


def _bitwise_program_broadcast(tf):
    a = tf.constant([[6], [3]], tf.int8)
    b = tf.constant([5, 2, 1], tf.int8)
    return {"and": tf.bitwise.bitwise_and(a, b), "lshift": tf.bitwise.left_shift(a, b)}


def test_bitwise_program_matches_tf1() -> None:
    tf1 = _tf1()
    for program in (_bitwise_program, _bitwise_program_broadcast):
        ours, theirs = _run(tf, program), _run(tf1, program)
        for key in theirs:
            assert ours[key].dtype == theirs[key].dtype, key
            np.testing.assert_array_equal(ours[key], theirs[key], err_msg=key)


def test_bitwise_ops_refuse_floats_and_have_no_gradient() -> None:
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="BitwiseAnd.*integer"):
            tf.bitwise.bitwise_and(tf.constant([1.0]), tf.constant([2.0]))
        with pytest.raises(TypeError, match="int32|int64"):
            tf.bitwise.bitwise_or(tf.constant([1]), tf.constant([2], tf.int64))
        x = tf.placeholder(tf.int32, [3])
        assert tf.gradients(tf.cast(tf.bitwise.invert(x), tf.float32), x) == [None]


def test_version_is_tf_1_15s_api_and_graph_def_versions() -> None:
    tf1 = _tf1()
    assert tf.version.VERSION == "1.15.0"
    assert tf.VERSION is tf.version.VERSION
    assert tf.version.GIT_VERSION == f"dataflow-{tf.__version__}"
    assert "Python" in tf.version.COMPILER_VERSION
    assert isinstance(tf1.version.GRAPH_DEF_VERSION, int)  # TF 2.x's is newer: 1.15's is 134
    assert tf.version.GRAPH_DEF_VERSION == 134
    assert tf.version.GRAPH_DEF_VERSION_MIN_CONSUMER == tf1.version.GRAPH_DEF_VERSION_MIN_CONSUMER
    assert tf.version.GRAPH_DEF_VERSION_MIN_PRODUCER == tf1.version.GRAPH_DEF_VERSION_MIN_PRODUCER
    with tf.Graph().as_default() as g:
        tf.constant(1.0)
        assert g.as_graph_def().versions.producer == tf.version.GRAPH_DEF_VERSION
