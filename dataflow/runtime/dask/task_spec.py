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

``StepGraph`` wraps one step's graph as a Dask collection (``Session.to_dask``), so that
``dask.visualize`` draws it and ``dict(...)``/``len(...)`` read its tasks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import dask
from dask._task_spec import GraphNode, Task, TaskRef
from dask.highlevelgraph import HighLevelGraph, MaterializedLayer

__all__ = ["task", "ref", "layered_graph", "GraphNode", "HighLevelGraph", "StepGraph"]


def task(key: Any, func: Callable, *args: Any) -> Task:
    """A task computing ``func(*args)``; ``ref(k)`` arguments are dependencies."""
    return Task(key, func, *args)


def ref(key: Any) -> TaskRef:
    """A reference to another task's result (a dependency)."""
    return TaskRef(key)


def layered_graph(
    layers: Mapping[str, tuple[Mapping[Any, GraphNode], Mapping[str, Any]]],
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


class StepGraph(Mapping):
    """One step's tasks as a Dask collection: ``dask.visualize(step)`` draws them, and as
    a mapping from key to task it is the graph itself (``len``, ``dict``, ``graph``).

    Its keys (``__dask_keys__``) are the stages whose results the step gathers, and
    ``finish`` turns their results, in that order, into the values of the step's
    fetches (flattened, in order). Only the workers of the session's cluster can run its
    tasks (they hold the plan the tasks name), so ``dask.compute`` of it needs that
    cluster's ``distributed.Client`` as the default client.
    """

    def __init__(self, graph: HighLevelGraph, keys: list, finish: Callable[[list], Any]) -> None:
        self.graph = graph
        self._keys = keys
        self._finish = finish

    def __getitem__(self, key: Any) -> GraphNode:
        return self.graph[key]

    def __iter__(self) -> Iterator:
        return iter(self.graph)

    def __len__(self) -> int:
        return len(self.graph)

    def __dask_graph__(self) -> HighLevelGraph:
        return self.graph

    def __dask_keys__(self) -> list:
        return list(self._keys)

    def __dask_layers__(self) -> tuple[str, ...]:
        return tuple(self.graph.layers)

    def __dask_tokenize__(self) -> tuple:
        return tuple(map(str, self._keys))

    def __dask_postcompute__(self) -> tuple[Callable, tuple]:
        return self._finish, ()

    @staticmethod
    def __dask_optimize__(dsk: Any, keys: Any, **kwargs: Any) -> Any:
        return dsk  # never optimized: fusion would drop the layers' annotations

    __dask_scheduler__ = staticmethod(dask.get)

    def __repr__(self) -> str:
        return f"<StepGraph: {len(self.graph)} tasks, gathers {len(self._keys)}>"
