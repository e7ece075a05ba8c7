"""``tf.TensorArray``, ``tf.map_fn`` and ``tf.scan`` beyond the op table's rows
(``tests/ops/specs_control.py`` checks their values and gradients against autograd,
finite differences and TF1): TF1 programs that use them as TF1 users do, run in both
libraries, and the errors TF1 gives for misuse."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow as tf
from dataflow.framework import errors

RNG = np.random.default_rng(3)
ROWS = RNG.normal(size=(5, 3)).astype(np.float32)


def _run_both(program):
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    results = []
    for lib in (tf, tf1):
        with lib.Graph().as_default():
            fetches, feeds = program(lib)
            with lib.Session() as sess:
                sess.run(lib.global_variables_initializer())
                results.append(sess.run(fetches, feeds))
    return results


def _assert_same(ours, theirs, rtol=1e-5, atol=1e-6):
    if isinstance(ours, (list, tuple)):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs, strict=True):
            _assert_same(a, b, rtol, atol)
        return
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol)


# --- TF1 programs ---------------------------------------------------------------------------
def dynamic_size_until_a_condition(lib):
    """A loop whose trip count is known only at run time, writing into a growing array."""
    x = lib.placeholder(lib.float32, [None, 3])
    limit = lib.placeholder(lib.float32, [])
    out = lib.TensorArray(lib.float32, size=0, dynamic_size=True)

    def body(i, total, out):
        row = x[i]
        return i + 1, total + lib.reduce_sum(row * row), out.write(i, row * total)

    def keep_going(i, total, out):
        return lib.logical_and(i < lib.shape(x)[0], total < limit)

    n, total, out = lib.while_loop(keep_going, body, [0, lib.constant(0.0), out])
    stacked = out.stack()
    grad = lib.gradients(lib.reduce_sum(stacked * stacked), x)[0]
    return [n, total, stacked, out.size(), grad], {x: ROWS, limit: 6.0}


def unwritten_elements_read_as_zeros(lib):
    ta = lib.TensorArray(lib.float32, size=4, element_shape=[3])
    ta = ta.write(1, lib.constant(ROWS[1])).write(3, lib.constant(ROWS[3]))
    return [ta.stack(), ta.read(0), ta.gather([3, 2])], {}


def map_fn_over_a_structure(lib):
    x = lib.placeholder(lib.float32, [None, 3])
    w = lib.get_variable("w", initializer=lib.constant(np.linspace(0.5, 1.5, 3, dtype=np.float32)))
    labels = lib.constant(np.arange(5, dtype=np.int32))

    def per_row(pair):
        row, label = pair
        return lib.reduce_sum(row * w) + lib.cast(label, lib.float32), lib.tanh(row) * w

    sums, squashed = lib.map_fn(per_row, (x, labels), dtype=(lib.float32, lib.float32))
    loss = lib.reduce_sum(sums * sums) + lib.reduce_sum(squashed)
    train = lib.train.GradientDescentOptimizer(0.05).minimize(loss)
    with lib.control_dependencies([train]):
        after = lib.identity(w.read_value())
    return [sums, squashed, lib.gradients(loss, x)[0], after], {x: ROWS}


def scan_with_a_tuple_accumulator(lib):
    x = lib.placeholder(lib.float32, [None, 3])
    initial = (lib.zeros([3]), lib.constant(1.0))

    def step(acc, row):
        total, scale = acc
        return total * 0.9 + row * scale, scale * 1.1

    totals, scales = lib.scan(step, x, initializer=initial)
    loss = lib.reduce_sum(lib.sin(totals)) + lib.reduce_sum(scales)
    return [totals, scales, lib.gradients(loss, x)[0]], {x: ROWS}


def element_shape_learnt_inside_a_loop(lib):
    x = lib.placeholder(lib.float32, [5, 3])
    out = lib.TensorArray(lib.float32, size=5)
    _, out = lib.while_loop(
        lambda i, o: i < 5, lambda i, o: (i + 1, o.write(i, x[i] * 2.0)), [0, out]
    )
    stacked = out.stack()
    return [stacked, lib.constant(stacked.shape.as_list())], {x: ROWS}


def cond_returning_an_array(lib):
    x = lib.placeholder(lib.float32, [3])
    flag = lib.placeholder(lib.bool, [])
    ta = lib.TensorArray(lib.float32, size=2).write(0, x * 2.0)
    ta = lib.cond(flag, lambda: ta.write(1, lib.sin(x)), lambda: ta.write(1, x * x))
    stacked = ta.stack()
    grad = lib.gradients(lib.reduce_sum(stacked * stacked), x)[0]
    return [stacked, grad], {x: ROWS[0], flag: False}


PROGRAMS = {
    f.__name__: f
    for f in (
        dynamic_size_until_a_condition,
        unwritten_elements_read_as_zeros,
        map_fn_over_a_structure,
        scan_with_a_tuple_accumulator,
        element_shape_learnt_inside_a_loop,
        cond_returning_an_array,
    )
}


@pytest.mark.tf
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_programs_match_tf(name):
    ours, theirs = _run_both(PROGRAMS[name])
    _assert_same(ours, theirs)


def test_a_write_returns_a_new_array_and_leaves_the_old_one():
    with tf.Graph().as_default():
        empty = tf.TensorArray(tf.float32, size=2, element_shape=[])
        one = empty.write(0, 5.0)
        two = one.write(1, 7.0)
        with tf.Session() as sess:
            values = sess.run([empty.stack(), one.stack(), two.stack(), two.identity().stack()])
    np.testing.assert_array_equal(values[0], [0.0, 0.0])
    np.testing.assert_array_equal(values[1], [5.0, 0.0])
    np.testing.assert_array_equal(values[2], [5.0, 7.0])
    np.testing.assert_array_equal(values[3], [5.0, 7.0])


# --- misuse ---------------------------------------------------------------------------------
def test_writing_past_the_end_of_a_fixed_size_array_fails_at_run_time():
    with tf.Graph().as_default():
        ta = tf.TensorArray(tf.float32, size=2).write(2, [1.0])
        with tf.Session() as sess, pytest.raises(errors.InvalidArgumentError, match="index 2"):
            sess.run(ta.stack())


def test_a_value_of_another_dtype_is_refused_when_built():
    ta = tf.TensorArray(tf.float32, size=2)
    with pytest.raises(errors.InvalidArgumentError, match="dtype is float32.*int32"):
        ta.write(0, tf.constant([1, 2]))


def test_a_value_of_another_shape_is_refused_when_built():
    ta = tf.TensorArray(tf.float32, size=2).write(0, tf.zeros([3]))
    with pytest.raises(ValueError, match="Inconsistent shapes"):
        ta.write(1, tf.zeros([4]))


def test_reading_an_unwritten_element_of_unknown_shape_says_so():
    with tf.Graph().as_default():
        ta = tf.TensorArray(tf.float32, size=3)
        with tf.Session() as sess, pytest.raises(errors.InvalidArgumentError, match="index 1"):
            sess.run(ta.read(1))


def test_stacking_elements_of_different_shapes_says_to_concat():
    with tf.Graph().as_default():
        ta = tf.TensorArray(tf.float32, size=2, infer_shape=False)
        ta = ta.write(0, tf.zeros([2])).write(1, tf.zeros([3]))
        with tf.Session() as sess:
            with pytest.raises(errors.InvalidArgumentError, match="concat"):
                sess.run(ta.stack())
            np.testing.assert_array_equal(sess.run(ta.concat()), np.zeros(5))


def test_an_array_needs_a_size():
    with pytest.raises(ValueError, match="Size must be provided"):
        tf.TensorArray(tf.float32)


def test_map_fn_and_scan_check_their_arguments():
    x = tf.zeros([3, 2])
    with pytest.raises(TypeError, match="callable"):
        tf.map_fn(None, x)
    with pytest.raises(ValueError, match="at least 1-D"):
        tf.map_fn(tf.sin, tf.constant(1.0))
    with pytest.raises(ValueError, match="structure"):
        tf.map_fn(lambda row: (row, row), x)
    with pytest.raises(ValueError, match="structure"):
        tf.scan(lambda acc, row: (acc, row), x)
    with pytest.raises(ValueError, match="first dimension"):
        tf.map_fn(lambda pair: pair[0], (x, tf.zeros([4])))


def test_map_fn_over_zero_elements_gives_an_empty_result():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 2])
        y = tf.map_fn(lambda row: row * 2.0, x)
        with tf.Session() as sess:
            assert sess.run(y, {x: np.zeros((0, 2), np.float32)}).shape == (0, 2)
