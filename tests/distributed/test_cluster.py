"""Sessions on a real ``LocalCluster(ps=1, worker=2, processes=True)``."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
import threading
import time

import distributed
import numpy as np
import pytest

import dataflow as tf
from dataflow.runtime.dask import lowering, worker_state

pytestmark = pytest.mark.distributed

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _ridge(p=4, lam=0.01, lr=0.05):
    """Ridge regression with beta on the ps and the gradient on worker 1."""
    with tf.device(tf.train.replica_device_setter(ps_tasks=1, worker_device="/job:worker/task:1")):
        beta = tf.Variable(np.linspace(-1, 1, p).reshape(p, 1).astype(np.float32), name="beta")
        x = tf.placeholder(tf.float32, [None, p], name="x")
        y = tf.placeholder(tf.float32, [None, 1], name="y")
        cost = tf.reduce_mean(tf.square(y - tf.matmul(x, beta))) + lam * tf.reduce_sum(
            tf.square(beta)
        )
        grad = tf.gradients(cost, [beta])[0]
        update = beta.assign_sub(lr * grad)
    return beta, x, y, cost, update


def _data(n=32, p=4, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, p)).astype(np.float32)
    y = (x @ rng.standard_normal((p, 1)) + 0.1).astype(np.float32)
    return x, y


def _address_names(cluster):
    return {address: name for name, address in cluster.workers.items()}


def test_local_cluster_workers(cluster):
    info = cluster.client.scheduler_info(n_workers=-1)["workers"]
    names = sorted(str(w["name"]) for w in info.values())
    assert names == ["ps-0", "worker-0", "worker-1"]
    for w in info.values():
        assert w["resources"][f"dataflow-{w['name']}"] >= 1
    assert cluster.cluster_spec == tf.train.ClusterSpec(
        {"ps": ["ps-0"], "worker": ["worker-0", "worker-1"]}
    )
    assert cluster.target.startswith("tcp://127.0.0.1:")
    assert isinstance(cluster.dashboard_link, str)
    assert "ps=1" in repr(cluster)


def test_devices_and_default(csess):
    backend = csess.backend
    assert sorted(backend.devices) == [
        "/job:ps/replica:0/task:0/device:CPU:0",
        "/job:worker/replica:0/task:0/device:CPU:0",
        "/job:worker/replica:0/task:1/device:CPU:0",
    ]
    assert backend.default_device == "/job:worker/replica:0/task:0/device:CPU:0"
    c = tf.constant(1.0) + 1.0
    assert set(csess.placement(c).values()) == {backend.default_device}


def test_results_equal_embedded(csess):
    beta, x, y, cost, update = _ridge()
    init = tf.global_variables_initializer()
    xv, yv = _data()
    # The embedded session runs the same graph on its one device (soft placement).
    with tf.Session(config=tf.ConfigProto(debug=True, allow_soft_placement=True)) as local:
        local.run(init)
        want = [local.run([cost, update], {x: xv, y: yv})[0] for _ in range(5)]
        want_beta = local.run(beta)
    csess.run(init)
    got = [csess.run([cost, update], {x: xv, y: yv})[0] for _ in range(5)]
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(csess.run(beta), want_beta, rtol=1e-6)


def test_variables_live_on_the_workers_the_devices_name(csess, cluster):
    with tf.device("/job:ps/task:0"):
        a = tf.Variable(1.0, name="on_ps")
    with tf.device("/job:worker/task:1"):
        b = tf.Variable(2.0, name="on_worker_1")
    csess.run(tf.global_variables_initializer())
    held = cluster.client.run(worker_state.list_variables)
    by_name = {_address_names(cluster)[address]: found for address, found in held.items()}
    assert by_name["ps-0"] == {"/job:ps/replica:0/task:0/device:CPU:0": ["on_ps"]}
    assert by_name["worker-1"] == {"/job:worker/replica:0/task:1/device:CPU:0": ["on_worker_1"]}
    assert by_name["worker-0"] == {}
    assert csess.run([a, b]) == [1.0, 2.0]
    # Through the store actor, as checkpointing does.
    store = csess.backend.resource_store("/job:ps/replica:0/task:0/device:CPU:0")
    assert store.names() == ["on_ps"] and store.read("on_ps") == 1.0


def test_one_dask_task_per_stage(gsess, cluster):
    beta, x, y, cost, update = _ridge()
    gsess.run(tf.global_variables_initializer())
    xv, yv = _data()
    feed = {x: xv, y: yv}
    stages = gsess.compiled_plan([cost, update], feed).stages
    assert len(dict(gsess.to_dask([cost, update], feed))) == len(stages)
    gsess.run([cost, update], feed)  # compile and install outside the measured step
    with distributed.get_task_stream(client=cluster.client) as ts:
        gsess.run([cost, update], feed)
    # This session's tasks (the stream also shows other sessions' resident steps).
    mine = [t for t in ts.data if t["key"][1] == gsess.backend.session_id]
    assert len(mine) == len(stages) == 3
    names = _address_names(cluster)
    ran_on = sorted((t["key"][-1], names[t["worker"]]) for t in mine)  # the stage index
    expected = sorted((s.index, "ps-0" if "/job:ps" in s.device else "worker-1") for s in stages)
    assert ran_on == expected


def test_concurrent_steps(csess):
    with tf.device("/job:ps/task:0"):
        counter = tf.Variable(0.0, name="counter")
        bump = counter.assign_add(1.0)
    with tf.device("/job:worker/task:0"):
        doubled = bump * 2.0
    csess.run(counter.initializer)
    failures = []

    def work():
        try:
            for _ in range(5):
                csess.run(doubled)
        except Exception as exc:
            failures.append(exc)

    threads = [threading.Thread(target=work) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures
    assert csess.run(counter) == 30.0


def _shared_graph():
    graph = tf.Graph()
    with graph.as_default(), tf.device("/job:ps/task:0"):
        v = tf.Variable(np.zeros(3, np.float32), name="shared")
        bump = v.assign_add(np.ones(3, np.float32))
        init = v.initializer
    return graph, v, bump, init


def test_two_clients_share_ps_variables(clean_cluster):
    graph_a, va, bump_a, init_a = _shared_graph()
    graph_b, vb, bump_b, _ = _shared_graph()
    other = distributed.Client(clean_cluster.target, set_as_default=False)
    try:
        with tf.Session(clean_cluster, graph=graph_a) as a, tf.Session(other, graph=graph_b) as b:
            a.run(init_a)
            b.run(bump_b)
            a.run(bump_a)
            np.testing.assert_array_equal(b.run(vb), [2, 2, 2])
            np.testing.assert_array_equal(a.run(va), [2, 2, 2])
        # Closing sessions keeps the variables on the cluster (as TF1 does).
        with tf.Session(other, graph=graph_b) as b:
            np.testing.assert_array_equal(b.run(vb), [2, 2, 2])
    finally:
        other.close()
    tf.Session.reset(clean_cluster)
    with tf.Session(clean_cluster, graph=graph_a) as a:
        with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized"):
            a.run(va)


def test_another_process_shares_variables(clean_cluster):
    graph, v, bump, init = _shared_graph()
    script = textwrap.dedent(f"""
        import numpy as np
        import dataflow as tf
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(np.zeros(3, np.float32), name="shared")
            bump = v.assign_add(np.ones(3, np.float32))
        with tf.Session({clean_cluster.target!r}) as sess:
            for _ in range(3):
                sess.run(bump)
        """)
    with tf.Session(clean_cluster, graph=graph) as sess:
        sess.run(init)
        env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
        subprocess.run([sys.executable, "-c", script], check=True, env=env, timeout=120)
        np.testing.assert_array_equal(sess.run(v), [3, 3, 3])


def test_device_matching_no_worker_lists_workers(csess):
    with tf.device("/job:ps/task:3"):
        v = tf.Variable(1.0, name="nowhere")
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        csess.run(v.initializer)
    message = str(info.value)
    assert "/job:ps/task:3" in message
    for name in ("ps-0 at tcp://", "worker-0 at tcp://", "worker-1 at tcp://"):
        assert name in message


def test_soft_placement_and_logging(clean_cluster, dataflow_log):
    with tf.device("/job:ps/task:3"):
        v = tf.Variable(1.0, name="soft")
    config = tf.ConfigProto(allow_soft_placement=True, log_device_placement=True)
    with tf.Session(clean_cluster, config=config) as sess:
        sess.run(v.initializer)
        assert sess.run(v) == 1.0
    # No ps task 3: the placer falls back to the session default.
    assert "soft: (VarHandleOp): /job:worker/replica:0/task:0/device:CPU:0" in dataflow_log.text


def test_kernel_errors_name_the_op_and_device(csess):
    x = tf.placeholder(tf.float32, [None, None])
    with tf.device("/job:worker/task:1"):
        y = tf.matmul(x, x, name="bad_matmul")
    with pytest.raises(tf.errors.InvalidArgumentError, match="bad_matmul") as info:
        csess.run(y, {x: np.ones((2, 3), np.float32)})
    assert "/job:worker/replica:0/task:1" in str(info.value)
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(1.0, name="never_initialized")
    with pytest.raises(tf.errors.FailedPreconditionError, match="never_initialized"):
        csess.run(v)
    # The session is still usable.
    assert csess.run(y, {x: np.ones((2, 2), np.float32)}).tolist() == [[2, 2], [2, 2]]


@pytest.mark.parametrize("resident", [False, True])
def test_run_timeout(clean_cluster, resident):
    def slow(a):
        time.sleep(3)
        return a

    with tf.device("/job:worker/task:1"):
        y = tf.py_func(slow, [tf.constant(1.0)], tf.float32)
    # A timed-out kernel keeps its worker thread until it returns (threads cannot be
    # killed): the session stays usable, here on another worker.
    with tf.device("/job:worker/task:0"):
        quick = tf.constant(1.0) + 1.0
    config = tf.ConfigProto(operation_timeout_in_ms=500, resident_steps=resident)
    with tf.Session(clean_cluster, config=config) as sess:
        # The earlier parameter's kernels still hold worker-1's threads: binding the
        # plan must not wait for them (it did, for the task groups' anchors).
        start = time.perf_counter()
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(y)
        assert time.perf_counter() - start < 2.5
        assert sess.run(quick) == 2.0
        start = time.perf_counter()
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(y, options=tf.RunOptions(timeout_in_ms=200))
        assert time.perf_counter() - start < 2.5


def test_unreachable_scheduler_fails_within_timeout():
    # Nothing listens on port 9: the refusal is the answer, without waiting for the
    # timeout (a session opened while the scheduler restarts fails in about a second).
    for config in (tf.ConfigProto(operation_timeout_in_ms=1500), None):
        start = time.perf_counter()
        with pytest.raises(
            tf.errors.UnavailableError,
            match="No Dask scheduler at 'tcp://127.0.0.1:9': the connection was refused",
        ):
            tf.Session("tcp://127.0.0.1:9", config=config)
        assert time.perf_counter() - start < 5


def test_target_types(clean_cluster):
    c = tf.constant(3.0) * 2.0
    with tf.Session(clean_cluster.target) as sess:  # a scheduler address
        assert sess.run(c) == 6.0
    with tf.Session(clean_cluster.client) as sess:  # a distributed.Client
        assert sess.run(c) == 6.0
    with tf.Session(clean_cluster.cluster) as sess:  # a distributed cluster object
        assert sess.run(c) == 6.0
    with pytest.raises(TypeError, match="Session target"):
        tf.Session(42)


def test_update_tokens_make_repeated_tasks_harmless(csess, cluster):
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(0.0, name="once")
        bump = v.assign_add(1.0)
    csess.run(v.initializer)
    bound = csess._signature(bump, {}).bound
    (template,) = bound.lowered.templates
    ps = cluster.workers["ps-0"]
    for step in ("900-test", "900-test", "901-test"):  # the first step twice, then another
        cluster.client.submit(
            worker_state.run_stage,
            template.plan_key,
            template.index,
            step,
            (),
            workers=[ps],
            pure=False,
        ).result()
    assert csess.run(v) == 2.0


def test_resident_steps_equal_graph_steps(csess, rsess):
    beta, x, y, cost, update = _ridge()
    init = tf.global_variables_initializer()
    xv, yv = _data()
    csess.run(init)
    want = [csess.run([cost, update], {x: xv, y: yv})[0] for _ in range(4)]
    csess.run(init)
    got = [rsess.run([cost, update], {x: xv, y: yv})[0] for _ in range(4)]
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(rsess.run(beta), csess.run(beta), rtol=1e-6)
    # Feeds fetched back, ops fetched as None, nested structures.
    out = rsess.run({"x": x, "op": update.op, "pair": (cost, beta)}, {x: xv, y: yv})
    np.testing.assert_array_equal(out["x"], xv)
    assert out["op"] is None and out["pair"][1].shape == (4, 1)


def test_resident_errors_and_concurrency(rsess):
    with tf.device("/job:ps/task:0"):
        counter = tf.Variable(0.0, name="rcounter")
        bump = counter.assign_add(1.0)
    m = tf.placeholder(tf.float32, [None, None])
    with tf.device("/job:worker/task:1"):
        doubled = bump * 2.0
        bad = tf.matmul(m, m * doubled, name="bad_resident")
    rsess.run(counter.initializer)
    threads = [
        threading.Thread(target=lambda: [rsess.run(doubled) for _ in range(5)]) for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert rsess.run(counter) == 20.0
    with pytest.raises(tf.errors.InvalidArgumentError, match="bad_resident"):
        rsess.run(bad, {m: np.ones((2, 3), np.float32)})
    # The failed step ran its ps stage (counter 21) before the matmul failed.
    assert rsess.run(doubled) == 44.0


def test_cross_device_control_dependencies(csess):
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(0.0, name="ctl")
        inc = v.assign_add(1.0)
    with tf.device("/job:worker/task:1"), tf.control_dependencies([inc]):
        marker = tf.no_op()
    with tf.device("/job:worker/task:0"), tf.control_dependencies([marker]):
        read = v.read_value() + 0.0
    csess.run(v.initializer)
    assert csess.run(read) == 1.0
    plan = csess.compiled_plan(read)
    assert any(s.control_inputs for s in plan.stages)


def test_lowered_stage_keys_in_task_stream(clean_cluster, cluster):
    beta, x, y, cost, update = _ridge()
    config = tf.ConfigProto(debug=True, resident_steps=False)  # the task-graph path
    with tf.Session(clean_cluster, config=config) as csess:
        csess.run(tf.global_variables_initializer())
        xv, yv = _data()
        csess.run(update, {x: xv, y: yv})
        with distributed.get_task_stream(client=cluster.client) as ts:
            csess.run(update, {x: xv, y: yv})
        bound = csess._signature(update, {x: xv, y: yv}).bound
        session = csess.backend.session_id
    # This step's tasks: keys (group, session, slot, stage) of this session, slot 0 being
    # the group anchors, computed in the background. The stream is the cluster's, and
    # other sessions' tasks (an earlier test's, finishing late under load) may be in it.
    steps = [t for t in ts.data if isinstance(t["key"], tuple) and t["key"][1:2] == (session,)]
    ours = [t for t in steps if t["key"][2] != 0]
    assert len({t["key"] for t in ours}) == len(ours) == len(bound.lowered.templates)
    # Task prefixes name the stage: its label (a countdown to the plan's last stage and
    # its op) and device.
    prefixes = {distributed.utils.key_split(t["key"]) for t in ours}
    assert "0.AssignSubVariableOp@ps:0" in prefixes
    assert all("@" in p for p in prefixes)
    assert prefixes == {t.name for t in bound.lowered.templates}
    assert isinstance(bound.lowered, lowering.LoweredPlan)


def _scheduler_group_counts(dask_scheduler):
    spans = dask_scheduler.extensions["spans"]
    return (
        len(dask_scheduler.task_groups),
        len(dask_scheduler.task_prefixes),
        sum(len(span.groups) for span in spans.spans.values()),
    )


def test_steps_do_not_grow_the_schedulers_groups(csess, cluster):
    # Issue 11 item 9: keys naming the step made the scheduler keep one task group per
    # stage per step in the session's span (about 2.5 KB each, forever).
    beta, x, y, cost, update = _ridge()
    csess.run(tf.global_variables_initializer())
    feed = dict(zip((x, y), _data()))
    for _ in range(3):
        csess.run([cost, update], feed)
    before = cluster.client.run_on_scheduler(_scheduler_group_counts)
    for _ in range(40):
        csess.run([cost, update], feed)
    assert cluster.client.run_on_scheduler(_scheduler_group_counts) == before


def test_traced_run_records_stages_on_the_task_graph_path(gsess):
    beta, x, y, cost, update = _ridge()
    gsess.run(tf.global_variables_initializer())
    xv, yv = _data()
    meta = tf.RunMetadata()
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    gsess.run([cost, update], {x: xv, y: yv}, options=options, run_metadata=meta)
    events = tf.viz.step_events(meta)
    stages = [s for s in events if s["device"] != "client"]
    assert {s["device"] for s in stages} == {
        "/job:ps/replica:0/task:0/device:CPU:0",
        "/job:worker/replica:0/task:1/device:CPU:0",
    }
    assert len(stages) == 3
    assert all(s["end_us"] >= s["start_us"] for s in events)
    trace = tf.viz.chrome_trace(meta)
    # Stage events are named by the stage's label (a countdown, then its op) and device.
    names = [e.get("name", "").partition(".")[2] for e in trace["traceEvents"]]
    assert any(name.startswith("AssignSub") for name in names)


def _covered(events, start_us, end_us):
    """The part of [start_us, end_us] that the union of ``events`` covers."""
    covered, reach = 0.0, start_us
    for e in sorted(events, key=lambda e: e["start_us"]):
        lo, hi = max(e["start_us"], reach), min(e["end_us"], end_us)
        if hi > lo:
            covered += hi - lo
            reach = hi
    return covered / (end_us - start_us)


def test_traced_resident_step_explains_its_wall_time(csess, tmp_path):
    """A traced step on the default path: every op on each worker, the waits for and
    sends of tensors between devices, the client's own time and its transfers, whose
    union covers the step's wall time as the caller measured it."""
    beta, x, y, cost, update = _ridge()
    csess.run(tf.global_variables_initializer())
    xv, yv = _data()
    feed = {x: xv, y: yv}
    csess.run([cost, update], feed)  # compiled, installed, streams open
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    coverage = []
    for _ in range(5):  # the best of a few: a loaded machine may stall one step
        meta = tf.RunMetadata()
        start = time.time() * 1e6  # node stats are in microseconds since the epoch
        csess.run([cost, update], feed, options=options, run_metadata=meta)
        end = time.time() * 1e6
        coverage.append(_covered(tf.viz.step_events(meta), start, end))
    events = tf.viz.step_events(meta)
    kinds = {s["type"] for s in events}
    assert {"Recv", "Send", "Client", "Transfer", "MatMul", "AssignSubVariableOp"} <= kinds
    devices = {s["device"] for s in events}
    assert devices == {
        "client",  # the client's own events
        "/job:ps/replica:0/task:0/device:CPU:0",
        "/job:worker/replica:0/task:1/device:CPU:0",
    }
    # Kernels are the plan's ops, each once (constants are folded, not run per step).
    plan = csess.compiled_plan([cost, update], feed)
    calls = {c.op_name: c.op_type for stage in plan.stages for c in stage.calls}
    ran = [s["name"] for s in events if s["type"] not in ("Recv", "Send", "Client")]
    ran = [n for n in ran if not n.startswith(("client", "/job", "ps-", "worker-"))]
    assert ran and set(ran) <= set(calls) and len(ran) == len(set(ran))
    assert {n for n, t in calls.items() if t in ("MatMul", "AssignSubVariableOp")} <= set(ran)
    assert all(start <= s["start_us"] <= s["end_us"] <= end for s in events)
    assert max(coverage) > 0.9, coverage
    path = tf.viz.write_chrome_trace(meta, str(tmp_path / "step.json"))
    with open(path) as f:
        names = {e["name"] for e in json.load(f)["traceEvents"]}
    assert any(n.startswith("client -> ") for n in names)


def _count_compiles(on: bool) -> None:
    """(Run on a worker) counts its ``RUNTIME.compiled`` calls in ``RUNTIME.compiles``
    from now (``on``), or stops counting."""
    from dataflow.runtime.dask.worker_state import RUNTIME

    vars(RUNTIME).pop("compiled", None)  # (the method again)
    if on:
        compiled = RUNTIME.compiled
        RUNTIME.compiles = 0

        def counting(*args, **kwargs):
            RUNTIME.compiles += 1
            return compiled(*args, **kwargs)

        RUNTIME.compiled = counting


def _compiles() -> int:
    from dataflow.runtime.dask.worker_state import RUNTIME

    return RUNTIME.compiles


def test_traced_steps_find_their_compiled_stages_as_untraced_ones_do(csess, cluster):
    """A worker looks a traced step's stages up where they are, as an untraced step's:
    only the first traced step compiles them (off the event loop, a thread hop that
    showed as a gap in every traced timeline before)."""
    beta, x, y, cost, update = _ridge()
    csess.run(tf.global_variables_initializer())
    xv, yv = _data()
    feed = {x: xv, y: yv}
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    csess.run([cost, update], feed, options=options, run_metadata=tf.RunMetadata())
    cluster.client.run(_count_compiles, True)
    try:
        for _ in range(3):
            meta = tf.RunMetadata()
            csess.run([cost, update], feed, options=options, run_metadata=meta)
        assert {s["type"] for s in tf.viz.step_events(meta)} >= {"MatMul", "Recv"}
        assert sum(cluster.client.run(_compiles).values()) == 0
    finally:
        cluster.client.run(_count_compiles, False)


def test_resident_steps_use_dask_connections(csess, cluster):
    """Resident steps (the default) start on Dask connections to the workers' own
    addresses (no port of ours on the workers) and, on this one host, continue on the
    Unix sockets the workers offered on them (``local_sockets``); a second client (which
    re-registers the worker plugin) leaves them working for both sessions, sharing the
    variable."""
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(1.0, name="chan")
        bump = v.assign_add(1.0)
    with tf.device("/job:worker/task:0"):
        twice = bump * 2.0
    csess.run(v.initializer)
    assert csess.run(twice) == 4.0
    dask_ports = {int(a.rsplit(":", 1)[1]) for a in cluster.workers.values()}
    conns = list(csess._backend._streams._every)
    assert len(conns) == 2 and {c.family for c in conns} == {socket.AF_UNIX}
    offered = cluster.client.run(
        lambda dask_worker: getattr(getattr(dask_worker, "_dataflow_local", None), "address", "")
    )
    assert {c.getpeername() for c in conns} <= {a.encode() for a in offered.values() if a}
    # Nothing of ours listens on the workers beyond Dask's own port.
    listening = cluster.client.run(
        lambda dask_worker: sorted(dask_worker.listeners[0].get_host_port()[1:])
    )
    assert {p for (p,) in listening.values()} == dask_ports
    other = distributed.Client(cluster.target, set_as_default=False)
    try:
        with tf.Session(other) as second:
            assert second.run(twice) == 6.0
            assert csess.run(twice) == 8.0
    finally:
        other.close()
    assert csess.run(v) == 4.0
