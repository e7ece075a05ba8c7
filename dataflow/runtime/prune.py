"""Pruning: the ops one step must run.

Starting from the fetched tensors' ops and the target ops, walk data and control inputs
backward, stopping at fed tensors (a fed tensor's producer runs only if another of its
outputs, or a control edge, needs it). A control edge from a fed placeholder is
satisfied by the feed, as TF's feed rewrite does (``with control_dependencies([x])`` on
a placeholder ``x`` is common: ``tf.metrics.mean`` writes it). The result is ordered
topologically with creation order breaking ties, so a step's plan is the same every
time it is compiled.
"""

from __future__ import annotations

from collections.abc import Iterable

from .._util.toposort import reachable, toposort
from ..framework import registry
from ..framework.graph import Operation, Tensor


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


def _fed_placeholder(op: Operation, fed: set[Tensor]) -> bool:
    return registry.lookup(op.type).feed_only and all(t in fed for t in op.outputs)


def _parents(op: Operation) -> list[Operation]:
    return [t.op for t in op.inputs] + list(op.control_inputs)


def _creation_index(op: Operation) -> int:
    return op._id
