"""The task-graph path of the Dask backend (``ConfigProto(resident_steps=False)``).

``GraphPath`` is a mixin of ``DaskBackend`` (``dask/backend.py``), as ``ResidentPath``
(``dask/resident.py``) is for the default path. A step is one ``HighLevelGraph``, one
task per stage (``lowering.step_graph``), submitted with ``Client.get`` and gathered; it
ends early when a worker it needs is lost, its deadline passes or the scheduler
connection drops (``_wait``). ``to_dask`` gives the same graph as a Dask collection.

**Keys that repeat.** Everything the scheduler and the workers keep per key name
(Dask's ``key_split`` cache of 100,000 keys in every process, the per-key entries of
their logs and digests) grows with every new key, and a step whose keys are all new
left a few hundred bytes per key behind in each process until those caches filled,
some 30,000 steps later. So a stage's key carries a *key slot*, not the step number:
``(group, session, slot, stage index)``. A step takes the lowest free slot
(``KeySlots``) and gives it back once it has succeeded and its futures are released;
one session thread running steps uses slot 1 for ever, ``k`` threads at once use
``1..k``. The step itself keeps its unique id (``f"{number}-{session}"``), which the
stage tasks receive (the workers cancel and record steps by it). A key is reused only
when that is safe:

* the step that used it *succeeded*: every stage task had finished (every stage is an
  ancestor of a gathered one), so no worker still runs it. A failed, cancelled or timed
  out step retires its slot for good: a worker may still be running a stage that the
  scheduler has forgotten, and Dask would resume that run, result and all, for a new
  task of the same key;
* this client holds no reference to any of its keys any more (``Client.refcount``): the
  futures are released at the end of the step, and the release travels to the scheduler
  on the client's batched stream ahead of the next step's graph, so the scheduler has
  forgotten the old tasks (and told their workers, whose stream is in order too) before
  the new ones arrive. A slot whose release is still queued is skipped, not waited for.

Task groups: Dask names a group after a key's first element (the stage and the plan's
signature) and drops it once all its keys are forgotten, which they are between two
steps; ``_keep_groups`` holds one key of each group (slot 0) for the session's life.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import threading
import time
from collections.abc import Callable
from typing import Any

from distributed.comm.core import CommClosedError

from ...framework import errors
from ..config import StepTrace
from . import cluster_view, task_spec
from .lowering import LoweredPlan, stage_keys, step_graph
from .resident import BoundPlan, StepWatch, assemble_fetches
from .task_spec import StepGraph
from .worker_state import PlanMissingError, run_stage

# How often a step waiting on the cluster checks that the scheduler connection holds.
SCHEDULER_POLL_S = 0.5


class KeySlots:
    """The numbers a session's task-graph steps put in their keys: the lowest free one
    first, so that the set stays as small as the number of steps run at once. Slot 0
    belongs to the task-group anchors."""

    def __init__(self) -> None:
        self._free: list[int] = []  # a heap
        self._next = 1
        self._lock = threading.Lock()

    def take(self, busy: Callable[[int], bool]) -> int:
        """The lowest free slot that ``busy`` does not refuse, else a new one."""
        with self._lock:
            skipped = []
            slot = None
            while self._free:
                n = heapq.heappop(self._free)
                if busy(n):
                    skipped.append(n)
                else:
                    slot = n
                    break
            for n in skipped:
                heapq.heappush(self._free, n)
            if slot is None:
                slot, self._next = self._next, self._next + 1
            return slot

    def give_back(self, slot: int) -> None:
        """``slot`` may be used again (its step succeeded)."""
        with self._lock:
            heapq.heappush(self._free, slot)

    @property
    def made(self) -> int:
        """How many slots were ever handed out (the keys a stage has had, less one)."""
        return self._next - 1


class GraphPath:
    """The task-graph methods of ``DaskBackend``, which provides what is declared here."""

    client: Any
    view: cluster_view.ClusterView
    session_id: str
    _steps: Any  # itertools.count of step numbers
    _group_anchors: dict[str, Any]
    _key_slots: KeySlots
    # Defined by DaskBackend:
    _unavailable: Callable[[StepWatch, BaseException | None], errors.OpError]
    check_scheduler: Callable[[], None]
    _cancel_on_workers: Callable[[str | None, list[str], list[str]], None]
    _execute: Callable[..., list[Any]]

    def _keep_groups(self, lowered: LoweredPlan, timeout: float | None = None) -> None:
        """Holds, for each stage's task group, one tiny key of that group for as long as
        the session lives.

        The scheduler names a task group after its key's first element (the stage and
        the session: ``lowering.stage_keys``), drops a group once all its keys are
        forgotten, and makes a new one for the next key of that name, while a span keeps
        every group it ever held. Between two steps a stage's group would be empty, so
        each step would leave one more group in the session's span (about 2.5 KB each,
        for as long as the scheduler runs); with one key always in it, every step of the
        stage joins the same group. The anchor is the task ``int()`` (a ``0``) under the
        key slot 0 (steps take slots from 1), computed once on any worker and held:
        computed, not scattered, so that a worker lost while holding it takes a key the
        scheduler simply computes again (a scattered key it cannot recompute, and it
        logs an ERROR naming each one), and it is in place before the plan's first step
        (not arriving during later steps, or during interpreter exit).

        Only task-graph steps make groups, so this runs before a plan's first one, not
        when a plan is bound (a resident session never waits for it), and it waits no
        longer than that step may take: the anchors need a free worker thread, and
        every thread may be busy with an earlier step's kernel that timed out.
        """
        new = {
            key[0]: key
            for key in stage_keys(lowered, f"0-{self.session_id}")
            if key[0] not in self._group_anchors
        }
        if not new or self.client.status != "running":
            return
        keys = list(new.values())
        anchors = {key: task_spec.task(key, int) for key in keys}
        graph = task_spec.layered_graph({f"anchors-{self.session_id}": (anchors, {})}, {})
        # The scheduler lost while the anchors are sent is a lost cluster like any other
        # (distributed's own CommClosedError): UnavailableError, which recovery retries on.
        with cluster_view.comm_failures_as_unavailable("binding a new step (its task groups)"):
            futures = self.client.get(graph, keys, sync=False)
            self._group_anchors.update((key[0], f) for key, f in zip(keys, futures, strict=True))
            deadline = None if timeout is None else time.monotonic() + timeout
            try:  # computed before the first step, not during later ones
                for future in futures:
                    left = None if deadline is None else max(1e-3, deadline - time.monotonic())
                    future.result(timeout=left)
            except TimeoutError:
                raise errors.DeadlineExceededError(
                    None,
                    None,
                    f"Timed out: no worker thread was free within {timeout:g} s to start "
                    "the step (each is running a kernel of an earlier step)",
                ) from None

    def _traced_graph_step(
        self, bound: BoundPlan, feed_values: list[Any], run_metadata: StepTrace, timeout: Any
    ) -> list[Any]:
        """A task-graph step with each stage's compute time on its worker, from Dask's
        task stream, in ``run_metadata.step_stats``."""
        import distributed

        self.check_scheduler()
        keys: list[tuple] = []
        with distributed.get_task_stream(client=self.client) as stream:
            out = self._execute(bound, feed_values, timeout, False, keys)
        templates = bound.lowered.templates
        mine = {key: templates[key[3]] for key in keys}
        wall_to_perf = time.perf_counter() - time.time()  # the task stream's clock is wall time
        for record in stream.data:
            key = record["key"]
            t = mine.get(tuple(key)) if isinstance(key, (tuple, list)) else None
            if t is None:
                continue
            for span in record.get("startstops", ()):
                if span.get("action") != "compute":
                    continue
                run_metadata.step_stats.append(
                    {
                        "name": t.name,
                        "type": bound.plan.stages[t.index].main_op or "Stage",
                        "device": bound.plan.stages[t.index].device,
                        "thread": 0,
                        "start_us": (span["start"] + wall_to_perf) * 1e6,
                        "end_us": (span["stop"] + wall_to_perf) * 1e6,
                    }
                )
        return out

    def _key_slot_busy(self, lowered: LoweredPlan, slot: int) -> bool:
        """Whether this client still holds a reference to one of the plan's keys in
        ``slot`` (a release queued on its event loop, not yet sent)."""
        held = self.client.refcount
        return any(key in held for key in stage_keys(lowered, f"{slot}-{self.session_id}"))

    async def _run_graph(
        self,
        lowered: LoweredPlan,
        step: str,
        feed_values: list[Any],
        addresses: dict[str, str],
        watch: StepWatch,
        timeout: float | None,
        keys_out: list | None = None,
    ) -> list[Any]:
        slot = self._key_slots.take(lambda n: self._key_slot_busy(lowered, n))
        graph, keys = step_graph(lowered, step, feed_values, run_stage, f"{slot}-{self.session_id}")
        if keys_out is not None:
            keys_out.extend(keys)
        # Every stage is wanted, though only result stages are gathered: the scheduler's
        # cancel walks from a cancelled key to its dependents and asserts that a client
        # wants each (distributed 2026.8), which a stage feeding another does not, and
        # the failed assertion drops the client's connection.
        everything = self.client.get(graph, keys, sync=False)
        succeeded = False
        try:
            futures = [everything[i] for i in lowered.result_stages]
            gather = asyncio.ensure_future(self.client.gather(futures, asynchronous=True))

            async def stop() -> None:
                # Cancelling the Dask futures ends the gather (whose inner tasks must not
                # be cancelled from outside); a stage blocked in a queue is woken to fail,
                # so a step given up on never takes an element later.
                await self.client.cancel(everything, asynchronous=True)
                lost = watch.lost.name if watch.lost is not None else None
                self._cancel_on_workers(
                    None, [step], [a for name, a in addresses.items() if name != lost]
                )

            results = await self._wait(gather, watch, timeout, step, stop)
            succeeded = True
        finally:
            # Released now (not whenever the futures are collected), so that the next
            # step can use the slot again; a failed step's slot is never used again.
            for future in everything:
                future.release()
            if succeeded:
                self._key_slots.give_back(slot)
        by_stage = dict(zip(lowered.result_stages, results, strict=True))
        return assemble_fetches(lowered, feed_values, lambda stage, pos: by_stage[stage][pos])

    async def _wait(
        self, work: asyncio.Future, watch: StepWatch, timeout: float | None, step: str, stop: Any
    ) -> Any:
        """``work``'s result, unless a needed worker is lost or the deadline passes; then
        ``stop()`` ends the work, which is awaited (its outcome ignored)."""
        for name in watch.workers:  # lost before the watch was registered?
            if watch.lost is None and self.view.address_of(name) is None:
                watch.lost = cluster_view.WorkerInfo(name, "?", 0, 0)
                watch.event.set()
        lost = asyncio.ensure_future(watch.event.wait())
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        try:
            # In slices, to notice a lost scheduler: the client cancels the futures it
            # had then, but a step submitted while it reconnects would wait for it.
            while True:
                wait = SCHEDULER_POLL_S
                if deadline is not None:
                    wait = max(0.0, min(wait, deadline - loop.time()))
                done, _ = await asyncio.wait(
                    {work, lost}, timeout=wait, return_when=asyncio.FIRST_COMPLETED
                )
                if (
                    done
                    or not self.view.connected()
                    or (deadline is not None and loop.time() >= deadline)
                ):
                    break
        finally:
            lost.cancel()
        if work in done:
            try:
                return work.result()
            except (errors.OpError, PlanMissingError):
                raise
            except Exception as exc:
                await self._notice_lost_scheduler(exc)
                self.check_scheduler()
                raise self._unavailable(watch, exc) from None
        if not self.view.connected():
            work.cancel()  # nothing to cancel on a scheduler that is gone
            self.check_scheduler()
        await stop()
        with contextlib.suppress(Exception, asyncio.CancelledError):  # its outcome is moot
            await asyncio.wait_for(work, 5)
        if watch.lost is not None:
            raise self._unavailable(watch, None)
        raise errors.DeadlineExceededError(
            None, None, f"Timed out: step {step} did not finish within {timeout:g} s"
        )

    async def _notice_lost_scheduler(self, exc: BaseException) -> None:
        """After ``exc`` ended a step's gather: when it is a closed connection, waits (at
        most ``SCHEDULER_POLL_S``) for the client to notice a lost scheduler. A gather
        runs on a pooled connection to the scheduler, and when the scheduler dies it may
        fail before the client's own scheduler stream, read on this same loop, has
        marked the client disconnected; the step then reports the lost scheduler, as
        every later step does, not the closed connection."""
        if not isinstance(exc, (CommClosedError, OSError)):
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + SCHEDULER_POLL_S
        while self.view.connected() and loop.time() < deadline:
            await asyncio.sleep(0.01)

    # --- inspection ---------------------------------------------------------------------
    def to_dask(self, bound: BoundPlan, feed_values: list[Any]) -> StepGraph:
        """The graph one step would submit (one task per stage), as a Dask collection.

        Its keys carry the step's own number, not a key slot: the caller computes it
        when it likes, perhaps more than once, and its keys must not meet a running
        step's."""
        lowered = bound.lowered
        step = f"{next(self._steps)}-{self.session_id}"
        graph, keys = step_graph(lowered, step, feed_values, run_stage, f"-{step}")

        def finish(results: list) -> list[Any]:
            by_stage = dict(zip(lowered.result_stages, results, strict=True))
            return assemble_fetches(lowered, feed_values, lambda stage, pos: by_stage[stage][pos])

        return StepGraph(graph, [keys[i] for i in lowered.result_stages], finish)
