"""A cluster secured with TLS (temporary self-signed certificates)."""

from __future__ import annotations

import gc
import socket
import ssl

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
        if resident:  # step streams start as Dask's TLS connections, taken over,
            # and move to the workers' Unix sockets on this one host (local_sockets)
            conns = sess._backend._streams._every
            assert conns and all(c.family == socket.AF_UNIX for c in conns)
    # A client of one's own, with the cluster's credentials.
    client = distributed.Client(
        tls_cluster.target, security=tls_cluster.cluster.security, set_as_default=False
    )
    try:
        with tf.Session(client, config=config) as sess:
            assert sess.run(doubled) == 6.0
    finally:
        client.close()


def _clients() -> dict[int, distributed.Client]:
    return {id(o): o for o in gc.get_objects() if isinstance(o, distributed.Client)}


def test_tls_address_without_credentials_is_a_clear_error(tls_cluster):
    """... and the client that could not connect is closed at once: left open for the
    garbage collector, its ``__del__`` deadlocked another client starting later (seen
    as a 300 s hang in this module's last test)."""
    before = _clients()
    with pytest.raises(tf.errors.UnavailableError, match="TLS"):
        tf.Session(tls_cluster.target, config=tf.ConfigProto(operation_timeout_in_ms=3000))
    made = [c for key, c in _clients().items() if key not in before]
    assert made and all(c.status == "closed" for c in made), [c.status for c in made]


def _ridge_session(cluster):
    """A session running a ridge step with beta on the ps on the default (resident)
    path: ``(sess, step)`` where ``step()`` runs one."""
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:ps/task:0"):
            beta = tf.Variable(np.zeros((10, 1), np.float32), name="beta")
        with tf.device("/job:worker/task:0"):
            x = tf.placeholder(tf.float32, [100, 10])
            y = tf.placeholder(tf.float32, [100, 1])
            loss = tf.reduce_mean(tf.square(tf.matmul(x, beta) - y))
            train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
    rng = np.random.default_rng(0)
    feed = {x: rng.standard_normal((100, 10)), y: rng.standard_normal((100, 1))}
    sess = tf.Session(cluster, graph=g)
    sess.run(beta.initializer)
    for _ in range(30):
        sess.run(train, feed)
    return sess, lambda: sess.run(train, feed)


def _steps_over_streams(sess, step, cluster, steps=50):
    """Runs ``steps`` steps; returns (the step requests the session's stream client
    sent, each to every worker part at once, and the scheduler's transitions
    meanwhile): a step through Dask's tasks or RPCs would show in the second."""
    streams = sess._backend._streams
    scheduler = cluster.cluster.scheduler
    first, transitions = next(streams._ids), scheduler.transition_counter
    for _ in range(steps):
        step()
    return next(streams._ids) - first - 1, scheduler.transition_counter - transitions


def _kinds(sess):
    return {(type(c), c.family) for c in sess._backend._streams._every}


@pytest.mark.slow
def test_tls_steps_take_the_same_fast_path(monkeypatch):
    """A TLS cluster (worker processes, as deployed) runs steps on the same step
    streams as a tcp:// one, encrypted: one request to its parts per step, and no
    task or RPC through the scheduler (the old route took Dask RPCs, several times
    slower). Streams are kept on their connections (as between hosts) until the last
    part, where the client's streams move to the workers' Unix sockets
    (``local_sockets``). How the two compare in time is measured where times belong,
    in ``benchmarks/bench_feeds.py`` (its TLS column), not asserted here."""
    tcp = local_cluster(ps=1, worker=1)
    tls = local_cluster(ps=1, worker=1, security=Security.temporary())
    try:
        monkeypatch.setenv("DATAFLOW_UNIX_SOCKETS", "0")  # (ours alone: we ask for none)
        assert tls.target.startswith("tls://")
        (tcp_sess, tcp_step), (tls_sess, tls_step) = _ridge_session(tcp), _ridge_session(tls)
        parts = len(tls_sess._backend._streams._every)  # one stream per worker part
        routes = {
            "tcp": _steps_over_streams(tcp_sess, tcp_step, tcp),
            "tls": _steps_over_streams(tls_sess, tls_step, tls),
        }
        tcp_kinds, tls_kinds = _kinds(tcp_sess), _kinds(tls_sess)
        tcp_sess.close()
        tls_sess.close()
        monkeypatch.delenv("DATAFLOW_UNIX_SOCKETS")
        tf.Session.reset(tls)
        local_sess, local_step = _ridge_session(tls)
        local_step()
        local_kinds = _kinds(local_sess)
        local_sess.close()
    finally:
        with collect_leaked_sockets():
            tcp.close()
            tls.close()
    assert tcp_kinds == {(socket.socket, socket.AF_INET)}
    assert tls_kinds == {(ssl.SSLSocket, socket.AF_INET)}
    assert parts == 2  # the ps and the worker
    assert routes == {"tcp": (50, 0), "tls": (50, 0)}, routes
    assert local_kinds == {(socket.socket, socket.AF_UNIX)}
