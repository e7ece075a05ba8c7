"""The state behind a ``ConditionalAccumulator``: a sum of fresh gradients and a count.

Semantics (TF1's ``ConditionalAccumulator``, what ``SyncReplicasOptimizer`` builds on):

* ``apply_grad(grad, local_step)`` adds ``grad`` to the sum, unless ``local_step`` is
  below the accumulator's global step: a gradient computed from an older version of
  the variables is stale and dropped (logged, not an error);
* ``take_grad(num_required)`` waits until at least ``num_required`` gradients are in,
  then returns their mean (or sum, with ``reduction_type='SUM'``), empties the
  accumulator and advances its global step by one, so the gradients still in flight
  for the step just taken become stale;
* ``set_global_step(step)`` moves the global step (the chief does this once, to the
  training's global step, when it starts).

Blocking follows the queues' protocol (``queue/queue_state.py``): a waiter's ``will_block()``
once before waiting, ``cancelled()`` on every wake, ``deadline()`` if offered; and
``cancel_all()`` (the store being cleared) fails every waiting call.

A plain class with one condition variable; no Dask, testable alone.

Example: global step 0; ``apply_grad(a, 0)``, ``apply_grad(b, 0)``, ``take_grad(2)``
returns ``(a + b) / 2`` and the global step becomes 1; a late ``apply_grad(c, 0)`` is
then dropped.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from ...framework import errors

logger = logging.getLogger(__name__)


class AccumulatorState:
    def __init__(self, name: str, shape: tuple | None, reduction: str) -> None:
        self.name = name
        self.shape = shape  # known dims, ``None`` per unknown one; ``None``: any shape
        self.reduction = reduction
        self.global_step = 0
        self._sum: Any = None
        self._count = 0
        self._cancelled = False
        self._interrupts = 0  # bumped by interrupt_takes(): waiting takes give up
        self._cond = threading.Condition()

    def _check_shape(self, grad: Any) -> None:
        if self.shape is None:
            return
        got = tuple(grad.shape)
        if len(got) != len(self.shape) or any(
            want is not None and want != have for want, have in zip(self.shape, got)
        ):
            raise errors.InvalidArgumentError(
                None,
                None,
                f"Shape mismatch: accumulator '{self.name}' holds gradients of shape "
                f"{list(self.shape)}, got {list(got)}",
            )

    def apply_grad(self, grad: Any, local_step: int) -> bool:
        """Adds ``grad`` unless it is stale; returns whether it was added. As TF's, a
        stale gradient is dropped before it is checked."""
        with self._cond:
            if local_step < self.global_step:
                logger.debug(
                    "accumulator %s dropped a stale gradient (local step %d < global step %d)",
                    self.name,
                    local_step,
                    self.global_step,
                )
                return False
            self._check_shape(grad)
            self._add(grad)
            self._count += 1
            self._cond.notify_all()
            return True

    def _add(self, grad: Any) -> None:
        """Adds a fresh gradient to the sum (the lock held); a subclass (the sparse
        accumulator) keeps another kind of sum."""
        if self._sum is None:
            self._sum = grad.copy()
            return
        if grad.shape != self._sum.shape:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"Shape mismatch: accumulator '{self.name}' has accumulated "
                f"{list(self._sum.shape)}, got {list(grad.shape)}",
            )
        self._sum += grad

    def _result(self) -> Any:
        """What ``take_grad`` returns: the mean (or the sum) of the gradients in."""
        return self._sum / self._count if self.reduction == "MEAN" else self._sum

    def take_grad(self, num_required: int, waiter: Any = None) -> Any:
        """The mean (or sum) of at least ``num_required`` gradients, once they are in."""
        if num_required < 1:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"Argument num_required must be positive, but was {num_required}",
            )
        blocked = False
        with self._cond:
            interrupts = self._interrupts
            while self._count < num_required:
                if (
                    self._cancelled
                    or interrupts != self._interrupts
                    or (waiter is not None and waiter.cancelled())
                ):
                    raise errors.CancelledError(
                        None,
                        None,
                        f"Accumulator '{self.name}': session closed, take_grad cancelled",
                    )
                if waiter is not None and not blocked:
                    waiter.will_block()
                blocked = True
                self._wait(waiter)
            total = self._result()
            self._sum, self._count = None, 0
            self.global_step += 1
            return total

    def _wait(self, waiter: Any) -> None:
        deadline = waiter.deadline() if waiter is not None and hasattr(waiter, "deadline") else None
        if deadline is None:
            # Wake now and then to notice a cancelled step (``waiter.cancelled()``).
            self._cond.wait(0.5 if waiter is not None else None)
            return
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise errors.DeadlineExceededError(
                None,
                None,
                f"Timed out waiting for gradients in accumulator '{self.name}' "
                f"({self._count} accumulated)",
            )
        self._cond.wait(min(remaining, 0.5))

    def set_global_step(self, step: int) -> None:
        with self._cond:
            if step < self.global_step:
                logger.warning(
                    "accumulator %s: global step moved back from %d to %d",
                    self.name,
                    self.global_step,
                    step,
                )
            self.global_step = step

    def num_accumulated(self) -> int:
        with self._cond:
            return self._count

    def interrupt_takes(self) -> None:
        """Fails the ``take_grad`` calls waiting now with ``CancelledError``; later
        calls wait as usual (a chief stopping its update thread, not the accumulator)."""
        with self._cond:
            self._interrupts += 1
            self._cond.notify_all()

    def cancel_all(self) -> None:
        """Wakes every waiting ``take_grad`` with ``CancelledError`` (the store is being
        cleared: a session closing, ``Session.reset``)."""
        with self._cond:
            self._cancelled = True
            self._cond.notify_all()
