"""Matrix factorizations with several outputs: ``Svd``, ``Qr``, ``SelfAdjointEigV2``
(``eigh``) and ``LogMatrixDeterminant`` (``slogdet``), over batches in the last two
dimensions, with TF's gradients.

Kernels call ``xp.linalg`` (LAPACK on numpy, cuSOLVER on cupy); float16 goes through
float32 (``lapack``). ``Svd`` returns ``v``, not numpy's ``v^H``; its singular values
are real (``float64`` for ``complex128``), while ``eigh``'s eigenvalues have the
input's dtype (both as TF).

Gradients (real dtypes; built from matmul, diagonal and band ops, so second order works):

* ``eigh``: ``A_bar = V (diag(e_bar) + F o (V^H V_bar)) V^H`` with ``F_ij = 1 / (e_j -
  e_i)`` off the diagonal, then symmetrized onto the lower triangle the op reads;
* ``svd`` (``m <= n``, else on the transpose): ``U [diag(s_bar) + (F o (U^H U_bar -
  U_bar^H U)) S + S (F o (V^H V_bar - V_bar^H V))] V^H`` with ``F_ij = 1 / (s_j^2 -
  s_i^2)``, plus ``U S^-1 V_bar^H (I - V V^H)`` for the part of ``V`` outside the
  square block (Townsend 2016); ``full_matrices`` only for square or ``|m - n| <= 1``
  matrices, as TF;
* ``qr`` (``m >= n``, reduced, as TF1): ``Q (R_bar + M) R^-H + (Q_bar - Q Q^H Q_bar)
  R^-H`` with ``M`` the lower triangle of ``Q^H Q_bar - Q_bar^H Q + R R_bar^H - R_bar
  R^H``;
* ``slogdet``: ``log_abs_det_bar A^-H``; the sign has no gradient.

``1 / (x_j - x_i)`` is taken as ``x / (x^2 + 1e-20)`` so repeated values give zeros,
not NaN (TF's rule).
"""

from __future__ import annotations

from typing import Any

from ...framework import dtypes, registry
from ...framework.graph import Operation, Tensor
from ...framework.tensor_shape import TensorShape
from .. import array as array_ops
from .. import math as math_ops
from ..build import apply_op_n, convert_inputs
from ..parallel_products import per_matrix
from ..rules import is_float
from .contraction import lapack, matrix_transpose, require_dtype, require_rank_at_least
from .decomp import matrix_inverse, matrix_triangular_solve, square_dims
from .diag import matrix_band_part, matrix_diag, matrix_diag_part, matrix_set_diag
from .products import matmul


# --- helpers ---------------------------------------------------------------------------
def _safe_reciprocal(x: Tensor) -> Tensor:
    return math_ops.multiply(x, math_ops.reciprocal(math_ops.add(math_ops.square(x), 1e-20)))


def _pair_reciprocals(values: Tensor) -> Tensor:
    """``F_ij = 1 / (values_j - values_i)`` off the diagonal, 0 on it."""
    diff = math_ops.subtract(array_ops.expand_dims(values, -2), array_ops.expand_dims(values, -1))
    return matrix_set_diag(_safe_reciprocal(diff), array_ops.zeros_like(values))


def _adj(x: Tensor) -> Tensor:
    return matrix_transpose(x, conjugate=True)


_REAL_PARTS = {dtypes.complex64: dtypes.float32, dtypes.complex128: dtypes.float64}


def _real_float(op: Operation) -> dtypes.DType:
    return require_dtype(op, is_float, "float or complex")


# --- SelfAdjointEigV2 --------------------------------------------------------------------
def _infer_eigh(op: Operation) -> list:
    dtype = _real_float(op)
    batch, n = square_dims(op.inputs[0])
    if batch.ndims is None:
        return [(dtype, TensorShape(None)), (dtype, TensorShape(None))]
    vectors = batch.concatenate(TensorShape([n, n])) if op.attrs["compute_v"] else TensorShape([0])
    return [(dtype, batch.concatenate(TensorShape([n]))), (dtype, vectors)]


def _eigh_kernel(ctx: Any, attrs: dict) -> Any:
    xp, dtype = ctx.xp, attrs["T"]
    eigh = lapack(xp, xp.linalg.eigh, dtype)
    np_dtype = dtype.as_numpy_dtype
    if attrs["compute_v"]:

        def decompose(a: Any) -> tuple:
            e, v = eigh(a)
            return e.astype(np_dtype), v

        return decompose
    eigvalsh = lapack(xp, xp.linalg.eigvalsh, dtype)
    return lambda a: (eigvalsh(a).astype(np_dtype), xp.zeros((0,), np_dtype))


def _eigh_grad(op: Operation, grad_e: Tensor, grad_v: Tensor) -> list:
    e = op.outputs[0]
    if op.attrs["compute_v"]:
        v = op.outputs[1]
        inner = matrix_diag(grad_e)
        if grad_v is not None:
            inner = math_ops.add(
                inner, math_ops.multiply(_pair_reciprocals(e), matmul(v, grad_v, adjoint_a=True))
            )
    else:
        _, v = self_adjoint_eig(op.inputs[0])
        inner = matrix_diag(grad_e)
    grad_a = matmul(v, matmul(inner, v, adjoint_b=True))
    grad_a = matrix_band_part(math_ops.add(grad_a, _adj(grad_a)), -1, 0)
    return [matrix_set_diag(grad_a, math_ops.multiply(matrix_diag_part(grad_a), 0.5))]


registry.register(registry.OpDef("SelfAdjointEigV2", _infer_eigh, _eigh_kernel, _eigh_grad))


def self_adjoint_eig(tensor: Any, name: str | None = None) -> tuple[Tensor, Tensor]:
    """Eigenvalues (ascending) and eigenvectors (columns) of the Hermitian matrices in
    the last two dimensions of ``tensor``; only the lower triangle is read.

    Returns:
        ``(e, v)``: ``e`` ``[..., N]`` (real values in ``tensor``'s dtype), ``v``
        ``[..., N, N]``, with ``A = V diag(e) V^H``.
    """
    x = convert_inputs([tensor])[0]
    op = apply_op_n("SelfAdjointEigV2", [x], {"compute_v": True, "T": x.dtype}, name=name)
    return op.outputs[0], op.outputs[1]


def self_adjoint_eigvals(tensor: Any, name: str | None = None) -> Tensor:
    """The eigenvalues (ascending) of the Hermitian matrices of ``tensor``."""
    x = convert_inputs([tensor])[0]
    op = apply_op_n("SelfAdjointEigV2", [x], {"compute_v": False, "T": x.dtype}, name=name)
    return op.outputs[0]


# --- Svd -----------------------------------------------------------------------------------
def _infer_svd(op: Operation) -> list:
    dtype = _real_float(op)
    real = _REAL_PARTS.get(dtype, dtype)
    dims = require_rank_at_least(op.inputs[0], 2)
    if dims is None:
        return [(real, TensorShape(None)), (dtype, TensorShape(None)), (dtype, TensorShape(None))]
    batch, m, n = list(dims[:-2]), dims[-2], dims[-1]
    p = None if m is None or n is None else min(m, n)
    if not op.attrs["compute_uv"]:
        empty = (dtype, TensorShape([0]))
        return [(real, TensorShape([*batch, p])), empty, empty]
    cols_u = m if op.attrs["full_matrices"] else p
    cols_v = n if op.attrs["full_matrices"] else p
    return [
        (real, TensorShape([*batch, p])),
        (dtype, TensorShape([*batch, m, cols_u])),
        (dtype, TensorShape([*batch, n, cols_v])),
    ]


def _svd_kernel(ctx: Any, attrs: dict) -> Any:
    xp, dtype = ctx.xp, attrs["T"]
    np_dtype = dtype.as_numpy_dtype
    real = _REAL_PARTS.get(dtype, dtype).as_numpy_dtype
    full = bool(attrs["full_matrices"])
    svd = per_matrix(xp, xp.linalg.svd)

    def run(a: Any) -> tuple:
        if not attrs["compute_uv"]:
            s = svd(a, compute_uv=False)
            empty = xp.zeros((0,), np_dtype)
            return s.astype(real), empty, empty
        u, s, vh = svd(a, full_matrices=full)
        v = xp.conj(xp.swapaxes(vh, -1, -2))
        return s.astype(real), u.astype(np_dtype, copy=False), v.astype(np_dtype, copy=False)

    if dtype == dtypes.float16:
        f32 = xp.float32
        return lambda a: tuple(t.astype(np_dtype) for t in run(a.astype(f32)))
    return run


def _svd_grad(op: Operation, grad_s: Tensor, grad_u: Tensor, grad_v: Tensor) -> list:
    a = op.inputs[0]
    s = op.outputs[0]
    if not op.attrs["compute_uv"]:
        _, u, v = svd(a, full_matrices=False, compute_uv=True)
        return [matmul(u, matmul(matrix_diag(grad_s), v, adjoint_b=True))]
    u, v = op.outputs[1], op.outputs[2]
    dims = a.shape.as_list() if a.shape.ndims is not None else None
    if dims is None or dims[-2] is None or dims[-1] is None:
        raise NotImplementedError("svd gradient needs the matrices' dimensions at build time")
    m, n = dims[-2], dims[-1]
    if op.attrs["full_matrices"] and abs(m - n) > 1:
        raise NotImplementedError(
            f"svd gradient with full_matrices=True needs |m - n| <= 1, got m={m} and n={n}"
        )
    grad_u = grad_u if grad_u is not None else array_ops.zeros_like(u)
    grad_v = grad_v if grad_v is not None else array_ops.zeros_like(v)
    if m > n:  # work on the transpose: A^T = V S U^T
        u, v, grad_u, grad_v = v, u, grad_v, grad_u
        m, n = n, m
    if op.attrs["full_matrices"] and m != n:
        u, grad_u = u[..., :, :m], grad_u[..., :, :m]
    v1, grad_v1 = v[..., :, :m], grad_v[..., :, :m]
    f = _pair_reciprocals(math_ops.square(s))
    s_mat = matrix_diag(s)
    f_u = math_ops.multiply(f, matmul(u, grad_u, adjoint_a=True))
    f_v = math_ops.multiply(f, matmul(v1, grad_v1, adjoint_a=True))
    core = math_ops.add_n(
        [
            matrix_diag(grad_s),
            matmul(math_ops.add(f_u, _adj(f_u)), s_mat),
            matmul(s_mat, math_ops.add(f_v, _adj(f_v))),
        ]
    )
    grad_a = matmul(u, matmul(core, v1, adjoint_b=True))
    if m != n:
        gv1t = _adj(grad_v1)
        rest = math_ops.subtract(gv1t, matmul(matmul(gv1t, v1), v1, adjoint_b=True))
        if op.attrs["full_matrices"]:
            v2, grad_v2 = v[..., :, m:n], grad_v[..., :, m:n]
            rest = math_ops.subtract(
                rest, matmul(matmul(v1, grad_v2, adjoint_a=True), v2, adjoint_b=True)
            )
        s_inv = matrix_diag(_safe_reciprocal(s))
        grad_a = math_ops.add(grad_a, matmul(matmul(u, s_inv), rest))
    if dims[-2] > dims[-1]:
        grad_a = _adj(grad_a)
    return [grad_a]


registry.register(registry.OpDef("Svd", _infer_svd, _svd_kernel, _svd_grad))


def svd(
    tensor: Any, full_matrices: bool = False, compute_uv: bool = True, name: str | None = None
) -> Any:
    """The singular value decompositions ``A = U diag(s) V^H`` of the matrices in the last
    two dimensions of ``tensor``.

    Args:
        tensor: float or complex ``[..., M, N]``.
        full_matrices: ``U`` ``[..., M, M]`` and ``V`` ``[..., N, N]`` rather than their
            first ``P = min(M, N)`` columns.
        compute_uv: also return ``U`` and ``V``.
        name: the op name.

    Returns:
        ``s`` ``[..., P]`` (descending, of ``tensor``'s dtype), and with ``compute_uv``
        the tuple ``(s, u, v)``.
    """
    x = convert_inputs([tensor])[0]
    attrs = {"compute_uv": bool(compute_uv), "full_matrices": bool(full_matrices), "T": x.dtype}
    op = apply_op_n("Svd", [x], attrs, name=name)
    if compute_uv:
        return op.outputs[0], op.outputs[1], op.outputs[2]
    return op.outputs[0]


# --- Qr ------------------------------------------------------------------------------------
def _infer_qr(op: Operation) -> list:
    dtype = _real_float(op)
    dims = require_rank_at_least(op.inputs[0], 2)
    if dims is None:
        return [(dtype, TensorShape(None))] * 2
    batch, m, n = list(dims[:-2]), dims[-2], dims[-1]
    p = None if m is None or n is None else min(m, n)
    if op.attrs["full_matrices"]:
        return [(dtype, TensorShape([*batch, m, m])), (dtype, TensorShape([*batch, m, n]))]
    return [(dtype, TensorShape([*batch, m, p])), (dtype, TensorShape([*batch, p, n]))]


def _qr_kernel(ctx: Any, attrs: dict) -> Any:
    xp, dtype = ctx.xp, attrs["T"]
    mode = "complete" if attrs["full_matrices"] else "reduced"
    qr = per_matrix(xp, xp.linalg.qr)

    def run(a: Any) -> tuple:
        work = a.astype(xp.float32) if dtype == dtypes.float16 else a
        q, r = qr(work, mode=mode)
        return q.astype(a.dtype, copy=False), r.astype(a.dtype, copy=False)

    return run


def _right_solve_adjoint(x: Tensor, r: Tensor) -> Tensor:
    """``x R^-H`` for upper-triangular ``R``."""
    return _adj(matrix_triangular_solve(r, _adj(x), lower=False, adjoint=False))


def _qr_grad(op: Operation, grad_q: Tensor, grad_r: Tensor) -> list:
    a = op.inputs[0]
    q, r = op.outputs
    dims = a.shape.as_list() if a.shape.ndims is not None else None
    if (
        dims is None
        or dims[-2] is None
        or dims[-1] is None
        or dims[-2] < dims[-1]
        or (op.attrs["full_matrices"] and dims[-2] != dims[-1])
    ):
        raise NotImplementedError(
            "QrGrad not implemented when ncols > nrows or full_matrices is true and "
            f"ncols != nrows (or the dimensions are unknown); input shape {a.shape}"
        )
    grad_q = grad_q if grad_q is not None else array_ops.zeros_like(q)
    grad_r = grad_r if grad_r is not None else array_ops.zeros_like(r)
    qdq = matmul(q, grad_q, adjoint_a=True)
    rdr = matmul(r, grad_r, adjoint_b=True)
    lower = matrix_band_part(
        math_ops.add(math_ops.subtract(qdq, _adj(qdq)), math_ops.subtract(rdr, _adj(rdr))), -1, 0
    )
    first = matmul(q, math_ops.add(grad_r, _right_solve_adjoint(lower, r)))
    second = _right_solve_adjoint(math_ops.subtract(grad_q, matmul(q, qdq)), r)
    return [math_ops.add(first, second)]


registry.register(registry.OpDef("Qr", _infer_qr, _qr_kernel, _qr_grad))


def qr(input: Any, full_matrices: bool = False, name: str | None = None) -> tuple[Tensor, Tensor]:
    """The QR decompositions ``A = Q R`` of the matrices in the last two dimensions.

    Args:
        input: float or complex ``[..., M, N]``.
        full_matrices: ``Q`` ``[..., M, M]`` and ``R`` ``[..., M, N]`` rather than the
            reduced ``[..., M, P]`` and ``[..., P, N]`` (``P = min(M, N)``).
        name: the op name.

    Returns:
        ``(q, r)``: orthonormal columns and upper-triangular factors.
    """
    x = convert_inputs([input])[0]
    attrs = {"full_matrices": bool(full_matrices), "T": x.dtype}
    op = apply_op_n("Qr", [x], attrs, name=name)
    return op.outputs[0], op.outputs[1]


# --- LogMatrixDeterminant ------------------------------------------------------------------
def _infer_slogdet(op: Operation) -> list:
    dtype = _real_float(op)
    batch, _ = square_dims(op.inputs[0])
    return [(dtype, batch), (dtype, batch)]


def _slogdet_kernel(ctx: Any, attrs: dict) -> Any:
    xp, dtype = ctx.xp, attrs["T"]
    np_dtype = dtype.as_numpy_dtype
    slogdet = per_matrix(xp, xp.linalg.slogdet)

    def run(a: Any) -> tuple:
        work = a.astype(xp.float32) if dtype == dtypes.float16 else a
        sign, logdet = slogdet(work)
        return xp.asarray(sign).astype(np_dtype), xp.asarray(logdet).astype(np_dtype)

    return run


def _slogdet_grad(op: Operation, grad_sign: Tensor, grad_logdet: Tensor) -> list:
    inverse_h = matrix_inverse(op.inputs[0], adjoint=True)
    weights = array_ops.expand_dims(array_ops.expand_dims(grad_logdet, -1), -1)
    return [math_ops.multiply(weights, inverse_h)]


registry.register(
    registry.OpDef("LogMatrixDeterminant", _infer_slogdet, _slogdet_kernel, _slogdet_grad)
)


def slogdet(input: Any, name: str | None = None) -> tuple[Tensor, Tensor]:
    """``(sign, log|det|)`` of the square matrices in the last two dimensions: the
    determinant is ``sign * exp(log|det|)``, without overflow."""
    x = convert_inputs([input])[0]
    op = apply_op_n("LogMatrixDeterminant", [x], {"T": x.dtype}, name=name)
    return op.outputs[0], op.outputs[1]
