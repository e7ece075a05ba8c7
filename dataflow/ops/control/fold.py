"""``tf.foldl`` and ``tf.foldr``: a function folded over the first dimension of
``elems``, as one ``while_loop`` (so its gradient is the loop's).

Each step reads element ``i`` with a gather and applies ``fn(accumulator, element)``;
``elems`` may be a nested structure of tensors sharing their first dimension, and so
may the accumulator. Without an ``initializer`` the first (for ``foldr`` the last)
element starts the accumulator, as in TF1.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..._util import nest
from ...framework import dtypes
from ...framework.graph import Tensor, convert_to_tensor
from ...framework.scopes import name_scope
from .. import array as array_ops
from ..array.indexing import gather
from ..math.compare import greater_equal, less
from .while_loop import while_loop


def _elements(elems: Any) -> tuple[list[Tensor], Tensor]:
    flat = [convert_to_tensor(e) for e in nest.flatten(elems)]
    if not flat:
        raise ValueError("elems must be a tensor or a non-empty structure of tensors")
    for e in flat:
        if e.shape.rank == 0:
            raise ValueError(f"elems must be at least 1-D, got a scalar ({e.name})")
    return flat, array_ops.shape(flat[0])[0]


def _fold(
    fn: Callable,
    elems: Any,
    initializer: Any,
    reverse: bool,
    parallel_iterations: int,
    back_prop: bool,
    swap_memory: bool,
    name: str,
) -> Any:
    if not callable(fn):
        raise TypeError("fn must be callable.")
    with name_scope(None, name, [elems]):
        flat, n = _elements(elems)

        def element(i: Any) -> Any:
            return nest.pack_sequence_as(elems, [gather(e, i) for e in flat])

        last = n - 1
        if initializer is None:
            accumulator = element(last if reverse else 0)
            start = last - 1 if reverse else convert_to_tensor(1)
        else:
            accumulator = initializer
            start = last if reverse else convert_to_tensor(0)
        structure = accumulator
        flat_acc = [convert_to_tensor(a) for a in nest.flatten(accumulator)]

        def keep_going(i: Tensor, *acc: Tensor) -> Tensor:
            return greater_equal(i, 0) if reverse else less(i, n)

        def step(i: Tensor, *acc: Tensor) -> list:
            result = fn(nest.pack_sequence_as(structure, list(acc)), element(i))
            flat_result = [convert_to_tensor(r) for r in nest.flatten(result)]
            if len(flat_result) != len(acc):
                raise ValueError("fn must return a value of the accumulator's structure")
            return [i - 1 if reverse else i + 1, *flat_result]

        start = convert_to_tensor(start, dtype=dtypes.int32)
        outputs = while_loop(
            keep_going,
            step,
            [start, *flat_acc],
            parallel_iterations=parallel_iterations,
            back_prop=back_prop,
            swap_memory=swap_memory,
        )
        return nest.pack_sequence_as(structure, list(outputs[1:]))


def foldl(
    fn: Callable,
    elems: Any,
    initializer: Any = None,
    parallel_iterations: int = 10,
    back_prop: bool = True,
    swap_memory: bool = False,
    name: str | None = None,
) -> Any:
    """``fn(...fn(fn(initializer, elems[0]), elems[1])..., elems[n - 1])``.

    Raises:
        ValueError: ``elems`` is a scalar, or ``fn`` changes the accumulator's structure.
    """
    return _fold(
        fn, elems, initializer, False, parallel_iterations, back_prop, swap_memory, name or "foldl"
    )


def foldr(
    fn: Callable,
    elems: Any,
    initializer: Any = None,
    parallel_iterations: int = 10,
    back_prop: bool = True,
    swap_memory: bool = False,
    name: str | None = None,
) -> Any:
    """``fn(...fn(fn(initializer, elems[n - 1]), elems[n - 2])..., elems[0])``."""
    return _fold(
        fn, elems, initializer, True, parallel_iterations, back_prop, swap_memory, name or "foldr"
    )
