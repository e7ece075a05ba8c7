"""TF1's top-level names for stateful things (issue 32): ``tf.PriorityQueue``,
``tf.SparseConditionalAccumulator``, ``tf.ConditionalAccumulatorBase``, the session
tensor functions (``tf.get_session_handle``, ...); explicit
re-exports only, taken whole by ``dataflow/__init__.py``."""

from ..ops.queue.accumulator import ConditionalAccumulatorBase as ConditionalAccumulatorBase
from ..ops.queue.priority import PriorityQueue as PriorityQueue
from ..ops.queue.sparse_accumulator import (
    SparseConditionalAccumulator as SparseConditionalAccumulator,
)
from ..ops.state.session_tensors import delete_session_tensor as delete_session_tensor
from ..ops.state.session_tensors import get_session_handle as get_session_handle
from ..ops.state.session_tensors import get_session_tensor as get_session_tensor

__all__ = [
    "ConditionalAccumulatorBase",
    "PriorityQueue",
    "SparseConditionalAccumulator",
    "delete_session_tensor",
    "get_session_handle",
    "get_session_tensor",
]
