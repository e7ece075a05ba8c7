"""``tf.queue``: TF 1.15's queue classes (``ops/queue/queues.py``)."""
# ruff: noqa: I001 - this module is a public namespace: explicit re-exports only

from .._util.missing_names import missing_name_hook
from ..ops.queue.priority import PriorityQueue as PriorityQueue
from ..ops.queue.queues import (
    FIFOQueue as FIFOQueue,
    PaddingFIFOQueue as PaddingFIFOQueue,
    QueueBase as QueueBase,
    RandomShuffleQueue as RandomShuffleQueue,
)

__getattr__ = missing_name_hook("queue", __name__)

del missing_name_hook  # not a TF1 name: keep it out of the namespace
