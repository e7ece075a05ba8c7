"""TF1's session targets, ``grpc://host:port``: one task of a cluster.

In TF1 a session's target names one task of the cluster (``server.target`` is
``grpc://`` plus that task's ``ClusterSpec`` address), that task is the session's master,
and ops without a device request run there. Here each task is a Dask worker named
``job-task`` (``tf.train.Server``), and the cluster's entry point is its Dask
scheduler. A ``grpc://host:port`` target is resolved by asking whatever listens at
``host:port`` who it is (Dask's ``identity``):

* a Dask **worker** (the task's own address): the session connects to that worker's
  scheduler, and the worker's task is the session's home;
* the Dask **scheduler** (the task that started the scheduler listens on its own
  ``ClusterSpec`` address with it, its worker on a free port): the session connects to
  it, and the task that started it (recorded in the scheduler's metadata by
  ``tf.train.Server``) is the home.

A session's home task is where unplaced ops go (``/job:worker/task:0`` otherwise, as for
a plain scheduler address).
"""

from __future__ import annotations

import asyncio
import socket
from dataclasses import dataclass
from typing import Any

from ...framework import errors
from .own_loop import run_on_own_loop

PREFIX = "grpc://"
# Where tf.train.Server records, in the scheduler it started, which task started it.
SCHEDULER_TASK_METADATA = ("dataflow", "scheduler-task")
# How long ``resolve`` first waits for an answer (a task restarting refuses connections).
PROBE_TIMEOUT_S = 1.0


@dataclass(frozen=True)
class GrpcTarget:
    """A resolved ``grpc://`` target: the scheduler to connect to, and the home task's
    worker address (``None`` when the scheduler itself was named)."""

    scheduler: str
    worker: str | None


def is_grpc_target(target: Any) -> bool:
    return isinstance(target, str) and target.startswith(PREFIX)


def _address(target: str) -> str:
    return "tcp://" + target[len(PREFIX) :].rstrip("/")


def _ask(address: str, timeout: float) -> tuple[bool, Any] | None:
    """What answers at ``address`` says it is (Dask's ``identity``), within ``timeout``:
    ``run_on_own_loop``'s ``(True, identity)`` or ``(False, error)``, ``None`` if no
    answer came."""
    from distributed.core import rpc

    async def ask() -> dict:
        async with rpc(address, timeout=timeout) as remote:
            return await asyncio.wait_for(remote.identity(), timeout)

    return run_on_own_loop(ask, timeout + 5.0, "dataflow-grpc-target")


def _refused(address: str) -> bool:
    """Whether one plain TCP connect to ``address`` is refused (nothing listens)."""
    host, port = _host_port(address)
    try:
        socket.create_connection((host, port), timeout=PROBE_TIMEOUT_S).close()
    except ConnectionRefusedError:
        return True
    except OSError:
        return False
    return False


def resolve(target: str, timeout: float) -> GrpcTarget:
    """Asks what listens at ``target``'s address whether it is a worker or a scheduler.

    The first question waits ``PROBE_TIMEOUT_S``: Dask's connect retries a refused
    connection until its timeout, backing off exponentially, so a session opened while
    the task restarts would learn seconds after it came back that it had; the recovery
    of ``MonitoredTrainingSession`` retries opening sessions instead. An address that
    refuses a plain connection then is unavailable at once; one where something listens
    but was slow to answer is asked again with the whole ``timeout``.

    Raises:
        errors.UnavailableError: nothing answered, or it is not a Dask server.
    """
    address = _address(target)
    outcome = _ask(address, min(timeout, PROBE_TIMEOUT_S))
    failed = outcome is None or not outcome[0]
    if failed and timeout > PROBE_TIMEOUT_S and not _refused(address):
        outcome = _ask(address, timeout)
    if outcome is None or not outcome[0]:
        why: Any = "no answer" if outcome is None else outcome[1]
        if isinstance(why, BaseException) and not isinstance(why, (OSError, TimeoutError)):
            raise why
        raise errors.UnavailableError(
            None,
            None,
            f"Nothing answered at '{target}' ({why}): is the tf.train.Server (a Dask "
            "worker) or the Dask scheduler for that task running?",
        ) from None
    identity = outcome[1]
    kind = identity.get("type") if isinstance(identity, dict) else None
    if kind == "Scheduler":
        return GrpcTarget(address, None)
    if kind == "Worker" and identity.get("scheduler"):
        return GrpcTarget(str(identity["scheduler"]), address)
    raise errors.UnavailableError(
        None, None, f"'{target}' is not a Dask worker or scheduler (it said {kind!r})"
    )


def home_worker_name(resolved: GrpcTarget, client: Any) -> str | None:
    """The Dask worker name of the target's task: the worker at the address named, or
    the task that started the scheduler; ``None`` when neither is known."""
    if resolved.worker is None:
        name = client.get_metadata(list(SCHEDULER_TASK_METADATA), None)
        return str(name) if name is not None else None
    want = _host_port(resolved.worker)
    for address, info in client.scheduler_info(n_workers=-1)["workers"].items():
        if _host_port(address) == want:
            return str(info.get("name"))
    return None


def _host_port(address: str) -> tuple[str, int]:
    """``address`` as (IP, port), so that ``localhost`` and ``127.0.0.1`` compare equal."""
    host, _, port = address.split("://", 1)[-1].rpartition(":")
    try:
        host = socket.gethostbyname(host.strip("[]"))
    except OSError:
        pass
    return host, int(port)
