"""Copies across the host/device boundary, made once per value per step.

A step of an embedded session moves a value between memories where a stage on one
device reads a value made on another, and where the client fetches a device value.
``StepCopies`` makes each such copy once per (value, memory) and reuses it: a feed read
by three GPU stages goes to the GPU once, a GPU value read by a CPU stage and fetched
comes back once. Host memory is one memory: the client and every CPU device share it,
so values never "move" between them. Strings stay in host memory (``devices.transfer``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
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
