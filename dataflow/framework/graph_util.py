"""``tf.graph_util``: freezing a graph (variables become constants) and pruning a
``GraphDef`` to what some nodes need, as TF 1.15's ``graph_util_impl`` does.

These work on ``GraphDef`` protobufs, ours or TF's; ``convert_variables_to_constants``
reads the variables' values through a session (``sess.run`` of each variable's read).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from tensorboard.compat.proto import graph_pb2, types_pb2

from . import graph_def as graph_def_lib

# Variable ops as TF1 and dataflow write them: reference variables read by ``Identity``,
# resource variables read by ``ReadVariableOp``.
_VARIABLE_OPS = ("Variable", "VariableV2", "VarHandleOp")


def _node_name(ref: str) -> str:
    return graph_def_lib.input_node_name(ref)


def _check_graph_def(graph_def: Any, who: str) -> None:
    if not isinstance(graph_def, graph_pb2.GraphDef):
        raise TypeError(f"{who}: graph_def must be a graph_pb2.GraphDef proto, got {graph_def!r}")


def extract_sub_graph(graph_def: Any, dest_nodes: Sequence[str]) -> graph_pb2.GraphDef:
    """The nodes of ``graph_def`` that ``dest_nodes`` need (through data and control
    inputs), in their order in ``graph_def``.

    Raises:
        TypeError: ``graph_def`` is not a ``GraphDef`` or ``dest_nodes`` is a string.
        AssertionError: a name of ``dest_nodes`` is not a node of the graph.
    """
    _check_graph_def(graph_def, "extract_sub_graph")
    if isinstance(dest_nodes, str):
        raise TypeError("extract_sub_graph: dest_nodes must be a list of node names, got a str")
    by_name = {n.name: n for n in graph_def.node}
    for name in dest_nodes:
        if name not in by_name:
            raise AssertionError(f"{name} is not in graph")
    keep: set[str] = set()
    stack = list(dest_nodes)
    while stack:
        name = stack.pop()
        if name in keep:
            continue
        keep.add(name)
        stack.extend(_node_name(ref) for ref in by_name[name].input)
    out = graph_pb2.GraphDef()
    out.versions.CopyFrom(graph_def.versions)
    out.library.CopyFrom(graph_def.library)
    out.node.extend(copy.deepcopy(n) for n in graph_def.node if n.name in keep)
    return out


def convert_variables_to_constants(
    sess: Any,
    input_graph_def: Any,
    output_node_names: Sequence[str],
    variable_names_whitelist: Sequence[str] | None = None,
    variable_names_blacklist: Sequence[str] | None = None,
) -> graph_pb2.GraphDef:
    """``input_graph_def`` pruned to ``output_node_names``, with each variable it reads
    replaced by a ``Const`` of its value in ``sess`` (a resource variable's
    ``ReadVariableOp`` becomes an ``Identity`` of it), as TF 1.15 freezes a graph.

    Args:
        sess: a session holding the variables' values.
        input_graph_def: the graph's ``GraphDef`` (``sess.graph.as_graph_def()``).
        output_node_names: the names of the nodes to keep, with what they need.
        variable_names_whitelist: only these variables are frozen (all when ``None``).
        variable_names_blacklist: these variables are not frozen.

    Raises:
        TypeError, AssertionError: as ``extract_sub_graph``.
    """
    graph = extract_sub_graph(input_graph_def, output_node_names)
    allowed = set(variable_names_whitelist) if variable_names_whitelist is not None else None
    refused = set(variable_names_blacklist or ())
    reads: dict[str, str] = {}  # resource variable -> a ReadVariableOp of it, in sess's graph
    for node in input_graph_def.node:
        if node.op == "ReadVariableOp" and node.input:
            reads.setdefault(_node_name(node.input[0]), node.name)
    frozen: list[str] = []
    fetches: list[str] = []
    for node in graph.node:
        if node.op not in _VARIABLE_OPS or node.name in refused:
            continue
        if allowed is not None and node.name not in allowed:
            continue
        if node.op == "VarHandleOp" and node.name not in reads:
            continue  # never read: nothing kept depends on its value
        frozen.append(node.name)
        fetches.append(f"{reads[node.name]}:0" if node.op == "VarHandleOp" else f"{node.name}:0")
    values = dict(zip(frozen, sess.run(fetches) if fetches else [], strict=True))
    out = graph_pb2.GraphDef()
    out.versions.CopyFrom(graph.versions)
    out.library.CopyFrom(graph.library)
    resources = {n.name for n in graph.node if n.op == "VarHandleOp" and n.name in values}
    for node in graph.node:
        if node.name in values:
            out.node.append(_const_node(node, values[node.name]))
        elif node.op == "ReadVariableOp" and _node_name(node.input[0]) in resources:
            out.node.append(_identity_of_read(node))
        else:
            out.node.append(copy.deepcopy(node))
    return out


def _const_node(variable: Any, value: Any) -> Any:
    dtype = variable.attr["dtype"]
    const = graph_def_lib.NodeDef(name=variable.name, op="Const", device=variable.device)
    const.attr["dtype"].CopyFrom(dtype)
    tensor = graph_def_lib.attr_value(value)[0]
    assert tensor is not None  # a numpy array: AttrValue holds every array a variable has
    const.attr["value"].CopyFrom(tensor)
    return const


def _identity_of_read(read: Any) -> Any:
    node = graph_def_lib.NodeDef(name=read.name, op="Identity", device=read.device)
    node.input.extend(read.input)
    node.attr["T"].CopyFrom(read.attr["dtype"])
    return node


def remove_training_nodes(
    input_graph: Any, protected_nodes: Sequence[str] | None = None
) -> graph_pb2.GraphDef:
    """``input_graph`` without ``CheckNumerics`` nodes and with ``Identity`` and
    ``StopGradient`` nodes spliced out (their consumers read their input), except the
    ``protected_nodes``, one with control inputs, one that is itself a control input and
    one another node is colocated with: TF's rules, for graphs that only run inference.
    As in TF, a consumer of a removed ``CheckNumerics`` loses that input (the function
    is meant for graphs where nothing reads one)."""
    _check_graph_def(input_graph, "remove_training_nodes")
    protected = set(protected_nodes or ())
    removed = {n.name for n in input_graph.node if n.op == "CheckNumerics"} - protected
    kept = []
    for node in input_graph.node:
        if node.name in removed:
            continue
        new = copy.deepcopy(node)
        del new.input[:]
        new.input.extend(ref for ref in node.input if ref.lstrip("^") not in removed)
        kept.append(new)
    control_inputs = {ref[1:] for n in kept for ref in n.input if ref.startswith("^")}
    with_controls = {n.name for n in kept if any(ref.startswith("^") for ref in n.input)}
    colocated = {
        group.decode().removeprefix("loc:@")
        for n in kept
        if "_class" in n.attr
        for group in n.attr["_class"].list.s
    }
    splice = {
        n.name: n.input[0]
        for n in kept
        if n.op in ("Identity", "StopGradient")
        and n.name not in protected | with_controls | control_inputs | colocated
    }
    out = graph_pb2.GraphDef()
    out.versions.CopyFrom(input_graph.versions)
    out.library.CopyFrom(input_graph.library)
    for node in kept:
        if node.name in splice:
            continue
        refs = list(node.input)
        del node.input[:]
        for ref in refs:
            while ref.lstrip("^") in splice:
                ref = splice[ref.lstrip("^")]
            node.input.append(ref)
        out.node.append(node)
    return out


def must_run_on_cpu(node: Any, pin_variables_on_cpu: bool = False) -> bool:
    """Whether TF1 would keep ``node`` (an ``Operation`` or a ``NodeDef``) on the CPU:
    string and int32 constants, int32 ``DynamicStitch``, casts from strings, and, when
    ``pin_variables_on_cpu``, variables (``tf.graph_util.must_run_on_cpu``)."""
    if not hasattr(node, "attr"):  # an Operation (a NodeDef, ours or TF's, has attr)
        node = graph_def_lib.node_def(node)
    if pin_variables_on_cpu and node.op in _VARIABLE_OPS:
        return True
    attrs = node.attr
    if node.op == "Const":
        return attrs["dtype"].type in (types_pb2.DT_STRING, types_pb2.DT_INT32)
    if node.op in ("DynamicStitch", "ParallelDynamicStitch"):
        return attrs["T"].type == types_pb2.DT_INT32
    if node.op == "Cast":
        return attrs["SrcT"].type == types_pb2.DT_STRING
    return False


def tensor_shape_from_node_def_name(graph: Any, input_name: str) -> Any:
    """The static shape of ``input_name`` (``"op"`` for its first output, or
    ``"op:i"``) in ``graph``."""
    name = input_name if ":" in input_name else f"{input_name}:0"
    return graph.get_tensor_by_name(name).get_shape()
