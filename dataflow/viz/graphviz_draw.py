"""``Graph.visualize`` and the graphviz export of the graph view.

``visualize`` returns a ``GraphView`` (interactive in Jupyter) or writes a file: SVG is
drawn in pure Python; PNG, PDF and the other graphviz formats go through ``to_dot`` and
need graphviz's ``dot`` program, and say so in one line when it is missing.

``to_dot`` draws the same model as the view: name scopes as clusters, ops filled with
the colour of their placed device, shapes on data edges, control edges dashed and
Send/Recv edges (crossing a stage boundary) in the view's Send/Recv colour.
"""

from __future__ import annotations

import shutil
from typing import Any

from ..framework import graph as graph_module
from ..framework.graph import Graph
from . import svg
from .graph_model import CONTROL, build
from .graph_view import GraphView

_DOT_MISSING = (
    "graphviz's 'dot' program is not installed (e.g. apt-get install graphviz); "
    "Graph.visualize() draws HTML and SVG without it"
)


def to_dot(graph: Graph, fetches: Any = None, session: Any = None, max_ops: int = 5000) -> Any:
    """A ``graphviz.Digraph`` of ``graph`` (or of the step computing ``fetches`` in
    ``session``), every op drawn, name scopes as clusters.

    Raises:
        ValueError: more than ``max_ops`` ops (graphviz takes minutes on such graphs;
            ``GraphView`` draws them collapsed).
    """
    import graphviz

    model = build(graph, fetches, session)
    num_ops = sum(1 for n in model.nodes if n.op is not None)
    if num_ops > max_ops:
        raise ValueError(
            f"refusing to draw {num_ops} ops with graphviz (max_ops={max_ops}); "
            "GraphView(graph) draws large graphs with collapsed name scopes"
        )
    dot = graphviz.Digraph(
        graph_attr={"rankdir": "TB", "fontsize": "10", "compound": "true"},
        node_attr={"shape": "box", "style": "rounded,filled", "fontsize": "9"},
    )
    clusters: dict[int, Any] = {0: dot}
    for i, node in enumerate(model.nodes):
        if i == 0:
            continue
        parent = clusters[node.parent]
        if node.op is None:
            clusters[i] = graphviz.Digraph(
                name=f"cluster_{i}",
                graph_attr={"label": node.label, "style": "rounded", "color": "#888888"},
            )
            continue
        parent.node(
            node.name,
            f"{node.label}\n{node.op.type}",
            fillcolor=svg.colour(node.device),
            tooltip=f"{model.devices[node.device]}, stage {node.stage}",
        )
    for i in range(len(model.nodes) - 1, 0, -1):  # innermost clusters first
        if i in clusters:
            clusters[model.nodes[i].parent].subgraph(clusters[i])
    for e in model.edges:
        attrs = {"fontsize": "8", "label": e.label}
        if e.kind == CONTROL:
            attrs["style"] = "dashed"
        if e.send_recv:
            attrs["color"] = attrs["fontcolor"] = svg.SEND_RECV
        dot.edge(model.nodes[e.src].name, model.nodes[e.dst].name, **attrs)
    return dot


def visualize(
    graph: Graph,
    filename: str | None = None,
    format: str = "svg",
    fetches: Any = None,
    session: Any = None,
    group_by: str = "scope",
) -> Any:
    """Draws ``graph``: returns a ``GraphView`` (displayed interactively in Jupyter), or
    writes ``filename.<format>`` and returns its path.

    Raises:
        RuntimeError: ``format`` is not ``"svg"`` and graphviz's ``dot`` is missing.
    """
    view = GraphView(graph, fetches, session, group_by=group_by)
    if filename is None:
        return view
    path = filename if filename.endswith(f".{format}") else f"{filename}.{format}"
    if format == "svg":
        return view.save(path)
    if shutil.which("dot") is None:
        raise RuntimeError(_DOT_MISSING)
    return to_dot(graph, fetches, session).render(outfile=path, format=format, cleanup=True)


graph_module.register_visualize_hook(visualize)
