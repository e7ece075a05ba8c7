"""The mel scale: ``linear_to_mel_weight_matrix`` (triangular filters mapping linear
frequency bins to mel bins, HTK style: ``mel = 1127 ln(1 + hz / 700)``, the DC bin
weighted 0) and ``mfccs_from_log_mel_spectrograms`` (a type-II DCT scaled by
``1/sqrt(2M)`` over ``M`` mel bins).

The weight matrix depends only on Python numbers, so it is computed here, in the
requested dtype, and enters the graph as a constant (as TF's folds to one).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...framework import dtypes
from ...framework.graph import Tensor
from ...framework.scopes import name_scope
from .. import array as array_ops
from .. import math as math_ops
from ..build import convert_inputs
from ..constant import constant
from .dct_ops import dct

_MEL_BREAK_HZ = 700.0
_MEL_HIGH_Q = 1127.0


def _hertz_to_mel(hertz: np.ndarray) -> np.ndarray:
    return _MEL_HIGH_Q * np.log1p(hertz / _MEL_BREAK_HZ)


def linear_to_mel_weight_matrix(
    num_mel_bins: int = 20,
    num_spectrogram_bins: int = 129,
    sample_rate: float = 8000,
    lower_edge_hertz: float = 125.0,
    upper_edge_hertz: float = 3800.0,
    dtype: Any = dtypes.float32,
    name: str | None = None,
) -> Tensor:
    """A ``[num_spectrogram_bins, num_mel_bins]`` matrix of triangular mel filters:
    multiplying a linear-frequency magnitude spectrogram by it gives a mel spectrogram.

    Args:
        num_mel_bins: the mel bands.
        num_spectrogram_bins: the bins of the source spectrogram (``fft_length // 2 +
            1``), spanning 0 Hz to ``sample_rate / 2``.
        sample_rate: the source's samples per second.
        lower_edge_hertz: the lower edge of the lowest band.
        upper_edge_hertz: the upper edge of the highest band.
        dtype: a floating point dtype.
        name: the constant's name.

    Raises:
        ValueError: a non-positive count or sample rate, edges out of order, or an upper
            edge above the Nyquist frequency (as TF1).
    """
    d = dtypes.as_dtype(dtype)
    if not d.is_floating:
        raise ValueError(f"dtype must be a floating point type, got {d.name}")
    if num_mel_bins <= 0:
        raise ValueError(f"num_mel_bins must be positive. Got: {num_mel_bins}")
    if num_spectrogram_bins <= 0:
        raise ValueError(f"num_spectrogram_bins must be positive. Got: {num_spectrogram_bins}")
    if sample_rate <= 0.0:
        raise ValueError(f"sample_rate must be positive. Got: {sample_rate}")
    if lower_edge_hertz < 0.0:
        raise ValueError(f"lower_edge_hertz must be non-negative. Got: {lower_edge_hertz}")
    if lower_edge_hertz >= upper_edge_hertz:
        raise ValueError(
            f"lower_edge_hertz {lower_edge_hertz:.1f} >= upper_edge_hertz {upper_edge_hertz:.1f}"
        )
    if upper_edge_hertz > sample_rate / 2:
        raise ValueError(
            "upper_edge_hertz must not be larger than the Nyquist frequency (sample_rate / 2). "
            f"Got {upper_edge_hertz} for sample_rate: {sample_rate}"
        )
    np_dtype = d.as_numpy_dtype
    nyquist = np_dtype(sample_rate) / np_dtype(2.0)
    linear = np.linspace(0.0, nyquist, num_spectrogram_bins, dtype=np_dtype)[1:]
    bins_mel = _hertz_to_mel(linear)[:, None]
    edges = np.linspace(
        _hertz_to_mel(np_dtype(lower_edge_hertz)),
        _hertz_to_mel(np_dtype(upper_edge_hertz)),
        num_mel_bins + 2,
        dtype=np_dtype,
    )
    lower, center, upper = edges[:-2][None], edges[1:-1][None], edges[2:][None]
    lower_slopes = (bins_mel - lower) / (center - lower)
    upper_slopes = (upper - bins_mel) / (upper - center)
    weights = np.maximum(np_dtype(0), np.minimum(lower_slopes, upper_slopes))
    weights = np.concatenate([np.zeros((1, num_mel_bins), np_dtype), weights.astype(np_dtype)])
    return constant(weights, dtype=d, name=name or "linear_to_mel_weight_matrix")


def mfccs_from_log_mel_spectrograms(log_mel_spectrograms: Any, name: str | None = None) -> Tensor:
    """Mel-frequency cepstral coefficients: the type-II DCT of log-magnitude mel
    spectrograms ``[..., num_mel_bins]``, scaled by ``1/sqrt(2 num_mel_bins)``.

    Raises:
        ValueError: a scalar input, or a known ``num_mel_bins`` of 0.
    """
    with name_scope(name, "mfccs_from_log_mel_spectrograms", [log_mel_spectrograms]):
        x = convert_inputs([log_mel_spectrograms])[0]
        if x.shape.ndims == 0:
            raise ValueError("Input log_mel_spectrograms must have rank at least 1.")
        if x.shape.ndims is not None and x.shape.as_list()[-1] == 0:
            raise ValueError("num_mel_bins must be positive. Got: 0")
        bins = math_ops.cast(array_ops.shape(x)[-1], x.dtype)
        transformed = dct(x, type=2)
        return math_ops.multiply(
            transformed, math_ops.rsqrt(math_ops.multiply(bins, constant(2.0, x.dtype)))
        )
