"""Worker processes poll for a moment before they sleep while steps run
(``runtime/dask/spin_wait.py``): installed on each nanny-started worker's loop, heated
by steps, cold again when they stop; not installed where workers share the client's
process."""

from __future__ import annotations

import time

import numpy as np
import pytest

import dataflow as tf
from dataflow.runtime.dask import spin_wait

from .conftest import started_cluster

pytestmark = pytest.mark.distributed


def _state(dask_worker=None):
    heat = spin_wait.HEAT
    loop = dask_worker.loop.asyncio_loop
    return spin_wait.installed(loop), heat.spins, heat.hot_until > time.monotonic()


def _ridge(cluster):
    """A session on ``cluster`` and one step of a ridge update (``beta`` on the ps)."""
    graph = tf.Graph()
    with graph.as_default():
        with tf.device("/job:ps/task:0"):
            beta = tf.Variable(np.zeros((4, 1), np.float32))
        with tf.device("/job:worker/task:0"):
            x = tf.placeholder(tf.float32, [None, 4])
            grad = tf.matmul(x, tf.matmul(x, beta) - 1.0, transpose_a=True)
        with tf.device("/job:ps/task:0"):
            update = beta.assign_sub(0.01 * grad)
        init = tf.global_variables_initializer()
    sess = tf.Session(cluster, graph=graph)
    sess.run(init)
    data = np.eye(4, dtype=np.float32)
    return sess, lambda: sess.run(update, {x: data})


def test_worker_processes_poll_while_steps_run_and_sleep_when_idle(cluster):
    client = cluster.client
    sess, step = _ridge(cluster)
    with sess:
        for _ in range(40):
            got = step()
        want = np.zeros((4, 1), np.float32)
        for _ in range(40):  # the same update in numpy: beta -= 0.01 * (beta - 1)
            want = want - np.float32(0.01) * (want - 1.0)
        np.testing.assert_allclose(got, want, rtol=1e-5)

        # Each worker process (nanny-started) has the polling selector on its loop.
        assert all(installed for installed, _, _ in client.run(_state).values())
        # Idle: the loops cool down, and Dask's own ticks do not heat them again.
        time.sleep(max(0.05, 10 * spin_wait.HOT_SECONDS))
        before = client.run(_state)
        assert not any(hot for _, _, hot in before.values())
        time.sleep(0.6)  # heartbeats, the system monitor's ticks, ...
        after = client.run(_state)
        assert {a: n for a, (_, n, _) in after.items()} == {a: n for a, (_, n, _) in before.items()}


def test_workers_that_share_the_clients_process_do_not_poll():
    with started_cluster(ps=1, worker=1, processes=False) as cluster:
        sess, step = _ridge(cluster)
        with sess:
            step()
            assert not any(installed for installed, _, _ in cluster.client.run(_state).values())


def test_polling_stops_with_the_last_dataflow_client():
    """The worker plugin's teardown (``release_worker``) gives the loop its selector back."""
    with started_cluster(ps=1, worker=1) as cluster:
        client = cluster.client
        sess, step = _ridge(cluster)
        with sess:
            step()
            assert all(installed for installed, _, _ in client.run(_state).values())
        deadline = time.monotonic() + 30
        while any(installed for installed, _, _ in client.run(_state).values()):
            assert time.monotonic() < deadline, "a worker kept polling after the session"
            time.sleep(0.05)
