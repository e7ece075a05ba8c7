"""Soak: parameter-server training while the ps and the workers are killed at random.

A ``dask scheduler`` and three ``dask worker`` processes (``ps-0``, ``worker-0``,
``worker-1``), each worker under its nanny, which restarts a killed worker process
under the same name, empty. ``MonitoredTrainingSession`` trains a model whose
variables live on the ps and whose two halves of the batch are computed on the two
workers, while five SIGKILLs (seeded: the three processes in a random order, then two
more at random, each during a step or between two steps) land at random steps.

Asserted: training ends at its last step; every loss equals the loss an embedded
session computes for the same step (full-batch gradient descent is deterministic), so
each recovery continued exactly from a checkpoint; each recovery restarted from a
checkpointed step and lost at most the steps since it; nothing hangs (pytest-timeout).
The figures (recovery time and steps lost per kill) are printed; ``docs/
fault_tolerance.md`` records those of one run.
"""

from __future__ import annotations

import os
import signal
import threading
import time

import distributed
import numpy as np
import pytest

import dataflow as tf

from .conftest import cli_scheduler, dask_worker, wait_for_workers

pytestmark = [pytest.mark.distributed, pytest.mark.slow]

SEED = 11
KILLS = 5
SAVE_EVERY = 10
LAST_STEP = 150
WORKERS = ("ps-0", "worker-0", "worker-1")


def _model():
    """Ridge-free least squares: ``w`` and the global step on the ps, each half of the
    batch on one worker; ``at`` is the global step the fetched loss belongs to (read
    before this step's update)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((128, 16)).astype(np.float32)
    y = (x @ np.linspace(-1, 1, 16, dtype=np.float32).reshape(16, 1)).astype(np.float32)
    with tf.device("/job:ps/task:0"):
        w = tf.Variable(tf.zeros([16, 1]), name="w")
        step = tf.train.get_or_create_global_step()
        at = tf.identity(step)
    halves = []
    for task, rows in enumerate((slice(0, 64), slice(64, 128))):
        with tf.device(f"/job:worker/task:{task}"):
            err = tf.matmul(tf.constant(x[rows]), w) - tf.constant(y[rows])
            halves.append(tf.reduce_mean(tf.square(err)))
    with tf.device("/job:worker/task:0"):
        loss = (halves[0] + halves[1]) / 2.0
    (grad,) = tf.gradients(loss, [w])
    with tf.control_dependencies([at]):
        train = tf.train.GradientDescentOptimizer(0.05).apply_gradients(
            [(grad, w)], global_step=step
        )
    return train, loss, at, step


def _reference_losses(train, loss, at):
    """The loss of every step 0..LAST_STEP, from an embedded session."""
    out = {}
    config = tf.ConfigProto(allow_soft_placement=True)
    with tf.Session(config=config) as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(LAST_STEP):
            _, value, index = sess.run([train, loss, at])
            out[int(index)] = float(value)
    return out


def _kill(client, name, timeout=120):
    """SIGKILLs worker ``name``'s process (waiting for it to be there first)."""
    deadline = time.monotonic() + timeout
    while True:
        found = {
            str(w["name"]): a for a, w in client.scheduler_info(n_workers=-1)["workers"].items()
        }
        if name in found:
            address = found[name]
            try:
                pid = client.run(os.getpid, workers=[address])[address]
                break
            except (KeyError, OSError):
                pass
        if time.monotonic() > deadline:
            raise AssertionError(f"{name} is not back")
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def nanny_cluster():
    with cli_scheduler() as (address, procs):
        for name in WORKERS:
            procs.append(dask_worker(address, name, "--preload", "dataflow.worker"))
        wait_for_workers(address, len(WORKERS))
        yield address


def test_training_survives_random_kills_of_ps_and_workers(nanny_cluster, tmp_path):
    train, loss, at, step = _model()
    reference = _reference_losses(train, loss, at)
    rng = np.random.default_rng(SEED)
    targets = [str(t) for t in rng.permutation(WORKERS)] + [
        str(t) for t in rng.choice(WORKERS, KILLS - len(WORKERS))
    ]
    gaps = rng.integers(10, 25, KILLS)  # global steps from a kill to the next
    mid_step = rng.random(KILLS) < 0.7  # else between two steps
    delays = rng.uniform(0.0, 0.03, KILLS)  # into the step, for a mid-step kill
    seen: list[tuple[int, int, float]] = []  # (recoveries so far, step, loss)
    kills: list[dict] = []
    timers = []

    def kill(record):
        _kill(watcher, record["target"])
        record["at"] = time.monotonic()

    with (
        distributed.Client(nanny_cluster, set_as_default=False) as watcher,
        tf.train.MonitoredTrainingSession(
            master=nanny_cluster,
            checkpoint_dir=str(tmp_path),
            save_checkpoint_steps=SAVE_EVERY,
            hooks=[tf.train.StopAtStepHook(last_step=LAST_STEP)],
            max_recoveries=2 * KILLS,
            recovery_wait_secs=120,
        ) as sess,
    ):
        next_kill = int(gaps[0])  # the global step after which the next kill lands
        while not sess.should_stop():
            before = sess.recoveries
            _, value, index = sess.run([train, loss, at])
            done = time.monotonic()
            if sess.recoveries > before:
                previous = seen[-1][1]
                kills[-1].update(
                    recovery_s=done - kills[-1]["at"],
                    restored=int(index),
                    lost=previous + 1 - int(index),
                )
            seen.append((sess.recoveries, int(index), float(value)))
            if len(kills) < KILLS and index >= next_kill:
                k = len(kills)
                kills.append(
                    {"target": targets[k], "mid_step": bool(mid_step[k]), "after": int(index)}
                )
                if mid_step[k]:
                    timers.append(threading.Timer(delays[k], kill, (kills[-1],)))
                    timers[-1].start()
                else:
                    kill(kills[-1])
                next_kill = int(index) + int(gaps[(k + 1) % KILLS])
        final_step = sess.run(step)
        recoveries = sess.recoveries
        for timer in timers:
            timer.join()
    for k in kills:
        print(
            f"kill of {k['target']} ({'mid-step' if k['mid_step'] else 'between steps'}) "
            f"after step {k['after']}: "
            + (
                f"recovered in {k['recovery_s']:.1f} s from step {k['restored']}, "
                f"{k['lost']} steps lost"
                if "lost" in k
                else "no step failed"
            )
        )
    assert final_step == LAST_STEP
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith(f"-{LAST_STEP}")
    assert len(kills) == KILLS
    # A kill of the ps always costs a recovery (its variables are gone); a worker holds
    # no state, and one killed between two steps may be back before it is needed.
    assert all("lost" in k for k in kills if k["target"] == "ps-0")
    # Each kill costs at most one recovery, and every step seen failing was one. (Which
    # kill a recovery belongs to is not always the last one: a mid-step kill's timer can
    # land in a later step, so the count is bounded rather than matched kill by kill.)
    assert sum("lost" in k for k in kills) <= recoveries <= len(kills)
    # Every loss is the one the embedded session computed for its step: each recovery
    # continued exactly from the restored checkpoint.
    for _, index, value in seen:
        np.testing.assert_allclose(value, reference[index], rtol=1e-5, err_msg=f"step {index}")
    for (r0, i0, _), (r1, i1, _) in zip(seen, seen[1:]):
        if r1 == r0:
            assert i1 == i0 + 1
        else:
            assert i1 % SAVE_EVERY == 0 and i0 + 1 - SAVE_EVERY <= i1 <= i0 + 1, (i0, i1)
