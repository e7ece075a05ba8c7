"""``tf.data.experimental.cardinality``: the number of elements of a dataset, as an
int64 scalar tensor, ``INFINITE_CARDINALITY`` (-1) for an endless one and
``UNKNOWN_CARDINALITY`` (-2) where it depends on the data.

The count is composed in the graph from the dataset ops behind the dataset tensor,
walked from the sources down (an explicit stack, post-order), with TF1's rule for each
op type over its input's count and its own count arguments (tensors, so a fed
``batch_size`` works):

* ``range``: ``max(0, ceil((stop - start) / step))``; ``from_tensor_slices``: the first
  dimension; ``from_tensors``: 1; generators and file readers: unknown;
* ``map`` (TF1's ``map`` does not promise to keep the count), ``filter``,
  ``flat_map``/``interleave`` (so ``unbatch``): unknown; ``shuffle``, ``prefetch``,
  ``cache``: the input's;
* ``batch``/``padded_batch``: ``ceil(n / size)`` (``floor`` with ``drop_remainder``);
  ``shard``: ``n // num + (index < n % num)``;
* ``repeat(count)``: for ``count < 0`` infinite unless the input is empty (even when
  its count is unknown), 0 for ``count == 0``, else ``count * n``;
  ``take(count)``: ``count`` of an infinite input, ``n`` when ``count < 0``, else
  ``min(n, count)``; ``skip(count)``: 0 when ``count < 0``, else ``max(0, n - count)``
  (infinite stays infinite; unknown stays unknown in both);
* ``zip``: unknown if any input is, else the smallest finite count (infinite if none);
  ``concatenate``: infinite if either input is, else unknown if either is, else the sum.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..framework import dtypes
from ..framework.graph import Operation, Tensor
from ..framework.scopes import name_scope
from ..ops import array as array_ops
from ..ops import math as math_ops
from ..ops.cast import cast
from ..ops.constant import constant

INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2


def _i64(value: int) -> Tensor:
    return constant(value, dtypes.int64)


def _known(n: Tensor) -> Tensor:
    return math_ops.greater_equal(n, 0)


def _unknown(op: Operation, inputs: list[Tensor]) -> Tensor:
    return _i64(UNKNOWN_CARDINALITY)


def _same(op: Operation, inputs: list[Tensor]) -> Tensor:
    return inputs[0]


def _one(op: Operation, inputs: list[Tensor]) -> Tensor:
    return _i64(1)


def _slices(op: Operation, inputs: list[Tensor]) -> Tensor:
    return cast(array_ops.shape(op.inputs[0])[0], dtypes.int64)


def _range(op: Operation, inputs: list[Tensor]) -> Tensor:
    start, stop, step = op.inputs[:3]
    # ceil(a / b) for b > 0 is -((-a) // b); a negative step counts the other way.
    forward = math_ops.negative(math_ops.floordiv(math_ops.subtract(start, stop), step))
    backward = math_ops.negative(
        math_ops.floordiv(math_ops.subtract(stop, start), math_ops.negative(step))
    )
    count = math_ops.where(math_ops.greater(step, 0), forward, backward)
    return math_ops.maximum(count, _i64(0))


def _batch(op: Operation, inputs: list[Tensor]) -> Tensor:
    n = inputs[0]
    size, drop = op.inputs[1], op.inputs[2]
    whole = math_ops.floordiv(n, size)
    rounded_up = math_ops.floordiv(math_ops.add(n, math_ops.subtract(size, 1)), size)
    return math_ops.where(_known(n), math_ops.where(drop, whole, rounded_up), n)


def _shard(op: Operation, inputs: list[Tensor]) -> Tensor:
    n = inputs[0]
    num, index = op.inputs[1], op.inputs[2]
    extra = cast(math_ops.less(index, math_ops.floormod(n, num)), dtypes.int64)
    return math_ops.where(_known(n), math_ops.add(math_ops.floordiv(n, num), extra), n)


def _repeat(op: Operation, inputs: list[Tensor]) -> Tensor:
    n, count = inputs[0], op.inputs[1]
    endless = math_ops.where(math_ops.equal(n, 0), _i64(0), _i64(INFINITE_CARDINALITY))
    finite = math_ops.where(_known(n), math_ops.multiply(count, n), n)
    return math_ops.where(
        math_ops.less(count, 0),
        endless,
        math_ops.where(math_ops.equal(count, 0), _i64(0), finite),
    )


def _take(op: Operation, inputs: list[Tensor]) -> Tensor:
    n, count = inputs[0], op.inputs[1]
    finite = math_ops.where(math_ops.less(count, 0), n, math_ops.minimum(n, count))
    return math_ops.where(
        math_ops.equal(n, UNKNOWN_CARDINALITY),
        n,
        math_ops.where(math_ops.equal(n, INFINITE_CARDINALITY), count, finite),
    )


def _skip(op: Operation, inputs: list[Tensor]) -> Tensor:
    n, count = inputs[0], op.inputs[1]
    rest = math_ops.maximum(math_ops.subtract(n, count), _i64(0))
    finite = math_ops.where(math_ops.less(count, 0), _i64(0), rest)
    return math_ops.where(_known(n), finite, n)


def _zip(op: Operation, inputs: list[Tensor]) -> Tensor:
    counts = array_ops.stack(inputs)
    # An infinite input does not bound the others: count it as the largest int64.
    bounded = math_ops.where(
        math_ops.equal(counts, INFINITE_CARDINALITY),
        array_ops.fill([len(inputs)], _i64(2**63 - 1)),
        counts,
    )
    smallest = math_ops.reduce_min(bounded)
    finite = math_ops.where(
        math_ops.equal(smallest, 2**63 - 1), _i64(INFINITE_CARDINALITY), smallest
    )
    any_unknown = math_ops.reduce_any(math_ops.equal(counts, UNKNOWN_CARDINALITY))
    return math_ops.where(any_unknown, _i64(UNKNOWN_CARDINALITY), finite)


def _concatenate(op: Operation, inputs: list[Tensor]) -> Tensor:
    first, second = inputs
    either = math_ops.logical_or
    return math_ops.where(
        either(
            math_ops.equal(first, INFINITE_CARDINALITY),
            math_ops.equal(second, INFINITE_CARDINALITY),
        ),
        _i64(INFINITE_CARDINALITY),
        math_ops.where(
            either(
                math_ops.equal(first, UNKNOWN_CARDINALITY),
                math_ops.equal(second, UNKNOWN_CARDINALITY),
            ),
            _i64(UNKNOWN_CARDINALITY),
            math_ops.add(first, second),
        ),
    )


Rule = Callable[[Operation, list[Tensor]], Tensor]

# op type: (how many leading inputs are datasets, None for all; the rule)
_RULES: dict[str, tuple[int | None, Rule]] = {
    "TensorSliceDataset": (0, _slices),
    "TensorDataset": (0, _one),
    "RangeDataset": (0, _range),
    "ZipDataset": (None, _zip),
    "ConcatenateDataset": (2, _concatenate),
    "BatchDataset": (1, _batch),
    "PaddedBatchDataset": (1, _batch),
    "ShardDataset": (1, _shard),
    "RepeatDataset": (1, _repeat),
    "TakeDataset": (1, _take),
    "SkipDataset": (1, _skip),
    "ShuffleDataset": (1, _same),
    "PrefetchDataset": (1, _same),
    "CacheDataset": (1, _same),
}


def _dataset_inputs(op: Operation) -> list[Operation]:
    count = _RULES[op.type][0] if op.type in _RULES else 0
    inputs = list(op.inputs) if count is None else list(op.inputs[:count])
    return [t.op for t in inputs]


def cardinality(dataset: Any) -> Tensor:
    """The number of elements of ``dataset``: an int64 scalar tensor, -1
    (``INFINITE_CARDINALITY``) when it never ends, -2 (``UNKNOWN_CARDINALITY``) when
    counting needs its elements (``filter``, ``map``, ``flat_map``, generators, files).

    Args:
        dataset: a ``tf.data.Dataset``.

    Raises:
        TypeError: ``dataset`` is not a dataset.
    """
    variant = getattr(dataset, "variant", None)
    if not isinstance(variant, Tensor):
        raise TypeError(f"cardinality takes a tf.data.Dataset, got {dataset!r}")
    with name_scope(None, "DatasetCardinality"):
        counts: dict[Operation, Tensor] = {}
        stack: list[tuple[Operation, bool]] = [(variant.op, False)]
        while stack:
            op, ready = stack.pop()
            if op in counts:
                continue
            if ready:
                inputs = [counts[i] for i in _dataset_inputs(op)]
                rule = _RULES[op.type][1] if op.type in _RULES else _unknown
                counts[op] = rule(op, inputs)
                continue
            stack.append((op, True))
            stack.extend((i, False) for i in reversed(_dataset_inputs(op)) if i not in counts)
        return counts[variant.op]
