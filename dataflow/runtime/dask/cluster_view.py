"""What a client knows of a cluster's workers, kept current: ``ClusterView`` (one per client,
shared by its sessions: the workers, their names and GPUs, lost-worker listeners, the
scheduler connection, dataflow's worker plugin registered once), the per-client view
registry (``view``, ``release_view``, ``forget_view``), and
``comm_failures_as_unavailable``, which turns Dask's communication errors into TF1's
``UnavailableError``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ...framework import errors

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class WorkerInfo:
    name: str
    address: str
    gpus: int
    nthreads: int


# How long a session being opened waits for a client that is between two scheduler
# connections (reconnecting to a scheduler that is coming back), all attempts together.
_RECONNECT_GRACE_S = 30.0


def _wait_running(client: Any, timeout: float) -> bool:
    """Waits until ``client`` is connected again (``status == "running"``)."""
    deadline = time.monotonic() + timeout
    while client.status != "running":
        if client.status in ("closing", "closed") or time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


class ClusterView:
    """The workers one client sees, kept current by scheduler events."""

    def __init__(self, client: Any) -> None:
        from .worker_plugin import PLUGIN_PREFIX

        self.client = client
        self.users = 0  # sessions using this view (``view``/``release_view``)
        self._lock = threading.Lock()
        self._workers: dict[str, WorkerInfo] = {}
        self._by_name: dict[str, str] = {}  # replaced whole, so reads need no lock
        self._listeners: list[Callable[[WorkerInfo], None]] = []
        # address -> GPUs dataflow's kernels can use there, for workers advertising any
        self._usable_gpus: dict[str, int] = {}
        self.plugin_name = f"{PLUGIN_PREFIX}{client.id}"
        try:
            # A client that has just reconnected to a restarted scheduler may swap its
            # connection again while we register (on a loaded machine, more than once:
            # Dask's reconnection retries): start again on the new one.
            deadline = time.monotonic() + _RECONNECT_GRACE_S
            while True:
                # The connection this view registers over (see ``connected``).
                self._connection = client.scheduler_comm
                self.scheduler_address = str(getattr(client.scheduler, "address", "?"))
                with comm_failures_as_unavailable("registering dataflow on the Dask workers"):
                    self.refresh()
                    _register_plugin(client, self.plugin_name, len(self._workers))
                    self.refresh()
                if self.connected():
                    break
                # A client between two connections is given until the deadline.
                left = deadline - time.monotonic()
                if left > 0 and _wait_running(client, left):
                    continue
                raise errors.UnavailableError(
                    None,
                    None,
                    f"The Dask scheduler at {self.scheduler_address} went away "
                    "while this session was opening",
                )
        except BaseException:
            self._unregister()  # the scheduler may hold it though a worker failed
            raise
        previous: Any = getattr(client, "_event_handlers", {}).get("all")
        # A handler of an earlier view of this client is not chained: that view is
        # closed or stale (its scheduler connection is gone), and chaining each view to
        # the last would grow a chain of dead handlers on a long-lived client.
        while isinstance(getattr(previous, "__self__", None), ClusterView):
            previous = previous.__self__._previous_handler
        self._previous_handler = previous
        client.subscribe_topic("all", self._on_event)

    def connected(self) -> bool:
        """Whether the client still holds the scheduler connection this view was made
        on. A client that loses its scheduler tries to reconnect (for its ``timeout``),
        but what it would reconnect to is a restarted scheduler, whose workers are new
        processes (Dask workers exit with their scheduler) that never got this view's
        plugin, and which does not send this client the events the view follows (Dask
        does not renew subscriptions). So a lost connection is lost for good: sessions
        on it fail with ``UnavailableError``, and the next session makes a new view."""
        client = self.client
        return client.status == "running" and client.scheduler_comm is self._connection

    def close(self, current: bool = True) -> None:
        """Stops following the cluster's events and takes this client's worker plugin
        back, so the cluster is left as it was found (see ``worker_plugin``). A view
        that is no longer its client's ``current`` one leaves both to its successor,
        which registered the same plugin name and owns the client's subscription."""
        with self._lock:
            self._listeners.clear()
        if not current or not self.connected():
            return  # nothing to take back from a scheduler this view no longer talks to
        with contextlib.suppress(Exception):  # best effort: the scheduler may be gone
            self.client.unsubscribe_topic("all")
        self._unregister()

    def _unregister(self) -> None:
        if self.client.status == "running":
            with contextlib.suppress(Exception):  # best effort, as above
                self.client.unregister_worker_plugin(self.plugin_name)

    # --- the live workers -------------------------------------------------------------
    def _unchecked_gpu_workers(self, workers: Mapping[str, Mapping]) -> list[str]:
        """Workers that advertise a ``GPU`` resource and were not asked yet whether
        CuPy runs there (CPU-only clusters are never asked)."""
        return [
            address
            for address, info in workers.items()
            if _advertised_gpus(info) > 0 and address not in self._usable_gpus
        ]

    def _note_usable_gpus(self, workers: Mapping[str, Mapping], found: Mapping) -> None:
        """Records what each asked worker answered (``worker_plugin.usable_gpus``), and
        warns once per worker that advertises more GPUs than its kernels can use."""
        for address, answer in found.items():
            info = workers.get(address, {})
            if isinstance(answer, BaseException):
                answer = (0, f"checking failed ({type(answer).__name__}: {answer})")
            usable, why = answer
            advertised = _advertised_gpus(info)
            self._usable_gpus[address] = min(usable, advertised)
            if usable < advertised and (address, advertised) not in _warned_gpus:
                _warned_gpus.add((address, advertised))
                logger.warning(
                    "dataflow: Dask worker %s at %s advertises GPU=%s but %s; it gets %s "
                    "GPU device(s), and ops without a device run on its CPU",
                    info.get("name", address),
                    address,
                    advertised,
                    why or f"CuPy sees only {usable} device(s)",
                    usable,
                )

    def _check_gpus(self, workers: Mapping[str, Mapping]) -> None:
        unchecked = self._unchecked_gpu_workers(workers)
        if unchecked:
            from .worker_plugin import register_by_value, usable_gpus

            register_by_value()  # a worker without dataflow can still answer
            found = self.client.run(usable_gpus, workers=unchecked, on_error="return")
            self._note_usable_gpus(workers, found)

    def _update(self, workers: Mapping[str, Mapping]) -> None:
        table = {}
        for address, info in workers.items():
            table[address] = WorkerInfo(
                str(info.get("name", address)),
                address,
                # GPU devices exist only where CuPy runs (asked once per worker).
                min(_advertised_gpus(info), self._usable_gpus.get(address, 0)),
                int(info.get("nthreads", 1)),
            )
        with self._lock:
            self._workers = table
            self._by_name = {info.name: address for address, info in table.items()}

    def workers(self) -> list[WorkerInfo]:
        with self._lock:
            return list(self._workers.values())

    def address_of(self, name: str) -> str | None:
        return self._by_name.get(name)

    def refresh(self) -> None:
        workers = self.client.scheduler_info(n_workers=-1)["workers"]
        self._check_gpus(workers)
        self._update(workers)

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
                    self._by_name = {k: v for k, v in self._by_name.items() if k != info.name}
                listeners = list(self._listeners)
            if info is not None:
                for fn in listeners:
                    fn(info)
        elif action == "add-worker":
            workers = (await self.client.scheduler.identity(n_workers=-1))["workers"]
            unchecked = self._unchecked_gpu_workers(workers)
            if unchecked:
                from .worker_plugin import usable_gpus

                found = await self.client.run(
                    usable_gpus, workers=unchecked, on_error="return", asynchronous=True
                )
                self._note_usable_gpus(workers, found)
            self._update(workers)


# Workers already reported as advertising GPUs CuPy cannot run (once per process).
_warned_gpus: set[tuple[str, int]] = set()


def _advertised_gpus(info: Mapping) -> int:
    """The ``GPU`` resource a worker was started with (``--resources GPU=1``)."""
    return int((info.get("resources") or {}).get("GPU", 0))


_views: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # client -> current view
_views_lock = threading.Lock()


def view(client: Any) -> ClusterView:
    """The shared ``ClusterView`` of ``client`` (made on first use, and made again when
    the client lost the scheduler connection the last one was made on); each call must
    be matched by ``release_view`` when its user is done."""
    with _views_lock:
        found = _views.get(client)
        if found is None or not found.connected():
            found = _views[client] = ClusterView(client)
        found.users += 1
        return found


def release_view(found: ClusterView) -> None:
    """Drops one user of a view; the last one closes it (``ClusterView.close``), so that
    closing the client later leaves the scheduler nobody to notify and no plugin of ours
    on the workers."""
    with _views_lock:
        found.users -= 1
        if found.users > 0:
            return
        current = _views.get(found.client) is found
        if current:
            del _views[found.client]
    found.close(current)


def forget_view(client: Any) -> None:
    """Closes ``client``'s view whoever still uses it (before closing the client)."""
    with _views_lock:
        found = _views.pop(client, None)
    if found is not None:
        found.close()


@contextlib.contextmanager
def comm_failures_as_unavailable(what: str, *also: type[BaseException]) -> Iterator[None]:
    """Turns the ways Dask reports a lost or restarting worker or scheduler into TF's
    ``UnavailableError``, the error recovery (``MonitoredTrainingSession``) retries on.

    Dask raises ``CommClosedError`` (an ``OSError``) when a connection drops, other
    ``OSError``s when a peer refuses it, and ``TimeoutError`` when a connect or a
    call times out. ``also`` adds exception types the caller knows to mean the same
    (``Client.run`` leaves a worker that just left out of its ``dict`` of results).
    """
    lost: tuple[type[BaseException], ...] = (OSError, TimeoutError, asyncio.TimeoutError, *also)
    try:
        yield
    except errors.OpError:
        raise
    except lost as exc:
        raise errors.UnavailableError(
            None,
            None,
            f"{what} failed: the Dask cluster lost a worker or the scheduler "
            f"({type(exc).__name__}: {exc})",
        ) from exc


# How long registering may take before the user is told what the session waits for.
WAIT_NOTICE_AFTER_S = 2.0


def _register_plugin(client: Any, name: str, n_workers: int) -> None:
    """Registers this client's ``DataflowWorkerPlugin``; every worker runs its setup,
    which imports dataflow there. On a fresh cluster that takes seconds, so a user who
    waits is told what for."""
    from .worker_plugin import DataflowWorkerPlugin, register_by_value

    register_by_value()
    notice = threading.Timer(
        WAIT_NOTICE_AFTER_S,
        lambda: logger.warning(
            "dataflow: waiting for %d Dask worker(s) to import dataflow (once per worker; "
            "dataflow.LocalCluster preloads it)",
            n_workers,
        ),
    )
    notice.daemon = True
    notice.start()
    try:
        client.register_plugin(DataflowWorkerPlugin(name), name=name)
    finally:
        notice.cancel()
