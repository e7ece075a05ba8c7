"""``tf.spectral``: TF1's older name for the transforms of ``tf.signal``
(``ops/signal/``)."""
# ruff: noqa: I001 - this module is a public namespace: explicit re-exports only

from .._util.missing_names import missing_name_hook
from ..ops.signal import (
    dct as dct,
    fft as fft,
    fft2d as fft2d,
    fft3d as fft3d,
    idct as idct,
    ifft as ifft,
    ifft2d as ifft2d,
    ifft3d as ifft3d,
    irfft as irfft,
    irfft2d as irfft2d,
    irfft3d as irfft3d,
    rfft as rfft,
    rfft2d as rfft2d,
    rfft3d as rfft3d,
)

__getattr__ = missing_name_hook("spectral", __name__)

del missing_name_hook  # not a TF1 name: keep it out of the namespace
