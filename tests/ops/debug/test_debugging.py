"""Debugging ops: check_numerics, Assert, Print, tf.print, the assert_* family."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow as tf
from dataflow.ops.debug.debugging import format_legacy, format_value


# --- check_numerics -------------------------------------------------------------------------
def test_check_numerics_passes_finite_values(sess):
    x = tf.placeholder(tf.float32, [3])
    y = tf.check_numerics(x, "x went bad")
    assert y.shape.as_list() == [3]
    np.testing.assert_array_equal(sess.run(y, {x: [1.0, 2.0, 3.0]}), [1.0, 2.0, 3.0])
    assert tf.debugging.check_numerics is tf.check_numerics


@pytest.mark.parametrize(
    "values, what",
    [([1.0, np.nan], "NaN"), ([np.inf, 1.0], "Inf"), ([np.nan, -np.inf], "Inf and NaN")],
)
def test_check_numerics_raises_with_message_and_op_name(sess, values, what):
    x = tf.placeholder(tf.float32, [2])
    y = tf.check_numerics(x * 1.0, "x went bad", name="guard")
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        sess.run(y, {x: values})
    assert f"x went bad : Tensor had {what} values" in info.value.message
    assert "guard" in info.value.message


def test_check_numerics_gradient_passes_through_and_is_checked(sess):
    x = tf.placeholder(tf.float32, [2])
    y = tf.check_numerics(x, "fwd")
    g = tf.gradients(tf.reduce_sum(y * 3.0), x)[0]
    np.testing.assert_array_equal(sess.run(g, {x: [1.0, 2.0]}), [3.0, 3.0])
    upstream = tf.placeholder(tf.float32, [2])
    g2 = tf.gradients(tf.check_numerics(x, "guarded"), x, grad_ys=upstream)[0]
    with pytest.raises(tf.errors.InvalidArgumentError, match="detected in gradient. guarded"):
        sess.run(g2, {x: [0.0, 1.0], upstream: [np.inf, 1.0]})
    with pytest.raises(TypeError):
        tf.check_numerics(tf.constant([1, 2]), "ints")


def test_add_check_numerics_ops(sess):
    x = tf.placeholder(tf.float32, [])
    y = x * 2.0  # noqa: F841 - checked through the graph
    check = tf.add_check_numerics_ops()
    sess.run(check, {x: 1.0})
    with pytest.raises(tf.errors.InvalidArgumentError, match="Tensor had"):
        sess.run(check, {x: np.inf})


# --- Assert ---------------------------------------------------------------------------------
def test_assert_passes_and_fails_with_data(sess):
    x = tf.placeholder(tf.float32, [5])
    ok = tf.Assert(tf.reduce_all(x > 0.0), ["x is bad", x, tf.constant(3)], name="my_assert")
    assert isinstance(ok, tf.Operation) and ok.type == "Assert"
    sess.run(ok, {x: np.ones(5)})
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        sess.run(ok, {x: [1.0, 2.0, -3.0, 4.0, 5.0]})
    assert "assertion failed: [x is bad] [1 2 -3...] [3]" in info.value.message
    assert "my_assert" in info.value.message
    summarized = tf.Assert(tf.constant(False), [x], summarize=5)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"\[1 2 3 4 5\]"):
        sess.run(summarized, {x: [1.0, 2.0, 3.0, 4.0, 5.0]})


def test_assert_as_control_dependency_and_inside_cond(sess):
    x = tf.placeholder(tf.float32, [])
    with tf.control_dependencies([tf.Assert(x > 0.0, [x])]):
        y = tf.identity(x * 2.0)
    assert sess.run(y, {x: 2.0}) == 4.0
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"\[-2\]"):
        sess.run(y, {x: -2.0})

    def guarded():
        tf.Assert(tf.constant(False), ["never in the untaken branch"])
        return x

    z = tf.cond(x > 0.0, lambda: x, guarded)
    assert sess.run(z, {x: 1.0}) == 1.0
    with pytest.raises(tf.errors.InvalidArgumentError, match="untaken"):
        sess.run(z, {x: -1.0})


def test_legacy_format():
    assert format_legacy(np.arange(1, 6), None) == "1 2 3..."
    assert format_legacy(np.arange(1, 4), None) == "1 2 3"
    assert format_legacy(np.array([[1, 2], [3, 4]]), 3) == "[1 2][3...]..."
    assert format_legacy(np.array([[1, 2], [3, 4]]), -1) == "[1 2][3 4]"
    assert format_legacy(np.float32(2.5), None) == "2.5"
    assert format_legacy(np.array(b"text", dtype=object), None) == "text"
    assert format_value(np.arange(1, 6), 2) == "[1 2 ... 4 5]"
    assert format_value(np.array([1.0, 2.5]), 3) == "[1 2.5]"


# --- Print / print --------------------------------------------------------------------------
def test_print_is_identity_and_writes_stderr(sess, capsys):
    x = tf.constant([1.0, 2.0, 3.0, 4.0, 5.0])
    y = tf.Print(x, [x, tf.constant(7)], message="hello: ", summarize=2)
    np.testing.assert_array_equal(sess.run(y), [1.0, 2.0, 3.0, 4.0, 5.0])
    assert capsys.readouterr().err == "hello: [1 2...][7]\n"
    once = tf.Print(x, [x], first_n=1)
    sess.run(once)
    sess.run(once)
    assert capsys.readouterr().err.count("[1 2 3...]") == 1
    g = tf.gradients(tf.reduce_sum(tf.Print(x, [x]) * 2.0), x)[0]
    np.testing.assert_array_equal(sess.run(g), [2.0] * 5)


def test_tf_print(sess, capsys, tmp_path):
    x = tf.constant([1, 2, 3, 4, 5])
    op = tf.print("val:", x, {"a": tf.constant(1)}, summarize=2)
    assert isinstance(op, tf.Operation)
    sess.run(op)
    assert capsys.readouterr().err == "val: [1 2 ... 4 5] {'a': 1}\n"
    import sys

    sess.run(tf.print("out", tf.constant(2.5), output_stream=sys.stdout, sep="|", end="!"))
    assert capsys.readouterr().out == "out|2.5!"
    path = tmp_path / "log.txt"
    sess.run(tf.print("to file", output_stream=f"file://{path}"))
    assert path.read_text() == "to file\n"
    with pytest.raises(ValueError):
        tf.print("x", output_stream=42)


# --- assert_* -------------------------------------------------------------------------------
def test_assert_equal_static_and_dynamic(sess):
    with pytest.raises(tf.errors.InvalidArgumentError, match="did not hold"):
        tf.assert_equal(tf.constant([1, 2]), tf.constant([1, 3]), message="msg")
    x = tf.placeholder(tf.int32, [2])
    check = tf.debugging.assert_equal(x, [1, 2], message="mismatch")
    assert isinstance(check, tf.Operation)
    sess.run(check, {x: [1, 2]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="mismatch"):
        sess.run(check, {x: [1, 5]})


@pytest.mark.parametrize(
    "fn, good, bad",
    [
        (tf.assert_positive, [1.0, 2.0], [1.0, 0.0]),
        (tf.assert_negative, [-1.0], [0.0]),
        (tf.assert_non_negative, [0.0, 1.0], [-1.0]),
        (tf.assert_non_positive, [0.0, -1.0], [1.0]),
    ],
)
def test_unary_asserts(sess, fn, good, bad):
    x = tf.placeholder(tf.float32, [None])
    check = fn(x)
    sess.run(check, {x: good})
    with pytest.raises(tf.errors.InvalidArgumentError, match="did not hold"):
        sess.run(check, {x: bad})


@pytest.mark.parametrize(
    "fn, good, bad",
    [
        (tf.assert_less, [0, 1], [2, 1]),
        (tf.assert_less_equal, [2, 1], [3, 1]),
        (tf.assert_greater, [3, 4], [2, 4]),
        (tf.assert_greater_equal, [2, 4], [1, 4]),
        (tf.assert_none_equal, [1, 3], [2, 3]),
    ],
)
def test_binary_asserts(sess, fn, good, bad):
    x = tf.placeholder(tf.int32, [2])
    check = fn(x, tf.constant([2, 2]))
    sess.run(check, {x: good})
    with pytest.raises(tf.errors.InvalidArgumentError, match="did not hold"):
        sess.run(check, {x: bad})
    with pytest.raises(TypeError):
        fn(x, tf.constant([2.0, 2.0]))
