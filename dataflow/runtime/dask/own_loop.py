"""Running one coroutine to completion from synchronous code, on a thread of its own.

A session opening on a cluster sometimes needs one Dask message before it has a client
(is the scheduler refusing connections? what listens at a ``grpc://`` address?). The
caller may itself be running an event loop (a Jupyter kernel's), where ``asyncio.run``
is refused, so the coroutine runs on a short-lived thread with a loop of its own.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from typing import Any


def run_on_own_loop(
    make: Callable[[], Awaitable[Any]], wait: float, name: str
) -> tuple[bool, Any] | None:
    """Runs ``make()`` on a new thread (named ``name``) with its own event loop, waiting
    at most ``wait`` seconds: ``(True, result)``, ``(False, exception)``, or ``None``
    when it had not finished by then (the daemon thread is left to end by itself)."""
    outcome: list[tuple[bool, Any]] = []

    def run() -> None:
        try:
            outcome.append((True, asyncio.run(make())))  # type: ignore[arg-type]
        except BaseException as exc:  # handed to the caller
            outcome.append((False, exc))

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    thread.join(wait)
    return outcome[0] if outcome else None
