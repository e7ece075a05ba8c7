"""Lowering: a placed ``Plan`` becomes per-worker plans and a per-step Dask graph.

``lower(plan, worker_of_device, ...)`` is a pure function run once per compiled plan. It
produces a ``LoweredPlan`` holding:

* one ``WorkerPlan`` per worker the plan touches: that worker's stages plus, for each
  stage, where its inputs come from. Workers keep these (installed once per plan), so a
  step's tasks carry only a plan id, a stage index, a step id, the feeds the stage reads
  and references to the stages it reads: a task's size does not grow with the op count;
* one ``StageTemplate`` per stage: its key name, its worker, the Dask resources that pin
  it, the feeds and upstream stages it reads;
* where each fetch comes from (a feed, or a position in a stage's output tuple), and the
  stages whose results the client must ask for (fetched ones and sinks, so stages run
  for effect still run).

``step_graph(lowered, step, feed_values, run_stage)`` then builds one step's graph: one
``Task`` per stage, keyed ``(f"{stage label}@{job}:{task}-{plan signature}",
session, step number, stage index)`` (``stage_keys``: unique per step, readable in the
dashboard, and one Dask task group per stage and plan for every step, since Dask names a
group after the key's first element). The label (``Plan.stage_label``: a countdown to
the plan's last stage, ``group_names`` says why, and its main op) is the stage's name in
every view: the ``Plan``, the dataflow page, Dask's keys and task stream. Each task
has a ``HighLevelGraph`` layer of its own, annotated with
``resources={"dataflow-<worker>": 1}`` (plus ``{"GPU": 1}`` for GPU stages) and the
session's span. A stage task returns the tuple of its outputs; Dask moves these tuples
between workers, which is TF's Send/Recv.

Example: a ridge step with ``beta`` on ``/job:ps/task:0`` and the gradient on
``/job:worker/task:0`` lowers to three tasks, ``2.beta/Read@ps:0`` -> ``1.grad/MatMul@worker:0``
-> ``0.AssignSub@ps:0``, whatever the number of ops inside each.

The same ``WorkerPlan``s serve the resident path (``ConfigProto(resident_steps=True)``):
each lists, per stage, the remote stages it waits for (``remote_waits``), the workers
its outputs go to (``send_to``) and the slots the client fetches (``client_slots``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...framework.device_spec import DeviceSpec
from ..compile.plan import Plan, Stage
from . import task_spec

# Where a stage input comes from, for the Dask path: ("f", i) is the stage's i-th feed
# argument; ("u", j, pos) is position ``pos`` of the j-th upstream stage's outputs.
Source = tuple


@dataclass(frozen=True, slots=True)
class StagePart:
    """One stage as its worker keeps it."""

    stage: Stage
    sources: tuple[Source, ...]  # per stage input, for the Dask path
    remote_waits: tuple[int, ...]  # stages on other workers to wait for
    send_to: tuple[tuple[str, tuple[int, ...]], ...]  # (worker, output slots it needs)
    client_slots: tuple[int, ...]  # output slots the client fetches
    label: str = ""  # the stage's name in every view (``Plan.stage_label``)
    group: str = ""  # its Dask task group (``group_names``), the key's first element


@dataclass(frozen=True, slots=True)
class WorkerPlan:
    """The part of a plan one worker runs (picklable; installed on the worker)."""

    key: str  # unique per (plan, worker): f"{plan_id}/{worker}"
    plan_id: str
    worker: str
    container: str
    debug: bool
    slot_specs: tuple
    parts: tuple[StagePart, ...]  # in plan order
    session: str = ""  # the session's id: its private resources' names (kernel_context)

    def part(self, index: int) -> StagePart:
        for p in self.parts:
            if p.stage.index == index:
                return p
        raise KeyError(index)


@dataclass(frozen=True, slots=True)
class StageTemplate:
    """What the client needs to emit one stage's task each step."""

    index: int
    worker: str
    plan_key: str
    name: str  # key prefix: "<stage label>@<job>:<task>"
    annotations: dict[str, Any]
    feed_positions: tuple[int, ...]  # indices into the step's feed values
    upstream: tuple[int, ...]  # stage indices read (data first, then control)


@dataclass(frozen=True, slots=True)
class LoweredPlan:
    plan: Plan
    plan_id: str
    worker_plans: dict[str, WorkerPlan]
    templates: tuple[StageTemplate, ...]
    result_stages: tuple[int, ...]  # stages whose results the client gathers
    fetch_sources: tuple[tuple, ...]  # ("n",) | ("f", feed index) | ("s", stage, pos)
    feeds_by_worker: dict[str, tuple[tuple[int, int], ...]]  # worker -> (slot, feed idx)

    @property
    def workers(self) -> list[str]:
        return list(self.worker_plans)


def resource_name(worker: str) -> str:
    """The Dask resource that pins a task to ``worker`` (a worker name)."""
    return f"dataflow-{worker}"


def device_label(device: str) -> str:
    """Short device name for keys: ``ps:0``, ``worker:1/GPU:0``."""
    spec = DeviceSpec.from_string(device)
    label = f"{spec.job}:{spec.task}"
    if spec.device_type == "GPU":
        label += f"/GPU:{spec.device_index}"
    return label


def _key_safe(text: str) -> str:
    # Dask's key_split cuts names at '-' followed by a non-alphabetic word: keep the
    # op and device in the first word so the dashboard groups tasks by them.
    return text.replace("-", "_").replace(" ", "_")


def lower(
    plan: Plan,
    worker_of_device: Mapping[str, str],
    plan_id: str,
    container: str = "",
    debug: bool = False,
    session: str = "",
) -> LoweredPlan:
    """Splits ``plan`` by worker (``worker_of_device`` maps each stage's device); the
    worker plans carry ``session``, the id of the session that runs them."""
    stages = plan.stages
    worker_of_stage = [worker_of_device[s.device] for s in stages]
    producer: dict[int, tuple[int, int]] = {}  # slot -> (stage, position in outputs)
    for s in stages:
        for pos, slot in enumerate(s.outputs):
            producer[slot] = (s.index, pos)
    feed_index = {slot: i for i, slot in enumerate(plan.feed_slots)}
    fetched = set(s for s in plan.fetch_slots if s >= 0 and s not in feed_index)

    # Who reads each stage (data or control), per worker.
    readers: dict[int, dict[str, set[int]]] = {s.index: {} for s in stages}
    has_dependents: set[int] = set()
    templates: list[StageTemplate] = []
    sources_of: dict[int, tuple[Source, ...]] = {}
    feeds_of_worker: dict[str, dict[int, int]] = {}
    for s in stages:
        worker = worker_of_stage[s.index]
        upstream: list[int] = []
        sources: list[Source] = []
        feed_positions: list[int] = []
        for slot in s.inputs:
            if slot in producer:
                src, pos = producer[slot]
                if src not in upstream:
                    upstream.append(src)
                sources.append(("u", upstream.index(src), pos))
                readers[src].setdefault(worker, set()).add(slot)
            else:
                sources.append(("f", len(feed_positions)))
                feed_positions.append(feed_index[slot])
                feeds_of_worker.setdefault(worker, {})[slot] = feed_index[slot]
        for src in s.control_inputs:
            if src not in upstream:
                upstream.append(src)
            readers[src].setdefault(worker, set())
        has_dependents.update(upstream)
        sources_of[s.index] = tuple(sources)
        device = device_label(s.device)
        annotations: dict[str, Any] = {"resources": {resource_name(worker): 1}}
        if DeviceSpec.from_string(s.device).device_type == "GPU":
            annotations["resources"]["GPU"] = 1
        templates.append(
            StageTemplate(
                s.index,
                worker,
                f"{plan_id}/{worker}",
                f"{_key_safe(plan.stage_label(s.index))}@{_key_safe(device)}",
                annotations,
                tuple(feed_positions),
                tuple(upstream),
            )
        )

    groups = _group_names(templates)
    parts_of: dict[str, list[StagePart]] = {}
    for s in stages:
        worker = worker_of_stage[s.index]
        waits = sorted(j for j in templates[s.index].upstream if worker_of_stage[j] != worker)
        send_to = tuple(
            (w, tuple(sorted(slots))) for w, slots in readers[s.index].items() if w != worker
        )
        client_slots = tuple(slot for slot in s.outputs if slot in fetched)
        parts_of.setdefault(worker, []).append(
            StagePart(
                s,
                sources_of[s.index],
                tuple(waits),
                send_to,
                client_slots,
                plan.stage_label(s.index),
                groups[s.index],
            )
        )
    worker_plans = {
        w: WorkerPlan(
            f"{plan_id}/{w}", plan_id, w, container, debug, plan.slot_specs, tuple(parts), session
        )
        for w, parts in parts_of.items()
    }

    fetch_sources: list[tuple] = []
    for slot in plan.fetch_slots:
        if slot < 0:
            fetch_sources.append(("n",))
        elif slot in feed_index:
            fetch_sources.append(("f", feed_index[slot]))
        else:
            fetch_sources.append(("s",) + producer[slot])
    result = sorted(
        {src[1] for src in fetch_sources if src[0] == "s"}
        | {s.index for s in stages if s.index not in has_dependents}
    )
    return LoweredPlan(
        plan,
        plan_id,
        worker_plans,
        tuple(templates),
        tuple(result),
        tuple(fetch_sources),
        {w: tuple(sorted(f.items())) for w, f in feeds_of_worker.items()},
    )


def stage_keys(lowered: LoweredPlan, step: str) -> list[tuple[str, str, int, int]]:
    """The Dask key of each stage for one step ``f"{number}-{session}"``:
    ``(group, session, number, stage index)``, ``group`` being
    ``f"{stage label}@{device}-{signature}"`` (``group_names``).

    The key's first element is what Dask names the task group after (and its first
    word the task prefix), so it names the stage and the plan's signature, never the
    step: consecutive steps of a stage share one group and one prefix (a first element
    naming the step made the scheduler keep one group per stage per step, about 2.5 KB
    each, for as long as it runs). The session and the number make the key unique among
    the steps running at once: the task-graph path passes a key slot as the number, which
    later steps reuse (``graph_path.KeySlots``), so that a plan's keys repeat.
    """
    number, _, session = step.rpartition("-")  # a number may be negative (``to_dask``)
    groups = group_names(lowered)
    n = int(number)
    return [(groups[t.index], session, n, t.index) for t in lowered.templates]


def group_names(lowered: LoweredPlan) -> list[str]:
    """The task-group name of each stage: ``"2.beta/Read@ps:0-1f03a9c2"``.

    * ``2.beta/Read`` is the stage's label (``Plan.stage_label``: the name the ``Plan``
      view and the dataflow page give it too) and ``ps:0`` its device
      (``StageTemplate.name``);
    * ``1f03a9c2`` is the plan's *signature*, a hash of its stages' names, workers and
      edges: the same graph gives the same groups in every session (a restarted job's
      steps join the groups of the last run), and different plans never share one;
    * the label's number counts down to the plan's last stage, so that the names of
      the stages a stage reads sort *above* its own. Dask's Groups page lays groups out
      in the order ``dask.order`` gives their names, which (dask 2026.8) ignores the
      dependencies it is passed and so falls back on descending names; a group laid out
      before one it reads made the page fail with a ``KeyError``. Stage indices are in
      execution order, so the countdown puts every stage's inputs first, and an order
      that does honour the dependencies is unaffected.
    """
    return _group_names(lowered.templates)


def _group_names(templates: Sequence[StageTemplate]) -> list[str]:
    signature = hashlib.blake2s(
        repr([(t.name, t.worker, t.upstream) for t in templates]).encode(), digest_size=4
    ).hexdigest()
    return [f"{t.name}-{signature}" for t in templates]


def step_graph(
    lowered: LoweredPlan,
    step: str,
    feed_values: Sequence[Any],
    run_stage: Callable,
    key_step: str | None = None,
) -> tuple[task_spec.HighLevelGraph, list]:
    """One step's graph and its stage keys.

    Each task is ``run_stage(plan_key, stage_index, step, feeds, *upstream_results)``.
    The keys are ``stage_keys(lowered, key_step)``, ``key_step`` defaulting to ``step``:
    the task-graph path passes a reused key slot there (``graph_path.KeySlots``), so
    that a plan's keys repeat from step to step while ``step`` stays unique.
    """
    keys = stage_keys(lowered, key_step or step)
    # One layer per stage: layers of one device would depend on each other in a cycle
    # whenever a step goes ps -> worker -> ps.
    layers: dict[str, tuple[dict, dict]] = {}
    dependencies: dict[str, list[str]] = {}
    names = ["-".join(map(str, k)) for k in keys]
    for t in lowered.templates:
        key = keys[t.index]
        feeds = tuple(feed_values[i] for i in t.feed_positions)
        node = task_spec.task(
            key,
            run_stage,
            t.plan_key,
            t.index,
            step,
            feeds,
            *[task_spec.ref(keys[j]) for j in t.upstream],
        )
        layers[names[t.index]] = ({key: node}, t.annotations)
        dependencies[names[t.index]] = [names[j] for j in t.upstream]
    return task_spec.layered_graph(layers, dependencies), keys
