"""Faults on a real cluster: a worker process killed during a step, or between steps.

These tests kill workers, so they run on a cluster of their own.
"""

from __future__ import annotations

import threading
import time

import pytest

import dataflow as tf

from .conftest import kill_worker as _kill
from .conftest import wait_until_back as _wait_back

pytestmark = pytest.mark.distributed


@pytest.mark.parametrize("resident", [False, True])
def test_worker_killed_mid_step(fragile, resident):
    tf.Session.reset(fragile)

    def slow(a):
        time.sleep(30)
        return a

    with tf.device("/job:ps/task:0"):
        v = tf.Variable(5.0, name="survivor")
    with tf.device("/job:worker/task:1"):
        stuck = tf.py_func(slow, [v.read_value()], tf.float32)
        fine = v.read_value() * 2.0
    config = tf.ConfigProto(resident_steps=resident)
    with tf.Session(fragile, config=config) as sess:
        sess.run(v.initializer)
        assert sess.run(fine) == 10.0
        outcome = {}

        def run():
            try:
                sess.run(stuck)
            except Exception as exc:
                outcome["error"] = exc
            outcome["at"] = time.monotonic()

        thread = threading.Thread(target=run)
        thread.start()
        time.sleep(1.5)  # the py_func is sleeping on worker-1 now
        killed_at = time.monotonic()
        old = _kill(fragile, "worker-1")
        thread.join(20)
        assert not thread.is_alive(), "the step hung after its worker died"
        error = outcome["error"]
        assert isinstance(error, tf.errors.UnavailableError), error
        assert "worker-1" in str(error)
        assert outcome["at"] - killed_at < 5.0
        # The session stays usable: the ps kept its variable, and once the nanny has
        # restarted worker-1 the same step signature runs there again.
        _wait_back(fragile, "worker-1", old)
        assert sess.run(v) == 5.0
        assert sess.run(fine) == 10.0


def test_ps_killed_between_steps_loses_its_variables(fragile):
    tf.Session.reset(fragile)
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(1.0, name="volatile")
        bump = v.assign_add(1.0)
    with tf.Session(fragile) as sess:
        sess.run(v.initializer)
        sess.run(bump)
        old = _kill(fragile, "ps-0")
        # Until the nanny restarts it the step cannot run; afterwards its state is gone
        # (recovery is from a checkpoint) and re-initializing works.
        with pytest.raises((tf.errors.UnavailableError, tf.errors.FailedPreconditionError)):
            sess.run(bump)
        _wait_back(fragile, "ps-0", old)
        with pytest.raises(tf.errors.FailedPreconditionError, match="volatile"):
            sess.run(bump)
        sess.run(v.initializer)
        assert sess.run(bump) == 2.0
