"""Reading checkpoints outside a ``Saver``: ``tf.train.NewCheckpointReader`` and
``tf.train.init_from_checkpoint``, for checkpoints of either format (TF's V2 bundle,
which TF1 writes, or dataflow's own).

``init_from_checkpoint`` does what TF1's does: it resolves the assignment map against
the checkpoint's names and the graph's variables when called (so a wrong name or shape
is a ``ValueError`` at build time), then makes each mapped variable's initializer a
restore from the checkpoint: a ``RestoreShard`` load and commit on the variable's own
device, so the value is read where the variable lives, when the initializer runs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..framework import dtypes
from ..framework.graph import get_default_graph
from ..framework.tensor_shape import TensorShape
from ..ops.constant import constant
from ..ops.state.checkpoint import tf_bundle as checkpoint_tf_bundle
from ..ops.state.checkpoint import tf_table as checkpoint_tf_table
from ..ops.state.checkpoint.tf_bundle import SaveSliceInfo
from ..ops.state.variables import Variable, global_variables
from .saver import resolve_checkpoint


class CheckpointReader:
    """The tensors of one checkpoint (TF's ``CheckpointReader``).

    Args:
        prefix: the checkpoint's prefix (``.../model.ckpt-100``).

    Raises:
        errors.NotFoundError: there is no checkpoint at ``prefix``.
        errors.DataLossError: its index is damaged.
    """

    def __init__(self, prefix: str):
        self._prefix = prefix
        self._index = checkpoint_tf_bundle.read_index(prefix)
        # A partitioned variable's parts (keys starting with NUL) show by its full name.
        self._entries = {k: e for k, e in self._index["entries"].items() if not k.startswith("\0")}

    def has_tensor(self, name: str) -> bool:
        return name in self._entries

    def get_tensor(self, name: str) -> np.ndarray:
        """The value of ``name``, checked against its checksum.

        Raises:
            errors.NotFoundError: the checkpoint lacks ``name``.
            errors.DataLossError: its bytes are damaged.
        """
        return checkpoint_tf_bundle.read_entry(self._prefix, self._index, name)

    def get_variable_to_shape_map(self) -> dict[str, list[int]]:
        return {k: list(e["shape"]) for k, e in self._entries.items()}

    def get_variable_to_dtype_map(self) -> dict[str, Any]:
        """``{name: DType}``; a dtype dataflow has no ``DType`` for (``uint16``,
        ``uint32``, ``uint64``, which TF can write) maps to its numpy dtype, one numpy
        lacks (``bfloat16``, quantized, ...) to its TF name."""
        out: dict[str, Any] = {}
        for k, e in self._entries.items():
            if e["dtype"].startswith(checkpoint_tf_bundle.UNREADABLE):
                out[k] = e["dtype"][len(checkpoint_tf_bundle.UNREADABLE) :]
                continue
            found = checkpoint_tf_bundle.entry_dtype(e)
            try:
                out[k] = dtypes.as_dtype(found)
            except TypeError:
                out[k] = found
        return out

    def debug_string(self) -> bytes:
        """One line per stored tensor, as TF's: ``name (DT_FLOAT) [2,3]``, in key order
        (a partitioned variable shows as its slices' keys)."""
        lines = []
        stored = self._index["entries"].items()
        for key, e in sorted(stored, key=lambda kv: checkpoint_tf_table.key_bytes(kv[0])):
            if "slices" in e:
                continue
            dims = ",".join(str(d) for d in e["shape"])
            lines.append(
                checkpoint_tf_table.key_bytes(key) + f" ({_dt_name(e)}) [{dims}]\n".encode()
            )
        return b"".join(lines)


_DT_NAMES = {
    "<f4": "FLOAT",
    "<f8": "DOUBLE",
    "<f2": "HALF",
    "|i1": "INT8",
    "<i2": "INT16",
    "<i4": "INT32",
    "<i8": "INT64",
    "|u1": "UINT8",
    "<u2": "UINT16",
    "<u4": "UINT32",
    "<u8": "UINT64",
    "|b1": "BOOL",
    "<c8": "COMPLEX64",
    "<c16": "COMPLEX128",
    checkpoint_tf_bundle.STRING: "STRING",
}


def _dt_name(entry: dict[str, Any]) -> str:
    dtype = entry["dtype"]
    if dtype.startswith(checkpoint_tf_bundle.UNREADABLE):
        return "DT_" + dtype[len(checkpoint_tf_bundle.UNREADABLE) :].upper()
    return "DT_" + _DT_NAMES[dtype]


def NewCheckpointReader(filepattern: str) -> CheckpointReader:
    """A ``CheckpointReader`` of the checkpoint with prefix ``filepattern``."""
    return CheckpointReader(filepattern)


def _restore_initializer(prefix: str, name: str, var: Variable, part: Any) -> Any:
    graph = get_default_graph()
    with graph.name_scope(var.op.name + "/init_from_checkpoint"), graph.control_dependencies(None):
        path = constant(prefix, dtype=dtypes.string, name="prefix")
        load = graph.create_op(
            "RestoreShard",
            [path, var.handle],
            {
                "phase": "load",
                "names": (name,),
                "specs": ((var.dtype, var.shape),),
                "parts": (part,) if part is not None else None,
            },
            name="restore",
        )
        with graph.control_dependencies([load]):
            return graph.create_op("RestoreShard", [path, var.handle], {"phase": "commit"})


def init_from_checkpoint(ckpt_dir_or_file: str, assignment_map: dict[str, Any]) -> None:
    """Initializes variables from a checkpoint instead of their initial values.

    ``assignment_map`` maps checkpoint names to variables, as TF1's:
    ``{"old/w": "new/w"}`` or ``{"old/w": variable}`` (one variable),
    ``{"old_scope/": "new_scope/"}`` (every variable of ``new_scope`` from the tensor of
    the same name under ``old_scope``), ``{"/": "scope/"}`` or ``{"scope/": "/"}`` (the
    checkpoint's or the graph's root). A partitioned variable (its name, the iterable
    of its parts, or its parts met in a scope: parts carrying a ``save_slice_info``)
    is initialized part by part from its slices of the checkpoint's tensor.

    Raises:
        ValueError: a name is not in the checkpoint or the graph, a shape differs, or a
            scope is mapped to a single name.
        errors.NotFoundError: there is no checkpoint.
    """
    prefix = resolve_checkpoint(ckpt_dir_or_file)
    reader = CheckpointReader(prefix)
    shapes = reader.get_variable_to_shape_map()
    graph_vars = {v.op.name: v for v in global_variables()}
    partitioned: dict[str, list[Variable]] = {}
    for v in graph_vars.values():
        if v.save_slice_info is not None:
            partitioned.setdefault(v.save_slice_info.full_name, []).append(v)

    def assign(var: Variable, name: str) -> None:
        info = var.save_slice_info
        if name not in shapes:
            raise ValueError(f"Tensor {name} is not found in {prefix} checkpoint {shapes}")
        shape = var.shape if info is None else TensorShape(info.full_shape)
        if not shape.is_compatible_with(shapes[name]):
            raise ValueError(
                f"Shape of variable {var.op.name} ({shape}) doesn't match with shape of "
                f"tensor {name} ({shapes[name]}) from checkpoint reader."
            )
        part = None
        if info is not None:  # its slice of the checkpoint's tensor ``name``
            part = SaveSliceInfo(name, info.full_shape, info.var_offset, info.var_shape)
        var.set_initializer(_restore_initializer(prefix, name, var, part))

    for ckpt_name, current in sorted(assignment_map.items(), key=lambda kv: str(kv[0])):
        if isinstance(current, Variable):
            assign(current, ckpt_name)
            continue
        if not isinstance(current, str):  # a partitioned variable: its parts
            for var in current:
                assign(var, ckpt_name)
            continue
        if current in graph_vars or current in partitioned:
            for var in [graph_vars[current]] if current in graph_vars else partitioned[current]:
                assign(var, ckpt_name)
            continue
        if not ckpt_name.endswith("/"):
            raise ValueError(
                f"Assignment map with scope only name {current} should map to scope only "
                f"{ckpt_name}. Should be 'scope/': 'other_scope/'."
            )
        scope = current[: current.rindex("/")] if "/" in current else ""
        for var_name, var in sorted(graph_vars.items()):
            if var.save_slice_info is not None:  # a part: named by its whole variable
                var_name = var.save_slice_info.full_name
            if scope and not var_name.startswith(scope + "/"):
                continue
            name = var_name[len(scope) :]
            if current != "/":
                name = name[1:] if name.startswith("/") else name
            if ckpt_name != "/":
                name = ckpt_name + name
            assign(var, name.rstrip("/"))
