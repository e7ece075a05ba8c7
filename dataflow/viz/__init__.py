"""Seeing graphs, clusters and steps (layer 3): the graph view (interactive HTML in
Jupyter, static SVG, graphviz), the HTML reprs of dataflow's objects, traces."""

from ..summary.chrome_trace import chrome_trace as chrome_trace
from ..summary.chrome_trace import step_events as step_events
from ..summary.chrome_trace import write_chrome_trace as write_chrome_trace
from . import reprs as reprs
from . import runtime_reprs as runtime_reprs
from .graph_view import GraphView as GraphView
from .graphviz_draw import to_dot as to_dot
from .graphviz_draw import visualize as visualize

__all__ = [
    "GraphView",
    "chrome_trace",
    "reprs",
    "step_events",
    "to_dot",
    "visualize",
    "write_chrome_trace",
]
