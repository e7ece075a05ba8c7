"""What this worker process's dataflow steps did lately, for the dashboard's dataflow page.

Steps on the resident path never reach the scheduler, so Dask's pages cannot show
them; each worker keeps its own account instead, and the page
(``dashboard_page.py``) gathers it when it is loaded. ``RECORDER.stage(...)`` is
called once per stage run, by both step paths (``worker_state.run_stage`` and
``worker_steps._run_part``), with the stage's part of its ``WorkerPlan``, the step id,
the stage's run time and its output tuple. Per plan (a plan key names one worker's
part of one compiled plan of one session) it keeps:

* **steps**: a count, and the times of the last ``STEP_TIMES`` steps (a step is
  counted at the first of its stages seen here; steps/s is taken over the last
  ``WINDOW_S`` seconds of them);
* **stages**, by index: runs, total and the last ``_STAGE_TIMES`` run times, device;
* **bytes** each stage's outputs carried to other workers (``part.send_to``) and to
  the client (``part.client_slots``), counted from the outputs' ``nbytes``, the same
  on both paths (on the task-graph path Dask moves them).

It also keeps each resident stage run as Dask's task stream records a task (``runs``:
the stage's task key, as the task-graph path would name it, the worker, the thread,
start and stop in wall-clock seconds, the outputs' bytes), at most ``RUNS_KEPT`` per
worker, until the scheduler's dataflow plugin takes them (``take_runs``, about twice a
second while Dask's task stream is recorded: ``dashboard/plugin.py``) and adds them to
that stream. So the resident steps show in Dask's ``/status`` task stream and in
``performance_report`` though they never pass through the scheduler.

Memory stays bounded: fixed-length windows, and at most ``MAX_PLANS`` plans (the one
run least recently is forgotten first; closed sessions' plans go that way). A stage
record takes the recorder's lock once and does a few dictionary and deque operations:
a few microseconds against a step's half millisecond.

The rest are pure functions over what a worker holds, for the page: the memory held
by a ``ResourceStore``'s variables and queues (``store_memory``) and a ``WorkerPlan``
as the page draws it (``plan_layout``). Nothing here imports the worker's runtime.
"""

from __future__ import annotations

import collections
import logging
import sys
import threading
import time
from collections.abc import Iterable, Sequence
from typing import Any

logger = logging.getLogger(__name__)

WINDOW_S = 10.0  # steps/s and recent stage times are taken over this window
STEP_TIMES = 2048  # step start times kept per plan
_STAGE_TIMES = 256  # run times kept per stage
_RECENT_STEPS = 64  # step ids remembered per plan, to count each step once
MAX_PLANS = 64  # plans remembered per process
RUNS_KEPT = 4096  # stage runs kept per worker for Dask's task stream, until taken
_MAX_OPS_LISTED = 40  # ops per stage the page lists by name
CLIENT = "client"  # the destination name of what a stage returns to the client


def nbytes(value: Any) -> int:
    """Bytes of one stage output: an array's ``nbytes``, else Python's own estimate."""
    n = getattr(value, "nbytes", None)
    if isinstance(n, int):
        return n
    return sys.getsizeof(value) if value is not None else 0


def _sizes(outs: Any) -> list[int]:
    """Each stage output's bytes (none when ``outs`` is not a sequence of outputs)."""
    try:
        return [nbytes(o) for o in outs]
    except Exception:
        return []


class StageStats:
    """One stage's runs on this worker."""

    __slots__ = ("index", "device", "name", "calls", "runs", "seconds", "times", "sends")

    def __init__(self, part: Any) -> None:
        stage = part.stage
        self.index: int = stage.index
        self.device: str = stage.device
        self.name: str = part.label or stage.key_name
        self.calls: int = len(stage.calls)
        self.runs = 0
        self.seconds = 0.0
        self.times: collections.deque = collections.deque(maxlen=_STAGE_TIMES)
        position = {slot: i for i, slot in enumerate(stage.outputs)}
        # [destination, output positions, bytes so far]; the client last.
        self.sends: list[list[Any]] = [
            [dest, tuple(position[s] for s in slots), 0] for dest, slots in part.send_to
        ]
        if part.client_slots:
            self.sends.append([CLIENT, tuple(position[s] for s in part.client_slots), 0])


class PlanStats:
    """One plan key's steps on this worker."""

    __slots__ = ("key", "plan_id", "worker", "session", "steps", "times", "recent", "stages")

    def __init__(self, key: str, session: str) -> None:
        self.key = key
        self.plan_id, _, self.worker = key.rpartition("/")
        self.session = session
        self.steps = 0
        self.times: collections.deque = collections.deque(maxlen=STEP_TIMES)
        self.recent: collections.OrderedDict[str, None] = collections.OrderedDict()
        self.stages: dict[int, StageStats] = {}


class StepRecorder:
    """The per-process account of steps, stages and bytes (module global ``RECORDER``)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._plans: dict[str, PlanStats] = {}
        self._runs: dict[str, collections.deque] = {}  # worker name -> task-stream records
        self._failed = False

    def stage(
        self,
        key: str,
        part: Any,
        step: str,
        seconds: float,
        outs: Sequence,
        resident: bool = False,
    ) -> None:
        """Records one run of ``part`` (a ``StagePart``) of plan ``key`` in step ``step``,
        which ended just now; a ``resident`` run also as a task-stream record (the
        task-graph path's runs are Dask tasks, which Dask records itself).

        Never raises: the page must not break a step."""
        self._record(key, part, step, seconds, _sizes(outs), resident, time.time())

    def stage_later(
        self, loop: Any, key: str, part: Any, step: str, seconds: float, outs: Sequence
    ) -> None:
        """``stage(..., resident=True)`` once the event loop's current turn is over, so
        that a resident step's sends and reply go out first (about 15 us a stage off a
        step's critical path). Only the outputs' sizes are kept: holding the outputs
        would keep a variable's buffer from being updated in place."""
        loop.call_soon(self._record, key, part, step, seconds, _sizes(outs), True, time.time())

    def _record(
        self,
        key: str,
        part: Any,
        step: str,
        seconds: float,
        sizes: Sequence[int],
        resident: bool,
        stop: float,
    ) -> None:
        try:
            if resident and part.group:
                self._add_run(key, part, step, seconds, sizes, stop)
            with self._lock:
                plan = self._plans.get(key)
                if plan is None:
                    plan = self._add_plan(key, step.rpartition("-")[2])
                recent = plan.recent
                if step not in recent:
                    recent[step] = None
                    if len(recent) > _RECENT_STEPS:
                        recent.popitem(last=False)
                    plan.steps += 1
                    plan.times.append(time.time())
                stats = plan.stages.get(part.stage.index)
                if stats is None:
                    stats = plan.stages[part.stage.index] = StageStats(part)
                stats.runs += 1
                stats.seconds += seconds
                stats.times.append(seconds)
                for send in stats.sends:
                    total = 0
                    for i in send[1]:
                        total += sizes[i]
                    send[2] += total
        except Exception:
            if not self._failed:  # once: this runs every stage
                self._failed = True
                logger.debug("dataflow: could not record a stage for the dashboard", exc_info=True)

    def _add_run(
        self, key: str, part: Any, step: str, seconds: float, sizes: Sequence[int], stop: float
    ) -> None:
        number, _, session = step.partition("-")
        worker = key.rpartition("/")[2]
        record = {
            # The key the stage's task has on the task-graph path (``lowering.stage_keys``).
            "key": (part.group, session, int(number), part.stage.index),
            "thread": threading.get_ident(),
            "startstops": ({"action": "compute", "start": stop - seconds, "stop": stop},),
            "status": "OK",
            "nbytes": sum(sizes),
            "type": "tuple",
            "typename": "tuple",
            "metadata": {},
        }
        runs = self._runs.get(worker)
        if runs is None:
            runs = self._runs.setdefault(worker, collections.deque(maxlen=RUNS_KEPT))
        runs.append(record)  # a deque's append is atomic: no lock

    def take_runs(self, worker: str) -> list[dict]:
        """The stage runs of ``worker`` recorded since the last call, oldest first, as
        task-stream records without the ``worker`` field (its address, which the
        scheduler knows)."""
        runs = self._runs.get(worker)
        out: list[dict] = []
        while runs:
            try:
                out.append(runs.popleft())
            except IndexError:  # taken meanwhile
                break
        return out

    def _add_plan(self, key: str, session: str) -> PlanStats:
        if len(self._plans) >= MAX_PLANS:
            stalest = min(self._plans.values(), key=lambda p: p.times[-1] if p.times else 0.0)
            del self._plans[stalest.key]
        plan = self._plans[key] = PlanStats(key, session)
        return plan

    def report(self, worker: str | None = None, now: float | None = None) -> list[dict]:
        """The plans of ``worker`` (every worker's if ``None``; several share a process
        in a threaded cluster), as plain data."""
        now = time.time() if now is None else now
        with self._lock:
            plans = [
                (p, list(p.times), p.steps, list(p.stages.values()))
                for p in self._plans.values()
                if worker is None or p.worker == worker
            ]
            stage_rows = {
                id(s): (s.runs, s.seconds, list(s.times), [tuple(x) for x in s.sends])
                for _, _, _, stages in plans
                for s in stages
            }
        out = []
        for plan, times, steps, stages in plans:
            window = [t for t in times if t > now - WINDOW_S]
            rows = []
            for s in sorted(stages, key=lambda s: s.index):
                runs, seconds, recent, sends = stage_rows[id(s)]
                last = recent[-len(window) :] if window else []
                rows.append(
                    {
                        "index": s.index,
                        "name": s.name,
                        "device": s.device,
                        "calls": s.calls,
                        "runs": runs,
                        "mean_s": seconds / runs if runs else 0.0,
                        "recent_mean_s": sum(last) / len(last) if last else None,
                        "recent_max_s": max(last) if last else None,
                        "sends": [
                            {"to": dest, "bytes": total, "bytes_per_run": total / runs}
                            for dest, _, total in sends
                        ],
                    }
                )
            out.append(
                {
                    "key": plan.key,
                    "plan": plan.plan_id,
                    "worker": plan.worker,
                    "session": plan.session,
                    "steps": steps,
                    "steps_per_s": steps_per_second(window, times, now),
                    "last_step": times[-1] if times else None,
                    "stages": rows,
                }
            )
        return out


def steps_per_second(window: Sequence[float], times: Sequence[float], now: float) -> float:
    """Steps/s over the last ``WINDOW_S`` seconds (``window``: the step times in it;
    ``times``: all those kept, oldest first). When every kept time is in the window
    (the plan started within it, or ran faster than ``STEP_TIMES`` per window), the
    rate is measured from the oldest: a plan run once has none."""
    if not window:
        return 0.0
    if window[0] != times[0]:
        return len(window) / WINDOW_S
    return (len(window) - 1) / max(now - window[0], 1e-3)


RECORDER = StepRecorder()


# --- what the page shows of a worker's state ----------------------------------------------
def store_memory(stores: Iterable[Any]) -> list[dict]:
    """Bytes held by each store's variables and queues: one row per store (device).

    A queue is any stored object with ``size()``; its bytes are its ``nbytes()`` where
    it has one."""
    rows = []
    for store in stores:
        variables = 0
        variable_bytes = 0
        for name in store.names():
            try:
                value = store.read(name)
            except Exception:  # deleted meanwhile
                continue
            variables += 1
            variable_bytes += nbytes(value)
        queues = elements = queue_bytes = 0
        for obj in store.objects().values():
            size = getattr(obj, "size", None)
            if not callable(size):
                continue
            queues += 1
            elements += size()
            held = getattr(obj, "nbytes", None)
            queue_bytes += held() if callable(held) else 0
        rows.append(
            {
                "device": store.device,
                "variables": variables,
                "variable_bytes": variable_bytes,
                "queues": queues,
                "queue_elements": elements,
                "queue_bytes": queue_bytes,
            }
        )
    return rows


def plan_layout(plan: Any) -> dict:
    """A ``WorkerPlan`` as the page draws it: its stages, their devices and ops, and
    the slots that link them to the stages of the plan's other workers."""
    stages = []
    for part in plan.parts:
        stage = part.stage
        stages.append(
            {
                "index": stage.index,
                "name": part.label or stage.key_name,
                "device": stage.device,
                "calls": len(stage.calls),
                "ops": [[c.op_name, c.op_type] for c in stage.calls[:_MAX_OPS_LISTED]],
                "inputs": list(stage.inputs),
                "outputs": list(stage.outputs),
                "control_inputs": list(stage.control_inputs),
                "sends_to": [dest for dest, _ in part.send_to],
                "to_client": bool(part.client_slots),
            }
        )
    return {"key": plan.key, "plan": plan.plan_id, "worker": plan.worker, "stages": stages}
