"""The per-step mailbox of a resident step on a worker (``Rendezvous``: values by slot,
and which remote stages delivered). ``dask/worker_state.py`` runs the steps that use it;
``dask/stream.py`` carries their messages.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..execute.step_copies import WorkerStepMemory


class Rendezvous:
    """One step's mailbox on one worker: values by slot, and which remote stages have
    delivered (futures created on the worker's event loop)."""

    def __init__(self) -> None:
        self.values: dict[int, Any] = {}
        self.arrived: dict[int, asyncio.Future] = {}
        self.error: BaseException | None = None
        # Where values live and their copies, on a worker with a GPU stage (made by the
        # first such stage: ``step_copies.WorkerStepMemory``).
        self.memory: WorkerStepMemory | None = None

    def future(self, stage: int) -> asyncio.Future:
        fut = self.arrived.get(stage)
        if fut is None:
            fut = self.arrived[stage] = asyncio.get_running_loop().create_future()
            if self.error is not None:
                fut.set_exception(self.error)
        return fut

    def deliver(self, stage: int, values: dict[int, Any]) -> None:
        self.values.update(values)
        fut = self.future(stage)
        if not fut.done():
            fut.set_result(None)

    def abort(self, error: BaseException) -> None:
        if self.error is None:
            self.error = error
        for fut in self.arrived.values():
            if not fut.done():
                fut.set_exception(error)
                fut.exception()  # mark retrieved: nobody may be waiting on this one


class StepAborted(Exception):
    """This worker's part of a step stopped because another part failed."""
