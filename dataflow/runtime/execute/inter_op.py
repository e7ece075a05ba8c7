"""Inter-op parallelism of the embedded runtime: stages on different devices at once.

With several local devices (``ConfigProto(device_count={"CPU": n})``) a plan can hold
stages that do not depend on each other, e.g. two matmuls on ``/cpu:0`` and ``/cpu:1``
feeding one sum. TF1 runs such ops at the same time on its inter-op thread pool; here
``ConcurrentPlan`` does the same for stages, each stage still one generated function
(``executor.StageFunction``). numpy releases the GIL inside its kernels, so two large
kernels really do run on two cores.

**The order kept** (``StageGraph``, computed once per plan). A stage waits for

* the stages producing its inputs (TF's Send/Recv edges),
* the stages it follows by control edges alone (``Stage.control_inputs``),
* the previous stage *on its own device*: one device runs its stages in plan order,
  as the sequential executor does, so stateful ops on one device (variable updates,
  queue ops) keep their program order.

Everything else may overlap. A plan whose stages form one chain under these waits has
nothing to overlap and keeps the sequential ``EmbeddedPlan.run`` (``concurrent`` is
false), so only plans that can gain pay for threads.

**Running a step** (``_Step``). Ready stages sit in a per-step queue. The calling thread
takes stages from it until the step is over; when more than one stage is ready, helper
threads from the backend's pool (``inter_op_parallelism_threads - 1`` of them, one per
device less one by default) take the others. A thread that finishes a stage releases
its dependents and, if one is ready, runs it next itself, so a chain of stages costs no
thread hand-off. Values cross between stages through one slot dict under the step's
lock (numpy arrays are shared, never copied, between CPU devices).

**Short stages stay on the thread that has them.** Waking a helper costs tens of
microseconds, more than a small stage runs. Each stage's last run time is kept
(``ConcurrentPlan.cost``; unknown counts as long): only long stages are handed to
helpers, a thread takes short ready stages first, and once every stage of a plan has
run short, its steps run one stage after the other on the caller's thread, as
``EmbeddedPlan.run`` does, until a step takes clearly longer (its inputs grew); then the
stages are measured afresh. So a small step on several devices costs what it costs on
one.

**Errors.** The first stage to fail stops the step: no further stage starts, kernels
waiting in queues see ``cancelled()`` (``LocalDeviceContext``) and give up, and the step
returns only when every stage already running has finished, so no kernel still writes
state after ``run`` has raised. The caller gets the failing op's error.

**BLAS threads.** Two stages each calling a multi-threaded BLAS would oversubscribe the
cores (OpenBLAS collapses then, see DESIGN.md). From the moment a step hands a stage to
a helper to the end of that step, BLAS is held to one thread per stage
(``blas_threads.hold``; the limit is process-wide, so it is counted: the last running
step to finish restores the setting found before the first began).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from ..compile.plan import Plan
from . import blas_threads
from .context import DeviceContext
from .executor import EmbeddedPlan, translate_error
from .fp_state import restore, silence
from .step_copies import StepCopies


@dataclass(frozen=True, slots=True)
class StageGraph:
    """What each stage of a plan waits for (positions in ``plan.stages``)."""

    waits: tuple[int, ...]  # per stage, how many stages it waits for
    dependents: tuple[tuple[int, ...], ...]  # per stage, the stages waiting for it
    roots: tuple[int, ...]  # stages waiting for nothing
    concurrent: bool  # some two stages may run at the same time


def stage_graph(plan: Plan) -> StageGraph:
    """The waits of ``plan``'s stages (see the module docstring) and whether any two
    stages are unordered by them."""
    producer = {slot: s.index for s in plan.stages for slot in s.outputs}
    last_on: dict[str, int] = {}
    before: list[set[int]] = []
    for stage in plan.stages:
        waits = {producer[slot] for slot in stage.inputs if slot in producer}
        waits.update(stage.control_inputs)
        if stage.device in last_on:
            waits.add(last_on[stage.device])
        last_on[stage.device] = stage.index
        before.append(waits)
    # The stages are in a valid order; they are totally ordered by the waits exactly
    # when each one (transitively) waits for the one just before it.
    ancestors: list[int] = []  # bit set per stage
    concurrent = False
    for i, waits in enumerate(before):
        bits = 0
        for j in waits:
            bits |= ancestors[j] | (1 << j)
        ancestors.append(bits)
        if i and not bits >> (i - 1) & 1:
            concurrent = True
    dependents: list[list[int]] = [[] for _ in before]
    for i, waits in enumerate(before):
        for j in sorted(waits):
            dependents[j].append(i)
    return StageGraph(
        tuple(len(w) for w in before),
        tuple(tuple(d) for d in dependents),
        tuple(i for i, w in enumerate(before) if not w),
        concurrent,
    )


# Waking a helper thread costs tens of microseconds (measured on the 2-core development
# machine, benchmarks/bench_local_devices.py); a stage shorter than a few of those runs
# on a thread already running the step instead.
HAND_OFF_SECONDS = 100e-6


class _CurrentStep(threading.local):
    """The concurrent step a thread is running stages of (``None``: none)."""

    step: _Step | None = None


_current = _CurrentStep()


class LocalDeviceContext(DeviceContext):
    """The embedded session's kernel context: a kernel of a concurrent step is
    cancelled when another stage of its step fails, and keeps its caller's deadline on
    a helper thread."""

    def cancelled(self) -> bool:
        step = _current.step
        return step is not None and step.failed is not None

    def deadline(self) -> float | None:
        step = _current.step
        return step.deadline if step is not None else super().deadline()


class InterOpPool:
    """The helper threads of one embedded session (made on first use)."""

    def __init__(self, threads: int) -> None:
        self.helpers = threads - 1  # the thread calling ``run`` is the other one
        self._executor: ThreadPoolExecutor | None = None
        self._closed = False
        self._lock = threading.Lock()

    def submit(self, fn: Callable[[], None]) -> bool:
        """Runs ``fn`` on a helper thread; ``False`` once closed (the caller then runs
        the step's stages itself)."""
        with self._lock:
            if self._closed:
                return False
            if self._executor is None:
                self._executor = ThreadPoolExecutor(
                    self.helpers, thread_name_prefix="dataflow-inter-op"
                )
            self._executor.submit(fn)
        return True

    def close(self) -> None:
        """Lets the helper threads exit once their stages finish (closing a session
        does not wait for a step blocked elsewhere)."""
        with self._lock:
            self._closed = True
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=False)


class ConcurrentPlan:
    """A bound plan whose independent stages run at the same time (module docstring).

    Offers what the session uses of a bound plan: ``plan`` and ``run(feed_values)``.
    """

    def __init__(
        self,
        bound: EmbeddedPlan,
        graph: StageGraph,
        pool: InterOpPool,
        contexts: Mapping[str, DeviceContext],
        transfer: Callable[[Any, str, str], Any] | None = None,
    ):
        self.plan = bound.plan
        self.stages = bound.stages
        self.graph = graph
        self.pool = pool
        self.contexts = list(contexts.values())
        self.transfer = transfer
        # Seconds each stage took when it last ran; unknown counts as long, so a first
        # step overlaps whatever it can.
        self.cost = [float("inf")] * len(self.stages)
        # Once every stage has run shorter than a hand-off, threads cannot gain: steps
        # then run as ``bound.run`` does, one stage after the other, until one takes
        # clearly longer than those stages did (its inputs grew).
        self.sequential = bound
        self.inline_seconds: float | None = None

    def wake_blocked(self) -> None:
        """Wakes every kernel waiting on this session's queues and accumulators, so
        that those of a failed step see ``cancelled()`` (the others wait on)."""
        for ctx in self.contexts:
            for obj in ctx.resources.objects().values():
                wake = getattr(obj, "wake", None)
                if wake is not None:
                    wake()

    def run(self, feed_values: Sequence[Any]) -> list[Any]:
        if self.inline_seconds is not None:
            start = time.perf_counter()
            results = self.sequential.run(feed_values)
            if time.perf_counter() - start > max(2 * self.inline_seconds, HAND_OFF_SECONDS):
                # Measure stage by stage again, from a step that overlaps all it can.
                self.cost = [float("inf")] * len(self.stages)
                self.inline_seconds = None
            return results
        step = _Step(self, feed_values)
        saved = _current.step
        _current.step = step
        try:
            step.work(caller=True)
        finally:
            if step.pinned:
                blas_restore(step.pinned)
            _current.step = saved
        if step.failed is not None:
            raise step.failed
        if max(self.cost) < HAND_OFF_SECONDS:
            self.inline_seconds = sum(self.cost)
        copies = step.copies
        out: list[Any] = []
        for slot in self.plan.fetch_slots:
            if slot < 0:
                out.append(None)
                continue
            value = step.values[slot]
            if copies is not None:
                value = copies.move(slot, value, step.device_of.get(slot, ""), "")
            out.append(value)
        return out


class _Step:
    """One run of a ``ConcurrentPlan``: the slot values, the ready queue, the counts."""

    def __init__(self, bound: ConcurrentPlan, feed_values: Sequence[Any]) -> None:
        self.bound = bound
        self.values: dict[int, Any] = dict(zip(bound.plan.feed_slots, feed_values))
        self.device_of: dict[int, str] = {}
        # Values crossing between memories, copied once per step (``step_copies``).
        self.copies = StepCopies(bound.transfer) if bound.transfer is not None else None
        self.waits = list(bound.graph.waits)
        self.ready = deque(bound.graph.roots)
        self.unfinished = len(bound.stages)
        self.running = 0
        self.helpers = 0  # helper threads asked for and not yet gone
        self.idle = 0  # threads waiting for a stage to become ready
        self.failed: BaseException | None = None
        self.pinned = 0  # the token of this step's one-BLAS-thread hold (0: none)
        self.deadline = bound.contexts[0].deadline()
        self.cond = threading.Condition(threading.Lock())

    def work(self, caller: bool) -> None:
        """Runs ready stages until the step is over (``caller``) or, for a helper,
        until none is ready."""
        cond = self.cond
        with cond:
            while True:
                if self.ready and self.failed is None:
                    index = self._take()
                    self.running += 1
                    self._ask_for_helpers(self.bound.cost[index] >= HAND_OFF_SECONDS)
                    args = self._arguments(index)
                    cond.release()
                    try:
                        outs, error = self._run_stage(index, args)
                    finally:
                        cond.acquire()
                    self.running -= 1
                    first_failure = error is not None and self.failed is None
                    self._finish(index, outs, error)
                    if first_failure:
                        cond.release()
                        try:
                            self.bound.wake_blocked()
                        finally:
                            cond.acquire()
                    continue
                if self.running == 0 and (self.unfinished == 0 or self.failed is not None):
                    cond.notify_all()
                    return
                if not caller:
                    return
                self.idle += 1
                cond.wait()
                self.idle -= 1

    def _take(self) -> int:
        """Called with the lock held: the next ready stage for this thread, a short one
        first (it may release others), else the oldest."""
        ready, cost = self.ready, self.bound.cost
        for k, index in enumerate(ready):
            if cost[index] < HAND_OFF_SECONDS:
                del ready[k]
                return index
        return ready.popleft()

    def _ask_for_helpers(self, taken_long: bool) -> None:
        """Called with the lock held, by a thread that just took a stage: enough helpers
        for the long stages still ready that no idle thread will take. Short stages
        wait for a thread to be free, and a thread that took a short stage takes a long
        one next itself."""
        cost = self.bound.cost
        wanted = sum(cost[i] >= HAND_OFF_SECONDS for i in self.ready) - self.idle
        wanted -= not taken_long
        room = self.bound.pool.helpers - self.helpers
        for _ in range(min(wanted, room)):
            if not self.pinned:
                # Two stages are about to run at once: one BLAS thread each from now
                # to the end of the step.
                self.pinned = blas_one_thread()
            if not self.bound.pool.submit(self._help):
                break
            self.helpers += 1
        if self.ready and self.idle:
            self.cond.notify()

    def _help(self) -> None:
        saved = _current.step
        _current.step = self
        try:
            self.work(caller=False)
        finally:
            _current.step = saved
            with self.cond:
                self.helpers -= 1

    def _arguments(self, index: int) -> list[Any]:
        stage = self.bound.stages[index].stage
        values, device_of = self.values, self.device_of
        if self.copies is None:
            return [values[slot] for slot in stage.inputs]
        # (slot, src, value): the copy between devices happens outside the step's lock.
        return [(slot, device_of.get(slot, ""), values[slot]) for slot in stage.inputs]

    def _run_stage(self, index: int, args: list[Any]) -> tuple[Any, BaseException | None]:
        sf = self.bound.stages[index]
        device = sf.stage.device
        copies = self.copies
        token = silence()
        try:
            if copies is not None:
                args = [copies.move(slot, v, src, device) for slot, src, v in args]
            start = time.perf_counter()
            outs = sf.fn(*args)
            self.bound.cost[index] = time.perf_counter() - start
            return outs, None
        except Exception as exc:
            return None, translate_error(exc, sf.call_for_traceback(exc.__traceback__), device)
        except BaseException as exc:  # KeyboardInterrupt: stop the step, re-raise as is
            return None, exc
        finally:
            restore(token)

    def _finish(self, index: int, outs: Any, error: BaseException | None) -> None:
        """Called with the lock held: records a stage's outputs (or its error) and
        queues the stages that now have everything they wait for."""
        if error is not None:
            if self.failed is None:
                self.failed = error
            self.cond.notify_all()
            return
        stage = self.bound.stages[index].stage
        for slot, value in zip(stage.outputs, outs):
            self.values[slot] = value
            self.device_of[slot] = stage.device
        self.unfinished -= 1
        waits = self.waits
        for dependent in self.bound.graph.dependents[index]:
            waits[dependent] -= 1
            if waits[dependent] == 0:
                self.ready.append(dependent)
        if self.unfinished == 0 or self.failed is not None:
            self.cond.notify_all()


# --- BLAS threads ---------------------------------------------------------------------
# (``blas_threads`` counts the holds; a stage-overlapping step asks for one thread.)


def blas_one_thread() -> int:
    """Holds BLAS to one thread until ``blas_restore`` of the returned token."""
    return blas_threads.hold(1)


def blas_restore(token: int) -> None:
    blas_threads.release(token)


load_blas = blas_threads.load_blas
