"""Drawing a graph with graphviz: one node per op, coloured by device.

Data edges are solid and labelled with the tensor's static shape, control edges dashed.
Given a session and fetches, only the ops of that step are drawn, coloured by the device
the placer chose; otherwise every op, coloured by its requested device.
"""

from __future__ import annotations

from typing import Any

from ..framework import graph as graph_module
from ..framework.graph import Graph

_PALETTE = [
    "#a6cee3",
    "#b2df8a",
    "#fb9a99",
    "#fdbf6f",
    "#cab2d6",
    "#ffff99",
    "#1f78b4",
    "#33a02c",
    "#e31a1c",
    "#ff7f00",
]


def to_dot(graph: Graph, fetches: Any = None, session: Any = None, max_ops: int = 2000) -> Any:
    """A ``graphviz.Digraph`` of ``graph`` (or of the step computing ``fetches``)."""
    import graphviz

    if fetches is not None and session is not None:
        placement = session.placement(fetches)
        ops = [graph.get_operation_by_name(name) for name in placement]
    else:
        placement = {}
        ops = graph.get_operations()
    if len(ops) > max_ops:
        raise ValueError(
            f"refusing to draw {len(ops)} ops (max_ops={max_ops}); draw the "
            "ops of one step with fetches= and session="
        )
    members = {op.name for op in ops}
    devices = sorted({placement.get(op.name, op.device) for op in ops})
    colour = {d: _PALETTE[i % len(_PALETTE)] for i, d in enumerate(devices)}
    dot = graphviz.Digraph(
        graph_attr={"rankdir": "TB", "fontsize": "10"},
        node_attr={"shape": "box", "style": "rounded,filled", "fontsize": "9"},
    )
    for op in ops:
        device = placement.get(op.name, op.device)
        label = f"{op.name}\n{op.type}" + (f"\n{device}" if device else "")
        dot.node(op.name, label, fillcolor=colour[device])
        for t in op.inputs:
            if t.op.name in members:
                dot.edge(t.op.name, op.name, label=str(t.shape), fontsize="8")
        for c in op.control_inputs:
            if c.name in members:
                dot.edge(c.name, op.name, style="dashed")
    return dot


def visualize(
    graph: Graph,
    filename: str | None = None,
    format: str = "svg",
    fetches: Any = None,
    session: Any = None,
    as_svg_text: bool = False,
) -> Any:
    """Draws ``graph``: returns SVG text, writes ``filename.<format>``, or returns the
    ``graphviz.Digraph`` (which Jupyter displays)."""
    dot = to_dot(graph, fetches, session)
    if as_svg_text:
        return dot.pipe(format="svg").decode()
    if filename is not None:
        return dot.render(filename, format=format, cleanup=True)
    return dot


graph_module.register_visualize_hook(visualize)
