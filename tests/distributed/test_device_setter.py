"""ClusterSpec and replica_device_setter: device strings only, no cluster needed."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow as tf
from dataflow.runtime.dask import cluster as cluster_module
from dataflow.runtime.dask import cluster_view


def test_cluster_spec_dense_and_sparse():
    spec = tf.train.ClusterSpec({"ps": ["ps0:2222", "ps1:2222"], "worker": {1: "w1:2222"}})
    assert spec.jobs == ["ps", "worker"]
    assert spec.num_tasks("ps") == 2 and spec.num_tasks("worker") == 1
    assert spec.task_indices("worker") == [1]
    assert spec.task_address("ps", 1) == "ps1:2222"
    assert spec.job_tasks("worker") == [None, "w1:2222"]
    assert spec.as_dict() == {"ps": ["ps0:2222", "ps1:2222"], "worker": {1: "w1:2222"}}
    assert tf.train.ClusterSpec(spec) == spec
    assert spec == {"ps": ["ps0:2222", "ps1:2222"], "worker": {1: "w1:2222"}}
    assert bool(spec) and not tf.train.ClusterSpec({})
    assert "ps1:2222" in repr(spec)


def test_cluster_spec_errors():
    with pytest.raises(ValueError, match="No such job"):
        tf.train.ClusterSpec({"ps": ["a"]}).num_tasks("worker")
    with pytest.raises(ValueError, match="No task with index 3"):
        tf.train.ClusterSpec({"ps": ["a"]}).task_address("ps", 3)
    with pytest.raises(TypeError, match="list or a dictionary"):
        tf.train.ClusterSpec({"ps": "a"})
    with pytest.raises(TypeError):
        tf.train.ClusterSpec(["a"])


def test_round_robin_over_ps_tasks():
    with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
        v = [tf.Variable(np.zeros(2, np.float32), name=f"v{i}") for i in range(3)]
        y = v[0] + v[1]
    assert [x.device for x in v] == ["/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:0"]
    # A variable's initializer and reads follow it; compute goes to the worker job.
    assert v[1].initializer.device == "/job:ps/task:1"
    assert y.op.device == "/job:worker"


def test_cluster_argument_and_inner_scopes():
    spec = {"ps": ["a", "b", "c"], "worker": ["d"]}
    setter = tf.train.replica_device_setter(cluster=spec, worker_device="/job:worker/task:0")
    with tf.device(setter):
        a = tf.Variable(1.0, name="a")
        with tf.device("/cpu:0"):
            b = tf.Variable(1.0, name="b")
            c = tf.constant(1.0) * 2.0
        with tf.device("/job:worker/task:0"):
            d = tf.Variable(1.0, name="d")  # an inner job wins and gets no ps task
    assert a.device == "/job:ps/task:0"
    assert b.device == "/job:ps/task:1/device:CPU:0"
    assert c.op.device == "/job:worker/task:0/device:CPU:0"
    assert d.device == "/job:worker/task:0"


def test_no_ps_tasks_is_no_constraint():
    assert tf.train.replica_device_setter(ps_tasks=0) is None
    assert tf.train.replica_device_setter(cluster={"worker": ["a"]}) is None
    with tf.device(tf.train.replica_device_setter()):
        v = tf.Variable(1.0)
    assert v.device == ""


def test_custom_strategy_and_ps_ops():
    with tf.device(
        tf.train.replica_device_setter(ps_tasks=4, ps_strategy=lambda op: 3, ps_ops=["Const"])
    ):
        c = tf.constant(1.0)
        v = tf.Variable(1.0, name="v")
    assert c.op.device == "/job:ps/task:3"
    assert v.device == "/job:worker"
    with pytest.raises(TypeError, match="callable"):
        tf.train.replica_device_setter(ps_tasks=1, ps_strategy=3)


def test_device_function_scopes():
    def on_ps_if_variable(op):
        return "/job:ps" if op.type == "VarHandleOp" else "/job:worker/task:1"

    with tf.device(on_ps_if_variable):
        v = tf.Variable(1.0, name="v")
        z = v * 2.0
    assert v.device == "/job:ps"
    assert z.op.device == "/job:worker/task:1"


def test_task_map_by_names_spec_and_fallback():
    info = cluster_view.WorkerInfo
    workers = [
        info("ps-0", "tcp://h:1", 0, 1),
        info("worker-0", "tcp://h:2", 1, 1),
        info("my-job-3", "tcp://h:3", 0, 1),
        info("stray", "tcp://h:4", 0, 1),
    ]
    tasks = cluster_module.task_map(workers)
    assert {k: w.name for k, w in tasks.items()} == {
        ("ps", 0): "ps-0",
        ("worker", 0): "worker-0",
        ("my-job", 3): "my-job-3",
    }
    devices, worker_of, default = cluster_module.cluster_devices(tasks)
    assert "/job:worker/replica:0/task:0/device:GPU:0" in devices
    assert default == "/job:worker/replica:0/task:0/device:CPU:0"
    assert worker_of["/job:my-job/replica:0/task:3/device:CPU:0"] == "my-job-3"
    # An explicit ClusterSpec, by address (with or without protocol) or by name.
    spec = tf.train.ClusterSpec({"ps": ["h:4"], "chief": ["worker-0"]})
    tasks = cluster_module.task_map(workers, spec)
    assert {k: w.name for k, w in tasks.items()} == {("ps", 0): "stray", ("chief", 0): "worker-0"}
    devices, _, default = cluster_module.cluster_devices(tasks)
    assert default == devices[0] == "/job:chief/replica:0/task:0/device:CPU:0"
    with pytest.raises(tf.errors.UnavailableError, match="matches no worker"):
        cluster_module.task_map(workers, {"ps": ["tcp://elsewhere:9"]})
    # No worker named like a task: all workers form /job:worker, in name order.
    plain = [info("b", "tcp://h:6", 0, 1), info("a", "tcp://h:5", 0, 1)]
    assert {k: w.name for k, w in cluster_module.task_map(plain).items()} == {
        ("worker", 0): "a",
        ("worker", 1): "b",
    }


@pytest.mark.tf
def test_replica_device_setter_matches_tensorflow():
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    spec = {"ps": ["a:1", "b:1"], "worker": ["c:1", "d:1"]}

    def build(lib):
        graph = lib.Graph()
        with graph.as_default():
            setter = lib.train.replica_device_setter(
                cluster=spec, worker_device="/job:worker/task:1"
            )
            with lib.device(setter):
                vs = [lib.Variable(np.ones((2, 2), np.float32), name=f"v{i}") for i in range(3)]
                with lib.device("/job:ps"):
                    extra = lib.Variable(1.0, name="extra")
                y = lib.matmul(vs[0], vs[1])
        return [v.device for v in vs] + [extra.device, y.op.device]

    def canon(d):
        return tf.DeviceSpec.from_string(d).to_string()

    assert [canon(d) for d in build(tf)] == [canon(d) for d in build(tf1)]
