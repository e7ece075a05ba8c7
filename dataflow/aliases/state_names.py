"""TF1's top-level names for stateful things (issue 32): ``tf.PriorityQueue``; explicit
re-exports only, taken whole by ``dataflow/__init__.py``."""

from ..ops.queue.priority import PriorityQueue as PriorityQueue

__all__ = [
    "PriorityQueue",
]
