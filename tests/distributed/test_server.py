"""``tf.train.Server`` (TF1 tasks as Dask workers of one scheduler, in this process) and
``tf.train.SyncReplicasOptimizer`` on such a cluster, step by step against TF1's own
servers: the same values, the same stale gradients dropped."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import dataflow as tf
from dataflow.framework import errors
from dataflow.runtime.server import server as server_module
from dataflow.runtime.server.server import blas_share

from .conftest import collect_leaked_sockets, free_port

pytestmark = pytest.mark.distributed


@pytest.fixture(autouse=True)
def _no_dashboard_port_clash(monkeypatch):
    monkeypatch.setenv("DATAFLOW_DASHBOARD_ADDRESS", ":0")
    monkeypatch.delenv("DATAFLOW_SCHEDULER", raising=False)


def test_a_local_server_runs_sessions_on_its_own_dask_worker():
    with collect_leaked_sockets():
        server = tf.train.Server.create_local_server()
    try:
        assert server.target.startswith("grpc://127.0.0.1:")  # TF1's form
        assert server.scheduler_address.startswith("tcp://127.0.0.1:")
        assert server.worker_name == "localhost-0"
        assert (server.server_def.job_name, server.server_def.task_index) == ("localhost", 0)
        with tf.Graph().as_default():
            v = tf.Variable([1.0, 2.0])
            doubled = v.assign(v * 2.0)
            with tf.Session(server.target) as sess:
                sess.run(v.initializer)
                np.testing.assert_array_equal(sess.run(doubled), [2.0, 4.0])
                devices = set(sess.placement(doubled).values())
                assert devices == {"/job:localhost/replica:0/task:0/device:CPU:0"}
        joined = threading.Thread(target=server.join)
        joined.start()
        time.sleep(0.2)
        assert joined.is_alive()  # join serves until the server stops
    finally:
        server.stop()
    joined.join(30)
    assert not joined.is_alive()


def test_the_task_must_be_in_the_cluster_spec():
    spec = tf.train.ClusterSpec({"ps": ["127.0.0.1:1"], "worker": ["127.0.0.1:2", "127.0.0.1:3"]})
    with pytest.raises(ValueError, match="explicit `job_name`"):
        tf.train.Server(spec, start=False)
    with pytest.raises(ValueError, match="explicit `task_index`"):
        tf.train.Server(spec, job_name="worker", start=False)
    # TF1's classes (grpc_server_lib.cc): the task InvalidArgument, the job Internal.
    with pytest.raises(
        tf.errors.InvalidArgumentError, match='Task 5 was not defined in job "worker"'
    ):
        tf.train.Server(spec, job_name="worker", task_index=5, start=False)
    with pytest.raises(tf.errors.InternalError, match='Job "chief" was not defined in cluster'):
        tf.train.Server(spec, job_name="chief", task_index=0, start=False)
    with pytest.raises(tf.errors.InvalidArgumentError, match="host:port"):
        tf.train.Server({"worker": ["nohost"]}, start=False)
    server = tf.train.Server(spec, job_name="worker", task_index=1, start=False)
    # ps/0 starts the scheduler, on its own address; every task's target is its own.
    assert server.target == "grpc://127.0.0.1:3"
    assert server.scheduler_address == "tcp://127.0.0.1:1"
    with pytest.raises(errors.FailedPreconditionError, match="not been started"):
        server.join()


def test_an_external_scheduler_from_the_environment(monkeypatch):
    monkeypatch.setenv("DATAFLOW_SCHEDULER", "10.0.0.9:8786")
    server = tf.train.Server({"worker": ["127.0.0.1:2"]}, start=False)
    assert server.scheduler_address == "tcp://10.0.0.9:8786"
    assert server.target == "grpc://127.0.0.1:2"


def test_a_session_on_a_task_target_runs_unplaced_ops_on_that_task():
    """As in TF1: ``server.target`` (``grpc://`` and the task's address) makes that task
    the session's home, also when the target is written by hand, and also for the task
    that started the scheduler (which listens on the task's address)."""
    spec = tf.train.ClusterSpec(
        {
            "ps": [f"127.0.0.1:{free_port()}"],
            "worker": [f"localhost:{free_port()}", f"127.0.0.1:{free_port()}"],
        }
    )
    with collect_leaked_sockets():
        servers = _servers(spec)
    try:
        for (job, task), server in servers.items():
            by_hand = "grpc://" + spec.task_address(job, task)
            for target in (server.target, by_hand):
                with tf.Graph().as_default():
                    doubled = tf.constant([1.0, 2.0]) * 2.0
                    with tf.Session(target) as sess:
                        np.testing.assert_array_equal(sess.run(doubled), [2.0, 4.0])
                        assert set(sess.placement(doubled).values()) == {
                            f"/job:{job}/replica:0/task:{task}/device:CPU:0"
                        }
        with tf.Graph().as_default():  # the plain scheduler address: worker 0, as before
            doubled = tf.constant([1.0]) * 2.0
            with tf.Session(servers[("worker", 1)].scheduler_address) as sess:
                assert set(sess.placement(doubled).values()) == {
                    "/job:worker/replica:0/task:0/device:CPU:0"
                }
    finally:
        for task in (("worker", 1), ("worker", 0), ("ps", 0)):
            servers[task].stop()


def test_a_task_target_where_nothing_listens_is_unavailable():
    """At once, not after Dask's connect timeout (30 s of retries): a task restarting
    refuses connections, and the recovery loop retries opening sessions itself."""
    with tf.Graph().as_default():
        tf.constant(1.0)
        start = time.monotonic()
        with pytest.raises(errors.UnavailableError, match="Nothing answered at 'grpc://"):
            tf.Session(f"grpc://127.0.0.1:{free_port()}")
        assert time.monotonic() - start < 5


# --- SyncReplicasOptimizer, step by step (the way TF's own tests drive it) ----------------------
def _sync_replica(lib, worker_id, target):
    """One between-graph replica: its own graph and monitored session."""
    graph = lib.Graph()
    with graph.as_default():
        with lib.device("/job:ps/task:0"):
            step = lib.Variable(0, name="global_step", trainable=False, dtype=lib.int64)
            v0 = lib.Variable(0.0, name="v0")
        with lib.device("/job:ps/task:1"):
            v1 = lib.Variable([1.0, 2.0], name="v1")
        with lib.device(f"/job:worker/task:{worker_id}"):
            g0 = lib.constant(0.1 + worker_id * 0.2)
            g1 = lib.constant([0.9, -0.5]) * (1.0 + worker_id)
            opt = lib.train.SyncReplicasOptimizer(
                lib.train.GradientDescentOptimizer(2.0),
                replicas_to_aggregate=2,
                total_num_replicas=2,
            )
            train = opt.apply_gradients([(g0, v0), (g1, v1)], global_step=step)
            hook = opt.make_session_run_hook(worker_id == 0, num_tokens=2)
        # TF1's chief thread waits for gradients until its session closes, after the
        # whole stop grace period: none for the reference. Ours stops at the request,
        # so the default grace (120 s) costs nothing (the test's time shows it).
        grace = 120 if lib is tf else 1
        sess = lib.train.MonitoredTrainingSession(
            master=target, is_chief=worker_id == 0, hooks=[hook], stop_grace_period_secs=grace
        )
    local_step = [v for v in graph.get_collection("local_variables") if "local_step" in v.name]
    return sess, train, [step, v0, v1, local_step[0]]


def _drive(lib, targets):
    """TF's test sequence: two steps one after the other (initial tokens allow it), the
    second pair stale, then both replicas together."""
    chief, chief_train, chief_vars = _sync_replica(lib, 0, targets[0])
    other, other_train, other_vars = _sync_replica(lib, 1, targets[1])
    seen = [other.run(other_vars)]

    def wait_for_step(n):
        deadline = time.monotonic() + 60
        while other.run(other_vars[0]) != n:
            assert time.monotonic() < deadline, f"global step never reached {n}"
            time.sleep(0.01)

    chief.run(chief_train)
    other.run(other_train)
    wait_for_step(1)
    seen.append(other.run(other_vars) + [chief.run(chief_vars[3])])
    chief.run(chief_train)  # both gradients are for step 0: dropped as stale
    other.run(other_train)
    seen.append(other.run(other_vars) + [chief.run(chief_vars[3])])
    together = [
        threading.Thread(target=s.run, args=(t,))
        for s, t in ((chief, chief_train), (other, other_train))
    ]
    for t in together:
        t.start()
    for t in together:
        t.join(60)
    wait_for_step(2)
    seen.append(other.run(other_vars))
    other.close()
    chief.close()
    return seen


def _servers(spec):
    servers = {}

    def start(job, task):
        servers[(job, task)] = tf.train.Server(spec, job_name=job, task_index=task)

    # Each task starts in its own thread, as each TF1 task starts in its own process.
    threads = [
        threading.Thread(target=start, args=(job, task))
        for job in spec.jobs
        for task in spec.task_indices(job)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return servers


@pytest.mark.tf
@pytest.mark.slow
# TF1's own chief queue runner thread raises CancelledError when its session closes
# while it waits for gradients (the reference's behaviour, not ours).
@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_sync_replicas_matches_tf1_step_by_step():
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    spec = tf.train.ClusterSpec(
        {
            "ps": [f"127.0.0.1:{free_port()}" for _ in range(2)],
            "worker": [f"127.0.0.1:{free_port()}" for _ in range(2)],
        }
    )
    with collect_leaked_sockets():
        servers = _servers(spec)
    try:
        ours = _drive(tf, [servers[("worker", i)].target for i in range(2)])
    finally:
        # The workers leave first; ps/0 hosts the scheduler.
        for task in (("worker", 1), ("worker", 0), ("ps", 1), ("ps", 0)):
            servers[task].stop()
    tf1_spec = tf1.train.ClusterSpec(
        {
            "ps": [f"localhost:{free_port()}" for _ in range(2)],
            "worker": [f"localhost:{free_port()}" for _ in range(2)],
        }
    )
    tf1_servers = [
        tf1.train.Server(tf1_spec, job_name=job, task_index=task)
        for job, task in (("ps", 0), ("ps", 1), ("worker", 0), ("worker", 1))
    ]
    theirs = _drive(tf1, [tf1_servers[2].target, tf1_servers[3].target])
    # TF1's chief thread dies of its session's closing: let it do so inside this test,
    # where its error is filtered, not in whichever test runs next.
    for thread in threading.enumerate():
        if thread.name.startswith("QueueRunnerThread"):
            thread.join(30)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        for x, y in zip(a, b, strict=True):
            np.testing.assert_allclose(x, y, rtol=1e-6)
    # The numbers themselves: step 1 applies the mean of both replicas' gradients.
    np.testing.assert_allclose(ours[1][1], 0.0 - 2.0 * (0.1 + 0.3) / 2, rtol=1e-6)
    np.testing.assert_allclose(ours[3][1], 0.0 - 2 * 2.0 * (0.1 + 0.3) / 2, rtol=1e-6)


def test_a_task_takes_its_share_of_the_host_for_blas():
    """Three tasks with two stage threads each on a 16-core host: 2 BLAS threads each (not
    16: spinning OpenBLAS threads of several tasks made a small matmul 10-80x slower)."""
    spec = tf.train.ClusterSpec(
        {"ps": ["10.0.0.1:1"], "worker": ["10.0.0.1:2", "10.0.0.1:3", "10.0.0.2:2"]}
    )
    assert blas_share(spec, "10.0.0.1", threads=2, cores=16) == 2
    assert blas_share(spec, "10.0.0.2", threads=2, cores=16) == 8
    assert blas_share(spec, "10.0.0.1", threads=2, cores=2) == 1
    # And a started task applies it to its process's BLAS.
    code = (
        "import os, dataflow as tf; from threadpoolctl import threadpool_info;"
        "from dataflow.runtime.server.server import blas_share;"
        f"spec = tf.train.ClusterSpec({{'worker': ['127.0.0.1:{free_port()}']}});"
        "s = tf.train.Server(spec, job_name='worker', task_index=0);"
        "want = blas_share(spec, '127.0.0.1', 2, os.cpu_count());"
        "got = {i['num_threads'] for i in threadpool_info() if i['user_api'] == 'blas'};"
        "s.stop(); print(want, sorted(got))"
    )
    env = dict(os.environ, DATAFLOW_DASHBOARD_ADDRESS=":0")
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env
    )
    want, got = out.stdout.split(maxsplit=1)
    assert got.strip() == f"[{want}]", out.stderr[-2000:]


def test_ports_a_task_chooses_itself_are_none_of_the_cluster_specs(monkeypatch):
    """The scheduler's task picks free ports for its worker and dashboards; the system
    may offer one that another task of the spec (not started yet) is to listen on, and
    that task would then fail with "address in use". Those ports are never taken."""
    spec = tf.train.ClusterSpec(
        {"ps": ["127.0.0.1:40001"], "worker": {1: "localhost:40002"}, "odd": ["no-port"]}
    )
    assert server_module._spec_ports(spec) == {40001, 40002}
    offered = iter([40001, 40002, 40001, 40003])

    class Socket:  # what the system offers, in order
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def bind(self, address):
            self.port = next(offered)

        def getsockname(self):
            return ("127.0.0.1", self.port)

    monkeypatch.setattr(server_module.socket, "socket", Socket)
    assert server_module._free_port("127.0.0.1", server_module._spec_ports(spec)) == 40003
    offered = iter([40002, 40005])
    monkeypatch.setenv("DATAFLOW_DASHBOARD_ADDRESS", ":0")
    assert server_module._dashboard_address("127.0.0.1", frozenset({40002})) == ":40005"
    monkeypatch.setenv("DATAFLOW_DASHBOARD_ADDRESS", "127.0.0.1:8790")
    assert server_module._dashboard_address("127.0.0.1", frozenset({40002})) == "127.0.0.1:8790"
