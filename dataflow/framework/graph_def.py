"""A ``Graph`` as a ``GraphDef`` protobuf (TensorBoard's ``graph_pb2``) and back.

``to_graph_def`` writes one ``NodeDef`` per operation: its name, op type, inputs
(``"name"``, ``"name:1"``, ``"^control"``), requested device, and its attrs where a
``AttrValue`` can hold them (numbers, strings, dtypes, shapes, arrays, flat lists of
those). TensorBoard's graph view reads it as it reads TF1's, and with ``add_shapes`` each
node carries ``_output_shapes`` so edges show shapes.

``import_graph_def`` rebuilds the ops of such a ``GraphDef`` in a graph, under a name
prefix, with ``input_map`` and ``return_elements`` as in TF1. What Python types our
attrs had is kept in the node's private ``_py_attr_kinds`` attr (bytes versus text,
``None``, tuples); an attr no ``AttrValue`` can hold (a ``while_loop`` body, a Python
function) is named there as ``unportable``, and importing that node fails saying so.
"""

from __future__ import annotations

import base64
import contextlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from tensorboard.compat.proto import (
    attr_value_pb2,
    graph_pb2,
    node_def_pb2,
    tensor_shape_pb2,
    types_pb2,
    versions_pb2,
)

from . import dtypes, errors, registry, tf_op_defs
from .tensor_shape import TensorShape

GraphDef = graph_pb2.GraphDef
NodeDef = node_def_pb2.NodeDef
# TF's GraphDef producer version for 1.15, so that readers treat ours as TF1's.
PRODUCER = 134
KINDS_ATTR = "_py_attr_kinds"

_ENUM_OF = {
    "float16": types_pb2.DT_HALF,
    "float32": types_pb2.DT_FLOAT,
    "float64": types_pb2.DT_DOUBLE,
    "int8": types_pb2.DT_INT8,
    "int16": types_pb2.DT_INT16,
    "int32": types_pb2.DT_INT32,
    "int64": types_pb2.DT_INT64,
    "uint8": types_pb2.DT_UINT8,
    "uint16": types_pb2.DT_UINT16,
    "uint32": types_pb2.DT_UINT32,
    "uint64": types_pb2.DT_UINT64,
    "bool": types_pb2.DT_BOOL,
    "complex64": types_pb2.DT_COMPLEX64,
    "complex128": types_pb2.DT_COMPLEX128,
    "string": types_pb2.DT_STRING,
    "resource": types_pb2.DT_RESOURCE,
    "variant": types_pb2.DT_VARIANT,
}
_DTYPE_OF = {enum: dtypes.as_dtype(name) for name, enum in _ENUM_OF.items()}


def datatype_enum(name: str) -> int:
    """TF's ``DataType`` enum for a dtype name (``"float32"``; numpy's ``"object"``, how
    strings are held, is ``DT_STRING``), ``DT_INVALID`` (0) for one TF lacks."""
    return _ENUM_OF.get("string" if name == "object" else name, types_pb2.DT_INVALID)


# --- export ------------------------------------------------------------------------------
def shape_proto(shape: TensorShape) -> tensor_shape_pb2.TensorShapeProto:
    if shape.rank is None:
        return tensor_shape_pb2.TensorShapeProto(unknown_rank=True)
    dims = [
        tensor_shape_pb2.TensorShapeProto.Dim(size=-1 if d is None else d) for d in shape.as_list()
    ]
    return tensor_shape_pb2.TensorShapeProto(dim=dims)


def _scalar_attr(value: Any) -> tuple[attr_value_pb2.AttrValue, str] | None:
    """``(AttrValue, kind)`` for one value, or ``None`` if no AttrValue holds it."""
    if isinstance(value, (bool, np.bool_)):
        return attr_value_pb2.AttrValue(b=bool(value)), ""
    if isinstance(value, (int, np.integer)):
        return attr_value_pb2.AttrValue(i=int(value)), ""
    if isinstance(value, (float, np.floating)):
        return attr_value_pb2.AttrValue(f=float(value)), ""
    if isinstance(value, str):
        return attr_value_pb2.AttrValue(s=value.encode()), ""
    if isinstance(value, bytes):
        return attr_value_pb2.AttrValue(s=value), "bytes"
    if isinstance(value, dtypes.DType) and value.name in _ENUM_OF:
        return attr_value_pb2.AttrValue(type=_ENUM_OF[value.name]), ""
    if isinstance(value, TensorShape):
        return attr_value_pb2.AttrValue(shape=shape_proto(value)), ""
    if isinstance(value, np.ndarray) and value.dtype != object or _is_string_array(value):
        return attr_value_pb2.AttrValue(tensor=_tensor_util().make_tensor_proto(value)), ""
    return None


def _tensor_util() -> Any:
    """TensorBoard's array <-> ``TensorProto`` converters, imported on first use: importing
    them loads TensorBoard's TensorFlow stub and fsspec (0.07 s of ``import dataflow``)."""
    from tensorboard.util import tensor_util

    return tensor_util


def _is_string_array(value: Any) -> bool:
    return (
        isinstance(value, np.ndarray)
        and value.dtype == object
        and all(isinstance(v, (bytes, str)) for v in value.reshape(-1))
    )


def _list_attr(values: Sequence[Any]) -> attr_value_pb2.AttrValue | None:
    out = attr_value_pb2.AttrValue.ListValue()
    for v in values:
        scalar = _scalar_attr(v)
        if scalar is None or scalar[1]:
            return None
        one = scalar[0]
        field = one.WhichOneof("value")
        if field in ("b", "i", "f", "s", "type"):
            getattr(out, field).append(getattr(one, field))
        elif field == "shape":
            out.shape.append(one.shape)
        else:
            out.tensor.append(one.tensor)
    return attr_value_pb2.AttrValue(list=out)


def attr_value(value: Any) -> tuple[attr_value_pb2.AttrValue | None, str]:
    """One attr as ``(AttrValue, kind)``; ``(None, "unportable")`` when it cannot be."""
    if value is None:
        return attr_value_pb2.AttrValue(), "none"
    if isinstance(value, (list, tuple)):
        proto = _list_attr(value)
        kind = "tuple" if isinstance(value, tuple) else ""
        return (proto, kind) if proto is not None else (None, "unportable")
    scalar = _scalar_attr(value)
    return scalar if scalar is not None else (None, "unportable")


def node_def(op: Any, add_shapes: bool = False) -> node_def_pb2.NodeDef:
    """The ``NodeDef`` of one operation."""
    node = node_def_pb2.NodeDef(name=op.name, op=op.type, device=op.device)
    node.input.extend(t.name[:-2] if t.name.endswith(":0") else t.name for t in op.inputs)
    node.input.extend(f"^{c.name}" for c in op.control_inputs)
    kinds = [
        f"{key}={kind}"
        for key, value in sorted(op.attrs.items())
        for kind in [attr_value(value)[1]]
        if kind
    ]
    for key, value in sorted(tf_op_defs.tf_node_attrs(op, op.attrs, _default_of).items()):
        proto = attr_value(value)[0]
        if proto is not None:
            node.attr[key].CopyFrom(proto)
    if op.colocation_groups:
        node.attr["_class"].list.s.extend(f"loc:@{g}".encode() for g in op.colocation_groups)
    if kinds:
        node.attr[KINDS_ATTR].list.s.extend(k.encode() for k in kinds)
    if add_shapes and op.outputs:
        node.attr["_output_shapes"].list.shape.extend(shape_proto(t.shape) for t in op.outputs)
    return node


def to_graph_def(
    graph: Any, add_shapes: bool = False, since: int | None = None
) -> graph_pb2.GraphDef:
    """The ``GraphDef`` of the operations of ``graph`` in creation order (those created
    after the first ``since``, when given)."""
    out = graph_pb2.GraphDef(versions=versions_pb2.VersionDef(producer=PRODUCER))
    ops = graph.get_operations()[since or 0 :]
    for op in ops:
        node = node_def(op, add_shapes)
        out.node.extend(_axes_input(graph, op, node))
        out.node.append(node)
    return out


# Our reductions over every axis take no axes input; TF's always take one.
_REDUCTIONS = frozenset({"Sum", "Mean", "Max", "Min", "Prod", "All", "Any", "EuclideanNorm"})


def _axes_input(graph: Any, op: Any, node: node_def_pb2.NodeDef) -> list[node_def_pb2.NodeDef]:
    """For a reduction over every axis of an input of known rank, the ``Const`` of those
    axes, which ``node`` then reads as TF's ``reduction_indices`` (nothing otherwise)."""
    if op.type not in _REDUCTIONS or len(op.inputs) != 1 or op.inputs[0].shape.rank is None:
        return []
    name = f"{op.name}/reduction_indices"
    if _has_op(graph, name):
        return []
    axes = node_def_pb2.NodeDef(name=name, op="Const", device=op.device)
    axes.attr["dtype"].type = types_pb2.DT_INT32
    value = attr_value(np.arange(op.inputs[0].shape.rank, dtype=np.int32))[0]
    assert value is not None  # an int32 array
    axes.attr["value"].CopyFrom(value)
    node.input.insert(1, name)
    node.attr["Tidx"].type = types_pb2.DT_INT32
    return [axes]


def _default_of(encoded: str) -> Any:
    """The Python value of an ``AttrValue`` default as ``tf_op_defs.json`` holds it (its
    serialized bytes in base64)."""
    return python_attr(attr_value_pb2.AttrValue.FromString(base64.b64decode(encoded)), "")


# --- import ------------------------------------------------------------------------------
def _from_scalar_attr(proto: Any, field: str, kind: str) -> Any:
    value = getattr(proto, field)
    if field == "s":
        return value if kind == "bytes" else value.decode()
    if field == "type":
        if value not in _DTYPE_OF:
            raise ValueError(f"unknown DataType enum {value}")
        return _DTYPE_OF[value]
    if field == "shape":
        if value.unknown_rank:
            return TensorShape(None)
        return TensorShape([None if d.size < 0 else d.size for d in value.dim])
    if field == "tensor":
        return _tensor_util().make_ndarray(value)
    return value


def python_attr(proto: attr_value_pb2.AttrValue, kind: str) -> Any:
    """The Python value of one ``AttrValue`` written by ``attr_value``."""
    if kind == "none":
        return None
    field = proto.WhichOneof("value")
    if field != "list":
        return _from_scalar_attr(proto, field, kind) if field else None
    for name in ("b", "i", "f", "s", "type", "shape", "tensor"):
        items = getattr(proto.list, name)
        if len(items):
            values = [_from_scalar_attr(_Item(name, v), name, "") for v in items]
            break
    else:
        values = []
    return tuple(values) if kind == "tuple" else values


class _Item:
    """One element of a list attr, read like a scalar ``AttrValue``."""

    def __init__(self, field: str, value: Any):
        setattr(self, field, value)


def attr_kinds(node: node_def_pb2.NodeDef) -> dict[str, str]:
    entries = node.attr[KINDS_ATTR].list.s if KINDS_ATTR in node.attr else []
    return dict(e.decode().split("=", 1) for e in entries)


def node_attrs(node: node_def_pb2.NodeDef) -> dict[str, Any]:
    """The attrs to build ``node``'s op with.

    Raises:
        ValueError: the node had an attr that a ``GraphDef`` cannot hold.
    """
    kinds = attr_kinds(node)
    unportable = sorted(k for k, kind in kinds.items() if kind == "unportable")
    if unportable:
        raise ValueError(
            f"import_graph_def: node '{node.name}' (op {node.op}) had attributes a GraphDef "
            f"cannot hold ({', '.join(unportable)}: Python objects such as a while_loop "
            f"body); build that part of the graph in Python instead"
        )
    out = {}
    for key, proto in node.attr.items():
        if key.startswith("_") and not key.startswith(tf_op_defs.PRIVATE):
            continue
        try:
            kind = kinds.get(key.removeprefix(tf_op_defs.PRIVATE), "")
            out[key] = python_attr(proto, kind)
        except ValueError as exc:
            raise ValueError(
                f"import_graph_def: node '{node.name}' (op {node.op}) attr '{key}': {exc}"
            ) from None
    out.update({key: None for key, kind in kinds.items() if kind == "none"})
    return out


def topological_nodes(graph_def: graph_pb2.GraphDef) -> list[node_def_pb2.NodeDef]:
    """The nodes, each after the nodes it reads (a ``GraphDef`` need not be ordered).

    Raises:
        ValueError: two nodes share a name, an input names no node of the graph, or the
        nodes form a cycle.
    """
    by_name: dict[str, node_def_pb2.NodeDef] = {}
    for n in graph_def.node:
        if n.name in by_name:
            raise ValueError(
                f"import_graph_def: node '{n.name}' appears more than once in the GraphDef "
                "(node names must be unique)"
            )
        by_name[n.name] = n
    order: list[node_def_pb2.NodeDef] = []
    state: dict[str, int] = {}  # 1: in progress, 2: done
    for root in graph_def.node:
        stack = [(root.name, False)]
        while stack:
            name, expanded = stack.pop()
            if expanded:
                state[name] = 2
                order.append(by_name[name])
                continue
            if state.get(name) == 2:
                continue
            if state.get(name) == 1:
                raise ValueError(f"import_graph_def: the GraphDef has a cycle through '{name}'")
            state[name] = 1
            stack.append((name, True))
            for ref in by_name[name].input:
                source = input_node_name(ref)
                if source not in by_name:
                    raise ValueError(
                        f"import_graph_def: node '{name}' has input '{ref}', which names no node"
                    )
                if state.get(source) != 2:
                    stack.append((source, False))
    return order


def input_node_name(ref: str) -> str:
    return ref.lstrip("^").split(":")[0]


def import_into(
    graph: Any,
    graph_def: graph_pb2.GraphDef,
    input_map: dict[str, Any] | None = None,
    return_elements: Sequence[str] | None = None,
    name: str | None = None,
) -> list[Any] | None:
    """Adds the ops of ``graph_def`` to ``graph`` as ``<name>/<node name>`` (``name``
    defaults to ``"import"``; ``""`` adds them unprefixed).

    ``input_map`` maps tensor names of ``graph_def`` (``"x:0"``, or ``"x"`` for output 0)
    to tensors of ``graph`` used in their place. ``return_elements`` names the tensors
    (``"y:0"``) or operations (``"train"``) to return, in that order. TF's control flow
    (while-loop frames and conds; functional ``While``/``If``) is rebuilt by the
    importer ``register_control_flow`` names (``ops/tf_control_flow.py``).

    Raises:
        TypeError: ``graph_def`` is not a ``GraphDef`` (or its serialized bytes).
        NotFoundError: a node's op type is not registered.
        InvalidArgumentError: malformed control flow (a loop frame or cond that is not
        whole).
        ValueError: a node cannot be rebuilt (two of one name, a missing attr, an input
        that names no output, the wrong number of inputs), an ``input_map`` key or a
        returned name is not in the ``GraphDef``, or a mapped tensor has another dtype.
    """
    graph_def = as_graph_def_proto(graph_def)
    builder = NodeBuilder(graph, graph_def, input_map, name)
    rebuild = _CONTROL_FLOW[0] if _CONTROL_FLOW else None
    _check_op_types(graph_def, CONTROL_FLOW_V1 | CONTROL_FLOW_V2 if rebuild else frozenset())
    if rebuild is not None and any(n.op in CONTROL_FLOW for n in graph_def.node):
        built = rebuild(graph_def, builder)
    else:
        built = {}
        for node in topological_nodes(graph_def):
            built[node.name] = builder.build(node, built)
    if return_elements is None:
        return None
    return [_returned(built, r) for r in return_elements]


# TF1's while loops and conds in a GraphDef (tf.compat.v1 without control flow v2).
CONTROL_FLOW_V1 = frozenset({"Enter", "Exit", "LoopCond", "Merge", "NextIteration", "Switch"})
# TF2's (and tf.compat.v1's with control flow v2): nodes calling functions of the library.
CONTROL_FLOW_V2 = frozenset({"While", "StatelessWhile", "If", "StatelessIf"})
CONTROL_FLOW = CONTROL_FLOW_V1 | CONTROL_FLOW_V2
_CONTROL_FLOW: list[Callable[[graph_pb2.GraphDef, NodeBuilder], Any]] = []


def register_control_flow(rebuild: Callable[[graph_pb2.GraphDef, NodeBuilder], Any]) -> None:
    """Declares how ``import_graph_def`` rebuilds TF's control-flow v1 nodes: ``rebuild(
    graph_def, builder)`` builds every node (the others with ``builder.build``) and
    returns a mapping from node names to what ``builder.build`` returns for them."""
    if _CONTROL_FLOW:
        raise KeyError("a control-flow importer is already registered")
    _CONTROL_FLOW.append(rebuild)


class NodeBuilder:
    """Builds the nodes of one ``GraphDef`` into a graph, one node at a time, under the
    import's name prefix and with its ``input_map``."""

    def __init__(self, graph: Any, graph_def: graph_pb2.GraphDef, input_map: Any, name: str | None):
        prefix = "import" if name is None else name
        if prefix:
            prefix = graph.unique_name(prefix.rstrip("/")) + "/"
        self.graph = graph
        self.prefix = prefix
        self.mapped = {_tensor_ref(k): v for k, v in (input_map or {}).items()}
        known = {n.name for n in graph_def.node}
        for ref in self.mapped:
            if ref[0] not in known:
                raise ValueError(
                    f"import_graph_def: input_map key '{ref[0]}:{ref[1]}' names no node"
                )

    def build(
        self, node: node_def_pb2.NodeDef, built: Any, graph: Any = None, mapped: bool = True
    ) -> Any:
        """Adds ``node`` to ``graph`` (default: the import's; or a body traced in it),
        reading its inputs from ``built`` (node name -> what ``build`` returned), and
        ``input_map``'s tensors unless ``mapped`` is false (a function's nodes)."""
        graph = self.graph if graph is None else graph
        inputs, controls = [], []
        for ref in node.input:
            if ref.startswith("^"):
                source = built[ref[1:]]
                controls.append(getattr(source, "last_op", source))
                continue
            inputs.append(_input(node, _tensor_ref(ref), built, self.mapped if mapped else {}))
        full_name = f"{self.prefix}{node.name}"
        if graph is self.graph and _has_op(graph, full_name):
            raise ValueError(f"import_graph_def: the graph already has an op named '{full_name}'")
        device = graph.device(node.device) if node.device else contextlib.nullcontext()
        attrs = tf_op_defs.ours_from_tf(node.op, node_attrs(node), inputs)
        importer = registry.importer_of(node.op)
        if importer is not None:
            with device, graph.control_dependencies(controls):
                return _imported_composite(node, importer, inputs, attrs, full_name)
        with device:
            try:
                return graph.create_op(
                    node.op, inputs, attrs, name=f"{full_name}/", control_inputs=controls
                )
            except KeyError as exc:  # a rule or builder reading an attr the node lacks
                raise ValueError(
                    f"import_graph_def: node '{node.name}' (op {node.op}) lacks the attr {exc}"
                ) from None


def _check_op_types(graph_def: graph_pb2.GraphDef, handled: frozenset[str]) -> None:
    """Raises one error naming every node of ``graph_def`` (and of its function library)
    we cannot build, before any is: ``NotFoundError`` listing the op types not registered
    here (or registered with another signature than TF's), ``UnimplementedError`` for
    nodes calling functions (other than the functional control flow in ``handled``)."""
    missing: dict[str, list[str]] = {}
    reasons: dict[str, str] = {}
    library = {f.signature.name: f for f in graph_def.library.function}
    nodes = [(n.name, n) for n in graph_def.node]
    nodes += [(f"{name}/{n.name}", n) for name, f in library.items() for n in f.node_def]
    functional = []
    for where, node in nodes:
        calls = [
            f
            for v in node.attr.values()
            for f in ([v.func.name] if v.HasField("func") else []) + [g.name for g in v.list.func]
        ]
        if calls and (node.op not in handled or any(f not in library for f in calls)):
            functional.append(f"'{where}' ({node.op})")
        if node.op in handled or registry.importer_of(node.op):
            continue
        try:
            registry.lookup(node.op)
            why = tf_op_defs.other_signature(node.op, node.attr)
        except KeyError:
            why = "not registered"
        if why:
            missing.setdefault(node.op, []).append(where)
            reasons[node.op] = why
    functional.sort()
    listed = "; ".join(
        f"'{op}' ({len(names)} node{'s' * (len(names) > 1)}, e.g. '{names[0]}'"
        + ("" if reasons[op] == "not registered" else f": {reasons[op]}")
        + ")"
        for op, names in sorted(missing.items())
    )
    if functional:
        raise errors.UnimplementedError(
            None,
            None,
            f"import_graph_def: {len(functional)} node(s) call functions of the GraphDef's "
            f"library ({', '.join(functional[:5])}{', ...' if len(functional) > 5 else ''}: "
            "defuns, or control flow naming no function of the library), which "
            "import_graph_def does not rebuild; "
            f"op types we cannot build besides: {listed or 'none'} (see docs/frozen_graphs.md)",
        )
    if not missing:
        return
    raise errors.NotFoundError(
        None,
        None,
        f"import_graph_def: the GraphDef uses {len(missing)} op type"
        f"{'s' * (len(missing) > 1)} we cannot build (not registered here, unless said "
        f"otherwise): {listed}",
    )


class Composite:
    """A node of a TF op type built from our ops: its outputs, read like an op's."""

    def __init__(self, op_type: str, outputs: list[Any]):
        self.type = op_type
        self.outputs = outputs
        self.last_op = next((t.op for t in outputs if t is not None), None)


def _imported_composite(
    node: node_def_pb2.NodeDef, importer: Any, inputs: list, attrs: dict, name: str
) -> Composite:
    try:
        outputs = importer(inputs, attrs, name)
    except KeyError as exc:
        raise ValueError(
            f"import_graph_def: node '{node.name}' (op {node.op}) lacks the attr {exc}"
        ) from None
    except (ValueError, TypeError) as exc:
        raise type(exc)(f"import_graph_def: node '{node.name}' (op {node.op}): {exc}") from None
    return Composite(node.op, list(outputs))


def as_graph_def_proto(graph_def: Any) -> graph_pb2.GraphDef:
    """``graph_def`` as our ``GraphDef`` class: ours as is, serialized bytes or another
    ``tensorflow.GraphDef`` class (TensorFlow's own) parsed.

    Raises:
        TypeError: anything else, or bytes that are not a ``GraphDef``.
    """
    if isinstance(graph_def, graph_pb2.GraphDef):
        return graph_def
    descriptor = getattr(graph_def, "DESCRIPTOR", None)
    if getattr(descriptor, "full_name", None) == "tensorflow.GraphDef":
        graph_def = graph_def.SerializeToString()
    if isinstance(graph_def, (bytes, bytearray)):
        try:
            return graph_pb2.GraphDef.FromString(bytes(graph_def))
        except Exception as exc:  # protobuf's DecodeError (this layer may not import it)
            raise TypeError(f"import_graph_def: the bytes are not a GraphDef ({exc})") from None
    raise TypeError(
        f"import_graph_def: graph_def must be a GraphDef proto, got {type(graph_def).__name__}"
    )


def _input(node: Any, key: tuple[str, int], built: dict[str, Any], mapped: dict) -> Any:
    """The tensor feeding ``node`` from ``key`` (``(node name, output index)``)."""
    source = built[key[0]]
    if key[1] >= len(source.outputs):
        raise ValueError(
            f"import_graph_def: node '{node.name}' has input '{key[0]}:{key[1]}', but "
            f"'{key[0]}' (op {source.type}) has {len(source.outputs)} outputs"
        )
    if key not in mapped:
        return source.outputs[key[1]]
    value, expected = mapped[key], source.outputs[key[1]].dtype
    dtype = getattr(value, "dtype", None)
    if dtype is not None and dtype != expected:
        raise ValueError(
            f"import_graph_def: input_map gives '{key[0]}:{key[1]}' a {dtype.name} tensor "
            f"({getattr(value, 'name', value)}), where node '{node.name}' expects "
            f"{expected.name}"
        )
    return value


def _has_op(graph: Any, name: str) -> bool:
    try:
        graph.get_operation_by_name(name)
    except KeyError:
        return False
    return True


def _tensor_ref(ref: str) -> tuple[str, int]:
    node, _, index = ref.partition(":")
    return node, int(index) if index else 0


def _returned(built: dict[str, Any], ref: str) -> Any:
    node, sep, index = ref.partition(":")
    if node not in built:
        raise ValueError(f"import_graph_def: requested return element '{ref}' names no node")
    source = built[node]
    return source.outputs[int(index)] if sep else getattr(source, "last_op", source)
