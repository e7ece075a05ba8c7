"""``Dataset.from_dask``'s op type, ``DaskDataset``, and the pipelines it builds.

The op has no inputs: its ``source`` attr (``dask_source.DaskSource``) names the
collection's partitions, so the plan that carries it is small however large the data
is. Like every dataset op it runs where the iterator consuming it runs, so on a cluster
the pipeline is built on that worker and reads from that worker's memory.

One pass of the pipeline (an epoch) is a loop of claims (``dask_shares``): take the next
partition this replica is given, read it (``dask_source.read_partition``), hand out its
rows (``DaskRows``) or the whole block (``DaskBlocks``), and drop it. With
``shuffle=True`` the partitions come in an order seeded by ``(seed, epoch)`` and each
partition's rows in one seeded by ``(seed, epoch, partition)``; a ``shuffle`` on top
mixes rows across the partitions it buffers.

``DaskRows`` also offers ``positions()`` (see ``dataset_pipeline.Pipeline``), so a
``batch`` on top, with or without a ``shuffle`` between, gathers each batch with one
``take`` per column instead of stacking rows one by one. The "arrays" it returns are
``_Column`` views of a ``_Window`` of the partitions whose positions are still in
flight: a position is ``offset of its partition in this pass + row``, a partition is
read when the position stream reaches it and dropped once all its rows were taken.
``Batch`` takes every component of a batch in order, so the window counts a batch's
rows as taken when the last column is taken.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from ..framework import dtypes, registry
from ..framework.graph import Operation
from ..framework.kernel_context import blocking_waiter
from ..framework.tensor_shape import TensorShape
from . import dask_shares
from .dask_source import DaskSource, local_partitions, read_partition, this_worker, worker_client
from .dataset_pipeline import Element, Pipeline

Partition = tuple[list[np.ndarray], np.ndarray | None]  # its arrays, its row order


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
            client=client,
            book=self._book,
        )

        def claim_and_read() -> tuple[int, list[np.ndarray]] | None:
            index = dask_shares.call(
                "claim", source.name, epoch, replica, client=client, book=self._book
            )
            return None if index is None else (index, read_partition(source, index, worker))

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
                index, arrays = got
                order = None
                if self._seed is not None:
                    rng = np.random.default_rng([self._seed, epoch, index])
                    order = rng.permutation(len(arrays[0]))
                yield arrays, order


class DaskBlocks(DaskPartitions):
    """``from_dask(..., blocks=True)``: one element per partition."""

    def elements(self) -> Iterator[Element]:
        for arrays, order in self.partitions():
            yield tuple(arrays if order is None else [a[order] for a in arrays])


class DaskRows(DaskPartitions):
    """``from_dask(...)``: one element per row."""

    def elements(self) -> Iterator[Element]:
        for arrays, order in self.partitions():
            rows = range(len(arrays[0])) if order is None else order.tolist()
            for i in rows:
                yield tuple(a[i, ...] for a in arrays)

    def positions(self) -> tuple[list[Any], Iterator[int]]:
        window = _Window()

        def stream() -> Iterator[int]:
            base = 0
            for arrays, order in self.partitions():
                n = len(arrays[0])
                if not n:
                    continue
                if not window.columns:
                    window.columns = [_Column(window, k) for k in range(len(arrays))]
                window.add(base, arrays)
                yield from (range(base, base + n) if order is None else (order + base).tolist())
                base += n

        positions = stream()
        # The columns exist once the first partition is read: start the stream now.
        first = next(positions, None)
        if first is None:
            return [], iter(())
        return window.columns, _chain(first, positions)


def _chain(first: int, rest: Iterator[int]) -> Iterator[int]:
    yield first
    yield from rest


class _Window:
    """The partitions of one pass whose rows are still to be taken (module docstring)."""

    def __init__(self) -> None:
        self.columns: list[_Column] = []
        self._bases: list[int] = []  # sorted offsets of the partitions held
        self._parts: dict[int, list[np.ndarray]] = {}
        self._left: dict[int, int] = {}  # rows of each partition not yet taken

    def add(self, base: int, arrays: list[np.ndarray]) -> None:
        self._bases.append(base)
        self._parts[base] = arrays
        self._left[base] = len(arrays[0])

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
            if self._left[base] <= 0:
                del self._parts[base], self._left[base]
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
