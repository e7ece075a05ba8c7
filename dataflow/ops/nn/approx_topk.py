"""``tf.nn.approx_max_k`` and ``approx_min_k`` as exact top-k. TF documents only that
the result's recall is at least ``recall_target``; the exact ``k`` largest (smallest)
entries along ``reduction_dimension`` have recall 1, so the exact ``TopKV2`` (after
moving the dimension last, and back) is a valid answer, with values sorted as
``aggregate_to_topk=True`` sorts them and ties taken in index order.

Example: ``approx_max_k([[3., 1., 2.]], 2)`` is ``([[3., 2.]], [[0, 2]])``.
"""

from __future__ import annotations

from typing import Any

from ...framework.graph import convert_to_tensor
from ...framework.scopes import name_scope
from .. import array as array_ops
from .. import math as math_ops


def _approx_top_k(
    x: Any, k: int, dim: int, recall_target: float, largest: bool, name: Any, default: str
) -> tuple:
    if not 0.0 < float(recall_target) <= 1.0:
        raise ValueError(f"recall_target must be in (0, 1], got {recall_target}")
    with name_scope(name, default, [x]):
        x = convert_to_tensor(x, name="operand")
        rank = x.shape.rank
        if rank is None:
            raise ValueError("approx top-k needs an operand of known rank")
        if not -rank <= dim < rank:
            raise ValueError(f"reduction_dimension {dim} is out of range for rank {rank}")
        dim %= rank
        size = x.shape.as_list()[dim]
        if int(k) < 0 or (size is not None and int(k) > size):
            raise ValueError(f"k ({k}) must be between 0 and the reduced dimension's size ({size})")
        perm = [d for d in range(rank) if d != dim] + [dim]
        back = list(range(rank - 1))
        back.insert(dim, rank - 1)
        moved = array_ops.transpose(x, perm) if dim != rank - 1 else x
        top = math_ops.top_k(moved if largest else math_ops.negative(moved), int(k))
        values = top.values if largest else math_ops.negative(top.values)
        indices = top.indices
        if dim != rank - 1:
            values, indices = array_ops.transpose(values, back), array_ops.transpose(indices, back)
        return values, indices


def approx_max_k(
    operand: Any,
    k: int,
    reduction_dimension: int = -1,
    recall_target: float = 0.95,
    reduction_input_size_override: int = -1,
    aggregate_to_topk: bool = True,
    name: str | None = None,
) -> tuple:
    """The ``k`` largest entries of ``operand`` along ``reduction_dimension`` and their
    int32 indices, in decreasing order (exact: recall 1 >= ``recall_target``).
    ``reduction_input_size_override`` and ``aggregate_to_topk`` are accepted for TF's
    signature and change nothing in an exact result."""
    return _approx_top_k(operand, k, reduction_dimension, recall_target, True, name, "approx_max_k")


def approx_min_k(
    operand: Any,
    k: int,
    reduction_dimension: int = -1,
    recall_target: float = 0.95,
    reduction_input_size_override: int = -1,
    aggregate_to_topk: bool = True,
    name: str | None = None,
) -> tuple:
    """The ``k`` smallest entries of a float ``operand`` along ``reduction_dimension``
    and their int32 indices, in increasing order; otherwise as ``approx_max_k``."""
    return _approx_top_k(
        operand, k, reduction_dimension, recall_target, False, name, "approx_min_k"
    )
