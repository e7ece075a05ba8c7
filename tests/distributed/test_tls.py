"""A cluster secured with TLS (temporary self-signed certificates)."""

from __future__ import annotations

import distributed
import pytest

import dataflow as tf

from .conftest import collect_leaked_sockets, local_cluster

pytestmark = pytest.mark.distributed


@pytest.fixture(scope="module")
def tls_cluster():
    # Worker threads keep this one cheap; the transport is TLS all the same.
    c = local_cluster(ps=1, worker=1, security=True, processes=False)
    yield c
    with collect_leaked_sockets():
        c.close()


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
        # Plain-TCP step channels would bypass TLS: resident steps keep Dask's comms.
        assert sess._signature(doubled, {}).bound.channels == {}
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
