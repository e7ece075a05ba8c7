"""TF1 parity for issue 32's linalg names beyond the op table's rows: complex inputs
(values, dtypes, sign-free functions of the factors), static shapes with unknown
dimensions, the LU family's gradient against finite differences (TF has none), the
tridiagonal formats and selections, and TF1's errors at build time."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow
from dataflow.testing.tf_parity import assert_parity_on_constants

pytestmark = pytest.mark.tf
tf1 = pytest.importorskip("tensorflow.compat.v1")

rng = np.random.default_rng(5)


def _complex(*shape):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex128)


def test_complex_factorizations_as_tf():
    a = _complex(2, 4, 3)
    h = _complex(3, 3)
    h = h @ h.conj().T + 3 * np.eye(3)

    def program(tf, a, h, h_small):
        s, u, v = tf.linalg.svd(a)
        q, r = tf.linalg.qr(a)
        e, w = tf.linalg.eigh(h)
        sign, logdet = tf.linalg.slogdet(h)
        return [
            s,
            tf.abs(u),
            tf.abs(v),
            tf.matmul(tf.matmul(u, tf.linalg.diag(tf.cast(s, u.dtype))), v, adjoint_b=True),
            tf.abs(q),
            tf.abs(r),
            e,
            tf.abs(w),
            sign,
            logdet,
            tf.linalg.expm(h_small),
            tf.linalg.lu_reconstruct(*tf.linalg.lu(h)),
            tf.linalg.eigvalsh(h),
            tf.norm(a, axis=[-2, -1]),
        ]

    assert_parity_on_constants(tf1, program, a, h, h * 0.1, rtol=1e-9, atol=1e-9)


def test_static_shapes_as_tf():
    def shapes(tf):
        with tf.Graph().as_default():
            x = tf.placeholder(tf.float32, [None, 5, 3])
            y = tf.placeholder(tf.float32, [2, None, None])
            sq = tf.placeholder(tf.float64, [4, 4])
            outs = [
                *tf.linalg.svd(x),
                *tf.linalg.svd(x, full_matrices=True),
                tf.linalg.svd(y, compute_uv=False),
                *tf.linalg.qr(x),
                *tf.linalg.qr(x, full_matrices=True),
                *tf.linalg.eigh(sq),
                *tf.linalg.slogdet(sq),
                *tf.linalg.lu(sq),
                tf.linalg.expm(sq),
                tf.linalg.pinv(x),
                tf.linalg.matrix_rank(x),
                tf.linalg.cross(x, x),
            ]
            return [o.shape.as_list() if o.shape.ndims is not None else None for o in outs]

    assert shapes(dataflow) == shapes(tf1)


def test_lu_gradient_matches_finite_differences():
    a = rng.standard_normal((2, 4, 4))
    w = rng.standard_normal((2, 4, 4))
    graph = dataflow.Graph()
    with graph.as_default():
        p = dataflow.placeholder(dataflow.float64, a.shape)
        lu, _ = dataflow.linalg.lu(p)
        loss = dataflow.reduce_sum(lu * w)
        grad = dataflow.gradients(loss, p)[0]
        with dataflow.Session(graph=graph) as sess:
            got = sess.run(grad, {p: a})
            eps = 1e-6
            numeric = np.zeros_like(a)
            for index in np.ndindex(a.shape):
                step = np.zeros_like(a)
                step[index] = eps
                plus = sess.run(loss, {p: a + step})
                minus = sess.run(loss, {p: a - step})
                numeric[index] = (plus - minus) / (2 * eps)
    np.testing.assert_allclose(got, numeric, rtol=1e-6, atol=1e-7)


def test_tridiagonal_formats_and_selections_as_tf():
    d = rng.standard_normal((3, 5)) + np.array([[0.0], [6.0], [0.0]])
    b = rng.standard_normal((5, 2))
    alpha, beta = rng.standard_normal(5) * 3, rng.uniform(0.5, 1.0, 4)

    def program(tf, d, b, alpha, beta):
        dense = tf.linalg.diag(d[1]) + tf.pad(tf.linalg.diag(d[0][:-1]), [[0, 1], [1, 0]])
        dense += tf.pad(tf.linalg.diag(d[2][1:]), [[1, 0], [0, 1]])
        return [
            tf.linalg.tridiagonal_solve(d, b),
            tf.linalg.tridiagonal_solve([d[0], d[1], d[2]], b, diagonals_format="sequence"),
            tf.linalg.tridiagonal_solve(dense, b, diagonals_format="matrix"),
            tf.linalg.tridiagonal_solve(d, tf.transpose(b), transpose_rhs=True),
            tf.linalg.tridiagonal_matmul(dense, b, diagonals_format="matrix"),
            tf.linalg.eigh_tridiagonal(alpha, beta),
            tf.linalg.eigh_tridiagonal(alpha, beta, select="i", select_range=[1, 3]),
            tf.linalg.eigh_tridiagonal(alpha, beta, select="v", select_range=[-1.0, 2.0]),
            tf.abs(tf.linalg.eigh_tridiagonal(alpha, beta, eigvals_only=False)[1]),
        ]

    assert_parity_on_constants(tf1, program, d, b, alpha, beta, rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize(
    "build, error",
    [
        (lambda tf: tf.linalg.svd(tf.zeros([3])), ValueError),
        (lambda tf: tf.linalg.svd(tf.zeros([3, 3], tf.int32)), TypeError),
        (lambda tf: tf.linalg.qr(tf.zeros([3])), ValueError),
        (lambda tf: tf.linalg.eigh(tf.zeros([3, 4])), ValueError),
        (lambda tf: tf.linalg.slogdet(tf.zeros([2, 3])), ValueError),
        (lambda tf: tf.linalg.expm(tf.zeros([2, 3])), ValueError),
        (lambda tf: tf.linalg.lu(tf.zeros([2, 3])), ValueError),
        (lambda tf: tf.linalg.cross(tf.zeros([2, 4]), tf.zeros([2, 4])), ValueError),
    ],
)
def test_build_time_errors_as_tf(build, error):
    for lib in (dataflow, tf1):
        with lib.Graph().as_default():
            with pytest.raises(error):
                build(lib)


def test_gradients_tf_refuses_are_refused():
    # No full-matrices SVD gradient when |m - n| > 1, as TF.
    for lib in (dataflow, tf1):
        with lib.Graph().as_default():
            x = lib.placeholder(lib.float64, [2, 5])
            with pytest.raises((NotImplementedError, ValueError)):
                lib.gradients(lib.linalg.svd(x, full_matrices=True)[1], x)
