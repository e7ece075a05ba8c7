"""Optional compiled kernels: a loop compiled with ``numba`` where it is installed (the
``fast`` extra: ``pip install "dask-dataflow[fast]"``), numpy where it is not.

numpy runs one pass over memory per ufunc call, so an elementwise chain of twelve
operations (Adam's update) or a histogram's eleven passes cost twelve or eleven trips
through memory; a compiled loop does the whole chain in one, on registers. Measured on
Adam's update of 1.33M float32 parameters (docs/performance.md): 0.86 ms in one loop
against 2.9 ms in blocked BLAS/ufunc calls and 1.7 ms in TF1's Eigen kernel.

Decisions, and why:

* **Optional.** numba pins the numpy versions it supports, and its compiler (llvmlite)
  is a large wheel: a dependency would hold every user's numpy back. Each caller keeps
  its numpy route, and the two give the same values where the loop does each operation
  as the numpy route does (both round every operation once; nothing is fused or
  reordered: no ``fastmath``).
* **Loaded late.** ``import numba`` takes ~0.35 s and a first compile ~0.3-0.6 s per
  signature; nothing here happens at ``import dataflow`` or for work too small to
  gain, only on the first call of a kernel that a caller chose to use. Compiled code is
  cached on disk (numba's ``cache=True``: next to this package if it is writable, else
  in the user's cache folder), so a later process loads it in milliseconds.
* **numpy's error model.** A loop that divides compiles with ``error_model="numpy"``:
  with Python's (numba's default) every division checks for zero and may raise, and
  that check keeps LLVM from vectorizing the loop (3.6 ms against 0.86 ms above).
* **No GIL.** Kernels release the GIL (``nogil``): other threads of a step run beside.
* **Off switch.** ``DATAFLOW_NUMBA=0`` in the environment keeps every caller on numpy.
  A kernel that fails to compile (a numba too old or too new for this code) logs once
  and stays on numpy; nothing raises to the user.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from typing import Any

logger = logging.getLogger(__name__)

_lock = threading.Lock()
_numba: Any = None  # the module, False where unavailable, None before the first look


def numba_module() -> Any:
    """``numba``, or ``None`` where it is not installed or ``DATAFLOW_NUMBA=0``."""
    global _numba
    if _numba is None:
        with _lock:
            if _numba is None:
                _numba = False
                if os.environ.get("DATAFLOW_NUMBA", "1") != "0":
                    try:
                        import numba

                        _numba = numba
                    except ImportError:
                        pass
    return _numba or None


class Kernel:
    """A Python loop compiled with numba on first use (see the module docstring).

    ``compiled()`` is the compiled function, or ``None`` when callers must take their
    numpy route: numba missing or switched off, or this loop failed to compile.
    """

    def __init__(self, loop: Callable) -> None:
        self.loop = loop
        self._compiled: Any = None  # a numba dispatcher, False once given up
        self._lock = threading.Lock()

    def compiled(self) -> Callable | None:
        if self._compiled is None:
            numba = numba_module()
            with self._lock:
                if self._compiled is None:
                    self._compiled = self._compile(numba) if numba is not None else False
        return self._compiled or None

    def _compile(self, numba: Any) -> Any:
        options = {"nogil": True, "error_model": "numpy"}
        try:
            try:
                return numba.njit(cache=True, **options)(self.loop)
            except RuntimeError:  # no cache folder this process may write
                return numba.njit(**options)(self.loop)
        except Exception as exc:  # an unsupported numba: stay on numpy
            logger.warning("numba cannot compile %s (%s); using numpy", self.name, exc)
            return False

    @property
    def ready(self) -> bool:
        """Whether the loop was compiled already (using it costs no import or compile)."""
        return bool(self._compiled)

    @property
    def name(self) -> str:
        return f"{self.loop.__module__}.{self.loop.__qualname__}"

    def __call__(self, *args: Any) -> tuple[bool, Any]:
        """Runs the compiled loop on ``args``: ``(True, what it returned)``, or
        ``(False, None)`` (nothing done) where the caller must take its numpy route.
        Compilation happens lazily per argument types; a failure there also answers
        ``(False, None)``, logged once."""
        compiled = self.compiled()
        if compiled is None:
            return False, None
        try:
            return True, compiled(*args)
        except Exception as exc:
            if not _is_typing_error(exc):
                raise
            logger.warning("numba cannot compile %s for these arguments (%s)", self.name, exc)
            self._compiled = False
            return False, None


def _is_typing_error(exc: Exception) -> bool:
    """Whether ``exc`` is numba's refusal to compile (not an error of the loop's run)."""
    numba = numba_module()
    errors = getattr(numba, "core", None) and getattr(numba.core, "errors", None)
    return errors is not None and isinstance(exc, errors.NumbaError)
