"""Devices of this process and their array namespaces (numpy, cupy).

A process has one CPU device unless ``ConfigProto(device_count={"CPU": n})`` asks for
more: TF1 then makes ``n`` CPU devices sharing the host's memory and cores, so a graph
written for several devices (``tf.device("/cpu:1")``) runs, with independent stages on
different devices running at the same time (``execute/inter_op.py``). GPUs are those CuPy sees,
at most ``device_count["GPU"]`` of them.
"""

from __future__ import annotations

import functools
import os
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..framework import errors

LOCAL_JOB = "/job:localhost/replica:0/task:0"


def gpu_check() -> tuple[int, str]:
    """``(n, why)``: the CUDA devices visible through CuPy, and when there are none, why
    (CuPy not importable, or CUDA's error). A GPU device exists only where its kernels
    can run, so this, not a ``GPU`` resource a worker was started with, says how many."""
    try:
        import cupy
    except Exception as exc:
        return 0, f"CuPy cannot be imported ({type(exc).__name__}: {exc})"
    try:
        n = int(cupy.cuda.runtime.getDeviceCount())
    except Exception as exc:
        return 0, f"CuPy sees no CUDA device ({type(exc).__name__}: {exc})"
    return n, "" if n else "CuPy sees no CUDA device"


@functools.cache
def gpu_count() -> int:
    """CUDA devices visible through CuPy (0 when CuPy or CUDA is absent); found once."""
    return gpu_check()[0]


def local_devices(job: str = LOCAL_JOB, device_count: Mapping[str, int] | None = None) -> list[str]:
    """The full names of this process's devices: CPUs first, then GPUs.

    ``device_count`` is ``ConfigProto.device_count``: ``"CPU"`` gives the number of CPU
    devices (default 1; fewer than one is TF1's ``NotFoundError``), ``"GPU"`` caps the
    GPUs used; other keys are ignored, as TF1 ignores device types it does not have.
    """
    counts = dict(device_count or {})
    for kind, n in counts.items():
        if isinstance(n, bool) or not isinstance(n, int):
            raise TypeError(
                f"ConfigProto.device_count[{kind!r}] must be an int, not {type(n).__name__}"
            )
    cpus = counts.get("CPU", 1)
    if cpus < 1:
        raise errors.NotFoundError(None, None, "No CPU devices are available in this process")
    gpus = gpu_count()
    if "GPU" in counts:
        gpus = max(0, min(gpus, counts["GPU"]))
    out = [f"{job}/device:CPU:{i}" for i in range(cpus)]
    out += [f"{job}/device:GPU:{i}" for i in range(gpus)]
    return out


@dataclass(frozen=True)
class DeviceAttributes:
    """One device as ``Session.list_devices()`` reports it (TF1's ``_DeviceAttributes``)."""

    name: str
    device_type: str
    memory_limit_bytes: int
    incarnation: int


def device_attributes(names: list[str]) -> list[DeviceAttributes]:
    """``DeviceAttributes`` for device names; a local CPU's memory is the host's (its
    devices share it), 0 where this process does not know it (GPUs, a cluster's)."""
    host = _host_memory()
    out = []
    for name in names:
        kind = name.rsplit("/device:", 1)[-1].split(":", 1)[0]
        local = name.startswith(LOCAL_JOB + "/")
        memory = host if local and kind == "CPU" else 0
        # TF1 gives each device a random 64-bit id that changes when it is re-created.
        out.append(DeviceAttributes(name, kind, memory, random.getrandbits(63)))
    return out


def _host_memory() -> int:
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return 0


def array_namespace(device: str) -> Any:
    """``numpy`` for CPU devices, ``cupy`` for GPU devices."""
    if "/device:GPU:" in device:
        import cupy

        return cupy
    return np


def is_host_only(value: Any) -> bool:
    """Strings and Python objects, which only host memory holds."""
    dtype = getattr(value, "dtype", None)
    return isinstance(value, (str, bytes)) or (dtype is not None and dtype.kind in "OSU")


def to_host(value: Any) -> Any:
    """Copies a device array to host memory (no-op for numpy values)."""
    get = getattr(value, "get", None)
    if get is not None and type(value).__module__.startswith("cupy"):
        return get()
    return value


def transfer(value: Any, src: str, dst: str) -> Any:
    """Moves ``value`` from device ``src`` to ``dst`` ('' is the client/host). Strings
    stay in host memory, as in TF (cupy has no string arrays)."""
    if "/device:GPU:" in dst and not is_host_only(value):
        import cupy

        index = int(dst.rsplit(":", 1)[1])
        with cupy.cuda.Device(index):
            return cupy.asarray(value)
    return to_host(value)
