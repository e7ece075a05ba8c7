"""Per-device state: variables, random streams and queues.

A ``ResourceStore`` is a plain class with a lock per entry: variables are arrays under
their names, and objects such as queues and random streams live beside them
(``get_or_create``). The embedded session owns one per device; on a cluster each worker
holds one per container and device (``dask/worker_state.py``), touched in-process by the
stage tasks and resident steps that run there. A client reaches a worker's store only
through ``worker_state.store_call`` (``Client.run``), outside steps.

A value once handed out never changes under its holder: a value read earlier in a
step, or fetched by a client, stays what it was. Updates keep that promise in one of
two ways (``update_in_place``, TF's copy-on-write for resource variables):

* *in place*, when nobody but the store holds the buffer (its reference count says
  so): the update writes into the stored array, as TF's training ops do, with no new
  allocation and no second copy of a large variable in memory;
* *by replacement* otherwise: the update writes a new buffer and swaps it in, and the
  holders keep the old one.

Reads take no lock. A reader that arrives while a buffer is being written in place
sees the variable marked busy and waits for the writer's lock, then reads again; the
writer marks the variable busy *before* it looks at the reference count, so a reader
either holds its reference early enough to be counted (and the update replaces
instead) or sees the mark. Stored numpy arrays are read-only between updates, so a
kernel cannot write into one by mistake. Device (cupy) arrays follow the same rule,
with their own reference counts: a variable in GPU memory is updated in its buffer
when nothing else holds it (cupy has no read-only flag, so there the rule rests on the
kernels alone).

Updates may carry a ``token`` (step id, op name): Dask can run a task twice, and a
repeated token is ignored so an update is applied once.
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np

from ..framework import errors
from ..framework.kernel_context import PRIVATE_MARK

_MAX_TOKENS = 4096


def _refcounts(items: list) -> list[int]:
    return [sys.getrefcount(item) for item in items]


def _exclusive_count() -> int:
    """The count ``_refcounts`` reports inside ``update_in_place`` for a buffer held by
    nothing but the store: measured the same way rather than assumed, since it differs
    between Python versions."""
    values = {"v": np.empty(1)}
    olds = [values["v"]]
    return _refcounts(olds)[0]


_EXCLUSIVE = _exclusive_count()


def _owns_memory(value: Any) -> bool:
    """Whether ``value`` is an array whose memory no other array views, so an update
    may write into it: a numpy array that owns its data, or a device (cupy) array that
    is no view (``base is None``; views hold their base, so their references show in
    its count as a numpy view's do). Anything else is replaced, never written."""
    if type(value) is np.ndarray:
        return bool(value.flags.owndata)
    return type(value).__module__.startswith("cupy") and value.base is None


class ResourceStore:
    """Variables, random streams and other named state of one device."""

    def __init__(self, device: str = "") -> None:
        self.device = device
        self._values: dict[str, Any] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._registry_lock = threading.Lock()
        self._objects: dict[Hashable, Any] = {}  # queues, random generators, ...
        self._signatures: dict[Hashable, Any] = {}  # what each object was declared as
        self._tokens: OrderedDict[tuple, None] = OrderedDict()
        self._busy: set[str] = set()  # names being written in place (see module doc)
        self._lock_sets: dict[tuple[str, ...], tuple[threading.Lock, ...]] = {}

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
            value = self._values[name]
        except KeyError:
            raise errors.FailedPreconditionError(
                None, None, f"Attempting to use uninitialized value {name}"
            ) from None
        if name in self._busy:
            # Being written in place: wait for the writer (it holds the lock), re-read.
            del value
            with self.lock(name):
                value = self._values[name]
        return value

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

    def update_in_place(
        self,
        names: tuple[str, ...],
        compute: Callable[[list[Any], list[Any]], None],
        new_buffer: Callable[[Any], Any],
        retire: Callable[..., None] | None = None,
        token: tuple | None = None,
    ) -> list[Any]:
        """Atomically gives each variable in ``names`` a new value; returns the values.

        ``compute(olds, outs)`` must write the whole new value of ``names[i]`` into
        ``outs[i]``, and check everything that can fail *before* it writes (an in-place
        write cannot be undone). ``outs[i]`` is ``olds[i]`` itself where the store is the
        buffer's only holder (so ``compute`` must read each old element before writing
        it, as elementwise ``out=`` arithmetic does), and ``new_buffer(olds[i])``, an
        uninitialised array of the same shape and dtype, elsewhere; the replaced buffers
        go to ``retire`` (a recycling pool) once swapped out. Only arrays that own their
        memory are written in place: numpy arrays and device (cupy) arrays alike. The
        locks of all ``names`` are held throughout, taken in sorted order so that two
        updates never deadlock; so ``compute`` gets its values as arguments and must
        not ``read`` them (a read of a busy name waits for its lock).
        """
        locks = self._lock_sets.get(names) or self._lock_set(names)
        for lock in locks:
            lock.acquire()
        outs: list[Any] = []
        busy = self._busy
        try:
            if token is not None and token in self._tokens:
                return [self._values[n] for n in names]
            try:
                olds = [self._values[n] for n in names]
            except KeyError as exc:
                raise errors.FailedPreconditionError(
                    None, None, f"Attempting to use uninitialized value {exc.args[0]}"
                ) from None
            busy.update(names)  # before counting references: see the module doc
            replaced = False
            for old, count in zip(olds, _refcounts(olds)):
                if count == _EXCLUSIVE and _owns_memory(old):
                    if type(old) is np.ndarray:
                        old.setflags(write=True)
                    outs.append(old)
                else:
                    outs.append(new_buffer(old))
                    replaced = True
            compute(olds, outs)
            values = self._values
            for name, out in zip(names, outs):
                values[name] = out
            if replaced and retire is not None:
                retire(*(old for old, out in zip(olds, outs) if out is not old))
            if token is not None:
                self._remember(token)
            return outs
        finally:
            for out in outs:  # also after a failure: stored values stay read-only
                if type(out) is np.ndarray:
                    out.setflags(write=False)
            busy.difference_update(names)
            for lock in reversed(locks):
                lock.release()

    def _lock_set(self, names: tuple[str, ...]) -> tuple[threading.Lock, ...]:
        locks = tuple(self.lock(n) for n in sorted(set(names)))
        self._lock_sets[names] = locks
        return locks

    def delete(self, name: str) -> None:
        self._values.pop(name, None)

    def names(self) -> list[str]:
        return sorted(self._values)

    def snapshot(self) -> dict[str, Any]:
        return {name: self.read(name) for name in list(self._values)}

    # --- other objects (queues, random generators) ------------------------------------
    def get_or_create(
        self, name: Hashable, factory: Callable[[], Any], signature: Any = None
    ) -> Any:
        """The object stored under ``name``, made by ``factory()`` if there is none.

        ``signature`` (any value with ``==`` and ``str``) says what the caller declares
        the object to be, e.g. a queue's kind, dtypes, shapes and capacity. The first
        declaration's signature is kept; a later one that differs is refused with
        ``InvalidArgumentError`` naming the object and both signatures, as TF1's
        resource manager refuses a shared queue re-declared differently (clients of a
        cluster share objects by name, so the old object must not be silently reused).
        """
        obj = self._objects.get(name)
        if obj is None:
            with self._registry_lock:
                obj = self._objects.get(name)
                if obj is None:
                    obj = factory()
                    self._objects[name] = obj
                    if signature is not None:
                        self._signatures[name] = signature
                    return obj
        if signature is not None:
            known = self._signatures.get(name)
            if known is None:
                self._signatures.setdefault(name, signature)
            elif known != signature:
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"Shared resource '{name}' on {self.device or 'this device'} "
                    f"was created as a {known}, but is now requested as a {signature}",
                )
        return obj

    def objects(self) -> dict[Hashable, Any]:
        return dict(self._objects)

    def release_session(self, session: str) -> int:
        """Drops the objects private to ``session`` (``kernel_context.private_name``),
        ending what they hold (``cancel_all``): its session closed. Returns how many."""
        suffix = f"{PRIVATE_MARK}{session}"
        with self._registry_lock:
            # Random generators' keys are tuples (op, seeds), shared by every session.
            names = [n for n in self._objects if isinstance(n, str) and n.endswith(suffix)]
            released = [self._objects.pop(n) for n in names]
            for name in names:
                self._signatures.pop(name, None)
        for obj in released:
            close = getattr(obj, "cancel_all", None)
            if close is not None:
                close()
        return len(released)

    def clear(self) -> None:
        for obj in self._objects.values():
            close = getattr(obj, "cancel_all", None)
            if close is not None:
                close()
        self._values.clear()
        self._objects.clear()
        self._signatures.clear()
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
