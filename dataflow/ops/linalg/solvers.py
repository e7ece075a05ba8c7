"""Composites of the linalg family over the factorizations: least squares
(``matrix_solve_ls``/``lstsq``), ``pinv``, ``matrix_rank``, ``normalize``, ``cross``,
the LU helpers (``lu_solve``, ``lu_reconstruct``, ``lu_matrix_inverse``), tridiagonal
systems (``tridiagonal_matmul``, ``tridiagonal_solve``, ``eigh_tridiagonal``).

``matrix_solve_ls`` with ``fast=True`` is TF's: the regularized normal equations,
``(A^H A + l I)^-1 A^H B`` for tall ``A`` and ``A^H (A A^H + l I)^-1 B`` for wide, through
a Cholesky factorization; ``fast=False`` is the minimum-norm solution from the SVD
(``V diag(s / (s^2 + l)) U^H B``), robust to rank deficiency. ``pinv`` drops singular
values below ``rcond * max(s)``. Permutations act as one-hot matrices (``P[i, p[i]] =
1``), so the LU helpers batch without a batched gather. Tridiagonal solves and
eigenproblems build the dense matrix and use the dense kernels (``O(n^3)`` rather than
the Thomas algorithm); the products use shifted slices, ``O(n)``. Gradients come from
the primitives.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...framework import dtypes
from ...framework.graph import Tensor
from ...framework.scopes import name_scope
from .. import array as array_ops
from .. import math as math_ops
from ..build import convert_inputs
from ..constant import constant
from .contraction import matrix_transpose
from .decomp import cholesky, cholesky_solve, matrix_triangular_solve, norm
from .diag import eye, matrix_band_part, matrix_diag, matrix_diag_part, matrix_set_diag
from .factor import self_adjoint_eig, self_adjoint_eigvals, svd
from .products import matmul


def _dims(t: Tensor, what: str) -> tuple[int, int]:
    dims = t.shape.as_list() if t.shape.ndims is not None else None
    if dims is None or len(dims) < 2 or dims[-2] is None or dims[-1] is None:
        raise ValueError(f"{what} needs matrices of known dimensions, got shape {t.shape}")
    return dims[-2], dims[-1]


def _largest_dim(x: Tensor) -> Tensor:
    """``max(M, N)`` of ``x``'s matrices, in its dtype (known or not at build time)."""
    return math_ops.cast(math_ops.reduce_max(array_ops.shape(x)[-2:]), x.dtype)


def matrix_solve_ls(
    matrix: Any, rhs: Any, l2_regularizer: float = 0.0, fast: bool = True, name: str | None = None
) -> Tensor:
    """The least-squares solutions ``X`` minimizing ``|A X - B|^2 + l |X|^2``.

    Args:
        matrix: ``[..., M, N]`` float or complex.
        rhs: ``[..., M, K]``.
        l2_regularizer: ``l >= 0``.
        fast: solve the normal equations by Cholesky (full-rank ``A``); otherwise the
            minimum-norm solution through the SVD.
        name: a name scope.

    Returns:
        ``[..., N, K]``.

    Raises:
        ValueError: ``fast`` with the matrices' dimensions unknown at build time (the
            formula depends on which is larger).
    """
    with name_scope(name, "matrix_solve_ls", [matrix, rhs]):
        a, b = convert_inputs([matrix, rhs])
        if a.dtype != b.dtype:
            raise TypeError(
                f"matrix and rhs must share a dtype, got {a.dtype.name}, {b.dtype.name}"
            )
        m, n = _dims(a, "matrix_solve_ls")
        reg = constant(l2_regularizer, dtype=a.dtype)
        if not fast:
            s, u, v = svd(a, full_matrices=False)
            real_s = math_ops.real(s)
            scale = math_ops.div_no_nan(
                real_s, math_ops.add(math_ops.square(real_s), math_ops.real(reg))
            )
            if a.dtype.is_complex:
                scale = math_ops.complex(scale, array_ops.zeros_like(scale))
            projected = matmul(u, b, adjoint_a=True)
            return matmul(v, math_ops.multiply(array_ops.expand_dims(scale, -1), projected))
        if m >= n:
            gram = matmul(a, a, adjoint_a=True)
            gram = math_ops.add(gram, math_ops.multiply(reg, eye(n, dtype=a.dtype)))
            return cholesky_solve(cholesky(gram), matmul(a, b, adjoint_a=True))
        gram = matmul(a, a, adjoint_b=True)
        gram = math_ops.add(gram, math_ops.multiply(reg, eye(m, dtype=a.dtype)))
        return matmul(a, cholesky_solve(cholesky(gram), b), adjoint_a=True)


def pinv(a: Any, rcond: Any = None, validate_args: bool = False, name: str | None = None) -> Tensor:
    """The Moore-Penrose pseudo-inverses of the matrices of ``a`` (float), from the SVD;
    singular values at most ``rcond * max(s)`` count as 0 (default ``rcond``: ``10 *
    max(M, N) * eps``)."""
    with name_scope(name, "pinv", [a, rcond]):
        x = convert_inputs([a])[0]
        if not x.dtype.is_floating:
            raise TypeError(f"pinv needs a float tensor, got {x.dtype.name}")
        s, u, v = svd(x, full_matrices=False)
        if rcond is None:
            eps = float(np.finfo(x.dtype.as_numpy_dtype).eps)
            rcond_t = math_ops.multiply(_largest_dim(x), 10.0 * eps)
        else:
            rcond_t = convert_inputs([rcond], x.dtype)[0]
        cutoff = math_ops.multiply(rcond_t, math_ops.reduce_max(s, -1))
        keep = math_ops.greater(s, array_ops.expand_dims(cutoff, -1))
        inverse = math_ops.where(
            keep,
            math_ops.reciprocal(math_ops.where(keep, s, array_ops.ones_like(s))),
            array_ops.zeros_like(s),
        )
        return matmul(math_ops.multiply(v, array_ops.expand_dims(inverse, -2)), u, adjoint_b=True)


def matrix_rank(
    a: Any, tol: Any = None, validate_args: bool = False, name: str | None = None
) -> Tensor:
    """The numbers of singular values above ``tol`` (default: ``eps * max(M, N) *
    max(s)``), as int32."""
    with name_scope(name, "matrix_rank", [a, tol]):
        x = convert_inputs([a])[0]
        s = svd(x, compute_uv=False)
        if tol is None:
            eps = float(np.finfo(x.dtype.as_numpy_dtype).eps)
            largest = math_ops.multiply(_largest_dim(x), eps)
            tol_t = math_ops.multiply(math_ops.reduce_max(s, -1, keepdims=True), largest)
        else:
            tol_t = array_ops.expand_dims(convert_inputs([tol], x.dtype)[0], -1)
        return math_ops.reduce_sum(math_ops.cast(math_ops.greater(s, tol_t), dtypes.int32), -1)


def normalize(
    tensor: Any, ord: Any = "euclidean", axis: Any = None, name: str | None = None
) -> tuple[Tensor, Tensor]:
    """``(tensor / norm, norm)`` with ``norm(tensor, ord, axis, keepdims=True)``."""
    with name_scope(name, "normalize", [tensor]):
        x = convert_inputs([tensor])[0]
        size = norm(x, ord=ord, axis=axis, keepdims=True)
        return math_ops.truediv(x, size), size


def cross(a: Any, b: Any, name: str | None = None) -> Tensor:
    """Pairwise cross products of the 3-vectors in the last dimension of ``a`` and ``b``.

    Raises:
        ValueError: a known last dimension is not 3, or the shapes differ (as TF1).
    """
    with name_scope(name, "Cross", [a, b]):
        x, y = convert_inputs([a, b])
        for t in (x, y):
            if t.shape.ndims is not None and t.shape.as_list()[-1] not in (None, 3):
                raise ValueError(f"Dimension must be 3 for cross products, got shape {t.shape}")
        if not x.shape.is_compatible_with(y.shape):
            raise ValueError(f"a and b must have the same shape, got {x.shape} and {y.shape}")
        x1, x2, x3 = array_ops.unstack(x, 3, axis=-1)
        y1, y2, y3 = array_ops.unstack(y, 3, axis=-1)
        return array_ops.stack(
            [
                math_ops.subtract(math_ops.multiply(x2, y3), math_ops.multiply(x3, y2)),
                math_ops.subtract(math_ops.multiply(x3, y1), math_ops.multiply(x1, y3)),
                math_ops.subtract(math_ops.multiply(x1, y2), math_ops.multiply(x2, y1)),
            ],
            axis=-1,
        )


# --- LU helpers ---------------------------------------------------------------------------
def _factors(lower_upper: Tensor) -> tuple[Tensor, Tensor]:
    unit = array_ops.ones_like(matrix_diag_part(lower_upper))
    lower = matrix_set_diag(matrix_band_part(lower_upper, -1, 0), unit)
    return lower, matrix_band_part(lower_upper, 0, -1)


def _permutation(perm: Tensor, dtype: dtypes.DType) -> Tensor:
    n = array_ops.shape(perm)[-1]
    return array_ops.one_hot(perm, n, dtype=dtype)


def lu_solve(
    lower_upper: Any, perm: Any, rhs: Any, validate_args: bool = False, name: str | None = None
) -> Tensor:
    """Solves ``A X = rhs`` given ``lu``'s outputs for ``A``."""
    with name_scope(name, "lu_solve", [lower_upper, perm, rhs]):
        lu_t, b = convert_inputs([lower_upper, rhs])
        p = convert_inputs([perm])[0]
        lower, upper = _factors(lu_t)
        permuted = matmul(_permutation(p, lu_t.dtype), b)
        y = matrix_triangular_solve(lower, permuted, lower=True)
        return matrix_triangular_solve(upper, y, lower=False)


def lu_matrix_inverse(
    lower_upper: Any, perm: Any, validate_args: bool = False, name: str | None = None
) -> Tensor:
    """The inverse of ``A`` given ``lu``'s outputs for ``A``."""
    with name_scope(name, "lu_matrix_inverse", [lower_upper, perm]):
        lu_t = convert_inputs([lower_upper])[0]
        n = array_ops.shape(lu_t)[-1]
        identity = eye(n, batch_shape=array_ops.shape(lu_t)[:-2], dtype=lu_t.dtype)
        return lu_solve(lu_t, perm, identity)


def lu_reconstruct(
    lower_upper: Any, perm: Any, validate_args: bool = False, name: str | None = None
) -> Tensor:
    """``A = P^T L U`` from ``lu``'s outputs."""
    with name_scope(name, "lu_reconstruct", [lower_upper, perm]):
        lu_t = convert_inputs([lower_upper])[0]
        p = convert_inputs([perm])[0]
        lower, upper = _factors(lu_t)
        return matmul(_permutation(p, lu_t.dtype), matmul(lower, upper), adjoint_a=True)


# --- tridiagonal systems -------------------------------------------------------------------
def _three_diagonals(diagonals: Any, diagonals_format: str) -> tuple[Tensor, Tensor, Tensor]:
    """``(super, main, sub)``, each ``[..., M]`` (the last of ``super`` and the first of
    ``sub`` unused), from any of TF's three formats."""
    if diagonals_format == "compact":
        d = convert_inputs([diagonals])[0]
        if d.shape.ndims is not None and d.shape.as_list()[-2] not in (None, 3):
            raise ValueError(f"Expected diagonals of shape [..., 3, M], got {d.shape}")
        return d[..., 0, :], d[..., 1, :], d[..., 2, :]
    if diagonals_format == "sequence":
        if not isinstance(diagonals, (list, tuple)) or len(diagonals) != 3:
            raise ValueError("Expected diagonals to be a sequence of length 3.")
        sup, main, sub = convert_inputs(list(diagonals))
        return sup, main, sub
    if diagonals_format == "matrix":
        m = convert_inputs([diagonals])[0]
        return _off_diagonal(m, 1), matrix_diag_part(m), _off_diagonal(m, -1)
    raise ValueError(f"Unrecognized diagonals_format: {diagonals_format}")


def _rank(t: Tensor) -> int:
    if t.shape.ndims is None:
        raise ValueError(f"tridiagonal ops need tensors of known rank, got '{t.name}'")
    return t.shape.ndims


def _off_diagonal(m: Tensor, k: int) -> Tensor:
    """The ``k = 1`` diagonal followed by a 0, or the ``k = -1`` one preceded by a 0."""
    lead = [[0, 0]] * (_rank(m) - 2)
    if k == 1:
        return array_ops.pad(matrix_diag_part(m[..., :-1, 1:]), lead + [[0, 1]])
    return array_ops.pad(matrix_diag_part(m[..., 1:, :-1]), lead + [[1, 0]])


def tridiagonal_matmul(
    diagonals: Any, rhs: Any, diagonals_format: str = "compact", name: str | None = None
) -> Tensor:
    """``T @ rhs`` for tridiagonal ``T`` given by its diagonals (``compact``: ``[..., 3,
    M]`` super, main, sub; ``sequence``: three ``[..., M]``; ``matrix``: ``[..., M, M]``),
    in ``O(M)`` per column."""
    with name_scope(name, "tridiagonal_matmul", [diagonals, rhs]):
        sup, main, sub = _three_diagonals(diagonals, diagonals_format)
        b = convert_inputs([rhs])[0]
        lead = [[0, 0]] * (_rank(b) - 2)
        above = array_ops.pad(b[..., 1:, :], lead + [[0, 1], [0, 0]])
        below = array_ops.pad(b[..., :-1, :], lead + [[1, 0], [0, 0]])
        return math_ops.add_n(
            [
                math_ops.multiply(array_ops.expand_dims(sup, -1), above),
                math_ops.multiply(array_ops.expand_dims(main, -1), b),
                math_ops.multiply(array_ops.expand_dims(sub, -1), below),
            ]
        )


def _dense_tridiagonal(sup: Tensor, main: Tensor, sub: Tensor) -> Tensor:
    lead = [[0, 0]] * (_rank(main) - 1)
    upper = array_ops.pad(matrix_diag(sup[..., :-1]), lead + [[0, 1], [1, 0]])
    lower = array_ops.pad(matrix_diag(sub[..., 1:]), lead + [[1, 0], [0, 1]])
    return math_ops.add_n([matrix_diag(main), upper, lower])


def tridiagonal_solve(
    diagonals: Any,
    rhs: Any,
    diagonals_format: str = "compact",
    transpose_rhs: bool = False,
    conjugate_rhs: bool = False,
    name: str | None = None,
    partial_pivoting: bool = True,
    perturb_singular: bool = False,
) -> Tensor:
    """Solves ``T X = rhs`` for tridiagonal ``T`` (diagonals as ``tridiagonal_matmul``;
    ``rhs`` ``[..., M, K]``, or ``[..., K, M]`` with ``transpose_rhs``)."""
    with name_scope(name, "tridiagonal_solve", [diagonals, rhs]):
        sup, main, sub = _three_diagonals(diagonals, diagonals_format)
        b = convert_inputs([rhs])[0]
        if transpose_rhs:
            b = matrix_transpose(b, conjugate=conjugate_rhs)
        elif conjugate_rhs:
            b = math_ops.conj(b)
        from .decomp import matrix_solve

        return matrix_solve(_dense_tridiagonal(sup, main, sub), b)


def eigh_tridiagonal(
    alpha: Any,
    beta: Any,
    eigvals_only: bool = True,
    select: str = "a",
    select_range: Any = None,
    tol: Any = None,
    name: str | None = None,
) -> Any:
    """Eigenvalues (ascending; and eigenvectors unless ``eigvals_only``) of the Hermitian
    tridiagonal matrix with diagonal ``alpha`` ``[N]`` and off-diagonal ``beta``
    ``[N - 1]``. ``select``: ``'a'`` all, ``'i'`` the indices ``select_range``
    (inclusive), ``'v'`` those in the half-open interval ``select_range``."""
    if select not in ("a", "i", "v"):
        raise ValueError(f"select must be one of 'a', 'i' or 'v', got {select}")
    with name_scope(name, "eigh_tridiagonal", [alpha, beta]):
        diag, off = convert_inputs([alpha, beta])
        zero = array_ops.zeros_like(off[:1])
        sup = array_ops.concat([off, zero], 0)
        sub = array_ops.concat([zero, math_ops.conj(off)], 0)
        dense = _dense_tridiagonal(sup, diag, sub)
        if eigvals_only:
            values = self_adjoint_eigvals(dense)
            vectors = None
        else:
            values, vectors = self_adjoint_eig(dense)
        if select == "i":
            lo, hi = int(select_range[0]), int(select_range[1])
            values = values[lo : hi + 1]
            vectors = vectors[:, lo : hi + 1] if vectors is not None else None
        elif select == "v":
            lo_t, hi_t = convert_inputs(list(select_range), values.dtype)
            keep = math_ops.logical_and(
                math_ops.greater(values, lo_t), math_ops.less_equal(values, hi_t)
            )
            values = array_ops.boolean_mask(values, keep)
            if vectors is not None:
                vectors = array_ops.transpose(
                    array_ops.boolean_mask(array_ops.transpose(vectors), keep)
                )
        return values if eigvals_only else (values, vectors)
