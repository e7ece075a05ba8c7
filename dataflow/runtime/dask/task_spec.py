"""The one place that touches Dask's task classes and graph containers.

``dask._task_spec`` (``Task``, ``TaskRef``, ``DataNode``) is private API: dask marks the
legacy tuple format deprecated and these classes as its replacement, but may still rename
them. Everything in dataflow that builds Dask graphs goes through this module, so a dask
upgrade that moves them is a change here only (``setup.cfg`` pins ``dask<2027``).

A step's graph is a ``HighLevelGraph`` with one ``MaterializedLayer`` per stage (one
task each), annotated with the Dask ``resources`` that pin the task to its worker and
the session's span. Layer annotations reach the scheduler only when the graph is
submitted as such and never optimized (fusion would drop them), which ``Client.get`` on
a ``HighLevelGraph`` does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from dask._task_spec import GraphNode, Task, TaskRef
from dask.highlevelgraph import HighLevelGraph, MaterializedLayer

__all__ = ["task", "ref", "layered_graph", "GraphNode", "HighLevelGraph"]


def task(key: Any, func: Callable, *args: Any) -> Task:
    """A task computing ``func(*args)``; ``ref(k)`` arguments are dependencies."""
    return Task(key, func, *args)


def ref(key: Any) -> TaskRef:
    """A reference to another task's result (a dependency)."""
    return TaskRef(key)


def layered_graph(
    layers: Mapping[str, tuple[dict[Any, GraphNode], dict[str, Any]]],
    dependencies: Mapping[str, Iterable[str]],
) -> HighLevelGraph:
    """A ``HighLevelGraph`` from ``{layer name: (tasks by key, annotations)}``.

    ``dependencies`` maps a layer name to the names of the layers its tasks read.
    """
    return HighLevelGraph(
        {
            name: MaterializedLayer(tasks, annotations=annotations or None)
            for name, (tasks, annotations) in layers.items()
        },
        {name: set(dependencies.get(name, ())) for name in layers},
    )
