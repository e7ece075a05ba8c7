"""What the dataflow page shows, gathered from the workers when it is asked for.

Two halves, on two sides of the cluster:

* **On a worker**, ``collect(worker)`` reads what that worker process holds: the step
  recorder's account of its plans (``step_metrics.RECORDER``), the ``WorkerPlan``s
  installed on it (``worker_state.RUNTIME``) and the memory its stores' variables and
  queues hold. The scheduler installs it once per worker as the Dask handler
  ``dataflow_page`` (``install_handler``, sent with Dask's ``run``), so that a page
  refreshing every second costs one plain RPC per worker, with no pickled function and
  no log line each time; it imports dataflow only when it runs, and a worker without
  dataflow answers that it has none.
* **On the scheduler**, ``merge(reports)`` turns the workers' answers into the page's
  JSON: steps/s per session (a plan's steps are counted on every worker it runs on:
  the busiest worker's count is the plan's, and a session's is the sum over its
  plans), stage times per device, bytes between devices (a stage's sends to a worker,
  attributed to the devices of the stages there that read them), the placed graph of
  each plan (its stages from every worker, linked by the slots they pass) and memory
  per worker and device. Where a session reported how far its training is
  (``report_progress``: the scheduler's metadata under ``PROGRESS_KEY``), its row
  shows the global step, the last step and the time left at the reported rate.

This module imports nothing of dataflow at module level: the scheduler's plugin
travels by value (``dashboard/__init__.py``) and a scheduler need not have dataflow.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

HANDLER = "dataflow_page"
RUNS_HANDLER = "dataflow_stage_runs"  # the stage runs since the last call (task stream)
CLIENT = "client"  # step_metrics.CLIENT: a send to the client
PROGRESS_KEY = "dataflow-progress"  # scheduler.task_metadata[PROGRESS_KEY][session]
MAX_PROGRESS = 256  # sessions' progress reports kept on the scheduler


# --- on a worker --------------------------------------------------------------------------
def collect(worker: Any) -> dict:
    """This worker's part of the page (never raises: an error is reported instead)."""
    try:
        from dataflow.runtime.dask import step_metrics, worker_state
    except ImportError:
        return {"error": "dataflow is not installed on this worker"}
    try:
        name = str(worker.name)
        runtime = worker_state.RUNTIME
        layouts = []
        devices: dict[str, str] = {}  # device -> container of its store
        for key in runtime.installed():
            if key.rpartition("/")[2] != name:
                continue  # another worker's plan (a cluster of threads shares a process)
            try:
                plan = runtime.plan(key)
            except worker_state.PlanMissingError:  # uninstalled meanwhile
                continue
            layouts.append(step_metrics.plan_layout(plan))
            for part in plan.parts:
                devices.setdefault(part.stage.device, plan.container)
        plans = step_metrics.RECORDER.report(name)
        held = runtime.variables("")
        for plan_report in plans:  # plans run here earlier, whose sessions closed
            for stage in plan_report["stages"]:
                if stage["device"] in held:
                    devices.setdefault(stage["device"], "")
        stores = [runtime.store(container, device) for device, container in devices.items()]
        return {
            "worker": name,
            "time": time.time(),
            "plans": plans,
            "layouts": layouts,
            "memory": step_metrics.store_memory(stores),
        }
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}


def install_handler(dask_worker: Any = None) -> bool:
    """Adds the ``dataflow_page`` and ``dataflow_stage_runs`` handlers to a worker (run
    there once, by the scheduler); ``False`` on a worker without dataflow."""
    try:
        from dataflow.runtime.dask import step_metrics
    except ImportError:
        return False

    def dataflow_page() -> dict:
        return collect(dask_worker)

    def dataflow_stage_runs() -> list[dict]:
        return step_metrics.RECORDER.take_runs(str(dask_worker.name))

    dask_worker.handlers[HANDLER] = dataflow_page
    dask_worker.handlers[RUNS_HANDLER] = dataflow_stage_runs
    return True


# --- on the scheduler -----------------------------------------------------------------------
def merge(
    reports: Mapping[str, dict], now: float | None = None, progress: Mapping | None = None
) -> dict:
    """The page's data from ``{worker name: collect(...) or {"error": ...}}`` and the
    sessions' progress reports (``{session: report_progress's value}``)."""
    now = time.time() if now is None else now
    workers = []
    plans: list[dict] = []
    layouts: dict[str, list[dict]] = {}  # plan id -> that plan's layouts, one per worker
    memory = []
    for name, report in sorted(reports.items()):
        workers.append({"name": name, "error": report.get("error")})
        for p in report.get("plans", ()):
            plans.append(p)
        for layout in report.get("layouts", ()):
            layouts.setdefault(layout["plan"], []).append(layout)
        for row in report.get("memory", ()):
            memory.append({"worker": name, **row})
    session_of = {p["plan"]: p["session"] for p in plans}
    rate = {p["plan"]: 0.0 for p in plans}
    for p in plans:
        rate[p["plan"]] = max(rate[p["plan"]], p["steps_per_s"])
    graphs = [  # the plans running now first
        _graph(plan_id, session_of.get(plan_id), parts)
        for plan_id, parts in sorted(layouts.items(), key=lambda i: (-rate.get(i[0], 0.0), i[0]))
    ]
    return {
        "time": now,
        "workers": workers,
        "sessions": _sessions(plans, now, progress or {}),
        "stages": _stages(plans),
        "devices": _devices(plans),
        "transfers": _transfers(plans, layouts),
        "graphs": graphs,
        "memory": memory,
    }


def _sessions(plans: list[dict], now: float, progress: Mapping) -> list[dict]:
    by_plan: dict[str, dict] = {}
    for p in plans:  # the busiest worker's count is the plan's
        best = by_plan.get(p["plan"])
        if best is None or (p["steps"], p["steps_per_s"]) > (best["steps"], best["steps_per_s"]):
            by_plan[p["plan"]] = p
    sessions: dict[str, dict] = {}
    for p in plans:
        s = sessions.setdefault(
            p["session"],
            {"session": p["session"], "plans": [], "workers": [], "steps": 0, "steps_per_s": 0.0},
        )
        if p["worker"] not in s["workers"]:
            s["workers"].append(p["worker"])
        if p["plan"] not in s["plans"]:
            s["plans"].append(p["plan"])
            best = by_plan[p["plan"]]
            s["steps"] += best["steps"]
            s["steps_per_s"] += best["steps_per_s"]
        if p["last_step"] is not None:
            s["last_step_age_s"] = min(s.get("last_step_age_s", 1e300), now - p["last_step"])
    for s in sessions.values():
        s["workers"].sort()
        report = progress.get(s["session"])
        s["progress"] = _progress(report, now) if isinstance(report, Mapping) else None
    return sorted(sessions.values(), key=lambda s: (-s["steps_per_s"], s["session"]))


def _progress(report: Mapping, now: float) -> dict:
    """A session's training progress: its global step, the step it stops at (``None``
    when not known), the fraction done and the seconds left at the global step's rate."""
    step, last = report.get("global_step"), report.get("last_step")
    rate = report.get("global_steps_per_s")
    fraction = eta = None
    if isinstance(step, int) and isinstance(last, int) and last > 0:
        fraction = min(max(step / last, 0.0), 1.0)
        if step >= last:
            eta = 0.0
        elif isinstance(rate, (int, float)) and rate > 0:
            eta = (last - step) / rate
    sent = report.get("time")
    return {
        "global_step": step,
        "last_step": last,
        "global_steps_per_s": rate,
        "fraction": fraction,
        "eta_s": eta,
        "age_s": now - sent if isinstance(sent, (int, float)) else None,
    }


def prune_progress(progress: dict) -> None:
    """Keeps the ``MAX_PROGRESS`` sessions reported last (the scheduler keeps reports
    in its metadata for as long as it runs; sessions report about once a second)."""
    if len(progress) <= MAX_PROGRESS:
        return
    by_age = sorted(progress, key=lambda s: _sent(progress[s]))
    for session in by_age[: len(progress) - MAX_PROGRESS]:
        del progress[session]


def _sent(report: Any) -> float:
    sent = report.get("time") if isinstance(report, Mapping) else None
    return float(sent) if isinstance(sent, (int, float)) else 0.0


def _stages(plans: list[dict]) -> list[dict]:
    rows = []
    for p in plans:
        for st in p["stages"]:
            rows.append(
                {
                    "session": p["session"],
                    "plan": p["plan"],
                    "worker": p["worker"],
                    "steps_per_s": p["steps_per_s"],
                    **{k: v for k, v in st.items() if k != "sends"},
                }
            )
    # The plans running now first (a session's initializer ran once, long ago).
    return sorted(rows, key=lambda r: (r["session"], -r["steps_per_s"], r["plan"], r["index"]))


def _devices(plans: list[dict]) -> list[dict]:
    """Per device: its stages, their runs (in all, and per second lately) and the
    seconds of stage time per second (``busy``; 1.0 is one thread always running)."""
    out: dict[str, dict] = {}
    for p in plans:
        for st in p["stages"]:
            d = out.setdefault(
                st["device"],
                {
                    "device": st["device"],
                    "worker": p["worker"],
                    "stages": 0,
                    "runs": 0,
                    "runs_per_s": 0.0,
                    "busy": 0.0,
                },
            )
            d["stages"] += 1
            d["runs"] += st["runs"]
            d["runs_per_s"] += p["steps_per_s"]
            d["busy"] += (st["recent_mean_s"] or 0.0) * p["steps_per_s"]
    return sorted(out.values(), key=lambda d: d["device"])


def _transfers(plans: list[dict], layouts: Mapping[str, list[dict]]) -> list[dict]:
    rows = []
    for p in plans:
        parts = {layout["worker"]: layout["stages"] for layout in layouts.get(p["plan"], ())}
        mine = {s["index"]: s for s in parts.get(p["worker"], ())}
        for st in p["stages"]:
            for send in st["sends"]:
                to = send["to"]
                if to != CLIENT:
                    to = _reader_devices(mine.get(st["index"]), parts.get(to)) or to
                rows.append(
                    {
                        "session": p["session"],
                        "plan": p["plan"],
                        "stage": st["index"],
                        "name": st["name"],
                        "from": st["device"],
                        "to": to,
                        "bytes": send["bytes"],
                        "bytes_per_step": send["bytes_per_run"],
                        "bytes_per_s": send["bytes_per_run"] * p["steps_per_s"],
                    }
                )
    return rows


def _reader_devices(stage: dict | None, readers: list[dict] | None) -> str:
    if stage is None or not readers:
        return ""
    outputs = set(stage["outputs"])
    devices = sorted(
        {
            r["device"]
            for r in readers
            if outputs & set(r["inputs"]) or stage["index"] in r["control_inputs"]
        }
    )
    return ", ".join(devices)


def _graph(plan_id: str, session: str | None, layouts: list[dict]) -> dict:
    """One plan's stages from all its workers, and the edges between them."""
    stages = sorted(
        ({**s, "worker": layout["worker"]} for layout in layouts for s in layout["stages"]),
        key=lambda s: s["index"],
    )
    producer = {slot: s["index"] for s in stages for slot in s["outputs"]}
    edges = sorted(
        {
            (producer[slot], s["index"])
            for s in stages
            for slot in s["inputs"]
            if slot in producer and producer[slot] != s["index"]
        }
        | {(c, s["index"]) for s in stages for c in s["control_inputs"]}
    )
    nodes = [
        {k: s[k] for k in ("index", "name", "device", "worker", "calls", "ops", "to_client")}
        for s in stages
    ]
    return {
        "plan": plan_id,
        "session": session,
        "stages": nodes,
        "edges": [list(e) for e in edges],
    }
