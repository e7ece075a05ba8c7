"""Sub-graphs: the bodies of functional control flow (``cond``, ``while_loop``).

A ``SubGraph`` is a ``Graph`` traced from a Python function, plus which of its
placeholders are the function's arguments and which tensors are its results. Tensors
of enclosing graphs used inside are captured (see ``Graph.capture``); the op that runs
the sub-graph passes the captured outer tensors as extra inputs, after the arguments.
The runtime compiles a ``SubGraph`` attr to a plan of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .graph import Graph, Operation, Tensor, get_default_graph


@dataclass(eq=False)
class SubGraph:
    graph: Graph
    inputs: list[Tensor]  # argument placeholders, then one per capture
    outputs: list[Tensor | Operation]  # results, then control outputs (ops run for effect)
    name: str = "body"

    @property
    def captured(self) -> list[Tensor]:
        """The outer tensors to pass after the arguments, in order."""
        return [outer for outer, _ in self.graph.captures]

    @property
    def all_inputs(self) -> list[Tensor]:
        return self.inputs + [inner for _, inner in self.graph.captures]


def trace(
    fn: Callable[..., Any],
    arg_specs: Sequence[tuple[Any, Any]],
    name: str,
    outer: Graph | None = None,
) -> tuple[SubGraph, Any]:
    """Traces ``fn`` on placeholders of ``arg_specs`` ``[(dtype, shape)]``.

    Returns the sub-graph and ``fn``'s raw return value (for structure handling by the
    caller, which converts it to tensors inside the sub-graph before it is sealed).
    """
    outer = outer or get_default_graph()
    graph = Graph()
    graph.nest_in(outer)
    with graph.as_default():
        args = [
            graph.create_op("Placeholder", [], {"dtype": dt, "shape": sh}, name=f"arg{i}").outputs[
                0
            ]
            for i, (dt, sh) in enumerate(arg_specs)
        ]
        result = fn(*args)
    return SubGraph(graph, args, [], name), result


def seal(sub: SubGraph, outputs: Sequence[Tensor | Operation]) -> SubGraph:
    sub.outputs = list(outputs)
    return sub
