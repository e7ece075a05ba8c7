"""The rest of ``tf.debugging`` against ``tensorflow.compat.v1``: rank, shape, dtype
and value checks decide at build time what static shapes and dtypes decide (same error
class, same message), and otherwise fail the step with ``InvalidArgumentError``."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow

pytestmark = pytest.mark.tf

tf1 = pytest.importorskip("tensorflow.compat.v1")

BOTH = [dataflow, tf1]


def build_error(tf, build):
    with tf.Graph().as_default():
        try:
            build(tf)
        except (ValueError, TypeError) as e:
            return type(e), str(e)
    return None, None


STATIC_FAILURES = {
    "rank": lambda tf: tf.debugging.assert_rank(tf.zeros([2, 3]), 1),
    "rank_message": lambda tf: tf.assert_rank(tf.zeros([2]), 2, message="need a matrix"),
    "rank_at_least": lambda tf: tf.debugging.assert_rank_at_least(tf.zeros([2]), 2),
    "rank_in": lambda tf: tf.debugging.assert_rank_in(tf.zeros([2]), [0, 2]),
    "rank_not_scalar": lambda tf: tf.debugging.assert_rank(tf.zeros([2]), [1]),
    "scalar": lambda tf: tf.debugging.assert_scalar(tf.zeros([2]), message="m"),
    "type": lambda tf: tf.debugging.assert_type(tf.zeros([2]), tf.int32),
    "integer": lambda tf: tf.debugging.assert_integer(tf.zeros([2])),
    "same_float_dtype": lambda tf: tf.debugging.assert_same_float_dtype(
        [tf.zeros([2]), tf.zeros([2], tf.float64)]
    ),
    "same_float_dtype_int": lambda tf: tf.debugging.assert_same_float_dtype(
        [tf.zeros([2], tf.int32)]
    ),
    "proper_iterable": lambda tf: tf.debugging.assert_proper_iterable(np.zeros(3)),
    "proper_iterable_str": lambda tf: tf.debugging.assert_proper_iterable("abc"),
    "not_iterable": lambda tf: tf.debugging.assert_proper_iterable(3),
    "non_decreasing_string": lambda tf: tf.debugging.is_non_decreasing(tf.constant(["a"])),
    "shapes_size": lambda tf: tf.debugging.assert_shapes(
        [(tf.zeros([2, 3]), ("N", "Q")), (tf.zeros([4, 5]), ("N", "D"))]
    ),
    "shapes_explicit": lambda tf: tf.debugging.assert_shapes([(tf.zeros([2, 3]), (2, 4))]),
    "shapes_rank": lambda tf: tf.debugging.assert_shapes([(tf.zeros([2, 3]), ("N",))]),
    "shapes_ellipsis": lambda tf: tf.debugging.assert_shapes([(tf.zeros([2, 3]), ("N", ...))]),
    "shapes_not_iterable": lambda tf: tf.debugging.assert_shapes([(tf.zeros([2]), 3)]),
}


@pytest.mark.parametrize("case", sorted(STATIC_FAILURES))
def test_static_failures_like_tf(case):
    ours, theirs = (build_error(tf, STATIC_FAILURES[case]) for tf in BOTH)
    assert ours[0] is not None and ours[0] is theirs[0], (ours, theirs)
    assert ours[1] == theirs[1]


STATIC_PASSES = {
    "rank": lambda tf: tf.debugging.assert_rank(tf.zeros([2, 3]), 2),
    "rank_at_least": lambda tf: tf.assert_rank_at_least(tf.zeros([2, 3]), 1),
    "rank_in": lambda tf: tf.assert_rank_in(tf.zeros([2, 3]), [1, 2]),
    "type": lambda tf: tf.assert_type(tf.zeros([2]), tf.float32),
    "integer": lambda tf: tf.assert_integer(tf.zeros([2], tf.int64)),
    "shapes": lambda tf: tf.debugging.assert_shapes(
        [
            (tf.zeros([2, 3]), ("N", "Q")),
            (tf.zeros([2]), ("N",)),
            (tf.zeros([5, 2, 3]), ("*", "N", 3)),
        ]
    ),
}


@pytest.mark.parametrize("case", sorted(STATIC_PASSES))
def test_static_passes_are_ops_that_run(case):
    for tf in BOTH:
        with tf.Graph().as_default():
            op = STATIC_PASSES[case](tf)
            assert isinstance(op, tf.Operation)
            with tf.Session() as sess:
                assert sess.run(op) is None


def test_scalar_returns_the_tensor_and_float_dtype_is_chosen():
    for tf in BOTH:
        with tf.Graph().as_default():
            x = tf.constant(2.0)
            assert tf.debugging.assert_scalar(x) is x
            assert tf.debugging.assert_same_float_dtype() == tf.float32
            assert tf.assert_same_float_dtype([None, x]) == tf.float32
            assert tf.assert_same_float_dtype([x], tf.float32) == tf.float32
            assert tf.assert_same_float_dtype(None, tf.float64) == tf.float64
            assert tf.debugging.is_numeric_tensor(x)
            assert not tf.is_numeric_tensor(tf.constant(True))
            assert not tf.is_numeric_tensor(2.0)
            assert tf.assert_proper_iterable([1, 2]) is None


DYNAMIC = {
    "rank": (
        lambda tf, p: tf.debugging.assert_rank(p, 2),
        [np.zeros((2, 3)), np.zeros(3)],
    ),
    "rank_at_least": (
        lambda tf, p: tf.debugging.assert_rank_at_least(p, 2),
        [np.zeros((2, 3, 1)), np.zeros(3)],
    ),
    "rank_in": (
        lambda tf, p: tf.debugging.assert_rank_in(p, [0, 3]),
        [np.zeros((2, 3, 1)), np.zeros(3)],
    ),
    "near": (
        lambda tf, p: tf.debugging.assert_near(p, np.ones(3, np.float32), rtol=0.1, atol=0.01),
        [np.float32([1.05, 0.95, 1.0]), np.float32([1.05, 0.85, 1.0])],
    ),
    "near_default_tolerance": (
        lambda tf, p: tf.assert_near(p, np.ones(3, np.float32)),
        [np.float32([1.0, 1.0, 1.0000001]), np.float32([1.0, 1.0, 1.0001])],
    ),
    "shapes_symbol": (
        lambda tf, p: tf.debugging.assert_shapes([(p, ("N", "N")), (tf.zeros([3]), ("N",))]),
        [np.zeros((3, 3)), np.zeros((3, 2))],
    ),
    "shapes_unknown_rank_leading": (
        lambda tf, p: tf.debugging.assert_shapes([(p, (..., 2, "K")), (tf.zeros([4]), ("K",))]),
        [np.zeros((5, 2, 4)), np.zeros((2, 3))],
    ),
}


@pytest.mark.parametrize("case", sorted(DYNAMIC))
def test_dynamic_checks_pass_then_fail_like_tf(case):
    build, (good, bad) = DYNAMIC[case]
    for tf in BOTH:
        with tf.Graph().as_default():
            p = tf.placeholder(tf.as_dtype(good.dtype))
            check = build(tf, p)
            with tf.Session() as sess:
                sess.run(check, {p: good})
                with pytest.raises(tf.errors.InvalidArgumentError):
                    sess.run(check, {p: bad})


@pytest.mark.parametrize(
    "values",
    [[], [3], [1, 2, 2, 5], [1, 3, 2], [[1, 2], [3, 4]], [[1, 2], [2, 4]], [2.0, 1.5]],
)
def test_monotonic_like_tf(values):
    out = []
    for tf in BOTH:
        with tf.Graph().as_default():
            x = tf.constant(values, dtype=tf.float32)
            with tf.Session() as sess:
                out.append(
                    sess.run([tf.debugging.is_non_decreasing(x), tf.is_strictly_increasing(x)])
                )
    assert out[0] == out[1]


def test_is_finite_family_and_assert_all_finite():
    for tf in BOTH:
        with tf.Graph().as_default():
            x = tf.placeholder(tf.float32, [3])
            checked = tf.debugging.assert_all_finite(x, "bad values")
            flags = [tf.debugging.is_finite(x), tf.debugging.is_inf(x), tf.debugging.is_nan(x)]
            with tf.Session() as sess:
                got = sess.run(flags, {x: [1.0, np.inf, np.nan]})
                np.testing.assert_array_equal(got, [[1, 0, 0], [0, 1, 0], [0, 0, 1]])
                np.testing.assert_array_equal(sess.run(checked, {x: [1, 2, 3]}), [1, 2, 3])
                with pytest.raises(tf.errors.InvalidArgumentError, match="bad values"):
                    sess.run(checked, {x: [1.0, np.nan, 3]})


def test_set_log_device_placement_is_the_default_of_new_sessions(capsys):
    tf = dataflow
    assert tf.debugging.get_log_device_placement() is False
    tf.debugging.set_log_device_placement(True)
    try:
        assert tf.debugging.get_log_device_placement() is True
        assert tf.ConfigProto().log_device_placement is True
        assert tf.ConfigProto(log_device_placement=False).log_device_placement is False
    finally:
        tf.debugging.set_log_device_placement(False)
    assert tf.ConfigProto().log_device_placement is False
