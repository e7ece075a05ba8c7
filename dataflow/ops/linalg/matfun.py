"""Matrix functions with kernels of their own: ``MatrixExponential`` (``expm``) and
``Lu`` (the pivoted LU factorization), with gradients.

``expm``: scaling and squaring with the degree-13 Pade approximant (Higham 2005):
each matrix is scaled by ``2^-s`` so that its 1-norm is at most ``theta_13 = 5.37``,
``exp`` is approximated by ``q(A)^-1 p(A)``, and the result squared ``s`` times; the
batch is squared together, each matrix only while its own ``s`` lasts. The gradient is
the adjoint Frechet derivative, read off a block matrix: ``expm([[A^H, G], [0, A^H]])``
holds it in its upper-right block (Najfeld and Havel 1995), so second derivatives are
gradients of ``expm`` again.

``lu``: Doolittle elimination with partial pivoting, one column per step, each step
vectorized over the batch and the trailing block (``n`` steps for ``n x n``). Outputs
``lu`` (unit-lower ``L`` below the diagonal, ``U`` on and above it) and ``p``, with
``A[p] = L U``. Gradient (square matrices, as TF): with ``F = L^H L_bar`` strictly below
the diagonal and ``U_bar U^H`` on and above it, ``A_bar[p] = L^-H F U^-H``.
"""

from __future__ import annotations

from typing import Any

from ...framework import dtypes, registry
from ...framework.graph import Operation, Tensor
from ...framework.tensor_shape import TensorShape
from .. import array as array_ops
from .. import math as math_ops
from ..build import apply_op, apply_op_n, convert_inputs
from ..rules import is_float
from .contraction import einsum, matrix_transpose, require_dtype
from .decomp import matrix_solve, matrix_triangular_solve, square_dims
from .diag import eye, matrix_band_part, matrix_diag_part, matrix_set_diag
from .products import matmul

# Pade(13) coefficients b_0 .. b_13 of exp (Higham 2005, table 10.4).
_PADE13 = (
    64764752532480000.0,
    32382376266240000.0,
    7771770303897600.0,
    1187353796428800.0,
    129060195264000.0,
    10559470521600.0,
    670442572800.0,
    33522128640.0,
    1323241920.0,
    40840800.0,
    960960.0,
    16380.0,
    182.0,
    1.0,
)
_THETA13 = 5.371920351148152


# --- MatrixExponential ---------------------------------------------------------------------
def _infer_square_float(op: Operation) -> list:
    dtype = require_dtype(op, is_float, "float or complex")
    batch, n = square_dims(op.inputs[0])
    if batch.ndims is None:
        return [(dtype, TensorShape(None))]
    return [(dtype, batch.concatenate(TensorShape([n, n])))]


def _expm_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    b = _PADE13

    def expm(a: Any) -> Any:
        work = a.astype(xp.float32) if a.dtype == xp.float16 else a
        n = work.shape[-1]
        eye = xp.eye(n, dtype=work.dtype)
        norm = xp.abs(work).sum(axis=-2).max(axis=-1) if n else xp.zeros(work.shape[:-2])
        safe = xp.maximum(norm / _THETA13, 1e-300)
        s = xp.maximum(0, xp.ceil(xp.log2(safe))).astype(xp.int64)
        scaled = work / (2.0**s)[..., None, None].astype(work.dtype)
        a2 = scaled @ scaled
        a4 = a2 @ a2
        a6 = a4 @ a2
        u = scaled @ (
            a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2)
            + b[7] * a6
            + b[5] * a4
            + b[3] * a2
            + b[1] * eye
        )
        v = (
            a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2)
            + b[6] * a6
            + b[4] * a4
            + b[2] * a2
            + b[0] * eye
        )
        r = xp.linalg.solve(v - u, v + u)
        for k in range(int(s.max()) if s.size else 0):
            squared = r @ r
            r = xp.where((s > k)[..., None, None], squared, r)
        return r.astype(a.dtype, copy=False)

    return expm


def _expm_grad(op: Operation, grad: Tensor) -> list:
    a = op.inputs[0]
    a_h = matrix_transpose(a, conjugate=True)
    top = array_ops.concat([a_h, grad], -1)
    bottom = array_ops.concat([array_ops.zeros_like(a_h), a_h], -1)
    block = expm(array_ops.concat([top, bottom], -2))
    n = array_ops.shape(a)[-1]
    rank = array_ops.size(array_ops.shape(a))
    begin = array_ops.concat(
        [array_ops.zeros([rank - 1], dtypes.int32), array_ops.reshape(n, [1])], 0
    )
    size = array_ops.concat([array_ops.fill([rank - 2], -1), array_ops.stack([n, n])], 0)
    return [array_ops.slice_(block, begin, size)]


registry.register(
    registry.OpDef("MatrixExponential", _infer_square_float, _expm_kernel, _expm_grad)
)


def expm(input: Any, name: str | None = None) -> Tensor:
    """The matrix exponentials ``sum_k A^k / k!`` of the square matrices in the last two
    dimensions of ``input`` (float or complex)."""
    x = convert_inputs([input])[0]
    return apply_op("MatrixExponential", [x], {"T": x.dtype}, name=name)


# --- MatrixSquareRoot -----------------------------------------------------------------
def _denman_beavers(xp: Any, a: Any) -> Any:
    """The principal square roots of the (non-empty) matrices ``a``."""
    n = a.shape[-1]
    eps = xp.finfo(a.dtype).eps
    y = a.copy()
    z = xp.broadcast_to(xp.eye(n, dtype=a.dtype), a.shape).copy()
    for _ in range(100):
        _, log_y = xp.linalg.slogdet(y)
        _, log_z = xp.linalg.slogdet(z)
        mu = xp.exp(-(log_y + log_z) / (2 * n))[..., None, None].astype(a.dtype)
        y_inv, z_inv = xp.linalg.inv(y), xp.linalg.inv(z)
        y_next = 0.5 * (mu * y + z_inv / mu)
        z_next = 0.5 * (mu * z + y_inv / mu)
        change = xp.abs(y_next - y).max()
        y, z = y_next, z_next
        if not bool(change > 10 * n * eps * max(float(xp.abs(y).max()), 1.0)):
            break
    return y


def _sqrtm_kernel(ctx: Any, attrs: dict) -> Any:
    # Denman-Beavers: Y <- (Y + Z^-1) / 2, Z <- (Z + Y^-1) / 2 from Y = A, Z = I converge
    # (quadratically) to sqrt(A) and its inverse, for matrices with no eigenvalue on the
    # closed negative real axis; each step is scaled by |det Y det Z|^(-1/2n), which
    # keeps early steps from wandering. The batch iterates together until every matrix
    # has converged.
    xp = ctx.xp

    def sqrtm(a: Any) -> Any:
        if a.size == 0:
            return a.copy()
        work = a.astype(xp.float32) if a.dtype == xp.float16 else a
        return _denman_beavers(xp, work).astype(a.dtype, copy=False)

    return sqrtm


def _sqrtm_grad(op: Operation, grad: Tensor) -> list:
    # A = R R, so dA = R dR + dR R; the gradient G_A solves R^T G_A + G_A R^T = G (TF's
    # rule), here as one linear system of size n^2 built with Kronecker products.
    r = op.outputs[0]
    r_t = matrix_transpose(r)
    n = array_ops.shape(r)[-1]
    identity = eye(n, dtype=r.dtype)
    kron = math_ops.add(
        einsum("...ij,kl->...ikjl", r_t, identity), einsum("ij,...kl->...ikjl", identity, r)
    )
    batch = array_ops.shape(r)[:-2]
    squared = array_ops.reshape(math_ops.multiply(n, n), [1])
    system = array_ops.reshape(kron, array_ops.concat([batch, squared, squared], 0))
    rhs = array_ops.reshape(grad, array_ops.concat([batch, squared, [1]], 0))
    solved = matrix_solve(system, rhs)
    return [array_ops.reshape(solved, array_ops.shape(r))]


registry.register(
    registry.OpDef("MatrixSquareRoot", _infer_square_float, _sqrtm_kernel, _sqrtm_grad)
)


def sqrtm(input: Any, name: str | None = None) -> Tensor:
    """The principal square roots ``R`` (``R R = A``, eigenvalues with positive real
    parts) of the square matrices of ``input``, which must have no eigenvalue on the
    closed negative real axis (else the result is not finite)."""
    x = convert_inputs([input])[0]
    return apply_op("MatrixSquareRoot", [x], {"T": x.dtype}, name=name)


# --- MatrixLogarithm ------------------------------------------------------------------
def _infer_logm(op: Operation) -> list:
    x = op.inputs[0]
    if not x.dtype.is_complex:
        raise TypeError(
            f"'MatrixLogarithm' needs complex64 or complex128 inputs, got {x.dtype.name}"
        )
    return _infer_square_float(op)


def _logm_kernel(ctx: Any, attrs: dict) -> Any:
    # Inverse scaling and squaring: square roots (Denman-Beavers) until every matrix is
    # within 1/4 of the identity in the 1-norm, then log(I + X) by its series, 48 terms
    # (0.25^48 is below double rounding), times 2^k.
    xp = ctx.xp

    def logm(a: Any) -> Any:
        if a.size == 0:
            return a.copy()
        n = a.shape[-1]
        eye = xp.eye(n, dtype=a.dtype)
        root, halvings = a.copy(), 0
        while halvings < 60 and float(xp.abs(root - eye).sum(axis=-2).max()) > 0.25:
            root = _denman_beavers(xp, root)
            halvings += 1
        x = root - eye
        term, total = x, x.copy()
        for k in range(2, 49):
            term = -(term @ x)
            total = total + term / k
        return (total * (2.0**halvings)).astype(a.dtype, copy=False)

    return logm


registry.register(registry.OpDef("MatrixLogarithm", _infer_logm, _logm_kernel, None))


def logm(input: Any, name: str | None = None) -> Tensor:
    """The principal logarithms of the complex square matrices of ``input`` (no
    eigenvalue on the closed negative real axis); no gradient, as TF."""
    x = convert_inputs([input])[0]
    return apply_op("MatrixLogarithm", [x], {"T": x.dtype}, name=name)


# --- Lu --------------------------------------------------------------------------------
def _infer_lu(op: Operation) -> list:
    dtype = require_dtype(op, is_float, "float or complex")
    batch, n = square_dims(op.inputs[0])
    index = op.attrs["output_idx_type"]
    if batch.ndims is None:
        return [(dtype, TensorShape(None)), (index, TensorShape(None))]
    return [
        (dtype, batch.concatenate(TensorShape([n, n]))),
        (index, batch.concatenate(TensorShape([n]))),
    ]


def _lu_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    index_dtype = attrs["output_idx_type"].as_numpy_dtype

    def lu(a: Any) -> tuple:
        n = a.shape[-1]
        batch = a.shape[:-2]
        work = a.reshape((-1, n, n)).copy()
        count = work.shape[0]
        perm = xp.broadcast_to(xp.arange(n), (count, n)).copy()
        rows = xp.arange(count)
        for k in range(n):
            pivot = k + xp.argmax(xp.abs(work[:, k:, k]), axis=1)
            swap_rows = work[rows, pivot].copy()
            work[rows, pivot] = work[:, k]
            work[:, k] = swap_rows
            swap_perm = perm[rows, pivot].copy()
            perm[rows, pivot] = perm[:, k]
            perm[:, k] = swap_perm
            diag = work[:, k, k]
            safe = xp.where(diag == 0, 1, diag)
            work[:, k + 1 :, k] = work[:, k + 1 :, k] / safe[:, None]
            work[:, k + 1 :, k + 1 :] -= work[:, k + 1 :, k, None] * work[:, k, None, k + 1 :]
        return work.reshape(a.shape), perm.reshape((*batch, n)).astype(index_dtype)

    return lu


def _lu_grad(op: Operation, grad_lu: Tensor, grad_p: Tensor) -> list:
    lu_out, perm = op.outputs
    unit = array_ops.ones_like(matrix_diag_part(lu_out))
    lower = matrix_set_diag(matrix_band_part(lu_out, -1, 0), unit)
    upper = matrix_band_part(lu_out, 0, -1)
    grad_l = math_ops.subtract(matrix_band_part(grad_lu, -1, 0), matrix_band_part(grad_lu, 0, 0))
    grad_u = matrix_band_part(grad_lu, 0, -1)
    strict = math_ops.subtract(
        matrix_band_part(matmul(lower, grad_l, adjoint_a=True), -1, 0),
        matrix_band_part(matmul(lower, grad_l, adjoint_a=True), 0, 0),
    )
    middle = math_ops.add(strict, matrix_band_part(matmul(grad_u, upper, adjoint_b=True), 0, -1))
    left = matrix_triangular_solve(lower, middle, lower=True, adjoint=True)
    grad_permuted = matrix_transpose(
        matrix_triangular_solve(upper, matrix_transpose(left, conjugate=True), lower=False),
        conjugate=True,
    )
    # A[p] = L U: row i of A's gradient is row (p^-1)[i] of grad_permuted, P^T grad.
    n = array_ops.shape(perm)[-1]
    permutation = array_ops.one_hot(perm, n, dtype=grad_permuted.dtype)
    return [matmul(permutation, grad_permuted, adjoint_a=True)]


registry.register(registry.OpDef("Lu", _infer_lu, _lu_kernel, _lu_grad))


def lu(input: Any, output_idx_type: Any = dtypes.int32, name: str | None = None) -> Any:
    """The pivoted LU factorizations ``A[p] = L U`` of the square matrices of ``input``.

    Returns:
        ``(lu, p)``: ``L`` (unit diagonal, not stored) below the diagonal of ``lu`` and
        ``U`` on and above it; ``p`` the row permutation (``output_idx_type``).
    """
    x = convert_inputs([input])[0]
    index = dtypes.as_dtype(output_idx_type)
    op = apply_op_n("Lu", [x], {"T": x.dtype, "output_idx_type": index}, name=name)
    return op.outputs[0], op.outputs[1]
