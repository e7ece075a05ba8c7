"""Resident steps' plumbing on a worker: the per-step mailbox (``Rendezvous``: values by slot
and which remote stages delivered) and the two transports that carry a stage's outputs
to its peers (``DaskTransport``: Dask RPCs on a TLS cluster; ``ChannelTransport``: the
step channels of ``channel.py``). ``worker_state.py`` runs the steps that use them.
"""

from __future__ import annotations

import asyncio
from typing import Any

from distributed.protocol import to_serialize

from .channel import ChannelServer


class Rendezvous:
    """One step's mailbox on one worker: values by slot, and which remote stages have
    delivered (futures created on the worker's event loop)."""

    def __init__(self) -> None:
        self.values: dict[int, Any] = {}
        self.arrived: dict[int, asyncio.Future] = {}
        self.error: BaseException | None = None

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


def wrap_values(values: dict[int, Any]) -> dict[int, Any]:
    return {slot: to_serialize(v) for slot, v in values.items()}


class DaskTransport:
    """Resident-step messages through ``distributed``'s RPC (TLS clusters use this)."""

    def __init__(self, worker: Any) -> None:
        self.worker = worker

    @staticmethod
    def wrap(values: dict[int, Any]) -> dict[int, Any]:
        return wrap_values(values)

    async def send(self, address: str, message: dict) -> None:
        op = message.pop("op")
        # One-way (reply=False): the receiver's mailbox is the acknowledgement.
        await getattr(self.worker.rpc(address), f"dataflow_{op}")(reply=False, **message)


class ChannelTransport:
    """Resident-step messages through this worker's step channel (``channel.py``)."""

    def __init__(self, server: ChannelServer) -> None:
        self.server = server

    @staticmethod
    def wrap(values: dict[int, Any]) -> dict[int, Any]:
        return values  # arrays travel out of band as they are

    async def send(self, address: str, message: dict) -> None:
        await self.server.send(address, message)
