"""Cut a device's stage where another device waits for one of its values.

The partitioner makes *maximal* one-device stages, which is right for a cluster (a
stage is a Dask task) but hides parallelism from the embedded runtime's concurrent
executor (``execute/inter_op.py``), which starts a stage when the stages it reads from have
*finished*. Example, with ``x`` on ``/cpu:0``::

    stage 0 @cpu:0: x = Const; a = MatMul(x, x)        stage 1 @cpu:1: b = MatMul(x + 1, x)

Stage 1 needs only ``x``, but waits for stage 0's large ``a`` too. ``split_for_overlap``
cuts stage 0 after what other devices need, in the order they become available::

    stage 0 @cpu:0: x = Const    stage 1 @cpu:0: a = MatMul(x, x)    stage 2 @cpu:1: ...

and the two matmuls can run at the same time.

**How.** For each stage, its *sends* are the output slots read by stages of other
devices. In the order their producing calls come, each send takes the calls of the
stage it needs (its ancestors through the stage's slots) that no earlier send took, as
one new stage; the calls nobody sent for form a last one. Each new stage keeps the
calls' original order, so it is still a valid run order.

**What is kept.** Calls carry no control edges, only slots, and some orders matter
beyond slots: a stateful call (a variable update, a queue op, a ``py_func``) is made to
depend on every call before it in its stage, and every call on every stateful call
before it. So only stateless calls are reordered relative to each other, which no
program can observe; state on one device is touched in program order, as before.

The new plan has the same slots, feeds and fetches; control edges between stages map
to the last piece of the stage they named.
"""

from __future__ import annotations

import dataclasses

from ...framework import registry
from .plan import KernelCall, Plan, Stage


def split_for_overlap(plan: Plan) -> Plan:
    """``plan`` with stages cut after the values other devices read (module doc)."""
    readers: dict[int, set[str]] = {}
    for stage in plan.stages:
        for slot in stage.inputs:
            readers.setdefault(slot, set()).add(stage.device)
    pieces: list[tuple[Stage, list[tuple[KernelCall, ...]]]] = []
    for stage in plan.stages:
        sends = [s for s in stage.outputs if readers.get(s, set()) - {stage.device}]
        pieces.append((stage, _pieces(stage.calls, sends) if sends else [stage.calls]))
    if all(len(p) == 1 for _, p in pieces):
        return plan
    fetched = {slot for slot in plan.fetch_slots if slot >= 0}
    read = {slot for stage in plan.stages for slot in stage.inputs} | fetched
    last_piece: dict[int, int] = {}
    count = 0
    for stage, parts in pieces:
        count += len(parts)
        last_piece[stage.index] = count - 1
    stages: list[Stage] = []
    for stage, parts in pieces:
        for calls in parts:
            produced = {o for c in calls for o in c.outputs if o >= 0}
            inputs = list(dict.fromkeys(i for c in calls for i in c.inputs if i not in produced))
            stages.append(
                Stage(
                    len(stages),
                    stage.device,
                    calls,
                    tuple(inputs),
                    (),
                    stage.main_op,
                    tuple(sorted({last_piece[j] for j in stage.control_inputs})),
                )
            )
    # A piece's outputs: its slots that a later piece, another stage or a fetch reads.
    later_reads = {slot for s in stages for slot in s.inputs} | read
    stages = [
        dataclasses.replace(
            s,
            outputs=tuple(sorted({o for c in s.calls for o in c.outputs if o in later_reads})),
        )
        for s in stages
    ]
    return dataclasses.replace(plan, stages=tuple(stages))


def _pieces(calls: tuple[KernelCall, ...], sends: list[int]) -> list[tuple[KernelCall, ...]]:
    """The calls of one stage grouped as the module docstring says."""
    producer = {o: i for i, c in enumerate(calls) for o in c.outputs if o >= 0}
    stateful = [registry.lookup(c.op_type).stateful for c in calls]
    before: list[list[int]] = []
    last_stateful = -1
    for i, call in enumerate(calls):
        deps = [producer[s] for s in call.inputs if s in producer]
        if last_stateful >= 0:
            deps.append(last_stateful)
        before.append(deps)
        if stateful[i]:
            last_stateful = i
    piece_of = [-1] * len(calls)
    count = 0
    swept = -1  # every call up to here has been pushed (a stateful call needs them all)
    for slot in sorted(sends, key=producer.__getitem__):
        stack = [producer[slot]]
        taken = False
        while stack:
            i = stack.pop()
            if piece_of[i] >= 0:
                continue
            piece_of[i] = count
            taken = True
            stack.extend(j for j in before[i] if piece_of[j] < 0)
            if stateful[i] and i > swept:
                stack.extend(j for j in range(swept + 1, i) if piece_of[j] < 0)
                swept = i
        count += taken
    groups: list[list[KernelCall]] = [[] for _ in range(count + 1)]
    for i, call in enumerate(calls):
        groups[piece_of[i] if piece_of[i] >= 0 else count].append(call)
    return [tuple(g) for g in groups if g]
