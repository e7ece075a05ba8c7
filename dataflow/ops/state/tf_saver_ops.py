"""TF's checkpoint op types, so that a saver a MetaGraph holds runs here: ``SaveV2``,
``RestoreV2``, ``MergeV2Checkpoints`` and ``ShardedFilename``.

A MetaGraph TF1 wrote names its saver's ops in its ``SaverDef``; ``import_meta_graph``
rebuilds them, and ``Saver(saver_def=...)`` runs them, as TF1 does. Our own ``Saver``
writes with ``SaveShard``/``RestoreShard`` (``save_restore.py``), which take variable
handles so each device writes its own; a MetaGraph we export writes these TF op types
in their place (``train/saver_graph.py``) so TF can run its saver. The files are TF's V2
bundle either way (``checkpoint/tf_bundle.py``).

* ``SaveV2(prefix, tensor_names, shape_and_slices, *tensors)`` writes a whole
  checkpoint at ``prefix`` (one data shard, then the index). A non-empty slice spec
  (``"10 4 0,5:0,4"``, TF's) saves that tensor as a slice of a partitioned variable.
* ``RestoreV2(prefix, tensor_names, shape_and_slices)`` returns one tensor per name, of
  the ``dtypes`` attr's types; a slice spec reads that slice of the stored variable.
  Every entry is checked before it is read (``tf_bundle``): a damaged file is
  ``DataLossError``, a missing name ``NotFoundError``, another dtype
  ``InvalidArgumentError``.
* ``ShardedFilename(basename, shard, num_shards)`` is ``basename-KKKKK-of-NNNNN``.
* ``StaticRegexFullMatch(input)`` tells which strings match the ``pattern`` attr
  whole: TF1's sharded saver asks it whether the prefix is an ``s3://`` path.
* ``MergeV2Checkpoints(checkpoint_prefixes, destination_prefix)`` moves the data files
  of several one-shard checkpoints (a sharded save's temporaries) into one checkpoint
  of that many shards and writes its index; with ``delete_old_dirs`` it removes the
  directories the inputs were in.
"""

from __future__ import annotations

import os
import re
from typing import Any

import numpy as np

from ...framework import dtypes, errors, registry
from ...framework.graph import Operation
from ...framework.tensor_shape import TensorShape, scalar
from .checkpoint import native
from .checkpoint import tf_bundle as bundle


def _text(value: Any) -> str:
    value = value.item() if hasattr(value, "item") else value
    return value.decode() if isinstance(value, bytes) else str(value)


def _texts(values: Any) -> list[str]:
    return [_text(v) for v in np.asarray(values, dtype=object).reshape(-1).tolist()]


def parse_slice_spec(name: str, spec: str) -> bundle.SaveSliceInfo | None:
    """The ``SaveSliceInfo`` of TF's slice spec ``"<full dims> <start,length:...>"`` (an
    extent ``-`` is the whole dimension), or ``None`` for ``""``.

    Raises:
        errors.InvalidArgumentError: ``spec`` is not such a string.
    """
    if not spec:
        return None
    try:
        *dims, extents = spec.split(" ")
        full = [int(d) for d in dims]
        pairs = [("0", "-") if e == "-" else e.split(",") for e in extents.split(":")]
        offsets = [int(s) for s, _ in pairs]
        lengths = [d - o if n == "-" else int(n) for (_, n), o, d in zip(pairs, offsets, full)]
        if len(pairs) != len(full) or any(
            o < 0 or n < 0 or o + n > d for o, n, d in zip(offsets, lengths, full)
        ):
            raise ValueError(spec)
    except ValueError:
        raise errors.InvalidArgumentError(
            None, None, f"Bad slice spec for {name}: {spec!r}"
        ) from None
    return bundle.SaveSliceInfo(name, tuple(full), tuple(offsets), tuple(lengths))


def _host(value: Any) -> np.ndarray:
    get = getattr(value, "get", None)
    return np.asarray(get() if get is not None and not isinstance(value, np.ndarray) else value)


# --- SaveV2 ------------------------------------------------------------------------------
def _infer_save(op: Operation) -> list:
    for i, what in enumerate(("prefix", "tensor_names", "shape_and_slices")):
        if op.inputs[i].dtype != dtypes.string:
            raise TypeError(f"SaveV2: {what} must be a string tensor")
    return []


def _save_kernel(ctx: Any, attrs: dict) -> Any:
    def save(prefix: Any, names: Any, specs: Any, *tensors: Any) -> None:
        prefix, names, specs = _text(prefix), _texts(names), _texts(specs)
        if not len(names) == len(specs) == len(tensors):
            raise errors.InvalidArgumentError(
                None,
                None,
                f"SaveV2: {len(names)} names, {len(specs)} slice specs and "
                f"{len(tensors)} tensors (they must be as many)",
            )
        arrays: dict[str, np.ndarray] = {}
        full: dict[str, dict[str, Any]] = {}
        for name, spec, value in zip(names, specs, tensors):
            part = parse_slice_spec(name, spec)
            value = _host(value)
            if part is None:
                arrays[name] = value
                continue
            arrays[bundle.slice_key(name, part.extents)] = value
            entry = full.setdefault(
                name,
                {"dtype": bundle.tf_dtype_name(value.dtype), "shape": list(part.full_shape)},
            )
            entry.setdefault("slices", []).append(part.extents)
        entries = bundle.write_shard(prefix, 0, 1, arrays)
        bundle.write_index(prefix, 1, {**entries, **full})

    return save


registry.register(
    registry.OpDef(
        "SaveV2",
        _infer_save,
        _save_kernel,
        registry.NOT_DIFFERENTIABLE,
        stateful=True,
        gpu_kernel=False,
    )
)


# --- RestoreV2 ---------------------------------------------------------------------------
def _infer_restore(op: Operation) -> list:
    for i, what in enumerate(("prefix", "tensor_names", "shape_and_slices")):
        if op.inputs[i].dtype != dtypes.string:
            raise TypeError(f"RestoreV2: {what} must be a string tensor")
    return [(dtypes.as_dtype(d), TensorShape(None)) for d in op.attrs["dtypes"]]


def _restore_kernel(ctx: Any, attrs: dict) -> Any:
    wanted = [dtypes.as_dtype(d) for d in attrs["dtypes"]]

    def restore(prefix: Any, names: Any, specs: Any) -> Any:
        prefix, names, specs = _text(prefix), _texts(names), _texts(specs)
        if not len(names) == len(specs) == len(wanted):
            raise errors.InvalidArgumentError(
                None,
                None,
                f"RestoreV2: {len(names)} names and {len(specs)} slice specs for "
                f"{len(wanted)} dtypes (they must be as many)",
            )
        index = bundle.read_index(prefix)
        parts = [parse_slice_spec(n, s) for n, s in zip(names, specs)]
        for name, part, dtype in zip(names, parts, wanted):
            found, _ = bundle.restore_spec(prefix, index, name, part)
            if np.dtype(found) != np.dtype(dtype.as_numpy_dtype):
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"tensor_name = {name}; expected dtype {dtype.name} does not equal "
                    f"original dtype {dtypes.as_dtype(found).name} (checkpoint '{prefix}')",
                )
        values = [
            v if v.dtype == object else ctx.xp.asarray(v)  # strings stay host objects
            for v in bundle.restore_values(prefix, index, names, parts)
        ]
        return values[0] if len(values) == 1 else tuple(values)

    return restore


registry.register(
    registry.OpDef(
        "RestoreV2",
        _infer_restore,
        _restore_kernel,
        registry.NOT_DIFFERENTIABLE,
        stateful=True,
        gpu_kernel=False,
    )
)


# --- ShardedFilename ---------------------------------------------------------------------
def _infer_sharded_filename(op: Operation) -> list:
    if op.inputs[0].dtype != dtypes.string:
        raise TypeError("ShardedFilename: basename must be a string tensor")
    return [(dtypes.string, scalar())]


def _sharded_filename_kernel(ctx: Any, attrs: dict) -> Any:
    def sharded_filename(basename: Any, shard: Any, num_shards: Any) -> Any:
        name = f"{_text(basename)}-{int(shard):05d}-of-{int(num_shards):05d}"
        return np.asarray(name.encode(), dtype=object)

    return sharded_filename


registry.register(
    registry.OpDef(
        "ShardedFilename",
        _infer_sharded_filename,
        _sharded_filename_kernel,
        registry.NOT_DIFFERENTIABLE,
        gpu_kernel=False,
    )
)


# --- MergeV2Checkpoints ------------------------------------------------------------------
def _infer_merge(op: Operation) -> list:
    if any(t.dtype != dtypes.string for t in op.inputs):
        raise TypeError("MergeV2Checkpoints: the prefixes must be string tensors")
    return []


def merge_checkpoints(sources: list[str], destination: str, delete_old_dirs: bool) -> None:
    """Moves one-shard checkpoints ``sources`` into the checkpoint ``destination`` (their
    shards in order) and writes its index, as TF's ``MergeV2Checkpoints``.

    Raises:
        errors.NotFoundError / errors.DataLossError: a source is missing or damaged.
        errors.InvalidArgumentError: a source has several shards, or two sources hold
            the same tensor.
    """
    n = len(sources)
    entries: dict[str, dict[str, Any]] = {}
    indexes = [bundle.read_index(source) for source in sources]
    for k, (source, index) in enumerate(zip(sources, indexes)):
        if index["format"] != bundle.FORMAT or index["num_shards"] != 1:
            raise errors.InvalidArgumentError(
                None, None, f"MergeV2Checkpoints: {source} is not a one-shard TF checkpoint"
            )
        for name, entry in index["entries"].items():
            if "slices" in entry and name in entries and "slices" in entries[name]:
                entries[name]["slices"].extend(entry["slices"])
                continue
            if name in entries:
                raise errors.InvalidArgumentError(
                    None, None, f"MergeV2Checkpoints: {name} is in two of the checkpoints"
                )
            entries[name] = dict(entry, shard=k) if "slices" not in entry else dict(entry)
    for k, source in enumerate(sources):
        os.replace(native.shard_path(source, 0, 1), native.shard_path(destination, k, n))
    bundle.write_index(destination, n, entries)
    for source in sources:
        try:
            os.remove(native.index_path(source))
        except FileNotFoundError:
            pass
        if delete_old_dirs:
            try:
                os.rmdir(os.path.dirname(os.path.abspath(source)))
            except OSError:
                pass  # not empty, or already gone: as TF, which ignores it too


def _merge_kernel(ctx: Any, attrs: dict) -> Any:
    delete_old_dirs = bool(attrs.get("delete_old_dirs", True))

    def merge(prefixes: Any, destination: Any) -> None:
        merge_checkpoints(_texts(prefixes), _text(destination), delete_old_dirs)

    return merge


registry.register(
    registry.OpDef(
        "MergeV2Checkpoints",
        _infer_merge,
        _merge_kernel,
        registry.NOT_DIFFERENTIABLE,
        stateful=True,
        gpu_kernel=False,
    )
)


# --- StaticRegexFullMatch ----------------------------------------------------------------
def _infer_regex(op: Operation) -> list:
    if op.inputs[0].dtype != dtypes.string:
        raise TypeError("StaticRegexFullMatch: input must be a string tensor")
    try:
        re.compile(op.attrs["pattern"])
    except re.error as exc:
        raise ValueError(
            f"StaticRegexFullMatch: bad pattern {op.attrs['pattern']!r}: {exc}"
        ) from None
    return [(dtypes.bool, op.inputs[0].shape)]


def _regex_kernel(ctx: Any, attrs: dict) -> Any:
    pattern = re.compile(attrs["pattern"])
    match = np.frompyfunc(
        lambda s: (
            pattern.fullmatch(s.decode(errors="replace") if isinstance(s, bytes) else s) is not None
        ),
        1,
        1,
    )

    def full_match(strings: Any) -> Any:
        return ctx.xp.asarray(np.asarray(match(np.asarray(strings, dtype=object)), dtype=bool))

    return full_match


registry.register(
    registry.OpDef(
        "StaticRegexFullMatch",
        _infer_regex,
        _regex_kernel,
        registry.NOT_DIFFERENTIABLE,
        foldable=True,
        gpu_kernel=False,
    )
)
