"""Several CPU devices in one process: ``ConfigProto(device_count={"CPU": n})``.

Placement on the local devices and TF1's answers for devices that do not exist;
results equal to a one-device run and to TF1 for a model split over ``/cpu:0`` and
``/cpu:1`` (forward, gradients, optimizer step); independent stages really overlapping
(intervals recorded inside the kernels, never wall times); dependent stages, state and
queues staying correct under concurrency; an error in one device's stage ending the
step cleanly.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import dataflow as tf
from dataflow.runtime import devices
from dataflow.runtime.compile.compiler import compile_plan
from dataflow.runtime.compile.stage_split import split_for_overlap
from dataflow.runtime.execute import inter_op
from dataflow.runtime.execute.executor import EmbeddedPlan
from dataflow.runtime.execute.inter_op import ConcurrentPlan, stage_graph

LOCAL = "/job:localhost/replica:0/task:0/device:"
CPU0, CPU1 = LOCAL + "CPU:0", LOCAL + "CPU:1"


def two_cpus(**kw) -> tf.ConfigProto:
    return tf.ConfigProto(device_count={"CPU": 2}, debug=True, **kw)


class Intervals:
    """``py_func`` bodies that record when they ran, keyed by a label."""

    def __init__(self) -> None:
        self.seen: dict[str, tuple[float, float, int]] = {}

    def sleeper(self, label: str, seconds: float):
        def body(x):
            start = time.perf_counter()
            time.sleep(seconds)
            self.seen[label] = (start, time.perf_counter(), threading.get_ident())
            return x + np.float32(1.0)

        return body

    def matmul(self, label: str, size: int):
        a = np.random.default_rng(0).standard_normal((size, size))

        def body(x):
            start = time.perf_counter()
            a @ a
            self.seen[label] = (start, time.perf_counter(), threading.get_ident())
            return x + np.float32(1.0)

        return body

    def overlap(self, a: str, b: str) -> bool:
        (s1, e1, _), (s2, e2, _) = self.seen[a], self.seen[b]
        return max(s1, s2) < min(e1, e2)


def _two_py_funcs(rec: Intervals, make) -> list:
    x = tf.constant(np.float32(0.0))
    outs = []
    for i, label in enumerate(("a", "b")):
        with tf.device(f"/cpu:{i}"):
            outs.append(tf.py_func(make(label), [x + 0.0], tf.float32, name=f"work_{label}"))
    return outs


# --- devices and placement ---------------------------------------------------------------------
def test_device_count_makes_that_many_cpu_devices() -> None:
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 3})) as sess:
        listed = sess.list_devices()
    assert [d.name for d in listed] == [LOCAL + f"CPU:{i}" for i in range(3)]
    assert {d.device_type for d in listed} == {"CPU"}
    assert all(d.memory_limit_bytes > 0 for d in listed)
    with tf.Session() as sess:
        assert [d.name for d in sess.list_devices()] == [CPU0]


def test_listed_attributes_of_devices_this_process_does_not_hold() -> None:
    # A cluster session lists its workers' devices: their memory is not known here.
    remote, gpu = "/job:ps/replica:0/task:0/device:CPU:0", LOCAL + "GPU:1"
    listed = devices.device_attributes([remote, gpu])
    assert [(d.device_type, d.memory_limit_bytes) for d in listed] == [("CPU", 0), ("GPU", 0)]
    assert listed[0].incarnation != listed[1].incarnation


def test_device_count_caps_gpus_and_ignores_unknown_types(monkeypatch) -> None:
    monkeypatch.setattr(devices, "gpu_count", lambda: 2)
    names = devices.local_devices(device_count={"CPU": 2, "GPU": 1, "TPU": 4})
    assert names == [CPU0, CPU1, LOCAL + "GPU:0"]
    assert devices.local_devices(device_count={"GPU": 0}) == [CPU0]


def test_no_cpu_device_and_bad_counts_are_refused() -> None:
    # TF1: NotFoundError "No CPU devices are available in this process".
    with pytest.raises(tf.errors.NotFoundError, match="No CPU devices"):
        tf.Session(config=tf.ConfigProto(device_count={"CPU": 0}))
    with pytest.raises(TypeError, match="device_count"):
        tf.Session(config=tf.ConfigProto(device_count={"CPU": 1.5}))


def test_ops_go_to_the_requested_cpu_and_the_log_shows_it(dataflow_log) -> None:
    with tf.device("/cpu:1"):
        y = tf.constant([1.0, 2.0], name="a") * 2.0
    with tf.device("/device:CPU:0"):
        z = y + 1.0
    with tf.Session(config=two_cpus(log_device_placement=True)) as sess:
        np.testing.assert_array_equal(sess.run(z), [3.0, 5.0])
        placed = sess.placement(z)
    assert placed[y.op.name] == CPU1 and placed[z.op.name] == CPU0
    assert f"{y.op.name}: ({y.op.type}): {CPU1}" in dataflow_log.text  # TF1's line


def _tf1_placement(tf1, device: str, config) -> dict[str, str] | str:
    """TF1's device per op (from a traced run) or its error class name."""
    graph = tf1.Graph()
    with graph.as_default(), tf1.device(device):
        v = tf1.Variable([3.0], name="v")
        y = tf1.add(v.assign_add([1.0]), 2.0, name="y")
    meta = tf1.RunMetadata()
    options = tf1.RunOptions(trace_level=tf1.RunOptions.FULL_TRACE)
    try:
        with tf1.Session(graph=graph, config=config) as sess:
            sess.run(v.initializer)
            sess.run(y, options=options, run_metadata=meta)
    except tf1.errors.OpError as exc:
        return type(exc).__name__
    return {
        node.node_name: stats.device
        for stats in meta.step_stats.dev_stats
        for node in stats.node_stats
        if node.node_name in ("y", "AssignAddVariableOp")
    }


def _our_placement(device: str, config: tf.ConfigProto) -> dict[str, str] | str:
    graph = tf.Graph()
    with graph.as_default(), tf.device(device):
        v = tf.Variable([3.0], name="v")
        y = tf.add(v.assign_add([1.0]), 2.0, name="y")
    try:
        with tf.Session(graph=graph, config=config) as sess:
            sess.run(v.initializer)
            sess.run(y)
            placed = sess.placement(y)
    except tf.errors.OpError as exc:
        return type(exc).__name__
    return {"y": placed["y"], "AssignAddVariableOp": placed[y.op.inputs[0].op.name]}


@pytest.mark.tf
@pytest.mark.parametrize(
    "device, cpus, soft",
    [("/cpu:1", 2, False), ("/cpu:2", 2, False), ("/cpu:2", 2, True), ("/cpu:1", 1, False)]
    + [("/cpu:1", 1, True), ("/gpu:0", 2, True)],
)
def test_requests_for_devices_that_do_not_exist_behave_as_in_tf1(device, cpus, soft) -> None:
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    tf1.disable_eager_execution()
    theirs = _tf1_placement(
        tf1,
        device,
        tf1.ConfigProto(device_count={"CPU": cpus, "GPU": 0}, allow_soft_placement=soft),
    )
    ours = _our_placement(
        device,
        tf.ConfigProto(device_count={"CPU": cpus, "GPU": 0}, allow_soft_placement=soft, debug=True),
    )
    assert ours == theirs


# --- a model split over two devices: equal to one device and to TF1 ----------------------------
RNG = np.random.default_rng(7)
X = RNG.standard_normal((16, 5)).astype(np.float32)
Y = RNG.standard_normal((16, 3)).astype(np.float32)
W1 = RNG.standard_normal((5, 8)).astype(np.float32) * 0.5
W2 = RNG.standard_normal((8, 3)).astype(np.float32) * 0.5


def split_model(tf):
    """A two-layer net, layer 1 on /cpu:0 and layer 2 on /cpu:1, with an L2 penalty
    computed on /cpu:0 beside the forward pass, trained with momentum."""
    x = tf.placeholder(tf.float32, [None, 5], name="x")
    y = tf.placeholder(tf.float32, [None, 3], name="y")
    with tf.device("/cpu:0"):
        w1 = tf.Variable(W1, name="w1")
        b1 = tf.Variable(np.zeros(8, np.float32), name="b1")
        h = tf.tanh(tf.matmul(x, w1) + b1)
        penalty = 0.01 * tf.reduce_sum(tf.square(w1))
    with tf.device("/cpu:1"):
        w2 = tf.Variable(W2, name="w2")
        out = tf.matmul(h, w2)
        loss = tf.reduce_mean(tf.square(out - y)) + penalty
    train = tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss)
    return x, y, loss, train, [w1, b1, w2]


def _train(tf, session, steps: int = 4) -> tuple[list[float], list[np.ndarray]]:
    x, y, loss, train, params = split_model(tf)
    with session() as sess:
        sess.run(tf.global_variables_initializer())
        losses = [float(sess.run([loss, train], {x: X, y: Y})[0]) for _ in range(steps)]
        return losses, sess.run(params)


def test_split_model_matches_one_device_and_runs_concurrently() -> None:
    with tf.Graph().as_default():
        one = _train(tf, lambda: tf.Session(config=tf.ConfigProto(allow_soft_placement=True)))
    with tf.Graph().as_default() as graph:
        two = _train(tf, lambda: tf.Session(config=two_cpus()))
        # The training step has stages on both devices that may overlap (the penalty
        # and its gradient on /cpu:0 beside layer 2 on /cpu:1).
        x, y, loss, train, _ = split_model(tf)
        with tf.Session(config=two_cpus()) as sess:
            bound = sess.backend.bind(sess.compiled_plan([loss, train], {x: X, y: Y}))
            assert isinstance(bound, ConcurrentPlan)
            assert {s.device for s in bound.plan.stages} == {CPU0, CPU1}
        assert graph is tf.get_default_graph()
    np.testing.assert_allclose(two[0], one[0], rtol=1e-6)
    for a, b in zip(two[1], one[1]):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


@pytest.mark.tf
def test_split_model_matches_tf1() -> None:
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    tf1.disable_eager_execution()
    config = tf1.ConfigProto(device_count={"CPU": 2})
    with tf1.Graph().as_default():
        theirs = _train(tf1, lambda: tf1.Session(config=config))
    with tf.Graph().as_default():
        ours = _train(tf, lambda: tf.Session(config=two_cpus()))
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5)
    for a, b in zip(ours[1], theirs[1]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


# --- concurrency -------------------------------------------------------------------------------
def test_independent_stages_on_two_devices_overlap() -> None:
    rec = Intervals()
    outs = _two_py_funcs(rec, lambda label: rec.sleeper(label, 0.2))
    with tf.Session(config=two_cpus()) as sess:
        assert sess.run(outs) == [1.0, 1.0]
    assert rec.overlap("a", "b")
    assert rec.seen["a"][2] != rec.seen["b"][2]  # two threads


def test_independent_matmuls_on_two_devices_overlap() -> None:
    # numpy releases the GIL inside BLAS, so kernels on two devices compute at once.
    rec = Intervals()
    outs = _two_py_funcs(rec, lambda label: rec.matmul(label, 1200))
    with tf.Session(config=two_cpus()) as sess:
        sess.run(outs)
    assert rec.overlap("a", "b")


def test_one_inter_op_thread_runs_stages_one_at_a_time() -> None:
    rec = Intervals()
    outs = _two_py_funcs(rec, lambda label: rec.sleeper(label, 0.05))
    with tf.Session(config=two_cpus(inter_op_parallelism_threads=1)) as sess:
        assert isinstance(sess.backend.bind(sess.compiled_plan(outs)), EmbeddedPlan)
        sess.run(outs)
    assert not rec.overlap("a", "b")


def _most_at_once(rec: Intervals) -> int:
    """The largest number of recorded intervals running at one moment."""
    return max(
        sum(s <= start < e for s, e, _ in rec.seen.values()) for start, _, _ in rec.seen.values()
    )


@pytest.mark.parametrize("threads, expected", [(0, 3), (2, 2)])
def test_inter_op_threads_bound_how_many_stages_run_at_once(threads, expected) -> None:
    rec = Intervals()
    x = tf.constant(np.float32(0.0))
    outs = []
    for i in range(3):
        with tf.device(f"/cpu:{i}"):
            outs.append(tf.py_func(rec.sleeper(str(i), 0.15), [x + 0.0], tf.float32))
    config = tf.ConfigProto(
        device_count={"CPU": 3}, inter_op_parallelism_threads=threads, debug=True
    )
    with tf.Session(config=config) as sess:
        assert sess.run(outs) == [1.0, 1.0, 1.0]
    assert _most_at_once(rec) == expected


def test_blas_is_held_to_one_thread_during_a_concurrent_step_only() -> None:
    from threadpoolctl import threadpool_info, threadpool_limits

    def blas_threads() -> int:
        return max(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas")

    seen: list[int] = []

    def body(x):
        seen.append(blas_threads())
        return x

    x = tf.constant(np.float32(0.0))
    outs = []
    for i in range(2):
        with tf.device(f"/cpu:{i}"):
            outs.append(tf.py_func(body, [x + 0.0], tf.float32))
    with tf.Session(config=two_cpus()) as sess, threadpool_limits(limits=2, user_api="blas"):
        assert blas_threads() == 2
        sess.run(outs)
        assert blas_threads() == 2  # the caller's setting is back
    assert seen == [1, 1]


def test_short_steps_run_inline_until_their_stages_grow(monkeypatch) -> None:
    # Handing a stage to another thread costs tens of microseconds: once every stage
    # of a step has run shorter than that, steps run on the caller's thread alone, and
    # a step that takes clearly longer brings the threads back. The hand-off cost is
    # raised to 50 ms here: a zero-second stage on a loaded machine is preempted now and
    # then for milliseconds, longer than the real 100 us, and the test is about what
    # happens either side of the bound, not about the bound.
    monkeypatch.setattr(inter_op, "HAND_OFF_SECONDS", 0.05)
    rec = Intervals()
    seconds = tf.placeholder(tf.float64, [])

    def body(label: str):
        def run(s):
            start = time.perf_counter()
            time.sleep(float(s))
            rec.seen[label] = (start, time.perf_counter(), threading.get_ident())
            return s

        return run

    outs = []
    for i, label in enumerate("ab"):
        with tf.device(f"/cpu:{i}"):
            outs.append(tf.py_func(body(label), [seconds + 0.0], tf.float64))
    with tf.Session(config=two_cpus()) as sess:
        bound = sess.backend.bind(sess.compiled_plan(outs, {seconds: 0.0}))
        assert isinstance(bound, ConcurrentPlan)
        for _ in range(50):
            bound.run([np.float64(0.0)])
            if bound.inline_seconds is not None:
                break
        assert bound.inline_seconds is not None
        bound.run([np.float64(0.1)])  # inline, found long: back to threads
        assert bound.inline_seconds is None and not rec.overlap("a", "b")
        # Long enough that a helper thread started late under load still overlaps.
        bound.run([np.float64(0.5)])
        assert rec.overlap("a", "b")


def test_dependent_stages_keep_their_order() -> None:
    rec = Intervals()
    x = tf.constant(np.float32(0.0))
    with tf.device("/cpu:0"):
        first = tf.py_func(rec.sleeper("first", 0.05), [x], tf.float32)
    with tf.device("/cpu:1"):
        second = tf.py_func(rec.sleeper("second", 0.0), [first], tf.float32)
        beside = tf.py_func(rec.sleeper("beside", 0.05), [x], tf.float32)
    with tf.device("/cpu:0"):
        # Only a control edge orders this one after ``second``.
        with tf.control_dependencies([second]):
            last = tf.py_func(rec.sleeper("last", 0.0), [x], tf.float32)
    with tf.Session(config=two_cpus()) as sess:
        assert sess.run([second, beside, last]) == [2.0, 1.0, 1.0]
    seen = rec.seen
    assert seen["first"][1] <= seen["second"][0]
    assert seen["second"][1] <= seen["last"][0]


def test_traced_concurrent_step_shows_both_devices_on_two_threads() -> None:
    rec = Intervals()
    outs = _two_py_funcs(rec, lambda label: rec.sleeper(label, 0.05))
    meta = tf.RunMetadata()
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    with tf.Session(config=two_cpus()) as sess:
        sess.run(outs, options=options, run_metadata=meta)
    events = {e["name"]: e for e in tf.viz.step_events(meta)}
    a, b = events["work_a"], events["work_b"]
    assert (a["device"], b["device"]) == (CPU0, CPU1)
    assert a["thread"] != b["thread"]
    assert max(a["start_us"], b["start_us"]) < min(a["end_us"], b["end_us"])


def test_variables_on_both_devices_stay_exact_under_concurrent_steps() -> None:
    with tf.device("/cpu:0"):
        v0 = tf.Variable(np.zeros(1000), name="v0")
        big0 = tf.matmul(tf.ones([300, 300], tf.float64), tf.ones([300, 300], tf.float64))
        up0 = v0.assign_add(tf.ones([1000], tf.float64) + 0.0 * tf.reduce_sum(big0))
    with tf.device("/cpu:1"):
        v1 = tf.Variable(np.zeros(1000), name="v1")
        big1 = tf.matmul(tf.ones([300, 300], tf.float64), tf.ones([300, 300], tf.float64))
        up1 = v1.assign_add(2.0 * tf.ones([1000], tf.float64) + 0.0 * tf.reduce_sum(big1))
    steps, threads = 25, 3
    with tf.Session(config=two_cpus()) as sess:
        sess.run(tf.global_variables_initializer())
        assert isinstance(sess.backend.bind(sess.compiled_plan([up0, up1])), ConcurrentPlan)

        def loop() -> None:
            for _ in range(steps):
                sess.run([up0.op, up1.op])

        workers = [threading.Thread(target=loop) for _ in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        a, b = sess.run([v0, v1])
    np.testing.assert_array_equal(a, np.full(1000, steps * threads))
    np.testing.assert_array_equal(b, np.full(1000, 2 * steps * threads))


# --- errors ------------------------------------------------------------------------------------
def _failing(x):
    time.sleep(0.05)
    raise ValueError("bad input on the second device")


def test_an_error_on_one_device_ends_the_step_with_that_ops_error() -> None:
    with tf.device("/cpu:0"):
        v = tf.Variable(10.0, name="v")
        slow = tf.py_func(lambda x: (time.sleep(0.2), x)[1], [tf.constant(1.0)], tf.float32)
        update = v.assign_add(slow)
    with tf.device("/cpu:1"):
        fail = tf.placeholder_with_default(True, [], name="fail")
        checked = tf.py_func(
            lambda f, x: _failing(x) if f else x, [fail, tf.constant(2.0)], tf.float32, name="check"
        )
    with tf.Session(config=two_cpus()) as sess:
        sess.run(v.initializer)
        with pytest.raises(tf.errors.OpError) as info:
            sess.run([update, checked])
        assert "check" in str(info.value) and "bad input on the second device" in str(info.value)
        # The other device's stage finished before run raised: its update is whole.
        assert sess.run(v) == 11.0
        # The session stays usable and the variable is still there.
        assert sess.run([update, checked], {fail: False}) == [12.0, 2.0]


def test_an_error_cancels_a_stage_blocked_in_a_queue() -> None:
    with tf.device("/cpu:0"):
        queue = tf.FIFOQueue(4, tf.float32, shapes=[[]])
        taken = queue.dequeue()
        put = queue.enqueue(tf.constant(5.0))
    with tf.device("/cpu:1"):
        checked = tf.py_func(_failing, [tf.constant(2.0)], tf.float32, name="check")
    with tf.Session(config=two_cpus()) as sess:
        with pytest.raises(tf.errors.OpError, match="bad input on the second device"):
            sess.run([taken, checked])
        # The cancelled dequeue took nothing: the queue still works in order.
        sess.run(put)
        assert sess.run(taken) == 5.0


def test_a_deadline_reaches_a_stage_on_a_helper_thread() -> None:
    rec = Intervals()
    with tf.device("/cpu:0"):
        busy = tf.py_func(rec.sleeper("busy", 0.05), [tf.constant(np.float32(0.0))], tf.float32)
    with tf.device("/cpu:1"):
        queue = tf.FIFOQueue(4, tf.float32, shapes=[[]])
        taken = queue.dequeue()
    with tf.Session(config=two_cpus(operation_timeout_in_ms=300)) as sess:
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run([busy, taken])
    assert "busy" in rec.seen


# --- queues across devices ---------------------------------------------------------------------
def test_queue_on_one_device_fed_and_drained_from_the_other() -> None:
    with tf.device("/cpu:0"):
        queue = tf.FIFOQueue(8, [tf.float32, tf.int32], shapes=[[2], []])
    with tf.device("/cpu:1"):
        item = tf.placeholder(tf.int32, [])
        values = tf.cast(tf.stack([item, item * 10]), tf.float32)
    enqueue = queue.enqueue([values, item])
    got_values, got_item = queue.dequeue()
    with tf.device("/cpu:1"):
        total = tf.reduce_sum(got_values) + tf.cast(got_item, tf.float32)
    n = 40
    results: list[float] = []
    with tf.Session(config=two_cpus()) as sess:
        assert sess.placement(enqueue)[enqueue.name] == CPU0
        producer = threading.Thread(target=lambda: [sess.run(enqueue, {item: i}) for i in range(n)])
        producer.start()
        results = [float(sess.run(total)) for _ in range(n)]
        producer.join()
    assert results == [11.0 * i + i for i in range(n)]


# --- the stage split -------------------------------------------------------------------------
def test_stages_are_cut_after_what_the_other_device_reads() -> None:
    with tf.device("/cpu:0"):
        x = tf.constant(np.ones((4, 4)), name="x")
        heavy = tf.matmul(x, x, name="heavy")
    with tf.device("/cpu:1"):
        other = tf.matmul(x + 1.0, x, name="other")
    z = heavy + other
    plan = compile_plan([z], [], [CPU0, CPU1], CPU0)
    assert not stage_graph(plan).concurrent  # /cpu:1 waits for x, stuck behind heavy
    split = split_for_overlap(plan)
    assert [[c.op_name for c in s.calls] for s in split.stages][:2] == [["x"], ["heavy"]]
    assert stage_graph(split).concurrent
    assert split_for_overlap(split).stages == split.stages
    with tf.Session(config=two_cpus()) as sess:
        np.testing.assert_allclose(sess.run(z), 4 * np.ones((4, 4)) + 8 * np.ones((4, 4)))


def test_the_split_keeps_stateful_calls_in_program_order() -> None:
    with tf.device("/cpu:0"):
        v = tf.Variable(1.0, name="v")
        bumped = v.assign_add(1.0)  # stateful, read by nobody on /cpu:1
        with tf.control_dependencies([bumped]):
            read = v.read_value()  # sent to /cpu:1; must stay after the update
    with tf.device("/cpu:1"):
        out = read * 3.0
    plan = compile_plan([out], [], [CPU0, CPU1], CPU0)
    order = [c.op_name for s in split_for_overlap(plan).stages for c in s.calls]
    assert order.index(bumped.op.name) < order.index(read.op.name)
    with tf.Session(config=two_cpus()) as sess:
        sess.run(v.initializer)
        assert sess.run(out) == 6.0
