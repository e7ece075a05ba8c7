"""``tf.data``'s op types: datasets and iterators as graph ops.

A dataset is a tensor of dtype ``variant`` whose value is a ``Pipeline``
(``data/pipeline.py``), built by the kernel of its op from the op's inputs: a
``from_tensor_slices`` of placeholders takes the arrays fed when the iterator is
initialized, as in TF1. Functions (``map``, ``filter``, ``flat_map``, ``interleave``)
are traced into ``SubGraph`` attrs, as ``while_loop`` bodies are, and run per element
through the compiled sub-graph; tensors they capture are extra inputs of the op.

An iterator is a resource (``IteratorHandle``) in the store of its device:
``MakeIterator`` starts a pass over a dataset (a one-shot iterator's handle op,
``OneShotIterator``, starts its own the first time it runs), ``IteratorGetNext`` takes
the next element (``OutOfRangeError`` at the end). An iterator made without a
``shared_name`` belongs to the session that runs it, as TF1's per-session resource names
make it: its store name is ``private_name(op name, ctx.session)``, so a second session
of the same graph (or another client's) starts its own pass, and a closing session
releases it. One with a ``shared_name`` is found by that name by every session.

A variant input joins its consumer's colocation group (``compile/placement.py``), so a
pipeline is built and run on the worker whose iterator consumes it; only elements
travel.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...framework import dtypes, errors, registry
from ...framework.graph import Operation, Tensor
from ...framework.kernel_context import Folded, private_name
from ...framework.subgraph import SubGraph
from ...framework.tensor_shape import TensorShape
from ..build import apply_op, apply_op_n
from ..host import to_host
from . import files as dataset_files
from . import pipeline as pipe
from .selection import Shard

NOT_DIFF = registry.NOT_DIFFERENTIABLE
_SCALAR = TensorShape([])


def _int(value: Any) -> int:
    return int(to_host(value))


def _text(value: Any) -> str:
    value = to_host(value)
    value = value.item() if isinstance(value, np.ndarray) else value
    return value.decode() if isinstance(value, bytes) else str(value)


def _dataset_output(op: Operation) -> list:
    return [(dtypes.variant, _SCALAR)]


def _runner(ctx: Any, attrs: dict) -> Any:
    """The traced function as ``run(element + captured) -> results``: element arrays go
    to the op's device (``ctx.xp``) and results come back to the host pipeline. A
    compiled body also returns what its stateful ops (random draws) output: only the
    function's own results are kept."""
    run, n, xp = ctx.subgraph(attrs["f"]), attrs["num_outputs"], ctx.xp

    def on_device(value: Any) -> Any:
        if not isinstance(value, np.ndarray) or value.dtype.kind == "O":  # strings stay
            return value
        return xp.asarray(value)

    return lambda args: [to_host(v) for v in run([on_device(a) for a in args])[:n]]


# --- the kernels, one per dataset op type -----------------------------------------------
def _slices(ctx: Any, attrs: dict) -> Any:
    return lambda *components: pipe.Slices([np.asarray(to_host(c)) for c in components])


def _tensors(ctx: Any, attrs: dict) -> Any:
    return lambda *components: pipe.Tensors([np.asarray(to_host(c)) for c in components])


def _range(ctx: Any, attrs: dict) -> Any:
    return lambda start, stop, step: pipe.Range(_int(start), _int(stop), _int(step))


def _generator(ctx: Any, attrs: dict) -> Any:
    make, flatten = attrs["generator"], attrs["flatten"]
    types = [t.as_numpy_dtype for t in attrs["output_types"]]

    def generator_dataset(*args: Any) -> Any:
        values = [to_host(a) for a in args]  # from_generator(args=...): numpy, as in TF1
        return pipe.Generator(lambda: make(*values), flatten, types, attrs["output_shapes"])

    return generator_dataset


def _zip(ctx: Any, attrs: dict) -> Any:
    return lambda *inputs: pipe.Zip(inputs)


def _concatenate(ctx: Any, attrs: dict) -> Any:
    return lambda first, second: pipe.Concatenate(first, second)


def _map(ctx: Any, attrs: dict) -> Any:
    run, parallel = _runner(ctx, attrs), attrs["num_parallel_calls"]
    # A debug session checks every kernel's output against the element's static shape:
    # it runs the function per element only.
    batched = attrs["vectorizable"] and not getattr(ctx, "debug", False)

    def map_dataset(source: Any, *captured: Any) -> Any:
        return pipe.Map(source, run, list(captured), parallel, batched)

    return map_dataset


def _filter(ctx: Any, attrs: dict) -> Any:
    run = _runner(ctx, attrs)
    return lambda source, *captured: pipe.Filter(source, run, list(captured))


def _flat_map(ctx: Any, attrs: dict) -> Any:
    run = _runner(ctx, attrs)
    return lambda source, *captured: pipe.FlatMap(source, run, list(captured))


def _interleave(ctx: Any, attrs: dict) -> Any:
    run = _runner(ctx, attrs)

    def interleave(source: Any, cycle: Any, block: Any, *captured: Any) -> Any:
        for value, what in ((cycle, "cycle_length"), (block, "block_length")):
            if _int(value) <= 0:
                raise errors.InvalidArgumentError(
                    None, None, f"InterleaveDataset: {what} must be greater than zero"
                )
        return pipe.Interleave(source, run, list(captured), _int(cycle), _int(block))

    return interleave


def _batch(ctx: Any, attrs: dict) -> Any:
    return lambda source, size, drop: pipe.Batch(source, _int(size), bool(to_host(drop)))


def _padded_batch(ctx: Any, attrs: dict) -> Any:
    shapes = [list(s) for s in attrs["padded_shapes"]]

    def padded_batch(source: Any, size: Any, drop: Any, *padding: Any) -> Any:
        values = [to_host(p).item() if hasattr(to_host(p), "item") else p for p in padding]
        return pipe.PaddedBatch(source, _int(size), shapes, values, bool(to_host(drop)))

    return padded_batch


def _shuffle(ctx: Any, attrs: dict) -> Any:
    seed, reshuffle = attrs["seed"], attrs["reshuffle_each_iteration"]
    return lambda source, size: pipe.Shuffle(source, _int(size), seed, reshuffle)


def _count_op(kind: type) -> Any:
    def factory(ctx: Any, attrs: dict) -> Any:
        return lambda source, count: kind(source, _int(count))

    return factory


def _cache(ctx: Any, attrs: dict) -> Any:
    return lambda source, filename: pipe.Cache(source, _text(filename))


def _prefetch(ctx: Any, attrs: dict) -> Any:
    return lambda source, size: pipe.Prefetch(source, _int(size))


def _reader(kind: type) -> Any:
    def factory(ctx: Any, attrs: dict) -> Any:
        return lambda filenames, compression: kind(to_host(filenames), _text(compression))

    return factory


def _shard(ctx: Any, attrs: dict) -> Any:
    return lambda source, num_shards, index: Shard(source, _int(num_shards), _int(index))


def _fixed_length_reader(ctx: Any, attrs: dict) -> Any:
    def fixed_length_records(
        filenames: Any, header: Any, record: Any, footer: Any, compression: Any
    ) -> Any:
        return dataset_files.FixedLengthRecords(
            to_host(filenames), _int(header), _int(record), _int(footer), _text(compression)
        )

    return fixed_length_records


_DATASETS = {
    "TensorSliceDataset": _slices,
    "TensorDataset": _tensors,
    "RangeDataset": _range,
    "GeneratorDataset": _generator,
    "ZipDataset": _zip,
    "ConcatenateDataset": _concatenate,
    "MapDataset": _map,
    "FilterDataset": _filter,
    "FlatMapDataset": _flat_map,
    "InterleaveDataset": _interleave,
    "BatchDataset": _batch,
    "PaddedBatchDataset": _padded_batch,
    "ShuffleDataset": _shuffle,
    "RepeatDataset": _count_op(pipe.Repeat),
    "TakeDataset": _count_op(pipe.Take),
    "SkipDataset": _count_op(pipe.Skip),
    "ShardDataset": _shard,
    "CacheDataset": _cache,
    "PrefetchDataset": _prefetch,
    "TextLineDataset": _reader(dataset_files.TextLines),
    "TFRecordDataset": _reader(dataset_files.Records),
    "FixedLengthRecordDataset": _fixed_length_reader,
}
for _type, _kernel in _DATASETS.items():
    # Datasets and iterators are host pipelines: no GPU kernels (as in TF1).
    registry.register(registry.OpDef(_type, _dataset_output, _kernel, NOT_DIFF, gpu_kernel=False))


def dataset_op(
    op_type: str,
    inputs: Sequence[Any],
    attrs: dict | None = None,
    function: SubGraph | None = None,
    name: str | None = None,
) -> Tensor:
    """Adds a dataset op; a traced ``function`` becomes attr ``f`` and its captured
    tensors extra inputs after ``inputs``."""
    attrs = dict(attrs or {})
    inputs = list(inputs)
    if function is not None:
        attrs["f"] = function
        attrs["num_outputs"] = len(function.outputs)
        inputs += function.captured
    return apply_op(op_type, inputs, attrs, name=name or op_type)


# --- iterators ---------------------------------------------------------------------------
def _iterator_key(name: str) -> str:
    return f"iterator:{name}"


def _state(ctx: Any, name: str) -> pipe.IteratorState:
    return ctx.resources.get_or_create(_iterator_key(name), lambda: pipe.IteratorState(name))


def _handle_output(op: Operation) -> list:
    return [(dtypes.resource, _SCALAR)]


def _resource_name(ctx: Any, attrs: dict) -> str:
    """The iterator's name in its store: its ``shared_name``, or without one a name
    private to the session running the kernel (see the module docstring)."""
    return attrs["shared_name"] or private_name(ctx.op_name, getattr(ctx, "session", ""))


def _handle_kernel(ctx: Any, attrs: dict) -> Folded:
    name = _resource_name(ctx, attrs)
    _state(ctx, name)
    return Folded(name)


def _one_shot_kernel(ctx: Any, attrs: dict) -> Any:
    name = _resource_name(ctx, attrs)

    def one_shot_iterator(pipeline: Any) -> str:
        state = _state(ctx, name)
        state.start_once(pipeline)
        return name

    return one_shot_iterator


def _no_output(op: Operation) -> list:
    return []


def _make_iterator_kernel(ctx: Any, attrs: dict) -> Any:
    def make_iterator(pipeline: Any, handle: str) -> None:
        _state(ctx, handle).start(pipeline)

    return make_iterator


def _get_next_output(op: Operation) -> list:
    return list(zip(op.attrs["output_types"], op.attrs["output_shapes"], strict=True))


# dtype kinds that one iterator's element may not turn into another's (a float into an int).
_KIND = {"f": "real", "c": "complex", "i": "int", "u": "int", "b": "bool", "O": "string"}
_KIND.update(S="string", U="string")


def _no_iterator(name: str) -> Any:
    """Raised for a handle naming no iterator (a bad ``from_string_handle`` feed)."""
    raise errors.InvalidArgumentError(
        None,
        None,
        f"IteratorGetNext: the iterator handle '{name}' names no iterator (feed the "
        "string_handle() of one built in this graph)",
    )


def _get_next_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    types = [t.as_numpy_dtype for t in attrs["output_types"]]

    def get_next(handle: str) -> Any:
        name = _text(handle)
        element = ctx.resources.get_or_create(_iterator_key(name), lambda: _no_iterator(name))
        element = element.next()
        if len(element) != len(types):
            raise errors.InvalidArgumentError(
                None,
                None,
                f"the iterator's dataset yields {len(element)} components, its "
                f"get_next expects {len(types)}",
            )
        for i, (v, t) in enumerate(zip(element, types, strict=True)):
            have = getattr(v, "dtype", None)
            if have is not None and _KIND.get(have.kind) != _KIND.get(np.dtype(t).kind):
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"Data type mismatch at component {i}: expected {np.dtype(t).name} but "
                    f"got {have.name} (iterator '{name}')",
                )
        out = tuple(
            np.asarray(v, dtype=object) if t is np.object_ else xp.asarray(v, dtype=t)
            for v, t in zip(element, types, strict=True)
        )
        return out[0] if len(out) == 1 else out

    return get_next


def _string_handle_output(op: Operation) -> list:
    return [(dtypes.string, _SCALAR)]


def _to_string_handle_kernel(ctx: Any, attrs: dict) -> Any:
    return lambda handle: np.asarray(_text(handle).encode(), dtype=object)


def _from_string_handle_kernel(ctx: Any, attrs: dict) -> Any:
    return lambda string_handle: _text(string_handle)


for _type, _infer, _kernel, _stateful in [
    ("IteratorHandle", _handle_output, _handle_kernel, True),
    ("OneShotIterator", _handle_output, _one_shot_kernel, True),
    ("MakeIterator", _no_output, _make_iterator_kernel, True),
    ("IteratorGetNext", _get_next_output, _get_next_kernel, True),
    ("IteratorToStringHandle", _string_handle_output, _to_string_handle_kernel, False),
    ("IteratorFromStringHandle", _handle_output, _from_string_handle_kernel, False),
]:
    registry.register(
        registry.OpDef(_type, _infer, _kernel, NOT_DIFF, stateful=_stateful, gpu_kernel=False)
    )


def iterator_handle(shared_name: str, name: str) -> Tensor:
    """An iterator's handle; ``shared_name`` ``""``: private to each session."""
    return apply_op("IteratorHandle", [], {"shared_name": shared_name}, name=name)


def one_shot_iterator(dataset: Tensor, shared_name: str, name: str) -> Tensor:
    """A handle that starts its iterator on ``dataset`` the first time it runs
    (``shared_name`` ``""``: private to each session, as TF1's one-shot iterators)."""
    return apply_op("OneShotIterator", [dataset], {"shared_name": shared_name}, name=name)


def make_iterator(dataset: Tensor, handle: Tensor, name: str | None = None) -> Operation:
    return apply_op_n("MakeIterator", [dataset, handle], name=name)


def get_next(
    handle: Tensor, types: Sequence[Any], shapes: Sequence[TensorShape], name: str | None = None
) -> list[Tensor]:
    attrs = {"output_types": tuple(types), "output_shapes": tuple(shapes)}
    return list(apply_op_n("IteratorGetNext", [handle], attrs, name=name).outputs)


def to_string_handle(handle: Tensor, name: str | None = None) -> Tensor:
    return apply_op("IteratorToStringHandle", [handle], name=name)


def from_string_handle(string_handle: Any, name: str | None = None) -> Tensor:
    return apply_op("IteratorFromStringHandle", [string_handle], name=name)
