"""TF1's default GPU placement and the copies across the host/device boundary.

With the stand-in cupy (``dataflow.testing.fake_cupy``, fixtures in ``conftest.py``):
an op asked for no device goes to ``/device:GPU:0`` when every op of its colocation
group has a GPU kernel (its registry record's ``gpu_kernel``), to the CPU otherwise;
explicit requests win; an explicit GPU request for an op without a GPU kernel is an
``InvalidArgumentError`` naming it, or the CPU under soft placement;
``device_count={"GPU": 0}`` turns GPU placement off; ``log_device_placement`` writes
TF1's ``name: (Type): device`` lines. A step copies each value across the boundary
once: feeds in once, fetches out once, variables stay on the device.

The ``gpu``-marked tests at the end check the same on a real GPU (skipped elsewhere).
"""

from __future__ import annotations

import types
from typing import Any

import numpy as np
import pytest

import dataflow as tf
from dataflow.runtime import devices
from dataflow.runtime.compile.compiler import compile_plan
from dataflow.testing import fake_cupy

CPU = "/job:localhost/replica:0/task:0/device:CPU:0"
GPU0 = "/job:localhost/replica:0/task:0/device:GPU:0"


def _dense(x: Any, width: int, name: str) -> Any:
    rng = np.random.default_rng(len(name))
    w = tf.Variable(rng.standard_normal((int(x.shape[1]), width)).astype(np.float32) * 0.1)
    b = tf.Variable(np.zeros(width, np.float32), name=f"{name}_b")
    return tf.matmul(x, w) + b


def _mlp() -> tuple[Any, Any, Any, Any]:
    """A small softmax MLP trained with Adam: (x, y, loss, train_op)."""
    x = tf.placeholder(tf.float32, [None, 6], name="x")
    y = tf.placeholder(tf.int64, [None], name="y")
    h = tf.nn.relu(_dense(x, 8, "hidden"))
    logits = _dense(h, 3, "out")
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    return x, y, loss, tf.train.AdamOptimizer(0.05).minimize(loss)


def _batch() -> dict:
    rng = np.random.default_rng(7)
    return {"x": rng.standard_normal((5, 6)).astype(np.float32), "y": rng.integers(0, 3, 5)}


# --- default placement ---------------------------------------------------------------------
def test_unplaced_ops_with_gpu_kernels_go_to_the_gpu(one_gpu: types.ModuleType) -> None:
    x, y, loss, train = _mlp()
    feed = {x: _batch()["x"], y: _batch()["y"]}
    with tf.Session(config=tf.ConfigProto(debug=True)) as sess:
        sess.run(tf.global_variables_initializer())
        placed = sess.placement([loss, train], feed)
        assert set(placed.values()) == {GPU0}  # variables, Adam, the feeds' readers
        first = sess.run(loss, feed)
        for _ in range(3):
            sess.run(train, feed)
        assert type(first) is np.float32 and sess.run(loss, feed) < first


def test_no_gpu_and_gpu_count_zero_keep_everything_on_the_cpu(
    fake_cupy: types.ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    x, y, loss, train = _mlp()
    feed = {x: _batch()["x"], y: _batch()["y"]}
    config = tf.ConfigProto(device_count={"GPU": 0}, debug=True)
    with tf.Session(config=config) as sess:
        assert sess.backend.devices == [CPU]
        sess.run(tf.global_variables_initializer())
        assert set(sess.placement([loss, train], feed).values()) == {CPU}
        off = sess.run([loss, train], feed)[0]
        bound = sess._signature([loss, train], {x: None, y: None}).bound
        assert bound.run == bound._run_single  # the CPU fast path: nothing to copy
    monkeypatch.setattr(devices, "gpu_count", lambda: 0)  # a machine without GPUs
    with tf.Session(config=tf.ConfigProto(debug=True)) as sess:
        sess.run(tf.global_variables_initializer())
        assert set(sess.placement([loss, train], feed).values()) == {CPU}
        assert sess.run([loss, train], feed)[0] == off


def test_ops_without_gpu_kernels_stay_on_the_cpu(
    one_gpu: types.ModuleType, transfers: list
) -> None:
    x = tf.placeholder(tf.float32, [3], name="x")
    doubled = tf.multiply(x, 2.0, name="doubled")
    shifted = tf.py_func(lambda v: v + 1.0, [doubled], tf.float32, name="shifted")
    out = tf.square(shifted, name="out")
    label = tf.strings.length(tf.constant(["ab", "cde"]), name="label")
    with tf.Session(config=tf.ConfigProto(debug=True)) as sess:
        placed = sess.placement([out, label], {x: np.zeros(3, np.float32)})
        got, lengths = sess.run([out, label], {x: np.array([1.0, 2.0, 3.0], np.float32)})
    assert placed["doubled"] == GPU0 and placed["out"] == GPU0
    assert placed["shifted"] == CPU and placed["label"] == CPU  # py_func, strings
    np.testing.assert_allclose(got, (np.array([1.0, 2.0, 3.0]) * 2 + 1) ** 2)
    np.testing.assert_array_equal(lengths, [2, 3])
    assert type(got) is np.ndarray
    # Copies (the string constant's move to the CPU is none: strings stay on the host):
    # the feed in, doubled out to py_func, its result back in, out to the client.
    crossings = [(src, dst) for src, dst, got, made in transfers if got != made]
    assert sorted(crossings) == sorted(
        [("client", "GPU:0"), ("GPU:0", "CPU:0"), ("CPU:0", "GPU:0"), ("GPU:0", "client")]
    )


def test_a_colocation_group_with_a_host_only_member_goes_to_the_cpu(
    one_gpu: types.ModuleType,
) -> None:
    # A queue's handle, enqueue and dequeue are one group (resource inputs) without GPU
    # kernels: all on the CPU; the arithmetic around them on the GPU.
    x = tf.placeholder(tf.float32, [2], name="x")
    queue = tf.FIFOQueue(4, tf.float32, shapes=[[2]])
    enqueue = queue.enqueue(tf.multiply(x, 3.0, name="tripled"))
    dequeued = queue.dequeue()
    after = tf.add(dequeued, 1.0, name="after")
    # A variable colocated with a py_func (TF1's colocate_with) follows it to the CPU.
    v = tf.Variable([1.0, 2.0], name="v")
    with tf.colocate_with(v.op):
        noted = tf.py_func(lambda a: a * 10.0, [v.read_value()], tf.float32, name="noted")
    with tf.Session(config=tf.ConfigProto(debug=True)) as sess:
        sess.run(v.initializer)
        placed = sess.placement([enqueue, after, noted], {x: np.zeros(2, np.float32)})
        sess.run(enqueue, {x: np.array([1.0, 2.0], np.float32)})
        np.testing.assert_array_equal(sess.run(after), [4.0, 7.0])
        np.testing.assert_array_equal(sess.run(noted), [10.0, 20.0])
    assert placed["tripled"] == GPU0 and placed["after"] == GPU0
    assert placed[queue.queue_ref.op.name] == CPU
    assert placed[enqueue.name] == CPU and placed[dequeued.op.name] == CPU
    assert placed["v"] == CPU and placed["noted"] == CPU


def test_summaries_of_gpu_values_are_encoded_on_the_cpu(one_gpu: types.ModuleType) -> None:
    v = tf.Variable([1.0, 2.0, 3.0], name="v")
    total = tf.reduce_sum(v * 2.0, name="total")
    summary = tf.summary.scalar("total", total)
    with tf.Session(config=tf.ConfigProto(debug=True)) as sess:
        sess.run(v.initializer)
        placed = sess.placement(summary)
        proto = sess.run(summary)
    # The summary follows its input to the input's task, but has no GPU kernel: the
    # variable and the sum stay on the GPU, only the encoding runs on the CPU.
    assert placed["v"] == GPU0 and placed["total"] == GPU0
    assert placed[summary.op.name] == CPU
    event = tf.Summary.FromString(proto)
    assert event.value[0].simple_value == 12.0


def test_explicit_requests_win_and_gpu_requests_need_a_gpu_kernel(
    one_gpu: types.ModuleType,
) -> None:
    x = tf.placeholder(tf.float32, [2], name="x")
    with tf.device("/cpu:0"):
        on_cpu = tf.square(x, name="on_cpu")
    with tf.device("/gpu:0"):
        asked = tf.py_func(lambda a: a - 1.0, [on_cpu], tf.float32, name="asked")
    feed = {x: np.array([2.0, 3.0], np.float32)}
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(asked, feed)
    message = str(info.value)
    assert "'asked'" in message and "no supported kernel for GPU devices" in message
    assert "allow_soft_placement" in message
    config = tf.ConfigProto(allow_soft_placement=True, debug=True)
    with tf.Session(config=config) as sess:
        placed = sess.placement(asked, feed)
        np.testing.assert_array_equal(sess.run(asked, feed), [3.0, 8.0])
    assert placed["on_cpu"] == CPU and placed["asked"] == CPU


def test_control_flow_with_a_host_only_body_stays_on_the_cpu(one_gpu: types.ModuleType) -> None:
    def body(i: Any, total: Any) -> tuple[Any, Any]:
        bumped = tf.py_func(lambda t: t + 1.0, [total], tf.float32)
        bumped.set_shape([])
        return i + 1, bumped

    i, total = tf.while_loop(lambda i, t: i < 3, body, [tf.constant(0), tf.constant(0.0)])
    plain_i, plain_total = tf.while_loop(
        lambda i, t: i < 3, lambda i, t: (i + 1, t * 2.0), [tf.constant(0), tf.constant(1.0)]
    )
    with tf.Session(config=tf.ConfigProto(debug=True)) as sess:
        placed = sess.placement([total, plain_total])
        assert sess.run([total, plain_total]) == [3.0, 8.0]
    assert placed[total.op.name] == CPU  # its body calls Python
    assert placed[plain_total.op.name] == GPU0


def test_log_device_placement_writes_tf1_lines(one_gpu: types.ModuleType, dataflow_log) -> None:
    x = tf.placeholder(tf.float32, [2, 2], name="x")
    product = tf.matmul(x, x, name="product")
    shown = tf.py_func(lambda a: a, [product], tf.float32, name="shown")
    config = tf.ConfigProto(log_device_placement=True)
    with tf.Session(config=config) as sess:
        sess.run(shown, {x: np.eye(2, dtype=np.float32)})
    assert f"product: (MatMul): {GPU0}" in dataflow_log.text
    assert f"shown: (PyFunc): {CPU}" in dataflow_log.text


def test_on_a_cluster_unplaced_ops_go_to_their_tasks_gpu() -> None:
    # The placement rule is the same for a cluster's devices (a worker declaring the
    # Dask resource GPU lists its GPUs): unplaced ops go to the default task's GPU,
    # ops asked for a task with no GPU to its CPU, host-only ops to the CPU.
    worker_cpu = "/job:worker/replica:0/task:0/device:CPU:0"
    worker_gpu = "/job:worker/replica:0/task:0/device:GPU:0"
    ps_cpu = "/job:ps/replica:0/task:0/device:CPU:0"
    x = tf.placeholder(tf.float32, [3], name="x")
    with tf.device("/job:ps/task:0"):
        scale = tf.Variable([1.0, 2.0, 3.0], name="scale")
    scaled = tf.multiply(x, scale.read_value(), name="scaled")
    printed = tf.py_func(lambda a: a, [scaled], tf.float32, name="printed")
    plan = compile_plan([printed], [x], [worker_cpu, worker_gpu, ps_cpu], worker_cpu)
    assert plan.placement["scale"] == ps_cpu
    assert plan.placement["scaled"] == worker_gpu
    assert plan.placement["printed"] == worker_cpu


# --- copies across the boundary -------------------------------------------------------------
@pytest.mark.parametrize("threads", [1, 0], ids=["sequential", "concurrent"])
def test_a_training_step_copies_feeds_in_once_and_fetches_out_once(
    one_gpu: types.ModuleType, threads: int
) -> None:
    x, y, loss, train = _mlp()
    batch = _batch()
    feed = {x: batch["x"], y: batch["y"]}
    config = tf.ConfigProto(inter_op_parallelism_threads=threads, debug=True)
    with tf.Session(config=config) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run([loss, train], feed)  # compiles: constants go to the GPU once, here
        store = sess.backend.resource_store(GPU0)
        for _ in range(3):
            fake_cupy.reset_copies(one_gpu)
            sess.run([loss, train], feed)
            counted = fake_cupy.copies(one_gpu)
            assert counted["to_device"] == 2, one_gpu.copy_log  # x and y, once each
            assert counted["to_host"] == 1, one_gpu.copy_log  # the loss
            log = [entry for entry in one_gpu.copy_log if entry[0] != "implicit_to_host"]
            assert sorted(log) == sorted(
                [("to_device", (5, 6), "float32"), ("to_device", (5,), "int64")]
                + [("to_host", (), "float32")]
            )
        # The variables (and Adam's slots) stayed in device memory between steps.
        stored = store.snapshot()
        assert len(stored) == 14 and {type(v).__name__ for v in stored.values()} == {"DeviceArray"}


def test_a_steady_step_reads_no_device_value_back(one_gpu: types.ModuleType) -> None:
    # Reading a device value as Python data (a shape, an axis) is a copy and a wait on a
    # GPU. A steady training step (dense labels) makes none: Shape hands out the array
    # it made for the same shape, ExpandDims remembers its constant axis.
    x = tf.placeholder(tf.float32, [None, 6], name="x")
    y = tf.placeholder(tf.float32, [None, 3], name="y")
    logits = _dense(tf.nn.relu(_dense(x, 8, "hidden")), 3, "out")
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y, logits=logits))
    train = tf.train.AdamOptimizer(0.05).minimize(loss)
    batch = _batch()
    feed = {x: batch["x"], y: np.eye(3, dtype=np.float32)[batch["y"]]}
    with tf.Session(config=tf.ConfigProto(debug=True)) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run([loss, train], feed)
        previous = 5
        for rows in (5, 5, 4, 4):
            fake_cupy.reset_copies(one_gpu)
            sess.run([loss, train], {x: feed[x][:rows], y: feed[y][:rows]})
            # A new batch size makes its shape array once and reads it back once.
            new = int(rows != previous)
            previous = rows
            assert one_gpu.copies["scalars_to_device"] == new, one_gpu.copy_log
            assert fake_cupy.copies(one_gpu) == {
                "to_device": 2,
                "to_host": 1,
                "implicit_to_host": new,
            }, one_gpu.copy_log


def test_a_value_read_by_several_stages_crosses_once(one_gpu: types.ModuleType) -> None:
    # x is read by two GPU stages (split by a py_func on the CPU) and fetched; the GPU
    # value g is read by two CPU py_funcs and fetched: each crosses once per direction.
    x = tf.placeholder(tf.float32, [4], name="x")
    g = tf.multiply(x, 2.0, name="g")
    first = tf.py_func(lambda a: a + 1.0, [g], tf.float32, name="first")
    h = tf.add(first, x, name="h")
    second = tf.py_func(lambda a, b: a * b, [h, g], tf.float32, name="second")
    k = tf.subtract(second, x, name="k")
    xv = np.arange(4, dtype=np.float32)
    with tf.Session(config=tf.ConfigProto(debug=True)) as sess:
        plan = sess.compiled_plan([k, g, x], {x: xv})
        assert len(plan.stages) >= 4  # GPU, CPU, GPU, CPU, GPU
        sess.run([k, g, x], {x: xv})  # compiles: the constant goes to the GPU once
        fake_cupy.reset_copies(one_gpu)
        kv, gv, fed = sess.run([k, g, x], {x: xv})
    want_g = xv * 2
    np.testing.assert_allclose(kv, ((want_g + 1) + xv) * want_g - xv)
    np.testing.assert_allclose(gv, want_g)
    np.testing.assert_array_equal(fed, xv)
    counted = fake_cupy.copies(one_gpu)
    # In: x once, first's result, second's result. Out: g once (for both py_funcs and
    # the fetch), h, k.
    assert counted["to_device"] == 3, one_gpu.copy_log
    assert counted["to_host"] == 3, one_gpu.copy_log


# --- real GPUs -------------------------------------------------------------------------------
def _has_gpu() -> bool:
    devices.gpu_count.cache_clear()
    return devices.gpu_count() > 0


REAL_GPU = "/job:localhost/replica:0/task:0/device:GPU:0"


@pytest.mark.gpu
@pytest.mark.skipif(not _has_gpu(), reason="needs CUDA and CuPy")
def test_default_placement_on_a_real_gpu(transfers: list) -> None:
    x, y, loss, train = _mlp()
    batch = _batch()
    feed = {x: batch["x"], y: batch["y"]}

    def losses(config: Any) -> list[float]:
        with tf.Session(config=config) as sess:
            sess.run(tf.global_variables_initializer())
            return [float(sess.run([loss, train], feed)[0]) for _ in range(5)]

    with tf.Session() as sess:
        placed = sess.placement([loss, train], feed)
    assert set(placed.values()) == {REAL_GPU}
    on_cpu = losses(tf.ConfigProto(device_count={"GPU": 0}))
    transfers.clear()
    on_gpu = losses(tf.ConfigProto())
    np.testing.assert_allclose(on_gpu, on_cpu, rtol=1e-4)
    # Per step: x and y in, the loss out; the initializer step copies nothing.
    assert len(transfers) == 5 * 3, transfers


@pytest.mark.gpu
@pytest.mark.skipif(not _has_gpu(), reason="needs CUDA and CuPy")
def test_host_only_ops_beside_a_real_gpu() -> None:
    x = tf.placeholder(tf.float32, [3], name="x")
    doubled = tf.multiply(x, 2.0, name="doubled")
    shifted = tf.py_func(lambda v: v + 1.0, [doubled], tf.float32, name="shifted")
    out = tf.square(shifted, name="out")
    with tf.device("/gpu:0"):
        asked = tf.py_func(lambda v: v, [x], tf.float32, name="asked")
    xv = np.array([1.0, 2.0, 3.0], np.float32)
    with tf.Session() as sess:
        placed = sess.placement(out, {x: xv})
        got = sess.run(out, {x: xv})
        with pytest.raises(tf.errors.InvalidArgumentError, match="no supported kernel"):
            sess.run(asked, {x: xv})
    assert placed["doubled"] == REAL_GPU and placed["shifted"].endswith("CPU:0")
    np.testing.assert_allclose(got, (xv * 2 + 1) ** 2)
