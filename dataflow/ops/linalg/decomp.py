"""Inverses, determinants, solves and the Cholesky factorization, what builds on them
(triangular solves, ``cholesky_solve``, ``logdet``), and ``norm``.

Primitives (one record each): ``MatrixInverse``, ``MatrixDeterminant``, ``MatrixSolve``
and ``Cholesky``, over batches of square matrices in the last two dimensions. Kernels
call ``xp.linalg``; LAPACK has no half precision, so float16 goes through float32
(``lapack``). A singular or non-positive-definite matrix is an error when the step
runs.

Gradients are TF's rules, written with ``matmul``, ``einsum`` and the diagonal/band ops
so that second derivatives work: ``d(A^-1) = -A^-1 dA A^-1``; ``d det(A) = det(A)
tr(A^-1 dA)``; for ``X = A^-1 B``, ``grad_B = A^-H G`` and ``grad_A = -grad_B X^H``; for
Cholesky, Murray (2016)'s ``1/2 (S + S^H)`` with ``S = L^-H Phi(L^H G) L^-1``.

Composites: ``matrix_triangular_solve`` (a general solve on the triangle selected by
``matrix_band_part``; numpy has no triangular solver), ``cholesky_solve``, ``logdet``
(twice the log-sum of the Cholesky diagonal) and ``norm`` (vector and matrix norms as
reductions).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...framework import dtypes, registry
from ...framework.graph import Operation, Tensor
from ...framework.scopes import name_scope
from ...framework.tensor_shape import TensorShape
from .. import array as array_ops
from .. import math as math_ops
from ..build import apply_op, convert_inputs
from ..constant import constant
from ..rules import is_float
from .contraction import (
    broadcast_batch,
    check_equal_dims,
    einsum,
    lapack,
    matrix_t,
    matrix_transpose,
    merge_dim,
    require_dtype,
    require_rank_at_least,
)
from .diag import matrix_band_part, matrix_diag_part, matrix_set_diag
from .products import matmul


# --- MatrixInverse, MatrixDeterminant, MatrixSolve, Cholesky ------------------------------
def square_dims(t: Tensor) -> tuple[TensorShape, int | None]:
    dims = require_rank_at_least(t, 2)
    if dims is None:
        return TensorShape(None), None
    check_equal_dims(dims[-2], dims[-1], f" (input '{t.name}' must be square matrices)")
    return TensorShape(dims[:-2]), merge_dim(dims[-2], dims[-1])


def _infer_square(op: Operation) -> list:
    dtype = require_dtype(op, is_float, "float or complex")
    batch, n = square_dims(op.inputs[0])
    return [(dtype, batch.concatenate(TensorShape([n, n])))]


def _inverse_kernel(ctx: Any, attrs: dict) -> Any:
    xp, dtype = ctx.xp, attrs["T"]
    inv = lapack(xp, xp.linalg.inv, dtype)
    if attrs["adjoint"]:
        adj = matrix_t(xp, dtype, True)
        return lambda x: inv(adj(x))
    return inv


def _inverse_grad(op: Operation, grad: Tensor) -> list:
    # d(A^-1) = -A^-1 dA A^-1, so grad_A = -A^-H G A^-H (TF's rule, with the adjoint attr).
    ainv = op.outputs[0]
    adjoint = op.attrs["adjoint"]
    inner = matmul(grad, ainv, adjoint_a=adjoint, adjoint_b=not adjoint)
    return [math_ops.negative(matmul(ainv, inner, adjoint_a=not adjoint))]


registry.register(registry.OpDef("MatrixInverse", _infer_square, _inverse_kernel, _inverse_grad))


def matrix_inverse(input: Any, adjoint: bool = False, name: str | None = None) -> Tensor:
    """The inverses of the square matrices in the last two dimensions of ``input``.

    Args:
        input: a float or complex tensor of shape ``[..., M, M]``.
        adjoint: invert the (conjugate) transposes instead.
        name: the op name.

    A singular matrix is an ``InvalidArgumentError`` when the step runs.
    """
    x = convert_inputs([input])[0]
    return apply_op("MatrixInverse", [x], {"adjoint": bool(adjoint), "T": x.dtype}, name=name)


def _infer_det(op: Operation) -> list:
    dtype = require_dtype(op, is_float, "float or complex")
    batch, _ = square_dims(op.inputs[0])
    return [(dtype, batch)]


def _det_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    det = lapack(xp, xp.linalg.det, attrs["T"])
    asarray = xp.asarray
    return lambda x: asarray(det(x))  # numpy returns a scalar for one matrix


def _det_grad(op: Operation, grad: Tensor) -> list:
    # d det(A) = det(A) tr(A^-1 dA), so grad_A = G det(A) A^-T (batched: per matrix).
    a, det = op.inputs[0], op.outputs[0]
    inverse = matrix_inverse(a)
    return [einsum("...,...,...ji->...ij", grad, det, inverse)]


registry.register(registry.OpDef("MatrixDeterminant", _infer_det, _det_kernel, _det_grad))


def matrix_determinant(input: Any, name: str | None = None) -> Tensor:
    """The determinants of the square matrices in the last two dimensions of ``input``."""
    x = convert_inputs([input])[0]
    return apply_op("MatrixDeterminant", [x], {"T": x.dtype}, name=name)


def _infer_solve(op: Operation) -> list:
    dtype = require_dtype(op, is_float, "float or complex")
    matrix, rhs = op.inputs
    _, n = square_dims(matrix)
    drhs = require_rank_at_least(rhs, 2)
    m, k = drhs[-2:] if drhs is not None else (None, None)
    check_equal_dims(n, m)
    batch = broadcast_batch(matrix, rhs, 2, 2)
    return [(dtype, batch.concatenate(TensorShape([merge_dim(n, m), k])))]


def _solve_kernel(ctx: Any, attrs: dict) -> Any:
    xp, dtype = ctx.xp, attrs["T"]
    solve = lapack(xp, xp.linalg.solve, dtype)
    if attrs["adjoint"]:
        adj = matrix_t(xp, dtype, True)
        return lambda a, b: solve(adj(a), b)
    return solve


def _solve_grad(op: Operation, grad: Tensor) -> list:
    # X = A^-1 B: grad_B = A^-H G, grad_A = -grad_B X^H (TF's _MatrixSolveGrad).
    a, adjoint, c = op.inputs[0], op.attrs["adjoint"], op.outputs[0]
    grad_b = matrix_solve(a, grad, adjoint=not adjoint)
    if adjoint:
        grad_a = matmul(c, grad_b, adjoint_b=True)
    else:
        grad_a = matmul(grad_b, c, adjoint_b=True)
    return [math_ops.negative(grad_a), grad_b]


registry.register(registry.OpDef("MatrixSolve", _infer_solve, _solve_kernel, _solve_grad))


def matrix_solve(matrix: Any, rhs: Any, adjoint: bool = False, name: str | None = None) -> Tensor:
    """Solves ``matrix @ X = rhs`` for ``X`` (``adjoint``: ``matrix^H @ X = rhs``).

    Args:
        matrix: ``[..., M, M]`` float or complex.
        rhs: ``[..., M, K]`` of the same dtype; batch dimensions broadcast.
        adjoint: solve with the (conjugate) transposes of ``matrix``.
        name: the op name.
    """
    a, b = convert_inputs([matrix, rhs])
    return apply_op("MatrixSolve", [a, b], {"adjoint": bool(adjoint), "T": a.dtype}, name=name)


def _cholesky_kernel(ctx: Any, attrs: dict) -> Any:
    # LAPACK potrf on the lower triangle, as TF (the upper triangle is never read).
    return lapack(ctx.xp, ctx.xp.linalg.cholesky, attrs["T"])


def _cholesky_grad(op: Operation, grad: Tensor) -> list:
    # Murray 2016, "Differentiation of the Cholesky decomposition", as in TF:
    #   grad_A = 1/2 (S + S^H),  S = L^-H Phi(L^H G) L^-1,
    # with Phi taking the lower triangle and halving the diagonal.
    chol = op.outputs[0]
    chol_inv = matrix_inverse(chol)
    middle = matmul(chol, grad, adjoint_a=True)
    middle = matrix_set_diag(
        matrix_band_part(middle, -1, 0),
        math_ops.multiply(matrix_diag_part(middle), _scalar(0.5, middle.dtype)),
    )
    grad_a = matmul(matmul(chol_inv, middle, adjoint_a=True), chol_inv)
    grad_a = math_ops.add(grad_a, matrix_transpose(grad_a, conjugate=True))
    return [math_ops.multiply(grad_a, _scalar(0.5, grad_a.dtype))]


registry.register(registry.OpDef("Cholesky", _infer_square, _cholesky_kernel, _cholesky_grad))


def cholesky(input: Any, name: str | None = None) -> Tensor:
    """The lower-triangular Cholesky factors ``L`` (``A = L L^H``) of the Hermitian
    positive-definite matrices in the last two dimensions of ``input``; only the lower
    triangle of ``input`` is read. A matrix that is not positive definite is an
    ``InvalidArgumentError`` when the step runs."""
    x = convert_inputs([input])[0]
    return apply_op("Cholesky", [x], {"T": x.dtype}, name=name)


def _scalar(value: float, dtype: dtypes.DType) -> Tensor:
    return constant(value, dtype=dtype)


# --- composites: triangular solves, logdet -------------------------------------------------
def matrix_triangular_solve(
    matrix: Any, rhs: Any, lower: bool = True, adjoint: bool = False, name: str | None = None
) -> Tensor:
    """Solves ``matrix @ X = rhs`` reading only the lower (``lower``) or upper triangle
    of ``matrix``.

    A general solve on the selected triangle (numpy has no triangular solver); its
    gradient reaches only that triangle, as TF's.
    """
    with name_scope(name, "MatrixTriangularSolve", [matrix, rhs]):
        band = matrix_band_part(matrix, -1, 0) if lower else matrix_band_part(matrix, 0, -1)
        return matrix_solve(band, rhs, adjoint=adjoint)


def cholesky_solve(chol: Any, rhs: Any, name: str | None = None) -> Tensor:
    """Solves ``A X = rhs`` given the Cholesky factors ``chol`` of ``A``."""
    with name_scope(name, "cholesky_solve", [chol, rhs]):
        y = matrix_triangular_solve(chol, rhs, lower=True, adjoint=False)
        return matrix_triangular_solve(chol, y, lower=True, adjoint=True)


def logdet(matrix: Any, name: str | None = None) -> Tensor:
    """``log(det(matrix))`` of Hermitian positive-definite matrices, via Cholesky."""
    with name_scope(name, "logdet", [matrix]):
        chol = cholesky(matrix)
        log_diag = math_ops.log(matrix_diag_part(chol))
        total = math_ops.reduce_sum(log_diag, axis=-1)
        return math_ops.multiply(total, _scalar(2.0, total.dtype))


# --- norm ---------------------------------------------------------------------------------
_MATRIX_ORDS = ("euclidean", "fro")


def _is_positive_number(value: Any) -> bool:
    return (
        isinstance(value, (int, float, np.integer, np.floating))
        and not isinstance(value, bool)
        and bool(value > 0)
    )


def norm(
    tensor: Any,
    ord: Any = "euclidean",
    axis: Any = None,
    keepdims: bool | None = None,
    name: str | None = None,
    keep_dims: bool | None = None,
) -> Tensor:
    """Vector and matrix norms.

    Args:
        tensor: a float or complex tensor.
        ord: ``'euclidean'`` (default), ``'fro'``, ``1``, ``2``, ``np.inf`` or any
            positive number ``p`` for vector norms; ``'euclidean'``/``'fro'``, ``1`` and
            ``np.inf`` for matrix norms (max column / row sums of absolute values).
        axis: ``None`` (the whole tensor as one vector), an int (vector norms along it)
            or a pair of ints (matrix norms over those two axes).
        keepdims: keep the reduced axes with size 1.
        name: a name scope.
        keep_dims: deprecated alias of ``keepdims``.

    Returns:
        The norms, of ``tensor``'s dtype.

    Raises:
        ValueError: an unsupported ``ord`` or a bad ``axis`` (as TF1).
        NotImplementedError: ``ord=2`` over two axes (the largest singular value),
            which TF computes with an SVD this library does not have.
    """
    if keep_dims is not None:
        if keepdims is not None:
            raise ValueError("Cannot specify both 'keep_dims' and 'keepdims'")
        keepdims = keep_dims
    keepdims = bool(keepdims)
    is_matrix = isinstance(axis, (list, tuple)) and len(axis) == 2
    if is_matrix:
        if axis[0] == axis[1]:
            raise ValueError(f"'axis' must be a tuple of two distinct ints, got {axis}")
        if isinstance(ord, (int, float)) and not isinstance(ord, bool) and ord == 2:
            raise NotImplementedError(
                "norm: the matrix 2-norm (largest singular value) is not implemented"
            )
        if not (ord in _MATRIX_ORDS or ord == 1 or ord == np.inf):
            raise ValueError(
                f"'ord' must be a supported matrix norm in ['euclidean', 'fro', "
                f"1, 2, inf], got {ord}"
            )
    else:
        if axis is not None and not isinstance(axis, (int, np.integer)):
            raise ValueError(
                f"'axis' must be None, an integer, or a tuple of 2 unique integers, got {axis}"
            )
        if not (ord == "euclidean" or _is_positive_number(ord)):
            raise ValueError(f"'ord' must be a supported vector norm, got {ord}")
    with name_scope(name, "norm", [tensor]):
        x = convert_inputs([tensor])[0]
        axes = list(axis) if is_matrix else axis
        if ord in _MATRIX_ORDS or (not is_matrix and ord == 2):
            if x.dtype.is_complex:
                # sqrt(sum |x|^2) as a complex number with no imaginary part, as TF's
                # sqrt(sum x conj(x)).
                moduli = math_ops.square(math_ops.abs(x))
                root = math_ops.sqrt(math_ops.reduce_sum(moduli, axis=axes, keepdims=keepdims))
                return math_ops.complex(root, array_ops.zeros_like(root))
            square = math_ops.square(x)
            return math_ops.sqrt(math_ops.reduce_sum(square, axis=axes, keepdims=keepdims))
        magnitude = math_ops.abs(x)
        if is_matrix:
            # ord=1: the largest column sum; ord=inf: the largest row sum.
            summed_axis, max_axis = (axes[0], axes[1]) if ord == 1 else (axes[1], axes[0])
            sums = math_ops.reduce_sum(magnitude, axis=summed_axis, keepdims=True)
            return math_ops.reduce_max(sums, axis=[summed_axis, max_axis], keepdims=keepdims)
        if ord == np.inf:
            return math_ops.reduce_max(magnitude, axis=axes, keepdims=keepdims)
        if ord == 1:
            return math_ops.reduce_sum(magnitude, axis=axes, keepdims=keepdims)
        p = _scalar(float(ord), magnitude.dtype)
        total = math_ops.reduce_sum(math_ops.pow(magnitude, p), axis=axes, keepdims=keepdims)
        return math_ops.pow(total, _scalar(1.0 / float(ord), magnitude.dtype))
