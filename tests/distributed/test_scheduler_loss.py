"""Losing the Dask scheduler of a ``dask scheduler`` + ``dask worker`` cluster.

What distributed 2026.8 does (``docs/fault_tolerance.md``, "Losing the scheduler"): every
worker closes as soon as its connection to the scheduler breaks, and its nanny closes
with it, so each ``dask worker`` process exits (status 0) within seconds and its
variables are gone; a worker never reconnects. Recovery therefore needs the scheduler
and the workers run under a supervisor that starts them again, the scheduler on a fixed
port. Here that supervisor is a shell loop per process (``restart_loop``).

On the client side a session whose scheduler is lost fails its steps with
``UnavailableError`` at once and closes without Dask's 'Failed to reconnect' error; a
session opened while the scheduler is away fails within about a second; and
``MonitoredTrainingSession`` recovers by itself from the last checkpoint.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time

import distributed
import numpy as np
import pytest

import dataflow as tf

from .conftest import free_port, loop_child, restart_loop, stop_loops, wait_for_workers

pytestmark = pytest.mark.distributed

SAVE_EVERY = 10
LAST_STEP = 40
PRELOAD = ("--preload", "dataflow.worker")


@pytest.fixture(scope="module")
def supervised():
    """A scheduler on a fixed port and workers ``ps-0`` and ``worker-0``, each under a
    restart loop; yields ``(address, loops)`` with the scheduler's loop first."""
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    loops = [
        restart_loop(
            "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard", *PRELOAD
        )
    ]
    try:
        for name in ("ps-0", "worker-0"):
            loops.append(
                restart_loop(
                    "worker",
                    address,
                    "--name",
                    name,
                    "--nthreads",
                    "2",
                    "--no-dashboard",
                    "--host",
                    "127.0.0.1",
                    *PRELOAD,
                )
            )
        wait_for_workers(address, 2)
        yield address, loops
    finally:
        assert stop_loops(loops) == 0


def kill_scheduler(loops):
    """SIGKILLs the scheduler process (its loop starts another on the same port);
    returns when it was killed."""
    pid = loop_child(loops[0])
    os.kill(pid, signal.SIGKILL)
    return time.monotonic()


def wait_until_restarted(address, loops, timeout=120):
    """Waits until the workers have exited with the old scheduler and a new pair has
    joined the new one."""
    wait_for_workers(address, len(loops) - 1, timeout)


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


class _Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.ERROR)
        self.records = []

    def emit(self, record):
        self.records.append(record)


@pytest.fixture
def client_errors():
    """The errors ``distributed.client`` logs during the test (Dask's loggers do not
    propagate to the root logger, so ``caplog`` would not see them)."""
    handler = _Records()
    logger = logging.getLogger("distributed.client")
    logger.addHandler(handler)
    try:
        yield handler.records
    finally:
        logger.removeHandler(handler)


@pytest.mark.parametrize("resident", [False, True], ids=["graph", "resident"])
def test_a_lost_scheduler_fails_steps_at_once_and_the_session_closes_quietly(
    supervised, resident, client_errors
):
    address, loops = supervised
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(1.0, name="v")
    with tf.device("/job:worker/task:0"):
        doubled = v * 2.0
    wait_until_restarted(address, loops)
    sess = tf.Session(address, config=tf.ConfigProto(resident_steps=resident))
    sess.run(v.initializer)
    killer = threading.Timer(0.3, kill_scheduler, (loops,))
    killer.start()
    start = time.monotonic()
    with pytest.raises(
        tf.errors.UnavailableError, match="Lost the connection to the Dask scheduler"
    ):
        while time.monotonic() - start < 60:
            assert sess.run(doubled) == 2.0
    failed = time.monotonic()
    killer.join()
    assert failed - start < 0.3 + 5
    # Every later step fails the same way at once, even after the client reconnects.
    with pytest.raises(tf.errors.UnavailableError, match="Lost the connection"):
        sess.run(doubled)
    start = time.monotonic()
    sess.close()
    assert time.monotonic() - start < 5
    assert not client_errors, [r.getMessage() for r in client_errors]


def test_opening_a_session_while_the_scheduler_is_away_fails_fast(supervised):
    address, loops = supervised
    wait_until_restarted(address, loops)
    port = free_port()  # nothing listens there: a scheduler that is away
    start = time.monotonic()
    with pytest.raises(tf.errors.UnavailableError, match="No Dask scheduler at .* refused"):
        tf.Session(f"tcp://127.0.0.1:{port}")
    assert time.monotonic() - start < 5


def test_a_client_that_reconnects_gets_a_new_view(supervised, client_errors):
    """A ``distributed.Client`` of the user's own reconnects to the restarted scheduler;
    sessions opened on it before fail, sessions opened after run on the new workers
    (the worker plugin is registered again: pinned stages would otherwise wait
    forever for a resource the new workers never got)."""
    address, loops = supervised
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(3.0, name="v")
    with tf.device("/job:worker/task:0"):
        doubled = v * 2.0
    wait_until_restarted(address, loops)
    with distributed.Client(address, timeout=120, set_as_default=False) as client:
        old = tf.Session(client)
        old.run(v.initializer)
        assert old.run(doubled) == 6.0
        kill_scheduler(loops)
        with pytest.raises(tf.errors.UnavailableError, match="Lost the connection"):
            while True:
                old.run(doubled)
        old.close()
        wait_until_restarted(address, loops)
        client.wait_for_workers(2, timeout=120)
        with tf.Session(client) as new:
            new.run(v.initializer)
            assert new.run(doubled) == 6.0
    assert not client_errors, [r.getMessage() for r in client_errors]


def test_training_recovers_from_a_scheduler_restart(supervised, tmp_path, caplog, client_errors):
    """The scheduler is killed mid-step; both workers exit with it, and the loops bring
    all three back. The training loop notices within seconds, waits for the cluster,
    restores the last checkpoint and ends at its last step, repeating exactly the
    losses it had computed from that checkpoint on."""
    address, loops = supervised
    wait_until_restarted(address, loops)
    train, loss, step = _regression()
    kill_at = 21  # nine steps (a few ms) before the next checkpoint, at step 30
    losses: list[tuple[int, float]] = []  # (recoveries so far, loss)
    killed: list[float] = []
    caplog.set_level(logging.WARNING, logger="dataflow.train.sessions.monitored_session")
    with tf.train.MonitoredTrainingSession(
        master=address,
        checkpoint_dir=str(tmp_path),
        save_checkpoint_steps=SAVE_EVERY,
        hooks=[tf.train.StopAtStepHook(last_step=LAST_STEP)],
        recovery_wait_secs=120,
    ) as sess:
        while not sess.should_stop():
            _, value = sess.run([train, loss])
            losses.append((sess.recoveries, float(value)))
            if len(losses) == kill_at:
                # The pid first: a step takes well under a millisecond, so the kill
                # must land within a few steps, before the next checkpoint (step 30):
                # from a thread that starts now, while the next step runs.
                pid = loop_child(loops[0])

                def kill(pid=pid):
                    os.kill(pid, signal.SIGKILL)
                    killed.append(time.monotonic())

                killer = threading.Thread(target=kill)
                killer.start()
        final_step = sess.run(step)
        recoveries = sess.recoveries
    killer.join()
    assert recoveries == 1
    assert final_step == LAST_STEP
    # The loss of the scheduler was noticed at once, not after Dask's 30 s reconnect.
    (noticed,) = [r for r in caplog.records if "recreating the session" in r.getMessage()]
    assert "Lost the connection to the Dask scheduler" in noticed.getMessage()
    assert noticed.created - (time.time() - time.monotonic() + killed[0]) < 5
    assert not client_errors, [r.getMessage() for r in client_errors]
    before = [v for r, v in losses if r == 0]
    after = [v for r, v in losses if r == 1]
    restored = int(np.argmin([abs(v - after[0]) for v in before]))
    assert restored % SAVE_EVERY == 0 and restored > 0, restored
    lost = len(before) - restored
    assert 0 <= lost <= SAVE_EVERY
    np.testing.assert_allclose(after[:lost], before[restored:], rtol=1e-6)
    assert restored + len(after) == LAST_STEP
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith(f"-{LAST_STEP}")


class _ViewLosingItsScheduler:
    """A stand-in for the session's ``ClusterView`` (ours, not Dask's): connected until
    ``after`` seconds from now, as a client that notices its scheduler's loss a moment
    after a gather on another connection to it failed."""

    def __init__(self, after: float) -> None:
        self.until = time.monotonic() + after

    def connected(self) -> bool:
        return time.monotonic() < self.until


@pytest.mark.parametrize(
    ("error", "noticed_after", "waited_at_least", "waited_at_most"),
    [
        ("closed", 0.1, 0.09, 0.4),  # the loss is noticed: the step reports it
        ("oserror", 0.1, 0.09, 0.4),
        ("closed", 60, 0.45, 2),  # a closed connection, the scheduler still there
        ("value", 0.1, 0, 0.05),  # not a connection's failure: no wait
    ],
)
def test_a_gather_on_a_closed_connection_waits_for_the_client_to_notice(
    error, noticed_after, waited_at_least, waited_at_most
):
    """The race the task-graph path can lose when the scheduler dies: its gather fails
    on a pooled connection before the client has marked its scheduler lost. The step
    waits (at most ``SCHEDULER_POLL_S``) for the client to notice, so that it reports
    the lost scheduler."""
    import asyncio

    from distributed.comm.core import CommClosedError

    from dataflow.runtime.dask import graph_path

    path = object.__new__(graph_path.GraphPath)
    path.view = _ViewLosingItsScheduler(noticed_after)
    exc = {
        "closed": CommClosedError("in <TCP (closed) ConnectionPool.gather>"),
        "oserror": ConnectionResetError(),
        "value": ValueError("a kernel's"),
    }[error]
    start = time.monotonic()
    asyncio.run(path._notice_lost_scheduler(exc))
    waited = time.monotonic() - start
    assert waited_at_least <= waited <= waited_at_most, waited
