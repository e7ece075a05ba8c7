"""``tf.switch_case``: runs the branch an integer picks, as nested ``cond``s (``case``
over ``branch_index == k``), so only that branch runs; an index outside the branches
runs ``default`` (the last branch when none is given), as TF1 does."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...framework import dtypes
from ...framework.graph import convert_to_tensor
from ..math.compare import equal
from .cond import case


def switch_case(
    branch_index: Any,
    branch_fns: Any,
    default: Callable[[], Any] | None = None,
    name: str = "switch_case",
) -> Any:
    """The result of ``branch_fns[branch_index]()`` (``tf.switch_case``).

    Args:
        branch_index: an int32 scalar.
        branch_fns: a list of callables, or of ``(index, callable)`` pairs, or a dict from
            index to callable; indices ``0 .. n-1``.
        default: run when ``branch_index`` names no branch (the last branch if None).
        name: the name scope.

    Raises:
        TypeError: ``branch_fns`` of another form, or a non-integer index.
        ValueError: an empty ``branch_fns``, or indices that are not ``0 .. n-1``.
    """
    if isinstance(branch_fns, dict):
        pairs = sorted(branch_fns.items())
    elif (
        isinstance(branch_fns, (list, tuple))
        and branch_fns
        and all(isinstance(b, (list, tuple)) for b in branch_fns)
    ):
        pairs = sorted((int(k), f) for k, f in branch_fns)
    elif isinstance(branch_fns, (list, tuple)):
        pairs = list(enumerate(branch_fns))
    else:
        raise TypeError("branch_fns must be a list, tuple, or dict")
    if not pairs:
        raise ValueError("Must provide at least one item in branch_fns")
    if [k for k, _ in pairs] != list(range(len(pairs))):
        raise ValueError(f"branch indices must be 0 .. {len(pairs) - 1}")
    for _, fn in pairs:
        if not callable(fn):
            raise TypeError(f"branch_fns must hold callables, got {fn!r}")
    index = convert_to_tensor(branch_index, name="branch_index")
    if index.dtype != dtypes.int32:
        raise TypeError(f"branch_index must be int32, got {index.dtype.name}")
    fallback = default if default is not None else pairs[-1][1]
    conditions = [(equal(index, k), fn) for k, fn in pairs]
    return case(conditions, default=fallback, exclusive=True, name=name)
