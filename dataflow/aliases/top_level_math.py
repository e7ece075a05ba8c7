"""TF1's top-level aliases of ``tf.signal``, ``tf.math`` and ``tf.linalg`` names
(``tf.fft``, ``tf.complex``, ``tf.svd``, ``tf.igamma``, ``tf.cross``, ...): explicit
re-exports only, which ``dataflow/__init__.py`` takes whole."""
# ruff: noqa: F401, I001 - this module is a public namespace: explicit re-exports only

from ..ops.math.complex_parts import (
    angle as angle,
    complex as complex,
    conj as conj,
    imag as imag,
    real as real,
)
from ..ops.signal import (
    fft as fft,
    fft2d as fft2d,
    fft3d as fft3d,
    ifft as ifft,
    ifft2d as ifft2d,
    ifft3d as ifft3d,
    raw_fftnd as fftnd,
    raw_ifftnd as ifftnd,
    raw_irfftnd as irfftnd,
    raw_rfftnd as rfftnd,
)
from ..ops.math import (
    betainc as betainc,
    igamma as igamma,
    igammac as igammac,
    lbeta as lbeta,
    segment_prod as segment_prod,
    zeta as zeta,
)
from ..ops.linalg import (
    cross as cross,
    matrix_solve_ls as matrix_solve_ls,
    sqrtm as matrix_square_root,
)
from ..ops.linalg.factor import (
    qr as qr,
    self_adjoint_eig as self_adjoint_eig,
    self_adjoint_eigvals as self_adjoint_eigvals,
    svd as svd,
)
