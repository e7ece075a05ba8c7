"""``tf.train``: optimizers, savers, queue runners, hooks, cluster specs (layer 3).

Explicit re-exports only; each block belongs to one module.
"""

# ruff: noqa: F401, I001 - public namespace

# --- coordinator.py, queue_runner.py -----------------------------------------------------
from .coordinator import Coordinator as Coordinator
from .queue_runner import (
    QueueRunner as QueueRunner,
    add_queue_runner as add_queue_runner,
    start_queue_runners as start_queue_runners,
)
