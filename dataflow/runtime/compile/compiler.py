"""Compile one step signature into a ``Plan``: prune, place, partition, fuse, assign slots.

Slots are numbered in this order: feeds (in the signature's order), then every op
output that some later call or fetch reads, in op order. Outputs nobody reads get slot
-1, so the executor discards them. Attrs holding a ``SubGraph`` (control-flow bodies)
are compiled to plans of their own, placed on their op's device.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...framework import registry
from ...framework.graph import Operation, Tensor
from ...framework.subgraph import SubGraph
from .fusion import fuse
from .partition import partition
from .placement import place
from .plan import KernelCall, Plan, Stage
from .prune import after_updates, ordered, prune, without_grouping_targets


def compile_plan(
    fetches: Sequence[Tensor | Operation],
    feeds: Sequence[Tensor],
    devices: Sequence[str],
    default_device: str,
    soft_placement: bool = False,
) -> Plan:
    """Builds the plan computing ``fetches`` (tensors; ops are run for effect)."""
    fetch_tensors = [f for f in fetches if isinstance(f, Tensor)]
    targets = [f for f in fetches if isinstance(f, Operation)]
    fed = set(feeds)
    ops = without_grouping_targets(prune(fetch_tensors, targets, fed), targets)
    # Fetched ref-variable reads follow the step's updates of their variable.
    ops, late = ordered(ops, after_updates(ops, fetch_tensors))
    placement = place(ops, devices, default_device, soft_placement)
    stage_ops = partition(ops, placement, late)

    slot_of: dict[Tensor, int] = {}
    names: list[str] = []
    specs: list[tuple[Any, Any]] = []

    def new_slot(t: Tensor) -> int:
        slot_of[t] = len(names)
        names.append(t.name)
        specs.append((t.dtype, t.shape))
        return slot_of[t]

    for t in feeds:
        new_slot(t)
    stage_calls = fuse(stage_ops, ops, set(fetch_tensors))
    read: set[Tensor] = set(fetch_tensors)
    for calls in stage_calls:
        for planned in calls:
            read.update(planned.inputs)

    stage_of_slot: dict[int, int] = {}
    stages: list[Stage] = []
    for index, calls in enumerate(stage_calls):
        kernel_calls = []
        for planned in calls:
            op = planned.op
            outs = []
            for t in op.outputs:
                if t in read and t not in fed:
                    slot = new_slot(t)
                    stage_of_slot[slot] = index
                    outs.append(slot)
                else:
                    outs.append(-1)
            kernel_calls.append(
                KernelCall(
                    op.name,
                    planned.op_type,
                    _compile_attrs(planned.attrs, placement[op.name], outs),
                    tuple(slot_of[t] for t in planned.inputs),
                    tuple(outs),
                    op.traceback,
                )
            )
        stages.append(Stage(index, placement[calls[0].op.name], tuple(kernel_calls), (), ()))

    # Stage inputs/outputs: slots crossing a stage boundary (or fetched / fed).
    fetch_slots = tuple(slot_of[f] if isinstance(f, Tensor) else -1 for f in fetches)
    needed_out: dict[int, set[int]] = {s.index: set() for s in stages}
    stage_inputs: dict[int, list[int]] = {s.index: [] for s in stages}
    for stage in stages:
        seen: set[int] = set()
        produced = {o for c in stage.calls for o in c.outputs if o >= 0}
        for call in stage.calls:
            for slot in call.inputs:
                if slot not in produced and slot not in seen:
                    seen.add(slot)
                    stage_inputs[stage.index].append(slot)
                    src = stage_of_slot.get(slot)
                    if src is not None:
                        needed_out[src].add(slot)
    for slot in fetch_slots:
        if slot >= 0 and slot in stage_of_slot:
            needed_out[stage_of_slot[slot]].add(slot)
    stage_of_op = {op: i for i, members in enumerate(stage_ops) for op in members}
    after: dict[int, set[int]] = {s.index: set() for s in stages}
    for op in ops:
        for c in (*op.control_inputs, *late.get(op, ())):
            src = stage_of_op.get(c)
            if src is not None and src != stage_of_op[op]:
                after[stage_of_op[op]].add(src)
    final = tuple(
        Stage(
            s.index,
            s.device,
            s.calls,
            tuple(stage_inputs[s.index]),
            tuple(sorted(needed_out[s.index])),
            _main_op(s.calls),
            tuple(sorted(after[s.index])),
        )
        for s in stages
    )
    resources: dict[str, list[str]] = {}
    for op in ops:
        if registry.lookup(op.type).creates_resource:
            resources.setdefault(placement[op.name], []).append(op.attrs["shared_name"])
    return Plan(
        final,
        tuple(range(len(feeds))),
        fetch_slots,
        len(names),
        tuple(names),
        tuple(specs),
        placement,
        {k: tuple(v) for k, v in resources.items()},
    )


def compile_subgraph(sub: SubGraph, device: str) -> Plan:
    """A control-flow body as a one-device plan: feeds are its inputs and captures."""
    fetches: list[Tensor | Operation] = list(sub.outputs)
    # Stateful ops in the body that no output depends on still run (e.g. an assign in
    # a loop body), as TF2's functions do for stateful ops.
    for op in sub.graph.get_operations():
        if registry.lookup(op.type).effectful:
            fetches.append(op)
    return compile_plan(fetches, sub.all_inputs, [device], device, soft_placement=True)


def _compile_attrs(attrs: dict[str, Any], device: str, outs: Sequence[int] = ()) -> dict[str, Any]:
    """Compiles SubGraph attrs; such ops also learn which of their outputs the plan reads
    (``_outputs_read``), so a loop can skip recording history nobody differentiates."""
    if not any(isinstance(v, SubGraph) for v in attrs.values()):
        return attrs
    compiled = {
        k: compile_subgraph(v, device) if isinstance(v, SubGraph) else v for k, v in attrs.items()
    }
    compiled["_outputs_read"] = tuple(o >= 0 for o in outs)
    return compiled


def _main_op(calls: Sequence[KernelCall]) -> str:
    """What a stage is named after: its last non-trivial call; but a stage of several
    independent calls of one type (the stage reading every variable on a ps) is named
    after the type and their number, ``"ReadVariableOp_x5"``: no one of them stands for
    the others."""
    main = [c for c in calls if not registry.lookup(c.op_type).plumbing]
    if len(main) > 1 and len({c.op_type for c in main}) == 1:
        derived: set[int] = set()  # slots computed from a main call's outputs
        chained = False
        mains = {id(c) for c in main}
        for c in calls:
            reads = any(i in derived for i in c.inputs)
            chained = chained or (reads and id(c) in mains)
            if reads or id(c) in mains:
                derived.update(c.outputs)
        if not chained:
            return f"{main[0].op_type}_x{len(main)}"
    if main:
        return main[-1].op_name
    return calls[-1].op_name if calls else ""
