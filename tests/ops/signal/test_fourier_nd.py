"""``tf.signal.fftnd``, ``ifftnd``, ``rfftnd``, ``irfftnd`` and the top-level raw ops.

TF's ``FFTND`` family has no CPU kernel and no gradient in the reference build, so
values are checked against ``numpy.fft`` (after TF's wrapper step: the input's
innermost ``len(axes)`` dimensions zero-padded up to ``fft_length``), static shapes
against TF's graph where TF's shape is the kernel's, and gradients against TF's own
``FFT2D``/``IFFT3D``/``RFFT2D``/``IRFFT2D`` gradients for the same transforms and, for
axes TF's fixed-rank ops cannot name, against the exact gradient of the linear map
computed with numpy on basis vectors."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow as tf

pytestmark = pytest.mark.tf
tf1 = pytest.importorskip("tensorflow.compat.v1")

rng = np.random.default_rng(11)
Z = (rng.standard_normal((2, 3, 4)) + 1j * rng.standard_normal((2, 3, 4))).astype(np.complex64)
X = rng.standard_normal((2, 3, 4)).astype(np.float32)
Z64 = Z.astype(np.complex128)
X64 = X.astype(np.float64)


def _pad_inner(a, lengths, half_last=False):
    want = list(lengths)
    if half_last:
        want[-1] = want[-1] // 2 + 1
    inner = a.shape[a.ndim - len(want) :]
    grow = [max(w - h, 0) for w, h in zip(want, inner)]
    return np.pad(a, [(0, 0)] * (a.ndim - len(want)) + [(0, g) for g in grow])


# name: (builder over module ``t``, numpy reference)
VALUES = {
    "fftnd_default": (lambda t: t.signal.fftnd(Z), np.fft.fftn(Z)),
    "fftnd_pad_crop": (
        lambda t: t.signal.fftnd(Z, [2, 6], [1, 2]),
        np.fft.fftn(Z, [2, 6], [1, 2]),
    ),
    "fftnd_leading_axes_crop": (
        lambda t: t.signal.fftnd(Z, [1, 2], [0, 1]),
        np.fft.fftn(Z, [1, 2], [0, 1]),
    ),
    "fftnd_leading_axes_tf_padding": (
        lambda t: t.signal.fftnd(Z, [5, 6], [0, 1]),
        np.fft.fftn(_pad_inner(Z, [5, 6]), [5, 6], [0, 1]),
    ),
    "fftnd_forward": (
        lambda t: t.signal.fftnd(Z, [3, 4], [-2, -1], norm="forward"),
        np.fft.fftn(Z, [3, 4], [1, 2], norm="forward"),
    ),
    "ifftnd_ortho_128": (
        lambda t: t.signal.ifftnd(Z64, [3, 4], [1, 2], norm="ortho"),
        np.fft.ifftn(Z64, [3, 4], [1, 2], norm="ortho"),
    ),
    "ifftnd_forward": (
        lambda t: t.signal.ifftnd(Z, [2, 4], [0, 2], norm="forward"),
        np.fft.ifftn(Z, [2, 4], [0, 2], norm="forward"),
    ),
    "rfftnd_default": (lambda t: t.signal.rfftnd(X), np.fft.rfftn(X)),
    "rfftnd_axes_0_2": (
        lambda t: t.signal.rfftnd(X, [3, 6], [0, 2]),
        np.fft.rfftn(_pad_inner(X, [3, 6]), [3, 6], [0, 2]),
    ),
    "rfftnd_ortho_64": (
        lambda t: t.signal.rfftnd(X64, [3, 5], [1, 2], norm="ortho"),
        np.fft.rfftn(_pad_inner(X64, [3, 5]), [3, 5], [1, 2], norm="ortho"),
    ),
    "irfftnd_default": (lambda t: t.signal.irfftnd(Z), np.fft.irfftn(Z)),
    "irfftnd_odd": (
        lambda t: t.signal.irfftnd(Z, [3, 5], [1, 2], norm="forward"),
        np.fft.irfftn(Z, [3, 5], [1, 2], norm="forward"),
    ),
    "irfftnd_leading": (
        lambda t: t.signal.irfftnd(Z64, [2, 6], [0, 1]),
        np.fft.irfftn(_pad_inner(Z64, [2, 6], half_last=True), [2, 6], [0, 1]),
    ),
    "fftnd_unknown_dims": (
        lambda t: t.signal.fftnd(
            t.placeholder_with_default(Z, [None, 3, None]), fft_length=[3, 5], axes=[1, 2]
        ),
        np.fft.fftn(Z, [3, 5], [1, 2]),
    ),
    "irfftnd_unknown_dims": (
        lambda t: t.signal.irfftnd(t.placeholder_with_default(Z, [None, 3, None])),
        np.fft.irfftn(Z),
    ),
    "raw_fftnd": (lambda t: t.fftnd(Z, [3, 5], [1, 2]), np.fft.fftn(Z, [3, 5], [1, 2])),
    "raw_ifftnd": (lambda t: t.ifftnd(Z, [2, 3], [0, 1]), np.fft.ifftn(Z, [2, 3], [0, 1])),
    "raw_rfftnd": (
        lambda t: t.rfftnd(X64, [3, 4], [1, 2], Tcomplex=t.complex128),
        np.fft.rfftn(X64, [3, 4], [1, 2]),
    ),
    "raw_irfftnd": (lambda t: t.irfftnd(Z, [3, 4], [1, 2]), np.fft.irfftn(Z, [3, 4], [1, 2])),
}


@pytest.fixture(scope="module")
def values():
    with tf.Graph().as_default():
        outs = {k: build(tf) for k, (build, _) in VALUES.items()}
        shapes = {k: o.shape.as_list() for k, o in outs.items()}
        dtypes = {k: o.dtype.as_numpy_dtype for k, o in outs.items()}
        with tf.Session() as sess:
            got = sess.run(outs)
    return got, shapes, dtypes


@pytest.mark.parametrize("case", sorted(VALUES))
def test_values_against_numpy(values, case):
    got, shapes, dtypes = values
    want = VALUES[case][1]
    single = got[case].dtype in (np.float32, np.complex64)
    tol = 1e-5 * max(1.0, float(np.abs(want).max())) if single else 1e-11
    assert got[case].dtype == dtypes[case]
    assert list(got[case].shape) == list(want.shape)
    assert all(s in (None, w) for s, w in zip(shapes[case], want.shape, strict=True))
    np.testing.assert_allclose(got[case], want, rtol=0, atol=tol * 10)


# Cases where TF's static shape is the kernel's output shape: ours must equal it (TF
# gives RFFTND/IRFFTND, and a crop, the padded input's shape; ours is the kernel's).
SHAPES = {
    "default": lambda t: t.signal.fftnd(Z),
    "pad": lambda t: t.signal.fftnd(Z, [5, 6], [1, 2]),
    "ortho": lambda t: t.signal.fftnd(Z, [3, 4], norm="ortho", axes=[1, 2]),
    "complex128": lambda t: t.signal.ifftnd(Z64, [3, 4], [1, 2]),
}


@pytest.mark.parametrize("case", sorted(SHAPES))
def test_static_shapes_and_dtypes_match_tf(case):
    with tf1.Graph().as_default():
        want = SHAPES[case](tf1)
    with tf.Graph().as_default():
        got = SHAPES[case](tf)
    assert got.shape.as_list() == want.shape.as_list()
    assert got.dtype.name == want.dtype.name


def _loss(t, y):
    """A real loss mixing every output entry (real and imaginary parts)."""
    flat = t.reshape(y, [-1])
    weights = t.cos(t.cast(t.range(t.size(flat)), t.float64) * 0.37)
    if y.dtype.is_complex:
        re = t.math.real(flat)
        return t.reduce_sum(re * t.cast(weights, re.dtype)) + t.reduce_sum(
            t.math.imag(flat) * t.cast(weights[::-1], re.dtype)
        )
    return t.reduce_sum(flat * t.cast(weights, flat.dtype))


# name: (input, ours, TF's equivalent fixed-rank transform). TF's gradient of an inverse
# real transform that crops fails to build, so none does here.
GRADS = {
    "fftnd_vs_fft2d": (
        Z,
        lambda x: tf.signal.fftnd(x, axes=[1, 2], fft_length=[3, 4]),
        lambda x: tf1.fft2d(x),
    ),
    "ifftnd_vs_ifft3d": (Z64, lambda x: tf.signal.ifftnd(x), lambda x: tf1.ifft3d(x)),
    "rfftnd_vs_rfft2d_pad": (
        X64,
        lambda x: tf.signal.rfftnd(x, [4, 6], [1, 2]),
        lambda x: tf1.signal.rfft2d(x, [4, 6]),
    ),
    "rfftnd_vs_rfft2d_odd": (
        X,
        lambda x: tf.signal.rfftnd(x, [3, 5], [-2, -1]),
        lambda x: tf1.signal.rfft2d(x, [3, 5]),
    ),
    "irfftnd_vs_irfft2d": (
        Z64,
        lambda x: tf.signal.irfftnd(x, [3, 6], [1, 2]),
        lambda x: tf1.signal.irfft2d(x, [3, 6]),
    ),
    "irfftnd_vs_irfft2d_odd": (
        Z,
        lambda x: tf.signal.irfftnd(x, [3, 7], [1, 2]),
        lambda x: tf1.signal.irfft2d(x, [3, 7]),
    ),
}


def _run_grads(t, cases, pick):
    with t.Graph().as_default():
        fetches = {}
        for name, case in cases.items():
            x = t.constant(case[0])
            fetches[name] = t.gradients(_loss(t, pick(case)(x)), x)[0]
        with t.Session() as sess:
            return sess.run(fetches)


@pytest.fixture(scope="module")
def grads():
    ours = _run_grads(tf, GRADS, lambda c: c[1])
    theirs = _run_grads(tf1, GRADS, lambda c: c[2])
    return ours, theirs


@pytest.mark.parametrize("case", sorted(GRADS))
def test_gradients_match_tf_fixed_rank_ops(grads, case):
    ours, theirs = grads
    single = GRADS[case][0].dtype in (np.float32, np.complex64)
    scale = max(1.0, float(np.abs(theirs[case]).max()))
    assert ours[case].dtype == theirs[case].dtype
    np.testing.assert_allclose(ours[case], theirs[case], atol=(1e-5 if single else 1e-11) * scale)


def _numpy_loss(y):
    flat = y.reshape(-1)
    w = np.cos(np.arange(flat.size) * 0.37)
    return np.sum(flat.real * w) + (np.sum(flat.imag * w[::-1]) if np.iscomplexobj(y) else 0)


def _exact_gradient(f, x):
    """The gradient of the linear loss ``_numpy_loss(f(x))`` in TF's convention
    (``dL/dRe + i dL/dIm``): the loss at each basis vector."""
    basis = np.eye(x.size).reshape((x.size,) + x.shape)
    d_re = np.array([_numpy_loss(f(e)) for e in basis]).reshape(x.shape)
    if not np.iscomplexobj(x):
        return d_re
    d_im = np.array([_numpy_loss(f(1j * e)) for e in basis]).reshape(x.shape)
    return d_re + 1j * d_im


# Axes no fixed-rank TF op covers: (input, ours, numpy map)
AXES = {
    "fftnd_0_2_crop_pad": (
        Z64,
        lambda t, x: t.signal.fftnd(x, [1, 6], [0, 2]),
        lambda x: np.fft.fftn(_pad_inner(x, [1, 6]), [1, 6], [0, 2]),
    ),
    "ifftnd_2_0": (
        Z64,
        lambda t, x: t.signal.ifftnd(x, [4, 2], [2, 0]),
        lambda x: np.fft.ifftn(_pad_inner(x, [4, 2]), [4, 2], [2, 0]),
    ),
    "rfftnd_1_0": (
        X64,
        lambda t, x: t.signal.rfftnd(x, [2, 3], [1, 0]),
        lambda x: np.fft.rfftn(x, [2, 3], [1, 0]),
    ),
    "irfftnd_2_0": (
        Z64,
        lambda t, x: t.signal.irfftnd(x, [4, 3], [2, 0]),
        lambda x: np.fft.irfftn(_pad_inner(x, [4, 3], True), [4, 3], [2, 0]),
    ),
}


@pytest.fixture(scope="module")
def axes_grads():
    with tf.Graph().as_default():
        fetches = {}
        for name, (x0, build, _) in AXES.items():
            x = tf.constant(x0)
            fetches[name] = tf.gradients(_loss(tf, build(tf, x)), x)[0]
        with tf.Session() as sess:
            return sess.run(fetches)


@pytest.mark.parametrize("case", sorted(AXES))
def test_gradients_on_any_axes_match_the_exact_linear_gradient(axes_grads, case):
    x0, _, f = AXES[case]
    np.testing.assert_allclose(axes_grads[case], _exact_gradient(f, x0), atol=1e-10)


def test_second_derivative_of_a_squared_magnitude():
    """d/dx of sum(x * grad) where grad is the gradient of sum(|rfftnd(x)|^2) (Parseval:
    the Hessian is linear in x), against finite differences of the first gradient."""
    x0 = X64[:, :2, :3]
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, x0.shape)
        y = tf.signal.rfftnd(x, [2, 4], [0, 2])
        energy = tf.reduce_sum(tf.square(tf.abs(y)))
        (g,) = tf.gradients(energy, x)
        direction = np.cos(np.arange(x0.size)).reshape(x0.shape)
        (h,) = tf.gradients(tf.reduce_sum(g * direction), x)
        with tf.Session() as sess:
            got = sess.run(h, {x: x0})
            eps = 1e-4
            plus = sess.run(g, {x: x0 + eps * direction})
            minus = sess.run(g, {x: x0 - eps * direction})
    # The Hessian is symmetric, so H @ direction is the directional derivative of g.
    np.testing.assert_allclose(got, (plus - minus) / (2 * eps), atol=1e-6)


def test_build_time_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="one length"):
            tf.signal.fftnd(Z, [3, 4, 5], [1, 2])
        with pytest.raises(ValueError, match="out of range"):
            tf.signal.fftnd(Z, [3, 4], [1, 5])
        with pytest.raises(ValueError, match="rank at least"):
            tf.signal.fftnd(Z, [2, 3, 4, 1], [0, 1, 2, 2])
        with pytest.raises(ValueError):
            tf.signal.rfftnd(Z)
        with pytest.raises(ValueError):
            tf.signal.irfftnd(tf.constant(X))
        with pytest.raises(ValueError, match="rank"):
            tf.signal.fftnd(tf.placeholder(tf.complex64, None))
        with pytest.raises(TypeError):
            tf.rfftnd(X, [3, 4], [1, 2], Tcomplex=tf.complex128)
    # TF raises the same class for a rank below len(axes); for a complex numpy value it
    # casts to float32 with a ComplexWarning, which dataflow refuses instead.
    with tf1.Graph().as_default():
        with pytest.raises(ValueError):
            tf1.signal.fftnd(Z, [2, 3, 4, 1], [0, 1, 2, 2])
