"""Matrix products: ``matmul`` (and the ``@`` operator) and ``matvec``.

Primitives (one record each): ``MatMul`` (rank 2, transposes bound in the kernel
factory: it is on the hot path of every dense layer, and ``xp.dot`` reads a transposed
view without copying it) and ``BatchMatMulV2`` (rank >= 2, numpy broadcasting of the
batch dimensions; adjoint flags conjugate complex matrices). ``matmul`` picks one of
them; a plain transpose of complex matrices goes through ``matrix_transpose`` first.
``matvec`` is an einsum.

The gradient of ``a @ b`` is a pair of matmuls (``_matmul_grad_pair``) with the flags
rearranged, so second derivatives are matmuls again. The batch dimensions ``a`` or
``b`` were broadcast along are summed by the gradient pass (one ``SumToShape``), except
for a single matrix against a batch (a dense layer applied to a sequence), whose
gradient contracts the batch dimensions inside one einsum (one gemm) instead.
"""

from __future__ import annotations

import string
from typing import Any

from ...framework import dtypes, registry
from ...framework.graph import Operation, Tensor
from ...framework.operation import register_operator
from ...framework.scopes import name_scope
from ...framework.tensor_shape import TensorShape
from ..build import apply_op, convert_inputs
from ..parallel_products import parallel_dot, parallel_matmul
from .contraction import (
    broadcast_batch,
    check_equal_dims,
    einsum,
    is_matmul_dtype,
    matrix_t,
    matrix_transpose,
    require_dtype,
    require_rank_at_least,
)


# --- MatMul (rank 2) ----------------------------------------------------------------------
def _infer_matmul(op: Operation) -> list:
    dtype = require_dtype(op, is_matmul_dtype, "numeric")
    a, b = op.inputs
    dims = []
    for t in (a, b):
        d = t.shape.as_tuple()
        if d is not None and len(d) != 2:
            raise ValueError(f"Shape must be rank 2 but is rank {len(d)} (input '{t.name}')")
        dims.append(d if d is not None else (None, None))
    (a0, a1), (b0, b1) = dims
    m, k = (a1, a0) if op.attrs["transpose_a"] else (a0, a1)
    k2, n = (b1, b0) if op.attrs["transpose_b"] else (b0, b1)
    check_equal_dims(k, k2)
    return [(dtype, TensorShape([m, n]))]


def _matmul_kernel(ctx: Any, attrs: dict) -> Any:
    # Hot path: no per-call attribute logic; ``xp.dot`` on 2-D arrays calls BLAS gemm
    # directly and reads a transposed view without copying it.
    dot = parallel_dot(ctx.xp)
    ta, tb = attrs["transpose_a"], attrs["transpose_b"]
    if ta and tb:
        return lambda a, b: dot(a.T, b.T)
    if ta:
        return lambda a, b: dot(a.T, b)
    if tb:
        return lambda a, b: dot(a, b.T)
    return dot


def _matmul_grad_pair(a: Tensor, b: Tensor, grad: Tensor, ta: bool, tb: bool) -> list:
    """Gradients of ``op(a) @ op(b)`` (``op`` the adjoint when flagged), as matmuls."""
    if not ta and not tb:
        return [matmul(grad, b, adjoint_b=True), matmul(a, grad, adjoint_a=True)]
    if not ta and tb:
        return [matmul(grad, b), matmul(grad, a, adjoint_a=True)]
    if ta and not tb:
        return [matmul(b, grad, adjoint_b=True), matmul(a, grad)]
    return [
        matmul(b, grad, adjoint_a=True, adjoint_b=True),
        matmul(grad, a, adjoint_a=True, adjoint_b=True),
    ]


def _matmul_grad(op: Operation, grad: Tensor) -> list:
    a, b = op.inputs
    ta, tb = op.attrs["transpose_a"], op.attrs["transpose_b"]
    if a.dtype.is_complex and (ta or tb):
        # MatMul's flags are plain transposes, not adjoints: TF's rule for complex
        # matrices is the real rule (transposes only) on conj(a) and conj(b).
        a, b = apply_op("Conj", [a]), apply_op("Conj", [b])
        if not ta:
            return [matmul(grad, b), matmul(grad, a, transpose_a=True)]
        if not tb:
            return [matmul(b, grad, transpose_b=True), matmul(a, grad)]
        return [
            matmul(b, grad, transpose_a=True, transpose_b=True),
            matmul(grad, a, transpose_a=True, transpose_b=True),
        ]
    return _matmul_grad_pair(a, b, grad, ta, tb)


registry.register(registry.OpDef("MatMul", _infer_matmul, _matmul_kernel, _matmul_grad))


# --- BatchMatMulV2 (rank >= 2, broadcasting batch dimensions) -----------------------------
def _infer_batch_matmul(op: Operation) -> list:
    dtype = require_dtype(op, is_matmul_dtype, "numeric")
    a, b = op.inputs
    da, db = require_rank_at_least(a, 2), require_rank_at_least(b, 2)
    batch = broadcast_batch(a, b, 2, 2)
    a0, a1 = da[-2:] if da is not None else (None, None)
    b0, b1 = db[-2:] if db is not None else (None, None)
    m, k = (a1, a0) if op.attrs["adj_x"] else (a0, a1)
    k2, n = (b1, b0) if op.attrs["adj_y"] else (b0, b1)
    check_equal_dims(k, k2)
    return [(dtype, batch.concatenate(TensorShape([m, n])))]


def _batch_matmul_kernel(ctx: Any, attrs: dict) -> Any:
    matmul_ = parallel_matmul(ctx.xp)
    adj_x, adj_y = attrs["adj_x"], attrs["adj_y"]
    tx = matrix_t(ctx.xp, attrs["T"], True)
    if adj_x and adj_y:
        return lambda a, b: matmul_(tx(a), tx(b))
    if adj_x:
        return lambda a, b: matmul_(tx(a), b)
    if adj_y:
        return lambda a, b: matmul_(a, tx(b))
    return matmul_


def _batch_matmul_grad(op: Operation, grad: Tensor) -> list:
    a, b = op.inputs
    ta, tb = op.attrs["adj_x"], op.attrs["adj_y"]
    # The batch dimensions a or b were broadcast along are summed by the gradient pass.
    grads = _matmul_grad_pair(a, b, grad, ta, tb)
    if a.dtype.is_complex:
        return grads
    # A single matrix against a batch (a dense layer on a sequence): contract the batch
    # dimensions inside one einsum (one gemm) instead of a batched product and a sum.
    ra, rb = a.shape.rank, b.shape.rank
    if ra == 2 and rb is not None and rb > 2:
        z = string.ascii_uppercase[: rb - 2]
        grads[0] = einsum(f"{z}mn,{z}{'nk' if tb else 'kn'}->{'km' if ta else 'mk'}", grad, b)
    if rb == 2 and ra is not None and ra > 2:
        z = string.ascii_uppercase[: ra - 2]
        grads[1] = einsum(f"{z}{'km' if ta else 'mk'},{z}mn->{'nk' if tb else 'kn'}", a, grad)
    return grads


registry.register(
    registry.OpDef("BatchMatMulV2", _infer_batch_matmul, _batch_matmul_kernel, _batch_matmul_grad)
)


def matmul(
    a: Any,
    b: Any,
    transpose_a: bool = False,
    transpose_b: bool = False,
    adjoint_a: bool = False,
    adjoint_b: bool = False,
    a_is_sparse: bool = False,
    b_is_sparse: bool = False,
    output_type: Any = None,
    grad_a: bool = False,
    grad_b: bool = False,
    name: str | None = None,
) -> Tensor:
    """Multiplies matrix ``a`` by matrix ``b``, producing ``a @ b``.

    Inputs of rank 2 give a ``MatMul``; inputs of higher rank are batches of matrices
    in their last two dimensions, whose leading (batch) dimensions broadcast as in
    numpy (TF2's ``BatchMatMulV2``).

    Args:
        a: a tensor of rank >= 2, float, int or complex.
        b: a tensor of the dtype of ``a`` and rank >= 2.
        transpose_a: use the transpose of ``a``'s matrices.
        transpose_b: use the transpose of ``b``'s matrices.
        adjoint_a: use the conjugate transpose of ``a``'s matrices.
        adjoint_b: use the conjugate transpose of ``b``'s matrices.
        a_is_sparse: a hint, ignored.
        b_is_sparse: a hint, ignored.
        output_type: must be ``None`` or the dtype of the inputs.
        grad_a: ignored (TF2 internal).
        grad_b: ignored (TF2 internal).
        name: the op name.

    Returns:
        A tensor of shape ``batch + [M, N]``.

    Raises:
        ValueError: the inner dimensions differ ("Dimensions must be equal, but are 3
            and 4"), a rank is below 2, the batch dimensions do not broadcast, or both
            a transpose and an adjoint flag are set for one input.
    """
    if transpose_a and adjoint_a:
        raise ValueError("Only one of transpose_a and adjoint_a can be True.")
    if transpose_b and adjoint_b:
        raise ValueError("Only one of transpose_b and adjoint_b can be True.")
    a, b = convert_inputs([a, b])
    if output_type is not None and dtypes.as_dtype(output_type) != a.dtype:
        raise TypeError(
            f"matmul: output_type {dtypes.as_dtype(output_type).name} differs "
            f"from the input dtype {a.dtype.name}, which is not supported"
        )
    complex_ = a.dtype.is_complex
    if not complex_:
        transpose_a, transpose_b = transpose_a or adjoint_a, transpose_b or adjoint_b
        adjoint_a = adjoint_b = False
    if a.shape.rank == 2 and b.shape.rank == 2 and not (adjoint_a or adjoint_b):
        return apply_op(
            "MatMul",
            [a, b],
            {"transpose_a": bool(transpose_a), "transpose_b": bool(transpose_b), "T": a.dtype},
            name=name,
        )
    if complex_:
        # A plain (not conjugating) transpose of complex matrices goes through einsum.
        if transpose_a:
            a, adjoint_a = matrix_transpose(a), False
        if transpose_b:
            b, adjoint_b = matrix_transpose(b), False
        adj_x, adj_y = adjoint_a, adjoint_b
    else:
        adj_x, adj_y = transpose_a, transpose_b
    return apply_op(
        "BatchMatMulV2",
        [a, b],
        {"adj_x": bool(adj_x), "adj_y": bool(adj_y), "T": a.dtype},
        name=name,
    )


register_operator("matmul", matmul)


def matvec(
    a: Any,
    b: Any,
    transpose_a: bool = False,
    adjoint_a: bool = False,
    a_is_sparse: bool = False,
    b_is_sparse: bool = False,
    name: str | None = None,
) -> Tensor:
    """Multiplies matrices ``a`` (``[..., M, N]``) by vectors ``b`` (``[..., N]``)."""
    if transpose_a and adjoint_a:
        raise ValueError("Only one of transpose_a and adjoint_a can be True.")
    with name_scope(name, "MatVec", [a, b]):
        a, b = convert_inputs([a, b])
        if adjoint_a and a.dtype.is_complex:
            a = matrix_transpose(a, conjugate=True)
            transpose_a = False
        spec = "...ji" if (transpose_a or adjoint_a) else "...ij"
        return einsum(f"{spec},...j->...i", a, b)


def sparse_matmul(
    a: Any,
    b: Any,
    transpose_a: bool = False,
    transpose_b: bool = False,
    a_is_sparse: bool = False,
    b_is_sparse: bool = False,
    name: str | None = None,
) -> Tensor:
    """TF1's ``tf.sparse_matmul``: ``matmul`` of two dense float32 matrices, with hints
    that one is mostly zeros (ignored: numpy's product is used); the product is float32.
    (TF also takes bfloat16, a dtype dataflow does not have.)

    Raises:
        TypeError: an operand that is not float32.
    """
    with name_scope(name, "SparseMatMul", [a, b]):
        a_t, b_t = convert_inputs([a, b])
        for what, t in (("a", a_t), ("b", b_t)):
            if t.dtype != dtypes.float32:
                raise TypeError(f"'{what}' of 'SparseMatMul' must be float32, got {t.dtype.name}")
        return matmul(a_t, b_t, transpose_a=transpose_a, transpose_b=transpose_b)
