"""GPU dispatch, tested on every machine; the real-GPU tests are marked ``gpu``.

Without a GPU (no CuPy, or no CUDA device): ``/gpu:0`` requests fail placement with an
``InvalidArgumentError`` listing the devices that exist, or fall back to the CPU under
``allow_soft_placement``.

With a stand-in ``cupy`` (``fake_cupy`` below, put in ``sys.modules`` for one test): the
dispatch logic itself runs: ``devices.gpu_count``/``local_devices`` see its GPUs,
``array_namespace`` maps GPU devices to it, ``transfer``/``to_host`` move arrays across
the boundary, and an embedded session places GPU ops, compiles CPU -> GPU -> CPU
stages, transfers at stage boundaries and hands the client numpy arrays. The stand-in
is no mock of the GPU runtime and does no GPU work: it is numpy behind
``dataflow.testing.strict_xp``'s strict namespace, whose arrays (``DeviceArray``)
refuse numpy calls from outside the namespace and host arrays mixed into device
arrays, so a value that misses its transfer to the "GPU" fails the step as it would
with cupy. The Dask side (the ``GPU`` resource on GPU stages, GPU devices of workers,
a worker's GPU stage copying its inputs in and outputs out) is checked on its pure
functions.

With CUDA and CuPy (``@pytest.mark.gpu``, skipped elsewhere): the kernel conformance
cases of ``tests/ops/test_array_namespace.py`` on real cupy, and a small training step on
``/gpu:0`` against the same step on the CPU.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import dataflow as tf
from dataflow.framework import registry
from dataflow.ops.state.session_tensors import TensorHandle
from dataflow.runtime import devices
from dataflow.runtime.compile import placement
from dataflow.runtime.compile.compiler import compile_plan
from dataflow.runtime.resources import ResourceStore
from dataflow.testing import strict_xp
from dataflow.testing.fake_cupy import DeviceArray

from .conftest import short as _short

CPU = "/job:localhost/replica:0/task:0/device:CPU:0"
GPU0 = "/job:localhost/replica:0/task:0/device:GPU:0"
GPU1 = "/job:localhost/replica:0/task:0/device:GPU:1"


def test_without_gpus_only_the_cpu_is_listed(no_gpu: None) -> None:
    assert devices.local_devices() == [CPU]
    assert devices.array_namespace(CPU) is np


def test_gpu_request_without_gpu_fails_placement_listing_devices(no_gpu: None) -> None:
    with tf.device("/gpu:0"):
        y = tf.constant([1.0, 2.0]) * 2.0
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(y)
    message = str(info.value)
    assert "GPU:0" in message and CPU in message and "allow_soft_placement" in message


def test_soft_placement_falls_back_to_cpu(no_gpu: None) -> None:
    with tf.device("/gpu:0"):
        y = tf.constant([1.0, 2.0]) * 2.0
    config = tf.ConfigProto(allow_soft_placement=True, debug=True)
    with tf.Session(config=config) as sess:
        np.testing.assert_array_equal(sess.run(y), [2.0, 4.0])
        assert set(sess.placement(y).values()) == {CPU}


def test_gpu_count_is_zero_without_cupy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "cupy", None)  # makes ``import cupy`` fail
    devices.gpu_count.cache_clear()
    try:
        assert devices.gpu_count() == 0
    finally:
        devices.gpu_count.cache_clear()


# --- the stand-in: devices.py --------------------------------------------------------------
def test_gpus_are_counted_and_listed(fake_cupy: types.ModuleType) -> None:
    assert devices.gpu_count() == 2
    assert devices.local_devices() == [CPU, GPU0, GPU1]


def test_array_namespace_maps_gpu_devices_to_cupy(fake_cupy: types.ModuleType) -> None:
    assert devices.array_namespace(GPU0) is fake_cupy
    assert devices.array_namespace("/job:worker/replica:0/task:3/device:GPU:1") is fake_cupy
    assert devices.array_namespace(CPU) is np


def test_transfer_and_to_host_cross_the_boundary(fake_cupy: types.ModuleType) -> None:
    host = np.arange(6.0).reshape(2, 3)
    on_gpu = devices.transfer(host, "", GPU1)
    assert type(on_gpu) is DeviceArray
    assert fake_cupy.entered == [1]  # allocated under the destination device
    back = devices.transfer(on_gpu, GPU1, CPU)
    assert type(back) is np.ndarray
    np.testing.assert_array_equal(back, host)
    assert type(devices.transfer(on_gpu, GPU1, "")) is np.ndarray  # to the client
    assert devices.to_host(host) is host  # host values pass through
    record = {"get": 1}  # something with a ``get`` that is no device array
    assert devices.to_host(record) is record
    names = np.array([b"w", b"b"], dtype=object)
    assert devices.transfer(names, "", GPU0) is names  # strings stay in host memory
    # GPU to GPU goes through the destination device.
    assert type(devices.transfer(on_gpu, GPU1, GPU0)) is DeviceArray
    assert fake_cupy.entered == [1, 0]


def test_the_stand_in_refuses_host_arrays_on_the_device(fake_cupy: types.ModuleType) -> None:
    x = fake_cupy.asarray([1.0, 2.0])
    with pytest.raises(AssertionError, match="plain numpy array"):
        fake_cupy.add(x, np.ones(2))
    with pytest.raises(ValueError, match="Unsupported dtype"):
        fake_cupy.asarray(np.array([b"a"], dtype=object))


# --- the stand-in: an embedded session with a GPU --------------------------------------------
def _three_stage_graph() -> tuple[Any, Any, Any, Any]:
    x = tf.placeholder(tf.float32, [4, 3], name="x")
    with tf.device("/cpu:0"):
        a = tf.square(x, name="a")
    with tf.device("/gpu:0"):
        w = tf.constant(np.linspace(-1.0, 1.0, 6).reshape(3, 2).astype(np.float32))
        # GPU; reads the feed too
        h = tf.nn.relu(tf.matmul(a, w) + tf.reduce_sum(x, 1, keepdims=True), name="h")
    with tf.device("/cpu:0"):
        z = tf.reduce_sum(h, axis=1, name="z")
    return x, a, h, z


def _reference(xv: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    w = np.linspace(-1.0, 1.0, 6).reshape(3, 2).astype(np.float32)
    h = np.maximum((xv * xv) @ w + xv.sum(axis=1, keepdims=True), 0)
    return h, h.sum(axis=1)


def test_session_places_gpu_ops_and_transfers_at_stage_boundaries(
    one_gpu: types.ModuleType, transfers: list
) -> None:
    x, a, h, z = _three_stage_graph()
    xv = np.arange(12, dtype=np.float32).reshape(4, 3) / 10.0 - 0.5
    with tf.Session(config=tf.ConfigProto(debug=True)) as sess:
        assert sess.backend.devices == [CPU, GPU0]
        placement = sess.placement([h, z], {x: xv})
        assert placement["h"] == GPU0 and placement["MatMul"] == GPU0
        assert placement["a"] == CPU and placement["z"] == CPU
        plan = sess.compiled_plan([h, z], {x: xv})
        # The GPU's sum of the feed needs nothing from the CPU: a stage of its own, which
        # runs beside the CPU's first (``compile/partition.py``).
        devices_in_order = [_short(s.device) for s in plan.stages]
        assert devices_in_order == ["CPU:0", "GPU:0", "GPU:0", "CPU:0"]
        hv, zv = sess.run([h, z], {x: xv})
    want_h, want_z = _reference(xv)
    assert type(hv) is np.ndarray and type(zv) is np.ndarray  # the client gets numpy
    np.testing.assert_allclose(hv, want_h, rtol=1e-6)
    np.testing.assert_allclose(zv, want_z, rtol=1e-6)
    # a and the feed x go to the GPU; h comes back once, for the CPU stage, and the
    # client gets that same host copy (one copy per value per step).
    assert sorted(transfers) == [
        ("CPU:0", "GPU:0", "ndarray", "DeviceArray"),
        ("GPU:0", "CPU:0", "DeviceArray", "ndarray"),
        ("client", "GPU:0", "ndarray", "DeviceArray"),
    ]


def test_cpu_only_steps_on_a_gpu_machine_skip_transfers(
    one_gpu: types.ModuleType, transfers: list
) -> None:
    x = tf.placeholder(tf.float32, [2])
    with tf.device("/cpu:0"):  # (unplaced, they would go to the GPU, as in TF1)
        y = tf.square(x) + 1.0
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(y, {x: [1.0, 2.0]}), [2.0, 5.0])
        bound = sess._signature(y, {x: None}).bound
    assert bound.run == bound._run_single  # the one-stage fast path, as without a GPU
    assert transfers == []


def test_gpu_variables_train_on_the_gpu_like_on_the_cpu(one_gpu: types.ModuleType) -> None:
    def train(device: str) -> tuple[np.ndarray, list]:
        graph = tf.Graph()
        with graph.as_default():
            x = tf.constant(np.linspace(-1, 1, 12).reshape(4, 3).astype(np.float32))
            y = tf.constant(np.array([[1.0], [0.0], [2.0], [1.0]], np.float32))
            with tf.device(device):
                w = tf.Variable(np.full((3, 1), 0.1, np.float32), name="w")
                loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
                step = tf.train.AdamOptimizer(0.1).minimize(loss)
            with tf.Session(graph=graph, config=tf.ConfigProto(debug=True)) as sess:
                sess.run(tf.global_variables_initializer())
                for _ in range(3):
                    sess.run(step)
                stored = sess.backend.resource_store(device or None).snapshot()
                return sess.run(w), [type(v).__name__ for v in stored.values()]

    on_gpu, gpu_types = train(GPU0)
    on_cpu, _ = train(CPU)
    assert type(on_gpu) is np.ndarray
    np.testing.assert_allclose(on_gpu, on_cpu, rtol=1e-6)
    assert gpu_types and set(gpu_types) == {"DeviceArray"}  # the state lives on the GPU


def test_strings_stay_in_host_memory_inside_gpu_blocks(
    one_gpu: types.ModuleType, tmp_path: Any
) -> None:
    # As in TF, string tensors live in host memory even on a GPU device: a string
    # constant, a string feed (the saver's file name) and checkpoint ops colocated with
    # GPU variables all work.
    with tf.device("/gpu:0"):
        v = tf.Variable(np.arange(3.0, dtype=np.float32), name="v")
        label = tf.constant("weights")
        saver = tf.train.Saver([v])
    with tf.Session(config=tf.ConfigProto(debug=True)) as sess:
        sess.run(v.initializer)
        assert sess.placement(label)[label.op.name] == GPU0
        assert sess.run(label) == b"weights"
        path = saver.save(sess, str(tmp_path / "model"))
        sess.run(tf.assign(v, [7.0, 8.0, 9.0]))
        saver.restore(sess, path)
        np.testing.assert_array_equal(sess.run(v), [0.0, 1.0, 2.0])


def test_fetching_a_gpu_value_directly_gives_numpy(one_gpu: types.ModuleType) -> None:
    with tf.device("/gpu:0"):
        v = tf.Variable([1.0, 2.0], name="v")
        s = tf.reduce_sum(v * 3.0)
    with tf.Session() as sess:
        sess.run(v.initializer)
        values = sess.run([v, s, v.read_value()])
    assert [type(x) for x in values] == [np.ndarray, np.float32, np.ndarray]
    assert float(values[1]) == 9.0


def _session_steps(sess: Any, steps: list) -> list[list[Any]]:
    """Runs conformance steps (see ``tests/ops/test_array_namespace.py``) in a session."""
    from tests.ops import test_array_namespace as conformance

    results: list[list[Any]] = []
    for step in steps:
        if callable(step):
            step(results[-1])
            continue
        fetches, feed_dict, *expect = step
        try:
            values = sess.run(_as_list(fetches), feed_dict)
            # A session hands back a session handle as a TensorHandle; the numpy run
            # gives its string, which is what feeding the handle feeds.
            results.append([bytes(v) if isinstance(v, TensorHandle) else v for v in values])
        except tf.errors.OpError as exc:
            assert expect == [conformance.FAILS], exc
            results.append([f"{type(exc).__name__}: {exc.message.split(' [[')[0]}"])
    return results


def _as_list(fetches: Any) -> list[Any]:
    """A step's fetches as a list (a case may fetch one op alone)."""
    return list(fetches) if isinstance(fetches, (list, tuple)) else [fetches]


def _conformance_cases() -> list[tuple[str, Callable]]:
    from tests.ops import test_array_namespace as conformance

    return conformance.ALL_CASES


@pytest.mark.parametrize(
    "name,build", _conformance_cases(), ids=[c[0] for c in _conformance_cases()]
)
def test_every_conformance_case_runs_on_a_stand_in_gpu(
    name: str, build: Callable, one_gpu: types.ModuleType
) -> None:
    # Each case built inside ``tf.device('/gpu:0')`` and run by a session that sees one
    # (stand-in) GPU gives what the plain numpy run gives: feeds are copied in, fetches
    # come back as numpy, strings stay on the host, state lives on the device. Ops
    # without a GPU kernel (strings, queues, py_func) and their colocation groups go to
    # the CPU under soft placement, as in TF1; the others stay on the GPU.
    from tests.ops import test_array_namespace as conformance

    conformance.R = np.random.default_rng(3)
    graph = tf.Graph()
    with graph.as_default():
        want, _ = conformance.run_steps(build(), np)
    conformance.R = np.random.default_rng(3)
    graph = tf.Graph()
    with graph.as_default(), tf.device("/gpu:0"):
        steps = build()
    config = tf.ConfigProto(debug=True, allow_soft_placement=True)
    with graph.as_default(), tf.Session(graph=graph, config=config) as sess:
        got = _session_steps(sess, steps)
        first = next(s for s in steps if not callable(s))
        placed = sess.placement(_as_list(first[0]), first[1])
    ops = [graph.get_operation_by_name(n) for n in placed]
    groups = placement.colocation_groups(ops)
    host_groups = {groups.find(op.name) for op in ops if not placement.has_gpu_kernel(op)}
    for op in ops:
        follower = not placement.has_gpu_kernel(op) and registry.lookup(op.type).follows_inputs
        device = CPU if follower or groups.find(op.name) in host_groups else GPU0
        assert placed[op.name] == device, (op.name, op.type, placed[op.name])
    for i, (g_step, w_step) in enumerate(zip(got, want, strict=True)):
        for j, (g, w) in enumerate(zip(g_step, w_step, strict=True)):
            assert not isinstance(g, strict_xp.StrictArray), f"step {i}, fetch {j}: {type(g)}"
            conformance.assert_same(g, w, f"step {i}, fetch {j}")


# --- the stand-in: the Dask side -----------------------------------------------------------
def _worker_plan(gpu: str, cpu: str) -> Any:
    x = tf.placeholder(tf.float32, [3], name="x")
    with tf.device(cpu):
        a = tf.square(x)
    with tf.device(gpu):
        b = tf.exp(a, name="b")
    with tf.device(cpu):
        c = tf.negative(b, name="c")
    return x, c, compile_plan([c], [x], [cpu, gpu], cpu)


def test_dask_lowering_asks_for_the_gpu_resource_on_gpu_stages() -> None:
    lowering = pytest.importorskip("dataflow.runtime.dask.lowering")
    cpu = "/job:worker/replica:0/task:0/device:CPU:0"
    gpu = "/job:worker/replica:0/task:0/device:GPU:0"
    _, _, plan = _worker_plan(gpu, cpu)
    lowered = lowering.lower(plan, {cpu: "worker-0", gpu: "worker-0"}, "plan-1")
    by_device = {plan.stages[t.index].device: t for t in lowered.templates}
    assert by_device[gpu].annotations["resources"] == {"dataflow-worker-0": 1, "GPU": 1}
    assert by_device[cpu].annotations["resources"] == {"dataflow-worker-0": 1}
    assert "GPU:0" in by_device[gpu].name  # the dashboard names the GPU stage
    assert lowering.device_label(gpu) == "worker:0/GPU:0"


def test_cluster_lists_gpus_of_workers_declaring_the_resource() -> None:
    cluster = pytest.importorskip("dataflow.runtime.dask.cluster")
    cluster_view = pytest.importorskip("dataflow.runtime.dask.cluster_view")
    tasks = {
        ("worker", 0): cluster_view.WorkerInfo("worker-0", "tcp://w0", 2, 1),
        ("ps", 0): cluster_view.WorkerInfo("ps-0", "tcp://p0", 0, 1),
    }
    listed, worker_of, _ = cluster.cluster_devices(tasks)
    gpus = [d for d in listed if "/device:GPU:" in d]
    assert gpus == [
        "/job:worker/replica:0/task:0/device:GPU:0",
        "/job:worker/replica:0/task:0/device:GPU:1",
    ]
    assert {worker_of[d] for d in gpus} == {"worker-0"}


def test_a_workers_gpu_stage_copies_inputs_in_and_outputs_out(fake_cupy: types.ModuleType) -> None:
    lowering = pytest.importorskip("dataflow.runtime.dask.lowering")
    worker_state = pytest.importorskip("dataflow.runtime.dask.worker_state")
    gpu = "/job:worker/replica:0/task:0/device:GPU:0"
    x = tf.placeholder(tf.float32, [3], name="x")
    with tf.device(gpu):
        y = tf.exp(tf.square(x))
    plan = compile_plan([y], [x], [gpu], gpu)
    part = lowering.lower(plan, {gpu: "worker-0"}, "plan-2").worker_plans["worker-0"].parts[0]
    ctx = worker_state.WorkerDeviceContext(
        gpu, devices.array_namespace(gpu), ResourceStore(gpu), True
    )
    stage = worker_state.CompiledStage(part, ctx, plan.slot_specs, True)
    xv = np.array([0.5, -1.0, 2.0], np.float32)
    (out,) = stage(7, [xv])  # a plain numpy input, as Dask delivers it
    assert type(out) is np.ndarray  # results leave the worker's GPU as host arrays
    np.testing.assert_allclose(out, np.exp(xv * xv), rtol=1e-6)


# --- real GPUs ---------------------------------------------------------------------------------
def _has_gpu() -> bool:
    devices.gpu_count.cache_clear()
    return devices.gpu_count() > 0


# Cases whose values come from random streams (cupy's differ from numpy's): compared by
# dtype and shape only.
RANDOM_CASES = {"random", "nn", "control_flow", "queues"}


def _gpu_cases() -> list[tuple[str, Callable]]:
    from tests.ops import test_array_namespace as conformance

    return conformance.ALL_CASES


@pytest.mark.parametrize("name,build", _gpu_cases(), ids=[c[0] for c in _gpu_cases()])
@pytest.mark.gpu
@pytest.mark.skipif(not _has_gpu(), reason="needs CUDA and CuPy")
def test_kernels_agree_on_cupy(name: str, build: Callable) -> None:
    import cupy

    from tests.ops import test_array_namespace as conformance

    runs = []
    for xp, device in ((np, CPU), (cupy, GPU0)):
        conformance.R = np.random.default_rng(3)
        graph = tf.Graph()
        with graph.as_default():
            runs.append(conformance.run_steps(build(), xp, device)[0])
    want, got = runs
    for i, (g_step, w_step) in enumerate(zip(got, want, strict=True)):
        for j, (g, w) in enumerate(zip(g_step, w_step, strict=True)):
            where = f"{name}: step {i}, fetch {j}"
            if w is None or isinstance(w, str):
                assert g == w, where
                continue
            g, w = np.asarray(g), np.asarray(w)
            assert (g.dtype, g.shape) == (w.dtype, w.shape), where
            if name in RANDOM_CASES or w.dtype == object:
                continue
            if w.dtype.kind in "fc":
                np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5, err_msg=where)
            else:
                np.testing.assert_array_equal(g, w, err_msg=where)


@pytest.mark.gpu
@pytest.mark.skipif(not _has_gpu(), reason="needs CUDA and CuPy")
def test_training_step_on_a_real_gpu() -> None:
    def train(device: str) -> np.ndarray:
        graph = tf.Graph()
        with graph.as_default():
            tf.set_random_seed(0)
            x = tf.constant(np.random.default_rng(0).standard_normal((64, 8)), tf.float32)
            y = tf.constant(np.random.default_rng(1).standard_normal((64, 1)), tf.float32)
            with tf.device(device):
                w = tf.Variable(tf.zeros([8, 16]))
                v = tf.Variable(tf.ones([16, 1]) * 0.1)
                pred = tf.matmul(tf.nn.relu(tf.matmul(x, w) + 0.1), v)
                loss = tf.reduce_mean(tf.square(pred - y))
                step = tf.train.MomentumOptimizer(0.05, 0.9).minimize(loss)
            with tf.Session(graph=graph, config=tf.ConfigProto(debug=True)) as sess:
                sess.run(tf.global_variables_initializer())
                for _ in range(5):
                    sess.run(step)
                assert sess.placement(step)[w.op.name] == device
                return sess.run(loss)

    np.testing.assert_allclose(train(GPU0), train(CPU), rtol=1e-4)
