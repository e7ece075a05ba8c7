"""A stand-in ``cupy`` module, for testing GPU dispatch on machines without a GPU.

``make_fake_cupy(n)`` returns a module that looks like cupy with ``n`` GPUs: numpy's API
over ``DeviceArray``s (``strict_xp``'s strict namespace, so a kernel that calls numpy
directly, or mixes a host array into device arrays, fails as it would with cupy),
``cuda.Device`` (recording the devices entered) and ``cuda.runtime.getDeviceCount``.
It does no GPU work and mocks nothing else: put it in ``sys.modules["cupy"]`` for a
test, and dataflow's device code takes it for cupy.

It counts the copies across the host/device boundary in ``module.copies``:
``"to_device"`` for every host array made into a device array (``asarray``, ``array``
and the other conversion routines given host data), ``"to_host"`` for every
``DeviceArray.get()``, ``"implicit_to_host"`` for every device value read as Python
data (``int()``, ``float()``, ``bool()``, ``item()``, ``tolist()``, use as an index),
which a GPU answers with a copy and a wait, and ``"*_bytes"`` for the sizes.
``module.copy_log`` lists each copy as ``(direction, shape, dtype)``. Python scalars
made into device arrays (a kernel's ``xp.asarray(0.5)``) are counted apart, as
``"scalars_to_device"``: a real GPU copies those too, but they are a few bytes each.
"""

from __future__ import annotations

import sys
import types
from collections import Counter
from typing import Any

import numpy as np

from . import strict_xp

# Conversion routines that copy host data into a new device array.
_CONVERTING = ("asarray", "array", "asanyarray", "ascontiguousarray")


class DeviceArray(strict_xp.StrictArray):
    """An array of the stand-in cupy: numpy memory, strict about who touches it."""

    # The module whose ``copies`` this array's ``get`` counts (set by make_fake_cupy).
    counter: Counter | None = None
    log: list | None = None

    def get(self, stream: Any = None) -> np.ndarray:
        """A numpy copy (``cupy.ndarray.get``'s device-to-host copy), counted."""
        out = super().get(stream)
        if DeviceArray.counter is not None:
            DeviceArray.counter["to_host"] += 1
            DeviceArray.counter["to_host_bytes"] += out.nbytes
        if DeviceArray.log is not None:
            DeviceArray.log.append(("to_host", out.shape, out.dtype.name))
        return out

    @property
    def base(self) -> Any:
        """``None`` when this array is the only one over its memory, as for a cupy
        array that is no view; else the array (numpy's) that owns the memory. The
        stand-in's arrays are numpy views of numpy memory, so numpy's own ``base`` is
        never ``None``; and a view of a view points at the owner, not at the array it
        was taken from, so an array's own reference count misses its views. Counting
        the references to the memory's owner answers what cupy's ``base`` does."""
        owner = np.ndarray.base.__get__(self)
        if (
            type(owner) is np.ndarray
            and owner.flags.owndata
            and sys.getrefcount(owner) == _OWNER_HELD_ONCE
        ):
            return None
        return owner

    # Reading a device value as Python data copies it to the host too (and waits for
    # the GPU): counted as "implicit_to_host".
    def item(self, *args: Any) -> Any:
        _count_implicit(self)
        return super().item(*args)

    def tolist(self) -> Any:
        _count_implicit(self)
        return super().tolist()

    def __int__(self) -> int:
        _count_implicit(self)
        return int(np.ndarray.view(self, np.ndarray))

    def __float__(self) -> float:
        _count_implicit(self)
        return float(np.ndarray.view(self, np.ndarray))

    def __index__(self) -> int:
        _count_implicit(self)
        return np.ndarray.view(self, np.ndarray).__index__()

    def __bool__(self) -> bool:
        _count_implicit(self)
        return bool(np.ndarray.view(self, np.ndarray))


def _owner_held_once() -> int:
    """The count ``DeviceArray.base`` sees for memory held by one array only, measured
    the same way rather than assumed (it differs between Python versions)."""
    view = np.empty(1).view(strict_xp.StrictArray)
    owner = np.ndarray.base.__get__(view)
    return sys.getrefcount(owner)


_OWNER_HELD_ONCE = _owner_held_once()


def _count_implicit(array: DeviceArray) -> None:
    if DeviceArray.counter is not None:
        DeviceArray.counter["implicit_to_host"] += 1
    if DeviceArray.log is not None:
        DeviceArray.log.append(("implicit_to_host", array.shape, array.dtype.name))


# ``devices.to_host`` tells cupy arrays by their type's module, as it would real ones.
DeviceArray.__module__ = "cupy"


def make_fake_cupy(count: int) -> types.ModuleType:
    """A ``cupy`` module with ``count`` GPUs (see the module docstring). Its copy
    counters start at zero; ``reset_copies(module)`` zeroes them again."""
    namespace = strict_xp.make_namespace(DeviceArray, name="cupy")
    module: Any = types.ModuleType("cupy")  # attributes set below, as cupy has them
    module.__getattr__ = lambda name: getattr(namespace, name)  # PEP 562
    module.ndarray = DeviceArray
    module.entered = []
    module.copies = Counter()
    module.copy_log = []
    DeviceArray.counter = module.copies
    DeviceArray.log = module.copy_log

    def converting(name: str) -> Any:
        convert = getattr(namespace, name)

        def call(value: Any, *args: Any, **kwargs: Any) -> DeviceArray:
            out = convert(value, *args, **kwargs)
            if out.dtype.kind in "OSU":  # cupy holds no strings or Python objects
                raise ValueError(f"Unsupported dtype {out.dtype}")
            if isinstance(value, np.ndarray) and not isinstance(value, DeviceArray):
                module.copies["to_device"] += 1
                module.copies["to_device_bytes"] += out.nbytes
                module.copy_log.append(("to_device", out.shape, out.dtype.name))
            elif not isinstance(value, DeviceArray):
                module.copies["scalars_to_device"] += 1
            return out

        call.__name__ = name
        return call

    for name in _CONVERTING:
        setattr(module, name, converting(name))

    class Device:
        def __init__(self, index: int = 0) -> None:
            self.id = index

        def __enter__(self) -> Device:
            module.entered.append(self.id)
            return self

        def __exit__(self, *exc: Any) -> None:
            return None

    module.cuda = types.SimpleNamespace(
        Device=Device, runtime=types.SimpleNamespace(getDeviceCount=lambda: count)
    )
    return module


def reset_copies(module: types.ModuleType) -> None:
    """Zeroes the stand-in's copy counters and log."""
    module.copies.clear()
    module.copy_log.clear()


def copies(module: types.ModuleType) -> dict[str, int]:
    """The array copies counted since the last reset (scalars and byte counts aside)."""
    return {name: module.copies[name] for name in ("to_device", "to_host", "implicit_to_host")}
