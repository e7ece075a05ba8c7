"""Which replica reads which partition: one book of claims per collection and epoch.

Every replica reading a ``from_dask`` collection (iterators on several workers of one
graph, or the same script in several processes) asks one ``ShareBook`` for its
partitions, one at a time, so that in each epoch every partition is read by exactly one
replica, whatever their speeds:

* ``begin(name, replica, count, local, seed)`` starts the replica's next pass and returns
  its epoch: the oldest epoch after the replica's previous one that still has unclaimed
  partitions (a straggler joins the epoch the others are finishing), or a new one. It
  also records the partitions in the replica's own worker's memory.
* ``claim(name, epoch, replica)`` hands out the next partition, preferring, in the
  epoch's order (the partitions' own order, or a permutation seeded by ``(seed,
  epoch)`` when shuffling): one in the replica's memory; else one that no other replica
  of the epoch holds (partitions on workers without a replica: a ps, a lost worker);
  else any left (the replica has run out of its own and helps a slower one). ``None``
  ends the replica's pass.

So each replica reads the partitions that live on its worker, and the rest are shared
out as replicas become free. On a cluster the book lives in the scheduler process
(``call`` runs ``book_call`` there through ``Client.run_on_scheduler``, which runs on the
scheduler's event loop one call at a time, so the book needs no lock) and survives the
loss of any worker; in an embedded session each op keeps its own. State is kept per
collection name (the token of its keys, or the ``shared_name`` given to ``from_dask``)
and per replica (its device and op name), and epochs nobody can still join are dropped.

A replica whose own worker is lost loses the rows it had claimed but not yet returned:
the book counts partitions, not rows. The loss of a worker that only holds partitions
costs nothing: they are recomputed (or re-read) when claimed.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np


class _Epoch:
    def __init__(self, order: list[int]):
        self.order = order
        self.unclaimed = set(order)
        self.local: dict[str, set[int]] = {}


class _Book:
    def __init__(self, count: int):
        self.count = count
        self.epochs: dict[int, _Epoch] = {}
        self.last: dict[str, int] = {}  # replica -> the epoch of its latest pass


def _order(count: int, seed: int | None, epoch: int) -> list[int]:
    """The order an epoch hands partitions out in (set by the replica opening it)."""
    if seed is None:
        return list(range(count))
    return np.random.default_rng([seed, epoch]).permutation(count).tolist()


class ShareBook:
    """The claims of every collection read through ``from_dask`` (module docstring)."""

    def __init__(self) -> None:
        self._books: dict[str, _Book] = {}

    def begin(self, name: str, replica: str, count: int, local: list[int], seed: int | None) -> int:
        book = self._books.get(name)
        if book is None or book.count != count:
            book = self._books[name] = _Book(count)
        previous = book.last.get(replica, -1)
        open_epochs = [e for e, ep in book.epochs.items() if e > previous and ep.unclaimed]
        if open_epochs:
            epoch = min(open_epochs)
        else:
            epoch = max([previous, *book.epochs]) + 1
            book.epochs[epoch] = _Epoch(_order(count, seed, epoch))
        book.epochs[epoch].local[replica] = set(local)
        book.last[replica] = epoch
        # An epoch fully claimed that every known replica has passed is done.
        oldest = min(book.last.values())
        for e in [e for e, ep in book.epochs.items() if e < oldest and not ep.unclaimed]:
            del book.epochs[e]
        return epoch

    def claim(self, name: str, epoch: int, replica: str) -> int | None:
        book = self._books.get(name)
        ep = book.epochs.get(epoch) if book is not None else None
        if ep is None or not ep.unclaimed:
            return None
        mine = ep.local.get(replica, set())
        others = set().union(*(v for r, v in ep.local.items() if r != replica))
        for wanted in (
            lambda i: i in mine,
            lambda i: i not in others,
            lambda i: True,
        ):
            for i in ep.order:
                if i in ep.unclaimed and wanted(i):
                    ep.unclaimed.discard(i)
                    return i
        return None  # not reached: the last rule takes any unclaimed partition


_SCHEDULER_BOOK = ShareBook()  # the book of this process when it is a Dask scheduler


def book_call(method: str, *args: Any, dask_scheduler: Any = None) -> Any:
    """Runs on the scheduler (``Client.run_on_scheduler``): one call on its book."""
    return getattr(_SCHEDULER_BOOK, method)(*args)


def call(method: str, *args: Any, client: Any, book: ShareBook) -> Any:
    """``method`` of the book that coordinates this reader: the scheduler's, through
    ``client``, when the reader runs on a Dask worker; else (``None``) ``book``, the
    reader's own (an embedded session's op: its epochs restart with the session)."""
    if client is not None:
        return client.run_on_scheduler(book_call, method, *args)
    with _LOCK:
        return getattr(book, method)(*args)


_LOCK = threading.Lock()  # embedded books: iterators of several threads may share one
