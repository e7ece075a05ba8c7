"""TF1 parity for ``tf.signal`` beyond the op table's FFT rows: the composites (DCTs,
framing, windows, STFTs, MDCTs, the mel scale, MFCCs, shifts) in float32 programs with
their gradients, static shapes, ``tf.spectral``'s names, and TF1's errors at build time.
Gradients of the FFT primitives are checked against finite differences here too."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow
from dataflow.testing.tf_parity import assert_parity_on_constants

pytestmark = pytest.mark.tf
tf1 = pytest.importorskip("tensorflow.compat.v1")

rng = np.random.default_rng(7)
SIGNAL = rng.standard_normal((2, 16)).astype(np.float32)


def _with_gradients(build):
    """``build(tf, x)``'s outputs, and the gradient of a weighted sum of them."""

    def program(tf, x):
        outs = build(tf, x)
        outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
        terms = []
        for k, o in enumerate(outs):
            weights = tf.cos(tf.cast(tf.range(tf.size(o)), o.dtype) * (0.3 + 0.1 * k))
            terms.append(tf.reduce_sum(tf.reshape(o, [-1]) * weights))
        grads = [g for g in tf.gradients(tf.add_n(terms), [x]) if g is not None]
        return outs + grads

    return program


CASES = {
    "dct1": lambda tf, x: tf.signal.dct(x, type=1),
    "dct2": lambda tf, x: tf.signal.dct(x),
    "dct2_ortho": lambda tf, x: tf.signal.dct(x, type=2, norm="ortho"),
    "dct3": lambda tf, x: tf.signal.dct(x, type=3),
    "dct3_ortho": lambda tf, x: tf.signal.dct(x, type=3, norm="ortho"),
    "dct4": lambda tf, x: tf.signal.dct(x, type=4),
    "dct4_ortho": lambda tf, x: tf.signal.dct(x, type=4, norm="ortho"),
    "idct_n_crop": lambda tf, x: tf.signal.idct(x, type=2, n=10),
    "idct_n_pad": lambda tf, x: tf.signal.idct(x, type=3, n=20, norm="ortho"),
    "spectral_dct": lambda tf, x: tf.spectral.dct(x),
    "frame": lambda tf, x: tf.signal.frame(x, 5, 3),
    "frame_pad_end": lambda tf, x: tf.signal.frame(x, 5, 3, pad_end=True, pad_value=2.0),
    "frame_axis0": lambda tf, x: tf.signal.frame(tf.transpose(x), 4, 2, axis=0),
    "overlap_and_add": lambda tf, x: tf.signal.overlap_and_add(tf.reshape(x, [2, 4, 4]), 3),
    "stft": lambda tf, x: tf.abs(tf.signal.stft(x, 8, 4)),
    "stft_pad_end": lambda tf, x: tf.math.real(
        tf.signal.stft(x, 7, 3, fft_length=16, pad_end=True)
    ),
    "stft_no_window": lambda tf, x: tf.math.imag(tf.signal.stft(x, 6, 2, window_fn=None)),
    "inverse_stft": lambda tf, x: tf.signal.inverse_stft(
        tf.signal.stft(x, 8, 4), 8, 4, window_fn=tf.signal.inverse_stft_window_fn(4)
    ),
    # TF's gradient of an rfft that crops its frames fails to build: values only.
    "inverse_stft_short_fft": lambda tf, x: tf.signal.inverse_stft(
        tf.stop_gradient(tf.signal.stft(x, 6, 3, fft_length=4)), 6, 3, fft_length=4
    ),
    "mfccs": lambda tf, x: tf.signal.mfccs_from_log_mel_spectrograms(x),
    "mdct": lambda tf, x: tf.signal.mdct(x, 8),
    "inverse_mdct": lambda tf, x: tf.signal.inverse_mdct(tf.signal.mdct(x, 8)),
    "mdct_ortho": lambda tf, x: tf.signal.inverse_mdct(
        tf.signal.mdct(x, 8, norm="ortho", pad_end=True), norm="ortho"
    ),
    "shifts": lambda tf, x: [
        tf.signal.fftshift(x),
        tf.signal.ifftshift(x, axes=1),
        tf.signal.fftshift(x, axes=[0, 1]),
    ],
    "spectral_rfft": lambda tf, x: tf.abs(tf.spectral.rfft(x)),
    "spectral_irfft2d": lambda tf, x: tf.spectral.irfft2d(tf.spectral.rfft2d(x)),
    "fft2d_of_real": lambda tf, x: tf.abs(tf.fft2d(tf.complex(x, x * 0.5))),
    "ifft3d_spectral": lambda tf, x: tf.math.real(
        tf.spectral.ifft3d(tf.complex(tf.reshape(x, [2, 2, 8]), tf.reshape(x[::-1], [2, 2, 8])))
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_as_tf(name):
    assert_parity_on_constants(tf1, _with_gradients(CASES[name]), SIGNAL, rtol=2e-5, atol=2e-5)


def test_windows_as_tf():
    def program(tf):
        return [
            tf.signal.hann_window(10),
            tf.signal.hann_window(7),
            tf.signal.hann_window(8, periodic=False),
            tf.signal.hann_window(1),
            tf.signal.hamming_window(9, dtype=tf.float64),
            tf.signal.hamming_window(6, periodic=False),
            tf.signal.vorbis_window(9),
            tf.signal.kaiser_window(9),
            tf.signal.kaiser_window(1, beta=3.0),
            tf.signal.kaiser_bessel_derived_window(10, beta=3.0),
            tf.signal.inverse_stft_window_fn(3)(8, tf.float32),
        ]

    assert_parity_on_constants(tf1, lambda tf: program(tf), rtol=1e-5, atol=1e-6)


def test_mel_weight_matrix_as_tf():
    def program(tf):
        return [
            tf.signal.linear_to_mel_weight_matrix(),
            tf.signal.linear_to_mel_weight_matrix(10, 33, 16000, 20.0, 7000.0),
            tf.signal.linear_to_mel_weight_matrix(4, 9, 100, 0.0, 50.0, dtype=tf.float64),
        ]

    assert_parity_on_constants(tf1, lambda tf: program(tf), rtol=2e-5, atol=2e-6)


def test_static_shapes_as_tf():
    def shapes(tf):
        graph = tf.Graph()
        with graph.as_default():
            x = tf.placeholder(tf.float32, [3, 100])
            y = tf.placeholder(tf.float32, [None, None])
            c = tf.placeholder(tf.complex64, [4, 6, 10])
            outs = [
                tf.signal.stft(x, 16, 8),
                tf.signal.stft(x, 15, 7, pad_end=True),
                tf.signal.frame(x, 10, 5),
                tf.signal.frame(x, 10, 5, pad_end=True),
                tf.signal.dct(x),
                tf.signal.rfft(x, [64]),
                tf.signal.irfft(c),
                tf.signal.rfft2d(y),
                tf.signal.irfft3d(c, [4, 6, 9]),
                tf.signal.fft3d(c),
                tf.signal.mfccs_from_log_mel_spectrograms(y),
            ]
            return [o.shape.as_list() if o.shape.ndims is not None else None for o in outs]

    assert shapes(dataflow) == shapes(tf1)


@pytest.mark.parametrize(
    "build, error",
    [
        (lambda tf, x: tf.signal.dct(x, type=5), ValueError),
        (lambda tf, x: tf.signal.dct(x, type=1, norm="ortho"), ValueError),
        (lambda tf, x: tf.signal.dct(x, norm="full"), ValueError),
        (lambda tf, x: tf.signal.dct(x, axis=0), NotImplementedError),
        (lambda tf, x: tf.signal.dct(x, n=0), ValueError),
        (lambda tf, x: tf.signal.fft(x), (TypeError, ValueError)),
        (lambda tf, x: tf.signal.rfft(tf.cast(x, tf.int32)), (TypeError, ValueError)),
        (lambda tf, x: tf.signal.hann_window(4, dtype=tf.int32), ValueError),
        (lambda tf, x: tf.signal.linear_to_mel_weight_matrix(0), ValueError),
        (lambda tf, x: tf.signal.linear_to_mel_weight_matrix(upper_edge_hertz=5000.0), ValueError),
        (lambda tf, x: tf.signal.mdct(x, 6), ValueError),
    ],
)
def test_build_time_errors_as_tf(build, error):
    for lib in (dataflow, tf1):
        with lib.Graph().as_default():
            x = lib.placeholder(lib.float32, [2, 16])
            with pytest.raises(error):
                build(lib, x)


@pytest.mark.parametrize(
    "transform, real_input",
    [
        ("fft", False),
        ("ifft2d", False),
        ("fft3d", False),
        ("rfft", True),
        ("irfft", False),
        ("rfft2d", True),
        ("irfft3d", False),
    ],
)
def test_fft_gradients_match_finite_differences(transform, real_input):
    """float64 programs: the gradient of ``sum(w * parts(transform(x)))`` against
    central differences of our own forward pass along every input coordinate."""
    shape = (2, 3, 4)
    a = rng.standard_normal(shape)
    b = rng.standard_normal(shape)
    graph = dataflow.Graph()
    with graph.as_default():
        pa = dataflow.placeholder(dataflow.float64, shape)
        pb = dataflow.placeholder(dataflow.float64, shape)
        fn = getattr(dataflow.signal, transform)
        y = fn(pa) if real_input else fn(dataflow.complex(pa, pb))
        if y.dtype.is_complex:
            y = dataflow.concat([dataflow.math.real(y), dataflow.math.imag(y)], -1)
        weights = dataflow.constant(
            np.cos(np.arange(np.prod(y.shape.as_list()))).reshape(y.shape.as_list())
        )
        loss = dataflow.reduce_sum(y * weights)
        grads = dataflow.gradients(loss, [pa] if real_input else [pa, pb])
        with dataflow.Session(graph=graph) as sess:

            def value(a_, b_):
                return sess.run(loss, {pa: a_, pb: b_})

            got = sess.run(grads, {pa: a, pb: b})
            eps = 1e-6
            for k, base in enumerate([a] if real_input else [a, b]):
                numeric = np.zeros(shape)
                for index in np.ndindex(shape):
                    step = np.zeros(shape)
                    step[index] = eps
                    args_plus = [a, b]
                    args_minus = [a, b]
                    args_plus[k] = base + step
                    args_minus[k] = base - step
                    numeric[index] = (value(*args_plus) - value(*args_minus)) / (2 * eps)
                np.testing.assert_allclose(got[k], numeric, rtol=1e-6, atol=1e-6)
