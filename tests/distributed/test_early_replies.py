"""Fetched values that leave a worker before its step ends (``stream.py``, ``EARLY``).

A worker's stage that needs nothing from the ps runs first (``compile/partition.py``);
its fetched values of 8 MB or more go to the client at once, and the client reads them
from the worker's memory while the worker runs the stage that waited for the ps.
"""

from __future__ import annotations

import numpy as np
import pytest

import dataflow as tf

N, P = 25_000, 100  # 10 MB of float32: a part the client reads in place


def _step(fail_when_beta_negative: bool = False):
    """``beta`` on the ps; the worker's ``data`` doubled (needs nothing from the ps) and
    updated by an amount that does."""
    with tf.device("/job:ps/task:0"):
        beta = tf.Variable(np.ones((P, 1), np.float32), name="beta")
    with tf.device("/job:worker/task:0"):
        base = np.arange(N * P, dtype=np.float32).reshape(N, P) / (N * P)
        data = tf.Variable(base, name="data")
        doubled = data * 2.0
        amount = tf.reduce_mean(beta)
        if fail_when_beta_negative:
            with tf.control_dependencies([tf.debugging.assert_non_negative(beta)]):
                amount = tf.identity(amount)
        bump = data.assign_add(tf.fill([N, P], amount))
    return base, beta, doubled, bump


@pytest.fixture(params=["tcp", "tls"])
def wire(request):
    """The shared TCP cluster of worker processes, or this module's TLS cluster."""
    cluster = request.getfixturevalue("clean_cluster" if request.param == "tcp" else "tls_cluster")
    tf.Session.reset(cluster)
    return cluster


def test_a_large_fetch_leaves_early_and_holds_the_steps_values(wire):
    base, beta, doubled, bump = _step()
    with tf.Session(wire) as sess:
        sess.run(tf.global_variables_initializer())
        want, kept = base, []
        for _ in range(3):
            got, _ = sess.run([doubled, bump])
            # Read before the step's update, although the update (waiting for beta) ran
            # while the client was still copying the value out of the worker.
            np.testing.assert_array_equal(got, 2 * want)
            assert got.flags.writeable
            kept.append((got, 2 * want))
            want = want + np.float32(1.0)
        for got, value in kept:  # each step's own memory: later steps changed none
            np.testing.assert_array_equal(got, value)
        assert not np.shares_memory(kept[0][0], kept[1][0])
        meta = tf.RunMetadata()
        options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
        got, _ = sess.run([doubled, bump], options=options, run_metadata=meta)
        np.testing.assert_array_equal(got, 2 * want)
    names = [(e["device"], e["name"]) for e in tf.viz.step_events(meta)]
    assert any("/job:worker" in d and n == "Reply early" for d, n in names), names
    assert any(n.startswith("client: read early reply of /job:worker") for _, n in names)


def test_a_step_that_fails_after_its_early_reply_returns_nothing_of_it(clean_cluster):
    base, beta, doubled, bump = _step(fail_when_beta_negative=True)
    with tf.Session(clean_cluster) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(beta.assign(-np.ones((P, 1), np.float32)))
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run([doubled, bump])
        sess.run(beta.assign(np.ones((P, 1), np.float32)))
        got, _ = sess.run([doubled, bump])
        np.testing.assert_array_equal(got, 2 * base)  # the failed step updated nothing
        got = sess.run(doubled)
        np.testing.assert_array_equal(got, 2 * (base + np.float32(1.0)))
