"""Which ``map`` functions may run on a whole batch at once.

``map(f).batch(n)`` computes ``f`` once per element and then stacks; when ``f`` is made
only of elementwise ops (``math.arith``'s unary and binary ops, casts, identities) whose
element-derived inputs all have one rank, with scalar constants and scalar captured
values, stacking first and running ``f`` once on the batch gives the same arrays (the
ops broadcast the batch dimension through). ``f`` must also be deterministic (no random
or stateful op), so it commutes with ``shuffle`` too. This is the idea of tf.data's
``map_vectorization``/``map_and_batch`` rewrites, decided here once per traced function
by ``vectorizable``; ``pipeline.Batch`` applies it.
"""

from __future__ import annotations

from typing import Any

from ...framework import registry
from ...framework.subgraph import SubGraph
from ...framework.tensor_util import constant_value
from ..math.arith import BINARY_ELEMENTWISE, UNARY_ELEMENTWISE

_PASS_THROUGH = frozenset({"Cast", "Identity"})


def vectorizable(sub: SubGraph, num_args: int) -> bool:
    """Whether ``sub`` (a traced map function of ``num_args`` element components) may
    run on a batch instead of an element (see the module docstring)."""
    # The rank of each element-derived tensor; constants and captures are absent.
    rank: dict[Any, int | None] = {t: t.shape.rank for t in sub.inputs[:num_args]}
    if any(r is None for r in rank.values()):
        return False
    captured = sub.all_inputs[num_args:]
    if any(t.shape.rank != 0 for t in captured):
        return False
    for op in sub.graph.get_operations():
        if op.outputs and (op.outputs[0] in rank or op.outputs[0] in captured):
            continue  # an argument or captured placeholder
        if registry.lookup(op.type).stateful:
            return False
        if op.type == "Const":
            value = constant_value(op.outputs[0])
            if value is None or getattr(value, "ndim", 0) != 0:
                return False
            continue
        if op.type not in BINARY_ELEMENTWISE | UNARY_ELEMENTWISE | _PASS_THROUGH:
            return False
        ranks = {rank[t] for t in op.inputs if t in rank}
        if len(ranks) > 1:
            return False
        if ranks:
            rank[op.outputs[0]] = ranks.pop()
    return all(t in rank for t in sub.outputs)
