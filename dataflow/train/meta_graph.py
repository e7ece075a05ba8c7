"""MetaGraphs: ``tf.train.export_meta_graph`` and ``tf.train.import_meta_graph``.

A ``MetaGraphDef`` (TensorBoard's ``meta_graph_pb2``, TF's own message) holds a graph's
``GraphDef``, the ``SaverDef`` of the saver that saves its variables, and its
collections as ``CollectionDef``s, each one of

* ``node_list``: names of tensors (``"loss:0"``) and operations (``"train"``);
* ``bytes_list``: strings, or serialized protos for the collections TF stores as such:
  ``VariableDef`` for the variable collections (``variables``, ``trainable_variables``,
  ``local_variables``, ``model_variables``, ``moving_average_variables``,
  ``metric_variables``, ``global_step``), ``QueueRunnerDef`` for ``queue_runners`` and
  ``SaverDef`` for ``savers``;
* ``int64_list`` / ``float_list``: numbers.

A collection whose items are none of these (Python objects, TF1's while-loop contexts)
is left out, as TF1 leaves it out with a warning; dataflow's own (keys starting with
``__``, as TF1's own are tuples) are left out quietly. Export writes TF's saver nodes in
place of our saver's (``saver_graph.py``); import rebuilds the graph with
``import_graph_def`` (after checking the file: ``meta_file.py``), then the collections
(one ``Variable`` object per variable, shared by every collection naming it), and
returns a ``Saver`` over the ``SaverDef``'s ops. Names are relative to ``export_scope``
on export and prefixed with ``import_scope`` on import.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from tensorboard.compat.proto import meta_graph_pb2, saver_pb2

from ..framework import errors
from ..framework import graph_def as graph_def_lib
from ..framework.graph import Graph, Operation, Tensor, get_default_graph
from ..ops.state.variable_proto import VariableFromDef, variable_to_proto
from ..ops.state.variables import GraphKeys, Variable
from . import meta_file, saver_graph, tf_export, tf_protos
from .input.queue_runner import QueueRunner

_log = logging.getLogger("dataflow")

VARIABLE_COLLECTIONS = frozenset(
    {
        GraphKeys.GLOBAL_VARIABLES,
        GraphKeys.TRAINABLE_VARIABLES,
        GraphKeys.LOCAL_VARIABLES,
        GraphKeys.MODEL_VARIABLES,
        GraphKeys.MOVING_AVERAGE_VARIABLES,
        GraphKeys.METRIC_VARIABLES,
        GraphKeys.GLOBAL_STEP,
    }
)
MetaGraphDef = meta_graph_pb2.MetaGraphDef


# --- export ------------------------------------------------------------------------------
def _scoped_name(name: str, scope: str | None) -> str | None:
    """``name`` relative to ``scope``; ``None`` when outside it."""
    if not scope:
        return name
    return name[len(scope) + 1 :] if name.startswith(scope + "/") else None


def _queue_runner_proto(qr: QueueRunner, scope: str | None) -> Any:
    queue = qr.queue
    queue_name = getattr(queue, "name", str(queue))
    if isinstance(queue, Tensor):
        queue_name = queue.op.name
    names = [_scoped_name(n, scope) for n in (queue_name, qr.close_op.name, qr.cancel_op.name)]
    enqueues = [_scoped_name(op.name, scope) for op in qr.enqueue_ops]
    if None in names or None in enqueues:
        return None
    return tf_protos.QueueRunnerDef(
        queue_name=names[0],
        enqueue_op_name=enqueues,
        close_op_name=names[1],
        cancel_op_name=names[2],
        queue_closed_exception_types=[
            t.error_code for t in getattr(qr, "queue_closed_exception_types", ())
        ],
    )


def _add_collection(meta: Any, key: str, items: list[Any], scope: str | None) -> None:
    """Adds collection ``key`` to ``meta`` as TF1 would, or logs why it cannot."""
    col = meta_graph_pb2.CollectionDef()
    first = items[0]
    try:
        if isinstance(first, Variable):
            protos = [variable_to_proto(v, scope) for v in items]
            col.bytes_list.value.extend(p.SerializeToString() for p in protos if p is not None)
        elif isinstance(first, QueueRunner):
            protos = [_queue_runner_proto(q, scope) for q in items]
            col.bytes_list.value.extend(p.SerializeToString() for p in protos if p is not None)
        elif hasattr(first, "as_saver_def"):
            col.bytes_list.value.extend(s.as_saver_def().SerializeToString() for s in items)
        elif isinstance(first, (Tensor, Operation)):
            names = [_scoped_name(x.name, scope) for x in items]
            col.node_list.value.extend(n for n in names if n is not None)
        elif isinstance(first, (bytes, str)):
            col.bytes_list.value.extend(x.encode() if isinstance(x, str) else x for x in items)
        elif isinstance(first, (bool, np.bool_)):
            raise TypeError("booleans")
        elif isinstance(first, (int, np.integer)):
            col.int64_list.value.extend(int(x) for x in items)
        elif isinstance(first, (float, np.floating)):
            col.float_list.value.extend(float(x) for x in items)
        else:
            raise TypeError(type(first).__name__)
    except (TypeError, ValueError, AttributeError) as exc:
        _log.warning("Issue encountered when serializing %s: %s; left out", key, exc)
        return
    meta.collection_def[key].CopyFrom(col)


def _graph_def(graph: Graph, export_scope: str | None, clear_devices: bool) -> Any:
    """The graph's ``GraphDef`` with TF's saver nodes for ours (``saver_graph.py``),
    narrowed to ``export_scope`` (names made relative to it)."""
    proto = graph.as_graph_def(add_shapes=True)
    dropped: set[str] = set()
    added = []
    for scope, saved in saver_graph.saver_scopes(graph).items():
        dropped |= saver_graph.own_saver_nodes(graph, scope)
        added.extend(saver_graph.tf_saver_nodes(scope, saved))
    out = graph_def_lib.GraphDef(versions=proto.versions, library=proto.library)

    def op_of(name: str) -> Operation | None:
        try:
            return graph.get_operation_by_name(name)
        except KeyError:
            return None

    kept = [n for n in proto.node if n.name not in dropped] + added
    for node in tf_export.tf_primitives(kept, op_of):
        name = _scoped_name(node.name, export_scope)
        if name is None:
            continue
        node = graph_def_lib.NodeDef.FromString(node.SerializeToString())
        node.name = name
        if export_scope:
            inputs = [
                ("^" if i.startswith("^") else "")
                + (_scoped_name(i.lstrip("^"), export_scope) or "")
                for i in node.input
            ]
            del node.input[:]
            node.input.extend(inputs)
        if clear_devices:
            node.device = ""
        out.node.append(node)
    return out


def export_meta_graph(
    filename: str | None = None,
    meta_info_def: Any = None,
    graph_def: Any = None,
    saver_def: Any = None,
    collection_list: Sequence[str] | None = None,
    as_text: bool = False,
    graph: Graph | None = None,
    export_scope: str | None = None,
    clear_devices: bool = False,
    clear_extraneous_savers: bool = False,
    strip_default_attrs: bool = False,
    save_debug_info: bool = False,
    **kwargs: Any,
) -> Any:
    """Returns the ``MetaGraphDef`` of ``graph`` (default: the default graph), and writes
    it to ``filename`` when given (protobuf text with ``as_text``).

    Args:
        filename: where to write it (any fsspec URL; ``None``: not written).
        meta_info_def: a ``MetaInfoDef`` to include (its tags, say).
        graph_def: the ``GraphDef`` to include instead of the graph's.
        saver_def: the ``SaverDef`` to include (``Saver.export_meta_graph`` passes its
            own).
        collection_list: the collections to include (default: all).
        as_text: write protobuf text rather than binary.
        export_scope: include only the ops, variables and collection items under this
            name scope, their names relative to it.
        clear_devices: leave the devices out of the nodes.
        clear_extraneous_savers: leave out the ``savers`` collection other than
            ``saver_def``'s.
    """
    graph = graph or get_default_graph()
    meta = meta_graph_pb2.MetaGraphDef()
    if meta_info_def is not None:
        meta.meta_info_def.CopyFrom(meta_info_def)
    meta.meta_info_def.meta_graph_version = meta.meta_info_def.meta_graph_version or "v1.0"
    if graph_def is None:
        meta.graph_def.CopyFrom(_graph_def(graph, export_scope, clear_devices))
    else:
        meta.graph_def.CopyFrom(graph_def_lib.as_graph_def_proto(graph_def))
        if clear_devices:
            for node in meta.graph_def.node:
                node.device = ""
    if saver_def is not None:
        meta.saver_def.CopyFrom(saver_def)
    keys = graph.get_all_collection_keys() if collection_list is None else collection_list
    for key in sorted(set(keys)):
        if clear_extraneous_savers and key == GraphKeys.SAVERS or key.startswith("__"):
            continue  # "__...": dataflow's own (the variable store), as TF1's tuple keys
        items = graph.get_collection(key)
        if items:
            _add_collection(meta, key, items, export_scope)
    if filename:
        meta_file.write(filename, meta, as_text)
    return meta


# --- import ------------------------------------------------------------------------------
def _element(graph: Graph, name: str, scope: str | None) -> Any:
    return graph.as_graph_element(f"{scope}/{name}" if scope else name)


def _queue_runner(graph: Graph, proto: Any, scope: str | None) -> QueueRunner:
    return QueueRunner(
        queue=_element(graph, proto.queue_name + ":0", scope),
        enqueue_ops=[_element(graph, n, scope) for n in proto.enqueue_op_name],
        close_op=_element(graph, proto.close_op_name, scope),
        cancel_op=_element(graph, proto.cancel_op_name, scope),
        queue_closed_exception_types=tuple(
            errors.exception_type_from_error_code(c) for c in proto.queue_closed_exception_types
        )
        or None,
    )


def _restore_collections(
    graph: Graph, meta: Any, scope: str | None, make_saver: Callable[[Any], Any]
) -> None:
    variables: dict[str, Variable] = {}
    for key in sorted(meta.collection_def):
        col = meta.collection_def[key]
        kind = col.WhichOneof("kind")
        if kind is None:
            continue
        values = getattr(col, kind).value
        if kind == "node_list":
            items = [_element(graph, name, scope) for name in values]
        elif kind == "bytes_list" and key in VARIABLE_COLLECTIONS:
            items = []
            for raw in values:
                proto = meta_file.parse(meta_file.VariableDef, raw, f"collection {key}")
                name = proto.variable_name
                if name not in variables:
                    variables[name] = VariableFromDef(proto, scope, graph)
                items.append(variables[name])
        elif kind == "bytes_list" and key == GraphKeys.QUEUE_RUNNERS:
            items = [
                _queue_runner(graph, meta_file.parse(tf_protos.QueueRunnerDef, raw, key), scope)
                for raw in values
            ]
        elif kind == "bytes_list" and key == GraphKeys.SAVERS:
            items = [make_saver(meta_file.parse(saver_pb2.SaverDef, raw, key)) for raw in values]
        else:
            items = list(values)
        for item in items:
            graph.add_to_collection(key, item)


# What building a crafted graph may raise (a shape rule indexing inputs the node lacks, an
# attr of the wrong type): the graph is bad, whatever the exception class.
_BAD_GRAPH = (
    ValueError,
    TypeError,
    KeyError,
    IndexError,
    AttributeError,
    ArithmeticError,
    RecursionError,
)


def import_scoped_meta_graph(
    meta_graph_or_file: Any,
    clear_devices: bool = False,
    graph: Graph | None = None,
    import_scope: str | None = None,
    input_map: dict[str, Any] | None = None,
    make_saver: Callable[[Any], Any] = lambda saver_def: saver_def,
) -> Any:
    """Imports the graph and collections of a ``MetaGraphDef`` (or its file) into
    ``graph``; returns the ``MetaGraphDef``. ``make_saver`` turns each ``SaverDef`` of
    the ``savers`` collection into what the collection holds (``saver.import_meta_graph``
    makes ``Saver``s). See ``saver.import_meta_graph``."""
    graph = graph or get_default_graph()
    meta = meta_file.as_meta_graph(meta_graph_or_file)
    where = meta_graph_or_file if isinstance(meta_graph_or_file, str) else "the MetaGraphDef"
    graph_def = meta_file.checked_graph_def(meta.graph_def, where)
    if clear_devices:
        for node in graph_def.node:
            node.device = ""
    with graph.as_default():
        try:
            graph_def_lib.import_into(graph, graph_def, input_map, name=import_scope or "")
            _restore_collections(graph, meta, import_scope, make_saver)
        except _BAD_GRAPH as exc:
            raise errors.InvalidArgumentError(
                None, None, f"import_meta_graph: {where} cannot be imported: {exc}"
            ) from None
    return meta
