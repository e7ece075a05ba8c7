"""The module-level scope functions of TF1 (``tf.name_scope``, ``tf.device``, ...), each
acting on the default graph (or the graph of the given ``values``)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

from .graph import Graph, Tensor, get_default_graph


def _graph_of(values: Sequence[Any] | None) -> Graph:
    default = get_default_graph()
    for v in values or ():
        graph = v.graph if isinstance(v, Tensor) else getattr(v, "graph", None)
        if isinstance(graph, Graph):
            # Inside a cond/while body, outer tensors are captured by the default graph.
            return default if graph is default or default._is_ancestor(graph) else graph
    return default


@contextlib.contextmanager
def name_scope(
    name: str | None, default_name: str | None = None, values: Sequence[Any] | None = None
) -> Iterator[str]:
    """Prefixes the names of ops created inside; yields the scope string ('a/b/')."""
    graph = _graph_of(values)
    with graph.as_default(), graph.name_scope(name if name is not None else default_name) as scope:
        yield scope


def op_scope(values: Any, name: str | None, default_name: str | None = None) -> Any:
    """TF1's deprecated ``tf.op_scope``: ``name_scope(name, default_name, values)``."""
    return name_scope(name, default_name, values)


@contextlib.contextmanager
def init_scope() -> Iterator[None]:
    """A block for building what must run once, outside the current computation
    (``tf.init_scope``, as in TF1's graph mode): ops made inside wait on no enclosing
    ``control_dependencies``, and inside a ``cond``/``while_loop`` body they go to the
    outermost graph; the name scope stays the current one."""
    graph = get_default_graph()
    scope = graph.get_name_scope()
    outer: Any = graph
    while getattr(outer, "outer_graph", None) is not None:
        outer = outer.outer_graph
    with (
        outer.as_default(),
        outer.name_scope(scope + "/" if scope else None),
        outer.control_dependencies(None),
    ):
        yield


def control_dependencies(control_inputs: Sequence[Any] | None) -> Any:
    """Ops created inside run only after ``control_inputs``."""
    return get_default_graph().control_dependencies(control_inputs)


def device(device_name_or_function: Any) -> Any:
    """Requests a device for the ops created inside (a spec string or function)."""
    return get_default_graph().device(device_name_or_function)


def colocate_with(op: Any, ignore_existing: bool = False) -> Any:
    """Ops created inside are placed with ``op``."""
    return get_default_graph().colocate_with(op, ignore_existing)


def get_collection(key: str, scope: str | None = None) -> list[Any]:
    return get_default_graph().get_collection(key, scope)


def get_collection_ref(key: str) -> list[Any]:
    return get_default_graph().get_collection_ref(key)


def add_to_collection(name: str, value: Any) -> None:
    get_default_graph().add_to_collection(name, value)


def add_to_collections(names: Any, value: Any) -> None:
    get_default_graph().add_to_collections(names, value)
