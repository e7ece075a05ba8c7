"""``tf.signal``: Fourier and cosine transforms, framing, windows, spectrograms and the
mel scale (``ops/signal/``)."""
# ruff: noqa: I001 - this module is a public namespace: explicit re-exports only

from .._util.missing_names import missing_name_hook
from ..ops.signal import (
    dct as dct,
    fft as fft,
    fft2d as fft2d,
    fft3d as fft3d,
    fftnd as fftnd,
    fftshift as fftshift,
    frame as frame,
    hamming_window as hamming_window,
    hann_window as hann_window,
    idct as idct,
    ifft as ifft,
    ifft2d as ifft2d,
    ifft3d as ifft3d,
    ifftnd as ifftnd,
    ifftshift as ifftshift,
    inverse_mdct as inverse_mdct,
    inverse_stft as inverse_stft,
    inverse_stft_window_fn as inverse_stft_window_fn,
    irfft as irfft,
    irfft2d as irfft2d,
    irfft3d as irfft3d,
    irfftnd as irfftnd,
    kaiser_bessel_derived_window as kaiser_bessel_derived_window,
    kaiser_window as kaiser_window,
    linear_to_mel_weight_matrix as linear_to_mel_weight_matrix,
    mdct as mdct,
    mfccs_from_log_mel_spectrograms as mfccs_from_log_mel_spectrograms,
    overlap_and_add as overlap_and_add,
    rfft as rfft,
    rfft2d as rfft2d,
    rfft3d as rfft3d,
    rfftnd as rfftnd,
    stft as stft,
    vorbis_window as vorbis_window,
)

__getattr__ = missing_name_hook("signal", __name__)

del missing_name_hook  # not a TF1 name: keep it out of the namespace
