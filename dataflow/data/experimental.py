"""``tf.data.experimental`` (TF 1.15): the transformations TF1 input pipelines use most,
as compositions of ``Dataset`` methods with the same elements in the same order.

* ``shuffle_and_repeat(buffer_size, count, seed)``: ``shuffle`` (a new order each
  epoch) then ``repeat``: TF's fused op gives that sequence's distribution;
* ``map_and_batch(map_func, batch_size, ...)``: ``map`` then ``batch`` (dataflow runs a
  vectorizable map once per batch anyway, see ``ops/data/vectorize.py``);
* ``parallel_interleave(map_func, cycle_length, block_length, sloppy, ...)``:
  ``interleave`` in TF1's deterministic order (``sloppy=True`` permits another order, it
  does not require one);
* ``unbatch()``, ``prefetch_to_device(device, buffer_size)`` (a prefetch: elements are
  made on the host and moved by the step that uses them), ``Counter(start, step)``;
* ``cardinality(dataset)`` with ``INFINITE_CARDINALITY``/``UNKNOWN_CARDINALITY``
  (``cardinality.py``).

Each transformation is a function of a dataset, for ``dataset.apply(...)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..framework import dtypes
from ..ops.cast import cast
from .cardinality import INFINITE_CARDINALITY as INFINITE_CARDINALITY
from .cardinality import UNKNOWN_CARDINALITY as UNKNOWN_CARDINALITY
from .cardinality import cardinality as cardinality
from .dataset import AUTOTUNE, Dataset

Transformation = Callable[[Dataset], Dataset]

_INT64_MAX = 2**63 - 1


def shuffle_and_repeat(buffer_size: Any, count: Any = None, seed: Any = None) -> Transformation:
    """Shuffles with a ``buffer_size`` window, a new order each epoch, ``count`` epochs
    (forever when ``None`` or -1)."""

    def apply(dataset: Dataset) -> Dataset:
        return dataset.shuffle(buffer_size, seed, reshuffle_each_iteration=True).repeat(count)

    return apply


def map_and_batch(
    map_func: Callable,
    batch_size: Any,
    num_parallel_batches: Any = None,
    drop_remainder: bool = False,
    num_parallel_calls: Any = None,
) -> Transformation:
    """``map(map_func)`` then ``batch(batch_size, drop_remainder)``.

    Raises:
        ValueError: both ``num_parallel_batches`` and ``num_parallel_calls`` given.
    """
    if num_parallel_batches is not None and num_parallel_calls is not None:
        raise ValueError(
            "The `num_parallel_batches` and `num_parallel_calls` arguments are mutually exclusive."
        )

    def apply(dataset: Dataset) -> Dataset:
        mapped = dataset.map(map_func, num_parallel_calls=num_parallel_calls)
        return mapped.batch(batch_size, drop_remainder=drop_remainder)

    return apply


def parallel_interleave(
    map_func: Callable,
    cycle_length: int,
    block_length: int = 1,
    sloppy: bool = False,
    buffer_output_elements: Any = None,
    prefetch_input_elements: Any = None,
) -> Transformation:
    """``interleave(map_func, cycle_length, block_length)``, in TF1's order."""

    def apply(dataset: Dataset) -> Dataset:
        return dataset.interleave(map_func, cycle_length, block_length)

    return apply


def unbatch() -> Transformation:
    """``Dataset.unbatch``: each element split along its first dimension."""
    return lambda dataset: dataset.unbatch()


def prefetch_to_device(device: str, buffer_size: Any = None) -> Transformation:
    """``prefetch(buffer_size)`` (1 when ``None``); ``device`` is where the consuming
    step runs, which moves each element there as it runs."""
    del device
    return lambda dataset: dataset.prefetch(1 if buffer_size is None else buffer_size)


def Counter(start: Any = 0, step: Any = 1, dtype: Any = dtypes.int64) -> Dataset:
    """``start``, ``start + step``, ... (an endless int64 dataset, cast to ``dtype``)."""
    bound = _INT64_MAX if step > 0 else -_INT64_MAX
    counter = Dataset.range(start, bound, step)
    if dtypes.as_dtype(dtype) == dtypes.int64:
        return counter
    return counter.map(lambda x: cast(x, dtype))


__all__ = [
    "AUTOTUNE",
    "Counter",
    "INFINITE_CARDINALITY",
    "UNKNOWN_CARDINALITY",
    "cardinality",
    "map_and_batch",
    "parallel_interleave",
    "prefetch_to_device",
    "shuffle_and_repeat",
    "unbatch",
]
