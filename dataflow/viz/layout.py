"""A layered layout in pure Python (no graphviz): each group's children in rows.

The approach (Sugiyama's, kept small): inside every group, the edges between its
children are the model's edges lifted to the two children of their lowest common
group, so each edge orders exactly one group. Per group:

1. break cycles (lifted edges can run both ways between two scopes, e.g. a layer and
   its gradients) by dropping the back edges of an iterative depth-first search in
   creation order;
2. rank each child by the longest path from the sources, then pull every child that
   has successors down to just above its nearest successor (a constant sits by its
   consumer, not on the top row);
3. order each rank by the barycentre of its neighbours in the rank above, then below,
   for a few sweeps (fewer crossings).

``geometry`` then turns (rank, order) into boxes for a given set of open groups: rows
stacked top to bottom, wrapped at ``WRAP`` boxes, centred; an open group is as large as
its content. ``graph_view.js`` applies the same rule in the browser, so the ordering is
computed once, here, and only sizes change when a group opens.

Example: in a group with children a -> b, a -> c, b -> d, c -> d the ranks are
a: 0, b: 1, c: 1, d: 2, giving rows [a], [b, c], [d].
"""

from __future__ import annotations

from .graph_model import ViewModel

NODE_H, GROUP_H = 36, 42
GAP_X, GAP_Y = 16, 28
PAD, HEAD = 12, 20
WRAP = 8
CHAR_W = 6.6  # average advance of the 11 px sans-serif labels


def lifted_edges(model: ViewModel) -> dict[int, set[tuple[int, int]]]:
    """Per group, the (child, child) pairs that some edge lifts to."""
    nodes = model.nodes
    depth = [0] * len(nodes)
    for i in range(1, len(nodes)):
        depth[i] = depth[nodes[i].parent] + 1
    out: dict[int, set[tuple[int, int]]] = {}
    for edge in model.edges:
        a, b = edge.src, edge.dst
        while depth[a] > depth[b]:
            a = nodes[a].parent
        while depth[b] > depth[a]:
            b = nodes[b].parent
        if a == b:
            continue  # one op's output feeding back into its own group's box
        while nodes[a].parent != nodes[b].parent:
            a, b = nodes[a].parent, nodes[b].parent
        out.setdefault(nodes[a].parent, set()).add((a, b))
    return out


def order_groups(model: ViewModel) -> dict[int, list[list[int]]]:
    """Per group, its children as ranks (top to bottom), each rank in drawing order."""
    lifted = lifted_edges(model)
    result = {}
    for g, node in enumerate(model.nodes):
        if node.op is None:
            result[g] = _rank_and_order(node.children, lifted.get(g, set()))
    return result


def _rank_and_order(children: list[int], pairs: set[tuple[int, int]]) -> list[list[int]]:
    succ: dict[int, list[int]] = {c: [] for c in children}
    for a, b in sorted(pairs):
        succ[a].append(b)
    # 1. Depth-first search in creation order; an edge to a node still on the path is
    # a back edge and is dropped.
    state = dict.fromkeys(children, 0)  # 0 new, 1 on the path, 2 done
    post: list[int] = []
    forward: dict[int, list[int]] = {c: [] for c in children}
    for start in children:
        if state[start]:
            continue
        state[start] = 1
        stack = [(start, iter(succ[start]))]
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[node] = 2
                post.append(node)
                stack.pop()
            elif state[nxt] == 0:
                forward[node].append(nxt)
                state[nxt] = 1
                stack.append((nxt, iter(succ[nxt])))
            elif state[nxt] == 2:
                forward[node].append(nxt)
    topo = post[::-1]
    # 2. Longest path ranks, then pull sources down towards their successors.
    rank = dict.fromkeys(children, 0)
    for node in topo:
        for nxt in forward[node]:
            rank[nxt] = max(rank[nxt], rank[node] + 1)
    for node in post:
        if forward[node]:
            rank[node] = max(rank[node], min(rank[n] for n in forward[node]) - 1)
    rows: dict[int, list[int]] = {}
    for c in children:
        rows.setdefault(rank[c], []).append(c)
    ranks = [rows[r] for r in sorted(rows)]
    # 3. Barycentre sweeps.
    pred: dict[int, list[int]] = {c: [] for c in children}
    for a, outs in forward.items():
        for b in outs:
            pred[b].append(a)
    for sweep in range(4):
        down = sweep % 2 == 0
        sequence = range(1, len(ranks)) if down else range(len(ranks) - 2, -1, -1)
        for r in sequence:
            ref = {c: i for i, c in enumerate(ranks[r - 1 if down else r + 1])}
            neighbours = pred if down else forward
            here = {c: i for i, c in enumerate(ranks[r])}

            def key(c: int, ref: dict = ref, nb: dict = neighbours, here: dict = here) -> float:
                ps = [ref[p] for p in nb[c] if p in ref]
                return sum(ps) / len(ps) if ps else float(here[c])

            ranks[r] = sorted(ranks[r], key=key)
    return ranks


def box_size(model: ViewModel, i: int) -> tuple[float, float]:
    """The size of node ``i`` drawn as one box (an op, or a collapsed group)."""
    node = model.nodes[i]
    sub = node.op.type if node.op is not None else f"{node.num_ops} ops"
    chars = max(len(node.label[:28]), len(sub[:28]))
    width = min(max(chars * CHAR_W + 20, 80), 210)
    return width, NODE_H if node.op is not None else GROUP_H


def geometry(
    model: ViewModel, ranks: dict[int, list[list[int]]], expanded: set[int]
) -> dict[int, tuple[float, float, float, float]]:
    """Boxes ``(x, y, width, height)`` of every visible node, in absolute coordinates
    with the root's content at the origin; the root's own box is index 0."""
    size: dict[int, tuple[float, float]] = {}
    rel: dict[int, tuple[float, float]] = {}
    # Children come after their parent: sizes bottom-up in reverse index order.
    for g in range(len(model.nodes) - 1, -1, -1):
        if g not in expanded or model.nodes[g].op is not None:
            continue
        y = HEAD if g else 0.0
        width = box_size(model, g)[0]
        rows = []
        for rank in ranks[g]:
            for start in range(0, len(rank), WRAP):
                row = rank[start : start + WRAP]
                sizes = [size.get(c) or box_size(model, c) for c in row]
                row_w = sum(w for w, _ in sizes) + GAP_X * (len(row) - 1)
                rows.append((row, sizes, row_w))
                width = max(width, row_w + 2 * PAD)
        for row, sizes, row_w in rows:
            x = (width - row_w) / 2
            for c, (w, _) in zip(row, sizes):
                rel[c] = (x, y)
                x += w + GAP_X
            y += max(h for _, h in sizes) + GAP_Y
        size[g] = (width, y - GAP_Y + PAD)
    boxes: dict[int, tuple[float, float, float, float]] = {0: (0.0, 0.0, *size[0])}
    for i in range(1, len(model.nodes)):
        p = model.nodes[i].parent
        if p in boxes and p in expanded:
            px, py = boxes[p][0], boxes[p][1]
            w, h = size.get(i) or box_size(model, i)
            boxes[i] = (px + rel[i][0], py + rel[i][1], w, h)
    return boxes
