"""Variables as TF's ``VariableDef`` protobuf, as a MetaGraph's variable collections
hold them, and back: a ``Variable`` over ops a graph already has (an imported one).

A ``VariableDef`` names the variable's tensor (``w:0``: here the handle of its
``VarHandleOp``), its initializer op, its snapshot (the read a fetch of the variable
returns), its initial value, whether it is trainable, and for a part of a partitioned
variable its ``SaveSliceInfoDef``. ``variable_from_proto`` finds those in the graph
(under ``import_scope``) and wraps them; nothing is added to the graph.
"""

from __future__ import annotations

from typing import Any

from tensorboard.compat.proto import variable_pb2

from ...framework.graph import Graph, Tensor, get_default_graph
from .checkpoint.tf_bundle import SaveSliceInfo
from .variables import Variable


def _scoped(name: str, scope: str | None) -> str:
    return f"{scope}/{name}" if scope and name else name


def _unscoped(name: str, scope: str | None) -> str:
    if scope and name.startswith(scope + "/"):
        return name[len(scope) + 1 :]
    return name


def variable_to_proto(v: Variable, export_scope: str | None = None) -> Any:
    """The ``VariableDef`` of ``v`` (names relative to ``export_scope``), or ``None`` when
    ``v`` is outside that scope (as TF1's ``Variable.to_proto``)."""
    if export_scope and not v.name.startswith(export_scope + "/"):
        return None
    proto = variable_pb2.VariableDef(
        variable_name=_unscoped(v.name, export_scope),
        initializer_name=_unscoped(v.initializer.name, export_scope),
        snapshot_name=_unscoped(v._as_graph_element().name, export_scope),
        initial_value_name=_unscoped(v.initial_value.name, export_scope),
        trainable=v.trainable,
        is_resource=True,
    )
    info = v.save_slice_info
    if info is not None:
        proto.save_slice_info_def.CopyFrom(
            variable_pb2.SaveSliceInfoDef(
                full_name=_unscoped(info.full_name, export_scope),
                full_shape=list(info.full_shape),
                var_offset=list(info.var_offset),
                var_shape=list(info.var_shape),
            )
        )
    return proto


class VariableFromDef(Variable):
    """A ``Variable`` over the ops of a graph that a ``VariableDef`` names (TF1's
    ``Variable(variable_def=..., import_scope=...)``).

    Raises:
        KeyError: a name of the proto is not in the graph.
        TypeError: ``variable_name`` is not a variable handle (a ``VarHandleOp``).
    """

    def __init__(self, proto: Any, import_scope: str | None = None, graph: Graph | None = None):
        graph = graph or get_default_graph()
        handle = graph.as_graph_element(_scoped(proto.variable_name, import_scope))
        if not isinstance(handle, Tensor) or handle.op.type != "VarHandleOp":
            raise TypeError(
                f"VariableDef names {proto.variable_name!r}, which is not a variable handle"
            )
        self._graph = graph
        self._handle = handle
        self._trainable = proto.trainable
        self._constraint = None
        self._dtype = handle.op.attrs["dtype"]
        self._shape = handle.op.attrs["shape"]
        self._attrs = {"dtype": self._dtype, "shape": self._shape}
        self._initializer_op = graph.get_operation_by_name(
            _scoped(proto.initializer_name, import_scope)
        )
        self._snapshot = graph.as_graph_element(
            _scoped(proto.snapshot_name or proto.variable_name, import_scope),
            allow_operation=False,
        )
        initial = proto.initial_value_name
        self._initial_value = (
            graph.as_graph_element(_scoped(initial, import_scope), allow_operation=False)
            if initial
            else self._snapshot
        )
        if proto.HasField("save_slice_info_def"):
            info = proto.save_slice_info_def
            self.set_save_slice_info(
                SaveSliceInfo(
                    _scoped(info.full_name, import_scope),
                    tuple(info.full_shape),
                    tuple(info.var_offset),
                    tuple(info.var_shape),
                )
            )
