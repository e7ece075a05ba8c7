"""A cluster secured with TLS (temporary self-signed certificates)."""

from __future__ import annotations

import socket
import ssl
import statistics
import time

import distributed
import numpy as np
import pytest
from distributed.security import Security

import dataflow as tf

from .conftest import collect_leaked_sockets, local_cluster

pytestmark = pytest.mark.distributed


@pytest.mark.parametrize("resident", [False, True])
def test_sessions_over_tls(tls_cluster, resident):
    assert tls_cluster.target.startswith("tls://")
    tf.Session.reset(tls_cluster)
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(3.0, name="secret")
    with tf.device("/job:worker/task:0"):
        doubled = v * 2.0
    config = tf.ConfigProto(resident_steps=resident)
    with tf.Session(tls_cluster, config=config) as sess:
        sess.run(v.initializer)
        assert sess.run(doubled) == 6.0
        if resident:  # step streams are Dask's TLS connections, taken over
            conns = sess._backend._streams._every
            assert conns and all(isinstance(c, ssl.SSLSocket) for c in conns)
    # A client of one's own, with the cluster's credentials.
    client = distributed.Client(
        tls_cluster.target, security=tls_cluster.cluster.security, set_as_default=False
    )
    try:
        with tf.Session(client, config=config) as sess:
            assert sess.run(doubled) == 6.0
    finally:
        client.close()


def test_tls_address_without_credentials_is_a_clear_error(tls_cluster):
    with pytest.raises(tf.errors.UnavailableError, match="TLS"):
        tf.Session(tls_cluster.target, config=tf.ConfigProto(operation_timeout_in_ms=3000))


def _step_ms(cluster, steps=300):
    """Median ms of a ridge step with beta on the ps, on the default (resident) path."""
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:ps/task:0"):
            beta = tf.Variable(np.zeros((10, 1), np.float32), name="beta")
        with tf.device("/job:worker/task:0"):
            x = tf.placeholder(tf.float32, [100, 10])
            y = tf.placeholder(tf.float32, [100, 1])
            loss = tf.reduce_mean(tf.square(tf.matmul(x, beta) - y))
            step = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
        rng = np.random.default_rng(0)
        feed = {x: rng.standard_normal((100, 10)), y: rng.standard_normal((100, 1))}
        with tf.Session(cluster, graph=g) as sess:
            sess.run(beta.initializer)
            for _ in range(30):
                sess.run(step, feed)
            times = []
            for _ in range(steps):
                start = time.perf_counter()
                sess.run(step, feed)
                times.append(time.perf_counter() - start)
            kinds = {type(c) for c in sess._backend._streams._every}
    return statistics.median(times) * 1e3, kinds


@pytest.mark.slow
def test_tls_steps_take_the_same_fast_path():
    """A TLS cluster (worker processes, as deployed) runs steps on the same step
    streams as a tcp:// one, encrypted: about the same time per step, measured in one
    run (a generous bound: the old route through Dask RPCs was several times slower)."""
    tcp = local_cluster(ps=1, worker=1)
    tls = local_cluster(ps=1, worker=1, security=Security.temporary())
    try:
        assert tls.target.startswith("tls://")
        tcp_ms, tcp_kinds = _step_ms(tcp)
        tls_ms, tls_kinds = _step_ms(tls)
    finally:
        with collect_leaked_sockets():
            tcp.close()
            tls.close()
    assert tcp_kinds == {socket.socket} and tls_kinds == {ssl.SSLSocket}
    assert tls_ms < 1.6 * tcp_ms, (tls_ms, tcp_ms)
