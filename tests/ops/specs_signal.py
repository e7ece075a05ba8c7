"""The Fourier-transform and complex-number rows of the op table
(``tests/ops/op_table.py``).

The table's checks need real inputs and one real output, so a complex tensor enters as
``tf.complex(a, b)`` of two real inputs and leaves as its real and imaginary parts side
by side (``tf.concat([tf.real(y), tf.imag(y)], -1)``); the gradients then cover
``Complex``, ``Real`` and ``Imag`` too. The transforms are linear, so their rows square
the result (``squared``) for the second-order check to run through the gradient ops.
"""

from __future__ import annotations

import autograd.numpy as anp
import numpy as np

from dataflow.testing.op_spec import OpSpec, squared

RNG = np.random.default_rng(4321)


def rand(*shape):
    return RNG.standard_normal(shape)


def parts(tf, y):
    return tf.concat([tf.math.real(y), tf.math.imag(y)], -1)


def ref_parts(y):
    return anp.concatenate([anp.real(y), anp.imag(y)], -1)


def c2c(path, ref):
    def build(tf, a, b):
        fn = getattr(tf.signal, path)
        return parts(tf, fn(tf.complex(a, b)))

    def reference(a, b):
        return ref_parts(ref(a + 1j * b))

    return squared(build, reference)


def r2c(path, ref, fft_length=None, ref_kwargs=None):
    def build(tf, a):
        fn = getattr(tf.signal, path)
        return parts(tf, fn(a, fft_length) if fft_length is not None else fn(a))

    def reference(a):
        return ref_parts(ref(a, **(ref_kwargs or {})))

    return squared(build, reference)


def c2r(path, ref, fft_length=None, ref_kwargs=None):
    def build(tf, a, b):
        fn = getattr(tf.signal, path)
        z = tf.complex(a, b)
        return fn(z, fft_length) if fft_length is not None else fn(z)

    def reference(a, b):
        return ref(a + 1j * b, **(ref_kwargs or {}))

    return squared(build, reference)


# Arithmetic on two complex tensors ([2, 3] and [3]: broadcasting), each row one
# expression of ``+ - * /`` and the complex-capable unary ops, reductions and products,
# so the gradients run through TF's conjugate rules (``Mul``'s ``grad * conj(y)``).
COMPLEX_ARITH = [
    ("add_sub_neg", lambda tf, z, w: -(z + w) * (z - w), lambda z, w: -(z + w) * (z - w)),
    ("mul_div", lambda tf, z, w: z * w / (w + 3.0), lambda z, w: z * w / (w + 3.0)),
    (
        "exp_log_sqrt",
        lambda tf, z, w: tf.exp(z) * tf.log(w + 3.0) + tf.sqrt(z + 3.0),
        lambda z, w: anp.exp(z) * anp.log(w + 3.0) + anp.sqrt(z + 3.0),
    ),
    (
        "square_reciprocal_pow",
        lambda tf, z, w: tf.square(z) + tf.reciprocal(w + 3.0) + tf.pow(z + 3.0, w),
        lambda z, w: z * z + 1.0 / (w + 3.0) + (z + 3.0) ** w,
    ),
    (
        "reduce_sum_mean_prod",
        lambda tf, z, w: tf.reduce_sum(z * w, 1) + tf.reduce_mean(z, 1) * tf.reduce_prod(z, 1),
        lambda z, w: anp.sum(z * w, 1) + anp.mean(z, 1) * anp.prod(z, 1),
    ),
    (
        "matmul_adjoint_a",
        lambda tf, z, w: tf.matmul(z, z, adjoint_a=True) * w,
        lambda z, w: (anp.conj(z).T @ z) * w,
    ),
    (
        "matmul_adjoint_b",
        lambda tf, z, w: tf.matmul(z, tf.reshape(w, [1, 3]), adjoint_b=True),
        lambda z, w: z @ anp.conj(anp.reshape(w, (1, 3))).T,
    ),
    (
        "einsum",
        lambda tf, z, w: tf.einsum("ij,j->i", z * z, w),
        lambda z, w: anp.einsum("ij,j->i", z * z, w),
    ),
]


def complex_build(fn):
    def build(tf, a, b, c, d):
        return parts(tf, fn(tf, tf.complex(a, b), tf.complex(c, d)))

    return build


def complex_reference(ref):
    def reference(a, b, c, d):
        return ref_parts(ref(a + 1j * b, c + 1j * d))

    return reference


# TF's gradient graph of a real transform that crops its input fails to build (shape
# mismatches in its own rule), and TF has no gradient for RFFT3D/IRFFT3D: those rows
# compare values with TF and gradients with autograd and finite differences only.
NO_TF_GRAD = {"tf_gradients": False}


def _row(name, pair, args, **kwargs):
    build, reference = pair
    return OpSpec(name, build, reference, args, rtol=1e-5, atol=1e-8, **kwargs)


def rfft_via_fft(x, n=None):
    """``rfft`` from the full transform (autograd's ``rfft`` refuses odd lengths)."""
    n = x.shape[-1] if n is None else n
    return anp.fft.fft(x, n)[..., : n // 2 + 1]


def irfft_odd(z):
    """``irfft`` to the odd length ``2 * bins - 1`` from the Hermitian full spectrum (the
    zero frequency's imaginary part dropped, as ``irfft`` does)."""
    first = anp.real(z[..., :1]) + 0j
    return anp.real(anp.fft.ifft(anp.concatenate([first, z[..., 1:], anp.conj(z[..., :0:-1])], -1)))


def nd(kind, fn, ref):
    """An ``FFTND`` family row: ``fn(tf, z)`` on a complex (``c2c``, ``c2r``) or real
    (``r2c``) input, compared with the ``autograd.numpy`` transform ``ref``. TF's
    ``FFTND`` ops have no CPU kernel and no gradient: these rows skip TF parity
    (``tests/ops/signal/test_fourier_nd.py`` compares their gradients with TF's
    fixed-rank ops instead)."""
    if kind == "r2c":
        return squared(lambda tf, a: parts(tf, fn(tf, a)), lambda a: ref_parts(ref(a)))
    if kind == "c2c":
        return squared(
            lambda tf, a, b: parts(tf, fn(tf, tf.complex(a, b))),
            lambda a, b: ref_parts(ref(a + 1j * b)),
        )
    return squared(lambda tf, a, b: fn(tf, tf.complex(a, b)), lambda a, b: ref(a + 1j * b))


NO_TF = {"tf_parity": False}


AX2 = {"axes": (-2, -1)}
AX3 = {"axes": (-3, -2, -1)}

ROWS = [
    _row("fft", c2c("fft", anp.fft.fft), [rand(3, 8), rand(3, 8)]),
    _row("ifft", c2c("ifft", anp.fft.ifft), [rand(2, 7), rand(2, 7)]),
    _row("fft2d", c2c("fft2d", anp.fft.fft2), [rand(2, 4, 6), rand(2, 4, 6)]),
    _row("ifft2d", c2c("ifft2d", anp.fft.ifft2), [rand(3, 5), rand(3, 5)]),
    _row(
        "fft3d",
        c2c("fft3d", lambda z: anp.fft.fftn(z, axes=(-3, -2, -1))),
        [rand(2, 3, 4, 2), rand(2, 3, 4, 2)],
    ),
    _row(
        "ifft3d",
        c2c("ifft3d", lambda z: anp.fft.ifftn(z, axes=(-3, -2, -1))),
        [rand(3, 2, 4), rand(3, 2, 4)],
    ),
    _row("rfft", r2c("rfft", anp.fft.rfft), [rand(3, 8)]),
    _row("rfft_odd", r2c("rfft", rfft_via_fft), [rand(2, 7)]),
    _row("rfft_crop", r2c("rfft", rfft_via_fft, [6], {"n": 6}), [rand(2, 9)], **NO_TF_GRAD),
    _row("rfft_pad", r2c("rfft", rfft_via_fft, [11], {"n": 11}), [rand(2, 8)]),
    _row("irfft", c2r("irfft", anp.fft.irfft), [rand(3, 5), rand(3, 5)]),
    _row("irfft_odd", c2r("irfft", irfft_odd, [7]), [rand(2, 4), rand(2, 4)]),
    _row(
        "irfft_crop",
        c2r("irfft", anp.fft.irfft, [6], {"n": 6}),
        [rand(2, 6), rand(2, 6)],
        **NO_TF_GRAD,
    ),
    _row("irfft_pad", c2r("irfft", anp.fft.irfft, [12], {"n": 12}), [rand(2, 5), rand(2, 5)]),
    _row("rfft2d", r2c("rfft2d", lambda x: anp.fft.rfftn(x, axes=(-2, -1))), [rand(2, 4, 6)]),
    _row(
        "rfft2d_length",
        r2c("rfft2d", anp.fft.rfftn, [3, 8], {"s": (3, 8), **AX2}),
        [rand(2, 4, 6)],
        **NO_TF_GRAD,
    ),
    _row(
        "irfft2d",
        c2r("irfft2d", anp.fft.irfftn, [4, 6], {"s": (4, 6), **AX2}),
        [rand(2, 4, 4), rand(2, 4, 4)],
    ),
    _row(
        "rfft3d",
        r2c("rfft3d", anp.fft.rfftn, [2, 3, 4], {"s": (2, 3, 4), **AX3}),
        [rand(2, 3, 5)],
        **NO_TF_GRAD,
    ),
    _row(
        "irfft3d",
        c2r("irfft3d", anp.fft.irfftn, [2, 3, 4], {"s": (2, 3, 4), **AX3}),
        [rand(2, 3, 3), rand(2, 3, 3)],
        **NO_TF_GRAD,
    ),
    _row(
        "fftnd_axes",
        nd(
            "c2c",
            lambda tf, z: tf.signal.fftnd(z, [2, 4], [0, 2]),
            lambda z: anp.fft.fftn(z, axes=(0, 2)),
        ),
        [rand(2, 3, 4), rand(2, 3, 4)],
        **NO_TF,
    ),
    _row(
        "ifftnd_default",
        nd("c2c", lambda tf, z: tf.signal.ifftnd(z), anp.fft.ifftn),
        [rand(3, 4), rand(3, 4)],
        **NO_TF,
    ),
    _row(
        "rfftnd_axes",
        nd(
            "r2c",
            lambda tf, x: tf.signal.rfftnd(x, [6, 2], [1, 0]),
            lambda x: anp.fft.rfftn(x, axes=(1, 0)),
        ),
        [rand(2, 6, 3)],
        **NO_TF,
    ),
    _row(
        "irfftnd_axes",
        nd(
            "c2r",
            lambda tf, z: tf.signal.irfftnd(z, [4, 4], [0, 2]),
            lambda z: anp.fft.irfftn(z, s=(4, 4), axes=(0, 2)),
        ),
        [rand(4, 4, 3), rand(4, 4, 3)],
        **NO_TF,
    ),
    OpSpec(
        "conj_parts",
        lambda tf, a, b: parts(tf, tf.math.conj(tf.complex(a, b))),
        lambda a, b: ref_parts(anp.conj(a + 1j * b)),
        [rand(3, 4), rand(3, 4)],
        grad=1,
    ),
    OpSpec(
        "angle",
        lambda tf, a, b: tf.math.angle(tf.complex(a, b)),
        lambda a, b: anp.angle(a + 1j * b),
        [rand(3, 4), rand(3, 4)],
        rtol=1e-5,
    ),
    OpSpec(
        "complex_abs",
        lambda tf, a, b: tf.abs(tf.complex(a, b)),
        lambda a, b: anp.abs(a + 1j * b),
        [rand(3, 4), rand(3, 4)],
        rtol=1e-5,
    ),
    *[
        OpSpec(
            f"complex_{name}",
            complex_build(fn),
            complex_reference(ref),
            [rand(2, 3), rand(2, 3), rand(3), rand(3)],
            rtol=1e-5,
        )
        for name, fn, ref in COMPLEX_ARITH
    ],
]
