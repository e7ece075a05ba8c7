"""Fixtures for the distributed tests: real Dask clusters on 127.0.0.1.

One ``LocalCluster(ps=1, worker=2, processes=True)`` is shared by the whole folder
(starting one costs seconds); tests that break workers start their own. Variables live
on the cluster and outlive sessions, so every test starts from a reset cluster.
"""

from __future__ import annotations

import contextlib
import gc
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
from typing import Any

import distributed
import psutil
import pytest

import dataflow as tf


@contextlib.contextmanager
def collect_leaked_sockets():
    """``distributed``'s scheduler leaks a socket when it starts its HTTP server (a
    ``ResourceWarning`` at garbage collection, which pytest turns into an error in
    whichever test happens to be running then): collect it here, on purpose."""
    previous = sys.unraisablehook

    def hook(unraisable):
        if not (
            isinstance(unraisable.exc_value, ResourceWarning)
            and "socket" in str(unraisable.exc_value)
        ):
            previous(unraisable)

    sys.unraisablehook = hook
    try:
        yield
        gc.collect()
    finally:
        sys.unraisablehook = previous


def local_cluster(**kwargs):
    with collect_leaked_sockets():
        return tf.LocalCluster(**{"dashboard_address": None, **kwargs})


def kill_worker(cluster, name):
    """SIGKILLs the process of worker ``name`` (its nanny restarts it); returns the old
    address."""
    address = cluster.workers[name]
    pid = cluster.client.run(os.getpid, workers=[address])[address]
    os.kill(pid, signal.SIGKILL)
    return address


def wait_until_back(cluster, name, old_address, timeout=60):
    """Waits until worker ``name`` is in the cluster again at a new address."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        address = cluster.workers.get(name)
        if address is not None and address != old_address:
            return address
        time.sleep(0.05)
    raise AssertionError(f"{name} did not come back")


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def dask_process(*args, pythonpath=ROOT):
    """``dask <args>`` (the command users type) as a subprocess on loopback, with
    ``pythonpath`` first on its ``PYTHONPATH``; its output is dropped."""
    env = dict(
        os.environ,
        PYTHONPATH=pythonpath + os.pathsep + os.environ.get("PYTHONPATH", ""),
        OPENBLAS_NUM_THREADS="1",
    )
    return subprocess.Popen(
        [sys.executable, "-m", "dask", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def dask_worker(address, name, *options, pythonpath=ROOT):
    return dask_process(
        "worker",
        address,
        "--name",
        name,
        "--nthreads",
        "2",
        "--no-dashboard",
        "--host",
        "127.0.0.1",
        *options,
        pythonpath=pythonpath,
    )


def wait_for_workers(address, n, timeout=120):
    """Waits until the scheduler at ``address`` answers and has ``n`` workers."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with distributed.Client(address, timeout=5, set_as_default=False) as c:
                c.wait_for_workers(n, timeout=max(1, deadline - time.monotonic()))
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def stop_processes(procs, timeout=20):
    """SIGTERMs ``procs`` (last first); returns those that did not exit within
    ``timeout`` s, after killing them."""
    for p in reversed(procs):
        p.terminate()
    stuck = []
    for p in procs:
        try:
            p.wait(timeout)
        except subprocess.TimeoutExpired:
            stuck.append(p)
            p.kill()
            p.wait()
    return stuck


def restart_loop(*args, pythonpath=ROOT):
    """``dask <args>`` started again whenever it exits, half a second later: a shell
    loop in a process group of its own, the smallest stand-in for the supervisor that
    ``docs/fault_tolerance.md`` asks for (systemd ``Restart=always``, a Kubernetes pod).
    ``loop_child`` is the process the loop runs now; ``stop_loops`` ends loops."""
    env = dict(
        os.environ,
        PYTHONPATH=pythonpath + os.pathsep + os.environ.get("PYTHONPATH", ""),
        OPENBLAS_NUM_THREADS="1",
    )
    command = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "dask", *args])
    return subprocess.Popen(
        ["sh", "-c", f"while :; do {command}; sleep 0.5; done"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def loop_child(loop, timeout=60):
    """The pid of the ``dask`` process a ``restart_loop`` runs now (waiting for one)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        children = psutil.Process(loop.pid).children()
        if children:
            return children[0].pid
        time.sleep(0.05)
    raise AssertionError("the restart loop runs nothing")


def stop_loops(loops, timeout=20):
    """SIGTERMs the process groups of ``restart_loop``s and waits for every process in
    them (the shell exits at once; Dask's processes close on their own), killing those
    still there after ``timeout`` s; returns how many had to be killed."""
    procs = []
    for loop in loops:
        with contextlib.suppress(psutil.NoSuchProcess):
            procs += [psutil.Process(loop.pid), *psutil.Process(loop.pid).children(True)]
        with contextlib.suppress(ProcessLookupError):
            os.killpg(loop.pid, signal.SIGTERM)
    _, alive = psutil.wait_procs(procs, timeout=timeout)
    for p in alive:
        with contextlib.suppress(psutil.NoSuchProcess):
            p.kill()
    psutil.wait_procs(alive, timeout=timeout)
    for loop in loops:
        loop.wait()
    return len(alive)


@contextlib.contextmanager
def cli_scheduler():
    """A ``dask scheduler`` subprocess; yields ``(address, procs)``: add the workers you
    start to ``procs`` and they are stopped with it."""
    port = free_port()
    procs = [
        dask_process("scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard")
    ]
    try:
        yield f"tcp://127.0.0.1:{port}", procs
    finally:
        stop_processes(procs)


@contextlib.contextmanager
def started_cluster(**kwargs):
    """A ``local_cluster`` closed on exit (collecting the socket its close leaks)."""
    c = local_cluster(**kwargs)
    yield c
    with collect_leaked_sockets():
        c.close()


@pytest.fixture(scope="session")
def cluster():
    with started_cluster(ps=1, worker=2) as c:
        yield c


@pytest.fixture(scope="module")
def fragile():
    """A cluster of the test module's own, for tests that kill its workers."""
    with started_cluster(ps=1, worker=2) as c:
        yield c


@pytest.fixture(scope="module")
def tls_cluster():
    """A TLS cluster of the test module's own (1 ps, 1 worker; temporary certificates).
    Worker threads keep it cheap; the transport is TLS all the same."""
    with started_cluster(ps=1, worker=1, security=True, processes=False) as c:
        yield c


@pytest.fixture
def clean_cluster(cluster):
    tf.Session.reset(cluster)
    yield cluster


@pytest.fixture
def csess(clean_cluster):
    """A session on the shared cluster, with per-kernel dtype/shape checks on."""
    with tf.Session(clean_cluster, config=tf.ConfigProto(debug=True)) as s:
        yield s


@pytest.fixture
def rsess(clean_cluster):
    """A session on the shared cluster running resident steps (named, as a user might)."""
    with tf.Session(clean_cluster, config=tf.ConfigProto(debug=True, resident_steps=True)) as s:
        yield s


@pytest.fixture
def gsess(clean_cluster):
    """A session on the shared cluster on the opt-in task-graph path (one Dask task per
    stage per step)."""
    with tf.Session(clean_cluster, config=tf.ConfigProto(debug=True, resident_steps=False)) as s:
        yield s


def memory_of(array: Any) -> object:
    """The object owning ``array``'s memory, following views (and memoryviews) down."""
    owner: object = array
    while True:
        inner = owner.obj if isinstance(owner, memoryview) else getattr(owner, "base", None)
        if inner is None or isinstance(inner, (bytes, bytearray)):
            return owner
        owner = inner
