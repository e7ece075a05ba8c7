"""Pruning: the ops one step must run.

Starting from the fetched tensors' ops and the target ops, walk data and control inputs
backward, stopping at fed tensors (a fed tensor's producer runs only if another of its
outputs, or a control edge, needs it). A control edge from a fed placeholder is
satisfied by the feed, as TF's feed rewrite does (``with control_dependencies([x])`` on
a placeholder ``x`` is common: ``tf.metrics.mean`` writes it). The result is ordered
topologically with creation order breaking ties, so a step's plan is the same every
time it is compiled.

``after_updates`` adds the ordering TF1's ref variables imply. TF1 fetches a ref
variable by its buffer, which it reads when the step's outputs are gathered, so
``run([train_op, global_step])`` returns the step after the increment. A read carrying
``FETCH_AFTER_UPDATES`` (the op library sets it on a ref variable's fetchable read) is
therefore ordered, when fetched, after every other op of the step that takes the same
resource handle, is no other such read and does not itself depend on the read:
``{read: [updates]}``. These edges order without pulling anything in; the compiler
sorts by them, partitions by them (so the read joins the stage of the updates) and turns
those crossing stages into stage control inputs, so both executors honour them.

``without_grouping_targets`` drops the ``NoOp`` ops a step runs only because they were
asked for (``tf.group``, the op ``minimize`` returns) and nothing else in the step waits
for: running one says no more than that its control inputs ran, which every op of the
step does before the step returns. On a cluster this matters: ``minimize`` puts its
``NoOp`` on the worker's device while the updates run on the ps, so the ps had to tell
the worker, and the worker the client, that the step was over, one more message and
process wake-up on every training step's path (TF1 pays that hop too, but its worker 0
is the client's own process).
"""

from __future__ import annotations

from collections.abc import Iterable

from ..._util.toposort import reachable, toposort
from ...framework import registry
from ...framework.graph import Operation, Tensor
from ...framework.operation import FETCH_AFTER_UPDATES


def prune(
    fetch_tensors: Iterable[Tensor], target_ops: Iterable[Operation], fed: set[Tensor]
) -> list[Operation]:
    """The ops needed to compute ``fetch_tensors`` and run ``target_ops``, in order."""
    roots = [t.op for t in fetch_tensors if t not in fed] + list(target_ops)
    needed = reachable(
        roots,
        lambda op: (
            [t.op for t in op.inputs if t not in fed]
            + [c for c in op.control_inputs if not _fed_placeholder(c, fed)]
        ),
    )
    ordered = sorted(needed, key=_creation_index)
    # Ops are created after their inputs, so creation order is already topological; only
    # a control input added to an existing op later can break that (then sort properly).
    if all(p._id < op._id for op in ordered for p in _parents(op)):
        return ordered
    return toposort(needed, _parents, _creation_index)


def without_grouping_targets(ops: list[Operation], targets: Iterable[Operation]) -> list[Operation]:
    """``ops`` (a pruned step) less its target ``NoOp`` ops that no op of the step reads
    or waits for, and less the ``NoOp`` ops only those waited for (nested groups); their
    control inputs stay and run (see the module docstring)."""
    grouping = [t for t in targets if _grouping(t)]
    if not grouping:
        return ops
    waiting: dict[Operation, int] = {}  # how many ops of the step read or wait for each
    for op in ops:
        for parent in set(_parents(op)):
            waiting[parent] = waiting.get(parent, 0) + 1
    in_step = set(ops)
    dropped: set[Operation] = set()
    pending = list(dict.fromkeys(grouping))
    while pending:
        op = pending.pop()
        if op in dropped or op not in in_step or not _grouping(op) or waiting.get(op, 0):
            continue
        dropped.add(op)
        for parent in set(_parents(op)):
            waiting[parent] -= 1
            pending.append(parent)
    return [op for op in ops if op not in dropped] if dropped else ops


def _grouping(op: Operation) -> bool:
    return registry.lookup(op.type).grouping and not op.inputs


def _fed_placeholder(op: Operation, fed: set[Tensor]) -> bool:
    return registry.lookup(op.type).feed_only and all(t in fed for t in op.outputs)


def _parents(op: Operation) -> list[Operation]:
    return [t.op for t in op.inputs] + list(op.control_inputs)


def _creation_index(op: Operation) -> int:
    return op._id


def after_updates(
    ops: list[Operation], fetch_tensors: Iterable[Tensor]
) -> dict[Operation, list[Operation]]:
    """Extra parents ``{read: [ops using its handle]}`` for fetched reads marked
    ``FETCH_AFTER_UPDATES`` (``ops`` in run order; see the module docstring)."""
    late = list(dict.fromkeys(t.op for t in fetch_tensors if t.op.attrs.get(FETCH_AFTER_UPDATES)))
    if not late:
        return {}
    # One pass over the step for all reads (fetching every variable is common): the
    # users of each handle, and which reads some op of the step consumes.
    handles = {read.inputs[0] for read in late}
    users: dict[Tensor, list[Operation]] = {h: [] for h in handles}
    consumed: set[Operation] = set()
    for op in ops:
        for parent in _parents(op):
            consumed.add(parent)
        for t in dict.fromkeys(op.inputs):
            if t in handles:
                users[t].append(op)
    others = set(late)  # other late reads of a handle are no updates of it
    extra: dict[Operation, list[Operation]] = {}
    for read in late:
        below = {read}  # the read's descendants in the step: they must still follow it
        if read in consumed:
            for op in ops:
                if any(p in below for p in _parents(op)):
                    below.add(op)
        before = [op for op in users[read.inputs[0]] if op not in below and op not in others]
        if before:
            extra[read] = before
    return extra


def ordered(
    ops: list[Operation], extra: dict[Operation, list[Operation]]
) -> tuple[list[Operation], dict[Operation, list[Operation]]]:
    """``ops`` re-sorted so each also follows its ``extra`` parents, and ``extra``; when
    they would close a cycle (reads feeding each other's updates), ``ops`` and ``{}``:
    the reads then run where their data puts them (TF1 gives such a step no order)."""
    if not extra:
        return ops, extra
    try:
        return toposort(ops, lambda op: _parents(op) + extra.get(op, []), _creation_index), extra
    except ValueError:
        return ops, {}
