"""What the benchmarks share (they run as scripts from this folder): the timing loop,
free ports for in-process servers and the TF1 session runner."""

from __future__ import annotations

import gc
import socket
import statistics
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
