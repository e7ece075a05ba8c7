"""Drawing graphs (graphviz), Jupyter reprs and trace export (layer 3)."""

from .graphviz_draw import to_dot as to_dot
from .graphviz_draw import visualize as visualize
from .trace import write_chrome_trace as write_chrome_trace

__all__ = ["to_dot", "visualize", "write_chrome_trace"]
