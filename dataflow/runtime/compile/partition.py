"""Partitioning: group a placed, ordered op list into stages, one device each.

A stage is a set of ops on one device that runs as one function, after the stages whose
values it needs. Each op gets a *level*: the number of device changes on the longest
path of inputs leading to it. An op's level is the highest of its parents' levels, plus
one for a parent on another device; the stage of an op is its ``(level, device)``, and
stages run in order of level (then of the devices' first ops). A value that crosses
devices therefore always goes to a higher level, so the stages form a valid run order.

Example: x@ps -> a@w -> b@ps: levels 0, 1, 2, so the stages are [x], [a], [b].

**Work that needs no other device runs first.** An op is at the lowest level its inputs
allow, as TF1's executor runs an op once its inputs are there: on a worker, work that
needs nothing from the ps (reading and transforming the worker's own data) runs in a
stage of its own before the stage that waits for the ps's values, while the worker
would otherwise sit waiting for them, and its fetched results can leave for the client
while the rest of the step still runs (``dask/worker_steps.py``). (Until 2026-12-07 an
op joined the newest stage of its device, so on a worker a ``data * 2`` created after a
product with a ps variable waited for that variable with it.)

**Order kept on each device.** Ops with state (``OpDef.stateful``: variable reads and
updates, queues, random streams) keep their program order on their device: such an op
is at least at the level of the device's previous one. Stateless ops may run earlier
than ops created before them; they see state only through the ops with state they read.

**Constants float.** An op without inputs that has no state of its own, or only names
a resource (``Const``, ``VarHandleOp``), and a foldable op computed from such ops alone
on its device (a gradient's seed, ``lam * ones``: the executor folds it when it
compiles the stage) would sit at level 0, a stage of their own that computes nothing
at run time. They take instead the lowest level of their consumers on their device
(one less for a consumer on another device), so a constant made for an update joins
the update's stage. (A product of constants is not folded, so it runs as early as it
can, as any op with inputs.)

``extra`` holds ordering-only parents (``prune.after_updates``), counted as inputs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ...framework import registry
from ...framework.graph import Operation


def partition(
    ops: Sequence[Operation],
    placement: dict[str, str],
    extra: Mapping[Operation, Sequence[Operation]] | None = None,
) -> list[list[Operation]]:
    """Returns stages (lists of ops in order); stage order is a valid run order.

    ``extra`` holds ordering-only parents (``prune.after_updates``), counted as inputs.
    """
    parents = {op: _parents(op, extra) for op in ops}
    floating: set[Operation] = set()
    for op in ops:  # (in order: an op's parents are decided before it)
        device = placement[op.name]
        if _floats(op, bool(parents[op])) and all(
            p in floating and placement[p.name] == device for p in parents[op]
        ):
            floating.add(op)
    level: dict[Operation, int] = {}
    last_stateful: dict[str, int] = {}  # device -> level of its latest op with state
    for op in ops:
        if op in floating:
            continue
        device = placement[op.name]
        at = 0
        for parent in parents[op]:
            if parent in floating:  # (its own level comes later: 0 on its device)
                below = 0
            elif parent in level:
                below = level[parent]
            else:
                continue  # (not in the step: fed, or pruned)
            at = max(at, below if placement[parent.name] == device else below + 1)
        if registry.lookup(op.type).stateful:
            at = max(at, last_stateful.get(device, 0))
            last_stateful[device] = at
        level[op] = at
    if floating:
        _settle_floating(ops, floating, parents, placement, level)

    stages: dict[tuple[int, str], list[Operation]] = {}
    first_seen: dict[str, int] = {}
    for op in ops:
        device = placement[op.name]
        first_seen.setdefault(device, len(first_seen))
        stages.setdefault((level[op], device), []).append(op)
    order = sorted(stages, key=lambda key: (key[0], first_seen[key[1]]))
    return [stages[key] for key in order]


def _settle_floating(
    ops: Sequence[Operation],
    floating: set[Operation],
    parents: Mapping[Operation, list[Operation]],
    placement: dict[str, str],
    level: dict[Operation, int],
) -> None:
    """Gives each floating op the lowest level its consumers allow (module docstring):
    the lowest consumer level on its device, one less across devices. Consumers come
    after their inputs in ``ops``, so walking it backwards settles every consumer of an
    op (a floating one too) before the op."""
    lowest: dict[Operation, int] = {}
    for op in reversed(ops):
        if op in floating:
            level[op] = max(0, lowest.get(op, 0))
        for parent in parents[op]:
            if parent in floating:
                allowed = level[op] - (placement[parent.name] != placement[op.name])
                lowest[parent] = min(lowest.get(parent, allowed), allowed)


def _parents(op: Operation, extra: Mapping[Operation, Sequence[Operation]] | None) -> list:
    found = [t.op for t in op.inputs] + list(op.control_inputs)
    if extra:
        found += extra.get(op, ())
    return found


def _floats(op: Operation, has_parents: bool) -> bool:
    """Whether ``op`` may float, given that its parents do (module docstring)."""
    opdef = registry.lookup(op.type)
    if has_parents:  # (folded when the stage is compiled: free wherever it sits)
        return opdef.foldable and not opdef.stateful
    return not opdef.stateful or opdef.creates_resource
