"""Large arrays on a worker reuse memory instead of being faulted in afresh every step.

Dask's nanny starts each worker with ``MALLOC_TRIM_THRESHOLD_=65536``
(``distributed.nanny.pre-spawn-environ``), so that memory a task freed goes back to the
operating system. Setting any of glibc's malloc tunables also turns off glibc's
*dynamic* mmap threshold, though: every allocation over 128 KiB is then a fresh
``mmap``, unmapped again when freed. A training step allocates the same large arrays
every time (a fed batch received from the client, a kernel's output, a gradient), and
each step then faults every page of them in again, zeroed by the kernel. On the 2-core
AMD EPYC VM a 4 KiB page fault took about 3 us: receiving a 4 MB fed batch cost the
worker 2.7 ms of faults against 0.2 ms reusing memory, and the whole ridge step of
issue 34 went from 6.3 to 2.3 ms. TF1's processes, and the client's, keep glibc's
defaults.

``apply()`` runs when a worker is prepared for dataflow (``worker_plugin``). Only where
the worker's environment has Dask's own setting (that variable at Dask's configured
value, no other ``MALLOC_*`` variable and no malloc ``GLIBC_TUNABLES``: a setting
someone chose on purpose is left as it is), it sets fixed thresholds with ``mallopt``:
blocks up to ``MMAP_THRESHOLD`` (32 MiB, glibc's largest) come from the heap and are
reused, and the heap keeps at most ``TRIM_THRESHOLD`` (64 MiB) of free memory at its top
before giving it back. So a worker idles with at most that much more memory than Dask's
setting would leave, and returns the rest. ``DATAFLOW_MALLOC=dask`` keeps Dask's
setting; non-glibc platforms are left alone.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import platform
from collections.abc import Mapping

logger = logging.getLogger(__name__)

M_TRIM_THRESHOLD = -1  # glibc's mallopt parameter numbers (malloc.h)
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 << 20  # glibc's largest: HEAP_MAX_SIZE / 2 on 64-bit
TRIM_THRESHOLD = 64 << 20
DASK_VARIABLE = "MALLOC_TRIM_THRESHOLD_"

_applied = False


def dasks_setting_only(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the process's malloc tunables are exactly Dask's nanny default."""
    if environ is None:
        environ = os.environ
    tunables = {k for k in environ if k.startswith("MALLOC_")}
    if tunables != {DASK_VARIABLE} or "glibc.malloc" in environ.get("GLIBC_TUNABLES", ""):
        return False
    try:
        import dask

        default = dask.config.get(f"distributed.nanny.pre-spawn-environ.{DASK_VARIABLE}")
    except Exception:
        return False
    return default is not None and str(environ[DASK_VARIABLE]) == str(default)


def apply() -> bool:
    """Sets the fixed thresholds on a glibc worker started with Dask's setting (see the
    module doc); whether they are in force. Idempotent; never raises."""
    global _applied
    if _applied:
        return True
    if os.environ.get("DATAFLOW_MALLOC", "").lower() == "dask" or not dasks_setting_only():
        return False
    if platform.libc_ver()[0] != "glibc":
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        done = libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
        done = libc.mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1 and done
    except (OSError, AttributeError):
        logger.debug("dataflow: could not set malloc thresholds", exc_info=True)
        return False
    _applied = done
    return done
