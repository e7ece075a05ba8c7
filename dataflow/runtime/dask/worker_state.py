"""The worker side of a cluster session: stores, installed plans, stage tasks, RPCs.

Each Dask worker process holds one ``WorkerRuntime`` (module global ``RUNTIME``):

* **Stores.** One ``ResourceStore`` per ``(container, device)``, created on first use and
  never replaced (compiled kernels keep a reference; ``reset`` clears it in place). The
  container is ``""`` unless a session names another, so every client of the cluster
  sees the same variables by name: TF1's between-graph replication. State therefore
  belongs to the cluster, not to one client, and outlives sessions, as in TF's
  distributed runtime; ``reset`` (``Session.reset(target)``) drops it, and a worker that
  dies takes its state with it (recover from a checkpoint).
* **Installed plans.** ``WorkerPlan``s (see ``dask/lowering.py``) keyed by plan key. A stage
  is compiled to a ``StageFunction`` the first time it runs here, bound to this worker's
  stores, and cached.
* **Stage tasks.** ``run_stage`` is the function of every Dask task a step submits: it
  finds the compiled stage, sets the step id (thread-local) that state kernels turn into
  ``(step, op)`` update tokens (Dask may run a task twice; the store ignores a repeated
  token), runs it and returns its output tuple. Kernels touch the store in-process.
* **Resident steps** (``dask/worker_steps.py``). Three messages: ``run`` (a client
  starts this worker's part of one step), ``send`` (a peer delivers a stage's outputs)
  and ``abort``. They arrive on step streams (``dask/stream.py``): Dask connections to
  the worker's own address that its ``dataflow_steps`` handler keeps for step messages,
  moved to its Unix socket from its own host (``local_sockets``; ``abort`` also comes
  as an ordinary RPC). A step then costs one message per worker from the client plus
  one per crossing edge, with no scheduler round trip. A per-step ``Rendezvous``
  (``dask/transport.py``) holds arrived values; a stage runs once the stages it waits
  for have delivered (Send/Recv as in TF).
* **Remote access.** ``store_call`` runs one store method on a worker through
  ``Client.run``, for what the client does outside steps (inspection). It holds no
  state: the stores are the only state.

Stage functions run in the worker's thread pool (a short resident stage inline on the
event loop, ``worker_steps``). Either way a stage's kernels split
their work over the worker's threads (``WorkerRuntime.kernel_threads``: Dask's
``nthreads`` for the worker, at most its cores), BLAS held to one thread meanwhile, as
an embedded session's step does (``runtime/execute/blas_threads.py``)."""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Sequence
from typing import Any

from ..._util import intra_op
from ...framework import registry
from ..devices import array_namespace, to_host, transfer
from ..execute import blas_threads
from ..execute.context import DeviceContext
from ..execute.executor import StageFunction, translate_error
from ..execute.large_outputs import handing_off
from ..execute.step_copies import StageBoundary, WorkerStepMemory, stage_boundary
from ..resources import ResourceStore
from .lowering import StagePart, WorkerPlan
from .step_metrics import RECORDER
from .transport import Rendezvous

_local = threading.local()

_MAX_OPEN_STEPS = 4096


class PlanMissingError(RuntimeError):
    """A worker was asked to run a plan it does not hold (e.g. it restarted)."""


class WorkerDeviceContext(DeviceContext):
    """Kernel context of one device on a worker; the step id is per thread."""

    def step(self) -> Any:
        return getattr(_local, "step", None)

    def will_block(self) -> None:
        """A kernel (a queue) is about to wait for another step: free this thread's slot
        in the worker's pool, once per stage call, so that the step that would wake it
        can run here (with two threads, two blocked enqueues would otherwise starve the
        dequeue that makes room)."""
        if getattr(_local, "seceded", True):
            return
        _local.seceded = True
        from distributed import secede
        from distributed.threadpoolexecutor import secede as leave_pool
        from distributed.threadpoolexecutor import thread_state

        executor = getattr(thread_state, "executor", None)
        if executor is None or threading.current_thread() not in executor._threads:
            return  # not a pool thread: nothing to free
        if getattr(_local, "task", False):
            secede()  # a Dask task: the worker's state machine learns of it too
        else:
            leave_pool()  # a resident stage run in the worker's executor

    def cancelled(self) -> bool:
        """Whether the running step was cancelled (its session closed, or its client
        gave up on it): a blocked kernel checks this when woken."""
        return RUNTIME.is_cancelled(getattr(_local, "running", None))

    def subgraph(self, plan: Any) -> Any:
        run = super().subgraph(plan)

        def run_body(values: Any) -> Any:
            # A loop body runs its updates many times in one step: no tokens inside.
            saved = getattr(_local, "step", None)
            _local.step = None
            try:
                return run(values)
            finally:
                _local.step = saved

        return run_body


class CompiledStage:
    """A stage bound to this worker's store: ``stage(step, args) -> outputs``."""

    def __init__(
        self,
        part: StagePart,
        ctx: WorkerDeviceContext,
        slot_specs: Sequence,
        debug: bool,
        trace: list | None = None,
        boundary: StageBoundary | None = None,
    ) -> None:
        self.part = part
        self.boundary = boundary  # where the worker has a GPU stage (``resident``)
        self.device = part.stage.device
        # A traced variant times every kernel into ``trace`` (traced steps only).
        self.trace = trace
        fetched = frozenset(part.client_slots)
        self.function = StageFunction(part.stage, ctx, slot_specs, debug, trace, fetched)
        self.gpu = "/device:GPU:" in self.device
        self.inline_ok = all(not registry.lookup(c.op_type).may_block for c in part.stage.calls)
        self.last_seconds = float("inf")

    def __call__(self, step: Any, args: Sequence[Any]) -> tuple:
        """Runs the stage as a Dask task: arguments and results in host memory."""
        start = time.perf_counter()
        if self.gpu:
            args = [transfer(a, "", self.device) for a in args]
        outs = self._run(step, args)
        if self.gpu:
            outs = tuple(to_host(o) for o in outs)
        self.last_seconds = time.perf_counter() - start
        return outs

    def resident(
        self, step: Any, rv: Rendezvous, memory: Any = None
    ) -> tuple[tuple, dict[int, Any]]:
        """Runs the stage on a resident step's values ``rv``, files its outputs there,
        returns them and, by slot, those that leave the worker in host memory. With a
        GPU stage on the worker, values cross to and from it once a step here
        (``StageBoundary``). ``memory``: where large values the client fetches may be
        computed (``large_outputs.handing_off``: its stream's slabs)."""
        start = time.perf_counter()
        values, boundary = rv.values, self.boundary
        if boundary is None:
            outs = self._run(step, [values[s] for s in self.part.stage.inputs], memory)
            wire = dict(zip(self.part.stage.outputs, outs, strict=True))
            values.update(wire)
        else:
            if rv.memory is None:
                rv.memory = WorkerStepMemory(transfer)
            outs = self._run(step, boundary.gather(values, rv.memory))
            wire = boundary.scatter(values, rv.memory, outs)
        self.last_seconds = time.perf_counter() - start
        return outs, wire

    def _run(self, step: Any, args: Sequence[Any], memory: Any = None) -> tuple:
        _local.step = _local.running = step
        _local.seceded = False
        # The stage's kernels split their work over the worker's threads, BLAS held to
        # one thread meanwhile, as an embedded step's are (``WorkerRuntime.kernel_threads``).
        token = blas_threads.hold(1)
        before = intra_op.set_threads(RUNTIME.kernel_threads())
        memory_before = handing_off(memory)
        try:
            return self.function.fn(*args)
        except Exception as exc:
            raise translate_error(
                exc, self.function.call_for_traceback(exc.__traceback__), self.device
            ) from None
        finally:
            handing_off(memory_before)
            intra_op.set_threads(before)
            blas_threads.release(token)
            _local.step = _local.running = None
            _local.seceded = True


class WorkerRuntime:
    """Everything dataflow keeps in one worker process."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._stores: dict[tuple[str, str], ResourceStore] = {}
        self._contexts: dict[tuple[str, str, bool, str], WorkerDeviceContext] = {}
        self._plans: dict[str, WorkerPlan] = {}
        self._compiled: dict[tuple, CompiledStage] = {}  # (key, index[, traced])
        self.rendezvous: dict[tuple[str, str], Rendezvous] = {}
        self.finished: collections.OrderedDict[tuple[str, str], None] = collections.OrderedDict()
        self._cancelled_sessions: set[str] = set()
        self._cancelled_steps: collections.OrderedDict[str, None] = collections.OrderedDict()
        self.threads = 1  # the Dask worker's ``nthreads`` (``worker_steps.prepare_worker``)

    def kernel_threads(self) -> int:
        """The intra-op threads one stage's kernels split their work over
        (``_util/intra_op``): the worker's Dask ``nthreads``, its threads for computing,
        at most the cores the process may use. As TF1 sizes a server's intra-op pool to
        the machine whatever else runs there. (Not BLAS's setting, unlike an embedded
        session's default: Dask's nanny starts every worker with
        ``OPENBLAS_NUM_THREADS=1`` and its peers for the sake of its own parallel tasks,
        which left each stage's kernels on one thread while TF1's used every core.)"""
        return max(1, min(self.threads, blas_threads.available_cores()))

    # --- cancellation -------------------------------------------------------------------
    def cancel(self, session: str | None = None, steps: Sequence[str] = ()) -> None:
        """Cancels a session's steps (all of them, now and later) or single steps, and
        wakes every blocked kernel (queues) to notice."""
        with self._lock:
            if session is not None:
                self._cancelled_sessions.add(session)
            for step in steps:
                self._cancelled_steps[step] = None
            while len(self._cancelled_steps) > 4096:
                self._cancelled_steps.popitem(last=False)
            stores = list(self._stores.values())
        for store in stores:
            for obj in store.objects().values():
                wake = getattr(obj, "wake", None)
                if wake is not None:
                    wake()

    def is_cancelled(self, step: str | None) -> bool:
        if step is None:
            return False
        return step in self._cancelled_steps or step.rpartition("-")[2] in self._cancelled_sessions

    # --- stores -------------------------------------------------------------------------
    def store(self, container: str, device: str) -> ResourceStore:
        key = (container, device)
        store = self._stores.get(key)
        if store is None:
            with self._lock:
                store = self._stores.setdefault(key, ResourceStore(device))
        return store

    def context(self, plan: WorkerPlan, device: str) -> WorkerDeviceContext:
        # Per session: its kernels name the session's private resources (``ctx.session``).
        key = (plan.container, device, plan.debug, plan.session)
        with self._lock:
            if key not in self._contexts:
                store, xp = self.store(plan.container, device), array_namespace(device)
                self._contexts[key] = WorkerDeviceContext(device, xp, store, *key[2:])
            return self._contexts[key]

    def variables(self, container: str = "") -> dict[str, list[str]]:
        """Device -> names of the variables held here."""
        return {
            device: store.names()
            for (c, device), store in self._stores.items()
            if c == container and store.names()
        }

    def reset(self, containers: Sequence[str] | None = None) -> None:
        with self._lock:
            for (c, _), store in self._stores.items():
                if containers is None or c in containers:
                    store.clear()

    # --- plans --------------------------------------------------------------------------
    def install(self, plans: Sequence[WorkerPlan]) -> None:
        with self._lock:
            for plan in plans:
                self._plans[plan.key] = plan

    def uninstall(self, prefix: str) -> None:
        """Forgets a session's plans (keys start with its id ``prefix``), contexts and
        private resources."""
        with self._lock:
            for ctx_key in [k for k in self._contexts if k[3] == prefix]:
                del self._contexts[ctx_key]
            for store in self._stores.values():
                store.release_session(prefix)
            for key in [k for k in self._plans if k.startswith(prefix)]:
                del self._plans[key]
            for compiled_key in [k for k in self._compiled if k[0].startswith(prefix)]:
                del self._compiled[compiled_key]

    def plan(self, key: str) -> WorkerPlan:
        plan = self._plans.get(key)
        if plan is None:
            raise PlanMissingError(f"plan {key} is not installed on this worker")
        return plan

    @staticmethod
    def _compiled_key(key: str, index: int, traced: bool) -> tuple:
        return (key, index, True) if traced else (key, index)

    def cached(self, key: str, index: int, traced: bool = False) -> CompiledStage | None:
        """The stage compiled already (``traced``: its version recording kernel
        times), or ``None``."""
        return self._compiled.get(self._compiled_key(key, index, traced))

    def compiled(self, key: str, index: int, traced: bool = False) -> CompiledStage:
        stage = self.cached(key, index, traced)
        if stage is not None:
            return stage
        with self._lock:  # compiling sets ctx.op_name: one compile at a time
            stage = self.cached(key, index, traced)
            if stage is None:
                plan = self.plan(key)
                part = plan.part(index)
                ctx = self.context(plan, part.stage.device)
                trace: list | None = [] if traced else None
                boundary = stage_boundary(plan.parts, part)
                stage = CompiledStage(part, ctx, plan.slot_specs, plan.debug, trace, boundary)
                self._compiled[self._compiled_key(key, index, traced)] = stage
        return stage

    def installed(self) -> list[str]:
        return sorted(self._plans)

    # --- resident steps -----------------------------------------------------------------
    def rendezvous_for(self, key: str, step: str) -> Rendezvous | None:
        """The step's mailbox (``None`` once the step finished: late messages drop)."""
        rv = self.rendezvous.get((key, step))
        if rv is None:
            if (key, step) in self.finished:
                return None
            if len(self.rendezvous) >= _MAX_OPEN_STEPS:
                # Mail for steps that never started here (their client went away).
                del self.rendezvous[next(iter(self.rendezvous))]
            rv = self.rendezvous[(key, step)] = Rendezvous()
        return rv

    def finish(self, key: str, step: str) -> None:
        self.rendezvous.pop((key, step), None)
        self.finished[(key, step)] = None
        while len(self.finished) > 4096:
            self.finished.popitem(last=False)


RUNTIME = WorkerRuntime()


# --- Dask stage tasks ------------------------------------------------------------------
def run_stage(plan_key: str, index: int, step: str, feeds: tuple, *upstream: tuple) -> tuple:
    """The function of every stage task: runs stage ``index`` of an installed plan."""
    stage = RUNTIME.compiled(plan_key, index)
    args = [
        feeds[src[1]] if src[0] == "f" else upstream[src[1]][src[2]] for src in stage.part.sources
    ]
    _local.task = True  # a blocking kernel secedes through Dask (will_block)
    try:
        outs = stage(step, args)
    finally:
        _local.task = False
    RECORDER.stage(plan_key, stage.part, step, stage.last_seconds, outs)  # the dashboard
    return outs


# --- functions the client runs on workers (Client.run) ---------------------------------
async def uninstall_plans(prefix: str) -> None:
    # A coroutine so that a closing session can fire it without waiting (wait=False).
    RUNTIME.uninstall(prefix)


async def cancel_steps(session: str | None = None, steps: Sequence[str] = ()) -> None:
    # A coroutine so that a closing session can fire it without waiting (wait=False).
    RUNTIME.cancel(session, steps)


def reset_state(containers: Sequence[str] | None = None) -> None:
    RUNTIME.reset(containers)


def list_variables(container: str = "") -> dict[str, list[str]]:
    return RUNTIME.variables(container)


def store_call(container: str, device: str, method: str, *args: Any) -> Any:
    """Runs ``ResourceStore.<method>(*args)`` on one device's store of this worker.

    What the client does outside steps (inspection, reading or writing a variable) comes
    here through ``Client.run``, a direct RPC to the worker. (A ``distributed`` Actor
    was used first; its client-side futures occasionally never resolved under the test
    suite's load, hanging the caller, and an actor adds nothing a stateless call needs.)
    """
    if method not in _STORE_METHODS:
        raise ValueError(f"not a store method: {method}")
    return getattr(RUNTIME.store(container, device), method)(*args)


_STORE_METHODS = frozenset({"names", "is_initialized", "read", "write", "delete", "snapshot"})
