"""Clusters: ``dataflow.LocalCluster``, connecting to a target, and what a client knows
of its workers.

* ``LocalCluster(ps=1, worker=2)`` starts a real ``distributed.LocalCluster`` whose
  workers are named ``ps-0``, ``worker-0``, ``worker-1`` (processes by default), each
  with the Dask resource ``dataflow-<name>`` that pins stage tasks to it.
* ``connect(target, ...)`` turns a session target (a ``LocalCluster``, a
  ``distributed.Client``, a Dask cluster object or a scheduler address) into a client,
  with a clear ``UnavailableError`` when no scheduler answers within the timeout.
* ``ClusterView`` (one per client, shared by its sessions) keeps the live workers
  (name, address, GPUs) current from the scheduler's ``add-worker``/``remove-worker``
  events, so a step that needs a lost worker fails within milliseconds of the scheduler
  noticing, and registers the ``DataflowWorkerPlugin`` once.
* ``task_map`` decides which worker is ``/job:J/task:T``: the one named ``J-T``, or the
  one a ``ClusterSpec`` names by address or name. Workers of a cluster where no name has
  that shape become ``/job:worker/task:0..n-1`` in name order.

Nothing here is imported by ``import dataflow`` unless a cluster is used: ``distributed``
is imported inside the functions.
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..framework import errors
from .cluster_spec import ClusterSpec

_TASK_NAME = re.compile(r"^(?P<job>[A-Za-z_][\w.]*(?:-[A-Za-z_][\w.]*)*)-(?P<task>\d+)$")


@dataclass(frozen=True, slots=True)
class WorkerInfo:
    name: str
    address: str
    gpus: int
    nthreads: int


class DeviceList(list):
    """The devices of a cluster, with the workers behind them for error messages."""

    note: str = ""


class ClusterView:
    """The workers one client sees, kept current by scheduler events."""

    def __init__(self, client: Any) -> None:
        from .worker_state import DataflowWorkerPlugin  # noqa: PLC0415 - needs distributed
        self.client = client
        self._lock = threading.Lock()
        self._workers: dict[str, WorkerInfo] = {}
        self._by_name: dict[str, str] = {}  # replaced whole, so reads need no lock
        self._listeners: list[Callable[[WorkerInfo], None]] = []
        client.register_plugin(DataflowWorkerPlugin(), name="dataflow")
        self._update(client.scheduler_info(n_workers=-1)["workers"])
        previous = getattr(client, "_event_handlers", {}).get("all")
        self._previous_handler = previous
        client.subscribe_topic("all", self._on_event)

    # --- the live workers -------------------------------------------------------------
    def _update(self, workers: Mapping[str, Mapping]) -> None:
        table = {}
        for address, info in workers.items():
            resources = info.get("resources") or {}
            table[address] = WorkerInfo(str(info.get("name", address)), address,
                                        int(resources.get("GPU", 0)),
                                        int(info.get("nthreads", 1)))
        with self._lock:
            self._workers = table
            self._by_name = {info.name: address for address, info in table.items()}

    def workers(self) -> list[WorkerInfo]:
        with self._lock:
            return list(self._workers.values())

    def address_of(self, name: str) -> str | None:
        return self._by_name.get(name)

    def refresh(self) -> None:
        self._update(self.client.scheduler_info(n_workers=-1)["workers"])

    def describe(self) -> str:
        found = sorted(self.workers(), key=lambda w: w.name)
        return ", ".join(f"{w.name} at {w.address}" for w in found) or "none"

    # --- events (run on the client's event loop) --------------------------------------
    def add_listener(self, fn: Callable[[WorkerInfo], None]) -> None:
        with self._lock:
            self._listeners.append(fn)

    def remove_listener(self, fn: Callable[[WorkerInfo], None]) -> None:
        with self._lock:
            if fn in self._listeners:
                self._listeners.remove(fn)

    async def _on_event(self, event: Any) -> None:
        if self._previous_handler is not None:
            result = self._previous_handler(event)
            if asyncio.iscoroutine(result):
                await result
        _, msg = event
        action = msg.get("action") if isinstance(msg, dict) else None
        if action == "remove-worker":
            with self._lock:
                info = self._workers.pop(msg.get("worker"), None)
                if info is not None and self._by_name.get(info.name) == info.address:
                    self._by_name = {k: v for k, v in self._by_name.items()
                                     if k != info.name}
                listeners = list(self._listeners)
            if info is not None:
                for fn in listeners:
                    fn(info)
        elif action == "add-worker":
            identity = await self.client.scheduler.identity(n_workers=-1)
            self._update(identity["workers"])


_views: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_users: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_views_lock = threading.Lock()


def view(client: Any) -> ClusterView:
    """The shared ``ClusterView`` of ``client`` (made on first use); each call must be
    matched by ``release_view`` when its user is done."""
    with _views_lock:
        found = _views.get(client)
        if found is None:
            found = _views[client] = ClusterView(client)
        _users[client] = _users.get(client, 0) + 1
        return found


def release_view(client: Any) -> None:
    """Drops one user of ``client``'s view; the last one stops following the cluster's
    events, so that closing the client later leaves the scheduler nobody to notify."""
    with _views_lock:
        left = _users.get(client, 0) - 1
        if left > 0:
            _users[client] = left
            return
        _users.pop(client, None)
        found = _views.pop(client, None)
    if found is not None and client.status == "running":
        client.unsubscribe_topic("all")


def forget_view(client: Any) -> None:
    """Stops following ``client``'s cluster events whoever still uses the view (before
    closing the client)."""
    with _views_lock:
        _users.pop(client, None)
        found = _views.pop(client, None)
    if found is not None and client.status == "running":
        client.unsubscribe_topic("all")


def task_map(workers: list[WorkerInfo], cluster_def: Any = None
             ) -> dict[tuple[str, int], WorkerInfo]:
    """Which worker is each ``(job, task)``.

    Raises:
        errors.UnavailableError: a ``ClusterSpec`` entry matches no worker.
    """
    if cluster_def:
        spec = cluster_def if isinstance(cluster_def, ClusterSpec) else ClusterSpec(
            cluster_def.as_dict() if hasattr(cluster_def, "as_dict") else cluster_def)
        out = {}
        for job, task, address in spec.tasks():
            match = [w for w in workers if address in (w.name, w.address)
                     or w.address.split("://", 1)[-1] == address.split("://", 1)[-1]]
            if not match:
                raise errors.UnavailableError(
                    None, None, f"ClusterSpec task /job:{job}/task:{task} is '{address}', "
                    f"which matches no worker of the cluster (workers: "
                    f"{', '.join(f'{w.name} at {w.address}' for w in workers) or 'none'})")
            out[(job, task)] = match[0]
        return out
    named = {}
    for w in workers:
        m = _TASK_NAME.match(w.name)
        if m:
            named[(m["job"], int(m["task"]))] = w
    if named:
        return named
    return {("worker", i): w for i, w in enumerate(sorted(workers, key=lambda w: w.name))}


def cluster_devices(tasks: Mapping[tuple[str, int], WorkerInfo]
                    ) -> tuple[DeviceList, dict[str, str], str]:
    """(devices, device -> worker name, default device) of a task map."""
    devices = DeviceList()
    worker_of: dict[str, str] = {}
    for (job, task), info in sorted(tasks.items()):
        base = f"/job:{job}/replica:0/task:{task}"
        for device in [f"{base}/device:CPU:0"] + [f"{base}/device:GPU:{i}"
                                                  for i in range(info.gpus)]:
            devices.append(device)
            worker_of[device] = info.name
    devices.note = " (Dask workers: " + ", ".join(
        f"/job:{job}/task:{task} = {info.name} at {info.address}"
        for (job, task), info in sorted(tasks.items())) + ")"
    if not devices:
        raise errors.UnavailableError(None, None, "The Dask cluster has no workers.")
    default = "/job:worker/replica:0/task:0/device:CPU:0"
    if default not in worker_of:
        default = devices[0]
    return devices, worker_of, default


def connect(target: Any, timeout: float | None = None) -> tuple[Any, bool]:
    """A client for ``target``, and whether the caller owns (must close) it.

    Raises:
        errors.UnavailableError: no scheduler answered at the address within ``timeout``.
        TypeError: ``target`` is not a cluster target.
    """
    import distributed  # noqa: PLC0415 - only cluster users pay for importing distributed

    if isinstance(target, LocalCluster):
        return target.client, False
    if isinstance(target, distributed.Client):
        return target, False
    if hasattr(target, "scheduler_address"):  # a Dask cluster object
        return distributed.Client(target, set_as_default=False), True
    if isinstance(target, str):
        if target.startswith("grpc://"):
            raise ValueError(f"'{target}' is a TensorFlow gRPC target; dataflow runs on Dask: "
                             "pass a Dask scheduler address such as 'tcp://host:8786'.")
        if timeout is None:
            import dask  # noqa: PLC0415
            timeout = float(dask.utils.parse_timedelta(
                dask.config.get("distributed.comm.timeouts.connect")))
        try:
            return distributed.Client(target, timeout=timeout, set_as_default=False), True
        except TypeError as exc:
            if "TLS" not in str(exc):
                raise
            raise errors.UnavailableError(
                None, None, f"The Dask scheduler at '{target}' speaks TLS and no TLS "
                "credentials are configured: pass Session(distributed.Client(address, "
                "security=distributed.security.Security(...))), or set "
                f"distributed.comm.tls.* in the Dask configuration ({exc})") from None
        except (OSError, TimeoutError, asyncio.TimeoutError) as exc:
            raise errors.UnavailableError(
                None, None, f"Cannot reach a Dask scheduler at '{target}' within {timeout:g} s "
                f"({type(exc).__name__}: {exc}). Is `dask scheduler` running there, and "
                "do the address and protocol (tcp:// or tls://) match?") from None
    raise TypeError(f"Session target must be '', a Dask scheduler address, a "
                    f"distributed.Client or a dataflow.LocalCluster, not {target!r}")


class LocalCluster:
    """A Dask cluster on this machine with workers named after TF jobs and tasks.

    ``LocalCluster(ps=1, worker=2)`` starts a ``distributed.LocalCluster`` with workers
    ``ps-0``, ``worker-0`` and ``worker-1``; ``Session(cluster)`` runs on it, with
    ``/job:ps/task:0`` on ``ps-0`` and so on.

    Args:
        ps: number of ``/job:ps`` tasks.
        worker: number of ``/job:worker`` tasks.
        gpus_per_worker: the Dask ``GPU`` resource each worker task declares (its
            ``/device:GPU:k`` devices); needs CUDA and CuPy on the workers to run.
        processes: one process per worker (default) rather than threads of this one.
        threads_per_worker: threads running stage tasks on each worker.
        host: interface to listen on.
        dashboard_address: where the dashboard listens (``None`` for none).
        security: a ``distributed.security.Security``, or ``True`` for TLS with
            temporary self-signed certificates.
        silence_logs: log level of the workers' and scheduler's loggers.
        **kwargs: passed to ``distributed.LocalCluster``.

    Example:
        >>> with dataflow.LocalCluster(ps=1, worker=2) as cluster:  # doctest: +SKIP
        ...     with tf.Session(cluster) as sess:
        ...         sess.run(...)
    """

    def __init__(self, ps: int = 1, worker: int = 2, gpus_per_worker: int = 0,
                 processes: bool = True, threads_per_worker: int = 2,
                 host: str = "127.0.0.1", dashboard_address: str | None = ":8787",
                 security: Any = None, silence_logs: int = logging.ERROR,
                 **kwargs: Any) -> None:
        import distributed  # noqa: PLC0415

        from .lowering import resource_name  # noqa: PLC0415 - imports dask

        if not processes and "protocol" not in kwargs:
            # Threads would talk inproc://, which takes no host.
            kwargs["protocol"] = "tls://" if security else "tcp://"
        self.cluster = distributed.LocalCluster(
            n_workers=0, processes=processes, threads_per_worker=threads_per_worker,
            host=host, dashboard_address=dashboard_address, security=security,
            silence_logs=silence_logs, **kwargs)
        try:
            names = [f"ps-{i}" for i in range(ps)] + [f"worker-{i}" for i in range(worker)]
            self._jobs = {"ps": names[:ps], "worker": names[ps:]}
            for name in names:
                resources = {resource_name(name): 1e9}
                if gpus_per_worker and name.startswith("worker-"):
                    resources["GPU"] = gpus_per_worker
                options = dict(self.cluster.new_spec["options"], name=name,
                               resources=resources)
                self.cluster.worker_spec[name] = {"cls": self.cluster.new_spec["cls"],
                                                  "options": options}
            self.cluster.scale(len(names))
            self.client = distributed.Client(self.cluster, set_as_default=False)
            self.client.wait_for_workers(len(names), timeout=120)
        except BaseException:
            self.cluster.close()
            raise

    @property
    def target(self) -> str:
        """The scheduler address, for ``Session(target)`` in another process."""
        return self.cluster.scheduler_address

    @property
    def cluster_spec(self) -> ClusterSpec:
        """``ClusterSpec({"ps": ["ps-0"], "worker": ["worker-0", ...]})`` (worker names)."""
        return ClusterSpec({job: list(names) for job, names in self._jobs.items() if names})

    @property
    def dashboard_link(self) -> str:
        return self.cluster.dashboard_link

    @property
    def workers(self) -> dict[str, str]:
        """Worker name -> address, as the scheduler sees them now."""
        info = self.client.scheduler_info(n_workers=-1)["workers"]
        return {str(w["name"]): address for address, w in info.items()}

    def close(self) -> None:
        """Stops the workers and the scheduler (all variables on them are lost)."""
        forget_view(self.client)
        self.client.close()
        self.cluster.close()

    def __enter__(self) -> LocalCluster:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        jobs = ", ".join(f"{job}={len(names)}" for job, names in self._jobs.items())
        return f"<dataflow.LocalCluster {jobs} scheduler={self.target}>"
