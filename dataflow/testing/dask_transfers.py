"""Dask's own accounting of the bytes its workers send, for tests and benchmarks.

Every Dask worker logs each batch of data it sends (``Worker.transfer_outgoing_log``:
the bytes, and ``who`` asked: a worker's address when a peer fetched a task's input,
``None`` when a client gathered). ``sent_bytes`` sums that log over the cluster, split
into bytes sent to other workers and bytes sent to clients, so a test can check that a
dataset's rows did not pass through the client.

A worker logs a send once the receiver has acknowledged it, which can be after the
receiver has gone on: bytes a client gathered just before a first count may land in the
interval. Tests wait for persisted collections (``distributed.wait``) rather than
gather them.
"""

from __future__ import annotations

from typing import Any


def _is_stage_output(key: Any) -> bool:
    # A task-graph step's stage key: ("<n>.<op>@<device>-<signature>", session, step, i).
    return isinstance(key, tuple) and bool(key) and "@" in str(key[0])


def _sent(keys: Any = None, dask_worker: Any = None) -> list[tuple[str | None, int]]:
    """(who, bytes) per logged send, leaving out the outputs of stage tasks: on the
    task-graph path a step's own tensors travel between workers as Dask task results
    (TF's Send/Recv), which is not data being read. With ``keys``, only those keys'
    bytes."""
    wanted = None if keys is None else set(keys)
    out = []
    for entry in dask_worker.transfer_outgoing_log:
        sizes = entry.get("keys") or {}
        total = int(entry["total"])
        if sizes:
            total = int(
                sum(
                    n
                    for k, n in sizes.items()
                    if not _is_stage_output(k) and (wanted is None or k in wanted)
                )
            )
        elif wanted is not None:
            total = 0
        out.append((entry["who"], total))
    return out


def sent_bytes(client: Any, keys: Any = None) -> dict[str, int]:
    """``{"to_workers": n, "to_clients": m}``: what the cluster's workers have sent so far
    (take the difference of two calls to measure an interval); with ``keys``, only the
    bytes of those keys (a collection's: what other traffic of the cluster, such as a
    previous test's, cannot blur)."""
    workers = set(client.scheduler_info()["workers"])
    out = {"to_workers": 0, "to_clients": 0}
    for log in client.run(_sent, None if keys is None else list(keys)).values():
        for who, total in log:
            out["to_workers" if who in workers else "to_clients"] += total
    return out
