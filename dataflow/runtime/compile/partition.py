"""Partitioning: group a placed, ordered op list into stages, one device each.

A stage is a maximal set of ops on one device whose contraction keeps the stage graph
acyclic. The greedy rule used: walk ops in topological order and put each op in the
newest stage of its device whose every op it may follow, i.e. unless some op of an
*intervening* stage (of another device, created after that stage) is an ancestor of
this op. Equivalently each op gets ``level``: the smallest stage index on its device
that is not below any input's stage across a device change.

Example: x@ps -> a@w -> b@ps: b cannot join x's stage (a, on w, sits between them),
so the stages are [x], [a], [b] and the stage graph stays acyclic.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ...framework.graph import Operation


def partition(
    ops: Sequence[Operation],
    placement: dict[str, str],
    extra: Mapping[Operation, Sequence[Operation]] | None = None,
) -> list[list[Operation]]:
    """Returns stages (lists of ops in order); stage order is a valid run order.

    ``extra`` holds ordering-only parents (``prune.after_updates``), counted as inputs.
    """
    stage_of: dict[Operation, int] = {}
    stages: list[list[Operation]] = []
    stage_device: list[str] = []
    # Newest stage per device: an op may join it when no input comes from a stage
    # created after it (which would form a cycle through another device).
    newest: dict[str, int] = {}
    for op in ops:
        device = placement[op.name]
        floor = -1
        parents = [t.op for t in op.inputs] + list(op.control_inputs)
        if extra:
            parents += extra.get(op, ())
        for parent in parents:
            s = stage_of.get(parent)
            if s is not None and s > floor:
                floor = s
        candidate = newest.get(device)
        if candidate is not None and candidate >= floor_for(floor, stage_device, device):
            stage_of[op] = candidate
            stages[candidate].append(op)
            continue
        stages.append([op])
        stage_device.append(device)
        index = len(stages) - 1
        stage_of[op] = index
        newest[device] = index
    return stages


def floor_for(floor: int, stage_device: list[str], device: str) -> int:
    """The lowest stage index on ``device`` that may hold an op whose latest input
    stage is ``floor``: that input stage itself if it is on ``device``, else any
    stage created after it."""
    if floor < 0:
        return -1
    return floor if stage_device[floor] == device else floor + 1
