"""Stages by level (``runtime/compile/partition.py``): each op as early as its inputs
allow, ops with state in program order on their device, constants with their users.

The first tests use the op library as TF1 programs do; the property test builds random
graphs of four toy op types over three devices and checks the rules every partition
must keep.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dataflow as tf
from dataflow.framework import dtypes, registry
from dataflow.framework.graph import Graph
from dataflow.framework.tensor_shape import TensorShape
from dataflow.runtime.compile.compiler import compile_plan
from dataflow.runtime.compile.partition import partition

PS = "/job:ps/replica:0/task:0/device:CPU:0"
WORKER = "/job:worker/replica:0/task:0/device:CPU:0"


def _stages(plan) -> list[tuple[str, list[str]]]:
    return [(s.device, [c.op_name for c in s.calls]) for s in plan.stages]


def _stage_of(plan, name: str) -> int:
    (index,) = [s.index for s in plan.stages if name in [c.op_name for c in s.calls]]
    return index


def test_work_that_needs_no_other_device_runs_before_the_wait():
    # A worker's own data doubled, and a product with the ps's beta: the doubling is
    # created last, yet runs in a stage before the one waiting for beta.
    with tf.device("/job:ps/task:0"):
        beta = tf.Variable(np.ones((3, 1), np.float32), name="beta")
    with tf.device("/job:worker/task:0"):
        data = tf.Variable(np.ones((4, 3), np.float32), name="data")
        product = tf.matmul(data, beta, name="product")
        doubled = tf.multiply(data, 2.0, name="doubled")
    plan = compile_plan([product, doubled], [], [PS, WORKER], WORKER)
    assert plan.stages[_stage_of(plan, "doubled")].device == WORKER
    assert _stage_of(plan, "doubled") < _stage_of(plan, "product")
    # Before: the doubling joined the product's stage and waited for beta with it.
    assert [d for d, _ in _stages(plan)] == [PS, WORKER, WORKER]


def test_ops_with_state_keep_their_order_on_a_device():
    # ``bump`` waits for the ps; the read after it needs nothing remote, yet stays after
    # it (a read of a variable written in the step).
    with tf.device("/job:ps/task:0"):
        step = tf.Variable(1.0, name="step")
    with tf.device("/job:worker/task:0"):
        v = tf.Variable(0.0, name="v")
        bump = v.assign_add(step.read_value(), name="bump")
        later = v.read_value()
    plan = compile_plan([bump, later], [], [PS, WORKER], WORKER)
    order = [name for _, names in _stages(plan) for name in names]
    assert order.index("bump") < order.index(later.op.name)


def test_constants_join_their_users_stage():
    # The gradient's seed (constants and their folded products) makes no stage of its own.
    with tf.device("/job:ps/task:0"):
        beta = tf.Variable(np.ones((3, 1), np.float32), name="beta")
    with tf.device("/job:worker/task:0"):
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        cost = tf.reduce_mean(tf.square(tf.matmul(x, beta))) + 0.1 * tf.reduce_sum(beta)
        (grad,) = tf.gradients(cost, [beta])
    with tf.device("/job:ps/task:0"):
        update = beta.assign_sub(0.01 * grad)
    plan = compile_plan([cost, update.op], [x], [PS, WORKER], WORKER)
    assert [d for d, _ in _stages(plan)] == [PS, WORKER, PS]


def test_a_session_runs_the_split_step_as_numpy_does():
    with tf.device("/cpu:0"):
        beta = tf.Variable(np.full((3, 1), 0.5, np.float32), name="beta")
    with tf.device("/cpu:1"):
        data = tf.Variable(np.arange(12, dtype=np.float32).reshape(4, 3), name="data")
        product = tf.matmul(data, beta)
        doubled = data * 2.0
        bump = data.assign_add(tf.ones((4, 3)) * tf.reduce_sum(beta))
    config = tf.ConfigProto(device_count={"CPU": 2})
    with tf.Session(config=config) as sess:
        sess.run(tf.global_variables_initializer())
        base = np.arange(12, dtype=np.float32).reshape(4, 3)
        for k in range(3):
            got_product, got_doubled, _ = sess.run([product, doubled, bump])
            now = base + 1.5 * k
            np.testing.assert_allclose(got_doubled, 2 * now)
            np.testing.assert_allclose(got_product, now @ np.full((3, 1), 0.5), rtol=1e-6)


# --- random graphs -------------------------------------------------------------------------
_names = itertools.count()
DEVICES = ("/device:CPU:0", "/device:CPU:1", "/device:CPU:2")
SCALAR = [(dtypes.float64, TensorShape([]))]


@pytest.fixture(scope="module")
def kinds() -> Iterator[dict[str, str]]:
    """Toy op types: a source and a foldable op (both float), a plain op, a stateful one."""
    n = next(_names)
    names = {k: f"PartitionToy{k}{n}" for k in ("Source", "Fold", "Plain", "State")}
    facts = {
        "Source": {"foldable": True},
        "Fold": {"foldable": True},
        "Plain": {},
        "State": {"stateful": True},
    }
    for kind, name in names.items():
        registry.register(
            registry.OpDef(name, lambda op: SCALAR, lambda ctx, attrs: None, **facts[kind])
        )
    try:
        yield names
    finally:
        for name in names.values():
            registry._REGISTRY.pop(name, None)


@st.composite
def graphs(draw):
    """Ops in creation order: (kind, device, parent positions)."""
    count = draw(st.integers(1, 24))
    ops = []
    for i in range(count):
        kind = draw(st.sampled_from(["Source", "Fold", "Plain", "State"]))
        parents = (
            [] if kind == "Source" or not i else draw(st.lists(st.integers(0, i - 1), max_size=3))
        )
        ops.append((kind, draw(st.sampled_from(DEVICES)), sorted(set(parents))))
    return ops


@settings(max_examples=150, deadline=None)
@given(spec=graphs())
def test_every_partition_is_a_valid_order_that_keeps_state_in_order(kinds, spec):
    g = Graph()
    ops = []
    for kind, _, parents in spec:
        inputs = [ops[p].outputs[0] for p in parents]
        ops.append(g.create_op(kinds[kind], inputs, {}, name=kind.lower()))
    placement = {op.name: device for op, (_, device, _) in zip(ops, spec)}
    stages = partition(ops, placement)
    where = {op: (s, i) for s, members in enumerate(stages) for i, op in enumerate(members)}
    assert sorted(where, key=ops.index) == ops  # every op once
    for members in stages:
        assert len({placement[op.name] for op in members}) == 1  # one device each
    for op in ops:
        for parent in (t.op for t in op.inputs):
            if placement[parent.name] == placement[op.name]:
                assert where[parent] < where[op]  # earlier stage, or earlier in the stage
            else:
                assert where[parent][0] < where[op][0]  # a value crossing: an earlier stage
    run_order = [op for members in stages for op in members]
    for device in DEVICES:
        stateful = [op for op in ops if op.type == kinds["State"] and placement[op.name] == device]
        assert [op for op in run_order if op in stateful] == stateful  # program order kept
    # An op with inputs needing nothing from another device, directly or not, and no
    # state runs in its device's first stage (one without inputs floats to its users).
    remote: set = set()
    for op in ops:
        if any(placement[t.op.name] != placement[op.name] or t.op in remote for t in op.inputs):
            remote.add(op)
    first = {}
    for s, members in enumerate(stages):
        first.setdefault(placement[members[0].name], s)
    for op in ops:
        if op.type == kinds["Plain"] and op.inputs and op not in remote:
            if _stateful_above(op, kinds):
                continue
            assert where[op][0] == first[placement[op.name]]


def _stateful_above(op, kinds) -> bool:
    seen, todo = set(), [t.op for t in op.inputs]
    while todo:
        parent = todo.pop()
        if parent in seen:
            continue
        seen.add(parent)
        if parent.type == kinds["State"]:
            return True
        todo.extend(t.op for t in parent.inputs)
    return False
