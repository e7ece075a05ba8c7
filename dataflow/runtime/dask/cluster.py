"""Clusters: ``dataflow.LocalCluster``, connecting to a target, and which worker is which
task. What a client keeps knowing of its workers is in ``dask/cluster_view.py``.

* ``LocalCluster(ps=1, worker=2)`` starts a real ``distributed.LocalCluster`` whose
  workers are named ``ps-0``, ``worker-0``, ``worker-1`` (processes by default), each
  with the Dask resource ``dataflow-<name>`` that pins stage tasks to it.
* ``connect(target, ...)`` turns a session target (a ``LocalCluster``, a
  ``distributed.Client``, a Dask cluster object, a scheduler address, or TF1's
  ``grpc://host:port`` of one task: ``dask/grpc_target.py``) into a client,
  with a clear ``UnavailableError`` when no scheduler answers within the timeout, and
  within about a second when the address refuses connections (a scheduler restarting:
  Dask's own connect would retry for its whole 30 s timeout). ``close_client`` closes
  the clients made here without the errors Dask logs for one still reconnecting.
* ``ClusterView`` (``dask/cluster_view.py``; one per client and scheduler connection,
  shared by the client's sessions) keeps the live workers (name, address, GPUs)
  current from the scheduler's ``add-worker``/``remove-worker`` events, so a step that
  needs a lost worker fails within milliseconds of the scheduler noticing, and
  registers this client's ``DataflowWorkerPlugin`` (``worker_plugin``), taking it back
  when the last session on the client closes. A view is bound to the scheduler
  connection it was made on (``connected``): Dask workers exit when their scheduler
  goes, so once the client loses that connection the view's sessions fail with
  ``UnavailableError`` and the next session on the client, reconnected to a restarted
  scheduler, makes a new view.
* ``task_map`` decides which worker is ``/job:J/task:T``: the one named ``J-T``, or the
  one a ``ClusterSpec`` names by address or name. Workers of a cluster where no name has
  that shape become ``/job:worker/task:0..n-1`` in name order.

Nothing here is imported by ``import dataflow`` unless a cluster is used: ``distributed``
is imported inside the functions.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import functools
import logging
import re
import weakref
from collections.abc import Mapping
from typing import Any

from ...framework import errors, repr_hooks
from ..cluster_spec import ClusterSpec
from . import grpc_target
from .cluster_view import WorkerInfo, forget_view
from .main_guard import refuse_unguarded_main
from .own_loop import run_on_own_loop

logger = logging.getLogger(__name__)

_TASK_NAME = re.compile(r"^(?P<job>[A-Za-z_][\w.]*(?:-[A-Za-z_][\w.]*)*)-(?P<task>\d+)$")


class DeviceList(list):
    """The devices of a cluster, with the workers behind them for error messages."""

    note: str = ""


def task_map(
    workers: list[WorkerInfo], cluster_def: Any = None
) -> dict[tuple[str, int], WorkerInfo]:
    """Which worker is each ``(job, task)``.

    Raises:
        errors.UnavailableError: a ``ClusterSpec`` entry matches no worker.
    """
    if cluster_def:
        spec = (
            cluster_def
            if isinstance(cluster_def, ClusterSpec)
            else ClusterSpec(
                cluster_def.as_dict() if hasattr(cluster_def, "as_dict") else cluster_def
            )
        )
        out = {}
        for job, task, address in spec.tasks():
            match = [
                w
                for w in workers
                if address in (w.name, w.address)
                or w.address.split("://", 1)[-1] == address.split("://", 1)[-1]
            ]
            if not match:
                raise errors.UnavailableError(
                    None,
                    None,
                    f"ClusterSpec task /job:{job}/task:{task} is '{address}', "
                    f"which matches no worker of the cluster (workers: "
                    f"{', '.join(f'{w.name} at {w.address}' for w in workers) or 'none'})",
                )
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


def cluster_devices(
    tasks: Mapping[tuple[str, int], WorkerInfo], max_gpus: int | None = None
) -> tuple[DeviceList, dict[str, str], str]:
    """(devices, device -> worker name, default device) of a task map. ``max_gpus``
    (``ConfigProto.device_count["GPU"]``) caps each task's GPUs: 0 keeps every op on
    CPUs."""
    devices = DeviceList()
    worker_of: dict[str, str] = {}
    for (job, task), info in sorted(tasks.items()):
        base = f"/job:{job}/replica:0/task:{task}"
        gpus = info.gpus if max_gpus is None else max(0, min(info.gpus, max_gpus))
        for device in [f"{base}/device:CPU:0"] + [f"{base}/device:GPU:{i}" for i in range(gpus)]:
            devices.append(device)
            worker_of[device] = info.name
    devices.note = (
        " (Dask workers: "
        + ", ".join(
            f"/job:{job}/task:{task} = {info.name} at {info.address}"
            for (job, task), info in sorted(tasks.items())
        )
        + ")"
    )
    if not devices:
        raise errors.UnavailableError(None, None, "The Dask cluster has no workers.")
    default = "/job:worker/replica:0/task:0/device:CPU:0"
    if default not in worker_of:
        default = devices[0]
    return devices, worker_of, default


# Clients that sessions opened for themselves (``Session("tcp://...")``): closing a
# ``LocalCluster`` closes those of its scheduler first, or each would spend 30 s trying
# to reconnect to the scheduler that is gone and then log an error.
_owned_clients: weakref.WeakSet = weakref.WeakSet()


class _ReconnectEnd(logging.Filter):
    """Drops the two records ``distributed.client`` logs when a client is closed while
    it tries to reconnect to a lost scheduler: 'Failed to reconnect to scheduler after
    N seconds' (the loop saw the status change) or the ``CancelledError`` of the
    cancelled reconnect task (``log_errors`` logs every exception)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.getMessage().startswith("Failed to reconnect to scheduler"):
            return False
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, asyncio.CancelledError)


def close_client(client: Any) -> None:
    """Closes a client that dataflow made (``connect``).

    A client that lost its scheduler spends its ``timeout`` (30 s) trying to reconnect
    and then logs 'Failed to reconnect to scheduler ... closing client'; closing it
    sooner ends the attempt with an error logged too. Both only say that the scheduler
    went away, which the session already reported (``UnavailableError``), so while such
    a client closes those records are dropped. (The filter is on the
    ``distributed.client`` logger for the few milliseconds the close takes: another
    client of this process failing to reconnect in that window would lose its record.)
    """
    if client.status != "connecting":
        client.close()
        return
    log = logging.getLogger("distributed.client")
    quiet = _ReconnectEnd()
    log.addFilter(quiet)
    try:
        client.close()
    finally:
        log.removeFilter(quiet)


def close_owned_clients() -> None:
    """Closes the clients dataflow made that are still open: at interpreter exit
    (``atexit``), for sessions never closed.

    Such a session's client still holds its keys (the anchors of its task groups), and a
    cluster the script started stops at exit too (Dask's own exit handlers, which run
    after this one: they were registered first, when ``distributed`` was imported); the
    scheduler would then log every held key as lost with its workers, naming keys the
    user never made. Closing the client first releases them (its view first, as a
    session's ``close`` does, so that the scheduler has no subscriber to tell)."""
    for client in list(_owned_clients):
        if client.status in ("running", "connecting"):
            with contextlib.suppress(Exception):
                forget_view(client)
                close_client(client)


atexit.register(close_owned_clients)


# How long opening a session looks for a scheduler that refuses connections (``_refused``).
PROBE_TIMEOUT_S = 1.0


def _refused(address: str) -> BaseException | None:
    """The ``ConnectionRefusedError`` of an address where nothing listens, else ``None``
    (something answered, or the look was inconclusive).

    Dask's connect retries a refused connection until its timeout (30 s by default), so
    a session opened while the scheduler restarts would wait that long to learn what
    the first attempt said; the recovery loop of ``MonitoredTrainingSession`` would then
    spend its retries waiting. One Dask connection is tried here for
    ``PROBE_TIMEOUT_S`` (Dask's own, handshake included, so the scheduler logs nothing),
    on a short-lived thread with its own event loop (the caller may be running one, as
    in Jupyter). Only a refusal counts: a slow handshake (a busy scheduler) or anything
    else leaves the decision to the client's own connect and its timeout.
    """
    if not address.startswith(("tcp://", "tls://")):
        return None
    from distributed.comm import connect as dask_connect
    from distributed.security import Security

    async def look() -> None:
        comm = await dask_connect(
            address, timeout=PROBE_TIMEOUT_S, **Security().get_connection_args("client")
        )
        await comm.close()

    outcome = run_on_own_loop(look, PROBE_TIMEOUT_S + 5.0, "dataflow-scheduler-probe")
    if outcome is None or outcome[0]:
        return None
    cause: BaseException | None = outcome[1]
    for _ in range(8):  # Dask wraps the socket's error: walk the chain, a little way
        if cause is None or isinstance(cause, ConnectionRefusedError):
            break
        cause = cause.__cause__ or cause.__context__
    if isinstance(cause, ConnectionRefusedError):
        return cause
    # Dask's connect retries until its timeout and reports its last attempt, which the
    # timeout may have cut short (a TimeoutError, the refusals before it dropped). Ask
    # the socket once: only reached when Dask's connect already failed.
    return _socket_refused(address)


def _socket_refused(address: str) -> ConnectionRefusedError | None:
    """The refusal of one plain TCP connect to ``address``'s host and port, if refused."""
    import socket

    from distributed.comm.addressing import parse_address, parse_host_port

    try:
        host, port = parse_host_port(parse_address(address)[1])
        socket.create_connection((host, port), timeout=PROBE_TIMEOUT_S).close()
    except ConnectionRefusedError as exc:
        return exc
    except (OSError, ValueError):
        return None
    return None


def default_connect_timeout() -> float:
    """Dask's connect timeout (``distributed.comm.timeouts.connect``), in seconds."""
    import dask

    return float(dask.utils.parse_timedelta(dask.config.get("distributed.comm.timeouts.connect")))


def connect(target: Any, timeout: float | None = None) -> tuple[Any, bool]:
    """A client for ``target``, and whether the caller owns (must close) it.

    Raises:
        errors.UnavailableError: no scheduler answered at the address within ``timeout``.
        TypeError: ``target`` is not a cluster target.
    """
    import distributed

    if isinstance(target, LocalCluster):
        return target.client, False
    if isinstance(target, distributed.Client):
        return target, False
    if hasattr(target, "scheduler_address"):  # a Dask cluster object
        client = distributed.Client(target, set_as_default=False)
        _owned_clients.add(client)
        return client, True
    if isinstance(target, str):
        if timeout is None:
            timeout = default_connect_timeout()
        if grpc_target.is_grpc_target(target):  # a task's address: TF1's server.target
            return connect(grpc_target.resolve(target, timeout).scheduler, timeout)
        refused = _refused(target)
        if refused is not None:
            raise errors.UnavailableError(
                None,
                None,
                f"No Dask scheduler at '{target}': the connection was refused "
                f"({refused}). Is `dask scheduler` running there (one restarting is back in "
                "a few seconds), and do the address and protocol (tcp:// or tls://) match?",
            )
        try:
            client = _open_client(target, timeout)
            _owned_clients.add(client)
            return client, True
        except TypeError as exc:
            if "TLS" not in str(exc):
                raise
            raise errors.UnavailableError(
                None,
                None,
                f"The Dask scheduler at '{target}' speaks TLS and no TLS "
                "credentials are configured: pass Session(distributed.Client(address, "
                "security=distributed.security.Security(...))), or set "
                f"distributed.comm.tls.* in the Dask configuration ({exc})",
            ) from None
        except (OSError, TimeoutError, asyncio.TimeoutError) as exc:
            raise errors.UnavailableError(
                None,
                None,
                f"Cannot reach a Dask scheduler at '{target}' (timeout {timeout:g} s"
                f"; {type(exc).__name__}: {exc}). Is `dask scheduler` running there, and "
                "do the address and protocol (tcp:// or tls://) match?",
            ) from None
    raise TypeError(
        f"Session target must be '', a Dask scheduler address, a "
        f"distributed.Client or a dataflow.LocalCluster, not {target!r}"
    )


def _open_client(target: str, timeout: float) -> Any:
    """``distributed.Client(target)``; one that fails to connect is closed before the
    error propagates. (Left to the garbage collector, its ``__del__`` stops its event
    loop from whichever thread collects it, under a lock all of distributed's loop
    runners share: a collection inside another client's start, which holds that lock
    while it waits for its new loop's thread, deadlocked there.)"""
    import distributed

    client = distributed.Client.__new__(distributed.Client)
    try:
        distributed.Client.__init__(client, target, timeout=timeout, set_as_default=False)
    except BaseException:
        with contextlib.suppress(Exception):
            client.close()
        raise
    return client


@functools.cache
def _dask_local_cluster_class(processes: bool) -> type:
    """``distributed.LocalCluster``; with worker processes, one that leaves a worker's
    restarts to its nanny.

    Dask's ``SpecCluster`` closes a worker's nanny when, ``lost-worker-timeout`` (15 s)
    after the scheduler reported the worker gone, no worker of that name is in the
    cluster. It checks whatever is true then: a ps killed, back, and killed again 15 s
    later while its new process is still importing finds its nanny closed mid-restart,
    and the worker never comes back (recovery then waits forever). Our nannies live in
    this process and restart their workers themselves, so a worker's removal leaves
    them alone; ``scale`` and ``close`` still stop them.
    """
    import distributed
    from distributed.deploy.cluster import Cluster

    if not processes:
        return distributed.LocalCluster

    class NannyRestartsLocalCluster(distributed.LocalCluster):
        def _update_worker_status(self, op: str, msg: Any) -> None:
            if op == "remove":
                Cluster._update_worker_status(self, op, msg)  # no timer to close the nanny
            else:
                super()._update_worker_status(op, msg)

    return NannyRestartsLocalCluster


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
        host: interface every server of the cluster listens on (loopback by default).
        dashboard_address: where the dashboard listens (``None`` for none); a port
            alone (``":8787"``) is a port on ``host``.
        security: a ``distributed.security.Security``, or ``True`` for TLS with
            temporary self-signed certificates.
        silence_logs: log level of the workers' and scheduler's loggers.
        **kwargs: passed to ``distributed.LocalCluster``.

    Example:
        >>> with dataflow.LocalCluster(ps=1, worker=2) as cluster:  # doctest: +SKIP
        ...     with tf.Session(cluster) as sess:
        ...         sess.run(...)
    """

    def __init__(
        self,
        ps: int = 1,
        worker: int = 2,
        gpus_per_worker: int = 0,
        processes: bool = True,
        threads_per_worker: int = 2,
        host: str = "127.0.0.1",
        dashboard_address: str | None = ":8787",
        security: Any = None,
        silence_logs: int = logging.ERROR,
        **kwargs: Any,
    ) -> None:
        import distributed

        from .lowering import resource_name

        if processes:
            refuse_unguarded_main()
            # Workers import dataflow when they start, not when the first step needs it.
            kwargs.setdefault("preload", ["dataflow.worker"])
        if dashboard_address is not None and dashboard_address.startswith(":"):
            # A port alone would make Dask listen on every interface: the dashboard
            # listens where the cluster does (loopback unless ``host`` says otherwise).
            dashboard_address = f"{host}{dashboard_address}"
        if dashboard_address is None:
            # Dask's scheduler still serves its HTTP routes (health, metrics) without a
            # dashboard, on port 8787 unless told otherwise: a free port instead, so a
            # cluster without a dashboard neither takes 8787 nor warns that it is taken.
            kwargs["scheduler_kwargs"] = {
                "dashboard_address": f"{host}:0",
                **kwargs.get("scheduler_kwargs", {}),
            }
        if not processes and "protocol" not in kwargs:
            # Threads would talk inproc://, which takes no host.
            kwargs["protocol"] = "tls://" if security else "tcp://"
        self.cluster = _dask_local_cluster_class(processes)(
            n_workers=0,
            processes=processes,
            threads_per_worker=threads_per_worker,
            host=host,
            dashboard_address=dashboard_address,
            security=security,
            silence_logs=silence_logs,
            **kwargs,
        )
        try:
            names = [f"ps-{i}" for i in range(ps)] + [f"worker-{i}" for i in range(worker)]
            self._jobs = {"ps": names[:ps], "worker": names[ps:]}
            for name in names:
                resources = {resource_name(name): 1e9}
                if gpus_per_worker and name.startswith("worker-"):
                    resources["GPU"] = gpus_per_worker
                options = dict(self.cluster.new_spec["options"], name=name, resources=resources)
                self.cluster.worker_spec[name] = {
                    "cls": self.cluster.new_spec["cls"],
                    "options": options,
                }
            self.cluster.scale(len(names))
            self.client = distributed.Client(self.cluster, set_as_default=False)
            self.client.wait_for_workers(len(names), timeout=120)
            from ..dashboard import register as add_dataflow_page

            add_dataflow_page(self.client)  # <dashboard>/dataflow from the start; never raises
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
        """Stops the workers and the scheduler (all variables on them are lost).

        Sessions still open on the cluster stay open but fail their next step; closing
        them afterwards is quick."""
        for client in list(_owned_clients):
            if (
                client.scheduler is not None
                and client.scheduler.address == self.target
                and client.status in ("running", "connecting")
            ):
                forget_view(client)
                close_client(client)
        forget_view(self.client)
        self.client.close()
        self.cluster.close()

    def __enter__(self) -> LocalCluster:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _repr_html_(self) -> str | None:
        return repr_hooks.html("LocalCluster", self)

    def __repr__(self) -> str:
        jobs = ", ".join(f"{job}={len(names)}" for job, names in self._jobs.items())
        return f"<dataflow.LocalCluster {jobs} scheduler={self.target}>"
