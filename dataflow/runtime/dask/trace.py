"""Traces of resident steps (``RunOptions(trace_level=FULL_TRACE)`` on a cluster).

A traced step records, on each worker, every kernel's run (the stage is compiled with
timed kernels), each wait for a peer's tensors (``Recv``) and each send to a peer
(``Send``); the client records its own time (preparing feeds, writing requests, reading
and unpacking replies) and, from the timestamps on both ends, the transfers between
itself and each worker. Together they account for the step's wall time.

Times are ``time.perf_counter()`` microseconds of the process that recorded them. A
worker's reply carries one ``(wall clock, perf_counter)`` reading, which maps its events
onto the client's clock through the wall clocks (exact on one machine; across machines
as good as their clock synchronisation).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from ...framework.graph_def import datatype_enum


def event(name: str, kind: str, device: str, start: float, end: float | None = None) -> dict:
    """A ``step_stats`` record from ``perf_counter()`` seconds."""
    return {
        "name": name,
        "type": kind,
        "device": device,
        "start_us": start * 1e6,
        "end_us": (time.perf_counter() if end is None else end) * 1e6,
        "thread": 0,
    }


def clock() -> tuple[float, float]:
    """This process's (wall clock, perf_counter) now, in seconds."""
    return time.time(), time.perf_counter()


def to_local(events: list[dict], remote_clock: tuple[float, float]) -> list[dict]:
    """``events`` recorded under ``remote_clock``, moved onto this process's clock."""
    wall, perf = clock()
    # remote perf -> remote wall -> local perf
    shift_us = ((remote_clock[0] - remote_clock[1]) - (wall - perf)) * 1e6
    return [
        {**e, "start_us": e["start_us"] + shift_us, "end_us": e["end_us"] + shift_us}
        for e in events
    ]


async def timed_send(
    send: Awaitable[Any], events: list[dict], name: str, device: str, start: float | None = None
) -> None:
    """Awaits ``send`` and records it as a ``Send`` event (from ``start``, or now)."""
    start = time.perf_counter() if start is None else start
    await send
    events.append(event(name, "Send", device, start))


def client_events(
    timings: dict[str, Any], replies: dict[str, Any], task_of: dict[str, str]
) -> list[dict]:
    """The client's side of a traced step: writing the requests, each reply's read, and
    the transfers inferred from when a message left one end and reached the other."""
    out = [event("client: send requests", "Client", "", *timings["send"])]
    sent_end = timings["send"][1]
    for name, reply in replies.items():
        worker_events = reply.get("trace") or []
        where = task_of.get(name, name)
        read = timings["receive"].get(name)
        if worker_events:
            first = min(e["start_us"] for e in worker_events) / 1e6
            last = max(e["end_us"] for e in worker_events) / 1e6
            out.append(event(f"client -> {where}", "Transfer", "", sent_end, max(first, sent_end)))
            if read is not None:
                out.append(event(f"{where} -> client", "Transfer", "", min(last, read[0]), read[0]))
        if read is not None:
            out.append(event(f"client: read reply of {where}", "Client", "", *read))
        read_early = timings.get("early", {}).get(name)
        if read_early is not None:
            out.append(event(f"client: read early reply of {where}", "Client", "", *read_early))
    return out


CLIENT_DEVICE = "client"  # the ``dev_stats`` entry of the client's own events


def fill_run_metadata(
    run_metadata: Any, events: list[dict], inputs_of: Callable[[str], list[str] | None]
) -> None:
    """Writes a traced step's ``events`` into ``run_metadata`` (TF's ``RunMetadata``
    proto), replacing what it held, as TF1's ``Session.run`` does.

    As TF fills it: one ``dev_stats`` entry per device, in order of first event (the
    client's own events, device ``""``, under ``CLIENT_DEVICE``), each with one
    ``node_stats`` per kernel run in order of start: ``node_name``, start and end as
    microseconds (and nanoseconds) since the epoch (``all_start_micros``, relative
    ``op_end_rel_micros``/``all_end_rel_micros``), ``timeline_label``
    ``"name = Type(input, ...)"`` (``inputs_of(name)`` gives the op's input names, None
    for an event that is not an op), a small ``thread_id`` per thread, and each output's
    dtype and shape (``output[].tensor_description``) where the event recorded them. The time
    this takes is the last client event, so that the events still cover the step."""
    started = time.perf_counter()
    run_metadata.Clear()
    to_epoch_us = (time.time() - time.perf_counter()) * 1e6
    stats: dict[str, Any] = {}
    threads: dict[Any, int] = {}  # Python's thread idents do not fit the proto's uint32

    def add(e: dict) -> None:
        device = e["device"] or CLIENT_DEVICE
        if device not in stats:
            stats[device] = run_metadata.step_stats.dev_stats.add(device=device)
        start_ns = round((e["start_us"] + to_epoch_us) * 1e3)
        length_ns = max(round((e["end_us"] - e["start_us"]) * 1e3), 0)
        inputs = inputs_of(e["name"]) or []
        node = stats[device].node_stats.add(
            node_name=e["name"],
            all_start_micros=start_ns // 1000,
            op_start_rel_micros=0,
            op_end_rel_micros=length_ns // 1000,
            all_end_rel_micros=length_ns // 1000,
            scheduled_micros=start_ns // 1000,
            all_start_nanos=start_ns,
            op_start_rel_nanos=0,
            op_end_rel_nanos=length_ns,
            all_end_rel_nanos=length_ns,
            scheduled_nanos=start_ns,
            timeline_label=f"{e['name']} = {e['type']}({', '.join(inputs)})",
            thread_id=threads.setdefault(e.get("thread", 0), len(threads)),
        )
        for slot, described in enumerate(e.get("outputs") or ()):
            if described is not None:
                output = node.output.add(slot=slot)
                output.tensor_description.dtype = datatype_enum(described[0])
                for size in described[1]:
                    output.tensor_description.shape.dim.add(size=size)

    for e in sorted(events, key=lambda e: e["start_us"]):
        add(e)
    add(event("client: fill RunMetadata", "Client", "", started))
