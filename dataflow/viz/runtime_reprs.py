"""HTML reprs of what runs the graph: ``LocalCluster``, ``Session`` and a compiled
``Plan`` (registered with ``framework.repr_hooks`` like those in ``reprs.py``).

A cluster lists its workers by TF task with links to each worker's own dashboard, as
Dask's ``Cluster`` repr does; a session says where it runs, on which devices, and what
it has compiled; a plan shows its stages (each runs whole on one device), where they
run and how many tensors cross between them (the Send/Recv pairs).
"""

from __future__ import annotations

from collections import Counter
from html import escape
from typing import Any

from ..framework import repr_hooks
from .reprs import box, code, device_chip, fields, human_bytes, section, table


def _link(url: str | None, text: str | None = None) -> str:
    if not url:
        return "none"
    return f'<a href="{escape(url)}" target="_blank">{escape(text or url)}</a>'


def _worker_rows(client: Any, task_of: dict[str, str]) -> list[list[str]]:
    """One row per worker: its TF task, address, threads, memory and dashboard link."""
    info = client.scheduler_info(n_workers=-1)["workers"]
    rows = []
    for address, w in sorted(info.items(), key=lambda kv: str(kv[1].get("name"))):
        name = str(w.get("name"))
        host = address.split("://", 1)[-1].rsplit(":", 1)[0]
        port = (w.get("services") or {}).get("dashboard")
        url = f"http://{host}:{port}/status" if port else None
        rows.append(
            [
                code(name),
                code(task_of.get(name, "-")),
                code(address),
                str(w.get("nthreads", "?")),
                human_bytes(w.get("memory_limit") or 0),
                _link(url, "dashboard") if url else "-",
            ]
        )
    return rows


def _dataflow_page(dashboard_link: str | None) -> str | None:
    """The scheduler dashboard's dataflow page (``runtime/dashboard``: a
    ``LocalCluster`` and every session register it), next to Dask's ``status``."""
    if not dashboard_link:
        return None
    return dashboard_link.rsplit("/", 1)[0] + "/dataflow"


def cluster_html(cluster: Any) -> str:
    tasks = {
        name: f"/job:{job}/task:{i}"
        for job, names in cluster.cluster_spec.as_dict().items()
        for i, name in enumerate(names)
    }
    try:
        workers = _worker_rows(cluster.client, tasks)
    except Exception as exc:  # a closed cluster: say so instead of failing the repr
        return box("dataflow.LocalCluster", f"not reachable ({escape(str(exc))})", "")
    jobs = ", ".join(
        f"{job}: {len(names)}" for job, names in cluster.cluster_spec.as_dict().items()
    )
    page = _dataflow_page(cluster.dashboard_link)
    rows = [
        ("scheduler", code(cluster.target)),
        ("dashboard", _link(cluster.dashboard_link)),
        ("jobs", escape(jobs)),
        ("workers", str(len(workers))),
    ]
    if page:
        rows.append(("dataflow page", _link(page)))
    body = fields(rows) + section(
        "Workers",
        table(["worker", "task", "address", "threads", "memory", "dashboard"], workers),
        open_=True,
    )
    return box("dataflow.LocalCluster", f"{escape(jobs)} on Dask", body)


def session_html(session: Any) -> str:
    backend = session.backend
    closed = getattr(session, "_closed", False)
    devices = list(getattr(backend, "devices", []))
    client = getattr(backend, "client", None)
    where = (
        "this process (embedded)"
        if client is None
        else f"Dask cluster {code(session.sess_str or getattr(client.scheduler, 'address', ''))}"
    )
    rows = [
        ("runs in", where),
        ("graph", f"{len(session.graph.get_operations())} ops"),
        ("compiled steps", str(len(getattr(session, "_cache", {})))),
        ("default device", code(getattr(backend, "default_device", "-"))),
        ("state", "closed" if closed else "open"),
    ]
    if client is not None:
        rows.insert(1, ("dashboard", _link(getattr(client, "dashboard_link", None))))
    body = fields(rows)
    body += section(
        f"Devices ({len(devices)})",
        "<br>".join(device_chip(d, i) for i, d in enumerate(devices)),
        open_=len(devices) <= 8,
    )
    if client is not None and not closed:
        task_of = {info.name: f"/job:{j}/task:{t}" for (j, t), info in backend.tasks.items()}
        with_workers = _worker_rows(client, task_of)
        body += section(
            "Workers",
            table(["worker", "task", "address", "threads", "memory", "dashboard"], with_workers),
        )
    kind = "embedded" if client is None else "on Dask"
    return box(f"dataflow.{type(session).__name__}", f"{kind}, {len(devices)} device(s)", body)


def plan_html(plan: Any) -> str:
    stage_of_slot = {o: s.index for s in plan.stages for c in s.calls for o in c.outputs if o >= 0}
    crossing = sum(
        1 for s in plan.stages for i in s.inputs if stage_of_slot.get(i, s.index) != s.index
    )
    devices = sorted({s.device for s in plan.stages})
    per_device = Counter(s.device for s in plan.stages)
    calls: Counter[str] = Counter()
    for s in plan.stages:
        calls[s.device] += len(s.calls)
    ops = Counter(plan.placement.values())
    rows = [
        ("stages", f"{len(plan.stages)} (each runs whole on its device)"),
        ("kernel calls", str(plan.num_calls)),
        ("Send/Recv", f"{crossing} tensors cross between stages"),
        ("feeds / fetches", f"{len(plan.feed_slots)} / {len(plan.fetch_slots)}"),
    ]
    placement = [
        [device_chip(d, i), str(ops[d]), str(per_device[d]), str(calls[d])]
        for i, d in enumerate(devices)
    ]
    stage_rows = [
        [
            code(plan.stage_label(s.index)),
            device_chip(s.device, devices.index(s.device)),
            str(len(s.calls)),
            str(len(s.inputs)),
            str(len(s.outputs)),
            ", ".join(plan.stage_number(c) for c in s.control_inputs) or "-",
        ]
        for s in plan.stages
    ]
    body = fields(rows)
    body += section("Placement", table(["device", "ops", "stages", "calls"], placement), True)
    body += section(
        "Stages",
        table(["stage", "device", "calls", "inputs", "outputs", "after"], stage_rows),
        open_=len(plan.stages) <= 12,
    )
    return box(
        "dataflow Plan", f"{len(plan.stages)} stage(s) on {len(devices)} device(s)", body, "#17becf"
    )


repr_hooks.register("LocalCluster", cluster_html)
repr_hooks.register("Session", session_html)
repr_hooks.register("Plan", plan_html)
