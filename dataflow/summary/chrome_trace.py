"""Reading a traced step (``RunMetadata``, TF's protobuf) as a list of events, and
exporting it to the Chrome / Perfetto trace format (what TF1's ``timeline.Timeline``
does with the same proto). ``tf.viz`` exports it; ``tf.train.ProfilerHook`` writes its
files."""

from __future__ import annotations

import json
from typing import Any


def step_events(run_metadata: Any) -> list[dict[str, Any]]:
    """The node stats of ``run_metadata.step_stats`` as dicts, in the proto's order:
    ``{"name", "type", "device", "start_us", "end_us", "thread"}`` (microseconds since
    the epoch, from the nanosecond fields where filled; ``type`` read from the
    ``timeline_label`` ``"name = Type(inputs)"``).

    Works on the ``RunMetadata`` a traced ``Session.run`` fills, dataflow's or TF's."""
    out = []
    for stats in run_metadata.step_stats.dev_stats:
        for node in stats.node_stats:
            label = node.timeline_label
            prefix = f"{node.node_name} = "
            kind = label[len(prefix) :].split("(", 1)[0] if label.startswith(prefix) else ""
            if node.all_start_nanos:  # TF fills both; nanoseconds keep the precision
                start, length = node.all_start_nanos / 1e3, node.all_end_rel_nanos / 1e3
            else:
                start, length = node.all_start_micros, node.all_end_rel_micros
            out.append(
                {
                    "name": node.node_name,
                    "type": kind,
                    "device": stats.device,
                    "start_us": start,
                    "end_us": start + length,
                    "thread": node.thread_id,
                }
            )
    return out


def chrome_trace(run_metadata: Any) -> dict[str, Any]:
    """``run_metadata``'s node stats in the Chrome trace format: one process per device,
    one thread per ``thread_id``, one complete event (``"ph": "X"``) per kernel run."""
    events: list[dict[str, Any]] = []
    pid_of: dict[str, int] = {}
    for e in step_events(run_metadata):
        if e["device"] not in pid_of:
            pid_of[e["device"]] = len(pid_of)
            events.append(
                {
                    "name": "process_name",
                    "ph": "M",
                    "pid": pid_of[e["device"]],
                    "args": {"name": e["device"]},
                }
            )
        events.append(
            {
                "name": e["name"],
                "cat": e["type"],
                "ph": "X",
                "ts": e["start_us"],
                "dur": e["end_us"] - e["start_us"],
                "pid": pid_of[e["device"]],
                "tid": e["thread"],
                "args": {"op": e["type"]},
            }
        )
    return {"traceEvents": events, "displayTimeUnit": "ms"}


def write_chrome_trace(run_metadata: Any, path: str) -> str:
    """Writes ``run_metadata``'s per-op timings as a Chrome trace JSON file (open it in
    ``chrome://tracing`` or ui.perfetto.dev); returns ``path``."""
    with open(path, "w") as f:
        json.dump(chrome_trace(run_metadata), f)
    return path
