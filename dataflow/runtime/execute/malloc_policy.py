"""Large arrays reuse memory instead of being faulted in afresh at every step.

A step allocates the same large arrays every time: a fed batch received, kernels'
outputs and temporaries, gradients. numpy takes them from glibc's ``malloc``, which maps
a block over its *mmap threshold* fresh and unmaps it when freed, and gives the top of
its heap back to the system past its *trim threshold*; either way the next step's array
lands on new pages, each faulted in and zeroed by the kernel one 4 KiB page at a time.
On this project's 2-core AMD EPYC VM a fault took about 3 us, so a step paid about
0.75 ms per MB it allocated afresh:

* In Dask's workers. Dask's nanny starts them with ``MALLOC_TRIM_THRESHOLD_=65536``
  (``distributed.nanny.pre-spawn-environ``), which also turns off glibc's dynamic mmap
  threshold: every block over 128 KiB was mapped fresh. Receiving a 4 MB fed batch cost
  the worker 2.7 ms of faults against 0.2 ms reusing memory; issue 34's ridge step went
  from 6.3 to 2.3 ms.
* In a plain process too, with glibc's dynamic thresholds: a histogram summary of 200K
  values (seven temporaries of 0.2-1.6 MB) faulted about 950 pages a call, 4.2-6.2 ms
  against 2.0-2.3 ms with fixed thresholds; the ``merge_all`` step with four of them
  went from 3.65x to 2.23x the step without.

``apply()`` runs when a session makes its backend (in the program's process) and when a
worker is prepared for dataflow (``runtime/dask/worker_plugin.py``). Where the process's
environment sets no malloc tunable, or exactly Dask's (that variable at Dask's
configured value, nothing else), it sets fixed thresholds with ``mallopt``: blocks up to
``MMAP_THRESHOLD`` (32 MiB, the largest glibc takes) come from the heap and are reused,
and the heap keeps up to ``TRIM_THRESHOLD`` (64 MiB) free at its top before returning
it. The process then holds at most that much more idle memory. Any other setting (a
``MALLOC_*`` variable or a malloc ``GLIBC_TUNABLES`` entry someone chose) is left as it
is, as is everything with ``DATAFLOW_MALLOC=keep`` or on a C library other than glibc.
The change lasts for the process, as any ``mallopt`` does. Blocks over 32 MiB glibc
always maps afresh; elementwise ops with such outputs write into arrays they keep
instead (``large_outputs.py``).
"""

from __future__ import annotations

import ctypes
import logging
import os
import threading
from collections.abc import Mapping

logger = logging.getLogger(__name__)

M_TRIM_THRESHOLD = -1  # glibc's mallopt parameter numbers (malloc.h)
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 << 20  # glibc's largest: HEAP_MAX_SIZE / 2 on 64-bit
TRIM_THRESHOLD = 64 << 20
DASK_VARIABLE = "MALLOC_TRIM_THRESHOLD_"
DASK_DEFAULT = 65536  # its value in distributed's own configuration
OPT_OUT = "DATAFLOW_MALLOC"  # ``keep``: leave the process's malloc settings alone

_lock = threading.Lock()
_decided: bool | None = None  # whether the thresholds are in force, once tried


def ours_to_set(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the process's malloc settings are glibc's defaults or Dask's nanny
    default (so not anyone's deliberate choice), and not opted out of."""
    if environ is None:
        environ = os.environ
    if environ.get(OPT_OUT, "").lower() == "keep":
        return False
    if "glibc.malloc" in environ.get("GLIBC_TUNABLES", ""):
        return False
    tunables = {k for k in environ if k.startswith("MALLOC_")}
    if not tunables:
        return True
    if tunables != {DASK_VARIABLE}:
        return False
    try:  # distributed's config is there once it is imported (in a worker, always)
        import dask

        key = f"distributed.nanny.pre-spawn-environ.{DASK_VARIABLE}"
        default = dask.config.get(key, default=DASK_DEFAULT)
    except Exception:
        return False
    return default is not None and str(environ[DASK_VARIABLE]) == str(default)


def apply() -> bool:
    """Sets the fixed thresholds where ``ours_to_set`` (see the module doc); whether
    they are in force. Decides once per process; never raises."""
    global _decided
    with _lock:
        if _decided is None:
            _decided = ours_to_set() and _glibc() and _set()
        return _decided


def _glibc() -> bool:
    try:
        return (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc")
    except (ValueError, OSError, AttributeError):  # no such name: not glibc
        return False


def _set() -> bool:
    try:
        # The process's own symbols include libc's (find_library would run ldconfig).
        libc = ctypes.CDLL(None)
        mmap_set = libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
        return libc.mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1 and mmap_set
    except (OSError, AttributeError):
        logger.debug("dataflow: could not set malloc thresholds", exc_info=True)
        return False
