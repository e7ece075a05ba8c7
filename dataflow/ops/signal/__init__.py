"""Signal processing (TF1's ``tf.signal`` and ``tf.spectral``): the public names of the
signal family, which lives in the modules below.

================  ================================================================
module            holds
================  ================================================================
``fourier``       the Fourier transforms (``FFT IFFT FFT2D ... IRFFT3D``, real
                  ones with ``fft_length``), their gradients, ``fftshift``
``fourier_nd``    ``FFTND IFFTND RFFTND IRFFTND`` over any axes (``fftnd``... with
                  ``norm``; ``raw_fftnd``... are the top-level ``tf.fftnd``...)
``dct_ops``       ``dct``/``idct`` (types 1 to 4) as composites over ``RFFT``/``FFT``
``framing``       ``frame`` (overlapping windows of a signal, a gather) and
                  ``overlap_and_add`` (its adjoint, a segment sum)
``windows``       ``hann_window``, ``hamming_window``, ``vorbis_window``,
                  ``kaiser_window``, ``kaiser_bessel_derived_window``
``spectrograms``  ``stft``, ``inverse_stft``, ``inverse_stft_window_fn``, ``mdct``,
                  ``inverse_mdct``
``mel``           ``linear_to_mel_weight_matrix``, ``mfccs_from_log_mel_spectrograms``
================  ================================================================

Only ``fourier`` and ``fourier_nd`` register op types; the other modules compose them
with array and math ops, so their gradients come from the pass. This module holds no
code: it re-exports every public builder.
"""

# --- re-exports: the public builders of the family, by defining module ------------------
from .dct_ops import dct as dct
from .dct_ops import idct as idct
from .fourier import fft as fft
from .fourier import fft2d as fft2d
from .fourier import fft3d as fft3d
from .fourier import fftshift as fftshift
from .fourier import ifft as ifft
from .fourier import ifft2d as ifft2d
from .fourier import ifft3d as ifft3d
from .fourier import ifftshift as ifftshift
from .fourier import irfft as irfft
from .fourier import irfft2d as irfft2d
from .fourier import irfft3d as irfft3d
from .fourier import rfft as rfft
from .fourier import rfft2d as rfft2d
from .fourier import rfft3d as rfft3d
from .fourier_nd import fftnd as fftnd
from .fourier_nd import ifftnd as ifftnd
from .fourier_nd import irfftnd as irfftnd
from .fourier_nd import raw_fftnd as raw_fftnd
from .fourier_nd import raw_ifftnd as raw_ifftnd
from .fourier_nd import raw_irfftnd as raw_irfftnd
from .fourier_nd import raw_rfftnd as raw_rfftnd
from .fourier_nd import rfftnd as rfftnd
from .framing import frame as frame
from .framing import overlap_and_add as overlap_and_add
from .mel import linear_to_mel_weight_matrix as linear_to_mel_weight_matrix
from .mel import mfccs_from_log_mel_spectrograms as mfccs_from_log_mel_spectrograms
from .spectrograms import inverse_mdct as inverse_mdct
from .spectrograms import inverse_stft as inverse_stft
from .spectrograms import inverse_stft_window_fn as inverse_stft_window_fn
from .spectrograms import mdct as mdct
from .spectrograms import stft as stft
from .windows import hamming_window as hamming_window
from .windows import hann_window as hann_window
from .windows import kaiser_bessel_derived_window as kaiser_bessel_derived_window
from .windows import kaiser_window as kaiser_window
from .windows import vorbis_window as vorbis_window
