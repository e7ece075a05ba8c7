"""A ps/worker training job on a real (in-process) Dask cluster whose worker has a GPU.

The GPU is the stand-in cupy (``dataflow.testing.fake_cupy``: numpy memory behind a
strict namespace; no GPU work, nothing of Dask mocked), put in ``sys.modules`` before
the cluster starts, so the workers (threads of this process) see one GPU. The worker
task declares the Dask resource ``GPU`` (``LocalCluster(gpus_per_worker=1)``); the ps
task declares none, and dataflow's worker plugin gives it one because CuPy sees a GPU
there: both tasks list ``/device:GPU:0``. Under TF1's default placement the variables
(asked for ``/job:ps/task:0``, no device type) and the worker's compute (asked for
``/job:worker/task:0``) go to their tasks' GPUs; host-only ops (``py_func``) stay on the
worker's CPU; the losses are the CPU run's.
"""

from __future__ import annotations

import sys
import weakref
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import dataflow as tf
from dataflow.runtime import devices
from dataflow.runtime.dask import worker_state
from dataflow.testing import fake_cupy
from dataflow.testing.fake_cupy import make_fake_cupy

from .conftest import local_cluster

WORKER_GPU = "/job:worker/replica:0/task:0/device:GPU:0"
WORKER_CPU = "/job:worker/replica:0/task:0/device:CPU:0"
PS_GPU = "/job:ps/replica:0/task:0/device:GPU:0"


@pytest.fixture
def gpu_cluster(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    monkeypatch.setitem(sys.modules, "cupy", make_fake_cupy(1))
    devices.gpu_count.cache_clear()
    cluster = local_cluster(ps=1, worker=1, gpus_per_worker=1, processes=False)
    try:
        yield cluster
    finally:
        cluster.close()
        devices.gpu_count.cache_clear()


def _job() -> tuple[Any, Any, Any, Any, Any]:
    rng = np.random.default_rng(3)
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    with tf.device(tf.train.replica_device_setter(ps_tasks=1, worker_device="/job:worker/task:0")):
        w = tf.Variable(rng.standard_normal((4, 1)).astype(np.float32), name="w")
        pred = tf.matmul(x, w, name="pred")
        loss = tf.reduce_mean(tf.square(pred - y), name="loss")
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        checked = tf.py_func(lambda v: v * 1.0, [loss], tf.float32, name="checked")
    return x, y, loss, train, checked


def test_worker_stages_run_on_the_workers_gpu(gpu_cluster: Any) -> None:
    x, y, loss, train, checked = _job()
    rng = np.random.default_rng(4)
    feed = {x: rng.standard_normal((8, 4)).astype(np.float32)}
    feed[y] = feed[x] @ np.array([[1.0], [2.0], [-1.0], [0.5]], np.float32)

    with tf.Session(gpu_cluster) as sess:
        assert WORKER_GPU in sess.backend.devices and PS_GPU in sess.backend.devices
        sess.run(tf.global_variables_initializer())
        placed = sess.placement([loss, train, checked], feed)
        on_cluster = [float(sess.run([loss, train], feed)[0]) for _ in range(4)]
        assert float(sess.run(checked, feed)) == pytest.approx(float(sess.run(loss, feed)))
    assert placed["pred"] == WORKER_GPU and placed["loss"] == WORKER_GPU
    assert placed["w"] == PS_GPU  # the variable on its task's GPU, as TF1 would
    assert placed["checked"] == WORKER_CPU  # py_func has no GPU kernel

    # The same graph in this process, on its CPU (soft placement drops the jobs).
    config = tf.ConfigProto(device_count={"GPU": 0}, allow_soft_placement=True)
    with tf.Session(config=config) as sess:
        sess.run(tf.global_variables_initializer())
        on_cpu = [float(sess.run([loss, train], feed)[0]) for _ in range(4)]
    np.testing.assert_allclose(on_cluster, on_cpu, rtol=1e-5)


def test_a_worker_copies_each_value_across_once_a_step(gpu_cluster: Any) -> None:
    # On worker-0: x is read by three GPU stages (split by py_funcs on its CPU); the GPU
    # value g is read by two CPU py_funcs, a later GPU stage and the client. A resident
    # step copies each across once per direction on the worker, as an embedded one does
    # (per stage, x went in three times and g came back in once more).
    with tf.device("/job:worker/task:0"):
        x = tf.placeholder(tf.float32, [4], name="x")
        g = tf.multiply(x, 2.0, name="g")
        first = tf.py_func(lambda a: a + 1.0, [g], tf.float32, name="first")
        h = tf.add(first, x, name="h")
        second = tf.py_func(lambda a, b: a * b, [h, g], tf.float32, name="second")
        k = tf.add(tf.subtract(second, x), g, name="k")
    xv = np.arange(4, dtype=np.float32)
    cupy = sys.modules["cupy"]
    with tf.Session(gpu_cluster) as sess:
        stages = sess.compiled_plan([k, g], {x: xv}).stages
        assert [s.device for s in stages] == [WORKER_GPU, WORKER_CPU] * 2 + [WORKER_GPU]
        # The first step compiles the worker's stages, which puts the constant 2.0 in
        # device memory once (a copy of the plan, not of a step): count from the second.
        sess.run([k, g], {x: xv})
        for _ in range(3):
            fake_cupy.reset_copies(cupy)
            kv, gv = sess.run([k, g], {x: xv})
            # In: x once, first's and second's results. Out: g once (for both
            # py_funcs and the client), h, k.
            assert fake_cupy.copies(cupy) == {"to_device": 3, "to_host": 3, "implicit_to_host": 0}
    want_g = xv * 2
    np.testing.assert_allclose(kv, ((want_g + 1) + xv) * want_g - xv + want_g)
    np.testing.assert_allclose(gv, want_g)


def test_ps_variables_are_updated_in_their_device_buffers(gpu_cluster: Any) -> None:
    # Adam on the ps's GPU: the variable and its slots keep their device buffers from
    # step to step (the worker's step holds no device value past its last reader), and
    # a steady step copies only what crosses between the tasks or to the client.
    x, y, loss, _, _ = _job()
    train = tf.train.AdamOptimizer(0.1).minimize(loss)
    rng = np.random.default_rng(4)
    feed = {x: rng.standard_normal((8, 4)).astype(np.float32)}
    feed[y] = feed[x] @ np.array([[1.0], [2.0], [-1.0], [0.5]], np.float32)
    cupy = sys.modules["cupy"]
    with tf.Session(gpu_cluster) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run([loss, train], feed)
        store = worker_state.RUNTIME.store("", PS_GPU)  # the ps is a thread of this process
        names = ("w", "w/Adam", "w/Adam_1")
        refs = {n: weakref.ref(store.read(n)) for n in names}
        losses = []
        for _ in range(3):
            fake_cupy.reset_copies(cupy)
            losses.append(float(sess.run([loss, train], feed)[0]))
            assert all(refs[n]() is store.read(n) for n in names)
            # In: w and the four Adam constants (worker -> ps), x, y, the gradient;
            # out: w to the worker, the gradient and constants to the ps, the loss.
            assert fake_cupy.copies(cupy) == {"to_device": 8, "to_host": 7, "implicit_to_host": 0}
    assert losses[-1] < losses[0]


def _has_gpu() -> bool:
    devices.gpu_count.cache_clear()
    return devices.gpu_count() > 0


@pytest.mark.gpu
@pytest.mark.skipif(not _has_gpu(), reason="needs CUDA and CuPy")
def test_a_real_gpu_worker_trains_like_the_cpu() -> None:
    # Worker processes of a real LocalCluster, each importing CuPy itself.
    x, y, loss, train, _ = _job()
    rng = np.random.default_rng(4)
    feed = {x: rng.standard_normal((8, 4)).astype(np.float32)}
    feed[y] = feed[x] @ np.array([[1.0], [2.0], [-1.0], [0.5]], np.float32)
    cluster = local_cluster(ps=1, worker=1, gpus_per_worker=1)
    try:
        with tf.Session(cluster) as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.placement(loss, feed)["pred"] == WORKER_GPU
            on_cluster = [float(sess.run([loss, train], feed)[0]) for _ in range(4)]
    finally:
        cluster.close()
    config = tf.ConfigProto(device_count={"GPU": 0}, allow_soft_placement=True)
    with tf.Session(config=config) as sess:
        sess.run(tf.global_variables_initializer())
        on_cpu = [float(sess.run([loss, train], feed)[0]) for _ in range(4)]
    np.testing.assert_allclose(on_cluster, on_cpu, rtol=1e-4)


PS_CPU = "/job:ps/replica:0/task:0/device:CPU:0"


def test_device_count_gpu_0_keeps_every_op_off_the_clusters_gpus(gpu_cluster: Any) -> None:
    x, y, loss, train, _ = _job()
    feed = {x: np.ones((8, 4), np.float32), y: np.ones((8, 1), np.float32)}
    config = tf.ConfigProto(device_count={"GPU": 0})
    with tf.Session(gpu_cluster, config=config) as sess:
        assert not [d for d in sess.backend.devices if "GPU" in d]
        sess.run(tf.global_variables_initializer())
        placed = sess.placement([loss, train], feed)
        sess.run(train, feed)
    assert placed["pred"] == WORKER_CPU and placed["w"] == PS_CPU


@pytest.mark.skipif(_has_gpu(), reason="needs a machine where CuPy cannot run")
def test_workers_advertising_a_gpu_cupy_cannot_run_train_on_their_cpus(caplog) -> None:
    """Workers started as docs/deployment.md shows (``--resources GPU=1``) on a machine
    without CuPy: they get no GPU device, each is reported once (by name, with the
    reason), and a ps/worker program runs on their CPUs as in this process."""
    x, y, loss, train, _ = _job()
    rng = np.random.default_rng(4)
    feed = {x: rng.standard_normal((8, 4)).astype(np.float32)}
    feed[y] = feed[x] @ np.array([[1.0], [2.0], [-1.0], [0.5]], np.float32)
    cluster = local_cluster(ps=1, worker=2, gpus_per_worker=1, processes=True)
    try:
        advertised = cluster.client.scheduler_info(n_workers=-1)["workers"].values()
        assert sorted(w["resources"].get("GPU", 0) for w in advertised) == [0, 1, 1]
        for _ in range(2):  # a second session: nothing reported again
            with caplog.at_level("WARNING", logger="dataflow.runtime.dask.cluster_view"):
                sess = tf.Session(cluster)
            with sess:
                assert not [d for d in sess.backend.devices if "GPU" in d]
                sess.run(tf.global_variables_initializer())
                assert sess.placement(loss, feed)["pred"] == WORKER_CPU
                on_cluster = [float(sess.run([loss, train], feed)[0]) for _ in range(4)]
    finally:
        cluster.close()
    reports = [r.getMessage() for r in caplog.records if "advertises GPU=1" in r.message]
    assert len(reports) == 2, reports
    for name, report in zip(["worker-0", "worker-1"], sorted(reports), strict=True):
        assert f"worker {name} at tcp://" in report and "CuPy cannot be imported" in report
    with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as sess:
        sess.run(tf.global_variables_initializer())
        on_cpu = [float(sess.run([loss, train], feed)[0]) for _ in range(4)]
    # Two 4-term float32 dot products per row, a mean of 8: a few ulps apart at most.
    np.testing.assert_allclose(on_cluster, on_cpu, rtol=1e-5)
