"""``Dataset.from_dask``'s op type, ``DaskDataset``, and the pipelines it builds.

The op has no inputs: its ``source`` attr (``source.DaskSource``) names the
collection's partitions, so the plan that carries it is small however large the data
is. Like every dataset op it runs where the iterator consuming it runs, so on a cluster
the pipeline is built on that worker and reads from that worker's memory.

One pass of the pipeline (an epoch) is a loop of claims (``shares``): take the next
partition this replica is given, read it (``source.read_partition``), hand out its
rows (``DaskRows``) or the whole block (``DaskBlocks``), and drop it. With
``shuffle=True`` the partitions come in an order seeded by ``(seed, epoch)`` and each
partition's rows in one seeded by ``(seed, epoch, partition)``; a ``shuffle`` on top
mixes rows across the partitions it buffers.

As rows are handed out (a row or a block by ``elements``, a batch's rows as the batch
is cut), the pass tells the book how many rows of the partition it has delivered
(``_Progress``, on the worker's progress line: ``progress``), so that the claims
of a replica whose worker is lost go on from there (``shares``).

A ``batch`` directly on top (maps that may run per batch aside) takes its batches from
``DaskRows.batches()`` (see ``data.pipeline.Pipeline``): a batch that lies within one
partition is one read-only view of each component's rows (one ``take`` in a shuffled
partition's order), with no copy and no work per row; one that spans partitions joins
its pieces.

With a ``shuffle`` between, ``DaskRows`` offers ``positions()`` instead, so the batch
still gathers each batch with one ``take`` per column instead of stacking rows one by
one. The "arrays" it returns are
``_Column`` views of a ``_Window`` of the partitions whose positions are still in
flight: a position is ``offset of its partition in this pass + row``, a partition is
read when the position stream reaches it and dropped once all its rows were taken.
``Batch`` takes every component of a batch in order, so the window counts a batch's
rows as taken when the last column is taken.
"""

from __future__ import annotations

import bisect
import contextlib
import itertools
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from ....framework import dtypes, registry
from ....framework.graph import Operation
from ....framework.kernel_context import blocking_waiter
from ....framework.tensor_shape import TensorShape
from ..pipeline import Element, Pipeline
from . import progress as dask_progress
from . import shares as dask_shares
from .source import DaskSource, local_partitions, read_partition, this_worker, worker_client

# A partition as handed to the pipelines: its index, the rows of it delivered before
# this pass got it (by a replica whose worker was lost), its arrays (those rows left
# out), its row order (None: as stored).
Partition = tuple[int, int, list[np.ndarray], np.ndarray | None]


class _Progress:
    """Tells the book how many rows of each claim this pass has delivered
    (``shares``' ``progress``). On a worker each report is written on the worker's
    progress line to the scheduler (``progress``) by the thread handing the rows
    out, with no reply to wait for. Without a line (another transport, a pass begun on
    the event loop, a broken line) it is a message on the worker's batched stream to
    the scheduler (``shares.PROGRESS_OP``), sent from the worker's event loop;
    Dask sends that stream's messages a few milliseconds apart, in order."""

    def __init__(self, name: str, epoch: int, replica: str, worker: Any, book: Any):
        self._args = (name, epoch, replica)
        self._worker, self._book = worker, book
        # Made where the pass begins, in the thread that hands its rows out.
        self._line = dask_progress.line_for(worker) if worker is not None else None

    def delivered(self, index: int, count: int, rows: int) -> None:
        self.report({index: (count, rows)})

    def report(self, counts: dict[int, tuple[int, int]]) -> None:
        """``counts[i]``: rows of claim ``i`` delivered so far, and its rows."""
        if self._worker is None:
            dask_shares.call("progress", *self._args, counts, client=None, book=self._book)
            return
        if self._line is not None and self._line.send((*self._args, counts)):
            return
        name, epoch, replica = self._args
        message = {
            "op": dask_shares.PROGRESS_OP,
            "name": name,
            "epoch": epoch,
            "replica": replica,
            "counts": counts,
        }
        if self._worker.thread_id == threading.get_ident():
            self._send(message)  # a stage run on the event loop: no wake-up needed
        else:
            self._worker.loop.add_callback(self._send, message)

    def _send(self, message: dict) -> None:
        # A lost scheduler fails the step anyway; the report has no one to tell.
        with contextlib.suppress(Exception):
            self._worker.batched_stream.send(message)


class DaskPartitions(Pipeline):
    """What both pipelines share: one pass over the partitions this replica claims."""

    def __init__(
        self,
        source: DaskSource,
        replica: str,
        seed: int | None,
        book: dask_shares.ShareBook,
        before_wait: Any = None,
    ):
        self._source, self._replica, self._seed = source, replica, seed
        self._book, self._before_wait = book, before_wait
        self.progress: _Progress | None = None

    def partitions(self) -> Iterator[Partition]:
        source, replica = self._source, self._replica
        worker = this_worker()
        client = worker_client(worker) if worker is not None else None
        local = local_partitions(source, worker)
        epoch = dask_shares.call(
            "begin",
            source.name,
            replica,
            source.partitions,
            local,
            self._seed,
            dask_shares.worker_identity(worker.address, worker.id) if worker is not None else "",
            client=client,
            book=self._book,
        )
        self.progress = _Progress(
            source.name, epoch, replica, worker if client is not None else None, self._book
        )

        def claim_and_read() -> tuple[int, int, list[np.ndarray]] | None:
            got = dask_shares.call(
                "claim", source.name, epoch, replica, client=client, book=self._book
            )
            if got is None:
                return None
            index, skip = got
            return index, skip, read_partition(source, index, worker)

        # One partition is claimed and read ahead on a helper thread while this one is
        # consumed, so copying it from a peer overlaps the steps (the pool's own thread
        # leaves the pool's count, ``before_wait``, only if it has to wait for it).
        with ThreadPoolExecutor(1, thread_name_prefix="from-dask-read") as helper:
            ahead = helper.submit(claim_and_read)
            while True:
                if not ahead.done() and self._before_wait is not None:
                    self._before_wait()
                got = ahead.result()
                if got is None:
                    return
                ahead = helper.submit(claim_and_read)
                index, skip, arrays = got
                order = None
                if self._seed is not None:
                    rng = np.random.default_rng([self._seed, epoch, index])
                    order = rng.permutation(len(arrays[0]))
                if skip:  # the rows a lost replica delivered are not read again
                    rest = np.arange(len(arrays[0]))[skip:] if order is None else order[skip:]
                    arrays, order = [a[rest] for a in arrays], None
                yield index, skip, arrays, order


class DaskBlocks(DaskPartitions):
    """``from_dask(..., blocks=True)``: one element per partition."""

    def elements(self) -> Iterator[Element]:
        for index, skip, arrays, order in self.partitions():
            assert self.progress is not None
            self.progress.delivered(index, skip + len(arrays[0]), skip + len(arrays[0]))
            yield tuple(arrays if order is None else [a[order] for a in arrays])


class DaskRows(DaskPartitions):
    """``from_dask(...)``: one element per row."""

    def elements(self) -> Iterator[Element]:
        for index, skip, arrays, order in self.partitions():
            assert self.progress is not None
            rows = range(len(arrays[0])) if order is None else order.tolist()
            total = skip + len(arrays[0])
            if not rows:  # an empty partition is finished as soon as it is read
                self.progress.delivered(index, total, total)
            for k, i in enumerate(rows, skip + 1):
                self.progress.delivered(index, k, total)
                yield tuple(a[i, ...] for a in arrays)

    def batches(self, size: int, drop_remainder: bool) -> Iterator[Element]:
        """One pass cut into batches straight from the partitions (``Batch`` over
        ``from_dask``, no ``shuffle`` between): a batch within one partition is one
        slice of each component, uncopied (one ``take`` in a shuffled partition's
        order), with no per-row work; a batch spanning partitions joins its pieces. Its
        rows are reported delivered as it is handed out (a dropped remainder's too:
        this pass is done with them)."""
        pieces: list[list[np.ndarray]] = []
        counts: dict[int, tuple[int, int]] = {}  # the batch's claims: delivered, rows
        filled = 0
        for index, skip, arrays, order in self.partitions():
            progress = self.progress
            assert progress is not None
            n = len(arrays[0])
            if not n:  # an empty partition is finished as soon as it is read
                progress.delivered(index, skip, skip)
                continue
            start = 0
            while start < n:
                stop = min(n, start + size - filled)
                rows = slice(start, stop) if order is None else order[start:stop]
                pieces.append([a[rows] for a in arrays])
                counts[index] = (skip + stop, skip + n)
                filled += stop - start
                start = stop
                if filled == size:
                    progress.report(counts)
                    yield _joined(pieces)
                    pieces, counts, filled = [], {}, 0
        if filled:
            assert self.progress is not None
            self.progress.report(counts)
            if not drop_remainder:
                yield _joined(pieces)

    def positions(self) -> tuple[list[Any], Iterator[int]]:
        window = _Window()

        def stream() -> Iterator[int]:
            base = 0
            for index, skip, arrays, order in self.partitions():
                n = len(arrays[0])
                if not n:  # an empty partition is finished as soon as it is read
                    assert self.progress is not None
                    self.progress.delivered(index, skip, skip)
                    continue
                if not window.columns:
                    window.columns = [_Column(window, k) for k in range(len(arrays))]
                window.progress = self.progress
                window.add(base, arrays, index, skip)
                yield from (range(base, base + n) if order is None else (order + base).tolist())
                base += n

        positions = stream()
        # The columns exist once the first partition is read: start the stream now.
        first = next(positions, None)
        if first is None:
            return [], iter(())
        return window.columns, itertools.chain((first,), positions)


def _joined(pieces: list[list[np.ndarray]]) -> Element:
    """A batch from its pieces (one per partition it spans). A batch within one
    partition is handed out as it was cut, with no copy: a view of the partition's
    rows (or a take's new array), read-only, as a kernel's input is (a persisted
    partition is Dask's stored data: a view of ``worker.data``, as a fed dask slice is
    in ``runtime/dask/feeds.py``)."""
    if len(pieces) == 1:
        out = []
        for a in pieces[0]:
            view = a.view()
            view.flags.writeable = False
            out.append(view)
        return tuple(out)
    return tuple(np.concatenate(column) for column in zip(*pieces, strict=True))


class _Window:
    """The partitions of one pass whose rows are still to be taken (module docstring)."""

    def __init__(self) -> None:
        self.columns: list[_Column] = []
        self.progress: _Progress | None = None
        self._bases: list[int] = []  # sorted offsets of the partitions held
        self._parts: dict[int, list[np.ndarray]] = {}
        self._left: dict[int, int] = {}  # rows of each partition not yet taken
        self._claims: dict[int, tuple[int, int, int]] = {}  # base -> index, skip, rows

    def add(self, base: int, arrays: list[np.ndarray], index: int, skip: int) -> None:
        self._bases.append(base)
        self._parts[base] = arrays
        self._left[base] = len(arrays[0])
        self._claims[base] = (index, skip, skip + len(arrays[0]))

    def take(self, k: int, indices: Any, last: bool) -> np.ndarray:
        indices = np.asarray(indices, dtype=np.int64)
        first = self._bases[bisect.bisect_right(self._bases, int(indices[0])) - 1]
        rows = indices - first
        part = self._parts[first][k]
        if 0 <= rows.min() and rows.max() < len(part):  # one partition: the usual case
            n = len(rows)
            if rows[-1] - rows[0] == n - 1 and (n == 1 or bool(np.all(np.diff(rows) == 1))):
                out = part[rows[0] : rows[0] + n].copy()  # in order: one slice
            else:
                out = np.take(part, rows, axis=0)
            if last:
                self._taken({first: n})
            return out
        owner = np.asarray(self._bases)[
            np.searchsorted(np.asarray(self._bases), indices, side="right") - 1
        ]
        out = np.empty((len(indices),) + part.shape[1:], dtype=part.dtype)
        counts = {}
        for base in np.unique(owner).tolist():
            mask = owner == base
            out[mask] = np.take(self._parts[base][k], indices[mask] - base, axis=0)
            counts[base] = int(mask.sum())
        if last:
            self._taken(counts)
        return out

    def _taken(self, counts: dict[int, int]) -> None:
        for base, n in counts.items():
            self._left[base] -= n
            index, skip, rows = self._claims[base]
            if self.progress is not None:  # a batch's rows are handed out now
                self.progress.delivered(index, rows - max(self._left[base], 0), rows)
            if self._left[base] <= 0:
                del self._parts[base], self._left[base], self._claims[base]
                self._bases.remove(base)


class _Column:
    """Column ``k`` of a window, for ``np.take(column, positions, axis=0)``."""

    def __init__(self, window: _Window, k: int):
        self._window, self._k = window, k

    def take(self, indices: Any, axis: int = 0, out: Any = None, mode: str = "raise") -> Any:
        window = self._window
        return window.take(self._k, indices, last=self._k == len(window.columns) - 1)


def _dataset_output(op: Operation) -> list:
    return [(dtypes.variant, TensorShape([]))]


def _dask_dataset(ctx: Any, attrs: dict) -> Any:
    source, seed = attrs["source"], attrs["seed"]
    # A replica is a reader of its own: an op of one graph on one device.
    replica = f"{ctx.device}|{ctx.op_name}"
    waiter = blocking_waiter(ctx)
    before_wait = waiter.will_block if waiter is not None else None
    kind = DaskBlocks if attrs["blocks"] else DaskRows
    book = dask_shares.ShareBook()  # used outside a Dask worker (module docstring)
    return lambda: kind(source, replica, seed, book, before_wait)


registry.register(
    registry.OpDef("DaskDataset", _dataset_output, _dask_dataset, registry.NOT_DIFFERENTIABLE)
)
