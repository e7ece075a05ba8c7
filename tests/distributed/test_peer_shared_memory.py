"""Tensors between two workers on one host cross in shared memory (``stream.share_memory``):
the sending worker's arena, lent to the receiving worker's stages, acknowledged in
messages of their own (a worker's stream to its peer carries nothing back otherwise),
so every step's tensor takes it; with shared memory off the socket carries them."""

from __future__ import annotations

import dask
import numpy as np
import pytest

import dataflow as tf

from .conftest import started_cluster

pytestmark = pytest.mark.distributed

ROWS, COLS = 5_000, 100  # 2 MB of float32


def _peer_links(dask_worker):
    """(regions, sent, acked, shared bytes) of each of this worker's streams to peers."""
    peers = getattr(dask_worker, "_dataflow_peers", None)
    if peers is None:
        return []
    return [
        None
        if end.link is None
        else (end.link.regions, end.link.sent, end.link.acked, end.link.shared_bytes)
        for end in peers._peers.values()
    ]


def _crossing_step(cluster, steps: int) -> list:
    """``steps`` steps of a 2 MB tensor made on worker 0 and summed on worker 1; returns
    worker 0's peer links after them (values checked against numpy on the way)."""
    base = np.random.default_rng(5).standard_normal((ROWS, COLS)).astype(np.float32)
    graph = tf.Graph()
    with graph.as_default():
        with tf.device("/job:worker/task:0"):
            data = tf.Variable(base, name="data")
            made = data * 2.0
            bump = data.assign_add(tf.ones([ROWS, COLS]))
        with tf.device("/job:worker/task:1"):
            total = tf.reduce_sum(tf.cast(made, tf.float64))
    with tf.Session(cluster, graph=graph) as sess:
        sess.run(data.initializer)
        want = base
        for _ in range(steps):
            got = sess.run(total)
            np.testing.assert_allclose(got, np.sum(2 * want, dtype=np.float64), rtol=1e-9)
            sess.run(bump)
            want = want + np.float32(1.0)
        # (Read while the session is open: the last session's close takes the streams.)
        address = cluster.workers["worker-0"]
        (links,) = cluster.client.run(_peer_links, workers=[address]).values()
    return links


def test_a_tensor_between_workers_crosses_in_shared_memory_every_step(clean_cluster):
    links = [link for link in _crossing_step(clean_cluster, 8) if link and link[1]]
    assert links, "worker 0's stream to worker 1 set no shared memory up"
    regions, sent, acked, shared = max(links, key=lambda link: link[3])
    # Acknowledged each step, so each step's 2 MB took the arena's two regions in turn
    # (a view released late sends one over the socket instead: allowed twice).
    assert regions == 2 and sent >= 6 and acked >= sent - 1
    assert shared >= 6 * ROWS * COLS * 4


def test_with_shared_memory_off_tensors_between_workers_take_the_socket(monkeypatch):
    monkeypatch.setenv("DATAFLOW_SHM", "0")
    with (
        dask.config.set({"distributed.nanny.pre-spawn-environ.DATAFLOW_SHM": "0"}),
        started_cluster(ps=0, worker=2) as cluster,
    ):
        links = _crossing_step(cluster, 3)
    assert links == [None]  # nothing offered
