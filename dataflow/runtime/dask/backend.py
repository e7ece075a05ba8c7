"""``DaskBackend``: runs compiled plans on a Dask cluster (``Session(target)``).

It implements ``backend.Backend``, the interface ``Session`` drives (``devices``,
``default_device``, ``bind``, ``execute``, ``execute_traced``, ``to_dask``,
``resource_store``, ``close``), as ``embedded_backend.EmbeddedBackend`` does.

* **Devices.** ``/job:J/replica:0/task:T/device:CPU:0`` (and ``GPU:k`` for a worker with
  the ``GPU`` resource) for every worker that is a task (``cluster.task_map``). Ops with
  no device request go to ``/job:worker/task:0`` when it exists, else the first worker.
* **Bind** (once per compiled plan): ``lowering.lower`` splits the plan by worker; each
  worker's part is installed on it (``Client.run``), and again on a worker that comes
  back after a restart, before the next step that needs it.
* **Execute, resident path** (the default; ``dask/resident.py``, a mixin of
  ``DaskBackend``): the client sends each worker's part of the step straight to it;
  workers pass tensors to each other directly and reply with the fetched values. The
  messages travel on step streams (``dask/stream.py``): Dask connections to the
  workers' own addresses, opened with the cluster's ``Security``, which the client
  drives from the calling thread. No scheduler round trip and no per-step graph; the
  workers record each step for the dataflow dashboard page instead.
* **Execute, task-graph path** (``ConfigProto(resident_steps=False)``, opt-in and
  slower; ``dask/graph_path.py``, a mixin of ``DaskBackend``). One ``HighLevelGraph``
  per step, one task per stage, pinned by the ``dataflow-<worker>`` resource, submitted
  with ``Client.get`` (never optimized) and gathered, so each step shows in Dask's task
  stream and progress pages. Its keys repeat from step to step (a reused key slot in
  place of the step number), so the per-key state of Dask's processes stays flat.
* **Failures, either path.** Before a step, every worker the plan needs must be alive
  (a pinned task would otherwise wait forever); during it, the loss of any of them (a
  scheduler ``remove-worker`` event) ends the step with ``UnavailableError`` naming
  it, ``timeout`` with ``DeadlineExceededError``, a kernel error with its ``OpError``.
  The session stays usable.
* **Scheduler loss.** Dask workers exit when their scheduler goes, so a session whose
  client lost the scheduler connection it opened on is finished: a step in flight, or
  any later call, raises ``UnavailableError`` saying so (``check_scheduler``; a waiting
  step looks every ``graph_path.SCHEDULER_POLL_S``, since one submitted while the client
  reconnects would otherwise wait for Dask's 30 s reconnect timeout), even after the
  client reconnects to a restarted scheduler. Recovery is a new session
  (``MonitoredTrainingSession`` makes it and restores the last checkpoint).
* **State** lives on the workers (``worker_state.RUNTIME``), shared by every client of
  the cluster by variable name; ``close()`` forgets this session's plans but not the
  variables (as TF's distributed runtime keeps them: use ``reset``).
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import time
import uuid
from collections.abc import Sequence
from typing import Any

from ...framework import errors
from ..compile.plan import Plan
from ..config import ConfigProto, StepTrace
from ..execute import malloc_policy
from . import cluster as cluster_module
from . import cluster_view, grpc_target
from .graph_path import GraphPath, KeySlots
from .lowering import lower
from .resident import BoundPlan, ResidentPath, StepWatch
from .stream_client import StepStreamClient
from .worker_state import (
    PlanMissingError,
    cancel_steps,
    list_variables,
    reset_state,
    store_call,
    uninstall_plans,
)
from .worker_steps import install_plans


def _home_device(resolved: grpc_target.GrpcTarget, client: Any, tasks: Any) -> str | None:
    """The CPU of the task a ``grpc://`` target names (TF1 runs unplaced ops there)."""
    name = grpc_target.home_worker_name(resolved, client)
    for (job, task), info in tasks.items():
        if info.name == name:
            return f"/job:{job}/replica:0/task:{task}/device:CPU:0"
    return None


class DaskBackend(ResidentPath, GraphPath):
    """Executes plans on the Dask cluster behind ``target``."""

    def __init__(self, target: Any, config: ConfigProto, container: str = "") -> None:
        malloc_policy.apply()  # fetched large arrays reuse memory
        self._config = config
        connect_timeout = (
            config.operation_timeout_in_ms / 1000.0 if config.operation_timeout_in_ms else None
        )
        resolved = None
        if grpc_target.is_grpc_target(target):  # TF1's server.target: one task's address
            resolved = grpc_target.resolve(
                target, connect_timeout or cluster_module.default_connect_timeout()
            )
            target = resolved.scheduler
        self.client, self._owns_client = cluster_module.connect(target, connect_timeout)
        have_view = False
        try:
            self.view: cluster_view.ClusterView = cluster_view.view(self.client)
            have_view = True
            spec = config.cluster_def
            if spec is None and isinstance(target, cluster_module.LocalCluster):
                spec = target.cluster_spec
            try:
                self.tasks = cluster_module.task_map(self.view.workers(), spec)
            except errors.UnavailableError:
                self.view.refresh()  # events may lag the scheduler: ask it, once
                self.tasks = cluster_module.task_map(self.view.workers(), spec)
            self.devices, self._worker_of_device, self.default_device = (
                cluster_module.cluster_devices(self.tasks, config.device_count.get("GPU"))
            )
            if resolved is not None:
                self.default_device = _home_device(resolved, self.client, self.tasks) or (
                    self.default_device
                )
        except BaseException:
            if have_view:
                cluster_view.release_view(self.view)
            if self._owns_client:
                cluster_module.close_client(self.client)
            raise
        self._task_of_worker = {
            info.name: f"/job:{job}/task:{task}" for (job, task), info in self.tasks.items()
        }
        self.container = container
        self.session_id = uuid.uuid4().hex[:8]
        self._plan_ids = itertools.count()
        self._steps = itertools.count(1)
        self._running: set[StepWatch] = set()
        self._running_lock = threading.Lock()
        # Names of this session's workers lost since it started (their state is gone,
        # even once a replacement is back): the recovery loop reads it.
        self.lost_workers: set[str] = set()
        # One span per session (not per step: the scheduler keeps every span it sees).
        self._span = {
            "name": ("dataflow", f"session-{self.session_id}"),
            "ids": (str(uuid.uuid4()), str(uuid.uuid4())),
        }
        # Task-group name -> a future that keeps that group alive (``_keep_groups``).
        self._group_anchors: dict[str, Any] = {}
        self._key_slots = KeySlots()  # the numbers task-graph steps' keys carry
        self.view.add_listener(self._on_worker_lost)
        from ..dashboard import register as add_dataflow_page

        add_dataflow_page(self.client)  # the dashboard's dataflow page; never raises
        self._streams: StepStreamClient | None = None
        self._closed = False

    # --- binding ----------------------------------------------------------------------
    def bind(self, plan: Plan) -> BoundPlan:
        plan_id = f"{self.session_id}{next(self._plan_ids):x}"
        lowered = lower(
            plan,
            self._worker_of_device,
            plan_id,
            self.container,
            self._config.debug,
            self.session_id,
        )
        for t in lowered.templates:
            t.annotations["span"] = self._span
        bound = BoundPlan(lowered)
        self._ensure_installed(bound)
        return bound

    def _ensure_installed(self, bound: BoundPlan) -> dict[str, str]:
        """Worker name -> address for the plan's workers, installing the plan where a
        worker does not hold it yet (first use, or the worker restarted)."""
        self.check_scheduler()
        addresses = {}
        for name in bound.lowered.workers:
            address = self.view.address_of(name)
            if address is None:
                # The scheduler may know of a worker whose add-worker event is on its way.
                self.view.refresh()
                address = self.view.address_of(name)
            if address is None:
                raise errors.UnavailableError(
                    None,
                    None,
                    f"Dask worker '{name}' ({self._task_of_worker.get(name)}) is "
                    f"not in the cluster; the step needs it. Workers now: "
                    f"{self.view.describe()}",
                )
            addresses[name] = address
        stale = [n for n, a in addresses.items() if bound.installed.get(n) != a]
        if stale:
            with bound.lock:
                for name in stale:
                    plan = bound.lowered.worker_plans[name]
                    try:
                        self._run_on(addresses[name], install_plans, [plan])
                    except errors.UnavailableError:
                        # The view may still name a worker that has just left while its
                        # nanny starts the next one: ask the scheduler once, and install
                        # there if a new one is in (else the step fails, as it must).
                        fresh = self._fresh_address(name)
                        if fresh is None or fresh == addresses[name]:
                            raise
                        addresses[name] = fresh
                        self._run_on(fresh, install_plans, [plan])
                    bound.installed[name] = addresses[name]
        return addresses

    def _fresh_address(self, name: str) -> str | None:
        """The address the scheduler gives worker ``name`` now (``None``: not in)."""
        with cluster_view.comm_failures_as_unavailable("asking the scheduler for workers"):
            self.view.refresh()
        return self.view.address_of(name)

    def _run_on(self, address: str, fn: Any, *args: Any) -> Any:
        with cluster_view.comm_failures_as_unavailable(
            f"calling the Dask worker at {address}", KeyError
        ):
            return self.client.run(fn, *args, workers=[address])[address]

    # --- executing ----------------------------------------------------------------------
    def execute(self, bound: BoundPlan, feed_values: list[Any], timeout: float | None) -> list[Any]:
        return self._execute(bound, feed_values, timeout, self._config.resident_steps)

    def execute_traced(
        self,
        bound: BoundPlan,
        feed_values: list[Any],
        run_metadata: StepTrace,
        timeout: float | None = None,
    ) -> list[Any]:
        """A step with its events in ``run_metadata.step_stats``. Resident (the
        default): every kernel on each worker, waits for peers' tensors and sends to
        them, the client's own time and the transfers to and from each worker
        (``dask/trace.py``). Task-graph path: each stage's compute time on its worker,
        from Dask's task stream."""
        if self._config.resident_steps:
            return self._execute(bound, feed_values, timeout, True, run_metadata=run_metadata)
        return self._traced_graph_step(bound, feed_values, run_metadata, timeout)

    def _execute(
        self,
        bound: BoundPlan,
        feed_values: list[Any],
        timeout: float | None,
        resident: bool,
        keys: list | None = None,
        run_metadata: StepTrace | None = None,
    ) -> list[Any]:
        """One step, on the resident path or as a task graph (``keys`` collects the
        task-graph step's keys, for its trace)."""
        for attempt in range(2):
            addresses = self._ensure_installed(bound)
            step = f"{next(self._steps)}-{self.session_id}"
            watch = StepWatch(bound.lowered.workers)
            with self._running_lock:
                self._running.add(watch)
            try:
                if resident:
                    return self._run_streams(
                        bound, step, feed_values, addresses, watch, timeout, run_metadata
                    )
                self._keep_groups(bound.lowered, timeout)
                return self.client.sync(
                    self._run_graph,
                    bound.lowered,
                    step,
                    feed_values,
                    addresses,
                    watch,
                    timeout,
                    keys,
                )
            except PlanMissingError:
                if self._closed:
                    raise errors.CancelledError(
                        None, None, "Session closed: the step was cancelled"
                    ) from None
                # A worker restarted between our check and the step: reinstall, once.
                bound.installed.clear()
                if attempt:
                    raise errors.UnavailableError(
                        None, None, "a worker lost the step's plan twice in a row"
                    ) from None
            finally:
                with self._running_lock:
                    self._running.discard(watch)
        raise AssertionError("unreachable")

    def _unavailable(self, watch: StepWatch, exc: BaseException | None) -> errors.OpError:
        if watch.lost is not None:
            info = watch.lost
            return errors.UnavailableError(
                None,
                None,
                f"Dask worker '{info.name}' ({self._task_of_worker.get(info.name)}"
                f", {info.address}) was lost during the step. Its variables are gone; "
                "restore them from a checkpoint once it is back.",
            )
        return errors.UnavailableError(
            None, None, f"The step failed on the cluster: {type(exc).__name__}: {exc}"
        )

    def check_scheduler(self) -> None:
        """Raises ``UnavailableError`` once the client has lost the scheduler connection
        this session was opened on (``ClusterView.connected``): the session's workers
        exited with that scheduler, so it can run nothing any more, even if the client
        reconnects to a restarted one. A new session (``MonitoredTrainingSession`` makes
        one) finds the new workers and restores their state from a checkpoint."""
        if not self.view.connected():
            raise errors.UnavailableError(
                None,
                None,
                f"Lost the connection to the Dask scheduler at "
                f"{self.view.scheduler_address}; this session cannot run steps any more "
                "(Dask workers exit with their scheduler, taking their variables). Open a "
                "new session once the scheduler and workers are back, and restore from a "
                "checkpoint (MonitoredTrainingSession does both).",
            )

    def _on_worker_lost(self, info: cluster_view.WorkerInfo) -> None:
        if info.name in self._task_of_worker:
            self.lost_workers.add(info.name)
        with self._running_lock:
            running = list(self._running)
        for watch in running:
            if info.name in watch.workers and watch.lost is None:
                watch.lost = info
                watch.event.set()

    # --- inspection ---------------------------------------------------------------------
    def variables(self) -> dict[str, list[str]]:
        """Device -> variable names, as the workers report them."""
        self.check_scheduler()
        out: dict[str, list[str]] = {}
        with cluster_view.comm_failures_as_unavailable("listing the cluster's variables"):
            found_by_worker = self.client.run(list_variables, self.container)
        for found in found_by_worker.values():
            out.update(found)
        return out

    def resource_store(self, device: str | None = None) -> RemoteStore:
        """The store of ``device`` (default device if omitted), reached by worker RPC."""
        device = device or self.default_device
        return RemoteStore(self, self._worker_of_device[device], device)

    # --- lifecycle ----------------------------------------------------------------------
    def close(self) -> None:
        """Cancels this session's running steps (a step blocked in a queue fails with
        ``CancelledError``), then forgets its plans and releases its private resources
        (iterators made without a ``shared_name``) on the workers; variables, queues and
        shared iterators stay on the cluster."""
        if self._closed:
            return
        self._closed = True
        with self._running_lock:
            running = bool(self._running)
        if running:
            self._cancel_on_workers(
                self.session_id, [], [info.address for info in self.view.workers()]
            )
            deadline = time.monotonic() + 10.0
            while self._running and time.monotonic() < deadline:
                time.sleep(0.005)
        self.view.remove_listener(self._on_worker_lost)
        self._group_anchors.clear()  # the groups go once the last step's tasks do
        if self._streams is not None:
            self._streams.close()
        try:
            if self.client.status == "running":
                self.client.run(uninstall_plans, self.session_id, wait=False)
        except Exception:
            pass
        cluster_view.release_view(self.view)
        if self._owns_client:
            cluster_module.close_client(self.client)

    def _cancel_on_workers(
        self, session: str | None, steps: list[str], addresses: list[str]
    ) -> None:
        """Fire and forget: cancels a session's or some steps' blocked kernels on the
        workers at ``addresses`` (a lost one would hold the broadcast for the connect
        timeout)."""

        async def cancel() -> None:
            with contextlib.suppress(Exception):
                await self.client.run(
                    cancel_steps, session, steps, workers=addresses, wait=False, asynchronous=True
                )

        if addresses and self.client.status == "running":
            self.client.loop.add_callback(cancel)


class RemoteStore:
    """A worker's ``ResourceStore`` seen from the client: each call is one
    ``Client.run`` RPC to the worker holding it (``worker_state.store_call``)."""

    def __init__(self, backend: DaskBackend, worker: str, device: str) -> None:
        self._backend = backend
        self._worker = worker
        self._device = device

    def _call(self, method: str, *args: Any) -> Any:
        backend = self._backend
        backend.check_scheduler()
        address = backend.view.address_of(self._worker)
        if address is None:
            raise errors.UnavailableError(
                None, None, f"worker {self._worker} holding {self._device} is not in the cluster"
            )
        with cluster_view.comm_failures_as_unavailable(
            f"{method} on the store of {self._device} (worker {self._worker})"
        ):
            out = backend.client.run(
                store_call, backend.container, self._device, method, *args, workers=[address]
            )
            return out[address]

    def names(self) -> list[str]:
        return self._call("names")

    def is_initialized(self, name: str) -> bool:
        return self._call("is_initialized", name)

    def read(self, name: str) -> Any:
        return self._call("read", name)

    def write(self, name: str, value: Any, token: tuple | None = None) -> Any:
        self._call("write", name, value)
        return value

    def delete(self, name: str) -> None:
        self._call("delete", name)

    def snapshot(self) -> dict[str, Any]:
        return self._call("snapshot")


def reset(
    target: Any, containers: Sequence[str] | None = None, timeout: float | None = None
) -> None:
    """Clears the variables (and other state) held on the cluster behind ``target``."""
    client, owned = cluster_module.connect(target, timeout)
    try:
        with cluster_view.comm_failures_as_unavailable("resetting the cluster's state"):
            client.run(reset_state, list(containers) if containers is not None else None)
    finally:
        if owned:
            cluster_module.close_client(client)
