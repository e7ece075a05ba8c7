"""Window functions (``hann_window``, ``hamming_window``, ``vorbis_window``,
``kaiser_window``, ``kaiser_bessel_derived_window``), as composites of elementwise ops
over ``range(window_length)``, so the length may be a tensor.

The raised-cosine windows are ``a - b cos(2 pi n / d)`` with TF1's ``d``: ``L - 1``,
or ``L`` for a periodic window of even length (TF keeps ``d = L - 1`` for an odd
``L`` even when ``periodic``); a window of length 1 is ``[1]``. The Kaiser window is
``I0(beta sqrt(1 - (2n / (L - 1) - 1)^2)) / I0(beta)``, computed with the scaled Bessel
function ``i0e`` so that large ``beta`` does not overflow.
"""

from __future__ import annotations

import math as _pymath
from typing import Any

from ...framework import dtypes
from ...framework.graph import Tensor
from ...framework.scopes import name_scope
from .. import array as array_ops
from .. import math as math_ops
from ..constant import constant
from .framing import scalar_int


def _float_dtype(dtype: Any) -> dtypes.DType:
    d = dtypes.as_dtype(dtype)
    if not d.is_floating:
        raise ValueError(f"dtype must be a floating point type, got {d.name}")
    return d


def _raised_cosine(
    name: str | None, default: str, length: Any, periodic: Any, dtype: Any, a: float, b: float
) -> Tensor:
    d = _float_dtype(dtype)
    with name_scope(name, default, [length, periodic]):
        n_t = scalar_int(length, "window_length")
        periodic_t = math_ops.cast(convert_bool(periodic), dtypes.int32)
        even = math_ops.subtract(1, math_ops.floormod(n_t, 2))
        denom = math_ops.subtract(math_ops.add(n_t, math_ops.multiply(periodic_t, even)), 1)
        count = math_ops.cast(array_ops.range_(n_t), d)
        angle = math_ops.realdiv(
            math_ops.multiply(count, constant(2 * _pymath.pi, d)), math_ops.cast(denom, d)
        )
        window = math_ops.subtract(
            constant(a, d), math_ops.multiply(constant(b, d), math_ops.cos(angle))
        )
        return math_ops.where(
            math_ops.equal(array_ops.fill([n_t], n_t), 1), array_ops.ones([n_t], d), window
        )


def convert_bool(value: Any) -> Tensor:
    from ..build import convert_inputs

    t = convert_inputs([value], dtypes.bool)[0]
    if t.dtype != dtypes.bool:
        raise TypeError(f"periodic must be a bool, got {t.dtype.name}")
    return t


def hann_window(
    window_length: Any, periodic: Any = True, dtype: Any = dtypes.float32, name: str | None = None
) -> Tensor:
    """A Hann window ``0.5 - 0.5 cos(2 pi n / d)`` of ``window_length`` samples.

    Args:
        window_length: an int or int32 scalar tensor.
        periodic: a periodic window (for spectral analysis) rather than a symmetric one.
        dtype: a floating point dtype (else ``ValueError``).
        name: a name scope.
    """
    return _raised_cosine(name, "hann_window", window_length, periodic, dtype, 0.5, 0.5)


def hamming_window(
    window_length: Any, periodic: Any = True, dtype: Any = dtypes.float32, name: str | None = None
) -> Tensor:
    """A Hamming window ``0.54 - 0.46 cos(2 pi n / d)`` (arguments as ``hann_window``)."""
    return _raised_cosine(name, "hamming_window", window_length, periodic, dtype, 0.54, 0.46)


def vorbis_window(
    window_length: Any, dtype: Any = dtypes.float32, name: str | None = None
) -> Tensor:
    """The Vorbis power-complementary window ``sin(pi/2 sin^2(pi (n + 1/2) / L))``."""
    d = _float_dtype(dtype)
    with name_scope(name, "vorbis_window", [window_length]):
        n_t = scalar_int(window_length, "window_length")
        count = math_ops.add(math_ops.cast(array_ops.range_(n_t), d), constant(0.5, d))
        inner = math_ops.sin(
            math_ops.realdiv(
                math_ops.multiply(count, constant(_pymath.pi, d)), math_ops.cast(n_t, d)
            )
        )
        return math_ops.sin(math_ops.multiply(math_ops.square(inner), constant(_pymath.pi / 2, d)))


def kaiser_window(
    window_length: Any, beta: Any = 12.0, dtype: Any = dtypes.float32, name: str | None = None
) -> Tensor:
    """The Kaiser window of shape parameter ``beta`` (a window of length 1 is ``[1]``)."""
    from ..math.bessel import bessel_i0e

    d = _float_dtype(dtype)
    with name_scope(name, "kaiser_window", [window_length, beta]):
        n_t = scalar_int(window_length, "window_length")
        beta_t = math_ops.cast(beta, d)
        half = math_ops.realdiv(math_ops.cast(math_ops.subtract(n_t, 1), d), constant(2.0, d))
        count = math_ops.subtract(math_ops.cast(array_ops.range_(n_t), d), half)
        ratio = math_ops.realdiv(count, math_ops.maximum(half, constant(0.5, d)))
        inside = math_ops.maximum(math_ops.subtract(constant(1.0, d), math_ops.square(ratio)), 0.0)
        arg = math_ops.multiply(beta_t, math_ops.sqrt(inside))
        window = math_ops.multiply(
            math_ops.exp(math_ops.subtract(arg, beta_t)),
            math_ops.realdiv(bessel_i0e(arg), bessel_i0e(beta_t)),
        )
        return math_ops.where(
            math_ops.equal(array_ops.fill([n_t], n_t), 1), array_ops.ones([n_t], d), window
        )


def kaiser_bessel_derived_window(
    window_length: Any, beta: Any = 12.0, dtype: Any = dtypes.float32, name: str | None = None
) -> Tensor:
    """The Kaiser-Bessel-derived window: the square roots of the normalized running sums
    of a Kaiser window of ``window_length // 2 + 1`` samples, mirrored."""
    d = _float_dtype(dtype)
    with name_scope(name, "kaiser_bessel_derived_window", [window_length, beta]):
        n_t = scalar_int(window_length, "window_length")
        half = math_ops.floordiv(n_t, 2)
        kaiser = kaiser_window(math_ops.add(half, 1), beta, d)
        sums = math_ops.cumsum(kaiser)
        halfw = math_ops.sqrt(math_ops.realdiv(sums[:-1], sums[-1]))
        return array_ops.concat([halfw, array_ops.reverse(halfw, [0])], 0)
