"""Per-device state: variables, random streams and queues.

A ``ResourceStore`` is a plain class with a lock per entry; the embedded session owns
one, and on a cluster each worker holds one (wrapped by an actor for remote calls,
touched in-process by stage tasks). It never hands out a buffer it will later mutate:
an update stores a new array, so a value read earlier in a step, or fetched by a
client, never changes under its reader, and a step that fails half-way leaves every
variable either fully updated or untouched.

Updates may carry a ``token`` (step id, op name): Dask can run a task twice, and a
repeated token is ignored so an update is applied once.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from ..framework import errors

_MAX_TOKENS = 4096


class ResourceStore:
    """Variables, random streams and other named state of one device."""

    def __init__(self, device: str = "") -> None:
        self.device = device
        self._values: dict[str, Any] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._registry_lock = threading.Lock()
        self._objects: dict[str, Any] = {}   # queues, random generators, ...
        self._tokens: OrderedDict[tuple, None] = OrderedDict()

    # --- variables --------------------------------------------------------------------
    def lock(self, name: str) -> threading.Lock:
        lock = self._locks.get(name)
        if lock is None:
            with self._registry_lock:
                lock = self._locks.setdefault(name, threading.Lock())
        return lock

    def is_initialized(self, name: str) -> bool:
        return name in self._values

    def read(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError:
            raise errors.FailedPreconditionError(
                None, None, f"Attempting to use uninitialized value {name}") from None

    def write(self, name: str, value: Any, token: tuple | None = None) -> Any:
        if token is not None and self._seen(token):
            return self._values.get(name, value)
        self._values[name] = value
        if token is not None:
            self._remember(token)
        return value

    def update(self, name: str, fn: Callable[[Any], Any], token: tuple | None = None) -> Any:
        """Atomically replaces the value with ``fn(old)`` and returns the new value."""
        with self.lock(name):
            if token is not None and self._seen(token):
                return self.read(name)
            new = fn(self.read(name))
            self._values[name] = new
            if token is not None:
                self._remember(token)
            return new

    def delete(self, name: str) -> None:
        self._values.pop(name, None)

    def names(self) -> list[str]:
        return sorted(self._values)

    def snapshot(self) -> dict[str, Any]:
        return dict(self._values)

    # --- other objects (queues, random generators) ------------------------------------
    def get_or_create(self, name: str, factory: Callable[[], Any]) -> Any:
        obj = self._objects.get(name)
        if obj is None:
            with self._registry_lock:
                obj = self._objects.get(name)
                if obj is None:
                    obj = factory()
                    self._objects[name] = obj
        return obj

    def objects(self) -> dict[str, Any]:
        return dict(self._objects)

    def clear(self) -> None:
        for obj in self._objects.values():
            close = getattr(obj, "cancel_all", None)
            if close is not None:
                close()
        self._values.clear()
        self._objects.clear()
        self._tokens.clear()

    # --- idempotency tokens -----------------------------------------------------------
    def _seen(self, token: tuple) -> bool:
        return token in self._tokens

    def _remember(self, token: tuple) -> None:
        # Only the token is kept (a repeat returns the current value): remembering the
        # values would pin _MAX_TOKENS old copies of every variable in memory.
        self._tokens[token] = None
        if len(self._tokens) > _MAX_TOKENS:
            self._tokens.popitem(last=False)
