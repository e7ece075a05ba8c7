"""The graph view as a static SVG (for docs, files, and where no script may run).

It draws what ``graph_view.js`` draws for the same open groups: boxes coloured by the
placed device, open groups as framed regions with their scope name, collapsed groups
with their op count and a bar of their devices' shares, edges labelled with shapes,
control edges dashed, Send/Recv edges (crossing a stage boundary) in a heavier colour,
and a legend. Edges are bundled, routed and labelled as ``routing.py`` says: one edge per
pair of sibling boxes, thicker with its count, its label only where it overlaps nothing,
and a tooltip listing what it carries.
"""

from __future__ import annotations

from html import escape

from . import layout, routing
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


def render(model: ViewModel, expanded: set[int] | None = None, title: str = "") -> str:
    """The SVG document of ``model`` with ``expanded`` groups open (default: the
    model's own choice)."""
    expanded = model.expanded if expanded is None else expanded
    ranks = layout.order_groups(model)
    boxes = layout.geometry(model, ranks, expanded)
    drawn = routing.layout_edges(model, expanded, boxes)
    width, height = routing.extent(drawn, boxes[0])
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
            f'<marker id="arrow-{n}" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="8" '
            f'markerHeight="8" markerUnits="userSpaceOnUse" orient="auto">'
            f'<path d="M0,0 L8,4 L0,8 z" fill="{c}"/></marker>'
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
    for edge, points, back, at in drawn:
        a, b, kind, send_recv, label, count, shapes = edge
        stroke = SEND_RECV if send_recv else EDGE
        dash = ' stroke-dasharray="4,3"' if kind == CONTROL else ""
        marker = "s" if send_recv else "e"
        tip = edge_tooltip(model.nodes[a].name, model.nodes[b].name, count, shapes, send_recv)
        out.append(
            f'<path d="{routing.path_data(points, back)}" fill="none" stroke="{stroke}" '
            f'stroke-width="{routing.stroke_width(send_recv, count):.1f}"{dash} '
            f'marker-end="url(#arrow-{marker})"><title>{escape(tip)}</title></path>'
        )
        if at is not None:
            out.append(
                f'<text x="{at[0]:.1f}" y="{at[1]:.1f}" font-size="9" fill="{stroke}">'
                f"{escape(label)}</text>"
            )
    out.append("</g>")
    out.append(_legend(model, MARGIN, legend_y))
    out.append("</svg>")
    return "\n".join(out)


def edge_tooltip(src: str, dst: str, count: int, shapes: str, send_recv: bool) -> str:
    """What hovering an edge says: its ends, how many edges it bundles, their shapes."""
    what = f"{count} edge{'s' if count != 1 else ''}" + (f": {shapes}" if shapes else "")
    return f"{src or '(root)'} \u2192 {dst}\n{what}" + ("\nSend/Recv" if send_recv else "")


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
            f'<text x="{x + w - 4:.1f}" y="{y + h - 3:.1f}" font-size="8" fill="#555" '
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
