"""Graphs in and out of files: ``tf.train.write_graph`` (also ``tf.io.write_graph``) and
``tf.import_graph_def``. The ``GraphDef`` conversion is ``framework/graph_def.py``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from google.protobuf import text_format

from ..framework import graph_def as graph_def_lib
from ..framework.graph import Graph, get_default_graph


def write_graph(graph_or_graph_def: Any, logdir: str, name: str, as_text: bool = True) -> str:
    """Writes a ``Graph`` (or ``GraphDef``) to ``logdir/name``, as protobuf text or
    binary; returns the path. ``logdir`` is created if missing (any fsspec URL)."""
    if isinstance(graph_or_graph_def, Graph):
        proto = graph_or_graph_def.as_graph_def()
    elif isinstance(graph_or_graph_def, graph_def_lib.GraphDef):
        proto = graph_or_graph_def
    else:
        raise TypeError(
            f"write_graph takes a Graph or a GraphDef, got {type(graph_or_graph_def).__name__}"
        )
    import fsspec  # on first use: it costs 0.03 s of ``import dataflow``

    fs, directory = fsspec.core.url_to_fs(str(logdir))
    fs.makedirs(directory, exist_ok=True)
    path = f"{str(logdir).rstrip('/')}/{name}"
    data = text_format.MessageToString(proto).encode() if as_text else proto.SerializeToString()
    with fsspec.open(path, "wb") as f:
        f.write(data)
    return path


def import_graph_def(
    graph_def: Any,
    input_map: dict[str, Any] | None = None,
    return_elements: Sequence[str] | None = None,
    name: str | None = None,
    op_dict: Any = None,
    producer_op_list: Any = None,
) -> list[Any] | None:
    """Adds the ops of ``graph_def`` (written by ``as_graph_def``) to the default graph,
    named ``import/...`` unless ``name`` says otherwise (``input_map``,
    ``return_elements`` as in TF1; see ``framework/graph_def.py``)."""
    return graph_def_lib.import_into(
        get_default_graph(), graph_def, input_map, return_elements, name
    )
