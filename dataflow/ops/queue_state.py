"""The state behind a queue op: a bounded, blocking, closable buffer of tuples.

One ``QueueState`` lives in the resource store of the queue's device (created the first
time a plan using the queue is bound there); enqueue and dequeue ops are colocated with
the queue handle, so on a cluster producers and consumers on any worker reach it through
ordinary tensor transfers, and the blocking happens on the queue's worker.

Semantics (TF1's):
* ``enqueue`` blocks while the queue is full; on a closed queue it raises
  ``CancelledError``.
* ``dequeue`` blocks while the queue is empty (a ``RandomShuffleQueue`` also keeps
  ``min_after_dequeue`` elements until closed); on a closed, drained queue it raises
  ``OutOfRangeError``. ``dequeue_many(n)`` needs ``n`` elements (raises
  ``OutOfRangeError`` when closed with fewer, leaving them queued); ``dequeue_up_to(n)``
  returns what is left once closed.
* ``close(cancel_pending_enqueues=True)`` also fails blocked enqueues.
* ``cancel_all()`` (the embedded session closing) wakes every blocked call with
  ``CancelledError``, so no step hangs.

Attempts are served in arrival order, as TF's queues serve them: enqueues wait in one
line and dequeues in another, and only the attempt at the head of its line touches the
buffer. So an ``enqueue_many`` that finds the queue full keeps its place, and its rows
go in together, in order, however many producer threads call at once; and a
``dequeue_many(n)`` at the head takes its elements once they are all there, or, when the
buffer fills up first, what is there, holding it until it has ``n`` (so ``n`` may exceed
the capacity, as in TF). If it gives up (the queue closed with too few, a deadline, a
cancellation) it puts what it took back at the front, so the queue is as it was.
Each waiting attempt waits on a condition of its own (all on the queue's lock), and only
the attempt whose turn it is gets woken, and only when it can go on: an enqueue wakes
the head dequeuer when its batch is there (or the buffer is full), a dequeue wakes the
head enqueuer, an attempt leaving wakes the next. No thundering herd of producer
threads per element.

Blocking calls take an optional ``waiter`` (the kernel context): ``waiter.will_block()``
is called once before a call first waits (a Dask worker then frees the task's thread
slot, so the step that would unblock it can run on the same worker), and
``waiter.cancelled()`` is checked whenever the call wakes (a cluster session closing,
or a step past its deadline, cancels only its own steps: the queue itself lives on and
other sessions keep using it). ``wake()`` wakes every waiter to re-check. A waiter may
also offer ``deadline()`` (a ``time.monotonic()`` value or ``None``: the embedded
session's ``RunOptions(timeout_in_ms=...)``); a call still waiting then raises
``DeadlineExceededError``. A dequeue takes its elements at once, when all are there,
and an ``enqueue`` adds its element at once, so a timed-out dequeue or enqueue leaves
the queue as it was; an ``enqueue_many`` keeps the elements it had room for, as TF1's.

Worked example (capacity 2): thread A's ``enqueue_many([a1, a2, a3])`` puts ``a1, a2``
and waits at the head of the enqueue line; thread B's ``enqueue_many([b1, b2])`` waits
behind it. A ``dequeue_many(3)`` takes ``a1, a2`` (A then puts ``a3``; B is next) and
then ``a3``: it returns ``[a1, a2, a3]``, never ``[a1, a2, b1]``.

A plain class with one condition variable; no Dask, testable alone.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..framework import errors


@dataclass(frozen=True, slots=True)
class QueueSignature:
    """What a queue was declared as; a queue shared by name must be declared alike."""

    kind: str
    dtypes: tuple[str, ...]
    shapes: tuple[tuple[int | None, ...], ...] | None
    capacity: int | None
    min_after_dequeue: int = 0

    def __str__(self) -> str:
        shapes = (
            "unspecified"
            if self.shapes is None
            else "["
            + ", ".join(
                "[" + ",".join("?" if d is None else str(d) for d in s) + "]" for s in self.shapes
            )
            + "]"
        )
        text = (
            f"{self.kind} with component types [{', '.join(self.dtypes)}], component "
            f"shapes {shapes}, capacity {self.capacity or 'unbounded'}"
        )
        if self.kind == "RandomShuffleQueue":
            text += f", min_after_dequeue {self.min_after_dequeue}"
        return text


_NOBODY = float("inf")  # no dequeue attempt is waiting


class _Line:
    """Attempts waiting their turn: tickets in arrival order (guarded by the queue's
    lock). An attempt that gives up before its turn is skipped when its turn comes."""

    __slots__ = ("next", "serving", "gone", "waiting")

    def __init__(self) -> None:
        self.next = 0  # the ticket the next attempt gets
        self.serving = 0  # the ticket whose attempt may touch the buffer
        self.gone: set[int] = set()  # tickets that left before their turn
        self.waiting: dict[int, threading.Condition] = {}  # each waiting attempt's own

    def notify_head(self) -> None:
        """Wakes the attempt whose turn it is (only it can act), if it waits."""
        cond = self.waiting.get(self.serving)
        if cond is not None:
            cond.notify()

    def notify_all(self) -> None:
        for cond in self.waiting.values():
            cond.notify()

    def join(self) -> int:
        self.next += 1
        return self.next - 1

    def leave(self, ticket: int) -> None:
        self.waiting.pop(ticket, None)
        if ticket != self.serving:
            self.gone.add(ticket)
            return
        self.serving += 1
        while self.serving in self.gone:
            self.gone.discard(self.serving)
            self.serving += 1


class QueueState:
    def __init__(
        self,
        name: str,
        capacity: int,
        num_components: int,
        shuffle: bool = False,
        min_after_dequeue: int = 0,
        seed: int | None = None,
        padded: bool = False,
    ) -> None:
        self.name = name
        self.capacity = capacity if capacity and capacity > 0 else None
        self.num_components = num_components
        self.shuffle = shuffle
        self.min_after_dequeue = min_after_dequeue
        self.padded = padded
        self._items: deque | list = [] if shuffle else deque()
        self._lock = threading.Lock()
        # What the head dequeue attempt waits for: this many elements in the buffer (so
        # an enqueue wakes it only when it can finish, not for every element).
        self._dequeue_need = _NOBODY
        self._closed = False
        self._cancelled = False
        self._cancel_enqueues = False
        self._rng = np.random.default_rng(seed)
        self._enqueue_line = _Line()
        self._dequeue_line = _Line()

    # --- helpers ---------------------------------------------------------------------
    def _check_cancelled(self, waiter: Any) -> None:
        if self._cancelled or (waiter is not None and waiter.cancelled()):
            raise errors.CancelledError(
                None, None, f"Queue '{self.name}': session closed, pending operation cancelled"
            )

    def _wait(self, waiter: Any, blocked: bool, what: str, line: _Line, ticket: int) -> bool:
        """Waits on the condition (held); ``blocked`` says whether this call waited
        before. Returns ``True``. Past the step's deadline (``waiter.deadline()``), raises
        ``DeadlineExceededError`` instead: the caller has changed nothing yet."""
        if waiter is not None and not blocked:
            waiter.will_block()
        deadline = waiter.deadline() if waiter is not None and hasattr(waiter, "deadline") else None
        cond = line.waiting.get(ticket)
        if cond is None:
            cond = line.waiting[ticket] = threading.Condition(self._lock)
        if deadline is None:
            cond.wait()
            return True
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise errors.DeadlineExceededError(
                None,
                None,
                f"Timed out waiting for notification: the step passed its "
                f"deadline while {what} queue '{self.name}' ({len(self._items)} elements, "
                f"capacity {self.capacity})",
            )
        cond.wait(remaining)
        return True

    def _full(self) -> bool:
        return self.capacity is not None and len(self._items) >= self.capacity

    def _pop_many(self, k: int) -> list[tuple]:
        """Removes ``k`` elements: the oldest, or (shuffling) ``k`` drawn at random."""
        items = self._items
        if k <= 0:
            return []
        if not self.shuffle:
            assert isinstance(items, deque)  # a FIFO queue keeps a deque (__init__)
            return [items.popleft() for _ in range(k)]
        assert isinstance(items, list)
        # One draw for all k: index i is uniform over the len(items) - i elements left.
        draws = self._rng.integers(0, np.arange(len(items), len(items) - k, -1))
        out = []
        for index in draws.tolist():
            items[index], items[-1] = items[-1], items[index]
            out.append(items.pop())
        return out

    # --- operations ------------------------------------------------------------------
    def enqueue(self, components: tuple, waiter: Any = None) -> None:
        self._put([components], waiter)

    def enqueue_many(self, components: tuple, waiter: Any = None) -> None:
        n = len(components[0]) if components else 0
        for c in components:
            if len(c) != n:
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"enqueue_many into '{self.name}': components have "
                    f"different first dimensions ({n} and {len(c)})",
                )
        self._put([tuple(c[i] for c in components) for i in range(n)], waiter)

    def _put(self, elements: list, waiter: Any) -> None:
        """Appends ``elements`` in order, as many at a time as there is room for, once
        every earlier enqueue attempt is done (see the module doc)."""
        done, blocked = 0, False
        with self._lock:
            ticket = self._enqueue_line.join()
            try:
                while done < len(elements):
                    self._check_cancelled(waiter)
                    if self._closed:
                        if blocked and self._cancel_enqueues:
                            raise errors.CancelledError(
                                None,
                                None,
                                f"Queue '{self.name}' was closed with pending enqueues cancelled.",
                            )
                        raise errors.CancelledError(None, None, f"Queue '{self.name}' is closed.")
                    if self._enqueue_line.serving != ticket or self._full():
                        blocked = self._wait(
                            waiter, blocked, "enqueuing into the full", self._enqueue_line, ticket
                        )
                        continue
                    room = (
                        len(elements) - done
                        if self.capacity is None
                        else self.capacity - len(self._items)
                    )
                    take = min(room, len(elements) - done)
                    self._items.extend(elements[done : done + take])
                    done += take
                    if len(self._items) >= self._dequeue_need or self._full():
                        self._dequeue_line.notify_head()
            finally:
                self._enqueue_line.leave(ticket)
                self._enqueue_line.notify_head()

    def dequeue_many(self, n: int, allow_smaller: bool = False, waiter: Any = None) -> list[tuple]:
        """Takes ``n`` elements (fewer, once closed, with ``allow_smaller``), in turn.

        The head attempt takes its elements at once when they are all there; while it
        waits it takes what is there only when the buffer is full (the enqueuers could
        not go on otherwise: ``n`` may exceed the capacity) or closed.
        """
        blocked = False
        taken: list[tuple] = []
        with self._lock:
            ticket = self._dequeue_line.join()
            try:
                while True:
                    self._check_cancelled(waiter)
                    if self._dequeue_line.serving == ticket:
                        keep = (
                            0 if self._closed else (self.min_after_dequeue if self.shuffle else 0)
                        )
                        need = n - len(taken) + keep
                        if len(self._items) >= need or self._closed or self._full():
                            taken += self._pop_many(min(n - len(taken), len(self._items) - keep))
                            self._enqueue_line.notify_head()  # room for the enqueuers
                        if len(taken) == n:
                            out, taken = taken, []
                            return out
                        if self._closed:
                            if allow_smaller and taken:
                                out, taken = taken, []
                                return out
                            raise errors.OutOfRangeError(
                                None,
                                None,
                                f"Queue '{self.name}' is closed and has insufficient "
                                f"elements (requested {n}, current size "
                                f"{len(self._items) + len(taken)})",
                            )
                        self._dequeue_need = n - len(taken) + keep
                    blocked = self._wait(
                        waiter, blocked, f"dequeuing {n} from the", self._dequeue_line, ticket
                    )
            finally:
                if self._dequeue_line.serving == ticket:
                    self._dequeue_need = _NOBODY
                if taken:  # gave up: the elements go back to the front, in order
                    if self.shuffle:
                        self._items.extend(taken)
                    else:
                        assert isinstance(self._items, deque)
                        self._items.extendleft(reversed(taken))
                self._dequeue_line.leave(ticket)
                self._dequeue_line.notify_head()  # the next attempt's turn

    def close(self, cancel_pending_enqueues: bool = False) -> None:
        with self._lock:
            self._closed = True
            self._cancel_enqueues = cancel_pending_enqueues
            self._enqueue_line.notify_all()
            self._dequeue_line.notify_all()

    def cancel_all(self) -> None:
        with self._lock:
            self._cancelled = True
            self._enqueue_line.notify_all()
            self._dequeue_line.notify_all()

    def wake(self) -> None:
        """Wakes every blocked call to re-check whether its step was cancelled."""
        with self._lock:
            self._enqueue_line.notify_all()
            self._dequeue_line.notify_all()

    def size(self) -> int:
        with self._lock:
            return len(self._items)

    @property
    def closed(self) -> bool:
        return self._closed
