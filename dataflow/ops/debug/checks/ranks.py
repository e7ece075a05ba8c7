"""Rank and shape checks: ``assert_rank``, ``assert_rank_at_least``, ``assert_rank_in``,
``assert_scalar`` and ``assert_shapes``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ....framework import dtypes
from ....framework.graph import Operation, Tensor, convert_to_tensor
from ....framework.scopes import control_dependencies, name_scope
from ....framework.sparse_tensor import SparseTensor
from ....framework.tensor_util import constant_value
from ... import array as array_ops
from ... import math as math_ops
from ...control.group import group, no_op
from ..debugging import Assert


def message_prefix(message: str | None) -> str:
    """``"message.  "`` (or nothing), the prefix of TF's check messages."""
    return f"{message}.  " if message else ""


def _rank_check(
    x: Any,
    ranks: Sequence[int],
    holds: Callable[[int], bool],
    dynamic: Callable[[Tensor], Tensor],
    what: str,
    data: Any,
    summarize: int | None,
    message: str | None,
    name: str | None,
    default_name: str,
) -> Operation:
    with name_scope(name, default_name, [x]):
        x = x if isinstance(x, SparseTensor) else convert_to_tensor(x, name="x")
        shape = x.shape if isinstance(x, Tensor) else x.get_shape()
        label = x.name if isinstance(x, Tensor) else "SparseTensor"
        if shape.rank is not None:
            if not holds(shape.rank):
                raise ValueError(
                    f"{message_prefix(message)}Tensor {label} must have {what}.  "
                    f"Received rank {shape.rank}, shape {shape}"
                )
            return no_op(name="static_checks_determined_all_ok")
        if isinstance(x, SparseTensor):
            rank = array_ops.size(x.dense_shape)
        else:
            rank = array_ops.rank(x)
        if data is None:
            data = [
                message_prefix(message),
                f"Tensor {label} must have {what}",
                "Received shape: ",
                array_ops.shape(x) if isinstance(x, Tensor) else x.dense_shape,
            ]
        return Assert(dynamic(rank), data, summarize=summarize)


def _static_rank(rank: Any) -> int:
    value = constant_value(convert_to_tensor(rank))
    if value is None or value.ndim != 0:
        raise ValueError("Rank must be a scalar.")
    return int(value)


def assert_rank(
    x: Any,
    rank: Any,
    data: Any = None,
    summarize: int | None = None,
    message: str | None = None,
    name: str | None = None,
) -> Operation:
    """A check that ``x`` has rank ``rank``: ``ValueError`` now when the static rank
    differs, a ``no_op`` when it matches, else an ``Assert`` on ``tf.rank(x)``."""
    r = _static_rank(rank)
    return _rank_check(
        x,
        [r],
        lambda have: have == r,
        lambda have: math_ops.equal(have, r),
        f"rank {r}",
        data,
        summarize,
        message,
        name,
        "assert_rank",
    )


def assert_rank_at_least(
    x: Any,
    rank: Any,
    data: Any = None,
    summarize: int | None = None,
    message: str | None = None,
    name: str | None = None,
) -> Operation:
    """A check that ``x`` has rank ``rank`` or more (as ``assert_rank``)."""
    r = _static_rank(rank)
    return _rank_check(
        x,
        [r],
        lambda have: have >= r,
        lambda have: math_ops.greater_equal(have, r),
        f"rank at least {r}",
        data,
        summarize,
        message,
        name,
        "assert_rank_at_least",
    )


def assert_rank_in(
    x: Any,
    ranks: Sequence[Any],
    data: Any = None,
    summarize: int | None = None,
    message: str | None = None,
    name: str | None = None,
) -> Operation:
    """A check that the rank of ``x`` is one of ``ranks`` (as ``assert_rank``)."""
    allowed = [_static_rank(r) for r in ranks]
    return _rank_check(
        x,
        allowed,
        lambda have: have in allowed,
        lambda have: math_ops.reduce_any(
            math_ops.equal(have, convert_to_tensor(allowed, dtype=dtypes.int32))
        ),
        f"rank in {tuple(allowed)}",
        data,
        summarize,
        message,
        name,
        "assert_rank_in",
    )


def assert_scalar(tensor: Any, name: str | None = None, message: str | None = None) -> Tensor:
    """``tensor``, after checking its static shape is a scalar's.

    Raises:
        ValueError: the static rank is not 0 (or unknown).
    """
    with name_scope(name, "assert_scalar", [tensor]):
        tensor = convert_to_tensor(tensor, name="tensor")
        if tensor.shape.rank != 0:
            raise ValueError(
                f"{message_prefix(message)}Expected scalar shape for {tensor.name}, "
                f"saw shape: {tensor.shape}."
            )
        return tensor


_ANY_SIZE = (None, ".")


def _dimension_sizes(x: Any) -> Any:
    """Each dimension's size: an int where static, else a scalar tensor; a scalar reads
    as one dimension of size 1. Of unknown rank: the shape vector (``[1]`` for a
    scalar), indexed when the step runs."""
    shape = x.shape if isinstance(x, Tensor) else x.get_shape()
    dynamic = array_ops.shape(x) if isinstance(x, Tensor) else x.dense_shape
    if shape.rank == 0:
        return [1]
    if shape.rank is not None:
        return [d if d is not None else dynamic[i] for i, d in enumerate(shape.as_list())]
    padded = array_ops.concat([dynamic, convert_to_tensor([1], dtype=dynamic.dtype)], 0)
    return padded[: math_ops.maximum(array_ops.size(dynamic), 1)]


def assert_shapes(
    shapes: Any,
    data: Any = None,
    summarize: int | None = None,
    message: str | None = None,
    name: str | None = None,
) -> Operation:
    """Checks tensors' shapes against symbolic shapes, e.g.
    ``[(x, ("N", "Q")), (y, ("N", "D")), (b, ("D",))]``: each entry an int (that size), a
    symbol (the same size wherever the symbol appears), ``None`` or ``"."`` (any size);
    ``...`` or ``"*"`` first stands for any number of leading dimensions. Ranks are
    checked with ``assert_rank``/``assert_rank_at_least`` (``assert_rank_in([0, 1])``
    for rank 0 or 1 specs); sizes known statically are checked now (``ValueError``),
    the rest by ``Assert`` ops. Returns a group of the checks.
    """
    prefix = message_prefix(message)
    if isinstance(shapes, dict):
        shapes = list(shapes.items())
    with name_scope(name, "assert_shapes", [shapes, data]):
        entries = []
        for x, spec in shapes:
            if spec is None:
                continue
            x = x if isinstance(x, SparseTensor) else convert_to_tensor(x)
            label = x.name if isinstance(x, Tensor) else "SparseTensor"
            if not (hasattr(spec, "__iter__") or hasattr(spec, "__getitem__")):
                raise ValueError(
                    f"{prefix}Tensor {label}.  Specified shape must be an iterable.  An "
                    "iterable has the attribute `__iter__` or `__getitem__`.  Received "
                    f"specified shape: {spec}"
                )
            spec = tuple(spec)
            leading = False
            for i, symbol in enumerate(spec):
                if isinstance(symbol, str) and symbol == "*" or symbol is Ellipsis:
                    if i != 0:
                        raise ValueError(
                            f"{prefix}Tensor {label} specified shape index {i}.  Symbol `...` "
                            "or `*` for a variable number of unspecified dimensions is only "
                            "allowed as the first entry"
                        )
                    leading = True
            entries.append((x, label, leading, spec[1:] if leading else spec))
        rank_checks = []
        for x, _, leading, spec in entries:
            rank = len(spec)
            if leading:
                if rank in (0, 1):
                    continue
                rank_checks.append(assert_rank_at_least(x, rank, data, summarize, message))
            elif rank in (0, 1):
                rank_checks.append(assert_rank_in(x, [0, 1], data, summarize, message))
            else:
                rank_checks.append(assert_rank(x, rank, data, summarize, message))
        size_checks = []
        known: dict[Any, tuple[Any, str, int]] = {}
        for x, label, leading, spec in entries:
            with control_dependencies(rank_checks):
                actual = _dimension_sizes(x)
            for i, symbol in enumerate(spec):
                if symbol in _ANY_SIZE:
                    continue
                dim = i - len(spec) if leading else i
                explicit = isinstance(symbol, int)
                if not explicit and symbol not in known:
                    known[symbol] = (actual[dim], label, dim)
                    continue
                if explicit:
                    wanted, why = int(symbol), "Specified explicitly"
                else:
                    wanted, by, at = known[symbol]
                    why = f"Specified by tensor {by} dimension {at}"
                size = actual[dim]
                if isinstance(size, int) and isinstance(wanted, int):
                    if size != wanted:
                        shape = x.shape if isinstance(x, Tensor) else x.get_shape()
                        raise ValueError(
                            f"{prefix}{why}.  Tensor {label} dimension {dim} must have size "
                            f"{wanted}.  Received size {size}, shape {shape}"
                        )
                    continue
                items = data
                if items is None:
                    items = [
                        prefix,
                        why,
                        f"Tensor {label} dimension",
                        dim,
                        "must have size",
                        wanted,
                        "Received shape: ",
                        array_ops.shape(x) if isinstance(x, Tensor) else x.dense_shape,
                    ]
                condition = math_ops.equal(convert_to_tensor(size), convert_to_tensor(wanted))
                size_checks.append(Assert(condition, items, summarize=summarize))
        with control_dependencies(rank_checks):
            return group(*size_checks)
