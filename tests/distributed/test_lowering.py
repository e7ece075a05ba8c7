"""Lowering a placed plan to per-worker plans and a per-step Dask graph (no cluster)."""

from __future__ import annotations

import numpy as np
import pytest
from dask._task_spec import Task
from dask.highlevelgraph import HighLevelGraph
from dask.utils import key_split

import dataflow as tf
from dataflow.runtime.compile.compiler import compile_plan
from dataflow.runtime.dask import lowering, worker_state

PS = "/job:ps/replica:0/task:0/device:CPU:0"
W0 = "/job:worker/replica:0/task:0/device:CPU:0"
W0_GPU = "/job:worker/replica:0/task:0/device:GPU:0"
W1 = "/job:worker/replica:0/task:1/device:CPU:0"
DEVICES = [PS, W0, W0_GPU, W1]
WORKER_OF = {PS: "ps-0", W0: "worker-0", W0_GPU: "worker-0", W1: "worker-1"}


def _lower(fetches, feeds=(), plan_id="p0"):
    plan = compile_plan(fetches, list(feeds), DEVICES, W0)
    return plan, lowering.lower(plan, WORKER_OF, plan_id)


def _ridge():
    with tf.device("/job:ps/task:0"):
        beta = tf.Variable(np.zeros((3, 1), np.float32), name="beta")
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    with tf.device("/job:worker/task:0"):
        cost = tf.reduce_mean(tf.square(tf.matmul(x, beta)))
        grad = tf.gradients(cost, [beta])[0]
    with tf.device("/job:ps/task:0"):
        update = beta.assign_sub(0.1 * grad)
    return x, cost, update


def test_one_task_per_stage_with_readable_keys():
    x, cost, update = _ridge()
    plan, lowered = _lower([cost, update], [x])
    feed = np.ones((2, 3), np.float32)
    # A step is "<number>-<session id>"; session ids are 8 hex digits (uuid4().hex[:8]).
    graph, keys = lowering.step_graph(lowered, "7-0bc1d2e3", [feed], worker_state.run_stage)
    assert isinstance(graph, HighLevelGraph)
    tasks = dict(graph)
    assert len(tasks) == len(plan.stages) == 3
    assert all(isinstance(t, Task) for t in tasks.values())
    groups = [k[0] for k in keys]
    names = [g.rsplit("-", 1)[0].split(".", 1)[1] for g in groups]
    assert names[0].startswith("beta/Read/") and names[0].endswith("@ps:0")
    # worker-0 has a GPU: its unplaced-type compute goes there, as in TF1.
    assert names[1].startswith("gradients/") and names[1].endswith("@worker:0/GPU:0")
    assert names[2] == "AssignSubVariableOp@ps:0"
    # The key's first element (Dask's task group) names the stage and the plan's
    # signature, never the step: a stage's tasks of every step fall in one group. It
    # starts with the stage's label (as the Plan view and the dataflow page name it),
    # which counts down to the last stage: the stages a stage reads sort above it.
    assert [t.name for t in lowered.templates] == [
        f"{plan.stage_label(i)}@{name.rsplit('@', 1)[1]}" for i, name in enumerate(names)
    ]
    for worker_plan in lowered.worker_plans.values():  # what the workers name them
        for part in worker_plan.parts:
            assert part.label == plan.stage_label(part.stage.index)
            assert part.group == groups[part.stage.index]
    signature = lowering.group_names(lowered)[0].rsplit("-", 1)[1]
    assert groups == [
        f"2.{names[0]}-{signature}",
        f"1.{names[1]}-{signature}",
        f"0.{names[2]}-{signature}",
    ]
    assert all(k[1:3] == ("0bc1d2e3", 7) for k in keys)
    assert [k[3] for k in keys] == [0, 1, 2]
    # The dashboard's task prefixes: the stage, its op and device.
    assert [key_split(k) for k in keys] == [g.rsplit("-", 1)[0] for g in groups]
    # Pinned by the worker's resource, layer by layer (never one merged dict).
    resources = [graph.layers["-".join(map(str, k))].annotations["resources"] for k in keys]
    # (The GPU stage also asks for the worker's GPU slot.)
    assert resources == [
        {"dataflow-ps-0": 1},
        {"dataflow-worker-0": 1, "GPU": 1},
        {"dataflow-ps-0": 1},
    ]
    # Feeds travel inside the task that reads them; upstream stages are dependencies.
    assert tasks[keys[1]].dependencies == {keys[0]}
    assert keys[1] in tasks[keys[2]].dependencies
    assert any(a is feed for a in tasks[keys[1]].args[3])
    # Stage 2 is a sink (run for effect), stage 1 holds the fetched cost.
    assert lowered.result_stages == (1, 2)
    assert lowered.fetch_sources[0][:2] == ("s", 1)


def test_keys_unique_per_step_and_session_groups_per_plan():
    x, cost, update = _ridge()
    _, lowered = _lower([cost, update], [x])
    a = set(lowering.stage_keys(lowered, "1-abc"))
    b = set(lowering.stage_keys(lowered, "2-abc"))
    c = set(lowering.stage_keys(lowered, "1-def"))
    assert not a & b and not a & c
    # The same plan in another session: the same groups; another plan: others.
    _, again = _lower([cost, update], [x], plan_id="p1")
    assert lowering.group_names(again) == lowering.group_names(lowered)
    _, other = _lower([cost], [x])
    assert not set(lowering.group_names(other)) & set(lowering.group_names(lowered))


def test_worker_plans_for_resident_steps():
    x, cost, update = _ridge()
    plan, lowered = _lower([cost, update], [x])
    assert sorted(lowered.worker_plans) == ["ps-0", "worker-0"]
    ps, w0 = lowered.worker_plans["ps-0"], lowered.worker_plans["worker-0"]
    assert [p.stage.index for p in ps.parts] == [0, 2]
    (part,) = w0.parts
    assert part.remote_waits == (0,)
    assert [dest for dest, _ in part.send_to] == ["ps-0"]
    assert part.client_slots == (plan.fetch_slots[0],)
    assert ps.parts[1].remote_waits == (1,)
    assert lowered.feeds_by_worker == {"worker-0": ((0, 0),)}


def test_gpu_stage_asks_for_a_gpu():
    a = tf.constant(np.ones(3, np.float32))
    with tf.device("/job:worker/task:0/gpu:0"):
        b = a * 2.0
    plan, lowered = _lower([b])
    gpu = [t for t in lowered.templates if "GPU" in plan.stages[t.index].device]
    assert gpu and gpu[0].annotations["resources"] == {"dataflow-worker-0": 1, "GPU": 1}
    assert gpu[0].name.endswith("@worker:0/GPU:0")


def test_control_edges_across_devices_are_dependencies():
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(1.0, name="v")
        inc = v.assign_add(1.0)
    with tf.device("/job:worker/task:1"), tf.control_dependencies([inc]):
        after = tf.constant(2.0) * 3.0
    plan, lowered = _lower([after, inc])
    (stage,) = [s for s in plan.stages if s.device == W1]
    assert stage.control_inputs
    template = lowered.templates[stage.index]
    assert set(stage.control_inputs) <= set(template.upstream)
    part = lowered.worker_plans["worker-1"].part(stage.index)
    assert set(stage.control_inputs) <= set(part.remote_waits)


@pytest.mark.parametrize("n_ops", [10, 100, 1000, 10000])
def test_tasks_per_step_flat_in_op_count(n_ops):
    """Two device crossings give three tasks, whether the step has 10 or 10,000 ops."""
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(np.ones(4, np.float32), name="v")
        h = v.read_value()
    with tf.device("/job:worker/task:1"):
        for _ in range(n_ops // 2):
            h = h * 1.0001
    with tf.device("/job:ps/task:0"):
        for _ in range(n_ops // 2):
            h = h + 1.0
    plan, lowered = _lower([h])
    graph, _ = lowering.step_graph(lowered, "1-x", [], worker_state.run_stage)
    assert plan.num_calls >= n_ops
    assert len(dict(graph)) == len(plan.stages) == 3
