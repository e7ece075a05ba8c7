"""``tf.contrib.distributions``: ``Normal``, TF 1.15's univariate normal distribution
(``tf.distributions.Normal``), in graph mode.

A ``Normal`` holds ``loc`` and ``scale`` tensors (broadcast together: its batch shape)
and builds each quantity as graph ops under its name scope. ``sample(n, seed)`` draws
``random_normal`` of shape ``[*n, *batch_shape]`` with TF's seed rules (graph seed and op
seed), then scales and shifts it, so gradients reach ``loc`` and ``scale``. The random
stream is dataflow's, so the same seeds give other numbers than TF's.

``cdf`` is TF's ``ndtr``: ``(1 + erf(x / sqrt 2)) / 2`` above the mean, and in the lower
tail ``erfc(-x / sqrt 2) / 2`` with ``erfc`` from the Chebyshev-fitted exponential of
Numerical Recipes' ``erfcc`` (relative error below 1.2e-7 everywhere), since dataflow has
no ``erfc`` op. ``log_cdf`` is TF's ``log_ndtr``: ``log(ndtr(x))`` between a lower and an
upper segment (-10 and 5 for float32, -20 and 8 for float64), ``-ndtr(-x)`` above, and
the asymptotic series of order 3 below.
"""

from __future__ import annotations

import math
from typing import Any

import dataflow as tf

from .missing import contrib_hook

_HALF_LOG_TWO_PI = 0.5 * math.log(2.0 * math.pi)
# erfc(z) ~ t exp(-z^2 + P(t)), t = 1 / (1 + z / 2), z >= 0 (Numerical Recipes' erfcc)
_ERFC_POLY = (
    -1.26551223,
    1.00002368,
    0.37409196,
    0.09678418,
    -0.18628806,
    0.27886807,
    -1.13520398,
    1.48851587,
    -0.82215223,
    0.17087277,
)


def _erfc_nonnegative(z: Any) -> Any:
    """``erfc(z)`` for ``z >= 0``, to a relative 1.2e-7."""
    t = 1.0 / (1.0 + 0.5 * z)
    poly = tf.zeros_like(z) + _ERFC_POLY[-1]
    for c in reversed(_ERFC_POLY[:-1]):
        poly = poly * t + c
    return t * tf.exp(-tf.square(z) + poly)


def ndtr(x: Any) -> Any:
    """The standard normal CDF at ``x`` (full relative precision in the lower tail)."""
    w = x * math.sqrt(0.5)
    lower = 0.5 * _erfc_nonnegative(tf.abs(w))
    upper = 0.5 * (1.0 + tf.math.erf(w))
    return tf.where(w < 0.0, lower, upper)


def log_ndtr(x: Any) -> Any:
    """``log(ndtr(x))``, with TF 1.15's segments and lower-tail series (order 3)."""
    low, high = (-20.0, 8.0) if x.dtype == tf.float64 else (-10.0, 5.0)
    middle = tf.log(ndtr(tf.maximum(x, low)))
    above = -ndtr(-x)
    xl = tf.minimum(x, low)  # the series only where it is used: no log of a positive
    x2 = tf.square(xl)
    series = 1.0 - 1.0 / x2 + 3.0 / tf.square(x2) - 15.0 / (x2 * tf.square(x2))
    below = -0.5 * x2 - tf.log(-xl) - _HALF_LOG_TWO_PI + tf.log(series)
    return tf.where(x > high, above, tf.where(x > low, middle, below))


class Normal:
    """The normal distribution with mean ``loc`` and standard deviation ``scale``.

    Args:
        loc: the means (float tensor).
        scale: the standard deviations (positive, same dtype).
        validate_args: check ``scale > 0`` when the quantities run.
        allow_nan_stats: kept for TF's signature; every statistic here is defined.
        name: the name scope of the ops.

    Raises:
        TypeError: ``loc`` and ``scale`` of different dtypes.
    """

    def __init__(
        self,
        loc: Any,
        scale: Any,
        validate_args: bool = False,
        allow_nan_stats: bool = True,
        name: str = "Normal",
    ):
        with tf.name_scope(name, values=[loc, scale]) as scope:
            self._name = scope
            self._loc = tf.convert_to_tensor(loc, name="loc")
            self._scale = tf.convert_to_tensor(scale, name="scale", dtype=self._loc.dtype)
            if validate_args:
                check = tf.assert_positive(self._scale, message="scale must be positive")
                with tf.control_dependencies([check]):
                    self._scale = tf.identity(self._scale)
        self.validate_args, self.allow_nan_stats = validate_args, allow_nan_stats

    loc = property(lambda self: self._loc, doc="The means.")
    scale = property(lambda self: self._scale, doc="The standard deviations.")
    dtype = property(lambda self: self._loc.dtype)
    name = property(lambda self: self._name)

    @property
    def batch_shape(self) -> Any:
        """The static broadcast shape of ``loc`` and ``scale``."""
        return (self._loc + self._scale).shape

    def batch_shape_tensor(self, name: str = "batch_shape_tensor") -> Any:
        with self._scope(name):
            return tf.shape(self._loc + self._scale)

    @property
    def event_shape(self) -> Any:
        return tf.TensorShape([])

    def event_shape_tensor(self, name: str = "event_shape_tensor") -> Any:
        with self._scope(name):
            return tf.constant([], dtype=tf.int32)

    def _scope(self, name: str) -> Any:
        return tf.name_scope(f"{self._name}{name}/")

    def _z(self, x: Any) -> Any:
        return (tf.convert_to_tensor(x, dtype=self.dtype) - self._loc) / self._scale

    def sample(self, sample_shape: Any = (), seed: int | None = None, name: str = "sample"):
        """Draws of shape ``[*sample_shape, *batch_shape]``."""
        with self._scope(name):
            sample_shape = tf.convert_to_tensor(sample_shape, dtype=tf.int32)
            shape = tf.concat([tf.reshape(sample_shape, [-1]), self.batch_shape_tensor()], 0)
            draws = tf.random_normal(shape, dtype=self.dtype, seed=seed)
            return draws * self._scale + self._loc

    def log_prob(self, value: Any, name: str = "log_prob") -> Any:
        """``-z**2 / 2 - log(sqrt(2 pi) scale)``, ``z = (value - loc) / scale``."""
        with self._scope(name):
            z = self._z(value)
            return -0.5 * tf.square(z) - (_HALF_LOG_TWO_PI + tf.log(self._scale))

    def prob(self, value: Any, name: str = "prob") -> Any:
        with self._scope(name):
            return tf.exp(self.log_prob(value))

    def cdf(self, value: Any, name: str = "cdf") -> Any:
        """``P(X <= value)``."""
        with self._scope(name):
            return ndtr(self._z(value))

    def log_cdf(self, value: Any, name: str = "log_cdf") -> Any:
        with self._scope(name):
            return log_ndtr(self._z(value))

    def survival_function(self, value: Any, name: str = "survival_function") -> Any:
        """``P(X > value)``."""
        with self._scope(name):
            return ndtr(-self._z(value))

    def log_survival_function(self, value: Any, name: str = "log_survival_function"):
        with self._scope(name):
            return log_ndtr(-self._z(value))

    def mean(self, name: str = "mean") -> Any:
        with self._scope(name):
            return self._loc * tf.ones_like(self._scale)

    def mode(self, name: str = "mode") -> Any:
        with self._scope(name):
            return self._loc * tf.ones_like(self._scale)

    def stddev(self, name: str = "stddev") -> Any:
        with self._scope(name):
            return self._scale * tf.ones_like(self._loc)

    def variance(self, name: str = "variance") -> Any:
        with self._scope(name):
            return tf.square(self.stddev())

    def entropy(self, name: str = "entropy") -> Any:
        """``log(sqrt(2 pi e) scale)``, one per batch member."""
        with self._scope(name):
            scale = self._scale * tf.ones_like(self._loc)
            return 0.5 + _HALF_LOG_TWO_PI + tf.log(scale)


__getattr__ = contrib_hook("distributions", __name__)
