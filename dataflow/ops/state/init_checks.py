"""``tf.assert_variables_initialized``: a tensor that can only be computed when every
variable of a list holds a value.

As in TF1 it is the run-time rank (int32) of each variable, stacked (a scalar for one
variable), each computed beside its variable: reading an uninitialized variable fails
the step with ``FailedPreconditionError`` naming it. The ranks are ``Rank`` ops on the
variables' values, never constants, even when the shapes are static.
"""

from __future__ import annotations

from typing import Any

from ...framework.graph import Tensor, get_default_graph
from ..array import stack
from ..build import apply_op
from .variables import global_variables, local_variables


def assert_variables_initialized(var_list: list[Any] | None = None) -> Tensor | None:
    """An int32 tensor (the variables' ranks) whose evaluation fails with
    ``FailedPreconditionError`` when a variable of ``var_list`` (default: the global
    and local variables) is uninitialized; None when there are no variables."""
    if var_list is None:
        var_list = global_variables() + local_variables()
    if not var_list:
        return None
    graph = get_default_graph()
    ranks = []
    for var in var_list:
        with graph.colocate_with(var.op):
            ranks.append(apply_op("Rank", [var.value()]))
    if len(ranks) == 1:
        return ranks[0]
    return stack(ranks)
