"""The timing loop the benchmarks share (they run as scripts from this folder)."""

from __future__ import annotations

import gc
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
