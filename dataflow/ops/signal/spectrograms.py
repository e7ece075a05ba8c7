"""Short-time Fourier transforms and the modified discrete cosine transform, as
composites: ``stft`` frames the signal, applies a window and takes ``rfft`` of each
frame; ``inverse_stft`` takes ``irfft``, keeps ``frame_length`` samples, windows them
and overlap-adds; ``inverse_stft_window_fn`` makes the window that turns
``inverse_stft`` into an exact inverse (the forward window divided by the sum of the
squared windows overlapping each sample). ``mdct`` frames with a hop of half a frame,
folds each frame into half its length and takes a type-IV DCT; ``inverse_mdct``
unfolds and overlap-adds. Gradients flow through the framing, window and FFT ops.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...framework import dtypes
from ...framework.graph import Tensor
from ...framework.scopes import name_scope
from ...framework.tensor_util import constant_value
from .. import array as array_ops
from .. import math as math_ops
from ..build import convert_inputs
from ..constant import constant
from ..math.complex_parts import real_dtype_of
from .dct_ops import dct
from .fourier import irfft, rfft
from .framing import frame, overlap_and_add, scalar_int
from .windows import hann_window, vorbis_window


def _static_int(value: Any, what: str) -> int:
    known = constant_value(value)
    if known is None or np.ndim(known) != 0:
        raise ValueError(f"{what} must be known at graph build time (an int or a constant)")
    return int(known)


def _enclosing_power_of_two(n: int) -> int:
    return 1 << max(int(n) - 1, 0).bit_length()


def stft(
    signals: Any,
    frame_length: Any,
    frame_step: Any,
    fft_length: Any = None,
    window_fn: Callable[..., Any] | None = hann_window,
    pad_end: bool = False,
    name: str | None = None,
) -> Tensor:
    """The short-time Fourier transform of real signals ``[..., samples]``.

    Args:
        signals: float32 or float64 ``[..., samples]``.
        frame_length: the window length in samples.
        frame_step: the hop between frames in samples.
        fft_length: the FFT size (default: the smallest power of 2 at least
            ``frame_length``).
        window_fn: ``window_fn(frame_length, dtype=...)`` makes the window; ``None``
            applies none.
        pad_end: pad the signal's end so that every sample is in a frame.
        name: a name scope.

    Returns:
        Complex ``[..., frames, fft_length // 2 + 1]``.
    """
    with name_scope(name, "stft", [signals, frame_length, frame_step]):
        x = convert_inputs([signals])[0]
        if x.shape.ndims is not None and x.shape.ndims < 1:
            raise ValueError(f"stft needs signals of rank >= 1, got shape {x.shape}")
        length = _static_int(frame_length, "frame_length")
        if fft_length is None:
            fft_length = _enclosing_power_of_two(length)
        framed = frame(x, length, frame_step, pad_end=pad_end)
        if window_fn is not None:
            framed = math_ops.multiply(framed, window_fn(length, dtype=framed.dtype))
        return rfft(framed, array_ops.reshape(scalar_int(fft_length, "fft_length"), [1]))


def inverse_stft(
    stfts: Any,
    frame_length: Any,
    frame_step: Any,
    fft_length: Any = None,
    window_fn: Callable[..., Any] | None = hann_window,
    name: str | None = None,
) -> Tensor:
    """Real signals from their short-time Fourier transforms ``[..., frames, bins]``
    (an exact inverse of ``stft`` when ``window_fn`` is ``inverse_stft_window_fn``'s).

    Arguments as ``stft``; returns float ``[..., samples]``.
    """
    with name_scope(name, "inverse_stft", [stfts, frame_length, frame_step]):
        z = convert_inputs([stfts])[0]
        if z.shape.ndims is not None and z.shape.ndims < 2:
            raise ValueError(f"inverse_stft needs stfts of rank >= 2, got shape {z.shape}")
        length = _static_int(frame_length, "frame_length")
        if fft_length is None:
            fft_length = _enclosing_power_of_two(length)
        n_fft = _static_int(fft_length, "fft_length")
        frames = irfft(z, constant([n_fft], dtypes.int32))[..., :length]
        if n_fft < length:
            rank = frames.shape.ndims
            if rank is None:
                raise ValueError(
                    "inverse_stft needs the rank of stfts when fft_length < frame_length"
                )
            frames = array_ops.pad(frames, [[0, 0]] * (rank - 1) + [[0, length - n_fft]])
        if window_fn is not None:
            window = window_fn(length, dtype=real_dtype_of(z.dtype))
            frames = math_ops.multiply(frames, window)
        return overlap_and_add(frames, frame_step)


def inverse_stft_window_fn(
    frame_step: Any, forward_window_fn: Callable[..., Any] = hann_window, name: str | None = None
) -> Callable[..., Tensor]:
    """A ``window_fn`` for ``inverse_stft`` that inverts ``stft`` with
    ``forward_window_fn``: the forward window divided, sample by sample, by the sum of
    the squares of the windows overlapping it at hop ``frame_step``."""

    def inverse_window(frame_length: Any, dtype: Any) -> Tensor:
        with name_scope(name, "inverse_stft_window_fn", [forward_window_fn]):
            step = _static_int(frame_step, "frame_step")
            length = _static_int(frame_length, "frame_length")
            window = forward_window_fn(length, dtype=dtype)
            squares = math_ops.square(window)
            overlaps = -(-length // step)
            padded = array_ops.pad(squares, [[0, overlaps * step - length]])
            folded = math_ops.reduce_sum(
                array_ops.reshape(padded, [overlaps, step]), 0, keepdims=True
            )
            denominator = array_ops.reshape(array_ops.tile(folded, [overlaps, 1]), [-1])
            return math_ops.realdiv(window, denominator[:length])

    return inverse_window


def mdct(
    signals: Any,
    frame_length: Any,
    window_fn: Callable[..., Any] | None = vorbis_window,
    pad_end: bool = False,
    norm: str | None = None,
    name: str | None = None,
) -> Tensor:
    """The modified discrete cosine transform of real signals: frames of
    ``frame_length`` (a multiple of 4) every ``frame_length / 2`` samples, windowed,
    folded and transformed by a type-IV DCT.

    Returns:
        ``[..., frames, frame_length / 2]``.
    """
    with name_scope(name, "mdct", [signals, frame_length]):
        x = convert_inputs([signals])[0]
        length = _static_int(frame_length, "frame_length")
        if length % 4 != 0:
            raise ValueError(f"The frame length must be a multiple of 4, got {length}")
        if norm not in (None, "ortho"):
            raise ValueError(f"norm must be None or 'ortho', got {norm}")
        framed = frame(x, length, length // 2, pad_end=pad_end)
        if window_fn is not None:
            framed = math_ops.multiply(framed, window_fn(length, dtype=framed.dtype))
        else:
            framed = math_ops.multiply(framed, constant(np.sqrt(0.5), framed.dtype))
        a, b, c, d = array_ops.split(framed, 4, axis=-1)
        rev_b = array_ops.reverse(b, [-1])
        rev_c = array_ops.reverse(c, [-1])
        folded = array_ops.concat(
            [math_ops.subtract(math_ops.negative(rev_c), d), math_ops.subtract(a, rev_b)], -1
        )
        return dct(folded, type=4, norm=norm)


def inverse_mdct(
    mdcts: Any,
    window_fn: Callable[..., Any] | None = vorbis_window,
    norm: str | None = None,
    name: str | None = None,
) -> Tensor:
    """Real signals from their ``mdct`` ``[..., frames, half]``: a type-IV DCT, unfolded
    to ``2 * half`` samples per frame, windowed and overlap-added at hop ``half``."""
    with name_scope(name, "inverse_mdct", [mdcts]):
        z = convert_inputs([mdcts])[0]
        if norm not in (None, "ortho"):
            raise ValueError(f"norm must be None or 'ortho', got {norm}")
        half = _static_int(
            z.shape.as_list()[-1] if z.shape.ndims else None, "the last dimension of mdcts"
        )
        if norm is None:
            scale = constant(0.5 / half, z.dtype)
            transformed = math_ops.multiply(dct(z, type=4), scale)
        else:
            transformed = dct(z, type=4, norm="ortho")
        first, second = array_ops.split(transformed, 2, axis=-1)
        frames = array_ops.concat(
            [
                second,
                math_ops.negative(array_ops.reverse(second, [-1])),
                math_ops.negative(array_ops.reverse(first, [-1])),
                math_ops.negative(first),
            ],
            -1,
        )
        if window_fn is not None:
            frames = math_ops.multiply(frames, window_fn(2 * half, dtype=z.dtype))
        else:
            frames = math_ops.multiply(frames, constant(np.sqrt(0.5), z.dtype))
        return overlap_and_add(frames, half)
