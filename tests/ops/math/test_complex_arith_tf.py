"""TF1 parity for arithmetic on complex tensors (issue 32): ``+ - * /``, ``Neg Square Exp
Log Sqrt Reciprocal Pow``, the reductions, ``matmul`` with adjoints, ``einsum``,
``tensordot``, ``add_n`` and the comparisons take complex64 and complex128 as TF1's do,
and their gradients of a real loss follow TF's conjugate convention (``Mul``'s is
``grad * conj(y)``). Each program runs with ``import dataflow as tf`` and with
``tensorflow.compat.v1``; values, dtypes, shapes and gradients must agree."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow
from dataflow.testing.tf_parity import assert_parity_on_constants

pytestmark = pytest.mark.tf
tf1 = pytest.importorskip("tensorflow.compat.v1")

rng = np.random.default_rng(32)
# complex64 carries float32 parts: exp, pow and the products of several ops round at
# about 1e-6 relative per op; complex128 at about 1e-15.
TOLERANCES = {np.complex64: (2e-5, 2e-5), np.complex128: (1e-10, 1e-12)}
COMPLEX = [np.complex64, np.complex128]


def _complex(dtype, *shape, shift=0.0):
    return (rng.standard_normal(shape) + shift + 1j * rng.standard_normal(shape)).astype(dtype)


def _parity(dtype, program, *inputs):
    rtol, atol = TOLERANCES[dtype]
    assert_parity_on_constants(tf1, program, *inputs, rtol=rtol, atol=atol)


def _power(tf, z):
    """A real loss of a complex tensor: the sum of its squared magnitudes."""
    return tf.reduce_sum(tf.square(tf.abs(z)))


@pytest.mark.parametrize("dtype", COMPLEX)
def test_binary_ops_broadcast_with_conjugate_gradients(dtype):
    def program(tf, x, y):
        outs = [x + y, x - y, x * y, x / y, tf.pow(x, y), tf.squared_difference(x, y)]
        outs += [tf.truediv(x, y), tf.divide(x, y), tf.div(x, y), tf.realdiv(x, y)]
        grads = []
        for out in outs:
            grads += tf.gradients(_power(tf, out), [x, y])
            grads += tf.gradients(tf.reduce_sum(tf.real(out * 2.0) - tf.imag(out)), [x, y])
        return outs + grads

    _parity(dtype, program, _complex(dtype, 2, 3, shift=2.0), _complex(dtype, 3, shift=2.0))


@pytest.mark.parametrize("dtype", COMPLEX)
def test_unary_ops_and_their_gradients(dtype):
    def program(tf, x):
        outs = [-x, tf.square(x), tf.exp(x), tf.log(x), tf.sqrt(x), tf.reciprocal(x)]
        outs += [tf.rsqrt(x), tf.expm1(x), tf.log1p(x), tf.sin(x), tf.cos(x), tf.tan(x)]
        outs += [tf.tanh(x), tf.sigmoid(x), tf.abs(x), tf.conj(x) * x]
        grads = [tf.gradients(_power(tf, out), [x])[0] for out in outs]
        return outs + grads

    _parity(dtype, program, _complex(dtype, 2, 3, shift=1.0))


@pytest.mark.parametrize("dtype", COMPLEX)
def test_reductions_add_n_and_comparisons(dtype):
    def program(tf, x, y):
        outs = [tf.reduce_sum(x * y, 1), tf.reduce_mean(x, 0), tf.reduce_prod(x, 1)]
        outs += [tf.reduce_sum(x), tf.reduce_mean(x, keepdims=True), tf.reduce_prod(x)]
        outs += [tf.add_n([x, x * y, y + x])]
        grads = []
        for out in outs:
            grads += tf.gradients(_power(tf, out), [x, y])
        grads = [g for g in grads if g is not None]
        flags = [tf.equal(x, x * 1.0), tf.not_equal(x, y), tf.equal(x, tf.conj(x))]
        return outs + grads + flags

    _parity(dtype, program, _complex(dtype, 2, 3), _complex(dtype, 3))


def test_prod_gradient_with_zeros():
    x = _complex(np.complex128, 3, 4)
    x[0, 1] = 0
    x[1, 0] = x[1, 2] = 0

    def program(tf, x):
        out = tf.reduce_prod(x, 1)
        return [out, tf.gradients(_power(tf, out), [x])[0]]

    _parity(np.complex128, program, x)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_matmul_adjoints_einsum_and_tensordot(dtype):
    def program(tf, a, b, c):
        outs = [
            tf.matmul(a, b),
            tf.matmul(a, a, adjoint_a=True),
            tf.matmul(b, a, adjoint_a=True, adjoint_b=True),
            tf.matmul(a, c, transpose_b=True),
            tf.einsum("ij,jk->ik", a, b),
            tf.einsum("ij,ij->i", a, tf.conj(a)),
            tf.tensordot(a, b, 1),
        ]
        grads = []
        for out in outs:
            grads += tf.gradients(_power(tf, out), [a, b, c])
        return outs + [g for g in grads if g is not None]

    _parity(dtype, program, _complex(dtype, 2, 3), _complex(dtype, 3, 2), _complex(dtype, 4, 3))


@pytest.mark.parametrize("real, complex_", [(np.float32, "complex64"), (np.float64, "complex128")])
def test_power_spectrum_gradient_with_respect_to_a_real_signal(real, complex_):
    """``P = real(X conj(X))`` with ``X = fft(x)`` feeding a weighted loss: the gradient
    reaches the real ``x`` through ``Mul``'s and ``Conj``'s conjugate rules."""
    x = rng.standard_normal((2, 16)).astype(real)
    weights = rng.uniform(0.5, 2.0, 16).astype(real)

    def program(tf, x, weights):
        spectrum = tf.signal.fft(tf.cast(x, complex_))
        power = tf.real(spectrum * tf.conj(spectrum))
        loss = tf.reduce_sum(power * weights) + tf.reduce_sum(tf.abs(spectrum / 4.0) ** 2)
        half = tf.signal.rfft(x)
        loss += tf.reduce_mean(tf.real(tf.exp(half * 0.1) * tf.conj(half)))
        return [power, loss, *tf.gradients(loss, [x, weights])]

    rtol, atol = (2e-5, 2e-4) if real is np.float32 else (1e-10, 1e-9)
    assert_parity_on_constants(tf1, program, x, weights, rtol=rtol, atol=atol)


REFUSED = {
    "less": lambda lib, z: lib.less(z, z),
    "maximum": lambda lib, z: lib.maximum(z, z),
    "floor": lambda lib, z: lib.floor(z),
    "is_nan": lambda lib, z: lib.is_nan(z),
    "reduce_max": lambda lib, z: lib.reduce_max(z),
    "mixed_precision": lambda lib, z: z + lib.constant(np.ones(3, np.complex128)),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
@pytest.mark.parametrize("lib", [dataflow, tf1], ids=["dataflow", "tf1"])
def test_the_refusals_stay_as_tf1s(case, lib):
    """Ops TF1 keeps real (orderings, ``maximum``, ``floor``, ``is_nan``) refuse complex at build
    time, and complex64 does not mix with complex128, in both libraries."""
    with lib.Graph().as_default():
        z = lib.constant(_complex(np.complex64, 3))
        with pytest.raises((TypeError, ValueError)):
            REFUSED[case](lib, z)
