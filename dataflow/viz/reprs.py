"""HTML reprs of the graph's objects for Jupyter: ``Graph``, ``Operation``, ``Tensor``,
``Variable`` (the cluster, session and plan ones are in ``runtime_reprs.py``).

They follow the look of Dask's ``Client`` repr: a title line, a short table of what
matters, and folded sections (``<details>``) for the rest, with inline styles only so
the output reads the same in JupyterLab, VS Code and the built docs. The framework's
classes find these functions through ``framework.repr_hooks`` (a lower layer cannot
import this one); registering happens when ``dataflow.viz`` is imported.
"""

from __future__ import annotations

from collections import Counter
from html import escape
from typing import Any

import numpy as np

from ..framework import repr_hooks
from ..framework.graph import Graph, Operation, Tensor
from . import svg
from .graph_model import nominal_placement

# The graph view is embedded in a Graph's repr up to this many ops (beyond, the repr
# says how to draw it: its data would make the notebook slow to save and open).
VIEW_LIMIT = 3000
_BOX = (
    "font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;font-size:13px;"
    "border-left:4px solid {colour};padding:4px 10px;margin:4px 0;"
)
_TABLE = "border-collapse:collapse;text-align:left;font-size:12px"
_CELL = "padding:2px 10px 2px 0;text-align:left;vertical-align:top"


def box(title: str, subtitle: str, body: str, colour: str = "#e8710a") -> str:
    """One repr: a title, a one-line subtitle and the body."""
    return (
        f'<div style="{_BOX.format(colour=colour)}"><div style="font-size:15px;'
        f'font-weight:bold;margin-bottom:2px">{escape(title)}</div>'
        f'<div style="color:#555;margin-bottom:6px">{subtitle}</div>{body}</div>'
    )


def fields(rows: list[tuple[str, str]]) -> str:
    """A two-column table of ``(name, html)`` rows."""
    cells = "".join(
        f'<tr><th style="{_CELL};color:#555;font-weight:normal">{escape(k)}</th>'
        f'<td style="{_CELL}">{v}</td></tr>'
        for k, v in rows
    )
    return f'<table style="{_TABLE}">{cells}</table>'


def table(header: list[str], rows: list[list[str]], limit: int = 50) -> str:
    """A table with a header row; rows are html; at most ``limit`` rows shown."""
    head = "".join(
        f'<th style="{_CELL};border-bottom:1px solid #ccc">{escape(h)}</th>' for h in header
    )
    body = "".join(
        "<tr>" + "".join(f'<td style="{_CELL}">{c}</td>' for c in row) + "</tr>"
        for row in rows[:limit]
    )
    more = (
        f'<div style="color:#777">... and {len(rows) - limit} more</div>'
        if len(rows) > limit
        else ""
    )
    return f'<table style="{_TABLE}"><tr>{head}</tr>{body}</table>{more}'


def section(title: str, body: str, open_: bool = False) -> str:
    return (
        f'<details{" open" if open_ else ""} style="margin:4px 0"><summary style="cursor:'
        f'pointer;font-weight:bold">{escape(title)}</summary><div style="margin:4px 0 0 14px">'
        f"{body}</div></details>"
    )


def code(text: Any) -> str:
    return f"<code>{escape(str(text))}</code>"


def human_bytes(n: float) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.2f} {unit}"
        n /= 1000
    return f"{n:.2f} GB"


def device_chip(device: str, index: int) -> str:
    return (
        f'<span style="background:{svg.colour(index)};border-radius:3px;padding:0 4px">'
        f"{escape(device)}</span>"
    )


def _variables(graph: Graph) -> list[Any]:
    return list(graph.get_collection("variables"))  # GraphKeys.GLOBAL_VARIABLES


def variable_bytes(v: Any) -> int | None:
    """Bytes of a variable's value from its static shape (``None`` when unknown)."""
    dims = v.shape.as_tuple()
    if dims is None or any(d is None for d in dims):
        return None
    return int(np.prod(dims, dtype=np.int64)) * np.dtype(v.dtype.as_numpy_dtype).itemsize


def graph_html(graph: Graph) -> str:
    ops = graph.get_operations()
    variables = _variables(graph)
    sizes = [variable_bytes(v) for v in variables]
    known = [s for s in sizes if s is not None]
    placement = nominal_placement(ops) if ops else {}
    devices = Counter(placement.values())
    device_list = sorted(devices)
    scopes = Counter(op.name.split("/")[0] if "/" in op.name else "(top level)" for op in ops)
    rows = [
        ("operations", str(len(ops))),
        (
            "variables",
            f"{len(variables)} holding {human_bytes(sum(known))}"
            + (f" ({len(sizes) - len(known)} of unknown shape)" if len(known) < len(sizes) else ""),
        ),
        (
            "devices",
            "<br>".join(f"{device_chip(d, i)} {devices[d]} ops" for i, d in enumerate(device_list))
            or "none",
        ),
        ("finalized", str(graph.finalized)),
    ]
    scope_rows = [[code(s), str(n)] for s, n in scopes.most_common()]
    var_rows = [
        [
            code(v.name),
            code(v.shape),
            v.dtype.name,
            human_bytes(s) if s is not None else "?",
            code(v.device or "-"),
        ]
        for v, s in zip(variables, sizes)
    ]
    body = fields(rows) + section("Top-level scopes", table(["scope", "ops"], scope_rows))
    if var_rows:
        body += section(
            "Variables", table(["name", "shape", "dtype", "memory", "device"], var_rows)
        )
    if ops and len(ops) <= VIEW_LIMIT:
        from .graph_view import GraphView

        body += section("Graph view", GraphView(graph).to_html(), open_=len(ops) <= 200)
    elif ops:
        body += (
            '<div style="color:#555">Draw it with <code>graph.visualize()</code> '
            "(name scopes start collapsed).</div>"
        )
    return box("dataflow.Graph", f"{len(ops)} ops, devices as a session would place them", body)


def operation_html(op: Operation) -> str:
    inputs = [[code(t.name), t.dtype.name, code(t.shape)] for t in op.inputs]
    outputs = [
        [code(t.name), t.dtype.name, code(t.shape), str(len(t.consumers()))] for t in op.outputs
    ]
    attrs = [[code(k), code(_short(v))] for k, v in sorted(op.attrs.items())]
    rows = [
        ("type", code(op.type)),
        ("requested device", code(op.device or "(none: the placer chooses)")),
        ("control inputs", ", ".join(code(c.name) for c in op.control_inputs) or "none"),
        ("built at", code(op.traceback or "?")),
    ]
    body = fields(rows)
    body += section(f"Inputs ({len(inputs)})", table(["tensor", "dtype", "shape"], inputs), True)
    body += section(
        f"Outputs ({len(outputs)})", table(["tensor", "dtype", "shape", "consumers"], outputs), True
    )
    if attrs:
        body += section(f"Attributes ({len(attrs)})", table(["name", "value"], attrs))
    return box(f"Operation {op.name}", f"{escape(op.type)} op", body, "#1f77b4")


def tensor_html(t: Tensor) -> str:
    consumers = t.consumers()
    rows = [
        ("dtype", t.dtype.name),
        ("shape", code(t.shape)),
        ("produced by", f"{code(t.op.name)} ({escape(t.op.type)}), output {t.value_index}"),
        ("consumers", ", ".join(code(c.name) for c in consumers[:20]) or "none"),
        ("requested device", code(t.device or "-")),
    ]
    return box(f"Tensor {t.name}", f"{code(t.shape)} {t.dtype.name}", fields(rows), "#2ca02c")


def variable_html(v: Any) -> str:
    size = variable_bytes(v)
    rows = [
        ("shape", code(v.shape)),
        ("dtype", v.dtype.name),
        ("memory", human_bytes(size) if size is not None else "unknown (shape not fully known)"),
        ("requested device", code(v.device or "(none: the placer chooses)")),
        ("trainable", str(v.trainable)),
        ("initializer", code(v.initializer.name)),
    ]
    return box(f"Variable {v.name}", f"{code(v.shape)} {v.dtype.name}", fields(rows), "#9467bd")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


repr_hooks.register("Graph", graph_html)
repr_hooks.register("Operation", operation_html)
repr_hooks.register("Tensor", tensor_html)
repr_hooks.register("Variable", variable_html)
