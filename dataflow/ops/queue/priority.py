"""``tf.PriorityQueue``: a queue whose elements leave in ascending order of an int64
priority, their first component.

It is one of the queues of ``queue/queues.py`` (the same handle, enqueue and dequeue
ops, with ``kind='priority'``); only its buffer differs, a heap in
``queue/queue_state.py``. The class here adds TF1's constructor: ``types`` and
``shapes`` name the components after the priority, which the queue prepends.
"""

from __future__ import annotations

from typing import Any

from ...framework import dtypes as dtypes_module
from ...framework.tensor_shape import as_shape
from .queues import QueueBase


class PriorityQueue(QueueBase):
    """A bounded queue dequeuing its elements in ascending order of priority.

    Every element starts with its priority, an int64 scalar (a vector of them for
    ``enqueue_many``), followed by components of ``types``; dequeues return the
    priority first too. Elements of equal priority leave in the order they came.

    Args:
        capacity: the most elements held; enqueues block while full.
        types: the dtypes of the components after the priority.
        shapes: optional fully defined shapes of those components (needed for
            ``dequeue_many`` and ``dequeue_up_to``), or ``None``.
        names: optional names of all components, the priority's included (then
            elements are dicts).
        shared_name: share the queue under this name.
        name: the op name.
    """

    def __init__(
        self,
        capacity: int,
        types: Any,
        shapes: Any = None,
        names: Any = None,
        shared_name: str | None = None,
        name: str | None = "priority_queue",
    ):
        types = list(types) if isinstance(types, (list, tuple)) else [types]
        if shapes is not None:
            shapes = [as_shape(s) for s in shapes]
            if len(shapes) != len(types):
                raise ValueError(
                    f"shapes must match dtypes: got {len(shapes)} shapes for {len(types)} types"
                )
        if names is not None and len(names) != len(types) + 1:
            raise ValueError(
                f"Queue must have the same number of names as dtypes (the priority "
                f"included): got {len(names)} names for {len(types) + 1} components"
            )
        super().__init__(
            "priority",
            capacity,
            [dtypes_module.int64, *types],
            [as_shape([]), *shapes] if shapes else None,
            names,
            shared_name,
            name,
        )
