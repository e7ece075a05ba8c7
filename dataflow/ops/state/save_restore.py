"""Save and restore ops: each device writes and reads its own variables; and
``ReadFile`` (``tf.read_file``), a whole file's bytes as a string scalar.

``SaveShard(prefix, *handles)`` runs on the device holding the variables (it takes
their handles, so the placer puts it there), writes one shard file from that device's
store and returns the shard's index entries as a JSON string; the client writes the
index. The files are TF's (``state/checkpoint/tf_bundle.py``) unless the op's ``format`` attr
is ``"dataflow"`` (``state/checkpoint/native.py``); a restore reads either, by content.

A restore runs in two phases of ``RestoreShard(prefix, *handles)``, both on the
variables' device: ``phase="load"`` reads its variables' entries from whichever shards
hold them (so a checkpoint restores onto a different cluster shape), checks sizes,
checksums, shapes and dtypes, and stages the arrays in the device's store;
``phase="commit"`` (with a control input from every load of the restore) moves them
into the variables. A damaged checkpoint fails a load, so no commit runs on any device:
a restore changes every variable or none, on one device or many. (Arrays staged by the
loads that did succeed are dropped by the next restore of the same variables.)
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from ...framework import dtypes, errors, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor
from ...framework.tensor_shape import scalar
from ..build import apply_op
from .checkpoint import native as checkpoint_format
from .checkpoint import tf_bundle as checkpoint_tf_bundle


def _as_str(value: Any) -> str:
    value = value.item() if hasattr(value, "item") else value
    return value.decode() if isinstance(value, bytes) else str(value)


def _to_host(value: Any) -> np.ndarray:
    # Files are written from host memory; a device array (cupy) is copied over first.
    get = getattr(value, "get", None)
    return np.asarray(get() if get is not None and not isinstance(value, np.ndarray) else value)


def _save_kernel(ctx: Any, attrs: dict) -> Any:
    store, names = ctx.resources, attrs["names"]
    shard, num_shards = attrs["shard"], attrs["num_shards"]
    sync = attrs.get("sync", False)
    # TF's format (``state.checkpoint.tf_bundle``) unless the saver asked for dataflow's own.
    writer = checkpoint_format if attrs.get("format") == "dataflow" else checkpoint_tf_bundle

    def save(prefix: Any, *handles: str) -> Any:
        arrays = {key: _to_host(store.read(h)) for key, h in zip(names, handles)}
        entries = writer.write_shard(_as_str(prefix), shard, num_shards, arrays, sync)
        return np.asarray(json.dumps(entries), dtype=object)

    return save


_STAGED = "checkpoint:staged"  # store object: {(prefix, handle): array} between phases


def _restore_kernel(ctx: Any, attrs: dict) -> Any:
    store, xp = ctx.resources, ctx.xp
    if attrs.get("phase", "load") == "commit":

        def commit(prefix: Any, *handles: str) -> None:
            prefix = _as_str(prefix)
            staged = store.get_or_create(_STAGED, dict)
            try:
                values = [staged.pop((prefix, h)) for h in handles]
            except KeyError as exc:
                raise errors.InternalError(
                    None, None, f"restore of '{prefix}': nothing was loaded for {exc.args[0][1]}"
                ) from None
            for handle, value in zip(handles, values):
                store.write(handle, value)

        return commit

    names, specs = attrs["names"], attrs["specs"]
    # Per name, a part of a partitioned variable's ``SaveSliceInfo`` (or None): it
    # restores from its slice of the full variable, however the checkpoint split it.
    parts = attrs.get("parts") or (None,) * len(names)

    def load(prefix: Any, *handles: str) -> None:
        prefix = _as_str(prefix)
        staged = store.get_or_create(_STAGED, dict)
        for key in [k for k in staged if k[1] in handles]:  # left by a failed restore
            del staged[key]
        index = checkpoint_tf_bundle.read_index(prefix)
        mismatch = None
        for key, part, (dtype, shape) in zip(names, parts, specs):  # before reading
            try:
                found, stored = checkpoint_tf_bundle.restore_spec(prefix, index, key, part)
            except errors.InvalidArgumentError as exc:
                mismatch = mismatch or exc.message
                continue
            if not shape.is_compatible_with(stored):
                mismatch = mismatch or (
                    f"Checkpoint '{prefix}' holds {key} with shape "
                    f"{stored}, but the variable has shape {shape}"
                )
            elif found != dtype.as_numpy_dtype:
                mismatch = mismatch or (
                    f"Checkpoint '{prefix}' holds {key} as {found}, but the variable is "
                    f"{dtype.name}"
                )
        if mismatch is not None:
            # A damaged checkpoint is damaged before it is a mismatch: on this error path
            # only, every entry's bytes are read and checked (size, checksum) first, so a
            # corrupted index that merely looks like another shape is a DataLossError.
            checkpoint_tf_bundle.restore_values(prefix, index, names, parts)
            raise errors.InvalidArgumentError(None, None, mismatch)
        values = checkpoint_tf_bundle.restore_values(prefix, index, names, parts)
        # Staged only after every entry was read and checked; the commit phase stores.
        for handle, value in zip(handles, values):
            value = xp.asarray(value)
            if isinstance(value, np.ndarray):
                value.flags.writeable = False
            staged[(prefix, handle)] = value

    return load


def _infer_save(op: Operation) -> list:
    if op.inputs[0].dtype != dtypes.string:
        raise TypeError("the checkpoint prefix must be a string tensor")
    return [(dtypes.string, scalar())]


def _infer_restore(op: Operation) -> list:
    if op.inputs[0].dtype != dtypes.string:
        raise TypeError("the checkpoint prefix must be a string tensor")
    return []


registry.register(
    registry.OpDef(
        "SaveShard", _infer_save, _save_kernel, registry.NOT_DIFFERENTIABLE, stateful=True
    )
)
registry.register(
    registry.OpDef(
        "RestoreShard", _infer_restore, _restore_kernel, registry.NOT_DIFFERENTIABLE, stateful=True
    )
)


# --- ReadFile ----------------------------------------------------------------------------
def _infer_read_file(op: Operation) -> list:
    filename = op.inputs[0]
    if filename.dtype != dtypes.string:
        raise TypeError(f"ReadFile: filename must be a string tensor, got {filename.dtype.name}")
    if filename.shape.rank not in (None, 0):
        raise ValueError(f"ReadFile: filename must be a scalar, got shape {filename.shape}")
    return [(dtypes.string, scalar())]


def _read_file_kernel(ctx: Any, attrs: dict) -> Any:
    import fsspec  # on first use: it costs 0.03 s of ``import dataflow``

    def read_file(filename: Any) -> Any:
        path = _as_str(filename)
        try:
            with fsspec.open(path, "rb") as f:
                contents = f.read()
        except (FileNotFoundError, IsADirectoryError):
            raise errors.NotFoundError(None, None, f"{path}; No such file or directory") from None
        return np.asarray(contents, dtype=object)

    return read_file


# Not foldable: the file may change between runs.
registry.register(
    registry.OpDef(
        "ReadFile",
        _infer_read_file,
        _read_file_kernel,
        registry.NOT_DIFFERENTIABLE,
        gpu_kernel=False,
    )
)


def read_file(filename: Any, name: str | None = None) -> Tensor:
    """The contents of the file ``filename`` (a string scalar), as a string scalar.

    Raises:
        TypeError: ``filename`` is not a string.
        NotFoundError: when run, the file does not exist.
    """
    return apply_op("ReadFile", [convert_to_tensor(filename, dtype=dtypes.string)], name=name)
