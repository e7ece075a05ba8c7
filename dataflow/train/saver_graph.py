"""The saver a MetaGraph we export holds: TF's save and restore ops in place of ours.

Our ``Saver`` saves with ``SaveShard``/``RestoreShard`` ops that take variable handles
(each device writes its own shard, the client writes the index), which TF does not
have. A ``MetaGraphDef`` must hold a saver TF can run, named by its ``SaverDef``, so
``export_meta_graph`` writes, for each saver scope ``S`` of the graph (the scope of its
``SaveShard`` ops), the nodes TF1's ``Saver`` (V2, not sharded) builds there, and drops
ours (``SaveShard``/``RestoreShard``, the filename placeholder, ``S/restore_all``):

    S/filename/input (Const "model") -> S/filename, S/Const (PlaceholderWithDefault)
    S/SaveV2(S/Const, tensor_names, shape_and_slices, reads of the variables)
    S/control_dependency = Identity(S/Const) after S/SaveV2        (save_tensor_name)
    S/RestoreV2 -> S/Identity_k -> S/AssignVariableOp_k per variable
    S/restore_all: NoOp after every assign                          (restore_op_name)

The nodes are built as ops of a scratch ``Graph`` (with stand-ins for the variables'
handles, named as theirs) and written by ``graph_def.to_graph_def``, so their attrs are
TF's. A part of a partitioned variable saves as TF's slice of its full variable. The
graph itself is not changed (a finalized graph exports too); ``import_meta_graph``
rebuilds these nodes here with ``ops/state/tf_saver_ops.py``'s kernels.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from tensorboard.compat.proto import node_def_pb2, saver_pb2

from ..framework import dtypes
from ..framework import graph_def as graph_def_lib
from ..framework.graph import Graph, Operation

SAVE_TYPE = "SaveShard"
RESTORE_TYPE = "RestoreShard"


@dataclass(frozen=True)
class SavedVariable:
    """One variable a saver scope saves: its handle op, and the key and slice spec TF's
    ``SaveV2`` names it by."""

    handle: Operation
    key: str
    spec: str


def saver_scopes(graph: Any) -> dict[str, list[SavedVariable]]:
    """``{scope: variables}`` of every saver of ``graph`` (the scope its ``SaveShard``
    ops were made in), in key order."""
    out: dict[str, dict[str, SavedVariable]] = {}
    for op in graph.get_operations():
        if op.type != RESTORE_TYPE or op.attrs.get("phase", "load") != "load":
            continue
        scope = op.name.rsplit("/", 1)[0] if "/" in op.name else ""
        parts = op.attrs.get("parts") or (None,) * len(op.attrs["names"])
        for key, part, handle in zip(op.attrs["names"], parts, op.inputs[1:]):
            saved = (
                SavedVariable(handle.op, key, "")
                if part is None
                else SavedVariable(handle.op, part.full_name, part.spec)
            )
            out.setdefault(scope, {})[f"{saved.key}\0{saved.spec}"] = saved
    return {scope: [found[k] for k in sorted(found)] for scope, found in out.items()}


def own_saver_nodes(graph: Any, scope: str) -> set[str]:
    """The names of the ops of our saver in ``scope``, which an export leaves out."""
    prefix = f"{scope}/" if scope else ""
    out = set()
    for op in graph.get_operations():
        if op.type in (SAVE_TYPE, RESTORE_TYPE) and op.name.startswith(prefix):
            out.add(op.name)
            out.add(op.inputs[0].op.name)  # the filename placeholder
    restore_all = f"{prefix}restore_all"
    if any(op.name == restore_all for op in graph.get_operations()):
        out.add(restore_all)
    return out


def saver_def(scope: str, **settings: Any) -> saver_pb2.SaverDef:
    """The ``SaverDef`` naming the nodes ``tf_saver_nodes`` writes for ``scope``."""
    prefix = f"{scope}/" if scope else ""
    return saver_pb2.SaverDef(
        filename_tensor_name=f"{prefix}Const:0",
        save_tensor_name=f"{prefix}control_dependency:0",
        restore_op_name=f"{prefix}restore_all",
        version=saver_pb2.SaverDef.V2,
        **settings,
    )


def _var_attrs(saved: SavedVariable) -> dict[str, Any]:
    return {"dtype": saved.handle.attrs["dtype"], "shape": saved.handle.attrs["shape"]}


def tf_saver_nodes(scope: str, saved: list[SavedVariable]) -> list[node_def_pb2.NodeDef]:
    """TF1's saver nodes for ``saved`` under ``scope`` (the module docstring)."""
    from ..ops import constant as constant_ops  # layer 2a, needed only when exporting

    scratch = Graph()
    handles = {}
    with scratch.as_default():
        for s in saved:
            if s.handle.name not in handles:
                handles[s.handle.name] = scratch.create_op(
                    "VarHandleOp", [], dict(s.handle.attrs), name=s.handle.name + "/"
                ).outputs[0]
        with scratch.name_scope(f"{scope}/" if scope else None):
            default = constant_ops.constant("model", name="filename/input")
            filename = scratch.create_op(
                "PlaceholderWithDefault",
                [default],
                {"dtype": dtypes.string, "shape": default.shape},
                name="filename",
            ).outputs[0]
            prefix = scratch.create_op(
                "PlaceholderWithDefault",
                [filename],
                {"dtype": dtypes.string, "shape": default.shape},
                name="Const",
            ).outputs[0]
            keys = np.array([s.key.encode() for s in saved], dtype=object)
            specs = np.array([s.spec.encode() for s in saved], dtype=object)
            reads = [
                scratch.create_op(
                    "ReadVariableOp", [handles[s.handle.name]], _var_attrs(s)
                ).outputs[0]
                for s in saved
            ]
            save = scratch.create_op(
                "SaveV2",
                [
                    prefix,
                    constant_ops.constant(keys, name="SaveV2/tensor_names"),
                    constant_ops.constant(specs, name="SaveV2/shape_and_slices"),
                    *reads,
                ],
                {"dtypes": [r.dtype for r in reads]},
                name="SaveV2",
            )
            scratch.create_op("Identity", [prefix], {}, "control_dependency", [save])
            restored = scratch.create_op(
                "RestoreV2",
                [
                    prefix,
                    constant_ops.constant(keys, name="RestoreV2/tensor_names"),
                    constant_ops.constant(specs, name="RestoreV2/shape_and_slices"),
                ],
                {"dtypes": [r.dtype for r in reads]},
                name="RestoreV2",
            )
            assigns = []
            for s, value in zip(saved, restored.outputs):
                value = scratch.create_op("Identity", [value], {}, name="Identity").outputs[0]
                assigns.append(
                    scratch.create_op(
                        "AssignVariableOp",
                        [handles[s.handle.name], value],
                        _var_attrs(s),
                        name="AssignVariableOp",
                    )
                )
            scratch.create_op("NoOp", [], {}, "restore_all", assigns)
    devices = {s.handle.name: s.handle.device for s in saved}
    nodes = []
    for node in graph_def_lib.to_graph_def(scratch).node:
        if node.name in handles and node.op == "VarHandleOp":
            continue  # the graph's own
        if node.input and node.input[0] in devices:
            node.device = devices[node.input[0]]  # reads and assigns stay with the variable
        nodes.append(node)
    return nodes
