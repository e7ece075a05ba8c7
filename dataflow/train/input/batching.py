"""Queue-based input pipelines, batching: ``batch``, ``batch_join``, ``shuffle_batch``,
``shuffle_batch_join`` and their ``maybe_`` forms, as TF1.

Each function makes a queue (a ``FIFOQueue``; a ``PaddingFIFOQueue`` with
``dynamic_pad``; a ``RandomShuffleQueue`` for the shuffling forms), enqueue ops that put
its input in (one op run by ``num_threads`` threads, or, for the ``_join`` forms, one op
per input list, each its own thread), a ``QueueRunner`` for them in ``QUEUE_RUNNERS``,
TF's "fraction full" scalar summary, and returns the dequeue of ``batch_size`` elements
(``dequeue_up_to`` with ``allow_smaller_final_batch``, so the last batch of a closed
queue may be short; otherwise its leftover elements end with ``OutOfRangeError``).
With ``enqueue_many`` each input is a batch of rows; ``keep_input`` (the ``maybe_``
forms) selects which inputs or rows go in. Inputs and outputs keep their structure: a
list gives a list (one tensor for a one-element list, as TF), a dict a dict.

Example:
    >>> import dataflow as tf
    >>> x = tf.train.limit_epochs(tf.range(5), num_epochs=1)
    >>> batch = tf.train.batch([x], batch_size=2, enqueue_many=True,
    ...                        allow_smaller_final_batch=True)
    >>> with tf.train.MonitoredSession() as sess:
    ...     [sess.run(batch).tolist() for _ in range(3)]
    [[0, 1], [2, 3], [4]]
"""

from __future__ import annotations

from typing import Any

from ...framework import dtypes
from ...framework.graph import Tensor, convert_to_tensor
from ...framework.scopes import name_scope
from ...framework.tensor_util import constant_value
from ...ops.array.join import tile
from ...ops.array.shapes import expand_dims, reshape, shape
from ...ops.array.slicing import boolean_mask
from ...ops.cast import cast
from ...ops.math.arith import maximum
from ...ops.queue.queues import FIFOQueue, PaddingFIFOQueue, RandomShuffleQueue
from ...ops.summary.summary_ops import scalar as scalar_summary
from .queue_runner import QueueRunner, add_queue_runner


# --- the public functions ------------------------------------------------------------------
def batch(
    tensors: Any,
    batch_size: Any,
    num_threads: int = 1,
    capacity: int = 32,
    enqueue_many: bool = False,
    shapes: Any = None,
    dynamic_pad: bool = False,
    allow_smaller_final_batch: bool = False,
    shared_name: str | None = None,
    name: str | None = None,
) -> Any:
    """Batches of ``batch_size`` of ``tensors`` (a list or dict), in the order the
    ``num_threads`` enqueue threads put them in.

    Raises:
        ValueError: no tensors, or shapes not known well enough for the queue.
        TypeError: a SparseTensor input (not supported here).
    """
    return maybe_batch(
        tensors,
        True,
        batch_size,
        num_threads,
        capacity,
        enqueue_many,
        shapes,
        dynamic_pad,
        allow_smaller_final_batch,
        shared_name,
        name,
    )


def maybe_batch(
    tensors: Any,
    keep_input: Any,
    batch_size: Any,
    num_threads: int = 1,
    capacity: int = 32,
    enqueue_many: bool = False,
    shapes: Any = None,
    dynamic_pad: bool = False,
    allow_smaller_final_batch: bool = False,
    shared_name: str | None = None,
    name: str | None = None,
) -> Any:
    """``batch`` of the inputs (or, with ``enqueue_many``, rows) ``keep_input`` keeps."""
    return _batch(
        [_as_list(tensors)],
        tensors,
        batch_size,
        keep_input,
        capacity,
        enqueue_many,
        shapes,
        dynamic_pad,
        allow_smaller_final_batch,
        shared_name,
        name,
        "batch",
        threads=num_threads,
    )


def batch_join(
    tensors_list: Any,
    batch_size: Any,
    capacity: int = 32,
    enqueue_many: bool = False,
    shapes: Any = None,
    dynamic_pad: bool = False,
    allow_smaller_final_batch: bool = False,
    shared_name: str | None = None,
    name: str | None = None,
) -> Any:
    """Batches from several input lists of like dtypes, one enqueue thread each."""
    return maybe_batch_join(
        tensors_list,
        True,
        batch_size,
        capacity,
        enqueue_many,
        shapes,
        dynamic_pad,
        allow_smaller_final_batch,
        shared_name,
        name,
    )


def maybe_batch_join(
    tensors_list: Any,
    keep_input: Any,
    batch_size: Any,
    capacity: int = 32,
    enqueue_many: bool = False,
    shapes: Any = None,
    dynamic_pad: bool = False,
    allow_smaller_final_batch: bool = False,
    shared_name: str | None = None,
    name: str | None = None,
) -> Any:
    """``batch_join`` of the inputs (or rows) ``keep_input`` keeps."""
    if not tensors_list:
        raise ValueError("Expected at least one input in batch_join().")
    return _batch(
        [_as_list(t) for t in tensors_list],
        tensors_list[0],
        batch_size,
        keep_input,
        capacity,
        enqueue_many,
        shapes,
        dynamic_pad,
        allow_smaller_final_batch,
        shared_name,
        name,
        "batch_join",
    )


def shuffle_batch(
    tensors: Any,
    batch_size: Any,
    capacity: int,
    min_after_dequeue: int,
    num_threads: int = 1,
    seed: int | None = None,
    enqueue_many: bool = False,
    shapes: Any = None,
    allow_smaller_final_batch: bool = False,
    shared_name: str | None = None,
    name: str | None = None,
) -> Any:
    """Batches drawn at random from a ``RandomShuffleQueue`` that keeps at least
    ``min_after_dequeue`` elements (until its input ends) for mixing.

    Raises:
        ValueError: ``capacity <= min_after_dequeue``.
    """
    return maybe_shuffle_batch(
        tensors,
        batch_size,
        capacity,
        min_after_dequeue,
        True,
        num_threads,
        seed,
        enqueue_many,
        shapes,
        allow_smaller_final_batch,
        shared_name,
        name,
    )


def maybe_shuffle_batch(
    tensors: Any,
    batch_size: Any,
    capacity: int,
    min_after_dequeue: int,
    keep_input: Any,
    num_threads: int = 1,
    seed: int | None = None,
    enqueue_many: bool = False,
    shapes: Any = None,
    allow_smaller_final_batch: bool = False,
    shared_name: str | None = None,
    name: str | None = None,
) -> Any:
    """``shuffle_batch`` of the inputs (or rows) ``keep_input`` keeps."""
    return _batch(
        [_as_list(tensors)],
        tensors,
        batch_size,
        keep_input,
        capacity,
        enqueue_many,
        shapes,
        False,
        allow_smaller_final_batch,
        shared_name,
        name,
        "shuffle_batch",
        threads=num_threads,
        shuffle=(min_after_dequeue, seed),
    )


def shuffle_batch_join(
    tensors_list: Any,
    batch_size: Any,
    capacity: int,
    min_after_dequeue: int,
    seed: int | None = None,
    enqueue_many: bool = False,
    shapes: Any = None,
    allow_smaller_final_batch: bool = False,
    shared_name: str | None = None,
    name: str | None = None,
) -> Any:
    """``shuffle_batch`` from several input lists, one enqueue thread each (e.g. one
    reader per thread)."""
    return maybe_shuffle_batch_join(
        tensors_list,
        batch_size,
        capacity,
        min_after_dequeue,
        True,
        seed,
        enqueue_many,
        shapes,
        allow_smaller_final_batch,
        shared_name,
        name,
    )


def maybe_shuffle_batch_join(
    tensors_list: Any,
    batch_size: Any,
    capacity: int,
    min_after_dequeue: int,
    keep_input: Any,
    seed: int | None = None,
    enqueue_many: bool = False,
    shapes: Any = None,
    allow_smaller_final_batch: bool = False,
    shared_name: str | None = None,
    name: str | None = None,
) -> Any:
    """``shuffle_batch_join`` of the inputs (or rows) ``keep_input`` keeps."""
    if not tensors_list:
        raise ValueError("Expected at least one input in shuffle_batch_join().")
    return _batch(
        [_as_list(t) for t in tensors_list],
        tensors_list[0],
        batch_size,
        keep_input,
        capacity,
        enqueue_many,
        shapes,
        False,
        allow_smaller_final_batch,
        shared_name,
        name,
        "shuffle_batch_join",
        shuffle=(min_after_dequeue, seed),
    )


# --- the shared body ---------------------------------------------------------------------
def _as_list(tensors: Any) -> list:
    if isinstance(tensors, dict):
        return [tensors[k] for k in sorted(tensors, key=str)]
    if isinstance(tensors, Tensor):
        raise TypeError("batching takes a list (or dict) of tensors, got one tensor")
    return list(tensors)


def _as_original(original: Any, dequeued: Any) -> Any:
    if isinstance(original, dict):
        values = [dequeued] if len(original) == 1 else dequeued
        return {k: values[i] for i, k in enumerate(sorted(original, key=str))}
    return dequeued


def _converted(tensor_list: list, what: str) -> list[Tensor]:
    if not tensor_list:
        raise ValueError(f"Expected at least one tensor in {what}().")
    for t in tensor_list:
        if not isinstance(t, Tensor) and hasattr(t, "dense_shape"):
            raise TypeError(f"{what}: SparseTensor inputs are not supported here")
    return [convert_to_tensor(t) for t in tensor_list]


def _dtypes(tensor_lists: list[list[Tensor]]) -> list:
    types = [t.dtype for t in tensor_lists[0]]
    for other in tensor_lists[1:]:
        if [t.dtype for t in other] != types:
            raise TypeError(
                "Expected types to be consistent: "
                f"{', '.join(t.name for t in types)} vs. "
                f"{', '.join(t.dtype.name for t in other)}."
            )
    return types


def _shapes(tensor_lists: list[list[Tensor]], shapes: Any, enqueue_many: bool) -> list:
    if shapes is not None:
        return shapes
    merged = []
    for i in range(len(tensor_lists[0])):
        shape_i = None
        for tl in tensor_lists:
            s = tl[i].shape
            if s.rank is None:
                raise ValueError(f"Cannot infer Tensor's rank: {tl[i]}")
            if enqueue_many:
                s = s.with_rank_at_least(1)[1:]
            shape_i = s if shape_i is None else shape_i.merge_with(s)
        merged.append(shape_i)
    return merged


def _keep(keep_input: Any, enqueue_many: bool) -> Tensor:
    keep = convert_to_tensor(keep_input, dtypes.bool)
    if keep.shape.rank is None:
        raise ValueError("`keep_input` dimensions must be known at graph construction.")
    if not enqueue_many and keep.shape.rank == 1:
        raise ValueError("`keep_input` cannot be a vector when `enqueue_many=False`.")
    if keep.shape.rank > 1:
        raise ValueError("`keep_input` must be 0 or 1 dimensions.")
    return keep


def _enqueue_op(queue: Any, tensors: list[Tensor], enqueue_many: bool, keep: Tensor) -> Any:
    """Enqueues ``tensors`` (rows, with ``enqueue_many``), only those ``keep`` selects:
    a constant ``True`` enqueues as is; otherwise the kept rows go in one
    ``enqueue_many`` (TF's ``dynamic_partition`` of the rows, as a boolean mask)."""
    if keep.shape.rank == 0 and constant_value(keep) is not None and bool(constant_value(keep)):
        return queue.enqueue_many(tensors) if enqueue_many else queue.enqueue(tensors)
    if not enqueue_many:
        tensors = [expand_dims(t, 0) for t in tensors]
        mask = reshape(keep, [1])
    elif keep.shape.rank == 0:
        mask = tile(reshape(keep, [1]), shape(tensors[0])[:1])
    else:
        mask = keep
    return queue.enqueue_many([boolean_mask(t, mask) for t in tensors])


def _dequeue(queue: Any, batch_size: Any, allow_smaller: bool, scope: str) -> Any:
    if allow_smaller:
        return queue.dequeue_up_to(batch_size, name=scope)
    return queue.dequeue_many(batch_size, name=scope)


def _batch(
    tensor_lists: list,
    original: Any,
    batch_size: Any,
    keep_input: Any,
    capacity: int,
    enqueue_many: bool,
    shapes: Any,
    dynamic_pad: bool,
    allow_smaller_final_batch: bool,
    shared_name: str | None,
    name: str | None,
    default_name: str,
    threads: int = 1,
    shuffle: tuple[int, int | None] | None = None,
) -> Any:
    """The body of every batching function; ``tensor_lists`` has one list per enqueue
    op (``threads`` threads run each), ``shuffle`` is ``(min_after_dequeue, seed)``."""
    flat = [t for tl in tensor_lists for t in tl]
    with name_scope(name, default_name, flat + [keep_input]) as scope:
        if shuffle is not None and capacity <= shuffle[0]:
            raise ValueError(
                f"capacity {capacity} must be bigger than min_after_dequeue {shuffle[0]}."
            )
        lists = [_converted(tl, default_name) for tl in tensor_lists]
        keep = _keep(keep_input, enqueue_many)
        types = _dtypes(lists)
        queue_shapes = _shapes(lists, shapes, enqueue_many)
        if shuffle is not None:
            queue: Any = RandomShuffleQueue(
                capacity=capacity,
                min_after_dequeue=shuffle[0],
                seed=shuffle[1],
                dtypes=types,
                shapes=queue_shapes,
                shared_name=shared_name,
            )
        else:
            queue_class = PaddingFIFOQueue if dynamic_pad else FIFOQueue
            queue = queue_class(
                capacity=capacity, dtypes=types, shapes=queue_shapes, shared_name=shared_name
            )
        ops = [_enqueue_op(queue, tl, enqueue_many, keep) for tl in lists]
        add_queue_runner(QueueRunner(queue, [op for op in ops for _ in range(threads)]))
        if shuffle is None:
            scalar_summary(
                f"fraction_of_{capacity}_full",
                cast(queue.size(), dtypes.float32) * (1.0 / capacity),
            )
        else:
            room = capacity - shuffle[0]
            full = cast(maximum(0, queue.size() - shuffle[0]), dtypes.float32) * (1.0 / room)
            scalar_summary(f"fraction_over_{shuffle[0]}_of_{room}_full", full)
        return _as_original(original, _dequeue(queue, batch_size, allow_smaller_final_batch, scope))
