"""Folding a group with too many children into boxes a reader can take in.

Two rules, as TensorBoard's graph view applies them:

* **series**: children whose names differ only by a trailing number (``block``,
  ``block_1``, ``block_2``; or ``layer0``, ``layer1``) are one repeated structure, shown
  as one box ``block[0-187]`` (at least ``MIN_SERIES`` members);
* **chunks**: what is still too wide is cut, in creation order (which follows the data
  flow), into boxes of ``CHUNK`` children.

The node list is rebuilt depth first so that a parent still comes before its
children, which the summaries and the layout rely on.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .graph_model import Node

MIN_SERIES = 5
CHUNK = 40
_NUMBERED = re.compile(r"^(?P<base>.*?)_?(?P<n>\d+)$")


def split_wide_groups(nodes: list[Node], max_children: int) -> list[Node]:
    """``nodes`` with every group of more than ``max_children`` children regrouped."""
    if all(len(n.children) <= max_children for n in nodes if n.op is None):
        return nodes
    node_type = type(nodes[0])
    out: list[Node] = []
    # (old index or a new group's members, new parent, label/name for a new group)
    stack: list[tuple[int | list[int], int, str, str]] = [(0, -1, "", "")]
    while stack:
        item, parent, label, name = stack.pop()
        mine = len(out)
        if isinstance(item, int):
            old = nodes[item]
            out.append(node_type(old.name, old.label, parent, old.op, [], old.num_ops))
            out[mine].device, out[mine].stage = old.device, old.stage
            kids: list[int] = old.children
            name = old.name
        else:
            out.append(node_type(name, label, parent))
            kids = item
        if parent >= 0:
            out[parent].children.append(mine)
        entries: list[tuple[int | list[int], str, str]] = [(k, "", "") for k in kids]
        if len(kids) > max_children and isinstance(item, int):
            entries = _series(nodes, kids, name)
        if len(entries) > max_children:
            entries = _chunks(entries, out[mine].label, name)
        stack.extend((e, mine, lab, nm) for e, lab, nm in reversed(entries))
    return out


def _series(nodes: list[Node], kids: list[int], name: str) -> list[tuple]:
    """Children with a numbered series folded into one entry each (at the place of the
    series' first member)."""
    members: dict[tuple[str, bool], list[tuple[int, int]]] = {}
    for k in kids:
        m = _NUMBERED.match(nodes[k].label)
        base, n = (m["base"], int(m["n"])) if m else (nodes[k].label, 0)
        members.setdefault((base, nodes[k].op is None), []).append((n, k))
    first_of: dict[int, tuple] = {}
    folded: set[int] = set()
    for (base, _), group in members.items():
        if len(group) < MIN_SERIES:
            continue
        numbers = [n for n, _ in group]
        ks = sorted(k for _, k in group)
        label = f"{base}[{min(numbers)}-{max(numbers)}]"
        first_of[ks[0]] = (ks, label, f"{name}/{label}" if name else label)
        folded.update(ks)
    out: list[tuple] = []
    for k in kids:
        if k in first_of:
            out.append(first_of[k])
        elif k not in folded:
            out.append((k, "", ""))
    return out


def _chunks(entries: list[tuple], label: str, name: str) -> list[tuple]:
    out = []
    for start in range(0, len(entries), CHUNK):
        chunk = entries[start : start + CHUNK]
        span = f"[{start + 1}-{start + len(chunk)}]"
        members: list[int] = []
        # A chunk holds old nodes only: series inside it are kept as their members.
        for e, _, _ in chunk:
            members.extend(e if isinstance(e, list) else [e])
        out.append((members, f"{label or 'ops'} {span}", f"{name}/{span}" if name else span))
    return out
