"""The graph view as a static SVG (for docs, files, and where no script may run).

It draws what ``graph_view.js`` draws for the same open groups: boxes coloured by the
placed device, open groups as framed regions with their scope name, collapsed groups
with their op count and a bar of their devices' shares, edges labelled with shapes,
control edges dashed, Send/Recv edges (crossing a stage boundary) in a heavier colour,
and a legend. Edges between the same two visible boxes are drawn once, with a count.
"""

from __future__ import annotations

from html import escape

from . import layout
from .graph_model import CONTROL, ViewModel

PALETTE = [
    "#8ecae6",
    "#b7e4a8",
    "#f6bd8b",
    "#d7b5e8",
    "#f4a5a5",
    "#f9e27d",
    "#9fd8cb",
    "#c9c9c9",
    "#a3b8f0",
    "#e8c39e",
]
SEND_RECV = "#d9480f"
EDGE = "#6b7280"
LEGEND_ROW = 18
MARGIN = 16


def colour(i: int) -> str:
    return PALETTE[i % len(PALETTE)] if i >= 0 else "#eeeeee"


def visible_edges(model: ViewModel, expanded: set[int]) -> list[tuple[int, int, int, bool, str]]:
    """Edges between visible boxes: (src box, dst box, kind, send_recv, label); edges
    that land inside one box are not drawn."""
    rep = model.representative(expanded)
    merged: dict[tuple[int, int], list] = {}
    for e in model.edges:
        a, b = rep[e.src], rep[e.dst]
        if a == b:
            continue
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
        out.append((a, b, kind, send_recv, label))
    return out


def spread_ends(edges: list[tuple], boxes: dict[int, tuple]) -> list[tuple[float, float]]:
    """Where each edge leaves its source's bottom and enters its destination's top:
    the edges at one box are spread over the middle of its side, ordered by where
    their other end is, so they neither meet in one point nor cross needlessly."""
    ends = [[0.0, 0.0] for _ in edges]
    for side, other in ((0, 1), (1, 0)):
        at: dict[int, list[int]] = {}
        for k, e in enumerate(edges):
            at.setdefault(e[side], []).append(k)
        for box, ks in at.items():
            x, _, w, _ = boxes[box]
            ks.sort(key=lambda k: boxes[edges[k][other]][0] + boxes[edges[k][other]][2] / 2)
            for j, k in enumerate(ks):
                ends[k][side] = x + w * (0.5 if len(ks) == 1 else 0.15 + 0.7 * j / (len(ks) - 1))
    return [(a, b) for a, b in ends]


def edge_path(src: tuple, dst: tuple, x1: float, x2: float) -> tuple[str, float, float]:
    """An SVG path from ``src``'s box (leaving at ``x1``) to ``dst``'s box (entering at
    ``x2``), and where its label goes."""
    sx, sy, sw, sh = src
    dx, dy, dw, _ = dst
    y1, y2 = sy + sh, dy
    if y2 > y1 + 4:
        bend = (y2 - y1) / 2
        path = (
            f"M{x1:.1f},{y1:.1f} C{x1:.1f},{y1 + bend:.1f} "
            f"{x2:.1f},{y2 - bend:.1f} {x2:.1f},{y2:.1f}"
        )
        return path, (x1 + x2) / 2, (y1 + y2) / 2
    # Upwards or sideways (a back edge): leave from the right and come in on the right.
    x1, y1 = sx + sw, sy + sh / 2
    x2, y2 = dx + dw, dy + 10
    reach = max(x1, x2) + 40
    path = f"M{x1:.1f},{y1:.1f} C{reach:.1f},{y1:.1f} {reach:.1f},{y2:.1f} {x2:.1f},{y2:.1f}"
    return path, reach - 10, (y1 + y2) / 2


def render(model: ViewModel, expanded: set[int] | None = None, title: str = "") -> str:
    """The SVG document of ``model`` with ``expanded`` groups open (default: the
    model's own choice)."""
    expanded = model.expanded if expanded is None else expanded
    ranks = layout.order_groups(model)
    boxes = layout.geometry(model, ranks, expanded)
    _, _, width, height = boxes[0]
    top = MARGIN + (24 if title else 0)
    legend_y = top + height + 24
    legend_h = LEGEND_ROW * (len(model.devices) + 3)
    total_w = max(width, 420) + 2 * MARGIN
    total_h = legend_y + legend_h + MARGIN
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{total_w:.0f}" height="{total_h:.0f}" '
        f'viewBox="0 0 {total_w:.0f} {total_h:.0f}" font-family="Helvetica, Arial, sans-serif">',
        "<defs>"
        + "".join(
            f'<marker id="arrow-{n}" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7" '
            f'markerHeight="7" orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="{c}"/></marker>'
            for n, c in (("e", EDGE), ("s", SEND_RECV))
        )
        + "</defs>",
        f'<rect width="{total_w:.0f}" height="{total_h:.0f}" fill="white"/>',
    ]
    if title:
        out.append(
            f'<text x="{MARGIN}" y="{MARGIN + 14}" font-size="14" font-weight="bold">'
            f"{escape(title)}</text>"
        )
    out.append(f'<g transform="translate({MARGIN},{top})">')
    for i in sorted(boxes):
        if i:
            out.append(_box(model, i, boxes[i], i in expanded))
    edges = visible_edges(model, expanded)
    ends = spread_ends(edges, boxes)
    for (a, b, kind, send_recv, label), (x1, x2) in zip(edges, ends):
        path, lx, ly = edge_path(boxes[a], boxes[b], x1, x2)
        stroke = SEND_RECV if send_recv else EDGE
        dash = ' stroke-dasharray="4,3"' if kind == CONTROL else ""
        marker = "s" if send_recv else "e"
        out.append(
            f'<path d="{path}" fill="none" stroke="{stroke}" stroke-width="'
            f'{1.8 if send_recv else 1.1}"{dash} marker-end="url(#arrow-{marker})"/>'
        )
        if label:
            out.append(
                f'<text x="{lx + 3:.1f}" y="{ly:.1f}" font-size="9" fill="{stroke}">'
                f"{escape(label)}</text>"
            )
    out.append("</g>")
    out.append(_legend(model, MARGIN, legend_y))
    out.append("</svg>")
    return "\n".join(out)


def _box(model: ViewModel, i: int, box: tuple, is_open: bool) -> str:
    node = model.nodes[i]
    x, y, w, h = box
    device = model.devices[node.device] if node.device >= 0 else ""
    tip = f"{node.name}\n{node.op.type if node.op is not None else f'{node.num_ops} ops'}"
    tip += f"\n{device}" + (f"\nstage {node.stage}" if node.op is not None else "")
    title = f"<title>{escape(tip)}</title>"
    if node.op is None and is_open:
        return (
            f'<g>{title}<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" rx="8" '
            f'fill="#fbfbfb" stroke="{_darker(colour(node.device))}" stroke-width="1.2"/>'
            f'<text x="{x + 8:.1f}" y="{y + 15:.1f}" font-size="11" font-weight="bold">'
            f"\u2212 {escape(node.label)}</text></g>"
        )
    fill = colour(node.device)
    parts = [
        f'<g>{title}<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" '
        f'rx="{10 if node.op is None else 4}" fill="{fill}" stroke="{_darker(fill)}" '
        f'stroke-width="{1.6 if node.op is None else 1}"/>'
    ]
    label = node.label if len(node.label) <= 28 else node.label[:27] + "\u2026"
    sub = node.op.type if node.op is not None else f"+ {node.num_ops} ops"
    parts.append(
        f'<text x="{x + w / 2:.1f}" y="{y + 15:.1f}" font-size="11" text-anchor="middle">'
        f"{escape(label)}</text>"
        f'<text x="{x + w / 2:.1f}" y="{y + 28:.1f}" font-size="9" fill="#444" '
        f'text-anchor="middle">{escape(sub[:28])}</text>'
    )
    if node.op is None and len(node.devices) > 1:  # the devices' shares, as a bar
        bx = x + 6
        for d, count in sorted(node.devices.items()):
            bw = (w - 12) * count / node.num_ops
            parts.append(
                f'<rect x="{bx:.1f}" y="{y + h - 8:.1f}" width="{bw:.1f}" height="4" '
                f'fill="{_darker(colour(d))}"/>'
            )
            bx += bw
    if node.op is not None and model.num_stages > 1:
        parts.append(
            f'<text x="{x + w - 4:.1f}" y="{y + 10:.1f}" font-size="8" fill="#555" '
            f'text-anchor="end">s{node.stage}</text>'
        )
    parts.append("</g>")
    return "".join(parts)


def _legend(model: ViewModel, x: float, y: float) -> str:
    placed = (
        "placed by the session for this step"
        if model.placed_by == "session"
        else "placed as a session would place them"
    )
    rows = [
        f'<text x="{x}" y="{y}" font-size="11" font-weight="bold">Devices ({placed}); '
        f"{model.num_stages} stage{'s' if model.num_stages != 1 else ''}</text>"
    ]
    for i, device in enumerate(model.devices):
        ry = y + LEGEND_ROW * (i + 1)
        count = sum(1 for n in model.nodes if n.op is not None and n.device == i)
        rows.append(
            f'<rect x="{x}" y="{ry - 10}" width="14" height="12" rx="2" fill="{colour(i)}" '
            f'stroke="{_darker(colour(i))}"/><text x="{x + 20}" y="{ry}" font-size="11">'
            f"{escape(device)} ({count} ops)</text>"
        )
    ry = y + LEGEND_ROW * (len(model.devices) + 1)
    samples = [
        ("data (shape)", EDGE, ""),
        ("control", EDGE, ' stroke-dasharray="4,3"'),
        ("Send/Recv (crosses a stage)", SEND_RECV, ""),
    ]
    sx = x
    for text, stroke, dash in samples:
        rows.append(
            f'<line x1="{sx}" y1="{ry - 4}" x2="{sx + 26}" y2="{ry - 4}" stroke="{stroke}" '
            f'stroke-width="1.6"{dash}/><text x="{sx + 32}" y="{ry}" font-size="11">'
            f"{escape(text)}</text>"
        )
        sx += 48 + CHAR_WIDTH * len(text)
    return "".join(rows)


CHAR_WIDTH = 6.2


def _darker(hex_colour: str) -> str:
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"#{int(r * 0.6):02x}{int(g * 0.6):02x}{int(b * 0.6):02x}"
