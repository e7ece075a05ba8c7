"""Producer-consumer fusion: the compile step that merges pairs of kernel calls.

Some pairs of ops cost less as one kernel. ``reduce_mean(square(x))`` (a squared-error
loss) and ``reduce_sum(square(w))`` (an L2 penalty) are one BLAS dot product instead of
a squaring pass, a temporary and a reduction (on a [10000, 1] float32 residual: 1 us
against 5). Op families declare such pairs with ``registry.register_fusion``; this pass
finds them in each stage of a plan, as XLA and Grappler fuse producers into consumers.

A producer is fused into its consumer when

* it is the consumer's first input, and the consumer is its only reader: no other op
  in the plan reads that output, nothing fetches it, and no op has a control
  dependency on the producer;
* both are in the same stage (same device), and the producer is not stateful;
* the two ops do not give one attr name different values.

Fusions chain: a producer already fused into its own producer is that fused call, and
the chain goes on when the fused type has a fusion with the consumer
(``Relu(BiasAdd(Conv2D(x, f), b))`` becomes ``Conv2DBiasAdd`` then
``Conv2DBiasAddRelu``).

The fused call takes the consumer's place and name (errors name the consumer's op), the
producer's inputs followed by the consumer's other inputs, the attrs of both (a pooling
gradient fused with the ReLU gradient after it needs the pool's window) and the
consumer's outputs; the producer's call is
dropped, so its output never gets a slot. Graphs are not touched: fusion exists only
in compiled plans.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ...framework import registry
from ...framework.graph import Operation, Tensor


@dataclass(frozen=True)
class Call:
    """One kernel call of a stage before slots are assigned: the op it is named after
    (whose outputs it has), the op type to run, the input tensors and the attrs."""

    op: Operation
    op_type: str
    inputs: tuple[Tensor, ...]
    attrs: dict[str, Any]


def fuse(
    stage_ops: Sequence[Sequence[Operation]], ops: Iterable[Operation], fetched: set[Tensor]
) -> list[list[Call]]:
    """Per stage, its calls in order, with fusible pairs merged."""
    ops = list(ops)
    uses = Counter(t for op in ops for t in op.inputs)
    controlling = {c for op in ops for c in op.control_inputs}
    stages = []
    for members in stage_ops:
        in_stage = set(members)
        fused: dict[Operation, Call] = {}  # by consumer
        absorbed: set[Operation] = set()
        for op in members:
            if not op.inputs:
                continue
            first = op.inputs[0]
            producer = first.op
            # A producer already fused into its own producer is that fused call: the
            # chain continues if the fused type has a fusion with this consumer.
            made = fused.get(producer)
            fused_type = registry.fusion_of(made.op_type if made else producer.type, op.type)
            if fused_type is None:
                continue
            if made is None:
                made = Call(producer, producer.type, tuple(producer.inputs), producer.attrs)
            if (
                producer not in in_stage
                or _conflicting(made.attrs, op.attrs)
                or uses[first] != 1
                or first in fetched
                or producer in controlling
                or len(producer.outputs) != 1
                or registry.lookup(producer.type).stateful
            ):
                continue
            attrs = {**made.attrs, **op.attrs}
            fused[op] = Call(op, fused_type, (*made.inputs, *op.inputs[1:]), attrs)
            fused.pop(producer, None)
            absorbed.add(producer)
        stages.append(
            [
                fused.get(op) or Call(op, op.type, tuple(op.inputs), op.attrs)
                for op in members
                if op not in absorbed
            ]
        )
    return stages


def _conflicting(a: dict, b: dict) -> bool:
    """Whether two ops' attrs give one name different values (a convolution in NCHW
    and a bias added as NHWC): a fused kernel gets one value per name, so such a pair
    runs unfused."""
    return any(k in b and not _same(v, b[k]) for k, v in a.items())


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except (TypeError, ValueError):  # arrays and other values without a plain ``==``
        return a is b
