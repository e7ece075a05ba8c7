"""``tf.train.Saver``: checkpoints written by each device from where its variables live.

The saver groups its variables by requested device and builds, per group, one
``SaveShard`` and two ``RestoreShard`` ops (load, then commit once every group has
loaded) taking the variables' handles, so on a cluster each worker writes (and reads)
its own variables and no variable travels through the client. ``save`` runs the shard
ops, then writes the index and the ``checkpoint`` state file, each atomically. The files
are TF's V2 format (``ops/state/checkpoint/tf_bundle.py``), so TF reads them, unless
``file_format="dataflow"`` asks for dataflow's own (``ops/state/checkpoint/native.py``); a
restore reads either (and what TF wrote), telling them apart by content. A restore reads
entries from whichever shards hold them, so a checkpoint written on 2 ps tasks restores
on 1, or in an embedded session; it changes every variable or, if any shard is damaged,
none. A save or restore first removes the temporaries that saves killed midway left in
the directory.
"""

from __future__ import annotations

import json
import numbers
import os
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..framework import dtypes, errors
from ..framework.graph import Tensor, get_default_graph
from ..ops.constant import placeholder
from ..ops.control.group import group
from ..ops.state.checkpoint import native as checkpoint_format
from ..ops.state.checkpoint import tf_bundle as checkpoint_tf_bundle
from ..ops.state.checkpoint.temps import remove_stale_temps
from ..ops.state.variables import GLOBAL_VARIABLES, Variable, global_variables
from . import meta_graph, saver_graph
from .training_util import global_step as training_global_step

_STATE_FILE = "checkpoint"


@dataclass
class CheckpointState:
    """The parsed ``checkpoint`` state file of a directory."""

    model_checkpoint_path: str
    all_model_checkpoint_paths: list[str] = field(default_factory=list)


class Saver:
    """Saves and restores variables.

    Args:
        var_list: variables to save: a list (keyed by op name) or a dict
            ``{name: variable}``; default: all global variables.
        max_to_keep: how many recent checkpoints to keep (0 or None: all).
        name: name scope of the saver's ops.
        allow_empty: permit a saver with no variables.
        sync: fsync every file before it is renamed into place, so a checkpoint also
            survives a machine crash (slower: the data must reach the disk). Without
            it (the default, as TF's checkpoints), a checkpoint survives the saving
            process being killed at any point, which is what recovery needs.
        file_format: ``"tf"`` (the default): TF's V2 checkpoint files, which TF reads;
            ``"dataflow"``: dataflow's own format (``ops/state/checkpoint/native.py``).
    """

    def __init__(
        self,
        var_list: Any = None,
        reshape: bool = False,
        sharded: bool = True,
        max_to_keep: int | None = 5,
        keep_checkpoint_every_n_hours: float = 10000.0,
        name: str | None = None,
        restore_sequentially: bool = False,
        saver_def: Any = None,
        builder: Any = None,
        defer_build: bool = False,
        allow_empty: bool = False,
        write_version: int = 2,
        pad_step_number: bool = False,
        save_relative_paths: bool = False,
        filename: str | None = None,
        sync: bool = False,
        file_format: str = "tf",
    ):
        self._saver_def = saver_def
        self._max_to_keep = max_to_keep
        self._keep_hours = keep_checkpoint_every_n_hours
        self._last_checkpoints: list[str] = []
        self._graph = get_default_graph()
        if saver_def is not None:
            self._init_from_saver_def(saver_def, name)
            return
        if file_format not in ("tf", "dataflow"):
            raise ValueError(f"Saver file_format must be 'tf' or 'dataflow', got {file_format!r}")
        self._writer = checkpoint_tf_bundle if file_format == "tf" else checkpoint_format
        if var_list is None:
            var_list = global_variables()
        if isinstance(var_list, dict):
            named = dict(var_list)
        else:
            named = {}
            for v in _expand_partitioned(var_list):
                if not isinstance(v, Variable):
                    raise TypeError(f"Saver var_list must hold tf.Variables, got {v!r}")
                if v.op.name in named:
                    raise ValueError(f"At least two variables have the same name: {v.op.name}")
                named[v.op.name] = v
        if not named and not allow_empty:
            raise ValueError("No variables to save")
        self._sync = sync
        self._pad_step_number = pad_step_number
        graph = self._graph
        # Parts of partitioned variables: saved (in TF's format) as slices of the whole.
        self._full_entries = _full_entries(named) if file_format == "tf" else {}
        by_device: dict[str, list[tuple[str, Variable]]] = {}
        for key, v in sorted(named.items()):
            by_device.setdefault(v.device, []).append((key, v))
        with graph.name_scope(name or "save"):
            # Named as TF1's filename tensor ("save/Const"), so the SaverDef's filename
            # and restore op ("save/restore_all", below) name this graph's ops too.
            self._filename = placeholder(dtypes.string, [], name="Const")
            self._save_ops: list[Tensor] = []
            restores = []
            n = len(by_device)
            loads = []
            for shard, (_, members) in enumerate(sorted(by_device.items())):
                keys = tuple(k for k, _ in members)
                parts = tuple(v.save_slice_info for _, v in members)
                saved_as = tuple(
                    checkpoint_tf_bundle.slice_key(p.full_name, p.extents)
                    if p is not None and self._full_entries
                    else k
                    for k, p in zip(keys, parts)
                )
                handles = [v.handle for _, v in members]
                self._save_ops.append(
                    graph.create_op(
                        "SaveShard",
                        [self._filename, *handles],
                        {
                            "names": saved_as,
                            "shard": shard,
                            "num_shards": n,
                            "sync": sync,
                            "format": file_format,
                        },
                        name=f"save_shard_{shard}",
                    ).outputs[0]
                )
                loads.append(
                    graph.create_op(
                        "RestoreShard",
                        [self._filename, *handles],
                        {
                            "phase": "load",
                            "names": keys,
                            "specs": tuple((v.dtype, v.shape) for _, v in members),
                            "parts": parts if any(parts) else None,
                        },
                        name=f"restore_shard_{shard}",
                    )
                )
            # Commits wait for every load (on every device): all variables or none.
            with graph.control_dependencies(loads):
                for shard, (_, members) in enumerate(sorted(by_device.items())):
                    restores.append(
                        graph.create_op(
                            "RestoreShard",
                            [self._filename, *[v.handle for _, v in members]],
                            {"phase": "commit"},
                            name=f"commit_shard_{shard}",
                        )
                    )
            self._restore_op = group(*restores, name="restore_all") if restores else None
        self._num_shards = len(by_device)

    def _init_from_saver_def(self, saver_def: Any, scope: str | None) -> None:
        """Runs the ops a ``SaverDef`` names (TF's ``SaveV2``/``RestoreV2`` ops of an
        imported MetaGraph: ``ops/state/tf_saver_ops.py``), as TF1's saver does."""
        graph = self._graph

        def element(name: str, tensor: bool) -> Any:
            full = f"{scope}/{name}" if scope else name
            try:
                return graph.as_graph_element(full, allow_tensor=tensor)
            except (KeyError, ValueError) as exc:
                raise errors.InvalidArgumentError(
                    None, None, f"Saver: the SaverDef names {full!r}, which the graph lacks: {exc}"
                ) from None

        self._filename = element(saver_def.filename_tensor_name, True)
        self._save_ops = [element(saver_def.save_tensor_name, True)]
        self._restore_op = element(saver_def.restore_op_name, False)
        self._max_to_keep = saver_def.max_to_keep
        self._keep_hours = saver_def.keep_checkpoint_every_n_hours
        self._sync = False
        self._pad_step_number = False
        self._full_entries = {}
        self._num_shards = 0  # the save op writes the whole checkpoint, index included

    def as_saver_def(self) -> Any:
        """The ``SaverDef`` of this saver (TF's ``saver_pb2.SaverDef``). A saver built
        here names the TF save and restore nodes an exported MetaGraph holds in place of
        its own ops (``saver_graph.py``); its filename tensor and restore op are this
        graph's too (``sess.run(restore_op_name, {filename_tensor_name: path})``
        restores), its save tensor only the exported graph's. One made from a
        ``SaverDef`` returns it; one without variables has none (``None``)."""
        if self._saver_def is not None:
            return self._saver_def
        if self._restore_op is None:
            return None  # no variables: TF1's empty saver has no SaverDef either
        return saver_graph.saver_def(
            self._filename.op.name.rsplit("/", 1)[0] if "/" in self._filename.op.name else "",
            max_to_keep=self._max_to_keep or 0,
            keep_checkpoint_every_n_hours=self._keep_hours,
        )

    def export_meta_graph(
        self,
        filename: str | None = None,
        collection_list: Any = None,
        as_text: bool = False,
        export_scope: str | None = None,
        clear_devices: bool = False,
        clear_extraneous_savers: bool = False,
        strip_default_attrs: bool = False,
        save_debug_info: bool = False,
    ) -> Any:
        """Writes (when ``filename`` is given) and returns the graph's ``MetaGraphDef``
        with this saver's ``SaverDef`` (``meta_graph.export_meta_graph``)."""
        return meta_graph.export_meta_graph(
            filename=filename,
            saver_def=self.as_saver_def(),
            collection_list=collection_list,
            as_text=as_text,
            graph=self._graph,
            export_scope=export_scope,
            clear_devices=clear_devices,
            clear_extraneous_savers=clear_extraneous_savers,
        )

    @property
    def last_checkpoints(self) -> list[str]:
        return list(self._last_checkpoints)

    def set_last_checkpoints(self, paths: list[str]) -> None:
        self._last_checkpoints = list(paths)

    def recover_last_checkpoints(self, paths: list[str]) -> None:
        self._last_checkpoints = [p for p in paths if checkpoint_exists(p)]

    def save(
        self,
        sess: Any,
        save_path: str,
        global_step: Any = None,
        latest_filename: str | None = None,
        meta_graph_suffix: str = "meta",
        write_meta_graph: bool = True,
        write_state: bool = True,
        strip_default_attrs: bool = False,
    ) -> str:
        """Writes a checkpoint; returns its prefix (``save_path-<global_step>``).

        The shards are written by the devices holding the variables, then the index and
        the directory's ``checkpoint`` state file, so a crash at any point leaves the
        previous checkpoint usable. Temporaries left in the directory by saves that did
        not finish are removed first (see ``ops/state/checkpoint/native.py``). The directory
        is created when missing.

        Raises:
            ValueError: the directory cannot be created (a path under a regular file,
                say), as TF1's "Parent directory of ... doesn't exist, can't save.".
            errors.OpError: a file cannot be written: the class TF raises for the
                ``errno`` (``PermissionDeniedError``, ``ResourceExhaustedError`` for a
                full disk, ``FailedPreconditionError`` for a directory in the way, ...).
        """
        if global_step is not None:
            # Any integer (a numpy one from ``gs.eval()`` too), else a tensor or variable.
            step = (
                int(global_step)
                if isinstance(global_step, (numbers.Integral, np.integer))
                else training_global_step(sess, global_step)
            )
            prefix = f"{save_path}-{step:08d}" if self._pad_step_number else f"{save_path}-{step}"
        else:
            prefix = save_path
        directory = os.path.dirname(os.path.abspath(prefix))
        try:
            os.makedirs(directory, exist_ok=True)
        except OSError:
            pass  # TF1's error, just below
        missing = f"Parent directory of {save_path} doesn't exist, can't save."
        if not os.path.isdir(directory):
            raise ValueError(missing)
        try:
            remove_stale_temps(directory)
            if self._saver_def is not None:  # TF's save op writes the whole checkpoint
                sess.run(self._save_ops, {self._filename: prefix})
            else:
                entries: dict[str, Any] = {}
                if self._save_ops:
                    for meta in sess.run(self._save_ops, {self._filename: prefix}):
                        entries.update(json.loads(meta.item() if hasattr(meta, "item") else meta))
                entries.update(self._full_entries)
                self._writer.write_index(prefix, self._num_shards, entries, self._sync)
        except (errors.FailedPreconditionError, errors.NotFoundError) as exc:
            # TF1's own translation, for a directory that is not there (or is a file).
            if not os.path.isdir(directory):
                raise ValueError(missing) from exc
            raise
        if write_state:
            if prefix in self._last_checkpoints:
                self._last_checkpoints.remove(prefix)
            self._last_checkpoints.append(prefix)
            stale: list[str] = []
            if self._max_to_keep:
                while len(self._last_checkpoints) > self._max_to_keep:
                    stale.append(self._last_checkpoints.pop(0))
            update_checkpoint_state(
                os.path.dirname(os.path.abspath(prefix)),
                prefix,
                self._last_checkpoints,
                latest_filename,
                self._sync,
            )
            for old in stale:
                checkpoint_tf_bundle.delete_checkpoint(old)
                meta = f"{old}.{meta_graph_suffix}"
                if os.path.exists(meta):
                    os.remove(meta)
        if write_meta_graph:
            self.export_meta_graph(f"{prefix}.{meta_graph_suffix}")
        return prefix

    def restore(self, sess: Any, save_path: str) -> None:
        """Loads every variable of this saver from the checkpoint ``save_path``.

        Every entry is checked (index fields, sizes against the files, checksums)
        before any variable changes; temporaries left in the checkpoint's directory by
        saves that did not finish are removed first.

        Raises:
            ValueError: ``save_path`` is not a checkpoint (TF1's error).
            errors.DataLossError: a file is truncated, corrupted or crafted (no variable
                changes); the message names the file.
            errors.NotFoundError: the checkpoint lacks one of the variables.
            errors.InvalidArgumentError: a variable's shape or dtype differs.
        """
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        if not checkpoint_exists(save_path):
            raise ValueError(f"The passed save_path is not a valid checkpoint: {save_path}")
        remove_stale_temps(os.path.dirname(os.path.abspath(save_path)))
        if self._restore_op is not None:
            sess.run(self._restore_op, {self._filename: save_path})


def _expand_partitioned(var_list: Any) -> list[Any]:
    """``var_list`` with each partitioned variable (an iterable of part variables, as
    TF1's ``PartitionedVariable``) replaced by its parts."""
    out: list[Any] = []
    for v in var_list:
        if not isinstance(v, (Variable, Tensor, str, bytes)) and hasattr(v, "__iter__"):
            out.extend(v)
        else:
            out.append(v)
    return out


def _full_entries(named: dict[str, Variable]) -> dict[str, dict[str, Any]]:
    """The index entries of the partitioned variables whose parts are in ``named``: the
    full name, dtype and shape, and the slices the parts save."""
    out: dict[str, dict[str, Any]] = {}
    for v in named.values():
        part = v.save_slice_info
        if part is None:
            continue
        if part.full_name in named:
            raise ValueError(f"Saver: {part.full_name} is both a variable and partitioned")
        entry = out.setdefault(
            part.full_name,
            {
                "dtype": checkpoint_tf_bundle.tf_dtype_name(v.dtype.as_numpy_dtype),
                "shape": list(part.full_shape),
                "slices": [],
            },
        )
        if entry["shape"] != list(part.full_shape):
            raise ValueError(
                f"Saver: the parts of {part.full_name} disagree on its shape: "
                f"{entry['shape']} and {list(part.full_shape)}"
            )
        entry["slices"].append(part.extents)
    return out


def checkpoint_exists(prefix: str) -> bool:
    return os.path.exists(checkpoint_format.index_path(prefix))


def _quote(path: str) -> str:
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def update_checkpoint_state(
    save_dir: str,
    model_checkpoint_path: str,
    all_model_checkpoint_paths: list[str] | None = None,
    latest_filename: str | None = None,
    sync: bool = False,
) -> None:
    """Writes the ``checkpoint`` state file atomically (paths relative to ``save_dir``)."""

    def rel(p: str) -> str:
        p = os.path.abspath(p)
        return os.path.relpath(p, save_dir) if os.path.dirname(p) == save_dir else p

    lines = [f"model_checkpoint_path: {_quote(rel(model_checkpoint_path))}"]
    lines += [
        f"all_model_checkpoint_paths: {_quote(rel(p))}"
        for p in (all_model_checkpoint_paths or [model_checkpoint_path])
    ]
    checkpoint_format.atomic_write_bytes(
        os.path.join(save_dir, latest_filename or _STATE_FILE),
        ("\n".join(lines) + "\n").encode(),
        sync,
    )


_LINE = re.compile(r'^(\w+):\s*"((?:[^"\\]|\\.)*)"\s*$')


def get_checkpoint_state(
    checkpoint_dir: str, latest_filename: str | None = None
) -> CheckpointState | None:
    """Parses ``checkpoint_dir/checkpoint``; ``None`` when there is none."""
    path = os.path.join(checkpoint_dir, latest_filename or _STATE_FILE)
    try:
        with open(path) as f:
            text = f.read()
    except FileNotFoundError:
        return None
    model, everything = None, []
    for line in text.splitlines():
        m = _LINE.match(line.strip())
        if not m:
            continue
        value = m.group(2).replace('\\"', '"').replace("\\\\", "\\")
        if not os.path.isabs(value):
            value = os.path.join(checkpoint_dir, value)
        if m.group(1) == "model_checkpoint_path":
            model = value
        elif m.group(1) == "all_model_checkpoint_paths":
            everything.append(value)
    if model is None:
        return None
    return CheckpointState(model, everything)


def latest_checkpoint(checkpoint_dir: str, latest_filename: str | None = None) -> str | None:
    """The prefix of the newest complete checkpoint in ``checkpoint_dir``, or ``None``."""
    state = get_checkpoint_state(checkpoint_dir, latest_filename)
    if state is None:
        return None
    if checkpoint_exists(state.model_checkpoint_path):
        return state.model_checkpoint_path
    for path in reversed(state.all_model_checkpoint_paths):
        if checkpoint_exists(path):
            return path
    return None


def list_variables(ckpt_dir_or_file: str) -> list[tuple[str, list[int]]]:
    """``[(name, shape)]`` of a checkpoint (a prefix or a directory), of either format;
    a partitioned variable is listed once, by its full name and shape (as TF)."""
    prefix = resolve_checkpoint(ckpt_dir_or_file)
    index = checkpoint_tf_bundle.read_index(prefix)
    return sorted(
        (k, list(e["shape"])) for k, e in index["entries"].items() if not k.startswith("\0")
    )


def load_variable(ckpt_dir_or_file: str, name: str) -> Any:
    """One variable's value from a checkpoint (either format), as a numpy array; a
    partitioned variable's parts are put together."""
    prefix = resolve_checkpoint(ckpt_dir_or_file)
    return checkpoint_tf_bundle.read_entry(prefix, checkpoint_tf_bundle.read_index(prefix), name)


def resolve_checkpoint(ckpt_dir_or_file: str) -> str:
    """The prefix of a checkpoint given as a prefix or a directory (its latest)."""
    if os.path.isdir(ckpt_dir_or_file):
        prefix = latest_checkpoint(ckpt_dir_or_file)
        if prefix is None:
            raise errors.NotFoundError(None, None, f"No checkpoint in {ckpt_dir_or_file}")
        return prefix
    return ckpt_dir_or_file


def import_meta_graph(
    meta_graph_or_file: Any,
    clear_devices: bool = False,
    import_scope: str | None = None,
    **kwargs: Any,
) -> Saver | None:
    """Adds the graph and collections of a ``MetaGraphDef`` (or of its ``.meta`` file,
    binary or text) to the default graph (``meta_graph.py``); returns a ``Saver`` over
    its ``SaverDef``'s ops, or ``None`` when it has no ``SaverDef`` and no variables
    (as TF1).

    Args:
        meta_graph_or_file: a ``MetaGraphDef`` or the path of a ``.meta`` file.
        clear_devices: ignore the devices the nodes ask for.
        import_scope: a name scope the imported names are put under.

    Raises:
        errors.NotFoundError: the file does not exist, or the graph uses op types not
            registered here (all of them named).
        errors.DataLossError: the file is not a ``MetaGraphDef``.
        errors.InvalidArgumentError: the graph, a constant in it or a collection cannot
            be rebuilt.
    """
    graph = get_default_graph()
    meta = meta_graph.import_scoped_meta_graph(
        meta_graph_or_file,
        clear_devices,
        graph,
        import_scope,
        kwargs.get("input_map"),
        make_saver=lambda saver_def: Saver(saver_def=saver_def, name=import_scope),
    )
    if meta.HasField("saver_def"):
        return Saver(saver_def=meta.saver_def, name=import_scope)
    if graph.get_collection(GLOBAL_VARIABLES):
        return Saver()
    return None
