"""Floating-point warnings off while a step's kernels run.

TF is silent about floating-point exceptions (``check_numerics`` is the way to catch
them), while numpy warns, so kernels run under the equivalent of
``np.errstate(all="ignore")``. Entering an ``np.errstate`` builds numpy's error-state
object anew each time (1.4 us, a tenth of a small step); here the quiet state derived
from the caller's current one is built once and swapped in directly through the context
variable ``np.errstate`` itself sets (0.2 us). Where numpy keeps that variable elsewhere
(other versions), ``np.errstate`` is used as is.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

try:
    _config: Any = importlib.import_module("numpy._core._ufunc_config")
except ImportError:  # pragma: no cover - numpy < 2
    _config = None
# Both private names or neither (then np.errstate is used).
_extobj_contextvar = getattr(_config, "_extobj_contextvar", None)
_make_extobj = getattr(_config, "_make_extobj", None)
if _make_extobj is None:  # pragma: no cover - another numpy layout
    _extobj_contextvar = None

# The caller's error state -> the same state with every warning off. Error states are
# few (numpy's default, plus the user's own errstate blocks), so this stays small.
_quiet_for: dict[Any, Any] = {}


def silence() -> Any:
    """Turns floating-point warnings off; returns what ``restore`` needs."""
    if _extobj_contextvar is None or _make_extobj is None:
        state = np.errstate(all="ignore")
        state.__enter__()
        return state
    current = _extobj_contextvar.get()
    quiet = _quiet_for.get(current)
    if quiet is None:
        quiet = _make_extobj(all="ignore")
        if len(_quiet_for) < 64:
            _quiet_for[current] = quiet
    return _extobj_contextvar.set(quiet)


def restore(token: Any) -> None:
    """Puts back the error state ``silence`` replaced."""
    if _extobj_contextvar is None:
        token.__exit__(None, None, None)
    else:
        _extobj_contextvar.reset(token)
