"""TF1's ref variables (``VariableV2``) in a ``GraphDef`` TF wrote, built as our resource
variables, so a ``.meta`` or SavedModel of TF 1.x (whose variables are ref variables
unless ``use_resource``) imports, restores and trains here.

TF1's ref variable is a ``VariableV2`` node whose output is the variable itself: ops
taking it as a ``ref`` input update it (``Assign``, ``AssignAdd``, ``ApplyAdam``,
``ScatterUpdate``...), every other consumer reads its value (``v/read``, ``SaveV2``).
Here (``registry.register_importer``):

* ``VariableV2`` becomes a ``VarHandleOp`` of the node's name (its ``shared_name``, or
  the name) and one ``ReadVariableOp`` of it, ``<name>/ref_value``, which the node's
  consumers receive. Fetched, that read is taken after the step's updates, as a ref
  variable's buffer is (``FETCH_AFTER_UPDATES``).
* an op of a ``ref`` input becomes its resource twin (``Assign`` ->
  ``AssignVariableOp``, ``ApplyAdam`` -> ``ResourceApplyAdam``, ``ScatterAdd`` ->
  ``ResourceScatterAdd``, ``IsVariableInitialized`` -> ``VarIsInitializedOp``...), fed
  the handle behind each ``ref_value`` input, its attrs as ``ours_from_tf`` completes
  them. An update with no output of its own returns a read made after it.

Not rebuilt: within one step, every plain consumer of a ref variable sees the one read
(TF1 reads a ref when each consumer runs, so a read ordered after an update by a
control dependency alone sees the update there; here it may not).
"""

from __future__ import annotations

import weakref
from typing import Any

from ...framework import registry, tf_op_defs
from ...framework.graph import Tensor, get_default_graph
from ...framework.operation import FETCH_AFTER_UPDATES

_REF_VALUES: weakref.WeakSet = weakref.WeakSet()  # the reads VariableV2 importers made


def _variable(inputs: list, attrs: dict, name: str) -> list:
    graph = get_default_graph()
    shared = attrs.get("shared_name") or name
    handle = graph.create_op(
        "VarHandleOp",
        [],
        {"shared_name": shared, "dtype": attrs["dtype"], "shape": attrs["shape"]},
        name=name + "/",
    ).outputs[0]
    with graph.colocate_with(handle.op):
        read = graph.create_op(
            "ReadVariableOp",
            [handle],
            {"dtype": attrs["dtype"], "shape": attrs["shape"], FETCH_AFTER_UPDATES: True},
            name=f"{name}/ref_value",
        )
    _REF_VALUES.add(read)
    return [read.outputs[0]]


def handle_of(tensor: Any) -> Any:
    """The variable handle behind ``tensor`` when it is a ``VariableV2``'s value (as the
    importer built it), else ``tensor``."""
    if isinstance(tensor, Tensor) and tensor.op in _REF_VALUES:
        return tensor.op.inputs[0]
    return tensor


def _resource_twin(resource_type: str) -> Any:
    def build(inputs: list, attrs: dict, name: str) -> list:
        try:
            registry.lookup(resource_type)
        except KeyError:
            raise ValueError(f"dataflow has no {resource_type} to build it with") from None
        inputs = [handle_of(t) for t in inputs]
        if not inputs or inputs[0].dtype.name != "resource":
            raise ValueError("its first input is not a variable (a VariableV2 node)")
        graph = get_default_graph()
        attrs = tf_op_defs.ours_from_tf(resource_type, attrs, inputs)
        with graph.colocate_with(inputs[0].op):
            op = graph.create_op(resource_type, inputs, attrs, name=name + "/")
            if op.outputs:
                return [op.outputs[0]]
            # TF's update outputs the variable: here, a read after the update.
            read = graph.create_op(
                "ReadVariableOp",
                [inputs[0]],
                {"dtype": attrs["dtype"], "shape": attrs["shape"]},
                name=f"{name}/value",
                control_inputs=[op],
            )
        return [read.outputs[0]]

    return build


# TF1's ops on ref variables whose resource twin is ``Resource<name>``.
_PREFIXED = (
    "ApplyAdadelta",
    "ApplyAdagrad",
    "ApplyAdam",
    "ApplyCenteredRMSProp",
    "ApplyFtrlV2",
    "ApplyGradientDescent",
    "ApplyMomentum",
    "ApplyProximalAdagrad",
    "ApplyProximalGradientDescent",
    "ApplyRMSProp",
    "SparseApplyAdadelta",
    "SparseApplyAdagrad",
    "SparseApplyCenteredRMSProp",
    "SparseApplyFtrlV2",
    "SparseApplyMomentum",
    "SparseApplyProximalAdagrad",
    "SparseApplyProximalGradientDescent",
    "SparseApplyRMSProp",
    "ScatterAdd",
    "ScatterDiv",
    "ScatterMax",
    "ScatterMin",
    "ScatterMul",
    "ScatterSub",
    "ScatterUpdate",
    "ScatterNdAdd",
    "ScatterNdSub",
    "ScatterNdUpdate",
    "CountUpTo",
)
_TWINS = {name: f"Resource{name}" for name in _PREFIXED}
_TWINS.update(
    Assign="AssignVariableOp",
    AssignAdd="AssignAddVariableOp",
    AssignSub="AssignSubVariableOp",
    IsVariableInitialized="VarIsInitializedOp",
)

registry.register_importer("VariableV2", _variable)
for _tf_type, _twin in _TWINS.items():
    registry.register_importer(_tf_type, _resource_twin(_twin))
