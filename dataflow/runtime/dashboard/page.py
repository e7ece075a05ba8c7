"""The dataflow page's HTML: one self-contained document (no external scripts or
styles, so it works in JupyterLab's Dask panes and on a cluster without internet).

Its script fetches ``dataflow.json`` (relative to the page, so the dashboard's prefix
is kept) every ``REFRESH_MS``, and redraws: sessions with their steps/s (and a
sparkline of the last minutes) and, where the session reported it, its global step
against the step it stops at, time per step by device, stage times, bytes between
devices, memory per worker, and each plan's placed graph (one column per device, one
box per stage, arrows where values cross; hover a stage for its ops). Every name from
the cluster is inserted as text, never as HTML.
"""

from __future__ import annotations

REFRESH_MS = 1000

_STYLE = """
body{font:13px/1.4 -apple-system,"Segoe UI",Helvetica,Arial,sans-serif;margin:0;color:#222;
 background:#fafafa}
header{background:#2b2b2b;color:#eee;padding:8px 16px;display:flex;gap:16px;
 align-items:baseline}
header h1{font-size:16px;margin:0;font-weight:600;color:#fff}
header .status{color:#aaa}
main{padding:8px 16px;display:grid;gap:12px;
 grid-template-columns:repeat(auto-fit,minmax(520px,1fr))}
section{background:#fff;border:1px solid #ddd;border-radius:4px;padding:8px 12px;overflow:auto}
section.wide{grid-column:1/-1}
h2{font-size:13px;margin:0 0 6px;color:#444;text-transform:uppercase;letter-spacing:.04em}
table{border-collapse:collapse;width:100%}
th,td{padding:2px 8px 2px 0;text-align:left;white-space:nowrap;vertical-align:middle}
th{color:#666;font-weight:500;border-bottom:1px solid #ddd}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.bar{height:10px;background:#e46d2b;border-radius:2px;min-width:1px}
.bar.blue{background:#3b78b6}.bar.green{background:#4a9a5c}
.muted{color:#999}.err{color:#b00}
.progress{display:flex;gap:6px;align-items:center}
svg text{font-size:11px;font-family:inherit}
.empty{color:#999;font-style:italic}
span.name{display:inline-block;max-width:300px;overflow:hidden;text-overflow:ellipsis;
 vertical-align:bottom}
"""

_SCRIPT = r"""
const REFRESH_MS = %(refresh)d;
const history = {};  // session -> [steps/s, ...] (the last 120 refreshes)
function el(tag, attrs, ...children) {
  const e = tag.startsWith("svg:")
    ? document.createElementNS("http://www.w3.org/2000/svg", tag.slice(4))
    : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}
function bytes(n) {
  if (n == null) return "";
  const u = ["B", "KB", "MB", "GB", "TB"];
  let i = 0;
  while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
  return (i ? n.toFixed(1) : n.toFixed(0)) + " " + u[i];
}
function named(text) { return el("span", {class: "name", title: text}, text); }
function ms(s) { return s == null ? "" : (s * 1000).toFixed(s < 0.01 ? 3 : 1) + " ms"; }
function short(device) { return device.replace("/replica:0", "").replace("/device:", "/"); }
function bar(fraction, cls) {
  const w = Math.max(0, Math.min(1, fraction || 0)) * 160;
  return el("div", {class: "bar " + (cls || ""), style: "width:" + w.toFixed(1) + "px"});
}
function table(headers, rows, numeric) {
  const cell = (tag, i, c) => el(tag, numeric.includes(i) ? {class: "num"} : {}, c);
  const t = el("table", {}, el("tr", {}, ...headers.map((h, i) => cell("th", i, h))));
  for (const r of rows) t.append(el("tr", {}, ...r.map((c, i) => cell("td", i, c))));
  return t;
}
function fill(id, headers, rows, numeric, ...more) {
  const box = document.getElementById(id);
  const body = rows.length ? [table(headers, rows, numeric)] : [];
  if (!body.length && !more.length) body.push(el("div", {class: "empty"}, "nothing yet"));
  box.replaceChildren(box.firstElementChild, ...body, ...more);
}
function sparkline(values) {
  const w = 160, h = 24, max = Math.max(...values, 1e-9), n = Math.max(values.length - 1, 1);
  const xy = (v, i) => [(i / n * w).toFixed(1), (h - 1 - v / max * (h - 2)).toFixed(1)];
  const pts = values.map((v, i) => xy(v, i).join(","));
  const svg = el("svg:svg", {width: w, height: h});
  svg.append(el("svg:polyline",
    {points: pts.join(" "), fill: "none", stroke: "#e46d2b", "stroke-width": 1.5}));
  return svg;
}
function drawSessions(d) {
  const rows = d.sessions.map(s => {
    const hist = (history[s.session] || []).concat([s.steps_per_s]).slice(-120);
    history[s.session] = hist;
    const age = s.last_step_age_s == null ? "" : s.last_step_age_s.toFixed(1) + " s ago";
    return [s.session, s.steps, s.steps_per_s.toFixed(1), sparkline(hist), age,
            progress(s.progress), s.plans.length, s.workers.join(", ")];
  });
  fill("sessions", ["session", "steps", "steps/s", "last 2 min", "last step",
                    "global step · target", "plans", "workers"], rows, [1, 2, 6]);
}
function progress(p) {
  if (p == null) return "";
  if (p.last_step == null) return "global step " + p.global_step;
  let text = `${p.global_step} / ${p.last_step} (${(p.fraction * 100).toFixed(0)} %%)`;
  if (p.eta_s != null) text += p.eta_s > 0 ? ` · ${p.eta_s.toFixed(0)} s left` : " · done";
  return el("div", {class: "progress"}, bar(p.fraction, "green"), el("span", {}, text));
}
function drawDevices(d) {
  const max = Math.max(...d.devices.map(x => x.busy), 1e-9);
  const rows = d.devices.map(x => [short(x.device), x.worker, x.stages, x.runs,
    x.runs_per_s.toFixed(1), (x.busy * 100).toFixed(1) + " %%", bar(x.busy / max)]);
  fill("devices", ["device", "worker", "stages", "runs", "runs/s", "busy", ""], rows,
       [2, 3, 4, 5]);
}
function drawStages(d) {
  const max = Math.max(...d.stages.map(s => s.recent_mean_s || 0), 1e-9);
  const rows = d.stages.map(s => [s.session, s.plan, named(s.name),
    short(s.device), s.calls, s.runs, ms(s.mean_s), ms(s.recent_mean_s), ms(s.recent_max_s),
    bar((s.recent_mean_s || 0) / max, "blue")]);
  fill("stages", ["session", "plan", "stage", "device", "ops", "runs", "mean",
                  "recent", "recent max", ""], rows, [4, 5, 6, 7, 8]);
}
function drawTransfers(d) {
  const moving = d.transfers.filter(t => t.bytes > 0);
  moving.sort((a, b) => b.bytes_per_s - a.bytes_per_s);
  const max = Math.max(...moving.map(t => t.bytes_per_s), 1e-9);
  const rows = moving.map(t => [t.session, named(t.name), short(t.from),
    short(t.to), bytes(t.bytes_per_step), bytes(t.bytes_per_s) + "/s", bytes(t.bytes),
    bar(t.bytes_per_s / max, "green")]);
  fill("transfers", ["session", "stage", "from", "to", "per step", "rate", "total", ""], rows,
       [4, 5, 6]);
}
function drawMemory(d) {
  const held = m => m.variable_bytes + m.queue_bytes;
  const max = Math.max(...d.memory.map(held), 1e-9);
  const rows = d.memory.map(m => [m.worker, short(m.device), m.variables,
    bytes(m.variable_bytes), m.queues, m.queue_elements, bytes(m.queue_bytes), bar(held(m) / max)]);
  const errors = d.workers.filter(w => w.error)
    .map(w => el("div", {class: "err"}, w.name + ": " + w.error));
  fill("memory", ["worker", "device", "variables", "bytes", "queues", "elements", "bytes", ""],
       rows, [2, 3, 4, 5, 6], ...errors);
}
function drawGraph(g) {
  const devices = [...new Set(g.stages.map(s => s.device))].sort();
  const colW = 230, boxW = 200, boxH = 34, rowH = 52, top = 24;
  const row = {}, byIndex = {};
  g.stages.forEach((s, i) => { row[s.index] = i; byIndex[s.index] = s; });
  const pos = s => [devices.indexOf(s.device) * colW + 10, top + row[s.index] * rowH];
  const svg = el("svg:svg",
    {width: devices.length * colW + 10, height: top + g.stages.length * rowH});
  const marker = el("svg:marker", {id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5,
    markerWidth: 6, markerHeight: 6, orient: "auto-start-reverse"});
  marker.append(el("svg:path", {d: "M0,0L10,5L0,10z", fill: "#888"}));
  svg.append(el("svg:defs", {}, marker));
  devices.forEach((dev, i) =>
    svg.append(el("svg:text", {x: i * colW + 10, y: 14, "font-weight": 600}, short(dev))));
  for (const [a, b] of g.edges) {
    if (!(a in byIndex) || !(b in byIndex)) continue;
    const [x1, y1] = pos(byIndex[a]), [x2, y2] = pos(byIndex[b]);
    const cross = byIndex[a].device !== byIndex[b].device;
    const sx = x1 + boxW / 2, sy = y1 + boxH, ex = x2 + boxW / 2, ey = y2;
    svg.append(el("svg:path", {
      d: `M${sx},${sy} C${sx},${sy + 20} ${ex},${ey - 20} ${ex},${ey}`, fill: "none",
      stroke: cross ? "#e46d2b" : "#999", "stroke-width": cross ? 1.6 : 1,
      "marker-end": "url(#arrow)"}));
  }
  for (const s of g.stages) {
    const [x, y] = pos(s);
    let ops = s.ops.map(o => o[0] + " (" + o[1] + ")").join("\n");
    if (s.calls > s.ops.length) ops += `\n... ${s.calls - s.ops.length} more`;
    const name = s.name.length > 30 ? "…" + s.name.slice(-29) : s.name;
    const where = s.calls + " ops" + (s.to_client ? " → client" : "");
    svg.append(el("svg:g", {},
      el("svg:title", {}, `stage ${s.name} on ${s.device} (${s.worker}):\n${ops}`),
      el("svg:rect", {x, y, width: boxW, height: boxH, rx: 4, fill: "#f1f5fb",
                      stroke: "#3b78b6"}),
      el("svg:text", {x: x + 6, y: y + 14}, name),
      el("svg:text", {x: x + 6, y: y + 28, fill: "#666"}, where)));
  }
  const title = `plan ${g.plan}` + (g.session ? ` · session ${g.session}` : " · not run yet");
  return el("div", {}, el("div", {class: "muted"}, title), svg);
}
function draw(d) {
  drawSessions(d); drawDevices(d); drawStages(d); drawTransfers(d); drawMemory(d);
  const box = document.getElementById("graphs");
  box.replaceChildren(box.firstElementChild, ...d.graphs.map(drawGraph));
  const errs = d.workers.filter(w => w.error).length;
  const when = new Date(d.time * 1000).toLocaleTimeString();
  document.getElementById("status").textContent =
    `${d.workers.length} workers${errs ? ", " + errs + " without data" : ""} · updated ${when}`;
}
async function refresh() {
  try {
    const r = await fetch("dataflow.json", {cache: "no-store"});
    const d = await r.json();
    if (d.error) throw new Error(d.error);
    draw(d);
  } catch (e) {
    document.getElementById("status").textContent = "no data: " + e.message;
  }
  setTimeout(refresh, REFRESH_MS);
}
refresh();
"""

_BODY = """
<header><h1>dataflow</h1><span class="status" id="status">loading…</span></header>
<main>
<section id="sessions" class="wide"><h2>Sessions · steps per second</h2></section>
<section id="devices" class="wide"><h2>Devices · stage runs and time</h2></section>
<section id="memory" class="wide"><h2>Memory held by variables and queues</h2></section>
<section id="transfers" class="wide"><h2>Bytes between devices</h2></section>
<section id="stages" class="wide"><h2>Stages</h2></section>
<section id="graphs" class="wide"><h2>Placed graph by stage</h2></section>
</main>
"""

PAGE_HTML = (
    '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
    "<title>Dask: dataflow</title>"
    f"<style>{_STYLE}</style></head><body>{_BODY}"
    f"<script>{_SCRIPT % {'refresh': REFRESH_MS}}</script></body></html>"
)
