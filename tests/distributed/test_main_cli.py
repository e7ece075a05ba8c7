"""``python -m dataflow``: ``version``, ``devices``, and ``check`` against a real cluster
(a ``dask scheduler`` and ``dask worker`` subprocesses, one of which cannot import
dataflow)."""

from __future__ import annotations

import subprocess
import sys

import pytest

import dataflow as tf

from .conftest import cli_scheduler, dask_worker, wait_for_workers

pytestmark = pytest.mark.distributed


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "dataflow", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_version_and_devices():
    version = _cli("version")
    assert version.returncode == 0, version.stderr
    assert version.stdout.splitlines()[0] == f"dataflow {tf.__version__}"
    assert "numpy" in version.stdout and "distributed" in version.stdout
    devices = _cli("devices")
    assert devices.returncode == 0, devices.stderr
    assert devices.stdout.startswith("/job:localhost/replica:0/task:0/device:CPU:0 (CPU")
    with tf.Session() as sess:
        listed = [d.name for d in sess.list_devices()]
    lines = devices.stdout.splitlines()
    assert [line.split(" (")[0] for line in lines if line.startswith("/job:")] == listed
    if not any("/device:GPU:" in name for name in listed):  # and why, when there is none
        assert lines[-1].startswith("no GPU device: CuPy")


def test_check_names_the_workers_without_dataflow(tmp_path):
    blocked = tmp_path / "no_dataflow"
    blocked.mkdir()
    (blocked / "sitecustomize.py").write_text('import sys\nsys.modules["dataflow"] = None\n')
    with cli_scheduler() as (address, procs):
        procs.append(dask_worker(address, "worker-0"))
        procs.append(dask_worker(address, "plain-0", pythonpath=str(blocked)))
        wait_for_workers(address, 2)
        out = _cli("check", address)
    assert out.returncode == 1, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == f"2 worker(s) at {address}; this process runs dataflow {tf.__version__}"
    plain, worker = lines[1:3]  # sorted by name
    assert plain.startswith("  plain-0 at tcp://127.0.0.1:")
    assert "MISSING: dataflow is not importable there" in plain
    assert worker.startswith("  worker-0 at tcp://127.0.0.1:")
    assert f": dataflow {tf.__version__}, 0 usable GPU(s)" in worker
    assert lines[3] == (
        f"1 worker(s) cannot run this dataflow; install dataflow {tf.__version__} there, "
        "or ship it from a client with dataflow.install_on(client)"
    )


def test_check_says_when_the_scheduler_cannot_be_reached():
    out = _cli("check", "tcp://127.0.0.1:9", "--timeout", "1")
    assert out.returncode == 2
    assert out.stderr.startswith("cannot reach a Dask scheduler at tcp://127.0.0.1:9")
