"""The dashboard's dataflow page, and Dask's own pages, during training on a real cluster.

Loaded over HTTP from the scheduler's dashboard port, as a browser (or JupyterLab's Dask
extension) would, while a model trains in a thread.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
import urllib.error
import urllib.request

import distributed
import numpy as np
import pytest

import dataflow as tf
from dataflow.runtime import dashboard
from dataflow.runtime.compile.plan import KernelCall, Stage
from dataflow.runtime.dask import lowering, step_metrics

from .conftest import dask_process, dask_worker, free_port, started_cluster, stop_processes

pytestmark = pytest.mark.distributed

PS = "/job:ps/replica:0/task:0/device:CPU:0"
W0 = "/job:worker/replica:0/task:0/device:CPU:0"


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=30) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as exc:
        with exc:
            return exc.code, exc.read()


def _json(url: str) -> dict:
    status, body = _get(url)
    assert status == 200, body[:2000]
    return json.loads(body)


def _base(link: str) -> str:
    return link.rsplit("/", 1)[0]


def _model(global_step=False):
    """Linear regression: the weights (and the global step, if asked for) on the ps,
    the gradient on worker 0."""
    setter = tf.train.replica_device_setter(ps_tasks=1, worker_device="/job:worker/task:0")
    with tf.device(setter):
        step = tf.train.get_or_create_global_step() if global_step else None
        w = tf.Variable(np.zeros((16, 1), np.float32), name="w")
        x = tf.placeholder(tf.float32, [None, 16], name="x")
        y = tf.placeholder(tf.float32, [None, 1], name="y")
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
        train = tf.train.GradientDescentOptimizer(0.05).minimize(loss, global_step=step)
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((64, 16)).astype(np.float32)
    feed = {x: xs, y: xs @ rng.standard_normal((16, 1)).astype(np.float32)}
    return train, loss, feed


@contextlib.contextmanager
def _training(sess, fetches, feed, min_steps):
    """Runs ``fetches`` in a thread until the block ends and ``min_steps`` ran; yields a
    function that waits until at least ``n`` steps ran."""
    stop = threading.Event()
    done = [0]
    failed: list[BaseException] = []

    def loop():
        try:
            while not stop.is_set() or done[0] < min_steps:
                sess.run(fetches, feed)
                done[0] += 1
        except BaseException as exc:
            failed.append(exc)

    def wait_for(n, timeout=120):
        deadline = time.monotonic() + timeout
        while done[0] < n and not failed and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not failed, failed
        assert done[0] >= n

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield wait_for
    finally:
        stop.set()
        thread.join(300)
    assert not failed, failed
    assert done[0] >= min_steps


@pytest.fixture(scope="module")
def dashboard_cluster():
    with started_cluster(ps=1, worker=1, dashboard_address="127.0.0.1:0") as c:
        yield c


def test_page_shows_resident_steps_while_training(dashboard_cluster):
    c = dashboard_cluster
    base = _base(c.dashboard_link)
    tf.Session.reset(c)
    train, loss, feed = _model()
    with tf.Session(c, config=tf.ConfigProto(resident_steps=True)) as sess:
        session = sess.backend.session_id
        sess.run(tf.global_variables_initializer())
        with _training(sess, [train, loss], feed, min_steps=300) as wait_for:
            wait_for(50)
            status, html = _get(base + "/dataflow")
            assert status == 200
            assert b"<title>Dask: dataflow</title>" in html and b"dataflow.json" in html
            data = _json(base + "/dataflow.json")
            wait_for(200)
            later = _json(base + "/dataflow.json")

    assert {w["name"]: w["error"] for w in data["workers"]} == {"ps-0": None, "worker-0": None}
    (mine,) = [s for s in data["sessions"] if s["session"] == session]
    assert mine["steps_per_s"] > 0 and mine["steps"] >= 50
    assert mine["workers"] == ["ps-0", "worker-0"]
    (again,) = [s for s in later["sessions"] if s["session"] == session]
    assert again["steps"] > mine["steps"]

    # Stage times on both devices of the model, for the training plan.
    stages = [s for s in data["stages"] if s["session"] == session and s["runs"] >= 50]
    assert {s["device"] for s in stages} == {PS, W0}
    assert all(s["mean_s"] > 0 and s["recent_mean_s"] is not None for s in stages)
    # Named by their labels (Plan.stage_label): "<countdown>.<main op>".
    assert any(
        s["name"].split(".", 1)[1].startswith("gradients/") for s in stages if s["device"] == W0
    )
    devices = {d["device"]: d for d in data["devices"]}
    assert devices[PS]["worker"] == "ps-0" and devices[W0]["runs_per_s"] > 0

    # The ps sends w (16 floats) to the worker each step, which sends the gradient back.
    moved = {
        (t["from"], t["to"]): t["bytes_per_step"]
        for t in data["transfers"]
        if t["session"] == session and t["bytes"] > 0
    }
    assert moved[(PS, W0)] >= 64 and moved[(W0, PS)] >= 64
    assert any(to == "client" for _, to in moved)  # the loss

    # The placed graph: every stage of the training plan, from both workers, linked.
    (graph,) = [
        g for g in data["graphs"] if g["session"] == session and len(g["stages"]) == len(stages)
    ]
    assert {s["worker"] for s in graph["stages"]} == {"ps-0", "worker-0"}
    assert graph["edges"] and all(a < b for a, b in graph["edges"])
    ops = {op for s in graph["stages"] for op, _ in s["ops"]}
    assert any(op.startswith("GradientDescent/update_w") for op in ops)

    # Memory: w (16 float32) on the ps.
    (ps,) = [m for m in data["memory"] if m["worker"] == "ps-0"]
    assert ps["device"] == PS and ps["variables"] >= 1 and ps["variable_bytes"] >= 64


def test_page_is_listed_where_jupyterlab_finds_pages(dashboard_cluster):
    with tf.Session(dashboard_cluster):
        pass  # a session registers the page (idempotent: it may already be there)
    plots = _json(_base(dashboard_cluster.dashboard_link) + "/individual-plots.json")
    assert plots["Dataflow"] == "/dataflow"
    # Dask's own entries are still listed.
    assert plots["Individual Task Stream"] == "/individual-task-stream"


def test_task_graph_path_keeps_dasks_pages_healthy(dashboard_cluster, caplog):
    """Keys group by stage and plan signature (not by step), and Dask's Groups page
    answers (it failed with a KeyError on this path before)."""
    c = dashboard_cluster
    base = _base(c.dashboard_link)
    tf.Session.reset(c)
    train, loss, feed = _model()

    def groups(dask_scheduler):
        return sorted(dask_scheduler.task_groups), sorted(dask_scheduler.task_prefixes)

    with caplog.at_level(logging.ERROR):
        with tf.Session(c, config=tf.ConfigProto(resident_steps=False)) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                sess.run([train, loss], feed)
            before = c.client.run_on_scheduler(groups)
            with _training(sess, [train, loss], feed, min_steps=20) as wait_for:
                wait_for(5)
                pages = ("individual-groups", "groups", "individual-group-progress", "status")
                for page in pages:
                    assert _get(f"{base}/{page}")[0] == 200, page
                wait_for(15)
            after = c.client.run_on_scheduler(groups)
            bound = sess._signature([train, loss], feed).bound
            names = lowering.group_names(bound.lowered)
        assert _get(f"{base}/individual-groups")[0] == 200
    assert "KeyError" not in caplog.text and "Uncaught exception" not in caplog.text
    # Many steps later, the same groups and prefixes: one per stage.
    assert after == before
    assert set(names) <= set(after[0])
    assert len(names) == len(bound.lowered.templates) == len(set(names))
    signature = {n.rsplit("-", 1)[1] for n in names}
    assert len(signature) == 1
    # The stages a stage reads have names that sort above its own (see group_names).
    for t in bound.lowered.templates:
        assert all(names[j] > names[t.index] for j in t.upstream)


def _task_counts(dask_scheduler, names):
    """What Dask's pages read of each stage's task group ``names``: the group's tasks by
    state (the Groups page), its prefix's states now (the progress bars) and since the
    scheduler started (``state_counts``), and the progress plot's bars."""
    from dask.utils import key_split
    from distributed.dashboard.components.scheduler import TaskProgress

    plot = TaskProgress(dask_scheduler)  # the plot of /individual-progress and /status
    plot.update()
    bars = dict(zip(plot.source.data["name"], plot.source.data["all"], strict=True))
    out = {}
    for name in names:
        prefix = dask_scheduler.task_prefixes[key_split(name)]
        group = dask_scheduler.task_groups.get(name)
        out[name] = {
            "group": dict(group.states) if group is not None else None,
            "held": sum(v for k, v in prefix.states.items() if k != "forgotten"),
            "ever": dict(prefix.state_counts),
            "bar": bars.get(prefix.name),
        }
    return out


def test_task_graph_path_counts_every_step_by_stage(dashboard_cluster):
    """N training steps on the task-graph path: each stage's task group (Groups page)
    and prefix (Dask's per-prefix counters) count N more tasks done, while what the
    scheduler holds, and so the progress plot's bar, stays the same size."""
    c = dashboard_cluster
    base = _base(c.dashboard_link)
    tf.Session.reset(c)
    train, loss, feed = _model()
    n = 25
    with tf.Session(c, config=tf.ConfigProto(resident_steps=False)) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run([train, loss], feed)
        names = lowering.group_names(sess._signature([train, loss], feed).bound.lowered)

        def counts(done):
            """The counts once the scheduler forgot every step up to ``done`` (the
            client releases a step's keys over another connection than this call's)."""
            deadline = time.monotonic() + 30
            while True:
                now = c.client.run_on_scheduler(_task_counts, names=names)
                if all(x["group"]["forgotten"] >= done for x in now.values()):
                    return now
                assert time.monotonic() < deadline, now
                time.sleep(0.05)

        before = counts(1)
        for _ in range(n):
            sess.run([train, loss], feed)
        after = counts(1 + n)
        for page in ("status", "individual-progress", "individual-groups"):
            assert _get(f"{base}/{page}")[0] == 200, page

    for name in names:
        b, a = before[name], after[name]
        # The Groups page: one group per stage for every step (its "total tasks").
        assert a["group"]["forgotten"] - b["group"]["forgotten"] == n, name
        # Dask's per-prefix totals (exported on /metrics as prefix_state_totals).
        assert a["ever"]["processing"] - b["ever"]["processing"] == n, name
        assert a["ever"]["memory"] - b["ever"]["memory"] == n, name
        # Held now: the session's anchor of the group, whatever the number of steps.
        assert a["held"] == b["held"] >= 1, name
        assert a["bar"] == b["bar"] == a["held"], name


def test_page_shows_training_progress_toward_the_last_step(dashboard_cluster, monkeypatch):
    """A MonitoredSession with a StopAtStepHook, on the default (resident) path: the
    page shows the global step against the last step, its rate and the time left while
    training, and the last step reached once the session closed."""
    from dataflow.train.sessions import progress

    monkeypatch.setattr(progress, "REPORT_EVERY_S", 0.05)  # a report every few steps
    c = dashboard_cluster
    url = _base(c.dashboard_link) + "/dataflow.json"
    tf.Session.reset(c)
    train, loss, feed = _model(global_step=True)
    last = 1000
    paused, resume = threading.Event(), threading.Event()
    done = [0]
    failed: list[BaseException] = []
    creator = tf.train.ChiefSessionCreator(master=c)
    mon = tf.train.MonitoredSession(creator, hooks=[tf.train.StopAtStepHook(last_step=last)])
    session = mon._sess.backend.session_id

    def loop():
        try:
            started = time.monotonic()
            while not mon.should_stop():
                mon.run(train, feed)
                done[0] += 1
                # Paused once, some reports in (the page is read meanwhile).
                if not paused.is_set() and done[0] >= 50 and time.monotonic() - started > 0.3:
                    paused.set()
                    resume.wait(120)
            mon.close()
        except BaseException as exc:
            failed.append(exc)

    def mine(condition):
        deadline = time.monotonic() + 60
        while True:
            rows = [s for s in _json(url)["sessions"] if s["session"] == session]
            if rows and rows[0]["progress"] and condition(rows[0]):
                return rows[0]
            assert not failed and time.monotonic() < deadline, (failed, rows)
            time.sleep(0.05)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        assert paused.wait(120), failed
        steps_so_far = done[0]
        mid = mine(lambda s: s["progress"]["global_steps_per_s"] is not None)
    finally:
        resume.set()
        thread.join(300)
    assert not failed, failed
    end = mine(lambda s: s["progress"]["global_step"] == last)

    p = mid["progress"]
    assert 1 <= p["global_step"] <= steps_so_far < last and p["last_step"] == last
    assert p["global_steps_per_s"] > 0 and p["eta_s"] > 0
    assert p["fraction"] == pytest.approx(p["global_step"] / last)
    assert mid["steps"] >= steps_so_far  # every step of the session, counted by the workers
    assert end["progress"]["fraction"] == 1.0 and end["progress"]["eta_s"] == 0.0
    assert end["steps"] >= last


def test_recorder_is_bounded_and_never_raises():
    recorder = step_metrics.StepRecorder()

    class Part:  # a StagePart's fields the recorder reads
        def __init__(self, stage):
            self.stage = stage
            self.send_to = (("worker-0", (stage.outputs[0],)),)
            self.client_slots = ()
            self.label = f"0.{stage.key_name}"
            self.group = ""  # not named for the task stream: not recorded there

    recorder.stage("p0/ps-0", object(), "1-s", 0.001, ())  # not a part: swallowed

    part = Part(Stage(0, PS, (KernelCall("a", "Identity", {}, (0,), (1,)),), (0,), (1,)))
    for i in range(3 * step_metrics.STEP_TIMES):
        recorder.stage(f"p{i % 100}/ps-0", part, f"{i}-s", 0.001, (np.ones(4, np.float32),))
    plans = recorder.report("ps-0")
    assert len(plans) == step_metrics.MAX_PLANS
    assert all(len(p["stages"]) == 1 for p in plans)
    assert sum(p["steps"] for p in plans) <= 3 * step_metrics.STEP_TIMES
    assert plans[0]["stages"][0]["sends"][0]["bytes_per_run"] == 16
    assert recorder.report("worker-0") == []


def _cli_scheduler_with_dashboard(pythonpath=None):
    port, http = free_port(), free_port()
    args = ["scheduler", "--host", "127.0.0.1", "--port", str(port)]
    args += ["--dashboard-address", f"127.0.0.1:{http}"]
    proc = dask_process(*args, **({"pythonpath": pythonpath} if pythonpath else {}))
    return f"tcp://127.0.0.1:{port}", f"http://127.0.0.1:{http}", proc


def test_registered_on_a_running_cluster_from_a_second_client(tmp_path):
    """A cluster started by ``dask scheduler``/``dask worker``, whose scheduler cannot
    import dataflow, gets the page when a second client registers it; registering
    again changes nothing."""
    no_dataflow = tmp_path / "no_dataflow"
    no_dataflow.mkdir()
    (no_dataflow / "sitecustomize.py").write_text('import sys\nsys.modules["dataflow"] = None\n')
    address, http, scheduler = _cli_scheduler_with_dashboard(str(no_dataflow))
    procs = [scheduler]
    try:
        procs += [dask_worker(address, "ps-0"), dask_worker(address, "worker-0")]
        with distributed.Client(address, timeout=60, set_as_default=False) as first:
            first.wait_for_workers(2, timeout=120)
            assert first.submit(sum, [1, 2], pure=False).result(timeout=60) == 3
            assert _get(http + "/dataflow")[0] == 404
            train, loss, feed = _model()
            # The second client (resident steps: the scheduler never unpickles them).
            with tf.Session(address, config=tf.ConfigProto(resident_steps=True)) as sess:
                sess.run(tf.global_variables_initializer())
                for _ in range(20):
                    sess.run([train, loss], feed)
                assert _get(http + "/dataflow")[0] == 200
                data = _json(http + "/dataflow.json")
                assert dashboard.register(first) and dashboard.register(first)
                plugins = first.run_on_scheduler(
                    lambda dask_scheduler: list(dask_scheduler.plugins)
                )
                assert plugins.count("dataflow-dashboard-page") == 1
                session = sess.backend.session_id
            (mine,) = [s for s in data["sessions"] if s["session"] == session]
            assert mine["steps"] >= 20
            (ps,) = [m for m in data["memory"] if m["worker"] == "ps-0"]
            assert ps["variable_bytes"] >= 64
            plots = _json(http + "/individual-plots.json")
            assert plots["Dataflow"] == "/dataflow"
    finally:
        assert stop_processes(procs, timeout=30) == []
