"""What the benchmarks share (they run as scripts from this folder): the timing loop,
the CPU's name, free ports for in-process servers and the TF1 session runner."""

from __future__ import annotations

import gc
import platform
import socket
import statistics
import subprocess
import time
from collections.abc import Callable
from typing import Any


def median_seconds(fn: Callable[[], Any], repeats: int, collect: bool = False) -> float:
    """The median wall time of ``repeats`` calls of ``fn``; with ``collect``, a full
    garbage collection before each call (kept out of the timing)."""
    times = []
    for _ in range(repeats):
        if collect:
            gc.collect()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def interleaved_ms(
    runs: dict[str, Callable[[], Any]], rounds: int, per_round: int, warm: int = 3
) -> dict[str, float]:
    """Each contender's median step in milliseconds: ``warm`` calls each first (plans,
    buffers, libraries, compiled loops), then ``rounds`` rounds of ``per_round`` calls
    each, contender after contender; the median of the rounds' medians."""
    for fn in runs.values():
        for _ in range(warm):
            fn()
    medians: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(rounds):
        for name, fn in runs.items():
            medians[name].append(median_seconds(fn, per_round))
    return {name: statistics.median(m) * 1e3 for name, m in medians.items()}


def cpu_name() -> str:
    """``lscpu``'s model name (the processor's name elsewhere)."""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return platform.processor() or "unknown CPU"
    for line in out.splitlines():
        if line.startswith("Model name:"):
            return line.split(":", 1)[1].strip()
    return "unknown CPU"


def free_ports(n: int) -> list[int]:
    """``n`` distinct ports free on localhost now (all bound at once, so none repeats)."""
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("localhost", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def tf1_session(
    build: Callable[[Any], Any], config: dict | None = None, initialize: bool = False
) -> tuple[Any, Any] | None:
    """A TF1 (``tensorflow.compat.v1``, the reference) session over a new graph that
    ``build(tf1)`` fills, and what ``build`` returned; ``None`` where TensorFlow is not
    installed. ``config``: ``ConfigProto`` fields; ``initialize``: run the graph's
    variable initializer first."""
    try:
        import tensorflow.compat.v1 as tf1
    except ImportError:
        return None
    tf1.disable_eager_execution()
    graph = tf1.Graph()
    with graph.as_default():
        built = build(tf1)
        init = tf1.global_variables_initializer() if initialize else None
    sess = tf1.Session(graph=graph, config=tf1.ConfigProto(**config) if config else None)
    if init is not None:
        sess.run(init)
    return sess, built
