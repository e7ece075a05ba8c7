"""Copies across the host/device boundary, made once per value per step.

A step of an embedded session moves a value between memories where a stage on one
device reads a value made on another, and where the client fetches a device value.
``StepCopies`` makes each such copy once per (value, memory) and reuses it: a feed read
by three GPU stages goes to the GPU once, a GPU value read by a CPU stage and fetched
comes back once. Host memory is one memory: the client and every CPU device share it,
so values never "move" between them. Strings stay in host memory (``devices.transfer``).

On a Dask worker, a resident step (``worker_steps._run_part``) does the same for the
stages that worker runs (``WorkerStepMemory``, ``StageBoundary``): its values cross
the host/device boundary once per step on that worker, and what it sends to peers or
hands the client is host memory.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any


def memory_of(device: str) -> str:
    """The memory a device's values live in: '' for host memory (the client, any CPU
    device), the device's name for a GPU."""
    return device if "/device:GPU:" in device else ""


class StepCopies:
    """The copies of one step: ``move(slot, value, src, dst)`` copies a slot's value
    from device ``src`` to ``dst`` ('' is the client) the first time that memory needs
    it, and returns the same copy afterwards. Thread-safe (concurrent stages)."""

    __slots__ = ("_transfer", "_made", "_lock")

    def __init__(self, transfer: Callable[[Any, str, str], Any]) -> None:
        self._transfer = transfer
        self._made: dict[tuple[int, str], Any] = {}
        self._lock = threading.Lock()

    def move(self, slot: int, value: Any, src: str, dst: str) -> Any:
        where = memory_of(dst)
        if memory_of(src) == where:
            return value
        key = (slot, where)
        with self._lock:  # held while copying: two stages never copy one value twice
            copy = self._made.get(key)
            if copy is None:
                copy = self._made[key] = self._transfer(value, src, dst)
        return copy


# --- resident steps on a Dask worker ----------------------------------------------------
class WorkerStepMemory:
    """Where one resident step's values live on one worker, and their copies.

    A worker's part of a step keeps its values by slot (``Rendezvous.values``). Where the
    worker has a GPU stage, a GPU stage's outputs stay in device memory (``homes`` says
    which device) and each stage's inputs are moved to its memory through one
    ``StepCopies`` for the step, so a value read by several GPU stages here goes to the
    device once and a device value read by several host consumers (CPU stages here,
    peers, the client) comes back once. What leaves the worker is host memory.
    """

    __slots__ = ("homes", "copies")

    def __init__(self, transfer: Callable[[Any, str, str], Any]) -> None:
        self.homes: dict[int, str] = {}  # slot -> GPU whose memory holds its value
        self.copies = StepCopies(transfer)

    def read(self, values: dict[int, Any], slot: int, device: str) -> Any:
        """The value of ``slot`` in the memory of ``device`` ('' for host memory)."""
        return self.copies.move(slot, values[slot], self.homes.get(slot, ""), device)


class StageBoundary:
    """What one resident stage of a worker with a GPU stage does with its values: which
    outputs go to host memory (sent to peers, fetched by the client), which stay for a
    later stage here, and which inputs no later stage here reads (dropped once read,
    so that a device buffer read earlier, a variable's value, is not held to the end of
    the step, where it would keep an update from writing in place)."""

    __slots__ = ("device", "inputs", "outputs", "wire", "kept", "done")

    def __init__(self, parts: Sequence[Any], position: int) -> None:
        part = parts[position]
        later: set[int] = set()
        for p in parts[position + 1 :]:
            later.update(p.stage.inputs)
        self.device = part.stage.device
        self.inputs = part.stage.inputs
        self.outputs = part.stage.outputs
        wire = set(part.client_slots)
        for _, slots in part.send_to:
            wire.update(slots)
        self.wire = frozenset(wire)
        self.kept = frozenset(s for s in self.outputs if s in later)
        self.done = tuple(s for s in set(self.inputs) if s not in later)

    def gather(self, values: dict[int, Any], memory: WorkerStepMemory) -> list[Any]:
        """The stage's arguments, each in the stage's memory (copied once a step)."""
        return [memory.read(values, s, self.device) for s in self.inputs]

    def scatter(
        self, values: dict[int, Any], memory: WorkerStepMemory, outs: Sequence[Any]
    ) -> dict[int, Any]:
        """Files the stage's outputs: a later stage's in their memory, those that leave
        the worker as host copies (returned by slot); drops the finished inputs."""
        gpu = memory_of(self.device)
        wire: dict[int, Any] = {}
        for slot, value in zip(self.outputs, outs, strict=True):
            if gpu:
                memory.homes[slot] = self.device
            if slot in self.wire:
                wire[slot] = memory.copies.move(slot, value, self.device, "")
            if slot in self.kept:
                values[slot] = value
            elif slot in wire:
                values[slot] = wire[slot]
                memory.homes.pop(slot, None)
        for slot in self.done:
            values.pop(slot, None)
        return wire


def stage_boundary(parts: Sequence[Any], part: Any) -> StageBoundary | None:
    """``part``'s boundary where one of a worker's ``parts`` runs on a GPU, else ``None``
    (values stay as made, as on a worker without GPUs)."""
    if any(memory_of(p.stage.device) for p in parts):
        return StageBoundary(parts, parts.index(part))
    return None
