"""dataflow on a cluster it shares: it leaves the cluster as it found it, closes quickly
in any order, says what it waits for, serves a real dashboard, and a script that
forgets its main guard gets one clear error.

"A worker without dataflow" is a ``dask worker`` subprocess in which ``import dataflow``
raises ``ImportError`` (see ``no_dataflow``): to Python there, dataflow is not
installed.
"""

from __future__ import annotations

import asyncio
import logging
import re
import subprocess
import sys
import textwrap
import urllib.request

import dask
import distributed
import pytest

import dataflow as tf
from dataflow.framework import errors
from dataflow.runtime.dask import cluster_view

from .conftest import (
    cli_scheduler,
    collect_leaked_sockets,
    dask_worker,
    kill_worker,
    local_cluster,
    started_cluster,
    stop_processes,
    wait_for_workers,
    wait_until_back,
)

pytestmark = pytest.mark.distributed


@pytest.fixture
def no_dataflow(tmp_path):
    """A folder that, first on ``PYTHONPATH``, makes ``import dataflow`` fail in every
    process started with it (``sitecustomize`` runs at start-up, after the editable
    install's import hook, which a shadowing package could not beat)."""
    (tmp_path / "sitecustomize.py").write_text(
        'import sys\nsys.modules["dataflow"] = None  # "not installed"\n'
    )
    return str(tmp_path)


def _plugins(client):
    """The dataflow plugins the scheduler would replay on a joining worker."""
    names = client.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.worker_plugins))
    return [n for n in names if n.startswith("dataflow-")]


def _one_step(target):
    tf.reset_default_graph()
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(2.0, name="shared_v")
    with tf.device("/job:worker/task:0"):
        doubled = v * 2.0
    sess = tf.Session(target)
    sess.run(v.initializer)
    assert sess.run(doubled) == 4.0
    return sess


def _plain_worker_runs_work(observer, address, name, pythonpath, procs):
    """Starts a worker without dataflow named ``name`` (added to ``procs``); returns its
    process once it has joined and run a plain Dask task."""
    proc = dask_worker(address, name, pythonpath=pythonpath)
    procs.append(proc)
    expected = len(observer.scheduler_info(n_workers=-1)["workers"]) + 1
    observer.wait_for_workers(expected, timeout=60)
    plain = [
        a for a, w in observer.scheduler_info(n_workers=-1)["workers"].items() if w["name"] == name
    ]
    assert observer.submit(sum, [1, 2], workers=plain, pure=False).result(timeout=30) == 3
    return proc


def test_a_worker_without_dataflow_joins_after_and_during_sessions(no_dataflow):
    with cli_scheduler() as (address, procs):
        procs += [dask_worker(address, "ps-0"), dask_worker(address, "worker-0")]
        wait_for_workers(address, 2)
        with distributed.Client(address, set_as_default=False) as observer:
            sess = _one_step(address)
            assert len(_plugins(observer)) == 1
            # While a session is open its plugin is registered; a worker without
            # dataflow still starts (the plugin travels by value and skips it).
            during = _plain_worker_runs_work(observer, address, "plain-0", no_dataflow, procs)
            sess.close()
            # Every session and client of ours closed: nothing of ours is left to replay.
            assert _plugins(observer) == []
            after = _plain_worker_runs_work(observer, address, "plain-1", no_dataflow, procs)
        # Their nannies stop on SIGTERM.
        assert stop_processes([during, after], timeout=30) == []


def test_two_clients_keep_their_own_registrations():
    with started_cluster(ps=1, worker=1) as c:
        first = _one_step(c.target)
        second = _one_step(c.target)
        assert len(_plugins(c.client)) == 2
        first.close()
        # The other client's plugin (and the workers' handlers) stay for its session.
        assert len(_plugins(c.client)) == 1
        assert second.run("mul:0") == 4.0
        handlers = c.client.run(lambda dask_worker: "dataflow_steps" in dask_worker.handlers)
        assert all(handlers.values())
        second.close()
        assert _plugins(c.client) == []
        handlers = c.client.run(lambda dask_worker: "dataflow_steps" in dask_worker.handlers)
        assert not any(handlers.values())


def test_closing_the_cluster_before_its_sessions_is_quick_and_quiet(caplog):
    c = local_cluster(ps=1, worker=1)
    sess = _one_step(c.target)  # a client of the session's own
    own_client = sess.backend.client
    with caplog.at_level(logging.ERROR, logger="distributed.client"), collect_leaked_sockets():
        c.close()
        assert own_client.status == "closed"
        sess.close()
    assert "Failed to reconnect" not in caplog.text


def test_lost_connections_while_opening_are_unavailable():
    """Each way Dask reports a lost peer becomes TF's UnavailableError, which recovery
    retries on."""
    from distributed.comm import CommClosedError

    for exc in (
        CommClosedError("in: closed"),
        ConnectionRefusedError("refused"),
        TimeoutError("connect timed out"),
    ):
        with pytest.raises(errors.UnavailableError, match=type(exc).__name__):
            with cluster_view.comm_failures_as_unavailable("opening a session"):
                raise exc
    with pytest.raises(ValueError):  # not a communication failure: unchanged
        with cluster_view.comm_failures_as_unavailable("opening a session"):
            raise ValueError("a bug")


def test_first_session_says_what_it_waits_for(caplog, monkeypatch):
    """On a plain Dask cluster (no preload) the first session waits for the workers to
    import dataflow and says so after a moment (here: at once)."""
    monkeypatch.setattr(cluster_view, "WAIT_NOTICE_AFTER_S", 0.0)
    with collect_leaked_sockets():
        plain = distributed.LocalCluster(
            n_workers=1,
            processes=True,
            threads_per_worker=1,
            dashboard_address=None,
            host="127.0.0.1",
        )
    try:
        with caplog.at_level(logging.WARNING, logger="dataflow.runtime.dask.cluster_view"):
            with tf.Session(plain) as sess:
                assert sess.run(tf.constant(3.0) * 2.0) == 6.0
        assert "waiting for 1 Dask worker(s) to import dataflow" in caplog.text
    finally:
        with collect_leaked_sockets():
            plain.close()


def test_local_cluster_preloads_dataflow_and_serves_the_dashboard():
    with started_cluster(ps=1, worker=1, dashboard_address="127.0.0.1:0") as c:
        loaded = c.client.run(lambda: "dataflow.runtime.dask.worker_state" in sys.modules)
        assert all(loaded.values())
        link = c.dashboard_link
        assert link.startswith("http://127.0.0.1:") and link.endswith("/status")
        with urllib.request.urlopen(link, timeout=30) as page:
            assert page.status == 200
            html = page.read().decode()
        # The real Bokeh dashboard, not the "Dask needs bokeh" placeholder: a Bokeh
        # document whose library the server also serves.
        assert "<title>Dask Diagnostic UI</title>" in html and "needs bokeh" not in html
        script = re.search(r'<script src="(static/js/bokeh\.min\.js[^"]*)"', html)
        assert script is not None and "task-stream" in html
        with urllib.request.urlopen(link.rsplit("/", 1)[0] + "/" + script[1], timeout=30) as js:
            assert js.status == 200 and b"Bokeh" in js.read(4096)


@pytest.mark.parametrize("path", ["dataflow.worker", "dataflow.runtime.worker_state"])
def test_dask_workers_preload_dataflow_by_the_new_path_and_the_old(path):
    """``dask worker --preload dataflow.worker`` (docs/deployment.md), and the path of
    earlier releases still written in deployments: the worker side is imported when the
    worker starts."""
    with cli_scheduler() as (address, procs):
        procs.append(dask_worker(address, "worker-0", "--preload", path))
        wait_for_workers(address, 1)
        with distributed.Client(address, set_as_default=False) as client:
            loaded = client.run(lambda: "dataflow.runtime.dask.worker_state" in sys.modules)
        assert list(loaded.values()) == [True]


def _listening(pids):
    """``(pid, ip)`` of every listening TCP socket of the processes ``pids``."""
    import psutil

    out = []
    for pid in pids:
        try:
            conns = psutil.Process(pid).net_connections(kind="tcp")
        except psutil.NoSuchProcess:
            continue
        out += [(pid, c.laddr.ip) for c in conns if c.status == psutil.CONN_LISTEN]
    return out


@pytest.mark.parametrize("dashboard", [":8787", None], ids=["dashboard", "no-dashboard"])
def test_everything_a_local_cluster_opens_listens_on_loopback(dashboard):
    """The scheduler, its dashboard (or its bare HTTP routes), the nannies and the
    workers: none listens on every interface unless ``host`` asks for it (a port alone
    made Dask's dashboard listen on 0.0.0.0)."""
    import psutil

    with started_cluster(ps=1, worker=1, dashboard_address=dashboard) as c:
        me = psutil.Process()
        pids = [me.pid] + [p.pid for p in me.children(recursive=True)]
        sockets = _listening(pids)
        assert len({pid for pid, _ in sockets}) >= 3  # this process, 2 nannies, 2 workers
        assert all(ip == "127.0.0.1" for _, ip in sockets), sockets
        if dashboard:
            assert c.dashboard_link.startswith("http://127.0.0.1:")


def test_an_unguarded_script_gets_one_clear_error(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(
        textwrap.dedent("""\
        import dataflow as tf
        cluster = tf.LocalCluster(ps=1, worker=1, dashboard_address=None)
        print("started")
    """)
    )
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert done.returncode == 1
    assert 'if __name__ == "__main__":' in done.stderr
    assert done.stderr.count("Traceback") == 1 and "started" not in done.stdout
    guarded = tmp_path / "guarded.py"
    guarded.write_text(
        textwrap.dedent("""\
        import dataflow as tf
        if __name__ == "__main__":
            with tf.LocalCluster(ps=1, worker=1, dashboard_address=None) as cluster:
                print("started", sorted(cluster.workers))
    """)
    )
    done = subprocess.run(
        [sys.executable, str(guarded)], capture_output=True, text=True, timeout=180, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert "started ['ps-0', 'worker-0']" in done.stdout


def test_a_slow_restart_is_left_to_the_nanny():
    """Dask's cluster object closes a worker's nanny when no worker of that name is back
    ``lost-worker-timeout`` after a removal; ours leaves the restart to the nanny, so a
    ps whose new process starts slowly still comes back."""
    with (
        started_cluster(ps=1, worker=0) as c,
        dask.config.set({"distributed.deploy.lost-worker-timeout": "0.2s"}),
    ):
        nanny = c.cluster.workers["ps-0"]
        restart = nanny.instantiate

        async def slow_restart():
            await asyncio.sleep(2.0)  # ten lost-worker timeouts
            return await restart()

        nanny.instantiate = slow_restart
        try:
            wait_until_back(c, "ps-0", kill_worker(c, "ps-0"))
        finally:
            del nanny.instantiate
        assert c.cluster.workers["ps-0"] is nanny and nanny.status.name == "running"


def test_a_cluster_without_a_dashboard_never_loads_bokeh(tmp_path):
    """The scheduler plugin's twice-a-second look for Bokeh's leftover documents must not
    import Bokeh itself: with no dashboard that cost the scheduler's loop about a second
    and ~14 MB the first time (and showed as memory kept in a step measured then)."""
    script = tmp_path / "no_dashboard.py"
    script.write_text(
        textwrap.dedent("""\
        import sys, time
        import dataflow as tf
        if __name__ == "__main__":
            with tf.LocalCluster(ps=1, worker=1, processes=False,
                                 dashboard_address=None) as cluster:
                with tf.device("/job:worker/task:0"):
                    total = tf.reduce_sum(tf.ones([3]))
                with tf.Session(cluster) as sess:
                    print("sum", sess.run(total))
                    time.sleep(1.5)  # three takes of stage runs
            print("bokeh loaded:", "bokeh" in sys.modules)
    """)
    )
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=180, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert "sum 3.0" in done.stdout
    assert "bokeh loaded: False" in done.stdout, done.stdout
