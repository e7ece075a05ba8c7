"""The host side of ``tf.data``: what a dataset op's kernel returns.

A dataset tensor's value (dtype ``variant``) is a ``Pipeline``: a description of a stream
of elements that can be iterated again and again (one pass is an epoch). An element is
a tuple of arrays, one per flat component of the dataset's structure. The dataset ops'
kernels (``data/datasets.py``) build pipelines from their inputs; ``map``/``filter``/
``flat_map``/``interleave`` hold the runner of their traced function (a compiled
sub-graph), called once per element; an iterator (``IteratorState``) walks one pass.
File sources are in ``data/files.py``.

Errors inside an element's computation surface from ``get_next`` with their own class;
the end of a pass is ``OutOfRangeError``, as in TF1.
"""

from __future__ import annotations

import itertools
import pickle
import queue
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from ...framework import errors

Element = tuple


class Pipeline:
    """A re-iterable stream of elements; ``elements()`` starts one pass."""

    def elements(self) -> Iterator[Element]:
        raise NotImplementedError

    def positions(self) -> tuple[list[np.ndarray], Iterator[int]] | None:
        """For a pipeline that only selects slices of fixed arrays (``Slices``, and
        ``Shuffle`` over one): the arrays and one pass of the selected positions, so a
        batch can be gathered in one ``take`` per component. ``None`` otherwise."""
        return None

    def batches(self, size: int, drop_remainder: bool) -> Iterator[Element] | None:
        """For a source that can cut its own batches more cheaply than row by row
        (``from_dask``: a batch within one partition is one slice of it): one pass of
        batches of ``size`` elements, as ``Batch`` would stack them. ``None``
        otherwise."""
        return None


def _as_array(value: Any, dtype: Any) -> np.ndarray:
    if dtype is object:
        if isinstance(value, np.ndarray) and value.dtype == object:
            return value
        return np.asarray(value if not isinstance(value, str) else value.encode(), dtype=object)
    return np.asarray(value, dtype=dtype)


# --- sources -----------------------------------------------------------------------------
class Slices(Pipeline):
    def __init__(self, components: Sequence[np.ndarray]):
        lengths = {c.shape[0] if c.ndim else None for c in components}
        if None in lengths or len(lengths) != 1:
            raise errors.InvalidArgumentError(
                None,
                None,
                "from_tensor_slices: all components must have the same size in their first "
                f"dimension, got shapes {[c.shape for c in components]}",
            )
        self._components = [np.asarray(c) for c in components]
        self._length = int(lengths.pop() or 0)  # one length, known not None

    def elements(self) -> Iterator[Element]:
        comps = self._components
        return (tuple(c[i, ...] for c in comps) for i in range(self._length))

    def positions(self) -> tuple[list[np.ndarray], Iterator[int]]:
        return self._components, iter(range(self._length))


class Tensors(Pipeline):
    def __init__(self, components: Sequence[np.ndarray]):
        self._element = tuple(components)

    def elements(self) -> Iterator[Element]:
        return iter([self._element])


class Range(Pipeline):
    def __init__(self, start: int, stop: int, step: int):
        if step == 0:
            raise errors.InvalidArgumentError(None, None, "range: step must not be 0")
        self._range = range(start, stop, step)

    def elements(self) -> Iterator[Element]:
        return ((np.asarray(i, np.int64),) for i in self._range)


class Generator(Pipeline):
    """``from_generator``: each item of ``make()``'s iterator, flattened by ``flatten``
    and checked against the declared dtypes and shapes."""

    def __init__(
        self,
        make: Callable[[], Any],
        flatten: Callable[[Any], list],
        dtypes: Sequence[Any],
        shapes: Sequence[Any],
    ):
        self._make, self._flatten = make, flatten
        self._dtypes, self._shapes = list(dtypes), list(shapes)

    def elements(self) -> Iterator[Element]:
        for item in self._make():
            flat = self._flatten(item)
            if len(flat) != len(self._dtypes):
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"from_generator: the generator yielded {item!r}, which does "
                    f"not have the declared structure of {len(self._dtypes)} components",
                )
            out = []
            for value, dtype, shape in zip(flat, self._dtypes, self._shapes, strict=True):
                array = _as_array(value, dtype)
                if not shape.is_compatible_with(array.shape):
                    raise errors.InvalidArgumentError(
                        None,
                        None,
                        f"from_generator: the generator yielded an element of "
                        f"shape {array.shape} where an element of shape {shape} was expected",
                    )
                out.append(array)
            yield tuple(out)


# --- transformations ---------------------------------------------------------------------
class Zip(Pipeline):
    def __init__(self, inputs: Sequence[Pipeline]):
        self._inputs = list(inputs)

    def elements(self) -> Iterator[Element]:
        for parts in zip(*(p.elements() for p in self._inputs)):
            yield tuple(itertools.chain.from_iterable(parts))


class Concatenate(Pipeline):
    def __init__(self, first: Pipeline, second: Pipeline):
        self._parts = (first, second)

    def elements(self) -> Iterator[Element]:
        return itertools.chain.from_iterable(p.elements() for p in self._parts)


Runner = Callable[[list], list]


class Map(Pipeline):
    """``map``: the traced function on each element (``num_parallel_calls`` elements at
    a time on a thread pool, results in order, when more than one)."""

    def __init__(
        self, source: Pipeline, run: Runner, captured: list, parallel: int, batched: bool = False
    ):
        self.source, self._run, self._captured = source, run, captured
        self._parallel = parallel
        self.batched = batched  # may run on a whole batch (data/vectorize.py)

    def apply(self, element: Element) -> Element:
        """The function on one element, or on a batch when ``batched``."""
        return tuple(self._run(list(element) + self._captured))

    def elements(self) -> Iterator[Element]:
        if self._parallel <= 1:
            return map(self.apply, self.source.elements())
        return _ordered_parallel(self.apply, self.source.elements(), self._parallel)


def _ordered_parallel(fn: Callable, items: Iterator, width: int) -> Iterator:
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(width, thread_name_prefix="dataset-map") as pool:
        pending: list = []
        for item in items:
            pending.append(pool.submit(fn, item))
            if len(pending) >= 2 * width:
                yield pending.pop(0).result()
        for future in pending:
            yield future.result()


class Filter(Pipeline):
    def __init__(self, source: Pipeline, run: Runner, captured: list):
        self._source, self._run, self._captured = source, run, captured

    def elements(self) -> Iterator[Element]:
        for element in self._source.elements():
            (keep,) = self._run(list(element) + self._captured)
            if bool(np.asarray(keep)):
                yield element


class FlatMap(Pipeline):
    def __init__(self, source: Pipeline, run: Runner, captured: list):
        self._source, self._run, self._captured = source, run, captured

    def dataset_of(self, element: Element) -> Pipeline:
        (inner,) = self._run(list(element) + self._captured)
        return inner

    def elements(self) -> Iterator[Element]:
        for element in self._source.elements():
            yield from self.dataset_of(element).elements()


class Interleave(FlatMap):
    """``interleave``: ``cycle_length`` inner datasets open at once, ``block_length``
    elements from each in turn; an exhausted one is replaced by the next input's."""

    def __init__(self, source: Pipeline, run: Runner, captured: list, cycle: int, block: int):
        super().__init__(source, run, captured)
        self._cycle, self._block = max(1, cycle), max(1, block)

    def elements(self) -> Iterator[Element]:
        # TF1's order: visit the slots in turn, opening a slot's dataset from the next
        # input element when it is visited empty; an exhausted one frees its slot.
        outer = self._source.elements()
        slots: list[Iterator[Element] | None] = [None] * self._cycle
        open_slots, index, taken, end_of_input = 0, 0, 0, False
        while not end_of_input or open_slots:
            slot = slots[index]
            if slot is not None:
                item = next(slot, None)
                if item is not None:
                    taken += 1
                    if taken == self._block:
                        taken, index = 0, (index + 1) % self._cycle
                    yield item
                    continue
                slots[index] = None
                open_slots -= 1
                taken, index = 0, (index + 1) % self._cycle
            elif not end_of_input:
                element = next(outer, None)
                if element is None:
                    end_of_input = True
                else:
                    slots[index] = self.dataset_of(element).elements()
                    open_slots += 1
            else:
                taken, index = 0, (index + 1) % self._cycle


def _stack(values: list[np.ndarray]) -> np.ndarray:
    if values[0].dtype != object:
        return np.stack(values)
    # Strings: ``np.array`` of 0-d object arrays would nest them (a batch of arrays, not
    # of bytes); fill an object array slot by slot instead, shapes checked as np.stack.
    shape = values[0].shape
    out = np.empty((len(values), *shape), dtype=object)
    for i, value in enumerate(values):
        if value.shape != shape:
            raise ValueError(f"all input arrays must have the same shape: {shape} != {value.shape}")
        out[i, ...] = value
    return out


def split_batched_maps(pipeline: Pipeline) -> tuple[Pipeline, list[Map]]:
    """``pipeline`` without the maps that may run per batch, and those maps in order.

    Such a map is deterministic and elementwise, so it commutes with ``Shuffle`` (which
    only reorders) and may move past it; the rewrite stops at anything else."""
    if isinstance(pipeline, Map) and pipeline.batched:
        rest, maps = split_batched_maps(pipeline.source)
        return rest, maps + [pipeline]
    if isinstance(pipeline, Shuffle):
        rest, maps = split_batched_maps(pipeline.source)
        return (pipeline.over(rest) if maps else pipeline), maps
    return pipeline, []


class Batch(Pipeline):
    """``batch``: ``size`` consecutive elements stacked. Batched maps below it run once
    per batch, and a batch of slices of fixed arrays is gathered with one ``take`` per
    component instead of being stacked element by element (``PaddedBatch``, whose
    padding a map must not see, does neither)."""

    def __init__(self, source: Pipeline, size: int, drop_remainder: bool):
        if size <= 0:
            raise errors.InvalidArgumentError(
                None, None, f"Batch size must be greater than zero, got {size}"
            )
        plain = type(self) is Batch
        self._source, self._maps = split_batched_maps(source) if plain else (source, [])
        self._size, self._drop = size, drop_remainder

    def _batch(self, items: list[Element]) -> Element:
        try:
            return tuple(_stack(list(column)) for column in zip(*items))
        except ValueError as exc:
            raise errors.InvalidArgumentError(
                None,
                None,
                "Cannot batch tensors with different shapes in a component "
                f"({exc}); use padded_batch",
            ) from None

    def elements(self) -> Iterator[Element]:
        for batch in self._batches():
            for stage in self._maps:
                batch = stage.apply(batch)
            yield batch

    def _batches(self) -> Iterator[Element]:
        if type(self) is Batch:
            cut = self._source.batches(self._size, self._drop)
            if cut is not None:
                yield from cut
                return
        found = self._source.positions() if type(self) is Batch else None
        if found is not None:
            arrays, positions = found
            while True:
                chosen = np.fromiter(itertools.islice(positions, self._size), np.int64)
                if not chosen.size or (self._drop and chosen.size < self._size):
                    return
                yield tuple(np.take(a, chosen, axis=0) for a in arrays)
        source = self._source.elements()
        while True:
            items = list(itertools.islice(source, self._size))
            if not items or (self._drop and len(items) < self._size):
                return
            yield self._batch(items)


class PaddedBatch(Batch):
    """``padded_batch``: each component padded to ``shapes`` (``-1``: the batch's
    longest) with its ``padding`` value, then stacked."""

    def __init__(self, source: Pipeline, size: int, shapes: list, padding: list, drop: bool):
        super().__init__(source, size, drop)
        self._shapes, self._padding = shapes, padding

    def _batch(self, items: list[Element]) -> Element:
        out = []
        for k, column in enumerate(zip(*items)):
            target = [
                max(v.shape[d] for v in column) if want < 0 else want
                for d, want in enumerate(self._shapes[k])
            ]
            batch = np.full([len(column)] + target, self._padding[k], dtype=column[0].dtype)
            for i, v in enumerate(column):
                if any(s > t for s, t in zip(v.shape, target)):
                    raise errors.InvalidArgumentError(
                        None,
                        None,
                        f"padded_batch: component {k} has shape {v.shape}, "
                        f"larger than its padded shape {target}",
                    )
                batch[(i,) + tuple(slice(0, s) for s in v.shape)] = v
            out.append(batch)
        return tuple(out)


class Shuffle(Pipeline):
    """A buffer of ``size`` elements, each output drawn from it at random and replaced
    by the next input (TF1's algorithm; our random stream, not TF's)."""

    def __init__(self, source: Pipeline, size: int, seed: int | None, reshuffle: bool):
        if size <= 0:
            raise errors.InvalidArgumentError(
                None, None, f"buffer_size must be greater than zero, got {size}"
            )
        self.source, self._size, self._seed, self._reshuffle = source, size, seed, reshuffle
        self._epoch = itertools.count()

    def over(self, source: Pipeline) -> Shuffle:
        """The same shuffle (seed and pass counter shared) over another source."""
        twin = Shuffle(source, self._size, self._seed, self._reshuffle)
        twin._epoch = self._epoch
        return twin

    def _shuffled(self, items: Iterator[Any]) -> Iterator[Any]:
        epoch = next(self._epoch) if self._reshuffle else 0
        rng = np.random.default_rng(None if self._seed is None else [self._seed, epoch])
        buffer: list[Any] = []
        draws: list[int] = []
        for item in items:
            buffer.append(item)
            if len(buffer) == self._size:
                if not draws:  # a full buffer: draw its positions in bulk
                    draws = rng.integers(self._size, size=256).tolist()
                i = draws.pop()
                buffer[i], buffer[-1] = buffer[-1], buffer[i]
                yield buffer.pop()
        while buffer:
            i = int(rng.integers(len(buffer)))
            buffer[i], buffer[-1] = buffer[-1], buffer[i]
            yield buffer.pop()

    def elements(self) -> Iterator[Element]:
        return self._shuffled(self.source.elements())

    def positions(self) -> tuple[list[np.ndarray], Iterator[int]] | None:
        found = self.source.positions()
        if found is None:
            return None
        arrays, positions = found
        return arrays, self._shuffled(positions)


class Repeat(Pipeline):
    def __init__(self, source: Pipeline, count: int):
        self._source, self._count = source, count

    def elements(self) -> Iterator[Element]:
        epochs = itertools.count() if self._count < 0 else range(self._count)
        for _ in epochs:
            empty = True
            for element in self._source.elements():
                empty = False
                yield element
            if empty:  # an empty dataset repeated forever is empty, not a hang
                return


class Take(Pipeline):
    def __init__(self, source: Pipeline, count: int):
        self._source, self._count = source, count

    def elements(self) -> Iterator[Element]:
        source = self._source.elements()
        return source if self._count < 0 else itertools.islice(source, self._count)


class Skip(Pipeline):
    def __init__(self, source: Pipeline, count: int):
        self._source, self._count = source, count

    def elements(self) -> Iterator[Element]:
        source = self._source.elements()
        if self._count < 0:
            return iter(())
        return itertools.islice(source, self._count, None)


class Cache(Pipeline):
    """The first complete pass is kept (in memory, or in ``filename``) and replayed."""

    def __init__(self, source: Pipeline, filename: str):
        self._source, self._filename = source, filename
        self._cached: list[Element] | None = None

    def _load(self) -> list[Element] | None:
        import fsspec  # on first use: it costs 0.03 s of ``import dataflow``

        if self._cached is None and self._filename:
            fs, path = fsspec.core.url_to_fs(self._filename + ".dataflow-cache")
            if fs.exists(path):
                with fs.open(path, "rb") as f:
                    self._cached = pickle.load(f)
        return self._cached

    def elements(self) -> Iterator[Element]:
        cached = self._load()
        if cached is not None:
            yield from cached
            return
        recorded = []
        for element in self._source.elements():
            recorded.append(element)
            yield element
        self._cached = recorded
        if self._filename:
            import fsspec

            with fsspec.open(self._filename + ".dataflow-cache", "wb") as f:
                pickle.dump(recorded, f)


class Prefetch(Pipeline):
    """Up to ``size`` elements computed ahead on a background thread."""

    def __init__(self, source: Pipeline, size: int):
        self._source, self._size = source, max(1, size)

    def elements(self) -> Iterator[Element]:
        return _Prefetcher(self._source.elements(), self._size)


class _Prefetcher:
    _DONE = object()

    def __init__(self, source: Iterator[Element], size: int):
        self._queue: queue.Queue = queue.Queue(size)
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._fill, args=(source,), daemon=True, name="dataset-prefetch"
        )
        self._thread.start()

    def _fill(self, source: Iterator[Element]) -> None:
        try:
            for element in source:
                if not self._put(element):
                    return
            self._put(self._DONE)
        except BaseException as exc:  # delivered to the consumer, in order
            self._put(exc)

    def _put(self, item: Any) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def __iter__(self) -> _Prefetcher:
        return self

    def __next__(self) -> Element:
        item = self._queue.get()
        if item is self._DONE:
            self._queue.put(item)
            raise StopIteration
        if isinstance(item, BaseException):
            raise item
        return item

    def close(self) -> None:
        self._stop.set()


# --- iterators ---------------------------------------------------------------------------
class IteratorState:
    """One iterator resource: the pass in progress over its current pipeline."""

    def __init__(self, name: str):
        self.name = name
        self._lock = threading.Lock()
        self._elements: Iterator[Element] | None = None

    @property
    def initialized(self) -> bool:
        return self._elements is not None

    def start(self, pipeline: Pipeline) -> None:
        with self._lock:
            close = getattr(self._elements, "close", None)
            if close is not None:
                close()
            self._elements = pipeline.elements()

    def cancel_all(self) -> None:
        """Ends the pass in progress (its store released this iterator: the session
        that owned it closed, or the store was reset)."""
        with self._lock:
            elements, self._elements = self._elements, None
        close = getattr(elements, "close", None)
        if close is not None:
            close()

    def start_once(self, pipeline: Pipeline) -> None:
        """Starts the first pass only (a one-shot iterator)."""
        with self._lock:
            if self._elements is None:
                self._elements = pipeline.elements()

    def next(self) -> Element:
        with self._lock:
            if self._elements is None:
                raise errors.FailedPreconditionError(
                    None,
                    None,
                    f"GetNext() failed because the iterator '{self.name}' has not "
                    "been initialized. Ensure that you have run the initializer operation "
                    "for this iterator before getting the next element.",
                )
            try:
                return next(self._elements)
            except StopIteration:
                raise errors.OutOfRangeError(None, None, "End of sequence") from None
