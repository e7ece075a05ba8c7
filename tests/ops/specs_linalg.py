"""The linear-algebra rows of the op table (``tests/ops/op_table.py``).

Matrices to invert or factor are made well conditioned (``A A^T + n I``); Cholesky rows
symmetrize their input inside the tested function, since the op reads only the lower
triangle while ``autograd``'s rule assumes symmetry. Rows linear in their single input
are checked to first order: their second derivative is identically zero and the
gradient pass reports it as unconnected.
"""

from __future__ import annotations

import autograd.numpy as anp
import numpy as np

from dataflow.testing.op_spec import OpSpec

RNG = np.random.default_rng(1234)


def rand(*shape):
    return RNG.standard_normal(shape)


def spd(*shape):
    """Well-conditioned symmetric positive-definite matrices of shape [..., n, n]."""
    a = RNG.standard_normal(shape)
    n = shape[-1]
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def well_conditioned(*shape):
    n = shape[-1]
    return RNG.standard_normal(shape) + 2 * n * np.eye(n)


def sym(x):
    return 0.5 * (x + anp.swapaxes(x, -1, -2))


def tf_sym(tf, x):
    """``sym`` built with the module ``tf``."""
    return 0.5 * (x + tf.linalg.matrix_transpose(x))


def ref_matmul(ta=False, tb=False):
    def f(a, b):
        a = anp.swapaxes(a, -1, -2) if ta else a
        b = anp.swapaxes(b, -1, -2) if tb else b
        return anp.matmul(a, b)

    return f


def diagonal(x):
    """Main diagonals of the last two axes (autograd differentiates few diagonal forms)."""
    k = min(x.shape[-2:])
    return anp.sum(x[..., :k, :k] * anp.eye(k), axis=-1)


ROWS = [
    OpSpec("matmul", lambda tf, a, b: tf.matmul(a, b), ref_matmul(), [rand(3, 4), rand(4, 5)]),
    OpSpec(
        "matmul_ta",
        lambda tf, a, b: tf.matmul(a, b, transpose_a=True),
        ref_matmul(True),
        [rand(4, 3), rand(4, 5)],
    ),
    OpSpec(
        "matmul_tb",
        lambda tf, a, b: tf.matmul(a, b, transpose_b=True),
        ref_matmul(False, True),
        [rand(3, 4), rand(5, 4)],
    ),
    OpSpec(
        "matmul_ta_tb",
        lambda tf, a, b: tf.matmul(a, b, transpose_a=True, transpose_b=True),
        ref_matmul(True, True),
        [rand(4, 3), rand(5, 4)],
    ),
    OpSpec(
        "matmul_adjoint",
        lambda tf, a, b: tf.matmul(a, b, adjoint_a=True, adjoint_b=True),
        ref_matmul(True, True),
        [rand(4, 3), rand(5, 4)],
    ),
    OpSpec("matmul_operator", lambda tf, a, b: a @ b, ref_matmul(), [rand(2, 3), rand(3, 2)]),
    OpSpec("matmul_square_self", lambda tf, a: tf.matmul(a, a), lambda a: a @ a, [rand(3, 3)]),
    OpSpec("bmm", lambda tf, a, b: tf.matmul(a, b), ref_matmul(), [rand(2, 3, 4), rand(2, 4, 5)]),
    OpSpec(
        "bmm_ta_tb",
        lambda tf, a, b: tf.matmul(a, b, transpose_a=True, transpose_b=True),
        ref_matmul(True, True),
        [rand(2, 4, 3), rand(2, 5, 4)],
    ),
    OpSpec(
        "bmm_ta",
        lambda tf, a, b: tf.matmul(a, b, transpose_a=True),
        ref_matmul(True),
        [rand(2, 4, 3), rand(2, 4, 5)],
    ),
    OpSpec(
        "bmm_tb",
        lambda tf, a, b: tf.matmul(a, b, transpose_b=True),
        ref_matmul(False, True),
        [rand(2, 3, 4), rand(2, 5, 4)],
    ),
    OpSpec(
        "bmm_rank2_rank3",
        lambda tf, a, b: tf.matmul(a, b),
        ref_matmul(),
        [rand(3, 4), rand(2, 4, 5)],
    ),
    OpSpec(
        "bmm_rank3_rank2_tb",
        lambda tf, a, b: tf.matmul(a, b, transpose_b=True),
        ref_matmul(False, True),
        [rand(2, 3, 4), rand(5, 4)],
    ),
    OpSpec(
        "bmm_broadcast_ones",
        lambda tf, a, b: tf.matmul(a, b),
        ref_matmul(),
        [rand(1, 3, 3, 4), rand(2, 1, 4, 2)],
    ),
    OpSpec("bmm_operator", lambda tf, a, b: a @ b, ref_matmul(), [rand(2, 2, 3), rand(3, 2)]),
    OpSpec(
        "einsum_matmul",
        lambda tf, a, b: tf.einsum("ij,jk->ik", a, b),
        lambda a, b: anp.einsum("ij,jk->ik", a, b),
        [rand(3, 4), rand(4, 2)],
    ),
    OpSpec(
        "einsum_implicit",
        lambda tf, a, b: tf.einsum("ij,jk", a, b),
        lambda a, b: anp.einsum("ij,jk", a, b),
        [rand(3, 4), rand(4, 2)],
    ),
    OpSpec(
        "einsum_batch",
        lambda tf, a, b: tf.einsum("bij,bjk->bik", a, b),
        lambda a, b: anp.einsum("bij,bjk->bik", a, b),
        [rand(2, 3, 4), rand(2, 4, 2)],
    ),
    OpSpec(
        "einsum_transpose",
        lambda tf, a: tf.einsum("ijk->kij", a),
        lambda a: anp.einsum("ijk->kij", a),
        [rand(2, 3, 4)],
        grad=1,
    ),
    OpSpec(
        "einsum_sum",
        lambda tf, a: tf.einsum("ij->", a),
        lambda a: anp.einsum("ij->", a),
        [rand(3, 4)],
        grad=1,
    ),
    OpSpec(
        "einsum_partial_sum",
        lambda tf, a: tf.einsum("ijk->ki", a),
        lambda a: anp.einsum("ijk->ki", a),
        [rand(2, 3, 4)],
        grad=1,
    ),
    OpSpec("einsum_diagonal", lambda tf, a: tf.einsum("ii->i", a), diagonal, [rand(3, 3)], grad=1),
    OpSpec(
        "einsum_trace",
        lambda tf, a: tf.einsum("ii", a),
        lambda a: anp.sum(diagonal(a)),
        [rand(3, 3)],
        grad=1,
    ),
    OpSpec(
        "einsum_generalized_trace",
        lambda tf, a, b: tf.einsum("iij,jk->k", a, b),
        lambda a, b: anp.einsum("ji,jk->k", diagonal(anp.moveaxis(a, 2, 0)), b),
        [rand(3, 3, 2), rand(2, 4)],
    ),
    OpSpec(
        "einsum_outer",
        lambda tf, a, b: tf.einsum("i,j->ij", a, b),
        lambda a, b: anp.einsum("i,j->ij", a, b),
        [rand(3), rand(4)],
    ),
    OpSpec(
        "einsum_dot",
        lambda tf, a, b: tf.einsum("i,i->", a, b),
        lambda a, b: anp.einsum("i,i->", a, b),
        [rand(5), rand(5)],
    ),
    OpSpec(
        "einsum_three",
        lambda tf, a, b, c: tf.einsum("ij,jk,kl->il", a, b, c),
        lambda a, b, c: anp.einsum("ij,jk,kl->il", a, b, c),
        [rand(2, 3), rand(3, 4), rand(4, 2)],
    ),
    OpSpec(
        "einsum_ellipsis_broadcast",
        lambda tf, a, b: tf.einsum("...ij,...jk->...ik", a, b),
        lambda a, b: anp.einsum("...ij,...jk->...ik", a, b),
        [rand(3, 2, 4), rand(2, 1, 4, 3)],
    ),
    OpSpec(
        "einsum_ellipsis_rank0",
        lambda tf, a, b: tf.einsum("...ij,...j->i", a, b),
        lambda a, b: anp.einsum("ij,j->i", a, b),
        [rand(2, 3), rand(3)],
    ),
    OpSpec(
        "einsum_ellipsis_rank2_only",
        lambda tf, a, b: tf.einsum("...ij,jk->...ik", a, b),
        lambda a, b: anp.einsum("...ij,jk->...ik", a, b),
        [rand(2, 3, 2, 4), rand(4, 2)],
    ),
    OpSpec(
        "einsum_ellipsis_middle",
        lambda tf, a, b: tf.einsum("i...j,...j->i...", a, b),
        lambda a, b: anp.einsum("i...j,...j->i...", a, b),
        [rand(2, 3, 4), rand(5, 3, 4)],
    ),
    OpSpec(
        "einsum_ellipsis_middle_ones",
        lambda tf, a, b: tf.einsum("i...j,j...->...", a, b),
        lambda a, b: anp.einsum("i...j,j...->...", a, b),
        [rand(2, 1, 3), rand(3, 4)],
    ),
    OpSpec(
        "tensordot_1",
        lambda tf, a, b: tf.tensordot(a, b, 1),
        lambda a, b: anp.tensordot(a, b, 1),
        [rand(2, 3), rand(3, 4)],
    ),
    OpSpec(
        "tensordot_2",
        lambda tf, a, b: tf.tensordot(a, b, 2),
        lambda a, b: anp.tensordot(a, b, 2),
        [rand(2, 3, 4), rand(3, 4, 5)],
    ),
    OpSpec(
        "tensordot_pairs",
        lambda tf, a, b: tf.tensordot(a, b, [[0, 2], [2, 0]]),
        lambda a, b: anp.tensordot(a, b, [[0, 2], [2, 0]]),
        [rand(2, 3, 4), rand(4, 5, 2)],
    ),
    OpSpec(
        "tensordot_single_axes",
        lambda tf, a, b: tf.tensordot(a, b, axes=[1, 0]),
        lambda a, b: anp.tensordot(a, b, [[1], [0]]),
        [rand(2, 3), rand(3, 4)],
    ),
    OpSpec(
        "tensordot_0",
        lambda tf, a, b: tf.tensordot(a, b, 0),
        lambda a, b: anp.tensordot(a, b, 0),
        [rand(2), rand(3)],
    ),
    OpSpec("inv", lambda tf, a: tf.linalg.inv(a), anp.linalg.inv, [well_conditioned(3, 3)]),
    OpSpec(
        "inv_batch", lambda tf, a: tf.matrix_inverse(a), anp.linalg.inv, [well_conditioned(2, 3, 3)]
    ),
    OpSpec(
        "inv_adjoint",
        lambda tf, a: tf.matrix_inverse(a, adjoint=True),
        lambda a: anp.linalg.inv(anp.swapaxes(a, -1, -2)),
        [well_conditioned(2, 3, 3)],
    ),
    OpSpec("det", lambda tf, a: tf.linalg.det(a), anp.linalg.det, [well_conditioned(3, 3)]),
    OpSpec(
        "det_batch",
        lambda tf, a: tf.matrix_determinant(a),
        anp.linalg.det,
        [well_conditioned(2, 2, 3, 3)],
    ),
    OpSpec("det_1x1", lambda tf, a: tf.linalg.det(a), anp.linalg.det, [rand(4, 1, 1) + 3]),
    OpSpec(
        "solve",
        lambda tf, a, b: tf.linalg.solve(a, b),
        anp.linalg.solve,
        [well_conditioned(3, 3), rand(3, 2)],
    ),
    OpSpec(
        "solve_batch",
        lambda tf, a, b: tf.matrix_solve(a, b),
        anp.linalg.solve,
        [well_conditioned(2, 3, 3), rand(2, 3, 1)],
    ),
    OpSpec(
        "solve_broadcast",
        lambda tf, a, b: tf.matrix_solve(a, b),
        lambda a, b: anp.linalg.solve(a + anp.zeros((2, 1, 1)), b),
        [well_conditioned(3, 3), rand(2, 3, 2)],
        tf_parity=False,  # TF1's MatrixSolve wants equal batch dimensions; ours broadcasts
    ),
    OpSpec(
        "solve_adjoint",
        lambda tf, a, b: tf.matrix_solve(a, b, adjoint=True),
        lambda a, b: anp.linalg.solve(anp.swapaxes(a, -1, -2), b),
        [well_conditioned(2, 3, 3), rand(2, 3, 2)],
    ),
    OpSpec(
        "cholesky",
        lambda tf, a: tf.linalg.cholesky(tf_sym(tf, a)),
        lambda a: anp.linalg.cholesky(sym(a)),
        [spd(3, 3)],
    ),
    OpSpec(
        "cholesky_batch",
        lambda tf, a: tf.cholesky(tf_sym(tf, a)),
        lambda a: anp.linalg.cholesky(sym(a)),
        [spd(2, 4, 4)],
    ),
    OpSpec(
        "logdet",
        lambda tf, a: tf.linalg.logdet(tf_sym(tf, a)),
        lambda a: anp.log(anp.linalg.det(sym(a))),
        [spd(2, 3, 3)],
    ),
    OpSpec(
        "triangular_solve_lower",
        lambda tf, a, b: tf.linalg.triangular_solve(a, b),
        lambda a, b: anp.linalg.solve(anp.tril(a), b),
        [well_conditioned(3, 3), rand(3, 2)],
    ),
    OpSpec(
        "triangular_solve_upper_adjoint",
        lambda tf, a, b: tf.matrix_triangular_solve(a, b, lower=False, adjoint=True),
        lambda a, b: anp.linalg.solve(anp.swapaxes(anp.triu(a), -1, -2), b),
        [well_conditioned(3, 3), rand(3, 2)],
    ),
    OpSpec(
        "cholesky_solve",
        lambda tf, c, b: tf.linalg.cholesky_solve(c, b),
        lambda c, b: anp.linalg.solve(anp.tril(c) @ anp.tril(c).T, b),
        [well_conditioned(3, 3), rand(3, 2)],
    ),
    OpSpec(
        "norm_default", lambda tf, x: tf.norm(x), lambda x: anp.sqrt(anp.sum(x * x)), [rand(3, 4)]
    ),
    OpSpec(
        "norm_axis",
        lambda tf, x: tf.norm(x, axis=1),
        lambda x: anp.linalg.norm(x, axis=1),
        [rand(3, 4)],
    ),
    OpSpec(
        "norm_axis_keepdims",
        lambda tf, x: tf.norm(x, axis=-1, keepdims=True),
        lambda x: anp.sqrt(anp.sum(x * x, axis=-1, keepdims=True)),
        [rand(2, 3, 4)],
    ),
    OpSpec(
        "norm_none_keepdims",
        lambda tf, x: tf.norm(x, keepdims=True),
        lambda x: anp.sqrt(anp.sum(x * x, keepdims=True)),
        [rand(2, 3)],
    ),
    OpSpec(
        "norm_2",
        lambda tf, x: tf.norm(x, ord=2, axis=0),
        lambda x: anp.linalg.norm(x, 2, axis=0),
        [rand(4, 3)],
    ),
    OpSpec(
        "norm_1",
        lambda tf, x: tf.norm(x, ord=1, axis=0),
        lambda x: anp.sum(anp.abs(x), axis=0),
        [rand(4, 3)],
    ),
    OpSpec(
        "norm_inf",
        lambda tf, x: tf.norm(x, ord=np.inf, axis=1),
        lambda x: anp.max(anp.abs(x), axis=1),
        [rand(3, 4)],
    ),
    OpSpec(
        "norm_p3",
        lambda tf, x: tf.norm(x, ord=3, axis=1),
        lambda x: anp.sum(anp.abs(x) ** 3, axis=1) ** (1 / 3),
        [rand(3, 4)],
    ),
    OpSpec(
        "norm_fro",
        lambda tf, x: tf.norm(x, ord="fro", axis=[-2, -1]),
        lambda x: anp.sqrt(anp.sum(x * x, axis=(-2, -1))),
        [rand(2, 3, 4)],
    ),
    OpSpec(
        "norm_matrix_1",
        lambda tf, x: tf.norm(x, ord=1, axis=(1, 2)),
        lambda x: anp.max(anp.sum(anp.abs(x), axis=1), axis=1),
        [rand(2, 3, 4)],
    ),
    OpSpec(
        "norm_matrix_inf_keepdims",
        lambda tf, x: tf.norm(x, ord=np.inf, axis=(0, 1), keepdims=True),
        lambda x: anp.max(anp.sum(anp.abs(x), axis=1, keepdims=True), axis=0, keepdims=True),
        [rand(3, 4)],
    ),
    OpSpec("trace", lambda tf, x: tf.linalg.trace(x), lambda x: anp.trace(x), [rand(3, 3)], grad=1),
    OpSpec(
        "trace_batch_rect",
        lambda tf, x: tf.trace(x),
        lambda x: anp.sum(diagonal(x), axis=-1),
        [rand(2, 3, 4)],
        grad=1,
    ),
    OpSpec(
        "diag",
        lambda tf, d: tf.linalg.diag(d),
        lambda d: d[..., None, :] * anp.eye(d.shape[-1]),
        [rand(2, 3)],
        grad=1,
    ),
    OpSpec("diag_part", lambda tf, x: tf.linalg.diag_part(x), diagonal, [rand(2, 3, 4)], grad=1),
    OpSpec("diag_part_tall", lambda tf, x: tf.matrix_diag_part(x), diagonal, [rand(4, 2)], grad=1),
    OpSpec(
        "set_diag",
        lambda tf, x, d: tf.linalg.set_diag(x, d),
        lambda x, d: x * (1 - anp.eye(3)) + d[..., None, :] * anp.eye(3),
        [rand(2, 3, 3), rand(2, 3)],
        grad=1,
    ),
    OpSpec(
        "band_lower",
        lambda tf, x: tf.linalg.band_part(x, -1, 0),
        lambda x: anp.tril(x),
        [rand(2, 3, 4)],
        grad=1,
    ),
    OpSpec(
        "band_upper",
        lambda tf, x: tf.matrix_band_part(x, 0, -1),
        lambda x: anp.triu(x),
        [rand(4, 3)],
        grad=1,
    ),
    OpSpec(
        "band_1_2",
        lambda tf, x: tf.linalg.band_part(x, 1, 2),
        lambda x: anp.triu(anp.tril(x, 2), -1),
        [rand(5, 5)],
        grad=1,
    ),
    OpSpec(
        "matrix_transpose",
        lambda tf, x: tf.linalg.matrix_transpose(x),
        lambda x: anp.swapaxes(x, -1, -2),
        [rand(2, 3, 4)],
        grad=1,
    ),
    OpSpec(
        "adjoint",
        lambda tf, x: tf.linalg.adjoint(x),
        lambda x: anp.swapaxes(x, -1, -2),
        [rand(3, 4)],
        grad=1,
    ),
    OpSpec(
        "matvec",
        lambda tf, a, b: tf.linalg.matvec(a, b),
        lambda a, b: anp.einsum("...ij,...j->...i", a, b),
        [rand(2, 3, 4), rand(4)],
    ),
    OpSpec(
        "matvec_transpose",
        lambda tf, a, b: tf.linalg.matvec(a, b, transpose_a=True),
        lambda a, b: anp.einsum("...ji,...j->...i", a, b),
        [rand(3, 4), rand(2, 3)],
    ),
    OpSpec(
        "det_of_product",
        lambda tf, a, b: tf.linalg.det(tf.matmul(a, b) + 3.0 * tf.eye(3, dtype=tf.float64)),
        lambda a, b: anp.linalg.det(a @ b + 3.0 * anp.eye(3)),
        [rand(3, 4), rand(4, 3)],
    ),
    OpSpec(
        "inv_solve",
        lambda tf, a, b: tf.linalg.solve(a, tf.matmul(tf.linalg.inv(a), b)),
        lambda a, b: anp.linalg.solve(a, anp.linalg.inv(a) @ b),
        [well_conditioned(3, 3), rand(3, 2)],
    ),
]
