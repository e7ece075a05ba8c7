"""Fixtures of the step-stream tests: a real ``distributed`` client on loopback."""

from __future__ import annotations

import distributed
import pytest

from tests.distributed.conftest import collect_leaked_sockets


@pytest.fixture(scope="module")
def client():
    """A ``distributed.Client`` of a scheduler with no workers (the tests start Dask
    ``Server``s of their own on its loop), one per test module."""
    with collect_leaked_sockets():  # distributed's scheduler leaks one as it starts
        cluster = distributed.LocalCluster(
            n_workers=0,
            processes=False,
            protocol="tcp://",
            host="127.0.0.1",
            dashboard_address="127.0.0.1:0",
        )
    c = distributed.Client(cluster, set_as_default=False)
    yield c
    with collect_leaked_sockets():
        c.close()
        cluster.close()
