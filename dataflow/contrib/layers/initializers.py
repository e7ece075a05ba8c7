"""``tf.contrib.layers``' initializers, as TF 1.15 contrib defines them.

Both are core ``variance_scaling_initializer``s: contrib's ``factor``/``mode``/``uniform``
map onto core's ``scale``/``mode``/``distribution``. Contrib's truncated normal has
stddev ``sqrt(1.3 * factor / n)``, core's ``sqrt(scale / n) / 0.8796...``; the scale is
converted so both give the same stddev.
"""

from __future__ import annotations

from typing import Any

from ...framework import dtypes
from ...ops.state.initializers import VarianceScaling

_MODES = {"FAN_IN": "fan_in", "FAN_OUT": "fan_out", "FAN_AVG": "fan_avg"}
_TRUNCATED_STDDEV = 0.87962566103423978  # core's truncated-normal correction


def variance_scaling_initializer(
    factor: float = 2.0,
    mode: str = "FAN_IN",
    uniform: bool = False,
    seed: int | None = None,
    dtype: Any = dtypes.float32,
) -> VarianceScaling:
    """Values with variance ``factor / n``, ``n`` the weight's fan in, fan out or their
    mean (``mode``): uniform in ``[-sqrt(3 factor / n), sqrt(3 factor / n)]``, or a
    normal truncated at two standard deviations with stddev ``sqrt(1.3 factor / n)``.

    Raises:
        TypeError: a non-floating ``dtype`` or an unknown ``mode``.
    """
    if not dtypes.as_dtype(dtype).is_floating:
        raise TypeError("Cannot create initializer for non-floating point type.")
    if mode not in _MODES:
        raise TypeError(f"Unknown mode {mode} [FAN_IN, FAN_OUT, FAN_AVG]")
    if uniform:
        return VarianceScaling(factor, _MODES[mode], "uniform", seed=seed, dtype=dtype)
    scale = 1.3 * factor * _TRUNCATED_STDDEV**2
    return VarianceScaling(scale, _MODES[mode], "truncated_normal", seed=seed, dtype=dtype)


def xavier_initializer(
    uniform: bool = True, seed: int | None = None, dtype: Any = dtypes.float32
) -> VarianceScaling:
    """Glorot and Bengio's initializer: ``variance_scaling_initializer(1.0, "FAN_AVG")``,
    uniform by default (then the same as ``tf.glorot_uniform_initializer``)."""
    return variance_scaling_initializer(1.0, "FAN_AVG", uniform, seed, dtype)


xavier_initializer_conv2d = xavier_initializer
