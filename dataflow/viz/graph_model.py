"""What the graph view draws: ops grouped by name scope (or by stage), each op with the
device the placer chose and its stage, and the edges between them.

The approach, as TensorBoard's graph dashboard takes it: an op named ``a/b/MatMul``
sits in group ``b`` inside group ``a``; a group collapses to one box whose colour is the
device most of its ops are placed on. An edge between two ops is drawn between their
*representatives*, each op's outermost collapsed ancestor (or the op itself), so a
collapsed view never shows an edge into an invisible box.

State kept (``ViewModel``): a flat node list (groups and ops; a node's parent index
comes before it), the edges as (source op, destination op, kind, label), the devices
and a default set of expanded groups. It is plain data: ``layout`` orders each group's
children, ``svg`` draws it in Python and ``graph_view.js`` in the browser.

Placement: with a session and fetches, the plan that ``run`` would execute gives each
op's device and stage. Without them the whole graph is placed as a session would place
it (requested devices completed with the defaults, colocation groups kept together),
so a gradient op takes its forward op's colour before any session exists.

Worked example: ``x`` (placeholder) and ``dense/MatMul``, ``dense/BiasAdd`` give the
nodes ``[root, x, dense, dense/MatMul, dense/BiasAdd]``; with the budget of visible
boxes not exceeded, ``dense`` starts expanded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..framework import device_spec
from ..framework.graph import Graph, Operation, Tensor
from ..runtime.compile.partition import partition
from ..runtime.compile.placement import place
from . import regroup

# A group with more direct children than this gets its numbered series (block0,
# block1, ...) folded into one box each, then chunks (``regroup.py``).
MAX_CHILDREN = 60
# Groups are expanded, smallest first, while the drawing shows at most this many boxes.
VISIBLE_BUDGET = 18

DATA, CONTROL = 0, 1
LOCAL_DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"


@dataclass(slots=True)
class Node:
    """One box: an op (``op`` set) or a group of nodes."""

    name: str  # full scope path; unique among groups, and among ops
    label: str  # what the box says
    parent: int  # index of the enclosing group; -1 for the root
    op: Operation | None = None
    children: list[int] = field(default_factory=list)
    num_ops: int = 0
    device: int = -1  # index into ViewModel.devices (a group: its most common device)
    stage: int = -1
    devices: dict[int, int] = field(default_factory=dict)  # device -> op count (groups)
    stages: set[int] = field(default_factory=set)


@dataclass(slots=True)
class Edge:
    src: int  # node index of the producing op
    dst: int  # node index of the consuming op
    kind: int  # DATA or CONTROL
    send_recv: bool  # crosses a stage boundary (a Send/Recv pair at run time)
    label: str  # the tensor's static shape (data edges)


@dataclass(slots=True)
class ViewModel:
    nodes: list[Node]
    edges: list[Edge]
    devices: list[str]
    num_stages: int
    placed_by: str  # "session" or "nominal"
    expanded: set[int]
    group_by: str

    def representative(self, expanded: set[int]) -> list[int]:
        """For each node, the box that shows it: its outermost collapsed ancestor or
        itself."""
        rep = list(range(len(self.nodes)))
        for i, node in enumerate(self.nodes):
            if node.parent >= 0:
                p = rep[node.parent]
                collapsed = p != node.parent or node.parent not in expanded
                rep[i] = p if collapsed else i
        return rep


def build(
    graph: Graph,
    fetches: Any = None,
    session: Any = None,
    feed_dict: dict | None = None,
    group_by: str = "scope",
    budget: int = VISIBLE_BUDGET,
) -> ViewModel:
    """The view model of ``graph``, or of the step computing ``fetches`` in ``session``.

    Raises:
        ValueError: ``group_by`` is not ``"scope"`` or ``"stage"``, or ``fetches`` is given
            without ``session``.
    """
    if group_by not in ("scope", "stage"):
        raise ValueError(f"group_by must be 'scope' or 'stage', not {group_by!r}")
    if fetches is not None and session is None:
        raise ValueError("fetches= needs session=: the step's placement comes from it")
    if session is not None and fetches is not None:
        placement = dict(session.placement(fetches, feed_dict))
        ops = [graph.get_operation_by_name(name) for name in placement]
        placed_by = "session"
    else:
        ops = graph.get_operations()
        placement = nominal_placement(ops)
        placed_by = "nominal"
    stage_of: dict[Operation, int] = {}
    for index, members in enumerate(partition(ops, placement)):
        for op in members:
            stage_of[op] = index
    devices = sorted(set(placement.values()))
    device_index = {d: i for i, d in enumerate(devices)}

    nodes = [Node("", "", -1)]
    paths = (
        [op.name.split("/") for op in ops]
        if group_by == "scope"
        else [[f"stage {stage_of[op]}", op.name] for op in ops]
    )
    # An op named like a scope (a variable ``w`` beside ``w/read``) sits inside it.
    scopes = {"/".join(p[:d]) for p in paths for d in range(1, len(p))}
    group_of: dict[str, int] = {"": 0}
    op_node: dict[Operation, int] = {}
    for op, path in zip(ops, paths):
        parent = 0
        inner = len(path) + 1 if "/".join(path) in scopes else len(path)
        for depth in range(1, inner):
            key = "/".join(path[:depth])
            g = group_of.get(key)
            if g is None:
                g = group_of[key] = len(nodes)
                nodes.append(Node(key, path[depth - 1], parent))
                nodes[parent].children.append(g)
            parent = g
        op_node[op] = len(nodes)
        label = path[-1] if group_by == "scope" else op.name
        node = Node(op.name, label, parent, op, num_ops=1)
        node.device = device_index[placement[op.name]]
        node.stage = stage_of[op]
        nodes.append(node)
        nodes[parent].children.append(op_node[op])
    nodes = regroup.split_wide_groups(nodes, MAX_CHILDREN)
    _summarize_groups(nodes)

    edges: list[Edge] = []
    index_of = {node.op: i for i, node in enumerate(nodes) if node.op is not None}
    for op in ops:
        dst = index_of[op]
        for t in op.inputs:
            src = index_of.get(t.op)
            if src is not None:
                edges.append(Edge(src, dst, DATA, stage_of[t.op] != stage_of[op], shape_label(t)))
        for c in op.control_inputs:
            src = index_of.get(c)
            if src is not None:
                edges.append(Edge(src, dst, CONTROL, stage_of[c] != stage_of[op], ""))
    model = ViewModel(
        nodes,
        edges,
        devices,
        max(stage_of.values(), default=-1) + 1,
        placed_by,
        set(),
        group_by,
    )
    model.expanded = default_expanded(nodes, budget)
    return model


def nominal_placement(ops: list[Operation]) -> dict[str, str]:
    """Places ``ops`` as a session would, with one device per distinct request (each
    completed from the local CPU) standing in for a cluster's devices."""
    devices = sorted({device_spec.canonical(_complete(op.device)) for op in ops} | {LOCAL_DEVICE})
    jobs = {device_spec.DeviceSpec.from_string(d).job for d in devices}
    # A session on a cluster puts unplaced ops on /job:worker/task:0 when there is one.
    default = "/job:worker/replica:0/task:0/device:CPU:0" if "worker" in jobs else LOCAL_DEVICE
    if default not in devices:
        devices.append(default)
    return place(ops, devices, default, soft_placement=True)


def _complete(request: str) -> str:
    spec = device_spec.DeviceSpec.from_string(request)
    base = "/job:localhost" if spec.job is None else ""
    return str(spec.fill_from(base + "/replica:0/task:0/device:CPU:0"))


def shape_label(t: Tensor) -> str:
    """A tensor's static shape as TensorBoard writes it on an edge: ``?`` then a
    multiplication sign then ``784``; ``scalar``; ``?`` for an unknown rank."""
    dims = t.shape.as_tuple()
    if dims is None:
        return "?"
    if not dims:
        return "scalar"
    return "\u00d7".join("?" if d is None else str(d) for d in dims)


def _summarize_groups(nodes: list[Node]) -> None:
    """Op counts, device counts and stages of every group (children come after their
    parent, so one backward pass suffices)."""
    for i in range(len(nodes) - 1, 0, -1):
        node, parent = nodes[i], nodes[nodes[i].parent]
        if node.op is not None:
            node.devices = {node.device: 1}
            node.stages = {node.stage}
        else:
            node.device = max(node.devices, key=lambda d: (node.devices[d], -d))
        parent.num_ops += node.num_ops
        for d, count in node.devices.items():
            parent.devices[d] = parent.devices.get(d, 0) + count
        parent.stages |= node.stages
    root = nodes[0]
    if root.devices:
        root.device = max(root.devices, key=lambda d: (root.devices[d], -d))


def default_expanded(nodes: list[Node], budget: int) -> set[int]:
    """Which groups start open: the root, then outer groups before inner ones and
    smaller before larger, while the number of visible boxes stays within ``budget``
    (so a group is collapsed above a size that depends on what else is shown)."""
    expanded = {0}
    visible = len(nodes[0].children)
    depth = {0: 0}
    frontier = [c for c in nodes[0].children if nodes[c].op is None]
    for c in frontier:
        depth[c] = 1
    while frontier:
        frontier.sort(key=lambda g: (depth[g], len(nodes[g].children), g))
        g = frontier.pop(0)
        grown = visible - 1 + len(nodes[g].children)
        if grown > budget:
            continue
        expanded.add(g)
        visible = grown
        for c in nodes[g].children:
            if nodes[c].op is None:
                depth[c] = depth[g] + 1
                frontier.append(c)
    return expanded
