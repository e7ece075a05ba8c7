"""The runtime alone, with toy ops registered here (as dask tests its schedulers with
``inc`` and ``add``): prune, place, partition, compile and execute over graphs of toy
ops only. The runtime learns about them through their registry records alone, as it
does about the op library's.

The toy records: ``ToyConst`` (a fixed value, foldable), ``ToyInc`` and ``ToyAdd``
(float64 scalars), ``ToyForward`` (plumbing: forwards its input), ``ToyCounter``
(stateful: counts its own runs) and ``ToyFail`` (a kernel
that raises).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from dataflow.framework import dtypes, errors, registry
from dataflow.framework.graph import Graph, Operation, Tensor
from dataflow.framework.tensor_shape import TensorShape
from dataflow.runtime.compile.compiler import compile_plan
from dataflow.runtime.compile.partition import partition
from dataflow.runtime.compile.placement import place
from dataflow.runtime.compile.prune import prune
from dataflow.runtime.execute.context import DeviceContext
from dataflow.runtime.execute.executor import EmbeddedPlan
from dataflow.runtime.resources import ResourceStore

CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"
PS = "/job:ps/replica:0/task:0/device:CPU:0"
WORKER = "/job:worker/replica:0/task:0/device:CPU:0"
SCALAR = (dtypes.float64, TensorShape([]))
_suffix = itertools.count()


def _scalar_rule(op: Operation) -> list:
    for t in op.inputs:
        if t.dtype != dtypes.float64:
            raise TypeError(f"{op.type} takes float64 scalars, got {t.dtype.name}")
    return [SCALAR]


@pytest.fixture(scope="module")
def toy() -> Iterator[dict[str, str]]:
    """Registers the toy op types under names unique to this run; removes them after."""
    n = next(_suffix)
    names = {k: f"Toy{k}{n}" for k in ("Const", "Inc", "Add", "Forward", "Counter", "Fail")}

    def counter_kernel(ctx: Any, attrs: dict) -> Any:
        runs = [0]  # per op: the factory runs once for each op of a plan

        def run() -> np.ndarray:
            runs[0] += 1
            return np.float64(runs[0])

        return run

    def fail_kernel(ctx: Any, attrs: dict) -> Any:
        def run(x: Any) -> Any:
            raise ValueError(f"toy failure on {x}")

        return run

    records = [
        registry.OpDef(
            names["Const"],
            lambda op: [(op.attrs.get("dtype", dtypes.float64), TensorShape([]))],
            lambda ctx, attrs: (
                lambda: np.asarray(
                    attrs["value"], attrs.get("dtype", dtypes.float64).as_numpy_dtype
                )
            ),
            foldable=True,
        ),
        registry.OpDef(names["Inc"], _scalar_rule, lambda ctx, attrs: lambda x: x + 1),
        registry.OpDef(names["Add"], _scalar_rule, lambda ctx, attrs: lambda x, y: x + y),
        registry.OpDef(
            names["Forward"], _scalar_rule, lambda ctx, attrs: lambda x: x, plumbing=True
        ),
        registry.OpDef(names["Counter"], lambda op: [SCALAR], counter_kernel, stateful=True),
        registry.OpDef(names["Fail"], _scalar_rule, fail_kernel),
    ]
    for record in records:
        registry.register(record)
    try:
        yield names
    finally:
        for name in names.values():
            registry._REGISTRY.pop(name, None)


def _op(g: Graph, kind: str, toy: dict, inputs: list[Tensor] = (), **attrs: Any) -> Tensor:
    return g.create_op(toy[kind], list(inputs), attrs, name=kind.lower()).outputs[0]


def _run(plan: Any, feeds: list[Any] = ()) -> list[Any]:
    devices = {s.device for s in plan.stages}
    contexts = {d: DeviceContext(d, np, ResourceStore(d), debug=True) for d in devices}
    return EmbeddedPlan(plan, contexts, debug=True).run(list(feeds))


def test_prune_keeps_what_the_fetches_need_in_creation_order(toy):
    g = Graph()
    a = _op(g, "Const", toy, value=1.0)
    b = _op(g, "Inc", toy, [a])
    unrelated = _op(g, "Inc", toy, [a])
    c = _op(g, "Add", toy, [b, a])
    ops = prune([c], [], set())
    assert ops == [a.op, b.op, c.op]
    assert unrelated.op not in ops
    # A fed tensor cuts its producers off.
    assert prune([c], [], {b}) == [a.op, c.op]
    # A target op runs for effect; its control inputs come along.
    with g.control_dependencies([unrelated.op]):
        marker = _op(g, "Inc", toy, [a])
    assert prune([], [marker.op], set()) == [a.op, unrelated.op, marker.op]


def test_place_honours_device_requests_and_the_default(toy):
    g = Graph()
    with g.device("/job:ps/task:0"):
        a = _op(g, "Const", toy, value=1.0)
    b = _op(g, "Inc", toy, [a])
    placement = place([a.op, b.op], [PS, WORKER], WORKER)
    assert placement == {a.op.name: PS, b.op.name: WORKER}


def test_place_refuses_a_device_nobody_has_unless_soft(toy):
    g = Graph()
    with g.device("/job:ps/task:3"):
        a = _op(g, "Const", toy, value=1.0)
    with pytest.raises(errors.InvalidArgumentError, match=a.op.name):
        place([a.op], [PS, WORKER], WORKER)
    assert place([a.op], [PS, WORKER], WORKER, soft_placement=True)[a.op.name] in (PS, WORKER)


def test_partition_splits_stages_by_device_in_a_valid_order(toy):
    g = Graph()
    with g.device(PS):
        a = _op(g, "Const", toy, value=1.0)
    with g.device(WORKER):
        b = _op(g, "Inc", toy, [a])
    with g.device(PS):
        c = _op(g, "Add", toy, [b, a])
    ops = [a.op, b.op, c.op]
    stages = partition(ops, place(ops, [PS, WORKER], WORKER))
    # ps -> worker -> ps: the last op cannot join the first stage (its input comes
    # from a later stage), so there are three stages, each on one device.
    assert stages == [[a.op], [b.op], [c.op]]


def test_compiled_plan_slots_and_stage_names(toy):
    g = Graph()
    x = _op(g, "Const", toy, value=2.0)
    y = _op(g, "Inc", toy, [x])
    z = _op(g, "Forward", toy, [y])
    plan = compile_plan([z], [], [CPU0], CPU0)
    assert len(plan.stages) == 1
    (stage,) = plan.stages
    assert [c.op_type for c in stage.calls] == [toy["Const"], toy["Inc"], toy["Forward"]]
    # The stage is named after its last call that is not plumbing.
    assert stage.main_op == y.op.name
    assert plan.slot_names[plan.fetch_slots[0]] == z.name
    assert plan.slot_specs[plan.fetch_slots[0]] == SCALAR


def test_execute_with_feeds_across_devices(toy):
    g = Graph()
    with g.device(PS):
        a = _op(g, "Const", toy, value=1.0)
    with g.device(WORKER):
        b = _op(g, "Inc", toy, [a])
    with g.device(PS):
        c = _op(g, "Add", toy, [b, a])
    plan = compile_plan([c, b], [], [PS, WORKER], WORKER)
    assert [s.device for s in plan.stages] == [PS, WORKER, PS]
    assert _run(plan) == [3.0, 2.0]
    # Feeding b replaces its producer: c = fed + a.
    fed = compile_plan([c], [b], [PS, WORKER], WORKER)
    assert _run(fed, [np.float64(10.0)]) == [11.0]


def test_stateful_ops_run_every_step_and_are_not_merged(toy):
    g = Graph()
    first = _op(g, "Counter", toy)
    second = g.create_op(toy["Counter"], [], {}, name="counter_b").outputs[0]
    plan = compile_plan([first, second], [], [CPU0], CPU0)
    assert len(plan.stages[0].calls) == 2
    contexts = {CPU0: DeviceContext(CPU0, np, ResourceStore(CPU0), debug=True)}
    runner = EmbeddedPlan(plan, contexts, debug=True)
    assert runner.run([]) == [1.0, 1.0]
    assert runner.run([]) == [2.0, 2.0]


def test_kernel_errors_name_the_op_and_its_type(toy):
    g = Graph()
    a = _op(g, "Const", toy, value=1.0)
    bad = _op(g, "Fail", toy, [a])
    with pytest.raises(errors.InvalidArgumentError) as info:
        _run(compile_plan([bad], [], [CPU0], CPU0))
    assert f"node {bad.op.name} (type {toy['Fail']})" in str(info.value)
    assert "toy failure on 1.0" in str(info.value)


def test_shape_rules_run_at_build_time(toy):
    g = Graph()
    ints = _op(g, "Const", toy, value=1, dtype=dtypes.int32)
    assert ints.dtype == dtypes.int32
    with pytest.raises(TypeError, match="takes float64 scalars, got int32") as info:
        g.create_op(toy["Inc"], [ints], {}, name="bad_inc")
    assert "bad_inc" in str(info.value)
    assert "bad_inc" not in {op.name for op in g.get_operations()}
