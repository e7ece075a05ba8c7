"""Iterative, deterministic topological ordering.

Graphs here can hold tens of thousands of nodes, so nothing recurses. The approach is
Kahn's algorithm with pending-input counts; ties are broken by each node's creation
index, so the same graph always yields the same order (and therefore the same slot
numbers, generated code and Dask keys).

Example: nodes a(0) -> c(2), b(1) -> c(2) give [a, b, c].
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Hashable, Iterable
from typing import TypeVar

Node = TypeVar("Node", bound=Hashable)


def reachable(roots: Iterable[Node], parents: Callable[[Node], Iterable[Node]]) -> set[Node]:
    """Returns every node reachable from ``roots`` by following ``parents`` (callers cut
    the walk, e.g. at fed tensors, by what ``parents`` returns)."""
    seen: set[Node] = set()
    stack = list(roots)
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        stack.extend(parents(node))
    return seen


def toposort(
    nodes: Iterable[Node],
    parents: Callable[[Node], Iterable[Node]],
    order_key: Callable[[Node], int],
) -> list[Node]:
    """Orders ``nodes`` so each comes after those of its ``parents`` inside the set.

    Parents outside ``nodes`` are ignored. Raises ``ValueError`` on a cycle.
    """
    members = set(nodes)
    pending: dict[Node, int] = {}
    children: dict[Node, list[Node]] = {n: [] for n in members}
    for node in members:
        count = 0
        for parent in set(parents(node)):
            if parent in members:
                count += 1
                children[parent].append(node)
        pending[node] = count
    heap = [
        (order_key(n), i, n)
        for i, n in enumerate(sorted(members, key=order_key))
        if pending[n] == 0
    ]
    heapq.heapify(heap)
    out: list[Node] = []
    tie = len(heap)
    while heap:
        _, _, node = heapq.heappop(heap)
        out.append(node)
        for child in children[node]:
            pending[child] -= 1
            if pending[child] == 0:
                tie += 1
                heapq.heappush(heap, (order_key(child), tie, child))
    if len(out) != len(members):
        raise ValueError(
            "graph has a cycle among: "
            + ", ".join(sorted(str(n) for n in members if pending[n] > 0))[:500]
        )
    return out
