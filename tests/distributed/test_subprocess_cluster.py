"""A cluster started the way users start one: ``dask scheduler`` and ``dask worker
--name ...`` as separate processes on loopback, reached by ``Session(address)``.

The scheduler and workers unpickle dataflow's task graphs and plans, so dataflow must
be importable there (here through ``PYTHONPATH``).
"""

from __future__ import annotations

import distributed
import numpy as np
import pytest

import dataflow as tf
from dataflow.runtime.dask import worker_state

from .conftest import cli_scheduler, dask_worker, wait_for_workers

pytestmark = pytest.mark.distributed


@pytest.fixture(scope="module")
def cli_cluster():
    with cli_scheduler() as (address, procs):
        for name in ("ps-0", "worker-0", "worker-1"):
            procs.append(dask_worker(address, name))
        wait_for_workers(address, 3)
        yield address


def test_session_by_address_on_cli_workers(cli_cluster):
    with tf.device("/job:ps/task:0"):
        beta = tf.Variable(np.ones((3, 1), np.float32), name="beta")
    x = tf.placeholder(tf.float32, [None, 3])
    with tf.device("/job:worker/task:1"):
        cost = tf.reduce_sum(tf.square(tf.matmul(x, beta)))
        grad = tf.gradients(cost, [beta])[0]
    with tf.device("/job:ps/task:0"):
        update = beta.assign_sub(0.01 * grad)
    feed = {x: np.arange(6, dtype=np.float32).reshape(2, 3)}
    with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as local:
        local.run(beta.initializer)
        want = [local.run([cost, update], feed)[0] for _ in range(3)]
    tf.Session.reset(cli_cluster)
    with tf.Session(cli_cluster) as sess:
        sess.run(beta.initializer)
        got = [sess.run([cost, update], feed)[0] for _ in range(3)]
        assert "worker-1 at tcp://127.0.0.1" in sess.backend.devices.note
        client = sess.backend.client
        held = client.run(worker_state.list_variables)
        names = {
            a: str(w["name"]) for a, w in client.scheduler_info(n_workers=-1)["workers"].items()
        }
        assert {names[a]: v for a, v in held.items() if v} == {
            "ps-0": {"/job:ps/replica:0/task:0/device:CPU:0": ["beta"]}
        }
    np.testing.assert_allclose(got, want, rtol=1e-6)
    with tf.Session(cli_cluster, config=tf.ConfigProto(resident_steps=True)) as sess:
        np.testing.assert_allclose(sess.run(beta), local_beta(want, feed), rtol=1e-5)


def local_beta(costs, feed):
    """beta after the three updates above, recomputed in numpy."""
    beta = np.ones((3, 1), np.float32)
    x = feed[next(iter(feed))]
    for _ in costs:
        beta = beta - 0.01 * (2 * x.T @ (x @ beta))
    return beta


def test_cluster_spec_maps_tasks_by_address(cli_cluster):
    tf.Session.reset(cli_cluster)
    with distributed.Client(cli_cluster, set_as_default=False) as client:
        by_name = {
            str(w["name"]): a for a, w in client.scheduler_info(n_workers=-1)["workers"].items()
        }
        # Swap roles: the worker named worker-1 is now the ps, by its address.
        spec = tf.train.ClusterSpec(
            {"ps": [by_name["worker-1"]], "worker": [by_name["worker-0"], by_name["ps-0"]]}
        )
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(7.0, name="moved")
        with tf.Session(client, config=tf.ConfigProto(cluster_def=spec)) as sess:
            sess.run(v.initializer)
            assert sess.run(v) == 7.0
        held = client.run(worker_state.list_variables)
        assert held[by_name["worker-1"]] == {"/job:ps/replica:0/task:0/device:CPU:0": ["moved"]}
