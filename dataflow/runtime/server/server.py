"""``tf.train.Server``: a TF1 task started the TF1 way becomes a Dask worker.

A TF1 distributed program starts one process per task with the same ``ClusterSpec`` of
``host:port`` addresses and a different ``job_name``/``task_index``; each process makes a
``tf.train.Server`` and either serves (``server.join()``) or runs a session on
``server.target``. Here every such process becomes the Dask worker named ``job-task``
(``/job:job/task:task``, the naming every dataflow session understands) of one Dask
scheduler, and ``server.target`` is ``grpc://`` and the task's own address, as in TF1
(a session there runs on that scheduler with this task as its home: ``grpc_target``):

* **The scheduler.** When the environment variable ``DATAFLOW_SCHEDULER`` holds an
  address, every task's worker joins that scheduler (started by you, e.g.
  ``dask scheduler``). Otherwise one task starts it, in its own process, on its own
  ``ClusterSpec`` address: the first of ``/job:ps/task:0``, ``/job:chief/task:0``,
  ``/job:master/task:0``, ``/job:worker/task:0`` that exists (else task 0 of the first job
  by name). That task's worker then listens on a free port of the same host; every
  other task's worker listens on its ``ClusterSpec`` address. Workers started before the
  scheduler wait for it, as TF1 tasks wait for each other.
* **The worker.** A ``distributed.Worker`` runs in a background thread of this process,
  with the Dask resource that pins dataflow stage tasks to it. ``join()`` blocks until
  ``stop()`` (as TF1's ``join``, forever in practice); ``stop()`` closes it (and the
  scheduler this task started).
* **Restarts.** A Dask worker closes for good when its scheduler goes; a TF1 task
  reconnects. So when this task's worker closes by itself (the task hosting the
  scheduler was restarted), a new worker of the same name starts on the same address and
  waits for the scheduler to come back, as a nanny restarts a worker (``_reconnect``);
  ``MonitoredTrainingSession`` then recovers from its last checkpoint. A restarted task
  that does not host the scheduler just joins it again under its name.
* ``create_local_server()`` is a one-task cluster (``/job:localhost/task:0``) in this
  process, with its own scheduler: ``Session(server.target)`` then runs on Dask here.

The scheduler's dashboard listens on ``DATAFLOW_DASHBOARD_ADDRESS`` (default ``:8787``;
Dask picks a free port when that one is taken): ``server.dashboard_link``.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import errno
import gc
import logging
import os
import socket
import threading
import traceback
import warnings
import weakref
from dataclasses import dataclass
from typing import Any

from ...framework import errors
from ..cluster_spec import ClusterSpec
from ..dask.grpc_target import SCHEDULER_TASK_METADATA
from ..dask.lowering import resource_name

logger = logging.getLogger(__name__)

# Which task starts the scheduler when DATAFLOW_SCHEDULER does not name one.
_SCHEDULER_JOBS = ("ps", "chief", "master", "worker")
_START_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class ServerDef:
    """What a ``Server`` was made from (TF1's ``ServerDef``, as plain data).

    ``cluster`` may be given as anything ``ClusterSpec`` takes (TF1 programs pass
    ``cluster_spec.as_cluster_def()``, a ``ClusterDef``); it is kept as a ``ClusterSpec``.
    """

    cluster: ClusterSpec
    job_name: str
    task_index: int
    protocol: str = "dask"
    default_session_config: Any = None

    def __post_init__(self) -> None:
        if not isinstance(self.cluster, ClusterSpec):
            object.__setattr__(self, "cluster", ClusterSpec(self.cluster))


def scheduler_task(cluster: ClusterSpec) -> tuple[str, int]:
    """The ``(job, task)`` that starts the scheduler (see the module docstring)."""
    jobs = cluster.jobs
    for job in (*_SCHEDULER_JOBS, *sorted(jobs)):
        if job in jobs and cluster.task_indices(job):
            return job, min(cluster.task_indices(job))
    raise ValueError("The cluster spec has no tasks")


def _split(address: str) -> tuple[str, int]:
    """``'host:port'`` (with or without ``tcp://``) as ``(host, port)``."""
    bare = address.split("://", 1)[-1]
    host, _, port = bare.rpartition(":")
    if not host or not port.isdigit():
        raise errors.InvalidArgumentError(
            None,
            None,
            f'Could not parse port for local server from "{address}" (a task address must '
            "be 'host:port')",
        )
    return host, int(port)


def _bind_failure(failure: BaseException | None) -> OSError | None:
    """The ``OSError`` "address in use" behind a start failure (Dask wraps it), if any.

    Tornado's ``bind_sockets`` leaves the socket whose bind failed open, held by the
    failed frames' locals; they are cleared here, so that the socket closes now (its
    ``ResourceWarning`` silenced) rather than whenever the failure is collected.
    """
    chain = []
    while failure is not None and failure not in chain:
        chain.append(failure)
        failure = failure.__cause__ or failure.__context__
    refused = next(
        (e for e in chain if isinstance(e, OSError) and e.errno == errno.EADDRINUSE), None
    )
    if refused is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ResourceWarning)
            for e in chain:
                traceback.clear_frames(e.__traceback__)
            gc.collect()
    return refused


def _free_port(host: str, avoid: frozenset[int] = frozenset()) -> int:
    """A port free on ``host`` now and not in ``avoid``: the cluster spec's own ports,
    which tasks not started yet (in this process or beside it) must find free. The
    system draws free ports from the same range a test or a launcher drew the spec's
    from, so an ephemeral port of one task could take another task's address."""
    while True:
        with socket.socket() as sock:
            sock.bind((host, 0))
            port = int(sock.getsockname()[1])
        if port not in avoid:
            return port


def _spec_ports(cluster: ClusterSpec) -> frozenset[int]:
    """The ports of the cluster spec's task addresses (any that parse)."""
    ports = set()
    for job in cluster.jobs:
        for address in cluster.job_tasks(job):
            port = (address or "").rpartition(":")[2]
            if port.isdigit():
                ports.add(int(port))
    return frozenset(ports)


def _dashboard_address(host: str, avoid: frozenset[int]) -> str:
    """``DATAFLOW_DASHBOARD_ADDRESS`` (default ``host:8787``); a port of 0 (any free
    port) is chosen here, outside the cluster spec's ports (``_free_port``)."""
    address = os.environ.get("DATAFLOW_DASHBOARD_ADDRESS", f"{host}:8787")
    bare_host, _, port = address.rpartition(":")
    if port == "0":
        return f"{bare_host}:{_free_port(bare_host or host, avoid)}"
    return address


def _as_cluster_spec(server_or_cluster_def: Any) -> tuple[ClusterSpec, ServerDef | None]:
    if isinstance(server_or_cluster_def, ServerDef):
        return server_or_cluster_def.cluster, server_or_cluster_def
    if isinstance(server_or_cluster_def, ClusterSpec):
        return server_or_cluster_def, None
    return ClusterSpec(server_or_cluster_def), None


def _resolve_task(cluster: ClusterSpec, job_name: str | None, task_index: int | None) -> tuple:
    if job_name is None:
        if len(cluster.jobs) != 1:
            raise ValueError("Must specify an explicit `job_name`.")
        job_name = cluster.jobs[0]
    if job_name not in cluster.jobs:
        # TF1's server reports this one as an internal error (grpc_server_lib.cc).
        raise errors.InternalError(
            None, None, f'Job "{job_name}" was not defined in cluster (jobs: {cluster.jobs})'
        )
    if task_index is None:
        indices = cluster.task_indices(job_name)
        if len(indices) != 1:
            raise ValueError("Must specify an explicit `task_index`.")
        task_index = indices[0]
    if task_index not in cluster.task_indices(job_name):
        raise errors.InvalidArgumentError(
            None,
            None,
            f'Task {task_index} was not defined in job "{job_name}" (tasks: '
            f"{cluster.task_indices(job_name)})",
        )
    return job_name, int(task_index)


class Server:
    """An in-process server: this TF1 task as the Dask worker ``job-task``.

    Args:
        server_or_cluster_def: a ``tf.train.ClusterSpec``, a dict of job name to task
            addresses (``'host:port'``), or a ``ServerDef``.
        job_name: this task's job (may be omitted when the cluster has one job).
        task_index: this task's index (may be omitted when the job has one task).
        protocol: accepted for TF1 compatibility (``'grpc'``); Dask's comms are used.
        config: a ``ConfigProto`` kept as ``server_def.default_session_config``; its
            ``intra_op_parallelism_threads`` (when > 0) sets the worker's threads.
        start: start serving now (otherwise call ``start()``).

    Raises:
        ValueError: ``job_name`` or ``task_index`` is left out where the cluster spec
            has several to choose from.
        errors.InternalError: the job is not in the cluster spec (TF1's class).
        errors.InvalidArgumentError: the task is not in its job, or an address is not
            ``host:port``.
        errors.UnknownError: the task's address is in use (when starting).
        errors.UnavailableError: the worker did not start for another reason.
    """

    def __init__(
        self,
        server_or_cluster_def: Any,
        job_name: str | None = None,
        task_index: int | None = None,
        protocol: str | None = None,
        config: Any = None,
        start: bool = True,
    ):
        cluster, given = _as_cluster_spec(server_or_cluster_def)
        if given is not None:
            job_name = job_name if job_name is not None else given.job_name
            task_index = task_index if task_index is not None else given.task_index
            config = config if config is not None else given.default_session_config
        job_name, task_index = _resolve_task(cluster, job_name, task_index)
        self._server_def = ServerDef(cluster, job_name, task_index, protocol or "dask", config)
        self._name = f"{job_name}-{task_index}"
        self._spec_address = cluster.task_address(job_name, task_index)
        host, port = _split(self._spec_address)
        external = os.environ.get("DATAFLOW_SCHEDULER")
        self._hosts_scheduler = not external and scheduler_task(cluster) == (job_name, task_index)
        if external:
            self._scheduler_address = external if "://" in external else f"tcp://{external}"
        else:
            s_host, s_port = _split(cluster.task_address(*scheduler_task(cluster)))
            self._scheduler_address = f"tcp://{s_host}:{s_port}"
        # Ports this task picks itself (its worker's, HTTP servers') avoid these.
        self._spec_ports = _spec_ports(cluster)
        # The task hosting the scheduler gives it its address; its worker takes a free port.
        self._worker_host = host
        self._worker_port = _free_port(host, self._spec_ports) if self._hosts_scheduler else port
        threads = getattr(config, "intra_op_parallelism_threads", 0) or 2
        self._threads = int(threads)
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._failure: BaseException | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop_requested: asyncio.Event | None = None
        self._worker: Any = None
        self._scheduler: Any = None
        if start:
            self.start()

    # --- TF1's interface ---------------------------------------------------------------
    @property
    def target(self) -> str:
        """This task's session target, as in TF1: ``grpc://`` and its ``ClusterSpec``
        address. A session on it runs on this cluster's Dask scheduler, with this task
        as its home (ops without a device request run here). ``scheduler_address`` is
        the plain Dask address."""
        return f"grpc://{self._spec_address}"

    @property
    def scheduler_address(self) -> str:
        """The address of the Dask scheduler this task's worker belongs to."""
        return self._scheduler_address

    @property
    def server_def(self) -> ServerDef:
        return self._server_def

    @property
    def worker_name(self) -> str:
        """This task's Dask worker name, ``job-task``."""
        return self._name

    @property
    def dashboard_link(self) -> str | None:
        """The scheduler's dashboard, when this task started the scheduler."""
        if self._scheduler is None:
            return None
        port = self._scheduler.http_server.port
        return f"http://{self._worker_host}:{port}/status"

    def start(self) -> None:
        """Starts serving (the scheduler if this task hosts it, then the worker); returns
        once the worker has registered with the scheduler.

        Raises:
            errors.UnknownError: an address this task listens on is in use (TF1's
                "Could not start gRPC server").
            errors.UnavailableError: the worker did not start within two minutes.
        """
        if self._thread is not None:
            return
        self._thread = threading.Thread(
            target=self._serve, name=f"dataflow-{self._name}", daemon=True
        )
        self._thread.start()
        _RUNNING.add(self)
        if not self._ready.wait(_START_TIMEOUT_S) or self._failure is not None:
            refused = _bind_failure(self._failure)
            if refused is not None:
                raise errors.UnknownError(
                    None,
                    None,
                    f"tf.train.Server {self._name} could not start: the address "
                    f"{self._spec_address} is in use ({refused})",
                )
            raise errors.UnavailableError(
                None,
                None,
                f"tf.train.Server {self._name} could not start its Dask worker for scheduler "
                f"{self._scheduler_address}: {self._failure or 'timed out'}",
            )

    def join(self) -> None:
        """Blocks while this task serves: until ``stop()``, as TF1's ``join`` (a task
        whose scheduler goes away reconnects to it when it comes back)."""
        if self._thread is None:
            raise errors.FailedPreconditionError(None, None, "The server has not been started")
        while self._thread.is_alive():
            self._thread.join(0.5)

    def stop(self) -> None:
        """Closes this task's worker (and the scheduler it started)."""
        loop, stop = self._loop, self._stop_requested
        if loop is not None and stop is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(stop.set)
            except RuntimeError:  # the loop closed meanwhile
                pass
        if self._thread is not None:
            self._thread.join(30)
        _RUNNING.discard(self)

    @staticmethod
    def create_local_server(config: Any = None, start: bool = True) -> Server:
        """A one-task cluster (``/job:localhost/task:0``) served by this process."""
        port = _free_port("127.0.0.1")
        return Server(
            {"localhost": [f"127.0.0.1:{port}"]},
            job_name="localhost",
            task_index=0,
            config=config,
            start=start,
        )

    # --- the serving thread ------------------------------------------------------------
    def _serve(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as exc:  # reported by start() or logged
            self._failure = exc
            if self._ready.is_set():
                logger.error("tf.train.Server %s stopped: %s", self._name, exc)
        finally:
            self._ready.set()

    async def _main(self) -> None:
        import distributed

        from ..dask import worker_state  # noqa: F401 - what a worker's preload would import

        # As LocalCluster's silence_logs: Dask's INFO lines (connections, workers
        # joining) would drown the training script's own output.
        logging.getLogger("distributed").setLevel(logging.ERROR)
        self._loop = asyncio.get_running_loop()
        self._stop_requested = asyncio.Event()
        _limit_blas_threads(self._server_def.cluster, self._worker_host, self._threads)
        if self._hosts_scheduler:
            host, port = _split(self._scheduler_address)
            self._scheduler = await distributed.Scheduler(
                host=host,
                port=port,
                # The dashboard listens where the scheduler does, not on every interface.
                dashboard_address=_dashboard_address(host, self._spec_ports),
            )
        self._worker = await self._new_worker()
        if self._scheduler is not None:
            # grpc_target: a session on this task's address (the scheduler's) runs its
            # unplaced ops on this task's worker.
            self._scheduler.set_metadata(list(SCHEDULER_TASK_METADATA), self._name)
        self._ready.set()
        stop = asyncio.ensure_future(self._stop_requested.wait())
        try:
            while self._worker is not None and not await self._until_closed_or_stopped(stop):
                self._worker = await self._reconnect(stop)
        finally:
            stop.cancel()
            if self._worker is not None:
                await self._worker.close()
            if self._scheduler is not None:
                await self._scheduler.close()

    def _new_worker(self) -> Any:
        """This task's Dask worker, not started yet (``await`` it to start it)."""
        import distributed

        host = self._worker_host
        return distributed.Worker(
            self._scheduler_address,
            name=self._name,
            host=host,
            port=self._worker_port,
            nthreads=self._threads,
            resources={resource_name(self._name): 1e9},
            # Its HTTP server (metrics, health) would take any free port, which could be
            # another task's address: one outside the spec's ports.
            dashboard_address=f"{host}:{_free_port(host, self._spec_ports)}",
        )

    async def _until_closed_or_stopped(self, stop: asyncio.Future) -> bool:
        """Waits until this task's worker closes or ``stop()`` is asked; ``True`` when
        this task is done serving (asked to stop, or the scheduler it hosts closed)."""
        finished = asyncio.ensure_future(self._worker.finished())
        await asyncio.wait([finished, stop], return_when=asyncio.FIRST_COMPLETED)
        finished.cancel()
        hosted_gone = self._scheduler is not None and self._scheduler.status.name in (
            "closing",
            "closed",
            "failed",
        )
        return stop.done() or hosted_gone

    async def _reconnect(self, stop: asyncio.Future) -> Any:
        """A new worker for this task, once its scheduler takes it (``None`` if
        ``stop()`` is asked first).

        A Dask worker closes for good when its connection to the scheduler breaks (Dask
        removed worker reconnection), and ``dask worker``'s nanny then exits too. A TF1
        task outlives the others restarting: its server reconnects. So, as a nanny
        restarts a worker that died, this loop starts a new worker of the same name, on
        the same address, when the old one closed by itself; a worker that starts while
        no scheduler listens waits for one (the task hosting it being restarted), and a
        start that fails (the restarted scheduler still holds this task's old worker
        under its name) is tried again. State this process holds (the stores of
        ``worker_state``) is kept, as a TF1 task that did not restart keeps its own;
        what the lost tasks held is restored from a checkpoint.
        """
        logger.warning(
            "tf.train.Server %s: its Dask worker closed (the scheduler at %s went away?); "
            "starting a new one, which waits for the scheduler",
            self._name,
            self._scheduler_address,
        )
        await self._worker.close()
        pause = 0.1
        while not stop.done():
            await self._wait_for_scheduler(stop)
            worker = self._new_worker()
            starting = asyncio.ensure_future(worker.start())
            await asyncio.wait([starting, stop], return_when=asyncio.FIRST_COMPLETED)
            if starting.done() and not starting.cancelled() and starting.exception() is None:
                logger.warning(
                    "tf.train.Server %s: reconnected to the scheduler at %s",
                    self._name,
                    self._scheduler_address,
                )
                return worker
            if not starting.done():
                starting.cancel()
            with contextlib.suppress(BaseException):
                await starting
            await worker.close()
            if not stop.done():
                logger.warning(
                    "tf.train.Server %s: a new worker did not start (%s); retrying",
                    self._name,
                    starting.exception() if not starting.cancelled() else "cancelled",
                )
                await asyncio.sleep(pause)
                pause = min(2.0, pause * 2)
        return None

    async def _wait_for_scheduler(self, stop: asyncio.Future) -> None:
        """Returns once the scheduler's address takes a connection (or ``stop()`` is
        asked). A new worker would find it too, but its connect retries back off
        exponentially, seconds apart after a few seconds of waiting; asking every 0.1 s
        here brought the worker back 5 s sooner after a restart on a loaded machine."""
        from distributed.comm import connect

        while not stop.done():
            try:
                comm = await connect(self._scheduler_address, timeout=0.5)
            except (OSError, asyncio.TimeoutError):
                await asyncio.sleep(0.1)
                continue
            await comm.close()
            return


def blas_share(cluster: ClusterSpec, host: str, threads: int, cores: int) -> int:
    """BLAS threads for one task: the host's cores over the stage threads of the
    cluster's tasks on that host, at least one."""
    tasks_here = sum(
        1
        for job in cluster.jobs
        for address in cluster.job_tasks(job)
        if address is not None and address.rsplit(":", 1)[0] == host
    )
    return max(1, cores // (max(1, tasks_here) * max(1, threads)))


def _limit_blas_threads(cluster: ClusterSpec, host: str, threads: int) -> None:
    """Bounds BLAS to this task's share of the machine's cores (``blas_share``).

    The worker runs up to ``threads`` stages at once, and the cluster spec may put
    several tasks on this host; BLAS left at one thread per core in every one of them
    oversubscribes the cores, and OpenBLAS's threads spin while they wait: with three
    tasks on two cores a 1 MFLOP matmul took 2-16 ms instead of 0.2 ms, and synchronous
    training made 22 global steps/s instead of 220. Dask's nanny starts its workers with
    one BLAS thread (``OPENBLAS_NUM_THREADS=1``); a TF1 task's process is started by its
    user, so its share is set here (a task alone on a 16-core machine with two stage
    threads keeps 8 BLAS threads per stage). A stage itself holds BLAS to one thread
    and splits its kernels over the worker's threads (``dask/worker_state.py``); the
    share rules what the task runs outside stages."""
    from threadpoolctl import threadpool_limits

    from ..execute.inter_op import load_blas

    load_blas()
    # Process-wide and kept: the limiter object restores the old limit only if asked to.
    threadpool_limits(
        limits=blas_share(cluster, host, threads, os.cpu_count() or 1), user_api="blas"
    )


# Servers still serving when the interpreter exits are closed first, so their threads do
# not die mid-message (Dask would log errors for connections cut short).
_RUNNING: weakref.WeakSet[Server] = weakref.WeakSet()


@atexit.register
def _stop_running_servers() -> None:
    # The task hosting the scheduler goes last, so the other workers leave it cleanly.
    for server in sorted(_RUNNING, key=lambda s: s._hosts_scheduler):
        server.stop()
