"""The matrix-factorization rows of the op table (``tests/ops/op_table.py``): ``svd``,
``qr``, ``eigh``/``eigvalsh``, ``slogdet`` and the composites over them (``pinv``,
``lstsq``, ...).

Singular and eigen vectors are defined up to sign (up to a phase), and libraries pick
different signs, so rows fetch sign-free functions of them: squared entries, or
products such as ``U diag(s) V^T``. Inputs have well separated singular values and
eigenvalues, where the gradients are smooth.
"""

from __future__ import annotations

import autograd.numpy as anp
import numpy as np

from dataflow.testing.op_spec import OpSpec

RNG = np.random.default_rng(99)


def rand(*shape):
    return RNG.standard_normal(shape)


def separated(m, n, batch=()):
    """``[*batch, m, n]`` matrices with singular values 1, 2, ..., min(m, n) (times 1.5)."""
    p = min(m, n)
    out = []
    for _ in range(int(np.prod(batch))):
        u, _ = np.linalg.qr(RNG.standard_normal((m, p)))
        v, _ = np.linalg.qr(RNG.standard_normal((n, p)))
        out.append(u @ np.diag(1.5 * np.arange(1, p + 1)) @ v.T)
    return np.reshape(out, (*batch, m, n))


def sym_separated(n, batch=()):
    """Symmetric ``[*batch, n, n]`` matrices with eigenvalues -n/2 .. n/2, spaced by 1."""
    out = []
    for _ in range(int(np.prod(batch))):
        q, _ = np.linalg.qr(RNG.standard_normal((n, n)))
        out.append(q @ np.diag(np.arange(n) - n / 2 + 0.25) @ q.T)
    return np.reshape(out, (*batch, n, n))


def sym(x):
    return 0.5 * (x + anp.swapaxes(x, -1, -2))


def tf_sym(tf, x):
    return 0.5 * (x + tf.linalg.matrix_transpose(x))


def flat(tf, *tensors):
    return tf.concat([tf.reshape(t, [-1]) for t in tensors], 0)


def ref_flat(*arrays):
    return anp.concatenate([anp.reshape(a, (-1,)) for a in arrays])


def svd_build(full=False):
    def build(tf, a):
        s, u, v = tf.linalg.svd(a, full_matrices=full)
        return flat(tf, s, u * u, v * v)

    return build


def svd_ref(full=False):
    def reference(a):
        u, s, vh = anp.linalg.svd(a, full_matrices=full)
        return ref_flat(s, u * u, anp.swapaxes(vh, -1, -2) ** 2)

    return reference


def qr_build(tf, a):
    q, r = tf.linalg.qr(a)
    return flat(tf, q * q, r * r)


def qr_ref(a):
    # autograd has no QR rule: for full column rank, R = chol(A^T A)^T and Q = A R^-1,
    # the QR with a positive diagonal; squares are free of LAPACK's sign choices.
    r = anp.swapaxes(anp.linalg.cholesky(anp.swapaxes(a, -1, -2) @ a), -1, -2)
    q = anp.swapaxes(anp.linalg.solve(anp.swapaxes(r, -1, -2), anp.swapaxes(a, -1, -2)), -1, -2)
    return ref_flat(q * q, r * r)


def eigh_build(tf, a):
    e, v = tf.linalg.eigh(tf_sym(tf, a))
    return flat(tf, e, v * v)


def eigh_ref(a):
    e, v = anp.linalg.eigh(sym(a))
    return ref_flat(e, v * v)


ROWS = [
    OpSpec("svd_wide", svd_build(), svd_ref(), [separated(3, 5)], rtol=1e-5),
    OpSpec("svd_tall_batch", svd_build(), svd_ref(), [separated(5, 3, (2,))], rtol=1e-5),
    OpSpec("svd_square", svd_build(), svd_ref(), [separated(4, 4)], rtol=1e-5),
    # Square: the full and reduced factors coincide (autograd has only the reduced rule).
    OpSpec("svd_full_square", svd_build(True), svd_ref(), [separated(3, 3, (2,))], rtol=1e-5),
    OpSpec(
        "svd_values",
        lambda tf, a: tf.linalg.svd(a, compute_uv=False),
        lambda a: anp.linalg.svd(a, compute_uv=False),
        [separated(4, 3, (2,))],
        rtol=1e-5,
    ),
    OpSpec(
        "svd_reconstruct",
        lambda tf, a: (lambda s, u, v: tf.matmul(u * s[..., None, :], v, adjoint_b=True))(
            *tf.svd(a)
        ),
        lambda a: a,
        [separated(3, 4)],
        rtol=1e-5,
    ),
    OpSpec("qr_tall", qr_build, qr_ref, [rand(5, 3)], rtol=1e-5),
    OpSpec("qr_square_batch", qr_build, qr_ref, [rand(2, 4, 4) + 4 * np.eye(4)], rtol=1e-5),
    OpSpec(
        "qr_full",
        lambda tf, a: flat(tf, *(t * t for t in tf.qr(a, full_matrices=True))),
        lambda a: ref_flat(*(t * t for t in anp.linalg.qr(a, mode="complete"))),
        [rand(3, 3)],
        grad=0,
    ),
    OpSpec("eigh", eigh_build, eigh_ref, [sym_separated(4, (2,))], rtol=1e-5),
    OpSpec(
        "eigvalsh",
        lambda tf, a: tf.linalg.eigvalsh(tf_sym(tf, a)),
        lambda a: anp.linalg.eigh(sym(a))[0],
        [sym_separated(5)],
        rtol=1e-5,
    ),
    OpSpec(
        "self_adjoint_eigvals",
        lambda tf, a: tf.self_adjoint_eigvals(tf_sym(tf, a)),
        lambda a: anp.linalg.eigh(sym(a))[0],
        [sym_separated(3, (2,))],
        rtol=1e-5,
    ),
    OpSpec(
        "slogdet",
        lambda tf, a: tf.linalg.slogdet(a)[1],
        lambda a: anp.linalg.slogdet(a)[1],
        [rand(2, 4, 4) + 4 * np.eye(4)],
    ),
    OpSpec(
        "slogdet_sign",
        lambda tf, a: tf.linalg.slogdet(a)[0],
        lambda a: np.linalg.slogdet(a)[0],
        [rand(3, 3, 3)],
        grad=0,
    ),
]


def expm_series(a, terms=30):
    """``sum_k a^k / k!``: exact to rounding for the small norms the rows use."""
    term = anp.zeros_like(a) + anp.eye(a.shape[-1])
    total = term
    for k in range(1, terms):
        term = term @ a / k
        total = total + term
    return total


def squared_six_times(r):
    for _ in range(6):
        r = r @ r
    return r


def lu_factor_packed(a):
    import scipy.linalg as sla

    out = []
    for m in np.reshape(a, (-1, *a.shape[-2:])):
        lu, piv = sla.lu_factor(m)
        perm = np.arange(m.shape[0])
        for i, j in enumerate(piv):
            perm[[i, j]] = perm[[j, i]]
        out.append(lu)
    return np.reshape(out, a.shape)


def separated_tridiagonal(n):
    return RNG.standard_normal(n) * 3, RNG.uniform(0.5, 1.0, n - 1)


# TF has no gradient for Lu (nor for lstsq with fast=False): those rows compare values
# with TF and gradients with autograd and finite differences only.
NO_TF_GRAD = {"tf_gradients": False}

ROWS += [
    OpSpec("expm", lambda tf, a: tf.linalg.expm(a), expm_series, [rand(2, 3, 3) * 0.4], rtol=1e-6),
    OpSpec(
        "expm_scaled",
        lambda tf, a: tf.linalg.expm(a * 4.0),
        lambda a: squared_six_times(expm_series(a * 4.0 / 64)),
        [rand(3, 3) * 0.6],
        rtol=1e-6,
        grad=1,
    ),
    OpSpec("lu", lambda tf, a: tf.linalg.lu(a)[0], lu_factor_packed, [rand(2, 4, 4)], grad=0),
    OpSpec(
        "lu_reconstruct",
        lambda tf, a: tf.linalg.lu_reconstruct(*tf.linalg.lu(a)),
        lambda a: a,
        [rand(2, 4, 4)],
        **NO_TF_GRAD,
    ),
    OpSpec(
        "lu_solve",
        lambda tf, a, b: tf.linalg.lu_solve(*tf.linalg.lu(a), b),
        anp.linalg.solve,
        [rand(4, 4) + 3 * np.eye(4), rand(4, 2)],
        **NO_TF_GRAD,
    ),
    OpSpec(
        "lu_matrix_inverse",
        lambda tf, a: tf.linalg.lu_matrix_inverse(*tf.linalg.lu(a)),
        anp.linalg.inv,
        [rand(2, 3, 3) + 3 * np.eye(3)],
        **NO_TF_GRAD,
    ),
    OpSpec(
        "lstsq_tall",
        lambda tf, a, b: tf.linalg.lstsq(a, b),
        lambda a, b: anp.linalg.solve(a.T @ a, a.T @ b),
        [rand(5, 3), rand(5, 2)],
        rtol=1e-6,
        unknown_dims=False,  # the formula depends on which dimension is larger
    ),
    OpSpec(
        "lstsq_wide_regularized",
        lambda tf, a, b: tf.matrix_solve_ls(a, b, l2_regularizer=0.1),
        lambda a, b: a.T @ anp.linalg.solve(a @ a.T + 0.1 * anp.eye(3), b),
        [rand(3, 5), rand(3, 2)],
        rtol=1e-6,
        unknown_dims=False,  # the formula depends on which dimension is larger
    ),
    OpSpec(
        "lstsq_svd",
        lambda tf, a, b: tf.linalg.lstsq(a, b, fast=False),
        lambda a, b: anp.linalg.solve(a.T @ a, a.T @ b),
        [separated(5, 3), rand(5, 2)],
        rtol=1e-6,
        **NO_TF_GRAD,
        unknown_dims=False,  # the formula depends on which dimension is larger
    ),
    OpSpec("pinv", lambda tf, a: tf.linalg.pinv(a), anp.linalg.pinv, [separated(4, 3)], rtol=1e-6),
    OpSpec(
        "matrix_rank",
        lambda tf, a, b: tf.linalg.matrix_rank(tf.matmul(a, b)),
        lambda a, b: np.linalg.matrix_rank(a @ b),
        [rand(2, 5, 2), rand(2, 2, 4)],
        grad=0,
    ),
    OpSpec("cross", lambda tf, a, b: tf.cross(a, b), anp.cross, [rand(4, 3), rand(4, 3)]),
    OpSpec(
        "normalize",
        lambda tf, a: tf.concat(tf.linalg.normalize(a, axis=1), 1),
        lambda a: anp.concatenate(
            [
                a / anp.sqrt(anp.sum(a * a, axis=1, keepdims=True)),
                anp.sqrt(anp.sum(a * a, axis=1, keepdims=True)),
            ],
            1,
        ),
        [rand(3, 4)],
    ),
    OpSpec(
        "tridiagonal_matmul",
        lambda tf, d, b: tf.linalg.tridiagonal_matmul(d, b),
        lambda d, b: (anp.diag(d[1]) + anp.diag(d[0][:-1], 1) + anp.diag(d[2][1:], -1)) @ b,
        [rand(3, 4), rand(4, 2)],
    ),
    OpSpec(
        "tridiagonal_solve",
        lambda tf, d, b: tf.linalg.tridiagonal_solve(d, b),
        lambda d, b: anp.linalg.solve(
            anp.diag(d[1]) + anp.diag(d[0][:-1], 1) + anp.diag(d[2][1:], -1), b
        ),
        [rand(3, 4) + np.array([[0.0], [5.0], [0.0]]), rand(4, 2)],
    ),
    OpSpec(
        "eigh_tridiagonal",
        lambda tf, a, b: tf.linalg.eigh_tridiagonal(a, b),
        lambda a, b: anp.linalg.eigh(anp.diag(a) + anp.diag(b, 1) + anp.diag(b, -1))[0],
        list(separated_tridiagonal(4)),
        tf_gradients=False,  # TF's bisection has no meaningful gradient; ours is eigh's
    ),
]


def spd_sqrt(a):
    s = a @ anp.swapaxes(a, -1, -2) + 4 * anp.eye(a.shape[-1])
    e, v = anp.linalg.eigh(s)
    return (v * anp.sqrt(e)[..., None, :]) @ anp.swapaxes(v, -1, -2)


ROWS += [
    OpSpec(
        "sqrtm",
        lambda tf, a: tf.linalg.sqrtm(
            tf.matmul(a, a, transpose_b=True) + 4 * tf.eye(3, dtype=tf.float64)
        ),
        spd_sqrt,
        [rand(2, 3, 3)],
        rtol=1e-6,
    ),
    OpSpec(
        "matrix_square_root_general",
        lambda tf, a: tf.matmul(tf.matrix_square_root(a), tf.matrix_square_root(a)),
        lambda a: a,
        [rand(3, 3) * 0.4 + 2 * np.eye(3)],
        rtol=1e-6,
    ),
]


def logm_parts(a, b):
    import scipy.linalg as sla

    m = sla.logm(a + 1j * b)
    return np.concatenate([m.real, m.imag], -1)


def logm_build(tf, a, b):
    m = tf.linalg.logm(tf.complex(a, b))
    return tf.concat([tf.math.real(m), tf.math.imag(m)], -1)


ROWS += [
    # No gradient, as TF's MatrixLogarithm.
    OpSpec(
        "logm",
        logm_build,
        logm_parts,
        [rand(3, 3) * 0.5 + 2 * np.eye(3), rand(3, 3) * 0.3],
        grad=0,
        rtol=1e-9,
        atol=1e-12,
    ),
]
