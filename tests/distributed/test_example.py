"""The parameter-server demo: both replication styles reach the ridge solution."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from dataflow.examples import parameter_server

pytestmark = pytest.mark.distributed

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.parametrize("resident", [False, True])
def test_parameter_server_demo(cluster, resident):
    out = parameter_server.main(steps=60, verbose=False, cluster=cluster, resident=resident)
    sync, asyn = out["in_graph"], out["between_graph"]
    assert sync["tasks_per_step"] == 4  # read beta, two towers, update: not the op count
    assert sync["distance"] < 0.05
    assert asyn["distance"] < 0.05
    assert set(asyn["replicas"]) == {0, 1}


@pytest.mark.slow
def test_demo_runs_as_a_module():
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run(
        [sys.executable, "-m", "dataflow.examples.parameter_server", "--steps", "20"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    assert "dashboard: http" in done.stdout
    assert "in-graph replication" in done.stdout and "between-graph" in done.stdout
    assert "cost" in done.stdout
