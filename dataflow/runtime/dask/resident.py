"""The resident-step path of the Dask backend, and the records both paths share.

``ResidentPath`` is a mixin of ``DaskBackend`` (``dask/backend.py``): it runs one step as
messages to the workers that hold the plan (``run`` to each, ``send`` between them,
``abort`` on failure) over step streams (``dask/stream.py``: Dask connections to the
workers' own addresses), from the calling thread, without the scheduler. ``BoundPlan``
(a plan lowered for this cluster), ``StepWatch`` (a running step: the workers it needs,
and why it must stop early) and ``assemble_fetches`` serve the per-step graph path too.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...framework import errors
from ..compile.plan import Plan
from ..config import StepTrace
from . import cluster_view
from . import trace as step_trace
from .lowering import LoweredPlan
from .stream import EARLY
from .stream_client import Lost, StepStreamClient
from .worker_state import (
    PlanMissingError,
)


@dataclass
class BoundPlan:
    """A plan lowered for this cluster, plus which worker addresses hold it."""

    lowered: LoweredPlan
    installed: dict[str, str] = field(default_factory=dict)  # worker name -> address
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def plan(self) -> Plan:
        return self.lowered.plan


class StepWatch:
    """A running step: the workers it needs, and why it must stop early."""

    __slots__ = ("workers", "event", "lost")

    def __init__(self, workers: Sequence[str]) -> None:
        self.workers = frozenset(workers)
        self.event = asyncio.Event()
        self.lost: cluster_view.WorkerInfo | None = None


# How long a step whose stream broke waits to learn why: the scheduler's loss or the
# worker's (the connection to a killed process breaks first; the news of its scheduler
# or of its end reach this client a moment later, later still on a loaded machine).
CAUSE_SECONDS = 2.0


def _await_cause(watch: StepWatch, connected: Callable[[], bool]) -> None:
    """Waits until the step's lost worker is known or the scheduler connection is gone
    (``connected()`` false), at most ``CAUSE_SECONDS``, so that the error names the
    cause rather than the broken stream it showed as."""
    deadline = time.monotonic() + CAUSE_SECONDS
    while watch.lost is None and connected() and time.monotonic() < deadline:
        time.sleep(0.01)


def assemble_fetches(
    lowered: LoweredPlan, feed_values: Sequence[Any], stage_value: Any
) -> list[Any]:
    out: list[Any] = []
    for src in lowered.fetch_sources:
        if src[0] == "n":
            out.append(None)
        elif src[0] == "f":
            out.append(feed_values[src[1]])
        else:
            out.append(stage_value(src[1], src[2]))
    return out


class ResidentPath:
    """The resident-step methods of ``DaskBackend``, which provides what is declared here."""

    client: Any
    view: cluster_view.ClusterView
    _streams: StepStreamClient | None
    _running_lock: threading.Lock
    _task_of_worker: dict[str, str]
    # Defined by DaskBackend:
    _unavailable: Callable[[StepWatch, BaseException | None], errors.OpError]
    check_scheduler: Callable[[], None]

    def _failure_of(self, replies: dict[str, Any], addresses: dict[str, str]) -> str | None:
        """Raises the error a resident step's replies report (a lost worker first, then
        an op's error); returns the name of a worker that lacked the plan, if any."""
        from distributed.comm import CommClosedError

        failure = aborted = None
        for name, reply in replies.items():
            if isinstance(reply, (OSError, CommClosedError, EOFError)):
                failure = failure or errors.UnavailableError(
                    None,
                    None,
                    f"Dask worker '{name}' ({self._task_of_worker.get(name)}, "
                    f"{addresses[name]}) was lost during the step: "
                    f"{type(reply).__name__}: {reply}",
                )
            elif isinstance(reply, BaseException):
                failure = failure or errors.InternalError(
                    None,
                    None,
                    f"Dask worker '{name}' failed to run its part of the step: "
                    f"{type(reply).__name__}: {reply}",
                )
            elif reply["status"] == "error":
                failure = (
                    reply["error"]
                    if not isinstance(failure, errors.OpError)
                    or isinstance(failure, errors.UnavailableError)
                    else failure
                )
            elif reply["status"] == "missing":
                return name
            elif reply["status"] != "OK" and aborted is None:
                # Only a consequence of another part's failure, which is reported first
                # whatever order the replies come in.
                aborted = errors.AbortedError(
                    None, None, f"step aborted on '{name}': {reply.get('reason', '')}"
                )
        failure = failure or aborted
        if failure is not None:
            raise failure
        return None

    @staticmethod
    def _resident_results(
        lowered: LoweredPlan, feed_values: list[Any], replies: Sequence[Any]
    ) -> list[Any]:
        values: dict[int, Any] = {}
        for reply in replies:
            values.update(reply["values"])
        outputs = {stage.index: stage.outputs for stage in lowered.plan.stages}
        return assemble_fetches(
            lowered, feed_values, lambda stage, pos: values[outputs[stage][pos]]
        )

    def _run_streams(
        self,
        bound: BoundPlan,
        step: str,
        feed_values: list[Any],
        addresses: dict[str, str],
        watch: StepWatch,
        timeout: float | None,
        run_metadata: StepTrace | None = None,
    ) -> list[Any]:
        """A resident step over the step streams, from the calling thread (no trip
        through the client's event loop); ``run_metadata`` makes it a traced step."""
        lowered = bound.lowered
        requests = {}
        for name, plan in lowered.worker_plans.items():
            feeds = {slot: feed_values[i] for slot, i in lowered.feeds_by_worker.get(name, ())}
            message: dict[str, Any] = {
                "op": "run",
                "key": plan.key,
                "step": step,
                "feeds": feeds,
                "peers": addresses,
                EARLY: True,  # (``request_all`` takes the worker's early replies)
            }
            if run_metadata is not None:
                message["trace"] = True
            requests[name] = (addresses[name], message)
        deadline = None if timeout is None else time.monotonic() + timeout
        timings: dict[str, Any] | None = {} if run_metadata is not None else None
        try:
            replies = self._stream_client().request_all(
                requests,
                lambda: watch.lost is not None or not self.view.connected(),
                deadline,
                timings,
            )
        except (Lost, TimeoutError):
            self._abort_soon(lowered, step, addresses, watch)
            self.check_scheduler()
            if watch.lost is not None:
                raise self._unavailable(watch, None) from None
            raise errors.DeadlineExceededError(
                None, None, f"Timed out: step {step} did not finish within {timeout:g} s"
            ) from None
        broken = {name for name, r in replies.items() if isinstance(r, BaseException)}
        if broken:
            _await_cause(watch, self.view.connected)
            self.check_scheduler()  # workers exit with their scheduler: say which it was
            # A stream broke: a lost worker, or a restarted one (the plan is installed
            # again at the next step).
            self._abort_soon(lowered, step, addresses, watch, broken)
            bound.installed.clear()
            if watch.lost is not None:
                raise self._unavailable(watch, None)
        missing = self._failure_of(replies, addresses)
        if missing is not None:
            self.client.sync(self._abort, lowered, step, addresses)
            raise PlanMissingError(missing)
        if run_metadata is None:
            return self._resident_results(lowered, feed_values, list(replies.values()))
        assemble_start = time.perf_counter()
        for reply in replies.values():
            reply["trace"] = step_trace.to_local(reply["trace"], reply["clock"])
            run_metadata.step_stats.extend(reply["trace"])
        assert timings is not None
        run_metadata.step_stats.extend(
            step_trace.client_events(timings, replies, self._task_of_worker)
        )
        results = self._resident_results(lowered, feed_values, list(replies.values()))
        run_metadata.step_stats.append(
            step_trace.event("client: unpack replies", "Client", "", assemble_start)
        )
        return results

    def _abort_soon(
        self,
        lowered: LoweredPlan,
        step: str,
        addresses: dict[str, str],
        watch: StepWatch,
        skip: frozenset[str] | set[str] = frozenset(),
    ) -> None:
        """Fire and forget: aborts the step's parts on the workers still there (waiting
        on a dead worker's address would hold the caller for the connect timeout)."""
        lost = watch.lost.name if watch.lost is not None else None
        alive = {name: a for name, a in addresses.items() if name != lost and name not in skip}
        if alive and self.client.status == "running":

            async def abort() -> None:
                with contextlib.suppress(Exception):
                    await self._abort(lowered, step, alive)

            self.client.loop.add_callback(abort)

    def _stream_client(self) -> StepStreamClient:
        if self._streams is None:
            with self._running_lock:
                if self._streams is None:
                    self._streams = StepStreamClient(self.client)
        return self._streams

    async def _abort(self, lowered: LoweredPlan, step: str, addresses: dict[str, str]) -> None:
        calls = [
            self.client.rpc(addresses[name]).dataflow_abort(
                key=plan.key, step=step, reason="cancelled by the client", reply=False
            )
            for name, plan in lowered.worker_plans.items()
            if name in addresses
        ]
        await asyncio.gather(*calls, return_exceptions=True)
