"""TF1's top-level names for stateful things (issue 32): ``tf.PriorityQueue``,
``tf.SparseConditionalAccumulator``, ``tf.ConditionalAccumulatorBase``; explicit
re-exports only, taken whole by ``dataflow/__init__.py``."""

from ..ops.queue.accumulator import ConditionalAccumulatorBase as ConditionalAccumulatorBase
from ..ops.queue.priority import PriorityQueue as PriorityQueue
from ..ops.queue.sparse_accumulator import (
    SparseConditionalAccumulator as SparseConditionalAccumulator,
)

__all__ = [
    "ConditionalAccumulatorBase",
    "PriorityQueue",
    "SparseConditionalAccumulator",
]
