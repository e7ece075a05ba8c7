"""TF1's top-level names for stateful things (issue 32): ``tf.PriorityQueue``,
``tf.SparseConditionalAccumulator``, ``tf.ConditionalAccumulatorBase``, the session
tensor functions (``tf.get_session_handle``, ...), ``tf.variable_creator_scope`` and
``tf.create_partitioned_variables``; explicit re-exports only, taken whole by
``dataflow/__init__.py``."""

from ..ops.queue.accumulator import ConditionalAccumulatorBase as ConditionalAccumulatorBase
from ..ops.queue.priority import PriorityQueue as PriorityQueue
from ..ops.queue.sparse_accumulator import (
    SparseConditionalAccumulator as SparseConditionalAccumulator,
)
from ..ops.state.create_partitioned import (
    create_partitioned_variables as create_partitioned_variables,
)
from ..ops.state.creator_scope import variable_creator_scope as variable_creator_scope
from ..ops.state.session_tensors import delete_session_tensor as delete_session_tensor
from ..ops.state.session_tensors import get_session_handle as get_session_handle
from ..ops.state.session_tensors import get_session_tensor as get_session_tensor

__all__ = [
    "ConditionalAccumulatorBase",
    "PriorityQueue",
    "SparseConditionalAccumulator",
    "create_partitioned_variables",
    "delete_session_tensor",
    "get_session_handle",
    "get_session_tensor",
    "variable_creator_scope",
]
