"""The worker's side of resident steps: the step-stream handlers and one step's part.

A resident step is three kinds of messages on step streams (``dask/stream.py``): ``run``
(a client starts this worker's part of one step), ``send`` (a peer delivers a stage's
outputs) and ``abort``. ``_run_part`` runs the worker's stages of the step in order,
each once the stages it waits for have delivered (Send/Recv as in TF), sends what
peers need as soon as a stage is done, and replies with what the client fetches.

**Early replies.** Stages come by level (``compile/partition.py``): a stage needing
nothing from other workers runs first, while the worker would otherwise wait for
them. Its fetched values, once they come to ``EARLY_BYTES``, leave at once in a reply of
their own (status ``EARLY``) when later stages of the step follow here: the client
reads them from this worker's memory while the worker runs the rest (the reply's
parts say the worker is busy, so the client copies them on one thread:
``frames.WRITER_BUSY``). The last reply carries the step's status and the other values.
The worker's state (stores, plans, compiled stages) is ``worker_state.RUNTIME``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from typing import Any

from ...framework import errors
from ..devices import gpu_count
from . import local_sockets
from . import trace as step_trace
from .lowering import WorkerPlan, resource_name
from .step_metrics import RECORDER
from .stream import EARLY, STREAM_OP, PeerStreams, serve
from .transport import StepAborted
from .worker_state import RUNTIME, PlanMissingError

# A resident stage of stateless or variable ops that ran in under this long last time
# runs inline on the event loop (a thread hop costs about as much as such a stage).
_INLINE_SECONDS = 0.001
# Fetched values of at least this many bytes leave before the step's end when more of
# the step runs here after them. From 8 MB on the client reads them from this worker's
# memory (``shm_parts.PEER_READ_PART``) while it computes; smaller ones this worker
# would first copy into its arena itself, delaying its next stage by as much as the
# client's read saves (4 MB fetches measured no faster early on the 2-core VM).
EARLY_BYTES = 8 << 20


def send_early(values: dict) -> bool:
    """Whether fetched ``values`` are worth a reply of their own before the step ends."""
    return sum(getattr(v, "nbytes", 0) for v in values.values()) >= EARLY_BYTES


def install_plans(plans: Sequence[WorkerPlan], dask_worker: Any = None) -> int:
    if dask_worker is not None and STREAM_OP not in dask_worker.handlers:
        # A worker that just (re)started may not have run the plugin's setup yet.
        dask_worker.handlers.update(_handlers(dask_worker))
    RUNTIME.install(plans)
    return len(plans)


async def _run_part(
    worker: Any,
    key: str,
    step: str,
    feeds: dict,
    peers: dict,
    transport: PeerStreams,
    traced: bool = False,
    early: Callable[[dict], None] | None = None,
    slabs: Any = None,
) -> dict:
    """This worker's stages of one resident step; returns the slots the client fetches
    (and, ``traced``, the step's events here: ``dask/trace.py``).

    ``peers`` maps worker names to their Dask addresses, where ``transport`` reaches
    them. ``early(values)`` sends fetched values to the client before the step's end:
    those of a stage that later stages follow here, once they come to ``EARLY_BYTES``
    (the client reads them while this worker runs the rest: ``send_early``). ``slabs``:
    the client's stream's (``handoff.WorkerSlabs``), where large values it fetches may
    be computed."""
    try:
        plan = RUNTIME.plan(key)
    except PlanMissingError:
        return {"status": "missing"}
    rv = RUNTIME.rendezvous_for(key, step)
    if rv is None:
        return {"status": "aborted", "reason": "step already finished"}
    rv.values.update(feeds)
    loop = asyncio.get_running_loop()
    sends: list[asyncio.Task] = []
    out: dict[int, Any] = {}
    events: list[dict] | None = [] if traced else None
    memory = slabs.empty if slabs is not None else None
    try:
        for position, part in enumerate(plan.parts):
            device = part.stage.device
            for j in part.remote_waits:
                wait_start = time.perf_counter()
                await rv.future(j)
                if events is not None:
                    events.append(step_trace.event(f"Recv stage {j}", "Recv", device, wait_start))
            stage = RUNTIME.cached(key, part.stage.index, events is not None)
            if stage is None:  # compile off the event loop: a big stage takes a while
                stage = await loop.run_in_executor(
                    worker.executor, RUNTIME.compiled, key, part.stage.index, traced
                )
            if stage.trace is not None:
                stage.trace.clear()
            if stage.inline_ok and stage.last_seconds < _INLINE_SECONDS:
                outs, values = stage.resident(step, rv, memory)
            else:
                job = _StageJob(stage, step, rv, memory)
                await loop.run_in_executor(worker.executor, job.run)
                outs, values = job.take()
            RECORDER.stage_later(loop, key, part, step, stage.last_seconds, outs)
            if events is not None and stage.trace is not None:
                events.extend(stage.trace)
            for dest, slots in part.send_to:
                msg = {
                    "op": "send",
                    "key": f"{plan.plan_id}/{dest}",
                    "step": step,
                    "stage": part.stage.index,
                    "values": {s: values[s] for s in slots},
                }
                sent_at = time.perf_counter()
                # Queued at once on an open stream: no task per send unless it must
                # connect first or wait for a full buffer to drain.
                pending = transport.send_now(peers[dest], msg)
                if pending is not None:
                    if events is not None:
                        pending = step_trace.timed_send(
                            pending, events, f"Send to {dest}", device, sent_at
                        )
                    sends.append(asyncio.ensure_future(pending))
                elif events is not None:
                    events.append(step_trace.event(f"Send to {dest}", "Send", device, sent_at))
            for slot in part.client_slots:
                out[slot] = values[slot]
            del outs, values  # a variable's device buffer held here would not be updated in place
            if early is not None and position < len(plan.parts) - 1 and send_early(out):
                sent_at = time.perf_counter()
                early(out)
                if events is not None:
                    events.append(step_trace.event("Reply early", "Send", device, sent_at))
                out = {}
        if sends:
            await asyncio.gather(*sends)
        if events is not None:
            return {"status": "OK", "values": out, "trace": events, "clock": step_trace.clock()}
        return {"status": "OK", "values": out}
    except StepAborted as exc:
        return {"status": "aborted", "reason": str(exc)}
    except errors.OpError as exc:
        await _abort_peers(
            transport, plan, step, peers, f"{exc.__class__.__name__} in {plan.worker}"
        )
        return {"status": "error", "error": exc}
    except Exception as exc:
        await _abort_peers(transport, plan, step, peers, f"{type(exc).__name__} in {plan.worker}")
        return {
            "status": "error",
            "error": errors.UnavailableError(
                None,
                None,
                f"worker {plan.worker} could not finish its part of the step: "
                f"{type(exc).__name__}: {exc}",
            ),
        }
    finally:
        for s in sends:
            if not s.done():
                s.cancel()
        RUNTIME.finish(key, step)


class _StageJob:
    """A stage run on the worker's executor that holds nothing of the step once it is
    over: the executor's thread drops its work item (and the future's result with it)
    only when it gets the GIL back, which may come after this step's reply and the
    client's next request; a future holding the stage's outputs until then kept their
    memory in use (a slab the next step could not reuse, ``handoff.py``)."""

    __slots__ = ("_call", "_result")

    def __init__(self, stage: Any, step: str, rv: Any, memory: Any) -> None:
        self._call: tuple | None = (stage, step, rv, memory)
        self._result: tuple | None = None

    def run(self) -> None:
        assert self._call is not None
        stage, step, rv, memory = self._call
        self._call = None
        self._result = stage.resident(step, rv, memory)

    def take(self) -> tuple:
        result, self._result = self._result, None
        assert result is not None
        return result


async def _abort_peers(
    transport: PeerStreams, plan: WorkerPlan, step: str, peers: dict, reason: str
) -> None:
    calls = [
        transport.send(
            address,
            {"op": "abort", "key": f"{plan.plan_id}/{name}", "step": step, "reason": reason},
        )
        for name, address in peers.items()
        if name != plan.worker
    ]
    if calls:
        await asyncio.gather(*calls, return_exceptions=True)


def _deliver(key: str, step: str, stage: int, values: dict) -> None:
    rv = RUNTIME.rendezvous_for(key, step)
    if rv is not None:
        rv.deliver(stage, values)


def _abort_step(key: str, step: str, reason: str = "") -> None:
    RUNTIME.cancel(steps=[step])  # wakes a stage blocked in a queue
    rv = RUNTIME.rendezvous_for(key, step)
    if rv is not None:
        rv.abort(StepAborted(reason))


def _step_handler(worker: Any) -> Any:
    """What a worker does with each message of a step stream (``dask/stream.py``)."""
    transport = _peer_streams(worker)

    async def run(message: dict, reply: Any) -> None:
        def early(values: dict) -> None:
            reply({"id": message["id"], "status": EARLY, "values": values})

        # Popped: nothing here holds the feeds while the reply goes out (freed by then).
        answer = await _run_part(
            worker,
            message["key"],
            message["step"],
            message.pop("feeds"),
            message["peers"],
            transport,
            message.get("trace", False),
            early if message.get(EARLY) else None,
            message.pop("slabs", None),
        )
        answer["id"] = message["id"]
        try:
            reply(answer)
        except Exception as exc:
            reply(
                {
                    "id": message["id"],
                    "status": "error",
                    "error": errors.InternalError(
                        None,
                        None,
                        f"worker {worker.name} could not send its reply: "
                        f"{type(exc).__name__}: {exc}",
                    ),
                }
            )

    def handle(message: dict, reply: Any) -> None:
        op = message["op"]
        if op == "run":
            asyncio.ensure_future(run(message, reply))
        elif op == "send":
            _deliver(message["key"], message["step"], message["stage"], message["values"])
        elif op == "abort":
            _abort_step(message["key"], message["step"], message.get("reason", ""))

    return handle


def _peer_streams(worker: Any) -> PeerStreams:
    peers = getattr(worker, "_dataflow_peers", None)
    if peers is None:
        peers = worker._dataflow_peers = PeerStreams(worker.connection_args)
    return peers


def _handlers(worker: Any) -> dict[str, Any]:
    """The worker's Dask handlers: the step stream, and an abort a client sends when
    it gives up on a step (it may not be able to use its stream then)."""
    handle = _step_handler(worker)

    async def dataflow_steps(comm: Any) -> Any:
        from distributed.core import Status

        await serve(comm, handle, lambda: local_sockets.worker_listener(worker))
        return Status.dont_reply

    def dataflow_abort(key: str, step: str, reason: str = "") -> None:
        _abort_step(key, step, reason)

    return {STREAM_OP: dataflow_steps, "dataflow_abort": dataflow_abort}


async def prepare_worker(worker: Any) -> None:
    """Readies a worker for dataflow (``worker_plugin.DataflowWorkerPlugin.setup``): its
    pinning resource ``dataflow-<name>``, a GPU resource when CuPy sees GPUs and none
    was declared, and the step-stream handlers."""
    worker.handlers.update(_handlers(worker))
    RUNTIME.threads = int(getattr(worker.state, "nthreads", 1) or 1)
    wanted = {resource_name(str(worker.name)): 1e9}
    if "GPU" not in worker.state.total_resources and gpu_count():
        wanted["GPU"] = gpu_count()
    missing = {k: v for k, v in wanted.items() if k not in worker.state.total_resources}
    if missing:
        await worker.set_resources(**missing)


async def release_worker(worker: Any) -> None:
    """Undoes ``prepare_worker`` when the last dataflow plugin on the worker goes (every
    client of ours closed, or the worker is closing): the handlers, the Unix socket and
    the streams to peers. The pinning resource stays (Dask cannot take one back; plain
    Dask work never asks for it). A client that comes later registers its plugin again."""
    for name in (STREAM_OP, "dataflow_abort"):
        worker.handlers.pop(name, None)
    local_sockets.close_worker_listener(worker)
    peers = getattr(worker, "_dataflow_peers", None)
    if peers is not None:
        worker._dataflow_peers = None
        await peers.aclose()
