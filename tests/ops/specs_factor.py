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
