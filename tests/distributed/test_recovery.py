"""Recovery from a lost worker under ``MonitoredTrainingSession`` on a real cluster.

The process of the ``ps`` worker is killed (SIGKILL) while training; the
``LocalCluster``'s nanny restarts it, empty. The training loop must finish, its loss
must continue from the last checkpoint (full-batch gradient descent is deterministic,
so the steps redone after the recovery repeat the losses seen before it exactly), and
the steps lost must be at most those since that checkpoint.

These tests kill workers, so they run on a cluster of their own.
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time

import numpy as np
import pytest

import dataflow as tf
from dataflow.examples import input_pipeline

from .conftest import kill_worker as _kill
from .conftest import wait_until_back as _wait_back

pytestmark = pytest.mark.distributed

SAVE_EVERY = 10
LAST_STEP = 50


def _regression():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 8)).astype(np.float32)
    y = (x @ np.linspace(-1, 1, 8, dtype=np.float32).reshape(8, 1)).astype(np.float32)
    with tf.device("/job:ps/task:0"):
        w = tf.Variable(tf.zeros([8, 1]), name="w")
        step = tf.train.get_or_create_global_step()
    with tf.device("/job:worker/task:0"):
        loss = tf.reduce_mean(tf.square(tf.matmul(tf.constant(x), w) - tf.constant(y)))
        train = tf.train.GradientDescentOptimizer(0.05).minimize(loss, global_step=step)
    return train, loss, step


@pytest.mark.parametrize("when", ["mid_step", "between_steps"])
def test_ps_killed_while_training_recovers_from_the_last_checkpoint(fragile, tmp_path, when):
    """``mid_step``: the kill lands while steps run (``UnavailableError``);
    ``between_steps``: the ps is back, empty, before the next step runs
    (``FailedPreconditionError`` on a session that saw its worker leave)."""
    tf.Session.reset(fragile)
    train, loss, step = _regression()
    kill_at = 21  # nine steps (a few ms) before the next checkpoint, at step 30
    losses: list[tuple[int, float]] = []  # (recoveries so far, loss)
    killer = None
    with tf.train.MonitoredTrainingSession(
        master=fragile,
        checkpoint_dir=str(tmp_path),
        save_checkpoint_steps=SAVE_EVERY,
        hooks=[tf.train.StopAtStepHook(last_step=LAST_STEP)],
        recovery_wait_secs=60,
    ) as sess:
        while not sess.should_stop():
            _, value = sess.run([train, loss])
            losses.append((sess.recoveries, float(value)))
            if len(losses) == kill_at:
                if when == "mid_step":
                    # The pid first: a step takes well under a millisecond, so the kill
                    # must land within a few steps, before the next checkpoint (step 30):
                    # from a thread that starts now, while the next step runs.
                    address = fragile.workers["ps-0"]
                    pid = fragile.client.run(os.getpid, workers=[address])[address]
                    killer = threading.Thread(target=os.kill, args=(pid, signal.SIGKILL))
                    killer.start()
                else:
                    _wait_back(fragile, "ps-0", _kill(fragile, "ps-0"))
        final_step = sess.run(step)
        recoveries = sess.recoveries
    if killer is not None:
        killer.join()
    assert recoveries == 1
    assert final_step == LAST_STEP
    before = [v for r, v in losses if r == 0]
    after = [v for r, v in losses if r == 1]
    # The first loss after the recovery is that of a checkpointed step: find which.
    restored = int(np.argmin([abs(v - after[0]) for v in before]))
    assert restored % SAVE_EVERY == 0 and restored > 0, restored
    np.testing.assert_allclose(after[0], before[restored], rtol=1e-6)
    lost = len(before) - restored
    assert 0 <= lost <= SAVE_EVERY, f"lost {lost} steps with a checkpoint every {SAVE_EVERY}"
    # Training continued from there: the redone steps repeat the losses exactly, and
    # the loop ran exactly to LAST_STEP in total.
    np.testing.assert_allclose(after[:lost], before[restored:], rtol=1e-6)
    assert restored + len(after) == LAST_STEP
    assert after[-1] < before[0] / 10
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith(f"-{LAST_STEP}")


def test_recovery_gives_up_when_the_worker_stays_away(fragile, tmp_path):
    """With the ps gone for longer than ``recovery_wait_secs`` the loop raises
    ``UnavailableError`` instead of hanging."""
    tf.Session.reset(fragile)
    train, _, _ = _regression()
    # The nannies live in this process: hold ps-0's restart until the test is done.
    nanny = fragile.cluster.workers["ps-0"]
    restart = nanny.instantiate
    release = threading.Event()

    async def held_restart():
        while not release.is_set():
            await asyncio.sleep(0.05)
        return await restart()

    nanny.instantiate = held_restart
    address = fragile.workers["ps-0"]
    try:
        start = None
        with pytest.raises(tf.errors.UnavailableError, match="ps"):
            with tf.train.MonitoredTrainingSession(
                master=fragile,
                checkpoint_dir=str(tmp_path),
                save_checkpoint_steps=SAVE_EVERY,
                recovery_wait_secs=1.0,
            ) as sess:
                sess.run(train)
                _kill(fragile, "ps-0")
                start = time.monotonic()
                sess.run(train)
        assert time.monotonic() - start < 30
    finally:
        release.set()
        _wait_back(fragile, "ps-0", address)
        del nanny.instantiate


@pytest.mark.slow
def test_input_pipeline_survives_losing_its_ps(fragile, tmp_path):
    """Queue runners feed a RandomShuffleQueue on worker-0 while the ps is killed: the
    broken session's runners stop without closing the queue, the new session's runners
    refill it, and training reaches its last step and goal."""
    tf.Session.reset(fragile)
    true_w = np.linspace(-1.0, 1.0, input_pipeline.FEATURES, dtype=np.float32).reshape(-1, 1)
    model = input_pipeline.build(true_w)
    steps_seen = 0
    with tf.train.MonitoredTrainingSession(
        master=fragile,
        checkpoint_dir=str(tmp_path),
        save_checkpoint_steps=20,
        hooks=[tf.train.StopAtStepHook(last_step=120)],
        recovery_wait_secs=60,
    ) as sess:
        while not sess.should_stop():
            sess.run(model["train"])
            steps_seen += 1
            if steps_seen == 50:
                _kill(fragile, "ps-0")
        final_step = sess.run(model["step"])
        w = sess.run(model["w"])
        recoveries = sess.recoveries
    assert recoveries == 1
    assert final_step == 120
    assert 120 <= steps_seen <= 120 + 20 + 1  # redone: at most the steps since a save
    assert np.max(np.abs(w - true_w)) < 0.05
