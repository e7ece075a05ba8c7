"""Dask's own tools on a dataflow run (issue 31): the stages' names, the same in every
view; resident steps in Dask's task stream and ``performance_report``; ``to_dask`` as
a collection ``dask.visualize`` takes; and no noise in the user's output."""

from __future__ import annotations

import shutil
import time

import distributed
import numpy as np
import pytest
from dask.utils import key_split

import dataflow as tf
from dataflow.runtime.dashboard import gather
from dataflow.runtime.dask import lowering

from .conftest import started_cluster

pytestmark = pytest.mark.distributed


@pytest.fixture(scope="module")
def tools_cluster():
    with started_cluster(ps=1, worker=1, dashboard_address="127.0.0.1:0") as c:
        yield c


def _adam_model():
    """Two variables on the ps, the gradient on worker 0, Adam's update on the ps."""
    setter = tf.train.replica_device_setter(ps_tasks=1, worker_device="/job:worker/task:0")
    with tf.device(setter):
        w = tf.Variable(np.zeros((16, 1), np.float32), name="w")
        b = tf.Variable(np.zeros((1,), np.float32), name="b")
        x = tf.placeholder(tf.float32, [None, 16], name="x")
        y = tf.placeholder(tf.float32, [None, 1], name="y")
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
        train = tf.train.AdamOptimizer(0.05).minimize(loss)
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((64, 16)).astype(np.float32)
    return train, loss, {x: xs, y: xs @ rng.standard_normal((16, 1)).astype(np.float32)}


def _collect(dask_worker):
    return gather.collect(dask_worker)


def test_a_stage_has_one_name_in_every_view(tools_cluster):
    """The Plan view, the dataflow page, the Dask keys and the task stream give each
    stage the same label: its number (a countdown) and what it is named after; the ps
    stage reading every variable is named after all of them, not one of them."""
    c = tools_cluster
    tf.Session.reset(c)
    train, loss, feed = _adam_model()
    with tf.Session(c) as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            sess.run([train, loss], feed)
        plan = sess.compiled_plan([train, loss], feed)
        lowered = sess._signature([train, loss], feed).bound.lowered
        page = c.client.run(_collect)
        html = plan._repr_html_()
    labels = [plan.stage_label(s.index) for s in plan.stages]
    assert len(set(labels)) == len(labels)
    n = len(plan.stages)
    assert [int(label.split(".")[0]) for label in labels] == list(range(n - 1, -1, -1))
    # Dask keys: the group (the key's first element) is "<label>@<device>-<signature>".
    for stage, group in zip(plan.stages, lowering.group_names(lowered), strict=True):
        name = group.rsplit("-", 1)[0]
        assert name == f"{labels[stage.index]}@{lowering.device_label(stage.device)}".replace(
            "-", "_"
        )
    # The page's stage rows and graph boxes (from every worker).
    shown = {}
    for report in page.values():
        for p in report["plans"]:
            if p["plan"] == lowered.plan_id:
                shown.update({s["index"]: s["name"] for s in p["stages"]})
        for layout in report["layouts"]:
            if layout["plan"] == lowered.plan_id:
                for s in layout["stages"]:
                    assert s["name"] == labels[s["index"]]
    assert shown == dict(enumerate(labels))
    for label in labels:
        assert label in html
    # The stage of reads: every variable Adam reads before the gradient, on the ps.
    reads = [s for s in plan.stages if s.key_name.startswith("ReadVariableOp_x")]
    assert reads, labels
    for s in reads:
        assert len([c for c in s.calls if c.op_type == "ReadVariableOp"]) == int(
            s.key_name.rpartition("_x")[2]
        )


def test_to_dask_is_a_collection_dask_visualize_draws(tools_cluster, tmp_path):
    """``dask.visualize(sess.to_dask(...))`` draws the step's stages (the docs' promise);
    it is still the graph (``dict``/``len``); computed with the cluster's client, it runs
    one step and gives the fetched values."""
    import dask

    c = tools_cluster
    tf.Session.reset(c)
    train, loss, feed = _adam_model()
    with distributed.Client(c.cluster.scheduler_address) as client, tf.Session(client) as sess:
        sess.run(tf.global_variables_initializer())
        step = sess.to_dask([loss], feed)
        plan = sess.compiled_plan([loss], feed)
        assert dask.is_dask_collection(step)
        assert len(dict(step)) == len(step) == len(plan.stages)
        assert {k[0].split("@")[0] for k in step} == {
            plan.stage_label(s.index).replace("-", "_") for s in plan.stages
        }
        if shutil.which("dot"):  # Dask draws with graphviz
            out = tmp_path / "step.svg"
            dask.visualize(step, filename=str(out))
            svg = out.read_text()
            for s in plan.stages:
                assert plan.stage_label(s.index).replace("-", "_").split("/")[0] in svg
        (value,) = dask.compute(step)[0]
        expected = sess.run(loss, feed)
    np.testing.assert_allclose(value, expected, rtol=1e-6)


def _stage_runs(client, since, groups, session):
    """Task-stream records of the stages ``groups`` of ``session`` that stopped after
    ``since`` (steps count from 1: a key of step 0 holds a scattered anchor)."""
    return [
        r
        for r in client.get_task_stream(start=since)
        if isinstance(r["key"], (tuple, list))
        and r["key"][0] in groups
        and r["key"][1] == session
        and r["key"][2] > 0
    ]


def _wait_for_runs(client, since, groups, session, n, timeout=30):
    deadline = time.monotonic() + timeout
    while True:
        runs = _stage_runs(client, since, groups, session)
        if len(runs) >= n or time.monotonic() > deadline:
            return runs
        time.sleep(0.1)


def _task_stream_names(dask_scheduler):
    """The rectangles' names in the /status page's task stream plot."""
    from distributed.dashboard.components.scheduler import TaskStream

    plot = TaskStream(dask_scheduler, n_rectangles=10000)
    plot.update()
    return list(zip(plot.source.data["name"], plot.source.data["worker"], strict=True))


def test_resident_steps_show_in_dasks_task_stream(tools_cluster):
    """Resident steps never reach the scheduler, yet each stage run is a rectangle of
    Dask's task stream, named and keyed as the stage's task, on the worker it ran on."""
    c = tools_cluster
    tf.Session.reset(c)
    train, loss, feed = _adam_model()
    n = 20
    with distributed.Client(c.cluster.scheduler_address) as client, tf.Session(client) as sess:
        client.get_task_stream(start=0, stop=0)  # the scheduler records a task stream
        sess.run(tf.global_variables_initializer())
        since = time.time()
        for _ in range(n):
            sess.run([train, loss], feed)
        bound = sess._signature([train, loss], feed).bound
        groups = lowering.group_names(bound.lowered)
        runs = _wait_for_runs(client, since, set(groups), sess.backend.session_id, n * len(groups))
        addresses = {info["name"]: a for a, info in client.scheduler_info()["workers"].items()}
        names = client.run_on_scheduler(_task_stream_names)
    assert len(runs) == n * len(groups)
    # In the order they stopped, whichever worker ran them: Dask bisects by stop time.
    stops = [r["startstops"][-1]["stop"] for r in runs]
    assert stops == sorted(stops)
    by_stage = {}
    for r in runs:
        by_stage.setdefault(r["key"][3], []).append(r)
        (span,) = r["startstops"]
        assert span["action"] == "compute" and since <= span["start"] <= span["stop"]
    for t in bound.lowered.templates:
        stage_runs = by_stage[t.index]
        assert len(stage_runs) == n
        assert {r["worker"] for r in stage_runs} == {addresses[t.worker]}
        assert sorted(r["key"][2] for r in stage_runs) == sorted({r["key"][2] for r in runs})
        # The plot's rectangles: one per run, named as the stage's Dask task prefix.
        prefix = key_split(groups[t.index])
        assert names.count((prefix, addresses[t.worker])) >= n


def test_performance_report_contains_resident_steps(tools_cluster, tmp_path):
    """``distributed.performance_report`` with the session's client (the default client)
    reports the stages of resident steps run inside it."""
    c = tools_cluster
    tf.Session.reset(c)
    train, loss, feed = _adam_model()
    out = tmp_path / "report.html"
    with distributed.Client(c.cluster.scheduler_address) as client, tf.Session(client) as sess:
        sess.run(tf.global_variables_initializer())
        groups = set(lowering.group_names(sess._signature([train, loss], feed).bound.lowered))
        with distributed.performance_report(filename=str(out)):
            since = time.time()
            for _ in range(10):
                sess.run([train, loss], feed)
            # The report reads what the scheduler has when the block ends.
            runs = _wait_for_runs(client, since, groups, sess.backend.session_id, 10 * len(groups))
    assert len(runs) == 10 * len(groups)
    html = out.read_text()
    # Its summary counts them (with what else the task stream holds from about then:
    # the initializer's stages, the anchors the session scattered), its plot names them.
    total = int(html.split("number of tasks: ", 1)[1].split()[0])
    assert total >= len(runs)
    for group in groups:
        assert key_split(group) in html


def _bokeh_closed_page_error():
    """The AssertionError Bokeh raises when a page's websocket closes before its
    session exists (its ``ServerConnection.session``), with Bokeh's own traceback."""
    import types

    from bokeh.server.connection import ServerConnection

    try:
        ServerConnection.session.fget(types.SimpleNamespace(_session=None))
    except AssertionError as exc:
        return exc
    raise AssertionError("bokeh no longer asserts there: recheck ClosedPageFilter")


def test_a_page_left_early_prints_no_traceback(tools_cluster, capfd):
    """A browser leaving a dashboard page before its Bokeh session began: tornado's
    ERROR record with Bokeh's traceback does not reach the script's output; any other
    error on that logger still does."""
    import logging

    with tf.Session(tools_cluster):  # a session readies the scheduler (the dashboard page)
        pass
    log = logging.getLogger("tornado.application")
    exc = _bokeh_closed_page_error()
    handler = logging.StreamHandler()  # the script's stderr, as Dask's logging config has
    log.addHandler(handler)
    try:
        log.error(
            "Uncaught exception GET /status/ws (127.0.0.1)",
            exc_info=(type(exc), exc, exc.__traceback__),
        )
        err = capfd.readouterr().err
        assert "Uncaught exception" not in err and "Traceback" not in err, err
        try:
            raise AssertionError("something else")
        except AssertionError as other:
            log.error("Uncaught exception GET /other", exc_info=other)
        assert "Uncaught exception GET /other" in capfd.readouterr().err
    finally:
        log.removeHandler(handler)


class _Gone:
    """Something a weak reference can name, gone as soon as it is made."""


def _a_callback_raises_then_its_document_goes(dask_scheduler=None):
    """As when a dashboard plot's update fails while its page closes: Bokeh runs the
    callback with its document patched in as ``curdoc()``, the callback raises, the
    document goes. Whether ``curdoc()`` is broken now (Bokeh 3.9 leaves the patch)."""
    import weakref

    from bokeh.document import Document
    from bokeh.document.callbacks import invoke_with_curdoc
    from bokeh.io import curdoc
    from bokeh.io import doc as bokeh_doc

    def update():
        raise RuntimeError("a plot's update failed")

    doc = Document()
    with pytest.raises(RuntimeError, match="update failed"):
        invoke_with_curdoc(doc, update)
    left = bokeh_doc._PATCHED_CURDOCS
    if left and left[-1]() is doc:
        # The document goes. Dropping this frame's name for it is not always the end of
        # it (in some runs of the suite something kept it alive through gc.collect(),
        # and the test skipped): the leftover entry is made to name a gone object, as it
        # does once the document is collected.
        left[-1] = weakref.ref(_Gone())
    del doc
    try:
        curdoc()
    except RuntimeError:
        return True
    return False


def _curdoc_works(dask_scheduler=None):
    from bokeh.io import curdoc

    try:
        curdoc()
    except RuntimeError:
        return False
    return True


def test_performance_report_works_after_a_dashboard_callback_raised(tools_cluster, tmp_path):
    """Bokeh leaves a failed callback's document patched in; once that document is gone
    every ``curdoc()`` of the process raises, Dask's ``performance_report`` with it. The
    dataflow plugin drops such leftovers in the scheduler within a take of stage runs."""
    c = tools_cluster
    tf.Session.reset(c)
    train, loss, feed = _adam_model()
    with distributed.Client(c.cluster.scheduler_address) as client, tf.Session(client) as sess:
        sess.run(tf.global_variables_initializer())
        if not client.run_on_scheduler(_a_callback_raises_then_its_document_goes):
            pytest.skip("this Bokeh pops a failed callback's patch itself")
        deadline = time.monotonic() + 10
        while not client.run_on_scheduler(_curdoc_works) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert client.run_on_scheduler(_curdoc_works)
        out = tmp_path / "report.html"
        with distributed.performance_report(filename=str(out)):
            sess.run([train, loss], feed)
    assert out.stat().st_size > 0


def _ps_part():
    """A one-op stage part on the ps, named for the task stream as a resident step's."""
    from dataflow.runtime.compile.plan import KernelCall, Stage

    stage = Stage(
        2,
        "/job:ps/replica:0/task:0/device:CPU:0",
        (KernelCall("a", "Neg", {}, (0,), (1,)),),
        (0,),
        (1,),
    )
    return lowering.StagePart(stage, (("f", 0),), (), (), (1,), "0.a", "0.a@ps:0-12345678")


def test_recorded_runs_are_bounded_and_taken_per_worker():
    """The runs kept for the task stream: resident runs only, at most RUNS_KEPT per
    worker (the newest), each taken once, by its own worker."""
    from dataflow.runtime.dask import step_metrics

    recorder = step_metrics.StepRecorder()
    part = _ps_part()
    out = (np.ones(4, np.float32),)
    recorder.stage("p/ps-0", part, "1-abc", 0.001, out)  # the task-graph path: Dask's own
    assert recorder.take_runs("ps-0") == []
    n = step_metrics.RUNS_KEPT + 10
    for i in range(1, n + 1):
        recorder.stage("p/ps-0", part, f"{i}-abc", 0.001, out, resident=True)
    recorder.stage("p/worker-0", part, "1-abc", 0.002, out, resident=True)
    runs = recorder.take_runs("ps-0")
    assert len(runs) == step_metrics.RUNS_KEPT
    assert [r["key"][2] for r in runs] == list(range(11, n + 1))
    assert runs[0]["key"] == ("0.a@ps:0-12345678", "abc", 11, 2)
    assert runs[0]["nbytes"] == 16
    (span,) = runs[0]["startstops"]
    # Wall-clock seconds near 1.8e9 are spaced 2**-22 s apart: a few of those.
    assert span["stop"] - span["start"] == pytest.approx(0.001, abs=4 * 2**-22)
    assert recorder.take_runs("ps-0") == []
    assert [r["key"][2] for r in recorder.take_runs("worker-0")] == [1]


def test_a_resident_stage_is_recorded_after_the_loops_turn_holding_no_output():
    """``stage_later``: recorded once the event loop's current turn (the step's sends and
    reply) is over, with the run's own end time and sizes, and without a reference to
    the outputs (a variable's buffer held there would not be updated in place)."""
    import asyncio
    import sys

    from dataflow.runtime.dask import step_metrics

    recorder = step_metrics.StepRecorder()
    part = _ps_part()
    out = np.ones(4, np.float32)
    refs = sys.getrefcount(out)

    async def turn():
        ended = time.time()
        recorder.stage_later(asyncio.get_running_loop(), "p/ps-0", part, "1-abc", 0.001, (out,))
        seen_at_once = recorder.take_runs("ps-0")
        held = sys.getrefcount(out) - refs
        await asyncio.sleep(0)
        return ended, seen_at_once, held, recorder.take_runs("ps-0")

    ended, seen_at_once, held, runs = asyncio.run(turn())
    assert seen_at_once == [] and held == 0
    (run,) = runs
    assert run["nbytes"] == 16 and run["key"] == ("0.a@ps:0-12345678", "abc", 1, 2)
    (span,) = run["startstops"]
    assert ended <= span["stop"] < ended + 1


_NO_CLOSE = """
import numpy as np
import distributed
import dataflow as tf

if __name__ == "__main__":
    if {dask_cluster!r}:
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1,
                                           dashboard_address=None)
        target, ps, worker = cluster.scheduler_address, "/job:worker/task:0", "/job:worker/task:1"
    else:
        target = tf.LocalCluster(ps=1, worker=1, dashboard_address=None)
        ps, worker = "/job:ps/task:0", "/job:worker/task:0"
    with tf.device(ps):
        w = tf.Variable(np.ones((4, 1), np.float32), name="w")
    with tf.device(worker):
        loss = tf.reduce_sum(w * 2.0)
    sess = tf.Session(target)  # never closed, nor is the cluster
    sess.run(tf.global_variables_initializer())
    print("loss", sess.run(loss))
"""


# Only a Dask ``LocalCluster`` so far: with a ``dataflow.LocalCluster`` the scheduler
# (in the script's process) sometimes logs "cannot schedule new futures after shutdown"
# at exit: the task-group anchors of the last plan bound (``DaskBackend._keep_groups``,
# sent without waiting) reach it while the interpreter shuts its thread pools down, and
# ``update_graph`` cannot hand their graph to one.
@pytest.mark.parametrize("dask_cluster", [True], ids=["distributed"])
def test_a_script_exiting_without_close_prints_only_its_own_output(tmp_path, dask_cluster):
    """A script that exits without closing its session or its cluster: nothing but what
    it printed (no lost keys, no error records, no tracebacks)."""
    import subprocess
    import sys

    script = tmp_path / "train.py"
    script.write_text(_NO_CLOSE.format(dask_cluster=dask_cluster))
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=240
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "loss 8.0", done.stdout
    assert done.stderr.strip() == "", done.stderr
