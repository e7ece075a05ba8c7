"""``tf.data.Dataset`` (TF 1.15 graph-mode semantics).

A ``Dataset`` is a variant tensor (its op builds a ``Pipeline`` when it runs, see
``ops/data/datasets.py``) plus the structure of its elements (``output_types``,
``output_shapes``, ``output_classes``). Each transformation adds one op. Functions are
traced once, on placeholders of the element's structure, into a sub-graph: a tuple
element is passed as positional arguments, any other element as one argument, and what
the function returns becomes the new element's structure (lists become tuples).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any

from ..framework import dtypes
from ..framework.graph import Tensor, convert_to_tensor
from ..framework.scopes import control_dependencies, name_scope
from ..framework.subgraph import seal, trace
from ..framework.tensor_shape import TensorShape, as_shape
from ..ops import array as array_ops
from ..ops.build import apply_op
from ..ops.control.group import identity
from ..ops.data import datasets as dataset_ops
from ..ops.data import vectorize as dataset_vectorize
from ..ops.debug.check_ops import assert_greater
from ..ops.random.random_ops import get_seed
from . import structure
from .cardinality import cardinality as count_elements
from .from_dask import from_dask
from .iterator import Iterator
from .options import Options
from .structure import Spec

AUTOTUNE = -1
_INT64_MAX = 2**63 - 1


def _int64(value: Any, name: str) -> Tensor:
    """``value`` as an int64 scalar tensor (a count, a size).

    Raises:
        ValueError: its shape is known and not a scalar (TF1's shape function refuses it).
    """
    out = convert_to_tensor(value, dtype=dtypes.int64, name=name)
    if out.shape.rank not in (None, 0):
        raise ValueError(f"{name} must be a scalar (shape must be rank 0), got shape {out.shape}")
    return out


class Dataset:
    """A stream of elements built in the graph; see the module docstring."""

    # The options ``with_options`` attached upstream (see ``options()``).
    _options: Options | None = None

    def __init__(self, variant: Tensor, specs: Any):
        self.variant = variant  # the dataset tensor (dtype variant)
        self.specs = specs  # the element structure, with a Spec per component

    # --- structure -----------------------------------------------------------------------
    @property
    def output_types(self) -> Any:
        return structure.types_of(self.specs)

    @property
    def output_shapes(self) -> Any:
        return structure.shapes_of(self.specs)

    @property
    def output_classes(self) -> Any:
        return structure.classes_of(self.specs)

    def _flat_specs(self) -> list[Spec]:
        return structure.flatten(self.specs)

    def _derive(
        self,
        op_type: str,
        inputs: list,
        attrs: dict | None = None,
        specs: Any = None,
        function: Any = None,
    ) -> Dataset:
        variant = dataset_ops.dataset_op(op_type, [self.variant] + inputs, attrs, function)
        out = Dataset(variant, self.specs if specs is None else specs)
        out._options = self._options
        return out

    # --- sources -------------------------------------------------------------------------
    @staticmethod
    def from_tensor_slices(tensors: Any) -> Dataset:
        """One element per slice along the first dimension of every component.

        Raises:
            ValueError: a component is a scalar, or the first dimensions differ.
        """
        with name_scope(None, "TensorSliceDataset"):
            values = structure.to_tensors(tensors, "from_tensor_slices")
            flat = structure.flatten(values)
            first = TensorShape([None])
            for t in flat:
                if t.shape.rank == 0:
                    raise ValueError(
                        f"from_tensor_slices: component {t.name} is a scalar; "
                        "slicing needs rank >= 1"
                    )
                if t.shape.rank is not None:
                    if not first.is_compatible_with(t.shape[:1]):
                        raise ValueError(
                            f"Dimensions {first.as_list()[0]} and {t.shape.as_list()[0]} are not "
                            "compatible: every component must have the same first dimension"
                        )
                    first = first.merge_with(t.shape[:1])
            specs = structure.map_structure(
                lambda t: Spec(
                    t.dtype, t.shape[1:] if t.shape.rank is not None else TensorShape(None)
                ),
                values,
            )
            return Dataset(dataset_ops.dataset_op("TensorSliceDataset", flat), specs)

    @staticmethod
    def from_tensors(tensors: Any) -> Dataset:
        """A single element: ``tensors``."""
        with name_scope(None, "TensorDataset"):
            values = structure.to_tensors(tensors, "from_tensors")
            flat = structure.flatten(values)
            return Dataset(
                dataset_ops.dataset_op("TensorDataset", flat), structure.specs_of(values)
            )

    @staticmethod
    def range(*args: Any) -> Dataset:
        """``range(stop)``, ``range(start, stop)``, ``range(start, stop, step)``: int64."""
        if not 1 <= len(args) <= 3:
            raise ValueError(f"range takes 1 to 3 arguments, got {len(args)}")
        start, stop, step = (0, args[0], 1) if len(args) == 1 else (*args, 1)[:3]
        inputs = [_int64(v, n) for v, n in ((start, "start"), (stop, "stop"), (step, "step"))]
        variant = dataset_ops.dataset_op("RangeDataset", inputs)
        return Dataset(variant, Spec(dtypes.int64, TensorShape([])))

    @staticmethod
    def from_generator(
        generator: Callable[..., Iterable],
        output_types: Any,
        output_shapes: Any = None,
        args: Any = None,
    ) -> Dataset:
        """The items of ``generator()`` (a Python callable returning an iterable), each
        of structure ``output_types``; checked against ``output_shapes`` as they come.
        ``args`` (tensors) are evaluated and passed to ``generator`` when the iterator
        is initialized."""
        if not callable(generator):
            raise TypeError("`generator` must be callable.")
        specs = structure.specs_from(output_types, output_shapes)
        flat_specs = structure.flatten(specs)
        arg_tensors = [convert_to_tensor(a) for a in (args or ())]

        def flatten_item(item: Any) -> list:
            return structure.flatten_shapes(item, output_types)

        attrs = {
            "generator": generator,
            "flatten": flatten_item,
            "output_types": tuple(s.dtype for s in flat_specs),
            "output_shapes": tuple(s.shape for s in flat_specs),
        }
        variant = dataset_ops.dataset_op("GeneratorDataset", arg_tensors, attrs)
        return Dataset(variant, specs)

    @staticmethod
    def from_dask(
        collection: Any,
        blocks: bool = False,
        shuffle: bool = False,
        seed: int | None = None,
        shared_name: str | None = None,
    ) -> Dataset:
        """The rows of a Dask collection, read where the iterator runs (not TF1).

        Args:
            collection: a ``dask.array.Array`` (its rows), a ``dask.dataframe.DataFrame``
                (a dict of its columns), or a dict or tuple of them partitioned alike.
            blocks: one element per partition (a leading dimension of unknown size)
                instead of one per row; ``batch`` on the rows is the usual way.
            shuffle: partitions in a seeded random order each epoch, and each one's
                rows too (``shuffle`` on top mixes rows across partitions).
            seed: the op seed of that order (with the graph seed, as random ops).
            shared_name: what replicas reading the same collection coordinate by
                (default: the name of its keys).

        On a cluster each iterator reads the partitions in its own worker's memory
        first; iterators on several workers (or processes) reading one collection
        share each epoch out so that every row is read once. See
        ``docs/dask_collections.md``.

        Raises:
            TypeError: ``collection`` is not a dask collection or a dict/tuple of them.
            ValueError: their row partitions do not line up, or an array is chunked
                along another axis than its first.
        """
        return Dataset(*from_dask(collection, blocks, shuffle, seed, shared_name))

    @staticmethod
    def zip(datasets: Any) -> Dataset:
        """Elements of ``datasets`` (a tuple or dict of datasets, nested) side by side,
        until the shortest ends."""
        flat = structure.flatten(datasets)
        if not flat or not all(isinstance(d, Dataset) for d in flat):
            raise TypeError("zip takes a (nested) tuple or dict of datasets")
        specs = structure.pack(datasets, [d.specs for d in flat])
        variant = dataset_ops.dataset_op("ZipDataset", [d.variant for d in flat])
        out = Dataset(variant, specs)
        for d in flat:  # the inputs' options, merged (as TF1 merges them)
            if d._options is not None:
                out._options = (
                    d._options if out._options is None else out._options.merge(d._options)
                )
        return out

    @staticmethod
    def list_files(
        file_pattern: Any, shuffle: bool | None = None, seed: int | None = None
    ) -> Dataset:
        """The files matching ``file_pattern`` (a glob, or several), found when the
        iterator starts, sorted, then shuffled unless ``shuffle=False``.

        Raises:
            InvalidArgumentError: when run, no file matches.
        """
        with name_scope(None, "list_files"):
            patterns = convert_to_tensor(file_pattern, dtype=dtypes.string)
            names = apply_op("MatchingFiles", [patterns], name="matching_filenames")
            found = assert_greater(array_ops.size(names), 0, message="No files matched pattern")
            with control_dependencies([found]):
                names = identity(names)
            dataset = Dataset.from_tensor_slices(names)
            if shuffle is None or shuffle:
                dataset = dataset.shuffle(array_ops.size(names, out_type=dtypes.int64), seed=seed)
            return dataset

    # --- transformations -----------------------------------------------------------------
    def concatenate(self, dataset: Dataset) -> Dataset:
        """This dataset's elements, then ``dataset``'s (same structure and types).

        Raises:
            TypeError: the structures or types differ.
        """
        if not structure.same_structure(self.specs, dataset.specs) or (
            self.output_types != dataset.output_types
        ):
            raise TypeError(
                f"Two datasets to concatenate have different types {self.output_types} and "
                f"{dataset.output_types}"
            )
        specs = structure.pack(
            self.specs,
            [
                Spec(a.dtype, structure.most_specific(a.shape, b.shape))
                for a, b in zip(self._flat_specs(), dataset._flat_specs(), strict=True)
            ],
        )
        return self._derive("ConcatenateDataset", [dataset.variant], specs=specs)

    def _trace(self, fn: Callable, what: str) -> tuple[Any, Any]:
        """Traces ``fn`` on one element; returns the sub-graph and ``fn``'s raw result."""
        if not callable(fn):
            raise TypeError(f"`{what}` must be callable.")
        specs = self.specs

        def call(*placeholders: Tensor) -> Any:
            element = structure.pack(specs, list(placeholders))
            return fn(*element) if type(element) is tuple else fn(element)

        flat = [(s.dtype, s.shape) for s in self._flat_specs()]
        sub, raw = trace(call, flat, what)
        return sub, raw

    def map(self, map_func: Callable, num_parallel_calls: int | None = None) -> Dataset:
        """``map_func`` on every element (traced once into the graph)."""
        sub, raw = self._trace(map_func, "map_func")
        with sub.graph.as_default():
            raw = tuple(raw) if isinstance(raw, list) else raw
            outputs = structure.to_tensors(raw, "map_func")
        flat = structure.flatten(outputs)
        seal(sub, flat)
        parallel = (
            (os.cpu_count() or 1)
            if num_parallel_calls == AUTOTUNE
            else int(num_parallel_calls or 1)
        )
        attrs = {
            "num_parallel_calls": parallel,
            "vectorizable": dataset_vectorize.vectorizable(sub, len(self._flat_specs())),
        }
        return self._derive("MapDataset", [], attrs, structure.specs_of(outputs), sub)

    def filter(self, predicate: Callable) -> Dataset:
        """The elements for which ``predicate`` (a scalar bool tensor) is true.

        Raises:
            ValueError: ``predicate`` does not return a scalar boolean tensor.
        """
        sub, raw = self._trace(predicate, "predicate")
        with sub.graph.as_default():
            keep = convert_to_tensor(raw)
        if keep.dtype != dtypes.bool or not keep.shape.is_compatible_with(TensorShape([])):
            raise ValueError("`predicate` must return a scalar boolean tensor.")
        seal(sub, [keep])
        return self._derive("FilterDataset", [], function=sub)

    def _dataset_function(self, fn: Callable, what: str) -> tuple[Any, Dataset]:
        sub, raw = self._trace(fn, what)
        if not isinstance(raw, Dataset):
            raise TypeError(f"`{what}` must return a `Dataset` object.")
        seal(sub, [raw.variant])
        return sub, raw

    def flat_map(self, map_func: Callable) -> Dataset:
        """The elements of the dataset ``map_func`` returns for each element, in turn."""
        sub, inner = self._dataset_function(map_func, "map_func")
        return self._derive("FlatMapDataset", [], specs=inner.specs, function=sub)

    def interleave(
        self,
        map_func: Callable,
        cycle_length: int = AUTOTUNE,
        block_length: int = 1,
        num_parallel_calls: int | None = None,
    ) -> Dataset:
        """``flat_map`` with ``cycle_length`` inner datasets open at once, taking
        ``block_length`` elements from each in turn (TF1's order)."""
        sub, inner = self._dataset_function(map_func, "map_func")
        cycle = (os.cpu_count() or 1) if cycle_length == AUTOTUNE else cycle_length
        inputs = [_int64(cycle, "cycle_length"), _int64(block_length, "block_length")]
        return self._derive("InterleaveDataset", inputs, specs=inner.specs, function=sub)

    def batch(self, batch_size: Any, drop_remainder: bool = False) -> Dataset:
        """Consecutive elements stacked ``batch_size`` at a time (a last, smaller batch
        unless ``drop_remainder``)."""
        lead = self._batch_dim(batch_size, drop_remainder)
        specs = structure.map_structure(
            lambda s: Spec(s.dtype, TensorShape([lead]).concatenate(s.shape)), self.specs
        )
        inputs = [_int64(batch_size, "batch_size"), convert_to_tensor(drop_remainder, dtypes.bool)]
        return self._derive("BatchDataset", inputs, specs=specs)

    @staticmethod
    def _batch_dim(batch_size: Any, drop_remainder: Any) -> int | None:
        if isinstance(batch_size, int) and isinstance(drop_remainder, bool) and drop_remainder:
            return batch_size
        return None

    def padded_batch(
        self,
        batch_size: Any,
        padded_shapes: Any,
        padding_values: Any = None,
        drop_remainder: bool = False,
    ) -> Dataset:
        """``batch`` with every component padded to ``padded_shapes`` (``None`` or -1:
        the longest in the batch) with ``padding_values`` (0, or ``b""`` for strings)."""
        flat_specs = self._flat_specs()
        flat_shapes = [as_shape(s) for s in structure.flatten_shapes(padded_shapes, self.specs)]
        if len(flat_shapes) != len(flat_specs):
            raise ValueError("padded_shapes must have the structure of the dataset's elements")
        if padding_values is None:
            flat_values = [
                convert_to_tensor(b"" if s.dtype == dtypes.string else 0, dtype=s.dtype)
                for s in flat_specs
            ]
        else:
            flat_values = [
                convert_to_tensor(v, dtype=s.dtype)
                for v, s in zip(structure.flatten(padding_values), flat_specs, strict=True)
            ]
        for spec, shape in zip(flat_specs, flat_shapes, strict=True):
            if spec.shape.rank is not None and shape.rank != spec.shape.rank:
                raise ValueError(
                    f"padded_shapes {shape} does not match the rank of the component {spec.shape}"
                )
            if spec.shape.rank is not None and any(
                p is not None and d is not None and p < d
                for p, d in zip(shape.as_list(), spec.shape.as_list(), strict=True)
            ):
                raise ValueError(
                    f"The padded shape {shape} is not compatible with the shape {spec.shape} "
                    "of the corresponding input component (padded_shapes must be at least as "
                    "large)"
                )
        lead = self._batch_dim(batch_size, drop_remainder)
        specs = structure.pack(
            self.specs,
            [
                Spec(spec.dtype, TensorShape([lead]).concatenate(shape))
                for spec, shape in zip(flat_specs, flat_shapes, strict=True)
            ],
        )
        attrs = {
            "padded_shapes": tuple(
                tuple(-1 if d is None else d for d in shape.as_list()) for shape in flat_shapes
            )
        }
        inputs = [_int64(batch_size, "batch_size"), convert_to_tensor(drop_remainder, dtypes.bool)]
        return self._derive("PaddedBatchDataset", inputs + flat_values, attrs, specs)

    def shuffle(
        self,
        buffer_size: Any,
        seed: int | None = None,
        reshuffle_each_iteration: bool | None = None,
    ) -> Dataset:
        """Elements drawn at random from a buffer of ``buffer_size`` (seeded by the graph
        and op seeds as random ops are; a new order each pass unless
        ``reshuffle_each_iteration=False``)."""
        seed1, seed2 = get_seed(seed)
        combined = None if seed1 is None else int(seed1) * 1_000_003 + int(seed2 or 0)
        attrs = {
            "seed": combined,
            "reshuffle_each_iteration": True
            if reshuffle_each_iteration is None
            else bool(reshuffle_each_iteration),
        }
        return self._derive("ShuffleDataset", [_int64(buffer_size, "buffer_size")], attrs)

    def repeat(self, count: Any = None) -> Dataset:
        """The elements ``count`` times over (forever when ``None`` or -1)."""
        return self._derive("RepeatDataset", [_int64(-1 if count is None else count, "count")])

    def take(self, count: Any) -> Dataset:
        """At most the first ``count`` elements (all when -1)."""
        return self._derive("TakeDataset", [_int64(count, "count")])

    def skip(self, count: Any) -> Dataset:
        """All but the first ``count`` elements (none when -1)."""
        return self._derive("SkipDataset", [_int64(count, "count")])

    def prefetch(self, buffer_size: Any) -> Dataset:
        """Up to ``buffer_size`` elements prepared ahead on a background thread."""
        size = 2 if buffer_size == AUTOTUNE else buffer_size
        return self._derive("PrefetchDataset", [_int64(size, "buffer_size")])

    def cache(self, filename: str = "") -> Dataset:
        """The first complete pass kept (in memory, or in ``filename``) and replayed."""
        return self._derive("CacheDataset", [convert_to_tensor(filename, dtypes.string)])

    def unbatch(self) -> Dataset:
        """Each element split along its first dimension into that many elements."""
        specs = self.specs

        def slices(*components: Any) -> Dataset:
            return Dataset.from_tensor_slices(structure.pack(specs, list(components)))

        return self.flat_map(
            lambda *args: slices(*structure.flatten(args if len(args) > 1 else args[0]))
        )

    def shard(self, num_shards: Any, index: Any) -> Dataset:
        """Every ``num_shards``-th element, from the ``index``-th: one input worker's
        part of a dataset all workers read. ``InvalidArgumentError`` (when the
        iterator starts) unless ``num_shards > 0`` and ``0 <= index < num_shards``."""
        return self._derive(
            "ShardDataset", [_int64(num_shards, "num_shards"), _int64(index, "index")]
        )

    def enumerate(self, start: Any = 0) -> Dataset:
        """``(i, element)`` pairs, ``i`` an int64 counting from ``start``."""
        counter = Dataset.range(start, _INT64_MAX)
        out = Dataset.zip((counter, self))
        out._options = self._options
        return out

    def cardinality(self) -> Tensor:
        """The number of elements: an int64 scalar tensor, -1 when endless, -2 when
        unknown (``tf.data.experimental.cardinality``)."""
        return count_elements(self)

    def with_options(self, options: Options) -> Dataset:
        """This dataset with ``options`` merged over the ones it has (``options()``)."""
        if not isinstance(options, Options):
            raise TypeError(f"with_options takes a tf.data.Options, got {options!r}")
        out = Dataset(self.variant, self.specs)
        out._options = self.options().merge(options)
        return out

    def options(self) -> Options:
        """The options set on this dataset or upstream (unset ones are ``None``)."""
        return Options() if self._options is None else self._options.merge(Options())

    def apply(self, transformation_func: Callable[[Dataset], Dataset]) -> Dataset:
        """``transformation_func(self)``, which must return a ``Dataset``."""
        out = transformation_func(self)
        if not isinstance(out, Dataset):
            raise TypeError("`transformation_func` must return a Dataset.")
        return out

    # --- iterators -----------------------------------------------------------------------
    def make_one_shot_iterator(self) -> Any:
        """An iterator that starts by itself and goes through the dataset once."""
        return Iterator.one_shot(self)

    def make_initializable_iterator(self, shared_name: str | None = None) -> Any:
        """An iterator whose ``initializer`` (re)starts a pass over this dataset."""
        return Iterator.initializable(self, shared_name)

    def __repr__(self) -> str:
        return f"<Dataset shapes: {self.output_shapes}, types: {self.output_types}>"
