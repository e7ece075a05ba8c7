"""Queue-based input pipelines, the producers: ``string_input_producer``,
``input_producer``, ``range_input_producer``, ``slice_input_producer``, ``limit_epochs``
and ``match_filenames_once``, as TF1 (batching is in ``batching.py``).

Each producer builds a queue, the enqueue ops that fill it, and a ``QueueRunner`` it adds
to the ``QUEUE_RUNNERS`` collection; ``start_queue_runners`` (or a
``MonitoredTrainingSession``) then runs those enqueue ops in background threads while
the training loop dequeues. An epoch limit is a local variable ``epochs`` counted by
``count_up_to`` (``limit_epochs``): past ``num_epochs`` the producer's enqueue raises
``OutOfRangeError``, its runner closes the queue, each stage downstream drains and
closes in turn, and the loop ends with ``OutOfRangeError``.

A producer enqueues a whole epoch (shuffled or not) with one ``enqueue_many``; a queue
keeps those rows together and in order (``queue_state.py``), so with ``shuffle=False``
the order is the input's, epoch after epoch. ``string_input_producer`` and
``range_input_producer`` also add TF's "fraction full" scalar summary of their queue.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...framework import dtypes
from ...framework.graph import Tensor, convert_to_tensor
from ...framework.scopes import control_dependencies, name_scope
from ...framework.tensor_shape import TensorShape, as_shape
from ...ops.array.indexing import gather
from ...ops.array.reorder import range_
from ...ops.array.shapes import shape, size
from ...ops.cast import cast
from ...ops.control.group import identity
from ...ops.debug.debugging import Assert
from ...ops.math.compare import greater
from ...ops.queue.queues import FIFOQueue
from ...ops.random.random_ops import random_shuffle
from ...ops.state import count_up_to as input_ops
from ...ops.state.variables import LOCAL_VARIABLES, Variable
from ...ops.summary.summary_ops import scalar as scalar_summary
from .queue_runner import QueueRunner, add_queue_runner


# --- producers ---------------------------------------------------------------------------
def match_filenames_once(pattern: Any, name: str | None = None) -> Variable:
    """A local variable holding the sorted files matching ``pattern`` (a glob or a list
    of globs), computed once, when local variables are initialized."""
    from ...ops.build import apply_op

    with name_scope(name, "matching_filenames", [pattern]) as scope:
        files = apply_op("MatchingFiles", [convert_to_tensor(pattern, dtypes.string)])
        return Variable(
            name=scope,
            initial_value=files,
            trainable=False,
            validate_shape=False,
            collections=[LOCAL_VARIABLES],
        )


def limit_epochs(tensor: Any, num_epochs: int | None = None, name: str | None = None) -> Tensor:
    """``tensor``, ``num_epochs`` times; then its evaluation raises ``OutOfRangeError``.

    Creates the local variable ``epochs`` (initialize it with
    ``local_variables_initializer()``).
    """
    if num_epochs is None:
        return tensor
    if num_epochs <= 0:
        raise ValueError(f"num_epochs must be > 0 not {num_epochs}.")
    with name_scope(name, "limit_epochs", [tensor]) as scope:
        epochs = Variable(
            convert_to_tensor(0, dtypes.int64),
            name="epochs",
            trainable=False,
            collections=[LOCAL_VARIABLES],
        )
        counter = input_ops.count_up_to(epochs, num_epochs)
        with control_dependencies([counter]):
            return identity(tensor, name=scope)


def input_producer(
    input_tensor: Any,
    element_shape: Any = None,
    num_epochs: int | None = None,
    shuffle: bool = True,
    seed: int | None = None,
    capacity: int = 32,
    shared_name: str | None = None,
    summary_name: str | None = None,
    name: str | None = None,
    cancel_op: Any = None,
) -> FIFOQueue:
    """A queue fed with the rows of ``input_tensor``, epoch after epoch (each epoch
    shuffled when ``shuffle``); its ``QueueRunner`` is added to ``QUEUE_RUNNERS``.

    Raises:
        ValueError: the rows' shape is not fully known (give ``element_shape``).
    """
    with name_scope(name, "input_producer", [input_tensor]):
        input_tensor = convert_to_tensor(input_tensor, name="input_tensor")
        row_shape = input_tensor.shape[1:] if input_tensor.shape.rank else TensorShape(None)
        if element_shape is not None:
            row_shape = row_shape.merge_with(as_shape(element_shape))
        if not row_shape.is_fully_defined():
            raise ValueError(
                "Either `input_tensor` must have a fully defined shape "
                "or `element_shape` must be specified"
            )
        if shuffle:
            input_tensor = random_shuffle(input_tensor, seed=seed)
        input_tensor = limit_epochs(input_tensor, num_epochs)
        queue = FIFOQueue(
            capacity=capacity,
            dtypes=[input_tensor.dtype],
            shapes=[row_shape],
            shared_name=shared_name,
            name=name,  # None: TF1 names it after the op type, FIFOQueueV2
        )
        enqueue = queue.enqueue_many([input_tensor])
        add_queue_runner(QueueRunner(queue, [enqueue], cancel_op=cancel_op))
        if summary_name is not None:
            scalar_summary(summary_name, cast(queue.size(), dtypes.float32) * (1.0 / capacity))
        return queue


def string_input_producer(
    string_tensor: Any,
    num_epochs: int | None = None,
    shuffle: bool = True,
    seed: int | None = None,
    capacity: int = 32,
    shared_name: str | None = None,
    name: str | None = None,
    cancel_op: Any = None,
) -> FIFOQueue:
    """A queue of strings (usually file names) for a reader, ``num_epochs`` times over
    (for ever when ``None``), shuffled per epoch when ``shuffle``.

    Raises:
        ValueError: ``string_tensor`` is an empty list.
    """
    not_null = "string_input_producer requires a non-null input tensor"
    if not isinstance(string_tensor, Tensor) and not len(string_tensor):
        raise ValueError(not_null)
    with name_scope(name, "input_producer", [string_tensor]) as scope:
        string_tensor = convert_to_tensor(string_tensor, dtype=dtypes.string)
        with control_dependencies([Assert(greater(size(string_tensor), 0), [not_null])]):
            string_tensor = identity(string_tensor)
        return input_producer(
            string_tensor,
            element_shape=[],
            num_epochs=num_epochs,
            shuffle=shuffle,
            seed=seed,
            capacity=capacity,
            shared_name=shared_name,
            name=scope,
            summary_name=f"fraction_of_{capacity}_full",
            cancel_op=cancel_op,
        )


def range_input_producer(
    limit: Any,
    num_epochs: int | None = None,
    shuffle: bool = True,
    seed: int | None = None,
    capacity: int = 32,
    shared_name: str | None = None,
    name: str | None = None,
) -> FIFOQueue:
    """A queue of the integers ``0 .. limit - 1``, ``num_epochs`` times over."""
    with name_scope(name, "input_producer", [limit]) as scope:
        return input_producer(
            range_(limit),
            [],
            num_epochs,
            shuffle,
            seed,
            capacity,
            shared_name,
            f"fraction_of_{capacity}_full",
            scope,
        )


def slice_input_producer(
    tensor_list: Sequence[Any],
    num_epochs: int | None = None,
    shuffle: bool = True,
    seed: int | None = None,
    capacity: int = 32,
    shared_name: str | None = None,
    name: str | None = None,
) -> list[Tensor]:
    """One row of each tensor in ``tensor_list`` (the same row of each) per evaluation,
    rows in order or shuffled per epoch, ``num_epochs`` times over."""
    with name_scope(name, "input_producer", list(tensor_list)):
        tensors = [convert_to_tensor(t) for t in tensor_list]
        if not tensors:
            raise ValueError("Expected at least one tensor in slice_input_producer().")
        queue = range_input_producer(
            shape(tensors[0])[0],
            num_epochs=num_epochs,
            shuffle=shuffle,
            seed=seed,
            capacity=capacity,
            shared_name=shared_name,
        )
        index = queue.dequeue()
        return [gather(t, index) for t in tensors]
