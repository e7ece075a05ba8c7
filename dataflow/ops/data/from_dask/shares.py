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

Claims are tracked until they are finished, so that the loss of a replica's own
worker costs no row and repeats none. A replica reports, as it hands rows out, how many
rows of each claimed partition it has delivered (``progress``: the partition's rows go
out in a fixed order, its own or the seeded permutation, so a count says which ones);
a claim whose rows have all been delivered is finished. The book records each
replica's worker (address and Dask id) at ``begin``; once that worker has left the
cluster (the scheduler no longer lists it), every unfinished claim of the replica goes
back to its
epoch's unclaimed partitions with the count delivered, and whoever claims it next
(another replica, or the same one recovering on its restarted worker, which rejoins the
epoch it was in) skips those rows. A row is *seen* when a step's ``get_next`` handed it
out and the replica's report of it reached the book; each report is written, as the
rows are handed out and before ``get_next`` returns, on the worker's progress line to
the scheduler (``progress``: one blocking write of a few dozen bytes, no reply),
so a step never waits for the scheduler, and a worker killed between two steps has
reported the rows of every step that completed (the kernel delivers what the killed
process wrote). Two windows remain: rows handed out by a step that the loss then failed
are counted as seen (the step's effects were lost with it), and where a worker has no
line (a transport other than TCP or TLS) its reports are messages on its batched
stream to the scheduler (``PROGRESS_OP``, sent a couple of milliseconds apart), so one
still on its way when the worker died makes those rows be handed out again. The
count names the rows only while they leave in order: with a ``shuffle`` buffer between
``from_dask`` and the consumer, up to a buffer's worth of the lost replica's rows in
flight may be repeated or missed in that epoch. Restarting an
iterator on a live worker (running its initializer again) abandons its unfinished
claims, as TF1 does: the rest of those partitions is not read in that epoch.

The loss of a worker that only holds partitions costs nothing: they are recomputed (or
re-read) when claimed.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from . import progress as dask_progress


class _Epoch:
    def __init__(self, order: list[int]):
        self.order = order
        self.unclaimed = set(order)
        self.local: dict[str, set[int]] = {}
        self.held: dict[int, str] = {}  # unfinished claim -> the replica holding it
        self.delivered: dict[int, int] = {}  # rows of a partition handed out so far


class _Book:
    def __init__(self, count: int):
        self.count = count
        self.epochs: dict[int, _Epoch] = {}
        self.last: dict[str, int] = {}  # replica -> the epoch of its latest pass
        self.address: dict[str, str] = {}  # replica -> its worker (``worker_identity``)


def _order(count: int, seed: int | None, epoch: int) -> list[int]:
    """The order an epoch hands partitions out in (set by the replica opening it)."""
    if seed is None:
        return list(range(count))
    return np.random.default_rng([seed, epoch]).permutation(count).tolist()


def _release(book: _Book, replica: str) -> None:
    """The unfinished claims of ``replica`` go back to their epochs' unclaimed
    partitions (with the rows already delivered, which the next claimant skips)."""
    for ep in book.epochs.values():
        for index in [i for i, r in ep.held.items() if r == replica]:
            del ep.held[index]
            ep.unclaimed.add(index)


def _release_lost(book: _Book, live: set[str] | None) -> None:
    """Releases the claims of every replica whose worker has left the cluster."""
    if live is None:
        return
    for replica, address in list(book.address.items()):
        if address not in live:
            _release(book, replica)
            book.address[replica] = ""  # released once; a new ``begin`` records it anew


class ShareBook:
    """The claims of every collection read through ``from_dask`` (module docstring)."""

    def __init__(self) -> None:
        self._books: dict[str, _Book] = {}

    def begin(
        self,
        name: str,
        replica: str,
        count: int,
        local: list[int],
        seed: int | None,
        address: str = "",
        live: set[str] | None = None,
    ) -> int:
        book = self._books.get(name)
        if book is None or book.count != count:
            book = self._books[name] = _Book(count)
        previous = book.last.get(replica, -1)
        recovering = replica in book.address and book.address[replica] != address
        _release_lost(book, live)
        # A replica whose worker was lost rejoins the epoch it was in, if still open.
        floor = previous - 1 if recovering and previous >= 0 else previous
        if not recovering:
            # Started again on a live worker: what it had claimed is abandoned (TF1).
            for ep in book.epochs.values():
                for index in [i for i, r in ep.held.items() if r == replica]:
                    del ep.held[index]
        book.address[replica] = address
        open_epochs = [e for e, ep in book.epochs.items() if e > floor and ep.unclaimed]
        if open_epochs:
            epoch = min(open_epochs)
        else:
            epoch = max([previous, *book.epochs]) + 1
            book.epochs[epoch] = _Epoch(_order(count, seed, epoch))
        book.epochs[epoch].local[replica] = set(local)
        book.last[replica] = epoch
        # An epoch fully read that every known replica has passed is done.
        oldest = min(book.last.values())
        for e in [
            e for e, ep in book.epochs.items() if e < oldest and not ep.unclaimed and not ep.held
        ]:
            del book.epochs[e]
        return epoch

    def claim(
        self, name: str, epoch: int, replica: str, live: set[str] | None = None
    ) -> tuple[int, int] | None:
        """The next partition of ``replica``'s pass and the rows of it already
        delivered (by a lost replica that held it), or ``None`` at the pass's end."""
        book = self._books.get(name)
        if book is not None:
            _release_lost(book, live)
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
                    ep.held[i] = replica
                    return i, ep.delivered.get(i, 0)
        return None  # not reached: the last rule takes any unclaimed partition

    def progress(
        self, name: str, epoch: int, replica: str, counts: dict[int, tuple[int, int]]
    ) -> None:
        """``replica`` has delivered ``counts[i][0]`` of the ``counts[i][1]`` rows of
        its claim ``i``; a claim whose rows are all delivered is finished."""
        book = self._books.get(name)
        ep = book.epochs.get(epoch) if book is not None else None
        if ep is None:
            return
        for index, (delivered, rows) in counts.items():
            if ep.held.get(index) != replica:
                continue  # released meanwhile, or a report overtaken by a later one
            ep.delivered[index] = max(delivered, ep.delivered.get(index, 0))
            if ep.delivered[index] >= rows:
                del ep.held[index]


def worker_identity(address: str, worker_id: str) -> str:
    """What the book knows a replica's worker by: its address and its Dask id, so that
    a worker restarted at the same address counts as a new one."""
    return f"{address}|{worker_id}"


_SCHEDULER_BOOK = ShareBook()  # the book of this process when it is a Dask scheduler


# The scheduler's stream handler for progress reports, which workers send on their
# batched stream to the scheduler (no reply, batched with the worker's other messages:
# an RPC per report cost a third of a fast input's steps/s). A scheduler without the
# handler would drop the worker's stream on such a message; it cannot get one: a report
# follows its pass's ``begin`` on the same scheduler (which registers the handler), and
# Dask workers do not outlive their scheduler.
PROGRESS_OP = "dataflow-share-progress"


def _progress_from_worker(
    name: str = "", epoch: int = 0, replica: str = "", counts: Any = None, worker: Any = None
) -> None:
    _SCHEDULER_BOOK.progress(name, epoch, replica, dict(counts or {}))


def book_call(method: str, *args: Any, dask_scheduler: Any = None) -> Any:
    """Runs on the scheduler (``Client.run_on_scheduler``): one call on its book, told
    which workers are alive (``begin`` and ``claim`` release the lost ones' claims).
    ``begin`` also readies the scheduler for progress reports (the workers' progress
    lines, ``progress``, and ``PROGRESS_OP`` on their streams), which only follow
    a ``begin``."""
    if dask_scheduler is not None and method == "begin":
        dask_scheduler.stream_handlers.setdefault(PROGRESS_OP, _progress_from_worker)
        dask_scheduler.handlers.setdefault(
            dask_progress.PROGRESS_LINE_OP, dask_progress.serve_line(_SCHEDULER_BOOK.progress)
        )
    if method in ("begin", "claim") and dask_scheduler is not None:
        live = {worker_identity(a, ws.server_id) for a, ws in dask_scheduler.workers.items()}
        return getattr(_SCHEDULER_BOOK, method)(*args, live=live)
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
