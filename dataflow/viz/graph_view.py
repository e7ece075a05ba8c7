"""``GraphView``: the graph as TensorBoard draws it, in a notebook or as a file.

In Jupyter the view is HTML with a small script (``graph_view.js``) that draws SVG in
the output cell and opens or closes a name scope on click; nothing runs on a server.
``to_svg`` draws the same picture in Python (for docs and files), and neither needs
graphviz: the layout is ``layout.py``'s.
"""

from __future__ import annotations

import functools
import importlib.resources
import json
import uuid
from html import escape
from typing import Any

from ..framework.graph import Graph, get_default_graph
from . import graph_model, layout, svg


class GraphView:
    """A drawable view of a graph (or of the ops of one step).

    Args:
        graph: the graph (default: the default graph).
        fetches: with ``session``, draw only the ops ``session.run(fetches)`` runs,
            coloured by the device the session placed each on.
        session: see ``fetches``.
        feed_dict: the feeds of that step (fed tensors cut the graph).
        group_by: ``"scope"`` (name scopes, as TensorBoard) or ``"stage"`` (one box
            per stage: the ops that run as one task on one device).
        budget: about how many boxes the first picture shows; larger groups start
            collapsed.

    Example:
        >>> view = tf.viz.GraphView(fetches=train_op, session=sess)  # doctest: +SKIP
        >>> view                      # interactive in Jupyter  # doctest: +SKIP
        >>> view.save("graph.svg")    # static  # doctest: +SKIP
    """

    def __init__(
        self,
        graph: Graph | None = None,
        fetches: Any = None,
        session: Any = None,
        feed_dict: dict | None = None,
        group_by: str = "scope",
        budget: int = graph_model.VISIBLE_BUDGET,
    ):
        self.graph = graph if graph is not None else get_default_graph()
        self.model = graph_model.build(self.graph, fetches, session, feed_dict, group_by, budget)

    @property
    def title(self) -> str:
        ops = sum(1 for n in self.model.nodes if n.op is not None)
        step = "one step" if self.model.placed_by == "session" else "graph"
        return f"{step}: {ops} ops on {len(self.model.devices)} device(s)"

    def expand(self, *scopes: str) -> GraphView:
        """Opens the named groups (and the groups enclosing them) in later drawings;
        ``expand("*")`` opens every group. Returns ``self``."""
        nodes = self.model.nodes
        for i, node in enumerate(nodes):
            if node.op is None and ("*" in scopes or node.name in scopes):
                while i >= 0:
                    self.model.expanded.add(i)
                    i = nodes[i].parent
        return self

    def to_svg(self) -> str:
        """The SVG document of the current view (groups open as ``expand`` left them)."""
        return svg.render(self.model, title=self.title)

    def save(self, path: str) -> str:
        """Writes ``to_svg()`` to ``path``; returns ``path``."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.to_svg())
        return path

    def to_html(self) -> str:
        """The interactive HTML (a ``<div>`` and its script) for a notebook or a page.

        The ``<div>`` holds ``to_svg()``'s picture, which the script replaces with the
        interactive view: where no script runs (GitHub's and nbviewer's previews, an
        untrusted notebook, a page with scripts off) the static picture stays.
        """
        element = f"dataflow-graph-{uuid.uuid4().hex[:10]}"
        data = json.dumps(_payload(self.model, self.title), separators=(",", ":"))
        static = self.to_svg().replace("<svg ", '<svg style="max-width:100%;height:auto" ', 1)
        return (
            f'<div id="{element}" class="dataflow-graph-view">{static}</div>'
            + _legend_html(self.model, f"{element}-legend")
            + f"<script>{_script()}\ndataflowGraphView({json.dumps(element)}, {data});</script>"
        )

    def _repr_html_(self) -> str:
        return self.to_html()

    def _repr_svg_(self) -> str:
        return self.to_svg()

    def __repr__(self) -> str:
        return f"<dataflow.viz.GraphView {self.title}>"


@functools.cache
def _script() -> str:
    return importlib.resources.files(__package__).joinpath("graph_view.js").read_text("utf-8")


def _payload(model: graph_model.ViewModel, title: str) -> dict:
    labels: dict[str, int] = {"": 0}
    edges = []
    for e in model.edges:
        label = labels.setdefault(e.label, len(labels))
        edges.append([e.src, e.dst, e.kind, int(e.send_recv), label])
    nodes: list[dict[str, Any]] = []
    for node in model.nodes:
        item: dict[str, Any] = {
            "name": node.name,
            "label": node.label,
            "parent": node.parent,
            "device": node.device,
        }
        if node.op is not None:
            item["type"] = node.op.type
            item["stage"] = node.stage
        else:
            item["ops"] = node.num_ops
            item["shares"] = sorted(node.devices.items())
        nodes.append(item)
    return {
        "title": title,
        "nodes": nodes,
        "edges": edges,
        "labels": list(labels),
        "ranks": {str(g): r for g, r in layout.order_groups(model).items()},
        "expanded": sorted(model.expanded),
        "devices": model.devices,
        "stages": model.num_stages,
        "palette": svg.PALETTE,
        "edge": svg.EDGE,
        "send_recv": svg.SEND_RECV,
    }


def _legend_html(model: graph_model.ViewModel, element: str) -> str:
    """The interactive view's legend, hidden until the script shows it (the static SVG
    has its own)."""
    placed = "placed for this step" if model.placed_by == "session" else "as a session would place"
    rows = "".join(
        f'<span style="display:inline-block;margin-right:14px"><span style="display:inline-'
        f"block;width:12px;height:12px;border-radius:2px;vertical-align:middle;background:"
        f'{svg.colour(i)};border:1px solid #888"></span> <code>{escape(d)}</code></span>'
        for i, d in enumerate(model.devices)
    )
    edges = (
        f'<span style="color:{svg.EDGE}">&#8212; data (shape)</span> &nbsp; '
        f'<span style="color:{svg.EDGE}">- - control</span> &nbsp; '
        f'<span style="color:{svg.SEND_RECV};font-weight:bold">&#8212; Send/Recv (crosses a '
        f"stage)</span> &nbsp; s<i>N</i>: the op's stage"
    )
    return (
        f'<div id="{element}" style="display:none;font:12px sans-serif;margin-top:4px">'
        f"Devices ({placed}), "
        f"{model.num_stages} stage(s): {rows}<br>{edges}</div>"
    )
