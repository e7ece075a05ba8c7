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


@pytest.mark.slow
def test_steps_compiled_while_the_ps_dies_fail_as_unavailable(fragile):
    """Task-graph path: every new fetch compiles and binds a new plan (which sends each
    stage's task-group anchor to the workers); the ps is SIGKILLed at a random moment of
    that loop, three times. Whatever the moment, the error is TF's (``UnavailableError``
    while it is gone, ``FailedPreconditionError`` for the variable it lost), never
    distributed's own ``CommClosedError``, so ``MonitoredTrainingSession`` recovers."""
    import random

    tf.Session.reset(fragile)
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(1.0, name="compiled_through_kills")
    rng = random.Random(29)
    seen = []
    with tf.Session(fragile, config=tf.ConfigProto(resident_steps=False)) as sess:
        sess.run(v.initializer)
        for kill in range(3):
            stop = time.monotonic() + rng.uniform(0.2, 1.5)
            killer = threading.Timer(stop - time.monotonic(), _kill, (fragile, "ps-0"))
            old = fragile.workers["ps-0"]
            killer.start()
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                with tf.device("/job:worker/task:0"):
                    fetch = v.read_value() + float(len(seen) + kill * 1000)  # a new signature
                try:
                    sess.run(fetch)
                    seen.append("ok")
                except tf.errors.OpError as exc:
                    seen.append(type(exc).__name__)
                    if not killer.is_alive():
                        break
            killer.join()
            _wait_back(fragile, "ps-0", old)
            sess.run(v.initializer)  # the ps lost it with its process
    assert set(seen) - {"ok"} <= {"UnavailableError", "AbortedError", "FailedPreconditionError"}
    assert "UnavailableError" in seen or "FailedPreconditionError" in seen
