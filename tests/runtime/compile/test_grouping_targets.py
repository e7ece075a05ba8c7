"""Target ``NoOp`` ops nothing waits for leave the plan (``prune.without_grouping_targets``):
``tf.group`` and the op ``minimize`` returns still run every op they group, and a
``NoOp`` another op of the step waits for stays."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow as tf
from dataflow.runtime.compile.prune import prune, without_grouping_targets


@pytest.fixture
def sess():
    with tf.Graph().as_default(), tf.Session() as session:
        yield session


def _types(sess, fetches, feed=None):
    return sess.compiled_plan(fetches, feed).call_types


def test_a_group_leaves_the_plan_and_its_updates_run(sess):
    v, w = tf.Variable(1.0), tf.Variable(10.0)
    step = tf.group(tf.assign_add(v, 1.0), tf.assign_add(w, 2.0))
    sess.run(tf.global_variables_initializer())
    assert "NoOp" not in _types(sess, step)
    for _ in range(3):
        assert sess.run(step) is None
    assert sess.run([v, w]) == [4.0, 16.0]


def test_nested_groups_leave_the_plan(sess):
    v, w, u = tf.Variable(0.0), tf.Variable(0.0), tf.Variable(0.0)
    inner = tf.group(tf.assign_add(v, 1.0), tf.assign_add(w, 1.0))
    outer = tf.group(inner, tf.assign_add(u, 1.0))
    sess.run(tf.global_variables_initializer())
    assert "NoOp" not in _types(sess, outer)
    assert "NoOp" not in _types(sess, [outer, inner])  # both asked for: both grouping
    sess.run([outer, inner])
    sess.run(outer)
    assert sess.run([v, w, u]) == [2.0, 2.0, 2.0]


def test_a_group_another_op_waits_for_stays(sess):
    v = tf.Variable(1.0)
    step = tf.group(tf.assign_add(v, 1.0))
    with tf.control_dependencies([step]):
        after = tf.identity(v.read_value())
    sess.run(tf.global_variables_initializer())
    assert "NoOp" in _types(sess, [step, after])
    assert sess.run([step, after]) == [None, 2.0]
    assert sess.run(after) == 3.0  # (the group runs as ``after``'s control input)


def test_a_group_waiting_on_another_keeps_the_one_waited_for_only_while_needed(sess):
    v = tf.Variable(0.0)
    inner = tf.group(tf.assign_add(v, 1.0), name="inner")
    with tf.control_dependencies([inner]):
        marker = tf.no_op(name="marker")
        read = tf.identity(v.read_value())
    sess.run(tf.global_variables_initializer())
    # ``read`` waits for ``inner``: it stays; ``marker`` waits for nothing the step has.
    plan_ops = [c.op_name for s in sess.compiled_plan([marker, read]).stages for c in s.calls]
    assert "inner" in plan_ops and "marker" not in plan_ops
    assert sess.run([marker, read]) == [None, 1.0]


def test_an_empty_no_op_runs_as_an_empty_step(sess):
    nothing = tf.no_op()
    assert sess.compiled_plan(nothing).stages == ()
    assert sess.run(nothing) is None
    assert sess.run(tf.group()) is None
    x = tf.placeholder(tf.float32, [2])
    assert np.array_equal(sess.run([nothing, x * 2], {x: [1.0, 2.0]})[1], [2.0, 4.0])


def test_minimize_steps_give_numpy_gradient_descent(sess):
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((16, 3)).astype(np.float32)
    ys = rng.standard_normal((16, 1)).astype(np.float32)
    beta = tf.Variable(np.zeros((3, 1), np.float32))
    x, y = tf.placeholder(tf.float32, [None, 3]), tf.placeholder(tf.float32, [None, 1])
    cost = tf.reduce_mean(tf.square(tf.matmul(x, beta) - y))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(cost)
    assert train.type == "NoOp"
    assert "NoOp" not in _types(sess, train, {x: xs, y: ys})
    sess.run(tf.global_variables_initializer())
    expected = np.zeros((3, 1), np.float64)
    for _ in range(5):
        sess.run(train, {x: xs, y: ys})
        expected -= 0.1 * 2 * xs.T.astype(np.float64) @ (xs @ expected - ys) / len(xs)
    np.testing.assert_allclose(sess.run(beta), expected, rtol=1e-5, atol=1e-6)


def test_without_grouping_targets_keeps_every_other_op_in_order():
    with tf.Graph().as_default():
        a = tf.constant(1.0)
        b = a + 1.0
        g = tf.group(b)
        ops = prune([], [g], set())
        assert ops[-1] is g
        assert without_grouping_targets(ops, [g]) == ops[:-1]
        assert without_grouping_targets(ops, []) is ops
        # Asked for as a target of another kind (a fetch of ``b``'s op): nothing changes.
        assert without_grouping_targets(ops[:-1], [b.op]) == ops[:-1]
