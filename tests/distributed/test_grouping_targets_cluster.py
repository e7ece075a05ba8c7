"""A training step on a cluster ends where its updates end: the ``NoOp`` that ``minimize``
puts on the worker's device leaves the plan (``prune.without_grouping_targets``), so the
worker replies once it has sent its gradient instead of waiting for the ps to say the
update ran, and the ps's reply ends the step."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow as tf

WORKER = "/job:worker/replica:0/task:1/device:CPU:0"
PS = "/job:ps/replica:0/task:0/device:CPU:0"
LR = 0.05


def _training_step():
    with tf.device(tf.train.replica_device_setter(ps_tasks=1, worker_device="/job:worker/task:1")):
        beta = tf.Variable(np.zeros((4, 1), np.float32), name="beta")
        x = tf.placeholder(tf.float32, [None, 4], name="x")
        y = tf.placeholder(tf.float32, [None, 1], name="y")
        cost = tf.reduce_mean(tf.square(tf.matmul(x, beta) - y))
        train = tf.train.GradientDescentOptimizer(LR).minimize(cost)
    return beta, x, y, cost, train


def _data():
    rng = np.random.default_rng(3)
    xs = rng.standard_normal((32, 4)).astype(np.float32)
    return xs, (xs @ rng.standard_normal((4, 1))).astype(np.float32)


@pytest.mark.parametrize("session", ["csess", "gsess"])
def test_a_training_step_ends_with_the_ps_update(session, request):
    sess = request.getfixturevalue(session)
    beta, x, y, cost, train = _training_step()
    xs, ys = _data()
    feed = {x: xs, y: ys}
    assert train.type == "NoOp" and train.device.startswith("/job:worker/task:1")
    plan = sess.compiled_plan([cost, train], feed)
    assert "NoOp" not in plan.call_types
    # The last stage updates beta on the ps; no worker stage follows it.
    assert plan.stages[-1].device == PS
    assert [s.device for s in plan.stages].count(WORKER) == 1
    sess.run(tf.global_variables_initializer())
    expected = np.zeros((4, 1), np.float64)
    for _ in range(5):
        got_cost, none = sess.run([cost, train], feed)
        residual = xs @ expected - ys
        np.testing.assert_allclose(got_cost, np.mean(residual**2), rtol=1e-5)
        assert none is None
        expected -= LR * 2 * xs.T.astype(np.float64) @ residual / len(xs)
    np.testing.assert_allclose(sess.run(beta), expected, rtol=1e-5, atol=1e-6)


def test_the_worker_replies_after_its_send(csess):
    beta, x, y, cost, train = _training_step()
    xs, ys = _data()
    csess.run(tf.global_variables_initializer())
    csess.run([cost, train], {x: xs, y: ys})  # compiled, installed, streams open
    meta = tf.RunMetadata()
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    csess.run([cost, train], {x: xs, y: ys}, options=options, run_metadata=meta)
    worker = sorted(
        (e for e in tf.viz.step_events(meta) if e["device"] == WORKER), key=lambda e: e["start_us"]
    )
    assert worker[-1]["type"] == "Send"  # the gradient to the ps; no wait after it
    assert sum(e["type"] == "Recv" for e in worker) == 1  # beta, once
