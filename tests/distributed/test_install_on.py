"""``dataflow.install_on``: ``dask worker`` processes that cannot import dataflow get this
process's copy through a nanny plugin, are restarted, and then run steps; workers that
have it are left alone, and a worker joining later gets it too.

"Cannot import dataflow" here is a worker whose ``sitecustomize`` hides this checkout
(``not_installed``): dataflow is not installed there, but a copy elsewhere on
``sys.path`` imports (unlike ``test_good_citizen``'s ``no_dataflow``, which
blocks every copy).
"""

from __future__ import annotations

import os
import subprocess
import sys

import distributed
import numpy as np
import pytest

import dataflow as tf
from dataflow import install

from .conftest import dask_process, dask_worker, free_port, stop_processes, wait_for_workers

pytestmark = pytest.mark.distributed


SITECUSTOMIZE = """\
import importlib.machinery, os, sys


class NotInstalled:
    # Finds ``dataflow`` only outside this checkout: not through the editable install,
    # nor through the working directory ``python -m dask`` puts on sys.path.
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name != "dataflow":
            return None
        entries = [p for p in sys.path if os.path.realpath(p or ".") != {root!r}]
        spec = importlib.machinery.PathFinder.find_spec(name, entries)
        if spec is None:
            raise ModuleNotFoundError("No module named 'dataflow'", name=name)
        return spec


sys.meta_path.insert(0, NotInstalled)
"""


@pytest.fixture
def not_installed(tmp_path):
    root = os.path.realpath(os.path.dirname(os.path.dirname(tf.__file__)))
    (tmp_path / "sitecustomize.py").write_text(SITECUSTOMIZE.format(root=root))
    return str(tmp_path)


def _by_name(client, found):
    names = {a: w["name"] for a, w in client.scheduler_info(n_workers=-1)["workers"].items()}
    return {names[a]: v for a, v in found.items()}


def _pids(client):
    return _by_name(client, client.run(os.getpid))


def _dataflow_file():
    import dataflow

    return dataflow.__file__


def _train(client):
    """A ps/worker program as TF1 users wrote it: a least-squares fit of ``y = 3x``."""
    tf.reset_default_graph()
    with tf.device("/job:ps/task:0"):
        w = tf.Variable(0.0, name="w")
    with tf.device("/job:worker/task:0"):
        x = tf.placeholder(tf.float32, [None])
        loss = tf.reduce_mean(tf.square(w * x - 3.0 * x))
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    xs = np.array([1.0, 2.0], np.float32)
    with tf.Session(client) as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            sess.run(train, {x: xs})
        return sess.run(w)


def test_install_on_ships_dataflow_to_a_cluster_without_it(not_installed):
    version = tf.__version__
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    args = ("scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard")
    procs = [dask_process(*args, pythonpath=not_installed)]
    try:
        procs.append(dask_worker(address, "ps-0", pythonpath=not_installed))
        procs.append(dask_worker(address, "worker-0", pythonpath=not_installed))
        procs.append(dask_worker(address, "worker-1"))
        wait_for_workers(address, 3)
        with distributed.Client(address, set_as_default=False) as client:
            install.register_by_value()  # so that the probe runs where dataflow is missing
            scheduler = client.run_on_scheduler(install.dataflow_version)
            assert scheduler == (None, "No module named 'dataflow'")
            before = _by_name(client, install.worker_versions(client))
            assert before["worker-1"] == (version, "")
            for name in ("ps-0", "worker-0"):
                assert before[name] == (None, "No module named 'dataflow'")
            pids = _pids(client)

            assert tf.install_on(client) == {n: version for n in ("ps-0", "worker-0", "worker-1")}
            after = _pids(client)
            assert after["worker-1"] == pids["worker-1"]  # it had this version: untouched
            assert after["ps-0"] != pids["ps-0"] and after["worker-0"] != pids["worker-0"]
            files = _by_name(client, client.run(_dataflow_file))
            assert files["worker-1"] == tf.__file__
            for name in ("ps-0", "worker-0"):  # the shipped copy, in the nanny's directory
                assert f"install-dataflow-{version}{os.sep}dataflow" in files[name]

            # Three steps of gradient descent, w <- w - 0.1 * mean(2 (w - 3) x^2), x = 1, 2.
            expected = 0.0
            for _ in range(3):
                expected -= 0.1 * np.mean(2 * (expected - 3.0) * np.array([1.0, 4.0]))
            assert client.run_on_scheduler(install.dataflow_version) == (version, "")
            assert _train(client) == pytest.approx(expected, rel=1e-6)

            # A worker without dataflow joining later gets it from the replayed plugin.
            procs.append(dask_worker(address, "worker-2", pythonpath=not_installed))
            client.wait_for_workers(4, timeout=60)
            later = _by_name(client, install.worker_versions(client))
            assert later.get("worker-2") == (version, "")
        check = subprocess.run(
            [sys.executable, "-m", "dataflow", "check", address],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert check.returncode == 0, check.stdout + check.stderr
    finally:
        stop_processes(procs)
