"""More of TF1's top-level framework names of issue 32 (``tf.OpError``,
``tf.guarantee_const``, ``tf.timestamp``, ``tf.fingerprint``, ...), each written as a TF1
program and run on dataflow and on ``tensorflow.compat.v1``."""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import dataflow

pytestmark = pytest.mark.tf


@pytest.fixture(scope="module")
def tf1() -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tf1 = pytest.importorskip("tensorflow.compat.v1")
    tf1.disable_eager_execution()
    return tf1


def both(tf1: Any, program: Callable[[Any], Any]) -> tuple[Any, Any]:
    """``program(tf)`` in a fresh graph of each library; its fetches run in a session."""
    out = []
    for tf in (dataflow, tf1):
        with tf.Graph().as_default():
            fetches = program(tf)
            with tf.Session() as sess:
                out.append(sess.run(fetches))
    return out[0], out[1]


def test_op_error_is_the_base_of_the_error_classes(tf1: Any) -> None:
    assert dataflow.OpError is dataflow.errors.OpError
    assert issubclass(dataflow.errors.InvalidArgumentError, dataflow.OpError)
    with dataflow.Graph().as_default():
        x = dataflow.placeholder(dataflow.float32, [2])
        with dataflow.Session() as sess, pytest.raises(dataflow.OpError) as info:
            sess.run(x)
    assert info.value.error_code == tf1.errors.INVALID_ARGUMENT
    assert isinstance(info.value, dataflow.errors.InvalidArgumentError)


def test_guarantee_const_is_its_input_and_has_no_gradient(tf1: Any) -> None:
    def program(tf: Any) -> Any:
        x = tf.constant([[1.0, -2.0], [3.5, 4.0]])
        y = tf.guarantee_const(x)
        assert y.shape.as_list() == [2, 2] and y.dtype == tf.float32
        assert y.op.type == "GuaranteeConst"
        with pytest.raises(LookupError):
            tf.gradients(y * 2.0, x)
        return y * 3.0, tf.gradients(tf.stop_gradient(y) * 2.0 + x, x)

    ours, theirs = both(tf1, program)
    np.testing.assert_array_equal(ours[0], theirs[0])
    np.testing.assert_array_equal(ours[1][0], theirs[1][0])


def test_timestamp_reads_the_clock_when_it_runs(tf1: Any) -> None:
    for tf in (dataflow, tf1):
        with tf.Graph().as_default():
            ts = tf.timestamp()
            assert ts.dtype == tf.float64 and ts.shape.as_list() == []
            built = time.time()
            time.sleep(0.05)
            with tf.Session() as sess:
                first = sess.run(ts)
                time.sleep(0.05)
                before = time.time()
                second = sess.run(ts)
                after = time.time()
            assert first > built + 0.04  # read at run time, not at build time
            assert before - 1e-3 <= second <= after + 1e-3
            assert second > first


@pytest.mark.parametrize(
    "value, dtype",
    [
        ([[1, 2], [3, 4]], "int32"),
        ([[[1.5, 2.0], [0.0, -1.0]], [[7.0, 8.0], [9.0, 1e30]]], "float64"),
        ([0.5, -3.25, 9.0], "float32"),
        ([True, False], "bool"),
        (np.arange(200, dtype=np.int64).reshape(2, 100).tolist(), "int64"),
        ([["a", "bc"], ["d", "e"]], "string"),
        (["abc", "x" * 70, ""], "string"),
    ],
)
def test_fingerprint_matches_tf(tf1: Any, value: Any, dtype: str) -> None:
    def program(tf: Any) -> Any:
        f = tf.fingerprint(tf.constant(value, dtype=getattr(tf, dtype)))
        assert f.dtype == tf.uint8 and f.shape.as_list() == [len(value), 8]
        return f

    ours, theirs = both(tf1, program)
    assert ours.dtype == np.uint8
    np.testing.assert_array_equal(ours, theirs)


def test_fingerprint_refuses_a_scalar_and_other_methods() -> None:
    with dataflow.Graph().as_default():
        with pytest.raises(ValueError, match="rank"):
            dataflow.fingerprint(dataflow.constant(3))
        with pytest.raises(ValueError, match="method"):
            dataflow.fingerprint(dataflow.constant([3]), method="md5")
        p = dataflow.placeholder(dataflow.int32, [None, 3])
        assert dataflow.fingerprint(p).shape.as_list() == [None, 8]


def test_vectorized_map_values_dtypes_and_shapes(tf1: Any) -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 3, 2)).astype(np.float32)
    b = rng.integers(0, 5, (4,)).astype(np.int32)

    def program(tf: Any) -> Any:
        x = tf.constant(a)
        k = tf.constant(b)
        w = tf.constant(np.float32(1.5))
        out = tf.vectorized_map(
            lambda e: (tf.reduce_sum(e[0] * w, axis=1), tf.cast(e[1], tf.float64) * 2.0),
            (x, k),
        )
        mat = tf.vectorized_map(lambda m: tf.matmul(m, m, transpose_b=True), x)
        p = tf.placeholder(tf.float32, [None, 2])
        sq = tf.vectorized_map(lambda r: r * r, p)
        assert out[0].shape.as_list() == [4, 3] and out[0].dtype == tf.float32
        assert out[1].shape.as_list() == [4] and out[1].dtype == tf.float64
        assert mat.shape.as_list() == [4, 3, 3]
        assert sq.shape.as_list() == [None, 2]
        grad = tf.gradients(tf.reduce_sum(mat), x)[0]
        return out, mat, grad

    ours, theirs = both(tf1, program)
    np.testing.assert_allclose(ours[0][0], theirs[0][0], rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(ours[0][1], theirs[0][1])
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-5, atol=1e-5)


def test_vectorized_map_refuses_a_scalar() -> None:
    with dataflow.Graph().as_default(), pytest.raises(ValueError):
        dataflow.vectorized_map(lambda e: e, dataflow.constant(1.0))


def conversion_program(tf: Any) -> Any:
    """Registers conversions for two user classes in ``tf`` and converts them."""

    class Meters:
        def __init__(self, values: Any) -> None:
            self.values = values

    class Feet(Meters):
        pass

    calls: list[str] = []

    def general(value: Any, dtype: Any = None, name: Any = None, as_ref: bool = False) -> Any:
        calls.append("general")
        assert as_ref is False
        return tf.constant(value.values, dtype=dtype or tf.float32, name=name)

    def feet(value: Any, dtype: Any = None, name: Any = None, as_ref: bool = False) -> Any:
        calls.append("feet")
        if dtype is not None and dtype != tf.float32:
            return NotImplemented
        return tf.constant([v * 0.3048 for v in value.values], dtype=tf.float32, name=name)

    tf.register_tensor_conversion_function(Meters, general, priority=100)
    tf.register_tensor_conversion_function(Feet, feet, priority=50)
    with tf.Graph().as_default():
        a = tf.convert_to_tensor(Meters([1.0, 2.0]))
        b = tf.add(Feet([10.0, 20.0]), 1.0)
        c = tf.convert_to_tensor(Feet([3.0]), dtype=tf.float64)
        assert a.dtype == tf.float32 and c.dtype == tf.float64
        with tf.Session() as sess:
            fetched = sess.run([a, b, c])
    seen = list(calls)

    class Bad:
        pass

    tf.register_tensor_conversion_function(Bad, lambda v, dtype=None, name=None, as_ref=False: 3)
    with tf.Graph().as_default(), pytest.raises(RuntimeError):
        tf.convert_to_tensor(Bad())
    for base in (int, np.ndarray, np.float32):
        with pytest.raises(TypeError):
            tf.register_tensor_conversion_function(base, general)
    with pytest.raises(TypeError):
        tf.register_tensor_conversion_function("Meters", general)
    return fetched, seen


def test_register_tensor_conversion_function(tf1: Any) -> None:
    results = [conversion_program(tf) for tf in (dataflow, tf1)]
    (ours, our_calls), (theirs, their_calls) = results
    assert our_calls == their_calls == ["general", "feet", "feet", "general"]
    for x, y in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(x, y, rtol=1e-6)


def test_assert_variables_initialized(tf1: Any) -> None:
    outcomes = []
    for tf in (dataflow, tf1):
        with tf.Graph().as_default():
            assert tf.assert_variables_initialized() is None
            v = tf.Variable([[1.0, 2.0]], name="v", use_resource=False)  # TF 1.15 default
            w = tf.Variable(3, name="w", use_resource=False)
            every = tf.assert_variables_initialized()
            one = tf.assert_variables_initialized([w])
            assert every.dtype == tf.int32 and every.shape.as_list() == [2]
            assert one.shape.as_list() == []
            with tf.Session() as sess:
                with pytest.raises(tf.errors.FailedPreconditionError, match="v"):
                    sess.run(every)
                sess.run(w.initializer)
                got_one = sess.run(one)
                with pytest.raises(tf.errors.FailedPreconditionError):
                    sess.run(every)
                sess.run(v.initializer)
                outcomes.append((got_one, sess.run(every)))
    (ours_one, ours), (theirs_one, theirs) = outcomes
    assert ours_one == theirs_one == 0
    np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_array_equal(ours, [2, 0])


def test_py_function_passes_values_with_numpy(tf1: Any) -> None:
    def norm_and_count(x: Any, k: Any) -> Any:
        values = x.numpy()
        assert isinstance(values, np.ndarray)
        return np.sqrt((values * values).sum(axis=1)), k.numpy() + 1

    def program(tf: Any) -> Any:
        x = tf.constant([[3.0, 4.0], [6.0, 8.0]])
        k = tf.constant(4, dtype=tf.int64)
        norms, count = tf.py_function(norm_and_count, [x, k], [tf.float32, tf.int64])
        half = tf.py_function(lambda v: v.numpy().sum() * 0.5, [x], tf.float32)
        assert norms.dtype == tf.float32 and count.dtype == tf.int64
        assert half.dtype == tf.float32
        return norms, count, half

    ours, theirs = both(tf1, program)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-6)
    assert ours[1] == theirs[1] == 5
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-6)
    assert ours[0].dtype == np.float32 and np.asarray(ours[2]).dtype == np.float32


def test_py_function_gradient_is_refused_not_silently_none() -> None:
    with dataflow.Graph().as_default():
        x = dataflow.constant([1.0, 2.0])
        y = dataflow.py_function(lambda v: v.numpy() * 2.0, [x], dataflow.float32)
        with pytest.raises(LookupError, match="py_function"):
            dataflow.gradients(y, x)
        assert dataflow.gradients(dataflow.stop_gradient(y) + x, x)[0] is not None
