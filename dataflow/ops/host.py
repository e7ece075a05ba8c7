"""Moving a kernel's input to host memory, for the ops whose kernels work on the host
(summaries, datasets, candidate samplers): strings and Python objects live there, and
encoders, file readers and Python loops need numpy arrays."""

from __future__ import annotations

from typing import Any

import numpy as np


def to_host(value: Any) -> Any:
    """A device array (cupy, or the tests' stand-in, whose ``get`` copies to the host)
    as a numpy array; anything else (numpy arrays, scalars, pipelines) as it is."""
    get = getattr(value, "get", None)
    if get is not None and hasattr(value, "dtype") and type(value) is not np.ndarray:
        return get()
    return value


def is_host_namespace(xp: Any) -> bool:
    """Whether a kernel's array namespace ``ctx.xp`` is numpy itself (host memory), as
    opposed to cupy or the tests' stand-ins: the test kernels use to pick numpy-only
    paths (reused buffers, cache blocking) without naming numpy in their bodies."""
    return xp is np
