"""Which edges the graph view draws, along which path, and where their labels go.

The approach, as TensorBoard's graph draws edges between scopes:

1. **Bundles.** Each model edge is drawn between its endpoints' visible boxes (an op,
   or its outermost collapsed group), then both ends are lifted to the two children of
   their lowest common group: an edge from ``layer1/w/read`` to ``gradients/...`` runs
   from the ``layer1`` box to the ``gradients`` frame, and all the edges between those two
   are one bundle, drawn once, thicker with its count, Send/Recv-coloured when any of
   them crosses a stage. So every drawn edge joins two siblings, and no edge runs
   through an open group to reach an op deep inside it.
2. **Routes.** A bundle going down leaves its source's bottom and enters its target's
   top. Each row of siblings between them (the rows of the layout) is a band it must
   cross: it crosses at the free x nearest to the straight line to the target, beside
   the boxes of that row rather than through them. The path is a chain of cubic curves
   with vertical tangents through these crossing points. A bundle going up (a cycle the
   layout broke) or sideways leaves the source's top, runs across the gap above the
   source's row, up to the right of everything in between, across the gap above the
   target's row and down into the target's top: it never crosses a box.
3. **Labels.** Largest bundle first, a bundle's label (a shape, or "N tensors") goes
   at the first of several points along its path, nearest the middle first, to the
   right or else to the left of the line, where it overlaps no box, no open group's
   title, no other route and no label placed before; otherwise it is left out (the
   edge's tooltip still has it).

State: none; every function is pure over the model, the open groups and the boxes of
``layout.geometry``. ``graph_view.js`` repeats all three steps with the same numbers,
and a test runs both on the same graph.

Example: ``x -> hidden/MatMul`` and ``layer1/w/read -> hidden/MatMul`` with ``hidden``
open and ``layer1`` collapsed are the bundles ``x -> hidden`` (label ``?x784``) and
``layer1 -> hidden``, each of count 1.
"""

from __future__ import annotations

import math

from .graph_model import CONTROL, ViewModel
from .layout import HEAD

# (source box, target box, kind, send_recv, label, count, every distinct shape)
Bundle = tuple[int, int, int, bool, str, int, str]
Point = tuple[float, float]

CLEAR = 6.0  # how far a route keeps from a box it passes
LANE = 12.0  # how far above a row an upward route runs across
CORNER = 8.0  # the radius of an upward route's corners
LABEL_CHAR = 5.2  # average advance of the 9 px edge labels
LABEL_H = 11.0
CURVE_SAMPLES = 10  # points a label keeps off, along each curve of another route
CELL = 64.0  # the side of a cell of the grid that finds what a label would overlap


def visible_edges(model: ViewModel, expanded: set[int]) -> list[Bundle]:
    """The bundles drawn with ``expanded`` groups open: edges that land inside one box
    are not drawn; the others are merged per pair of sibling boxes (see above)."""
    nodes = model.nodes
    rep = model.representative(expanded)
    depth = [0] * len(nodes)
    for i in range(1, len(nodes)):
        depth[i] = depth[nodes[i].parent] + 1
    merged: dict[tuple[int, int], list] = {}
    for e in model.edges:
        a, b = rep[e.src], rep[e.dst]
        if a == b:
            continue
        while depth[a] > depth[b]:
            a = nodes[a].parent
        while depth[b] > depth[a]:
            b = nodes[b].parent
        while nodes[a].parent != nodes[b].parent:
            a, b = nodes[a].parent, nodes[b].parent
        item = merged.get((a, b))
        if item is None:
            merged[(a, b)] = [e.kind, e.send_recv, {e.label}, 1]
        else:
            item[0] = min(item[0], e.kind)  # data wins over control
            item[1] = item[1] or e.send_recv
            item[2].add(e.label)
            item[3] += 1
    out = []
    for (a, b), (kind, send_recv, labels, count) in merged.items():
        labels.discard("")
        if count > 1 and (len(labels) != 1 or kind == CONTROL):
            label = f"{count} tensors" if labels else ""
        else:
            label = next(iter(labels), "")
        out.append((a, b, kind, send_recv, label, count, ", ".join(sorted(labels))))
    return out


def stroke_width(send_recv: bool, count: int) -> float:
    """Heavier for Send/Recv, and for bundles of more edges."""
    return (1.8 if send_recv else 1.1) + min(2.0, 0.6 * math.log2(count))


def spread_ends(edges: list[Bundle], boxes: dict[int, tuple]) -> list[tuple[float, float]]:
    """Where each edge leaves its source's bottom and enters its destination's top:
    the edges at one box are spread over the middle of its side, ordered by where
    their other end is, so they neither meet in one point nor cross needlessly."""
    ends = [[0.0, 0.0] for _ in edges]
    pairs = [(e[0], e[1]) for e in edges]
    for side, other in ((0, 1), (1, 0)):
        at: dict[int, list[int]] = {}
        for k, pair in enumerate(pairs):
            at.setdefault(pair[side], []).append(k)
        for box, ks in at.items():
            x, _, w, _ = boxes[box]
            ks.sort(key=lambda k: boxes[pairs[k][other]][0] + boxes[pairs[k][other]][2] / 2)
            for j, k in enumerate(ks):
                ends[k][side] = x + w * (0.5 if len(ks) == 1 else 0.15 + 0.7 * j / (len(ks) - 1))
    return [(a, b) for a, b in ends]


def route(
    src: tuple, dst: tuple, x1: float, x2: float, others: list[tuple]
) -> tuple[list[Point], bool]:
    """The path from box ``src`` (leaving at ``x1``) to box ``dst`` (entering at ``x2``)
    around the sibling boxes ``others``: its points, and whether it goes up or sideways
    (then the points are the corners of a path of horizontal and vertical runs)."""
    sx, sy, sw, sh = src
    dx, dy, dw, _ = dst
    y1, y2 = sy + sh, dy
    if y2 <= y1 + 4:
        # Up from the source's top into the gap above its row, right of everything in
        # between, and down into the target's top from the gap above the target's row.
        x1, x2 = sx + sw - 10, dx + dw - 10
        lane1, lane2 = sy - LANE, dy - LANE
        if lane2 >= lane1 - 2 * LANE:  # side by side: one lane above both
            lane = min(lane1, lane2)
            return [(x1, sy), (x1, lane), (x2, lane), (x2, dy)], True
        reach = max(sx + sw, dx + dw)
        for ox, oy, ow, oh in others:
            if oy < sy and oy + oh > lane2:
                reach = max(reach, ox + ow)
        reach += LANE
        corners = [(x1, lane1), (reach, lane1), (reach, lane2), (x2, lane2)]
        return [(x1, sy), *corners, (x2, dy)], True
    rows: dict[float, list[tuple]] = {}
    for box in others:
        if box[1] < y2 and box[1] + box[3] > y1:
            rows.setdefault(box[1], []).append(box)
    points = [(x1, y1)]
    for top in sorted(rows):
        row = rows[top]
        band_top = max(top, y1 + 10)
        band_bottom = max(oy + oh for _, oy, _, oh in row)
        if band_bottom <= band_top:
            continue
        cx, cy = points[-1]
        mid = (band_top + band_bottom) / 2
        x = _free_x(cx + (x2 - cx) * (mid - cy) / (y2 - cy), row)
        points += [(x, band_top), (x, band_bottom)]
    points.append((x2, y2))
    return points, False


def _free_x(want: float, row: list[tuple]) -> float:
    """The x nearest ``want`` that keeps ``CLEAR`` from every box of ``row``."""

    def blocked(x: float) -> bool:
        return any(ox - CLEAR < x < ox + ow + CLEAR for ox, _, ow, _ in row)

    if not blocked(want):
        return want
    best = None
    for ox, _, ow, _ in row:
        for x in (ox - CLEAR, ox + ow + CLEAR):
            if not blocked(x) and (best is None or abs(x - want) < abs(best - want)):
                best = x
    return want if best is None else best


def path_data(points: list[Point], back: bool) -> str:
    """The SVG path through ``points`` (see ``route``)."""
    out = [f"M{points[0][0]:.1f},{points[0][1]:.1f}"]
    if back:  # rounded corners
        for (px, py), (cx, cy), (qx, qy) in zip(points, points[1:], points[2:]):
            r = min(CORNER, abs(cx - px + cy - py) / 2, abs(qx - cx + qy - cy) / 2)
            ax, ay = cx - r * _sign(cx - px), cy - r * _sign(cy - py)
            bx, by = cx + r * _sign(qx - cx), cy + r * _sign(qy - cy)
            out.append(f"L{ax:.1f},{ay:.1f} Q{cx:.1f},{cy:.1f} {bx:.1f},{by:.1f}")
        out.append(f"L{points[-1][0]:.1f},{points[-1][1]:.1f}")
        return " ".join(out)
    for (px, py), (qx, qy) in zip(points, points[1:]):
        if px == qx:
            out.append(f"L{qx:.1f},{qy:.1f}")
        else:
            m = (py + qy) / 2
            out.append(f"C{px:.1f},{m:.1f} {qx:.1f},{m:.1f} {qx:.1f},{qy:.1f}")
    return " ".join(out)


def _sign(v: float) -> float:
    return (v > 0) - (v < 0)


def _anchors(points: list[Point], back: bool) -> list[Point]:
    """Points on the path where a label may go, nearest the middle first (on an upward
    path: the middle of its runs, longest first)."""
    if back:
        runs = [  # a label on a horizontal run sits above the line
            (abs(qx - px) + abs(qy - py), ((px + qx) / 2, (py + qy) / 2 - 6 * (py == qy)))
            for (px, py), (qx, qy) in zip(points, points[1:])
        ]
        return [at for _, at in sorted(runs, key=lambda r: -r[0])]
    found = []
    for t in (0.5, 0.3, 0.7):
        f = t * t * (3 - 2 * t)  # how far x has moved along a vertical-tangent cubic
        g = 1.5 * t * (1 - t) + t * t * t  # and y
        for (px, py), (qx, qy) in zip(points, points[1:]):
            found.append((px + (qx - px) * f, py + (qy - py) * g))
    middle = (points[0][1] + points[-1][1]) / 2
    return sorted(found, key=lambda p: abs(p[1] - middle))


def label_box(x: float, y: float, text: str) -> tuple[float, float, float, float]:
    """The rectangle a label takes, written from ``x`` with its baseline at ``y``."""
    return (x - 1, y - 8, len(text) * LABEL_CHAR + 2, LABEL_H)


class _Grid:
    """Rectangles, each with an owner, bucketed in square cells so that a label is
    checked only against what lies near it (a view of every group of 10,000 ops has
    thousands of boxes and runs)."""

    def __init__(self) -> None:
        self.cells: dict[tuple[int, int], list[tuple[int, tuple]]] = {}

    def _keys(self, r: tuple) -> list[tuple[int, int]]:
        x0, y0 = int(r[0] // CELL), int(r[1] // CELL)
        x1, y1 = int((r[0] + r[2]) // CELL), int((r[1] + r[3]) // CELL)
        return [(i, j) for i in range(x0, x1 + 1) for j in range(y0, y1 + 1)]

    def add(self, owner: int, r: tuple) -> None:
        for key in self._keys(r):
            self.cells.setdefault(key, []).append((owner, r))

    def hits(self, r: tuple, skip: int) -> bool:
        """Whether ``r`` overlaps a rectangle not owned by ``skip``."""
        x, y, w, h = r
        for key in self._keys(r):
            for owner, (bx, by, bw, bh) in self.cells.get(key, ()):
                if owner != skip and x < bx + bw and bx < x + w and y < by + bh and by < y + h:
                    return True
        return False


def layout_edges(
    model: ViewModel, expanded: set[int], boxes: dict[int, tuple]
) -> list[tuple[Bundle, list[Point], bool, Point | None]]:
    """Every bundle with its route and where its label is written (text start and
    baseline; ``None``: left out, as it would overlap a box or another label)."""
    edges = visible_edges(model, expanded)
    ends = spread_ends(edges, boxes)
    taken = _Grid()  # boxes and labels (owner -1), and the routes' straight runs
    for i, box in boxes.items():
        if i == 0:
            continue
        opened = model.nodes[i].op is None and i in expanded
        taken.add(-1, (box[0], box[1], box[2], HEAD - 4) if opened else box)
    routes = []
    for edge, (x1, x2) in zip(edges, ends):
        a, b = edge[0], edge[1]
        siblings = sorted(model.nodes[model.nodes[a].parent].children)
        routes.append(
            route(boxes[a], boxes[b], x1, x2, [boxes[c] for c in siblings if c not in (a, b)])
        )
    # A label keeps off the straight runs of the other routes too.
    for k, (points, back) in enumerate(routes):
        for (px, py), (qx, qy) in zip(points, points[1:]):
            if back or px == qx:
                taken.add(k, (min(px, qx) - 1, min(py, qy), abs(qx - px) + 2, abs(qy - py)))
                continue
            for step in range(1, CURVE_SAMPLES):  # a curve, as points along it
                t = step / CURVE_SAMPLES
                f, g = t * t * (3 - 2 * t), 1.5 * t * (1 - t) + t * t * t
                taken.add(k, (px + (qx - px) * f - 1, py + (qy - py) * g - 1, 2, 2))
    places: list[Point | None] = [None] * len(edges)
    # The labels of the largest bundles are placed first.
    for k in sorted(range(len(edges)), key=lambda k: -edges[k][5]):
        text = edges[k][4]
        if not text:
            continue
        width = len(text) * LABEL_CHAR
        for ax, ay in _anchors(*routes[k]):
            free = [
                lx
                for lx in (ax + 4, ax - 4 - width)
                if not taken.hits(label_box(lx, ay + 3, text), k)
            ]
            if free:
                places[k] = (free[0], ay + 3)
                taken.add(-1, label_box(free[0], ay + 3, text))
                break
    return [(e, points, back, at) for e, (points, back), at in zip(edges, routes, places)]


def extent(drawn: list, root: tuple) -> tuple[float, float]:
    """Width and height the drawing needs: the root's box, widened for the routes that
    pass to the right of everything and for their labels."""
    right = root[2]
    for edge, points, _, at in drawn:
        right = max(right, *(x + 8 for x, _ in points))
        if at is not None:
            right = max(right, at[0] + len(edge[4]) * LABEL_CHAR + 2)
    return right, root[3]
