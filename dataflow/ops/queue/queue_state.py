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
* A ``PriorityQueue``'s buffer (``priority=True``) is a binary heap of
  ``(priority, arrival, element)`` entries, the priority being the element's first
  component (an int64 scalar): dequeues take the smallest priority first, and equal
  priorities in arrival order (TF leaves ties unordered; first-in first-out is one of
  its orders). Elements taken back by a dequeue that gives up keep their arrival number.

Attempts are served in arrival order, as TF's queues serve them: enqueues wait in one
line and dequeues in another, and only the attempt at the head of its line touches the
buffer. So an ``enqueue_many`` that finds the queue full keeps its place, and its rows
go in together, in order, however many producer threads call at once; and a
``dequeue_many(n)`` at the head takes its elements once they are all there, or, when the
buffer fills up first, what is there, holding it until it has ``n`` (so ``n`` may exceed
the capacity, as in TF). If it gives up (the queue closed with too few, a deadline, a
cancellation) it puts what it took back at the front, so the queue is as it was.
Contention between producer threads is kept cheap, since they run Python under one
interpreter lock: a waiting attempt blocks on a gate of its own and only the attempt
whose turn it is is woken, and only when it can go on (an enqueue wakes the head
dequeuer when its batch is there or the buffer is full); a waiting enqueue leaves its
elements in the line and whoever changes the queue next puts them in for it, in turn
(so a line drains at the pace of running threads, not of waking sleeping ones); and the
queue's lock is taken spinning (``_Spinning``), not blocking.

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

import heapq
import itertools
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...framework import errors


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


class _Spinning:
    """Takes ``lock`` without blocking in it: while another thread holds it, yields the
    interpreter (``time.sleep(0)``) and tries again. A thread blocked in a contended
    ``Lock.acquire`` must win the interpreter lock back once the lock is released, and
    producer threads doing that made one another three times slower than one thread
    alone (a lock convoy); yielding lets the holder finish its few microseconds. Four
    threads enqueuing parsed records: 16k records/s blocking, 44k spinning (one: 50k)."""

    __slots__ = ("_lock",)

    def __init__(self, lock: threading.Lock) -> None:
        self._lock = lock

    def acquire(self) -> None:
        lock = self._lock
        while not lock.acquire(False):
            time.sleep(0)

    def __enter__(self) -> None:
        self.acquire()

    def __exit__(self, *exc: object) -> None:
        self._lock.release()


class _Enqueue:
    """An enqueue attempt: its elements and how many of them are in the queue."""

    __slots__ = ("elements", "done", "left")

    def __init__(self, elements: list) -> None:
        self.elements = elements
        self.done = 0
        self.left = False  # completed and taken out of the line by another thread


class _Line:
    """Attempts waiting their turn: tickets in arrival order (guarded by the queue's
    lock). An attempt that gives up before its turn is skipped when its turn comes."""

    __slots__ = ("next", "serving", "gone", "waiting", "pending")

    def __init__(self) -> None:
        self.next = 0  # the ticket the next attempt gets
        self.serving = 0  # the ticket whose attempt may touch the buffer
        self.gone: set[int] = set()  # tickets that left before their turn
        # Each waiting attempt's gate: a lock it holds and blocks on until it is opened.
        self.waiting: dict[int, threading.Lock] = {}
        self.pending: dict[int, _Enqueue] = {}  # waiting enqueues, served by others

    def notify_head(self) -> None:
        """Wakes the attempt whose turn it is (only it can act), if it waits."""
        gate = self.waiting.get(self.serving)
        if gate is not None and gate.locked():
            gate.release()

    def notify_all(self) -> None:
        for gate in self.waiting.values():
            if gate.locked():
                gate.release()

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
        priority: bool = False,
    ) -> None:
        self.name = name
        self.capacity = capacity if capacity and capacity > 0 else None
        self.num_components = num_components
        self.shuffle = shuffle
        self.min_after_dequeue = min_after_dequeue
        self.padded = padded
        self.priority = priority
        self._arrivals = itertools.count()  # a priority queue's tie-breaker
        self._items: deque | list = [] if shuffle or priority else deque()
        self._lock = threading.Lock()
        self._spin = _Spinning(self._lock)  # how enqueues and dequeues take it
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
        """Waits (the queue's lock held, released meanwhile) until ``line`` wakes this
        attempt; ``blocked`` says whether this call waited before. Returns ``True``. Past
        the step's deadline (``waiter.deadline()``), raises ``DeadlineExceededError``
        instead: the caller has changed nothing yet.

        A waiting attempt blocks on a gate of its own, a lock its waker releases (not a
        ``threading.Condition``, whose wake-up takes the queue's lock back blocking, the
        convoy ``_Spinning`` avoids), then takes the queue's lock back spinning."""
        if waiter is not None and not blocked:
            waiter.will_block()
        deadline = waiter.deadline() if waiter is not None and hasattr(waiter, "deadline") else None
        remaining = None if deadline is None else deadline - time.monotonic()
        if remaining is not None and remaining <= 0:
            raise errors.DeadlineExceededError(
                None,
                None,
                f"Timed out waiting for notification: the step passed its "
                f"deadline while {what} queue '{self.name}' ({len(self._items)} elements, "
                f"capacity {self.capacity})",
            )
        gate = threading.Lock()
        gate.acquire()
        line.waiting[ticket] = gate
        self._lock.release()
        try:
            gate.acquire(timeout=-1 if remaining is None else remaining)
        finally:
            self._spin.acquire()
        return True

    def _full(self) -> bool:
        return self.capacity is not None and len(self._items) >= self.capacity

    def _pop_many(self, k: int) -> list[tuple]:
        """Removes ``k`` elements: the oldest, or (shuffling) ``k`` drawn at random."""
        items = self._items
        if k <= 0:
            return []
        if self.priority:
            assert isinstance(items, list)  # a heap of (priority, arrival, element)
            return [heapq.heappop(items) for _ in range(k)]
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
        # ``c[i, ...]`` is an array even for a row of a vector (``c[i]`` of strings would
        # be a bare ``bytes``, which numpy later reads as a fixed-width ``S`` array).
        self._put([tuple(c[i, ...] for c in components) for i in range(n)], waiter)

    def _put(self, elements: list, waiter: Any) -> None:
        """Appends ``elements`` in order, as many at a time as there is room for, once
        every earlier enqueue attempt is done (see the module doc). An attempt that has
        to wait is left in the line with its elements, and whoever changes the queue
        next puts them in for it when it is its turn (``_serve_enqueues``): the line
        drains at the pace of the running threads, not of waking sleeping ones."""
        blocked = False
        line = self._enqueue_line
        attempt = _Enqueue(elements)
        with self._spin:
            ticket = line.join()
            try:
                while attempt.done < len(elements):
                    self._check_cancelled(waiter)
                    if self._closed:
                        if blocked and self._cancel_enqueues:
                            raise errors.CancelledError(
                                None,
                                None,
                                f"Queue '{self.name}' was closed with pending enqueues cancelled.",
                            )
                        raise errors.CancelledError(None, None, f"Queue '{self.name}' is closed.")
                    if line.serving != ticket or self._full():
                        line.pending[ticket] = attempt
                        blocked = self._wait(
                            waiter, blocked, "enqueuing into the full", line, ticket
                        )
                        continue
                    self._put_some(attempt)
            finally:
                if not attempt.left:
                    line.pending.pop(ticket, None)
                    line.leave(ticket)
                self._serve_enqueues()

    def _put_some(self, attempt: _Enqueue) -> None:
        """Puts as many of ``attempt``'s remaining elements as there is room for."""
        elements, done = attempt.elements, attempt.done
        room = len(elements) - done if self.capacity is None else self.capacity - len(self._items)
        take = min(room, len(elements) - done)
        if take <= 0:
            return
        if self.priority:
            items = self._items
            assert isinstance(items, list)
            for element in elements[done : done + take]:
                heapq.heappush(items, (int(element[0]), next(self._arrivals), element))
        else:
            self._items.extend(elements[done : done + take])
        attempt.done = done + take
        if len(self._items) >= self._dequeue_need or self._full():
            self._dequeue_line.notify_head()

    def _serve_enqueues(self) -> None:
        """Puts in the elements of the waiting attempts whose turn it is, in order, while
        there is room, and wakes each attempt it completes (the queue's lock held)."""
        line = self._enqueue_line
        while not (self._closed or self._cancelled):
            ticket = line.serving
            attempt = line.pending.get(ticket)
            if attempt is None:
                line.notify_head()  # an attempt not waiting yet, or none
                return
            self._put_some(attempt)
            if attempt.done < len(attempt.elements):
                return  # full: it stays at the head
            del line.pending[ticket]
            attempt.left = True
            gate = line.waiting.get(ticket)
            line.leave(ticket)
            if gate is not None and gate.locked():
                gate.release()

    def dequeue_many(self, n: int, allow_smaller: bool = False, waiter: Any = None) -> list[tuple]:
        """Takes ``n`` elements (fewer, once closed, with ``allow_smaller``), in turn.

        The head attempt takes its elements at once when they are all there; while it
        waits it takes what is there only when the buffer is full (the enqueuers could
        not go on otherwise: ``n`` may exceed the capacity) or closed.
        """
        blocked = False
        taken: list[tuple] = []
        with self._spin:
            ticket = self._dequeue_line.join()
            try:
                while True:
                    self._check_cancelled(waiter)
                    if self._dequeue_line.serving == ticket:
                        keep = (
                            0 if self._closed else (self.min_after_dequeue if self.shuffle else 0)
                        )
                        need = n - len(taken) + keep
                        ready = len(self._items) >= need or self._closed or self._full()
                        if ready and len(taken) < n and len(self._items) > keep:
                            taken += self._pop_many(min(n - len(taken), len(self._items) - keep))
                            # Room for the waiting enqueuers, which may fill it at once:
                            # look again before waiting.
                            self._serve_enqueues()
                            continue
                        if len(taken) == n:
                            out, taken = taken, []
                            return self._elements(out)
                        if self._closed:
                            if allow_smaller and taken:
                                out, taken = taken, []
                                return self._elements(out)
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
                    if self.priority:
                        assert isinstance(self._items, list)  # a heap (_pop_many)
                        for entry in taken:
                            heapq.heappush(self._items, entry)
                    elif self.shuffle:
                        self._items.extend(taken)
                    else:
                        assert isinstance(self._items, deque)
                        self._items.extendleft(reversed(taken))
                self._dequeue_line.leave(ticket)
                self._dequeue_line.notify_head()  # the next attempt's turn

    def _elements(self, taken: list) -> list[tuple]:
        """The elements of what ``_pop_many`` took (a priority queue's heap entries)."""
        return [entry[2] for entry in taken] if self.priority else taken

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

    def nbytes(self) -> int:
        """Bytes the buffered elements' components hold (the dashboard's memory view)."""
        with self._lock:
            items = self._elements(list(self._items))
        return sum(getattr(c, "nbytes", 0) for item in items for c in item)

    @property
    def closed(self) -> bool:
        return self._closed
