"""``tf.contrib.training.bucket`` and ``bucket_by_sequence_length``: queue-based
bucketing of single examples into batches of like examples (TF 1.15's
``contrib/training/python/training/bucket_ops.py``).

The graph: one queue per bucket (``bucket_queue_<i>``; a ``PaddingFIFOQueue`` with
``dynamic_pad``), each example enqueued into the queue its ``which_bucket`` names (one
``cond`` per bucket, all skipped when ``keep_input`` is false), and a ``top_queue``
(always a ``PaddingFIFOQueue``) holding whole batches as ``(bucket index, batch...)``:
each bucket queue's ``dequeue_many(batch_size)`` (``dequeue_up_to`` with
``allow_smaller_final_batch``) is enqueued into it. Queue runners in ``QUEUE_RUNNERS``
run the example enqueue (``num_threads`` threads, closing ``top_queue`` when the input
ends) and one per bucket moving its batches (closing the bucket queue when
``top_queue`` closes). The result is ``top_queue``'s dequeue: a batch of one bucket per
run. TF's scalar summaries of the queue sizes are added. Dense tensors only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import dataflow as tf


def _as_list(tensors: Any) -> list:
    if isinstance(tensors, dict):
        return [tensors[k] for k in sorted(tensors)]
    return list(tensors)


def _as_original(tensors: Any, dequeued: list) -> Any:
    if isinstance(tensors, dict):
        return dict(zip(sorted(tensors), dequeued))
    return dequeued


def _example_shapes(tensor_list: list, shapes: Any, dynamic_pad: bool) -> list:
    if shapes is not None:
        return [tf.TensorShape(s) for s in shapes]
    out = []
    for t in tensor_list:
        if t.shape.rank is None:
            raise ValueError(f"Cannot infer Tensor's rank: {t}")
        if not dynamic_pad and not t.shape.is_fully_defined():
            raise ValueError(f"All shapes must be fully defined: {[x.shape for x in tensor_list]}")
        out.append(t.shape)
    return out


def bucket(
    tensors: Any,
    which_bucket: Any,
    batch_size: Any,
    num_buckets: int,
    num_threads: int = 1,
    capacity: int = 32,
    bucket_capacities: list | None = None,
    shapes: Any = None,
    dynamic_pad: bool = False,
    allow_smaller_final_batch: bool = False,
    keep_input: Any = True,
    shared_name: str | None = None,
    name: str | None = None,
) -> tuple[Any, Any]:
    """Batches examples with others of the same bucket (module docstring).

    Args:
        tensors: a list or dict of tensors, one example.
        which_bucket: an int32 scalar in ``[0, num_buckets)``.
        batch_size: the batch size, or one per bucket.
        num_buckets: the number of buckets.
        num_threads: threads running the example enqueue.
        capacity: the capacity of ``top_queue`` in batches, and of each bucket queue
            in examples unless ``bucket_capacities``.
        bucket_capacities: one capacity per bucket queue.
        shapes: the shapes of an example's tensors (default: theirs).
        dynamic_pad: pad each batch to its longest example.
        allow_smaller_final_batch: at the end, batches may be short (the batch
            dimension is then unknown).
        keep_input: a bool scalar: whether this example is enqueued.
        shared_name: queue names shared across sessions (``<name>_<i>`` per bucket).
        name: the name scope (``bucket``).

    Returns:
        ``(bucket, outputs)``: the int32 bucket of the batch, and the batch in the
        structure of ``tensors``.

    Raises:
        ValueError: a list of batch sizes or capacities without ``num_buckets``
            entries, no tensors, or shapes that cannot be inferred.
    """
    per_bucket = isinstance(batch_size, (list, tuple))
    if per_bucket and len(batch_size) != num_buckets:
        raise ValueError("If batch_size is a list it must have num_buckets elements")
    sizes = list(batch_size) if per_bucket else [batch_size] * num_buckets
    capacities = [capacity] * num_buckets if bucket_capacities is None else bucket_capacities
    if len(capacities) != num_buckets:
        raise ValueError(
            f"The list bucket_capacities ({capacities}) must have exactly num_buckets "
            f"({num_buckets}) elements."
        )
    tensor_list = [tf.convert_to_tensor(t) for t in _as_list(tensors)]
    if not tensor_list:
        raise ValueError("Expected at least one tensor in bucket().")
    with tf.name_scope(name, "bucket", tensor_list):
        keep = tf.convert_to_tensor(keep_input, tf.bool)
        if keep.shape.rank != 0:
            raise ValueError("`keep_input` must be a scalar when enqueue_many=False.")
        sizes = [tf.convert_to_tensor(s, tf.int32, name="batch_size") for s in sizes]
        static = [tf.get_static_value(s) for s in sizes]
        types = [t.dtype for t in tensor_list]
        example_shapes = _example_shapes(tensor_list, shapes, dynamic_pad)
        which = tf.convert_to_tensor(which_bucket, tf.int32, name="which_bucket")
        queue_class = tf.PaddingFIFOQueue if dynamic_pad else tf.FIFOQueue
        queues = [
            queue_class(
                capacity=capacities[i],
                dtypes=types,
                shapes=example_shapes,
                shared_name=None if shared_name is None else f"{shared_name}_{i}",
                name=f"bucket_queue_{i}",
            )
            for i in range(num_buckets)
        ]
        fixed = None if allow_smaller_final_batch or per_bucket else static[-1]
        top_queue = tf.PaddingFIFOQueue(
            capacity=capacity,
            dtypes=[tf.int32, *types],
            shapes=[tf.TensorShape([])]
            + [tf.TensorShape([fixed]).concatenate(s) for s in example_shapes],
            shared_name=shared_name,
            name="top_queue",
        )

        def enqueue_example() -> Any:
            def into(i: int) -> Any:
                return lambda: queues[i].enqueue(tensor_list)

            conds = [tf.cond(tf.equal(which, i), into(i), tf.no_op) for i in range(num_buckets)]
            return tf.group(*conds, name="group_enqueues")

        known = tf.get_static_value(keep)
        if known is not None:
            enqueue = enqueue_example() if bool(known) else tf.no_op()
        else:
            enqueue = tf.cond(keep, enqueue_example, tf.no_op)
        to_top = []
        for i, (queue, size) in enumerate(zip(queues, sizes)):
            take = queue.dequeue_up_to if allow_smaller_final_batch else queue.dequeue_many
            batch = take(size, name=f"read_bucket_{i}")
            batch = batch if isinstance(batch, list) else [batch]
            to_top.append(
                top_queue.enqueue([tf.constant(i), *batch], name=f"enqueue_from_bucket_{i}")
            )
        closed = (tf.errors.OutOfRangeError, tf.errors.CancelledError)
        for queue, op in zip(queues, to_top):
            tf.train.add_queue_runner(
                tf.train.QueueRunner(queue, [op], queue_closed_exception_types=closed)
            )
        tf.train.add_queue_runner(
            tf.train.QueueRunner(
                top_queue, [enqueue] * num_threads, queue_closed_exception_types=closed
            )
        )
        top_size = tf.cast(top_queue.size(), tf.float32)
        for queue in queues:
            tf.summary.scalar(f"bucket/{queue.name}/size", top_size)
        tf.summary.scalar(
            f"bucket/{top_queue.name}/fraction_of_{capacity}_full", top_size * (1.0 / capacity)
        )
        dequeued = top_queue.dequeue(name="dequeue_top")
        return dequeued[0], _as_original(tensors, list(dequeued[1:]))


def bucket_by_sequence_length(
    input_length: Any,
    tensors: Any,
    batch_size: Any,
    bucket_boundaries: Any,
    num_threads: int = 1,
    capacity: int = 32,
    bucket_capacities: list | None = None,
    shapes: Any = None,
    dynamic_pad: bool = False,
    allow_smaller_final_batch: bool = False,
    keep_input: Any = True,
    shared_name: str | None = None,
    name: str | None = None,
) -> tuple[Any, Any]:
    """``bucket`` by length: bucket 0 holds ``input_length < b[0]``, bucket ``i``
    ``b[i-1] <= input_length < b[i]``, the last ``input_length >= b[-1]``.

    Returns:
        ``(sequence_length, outputs)``: the batch's lengths ``[batch]`` and its tensors,
        in the structure of ``tensors``.

    Raises:
        TypeError: ``bucket_boundaries`` is not a list or tuple of Python ints.
        ValueError: it is empty or not increasing (and as ``bucket``).
    """
    if not isinstance(bucket_boundaries, (list, tuple)):
        raise TypeError(
            f"bucket_boundaries must be a list or tuple, but received: {bucket_boundaries}"
        )
    if not bucket_boundaries:
        raise ValueError("bucket_boundaries must not be empty")
    for low, high in zip(bucket_boundaries[:-1], bucket_boundaries[1:]):
        if not isinstance(low, int) or not isinstance(high, int):
            raise TypeError(f"bucket boundaries must be integers, but saw: {low} and {high}")
        if low >= high:
            raise ValueError(
                f"Buckets must contain sequential increasing lengths, but saw: {low} before {high}"
            )
    tensor_list = _as_list(tensors)
    with tf.name_scope(name, "bucket_by_sequence_length", [input_length, *tensor_list]):
        length = tf.convert_to_tensor(input_length, tf.int32, name="input_length")
        int32 = np.iinfo(np.int32)
        lows = [int32.min, *bucket_boundaries]
        highs = [*bucket_boundaries, int32.max]
        inside = tf.logical_and(tf.less_equal(lows, length), tf.less(length, highs))
        which = tf.cast(tf.reduce_min(tf.where(inside)), tf.int32)
        _, dequeued = bucket(
            [length, *tensor_list],
            which,
            batch_size,
            len(bucket_boundaries) + 1,
            num_threads=num_threads,
            capacity=capacity,
            bucket_capacities=bucket_capacities,
            shapes=None if shapes is None else [[], *shapes],
            dynamic_pad=dynamic_pad,
            allow_smaller_final_batch=allow_smaller_final_batch,
            keep_input=keep_input,
            shared_name=shared_name,
        )
        return dequeued[0], _as_original(tensors, dequeued[1:])
