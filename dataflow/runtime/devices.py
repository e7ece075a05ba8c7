"""Devices of this process and their array namespaces (numpy, cupy)."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

LOCAL_JOB = "/job:localhost/replica:0/task:0"


@functools.cache
def gpu_count() -> int:
    """CUDA devices visible through CuPy (0 when CuPy or CUDA is absent)."""
    try:
        import cupy

        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:
        return 0


def local_devices(job: str = LOCAL_JOB) -> list[str]:
    out = [f"{job}/device:CPU:0"]
    out += [f"{job}/device:GPU:{i}" for i in range(gpu_count())]
    return out


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
