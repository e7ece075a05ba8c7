"""``LinearOperatorLowRankUpdate``: ``A = L + U D V^H``, a base operator ``L`` plus a
rank-``K`` update (``U`` ``[..., M, K]``, ``V`` ``[..., N, K]``, ``D`` a ``K x K``
diagonal, ``V = U`` and ``D = I`` by default).

``A @ x`` is ``L x + U (D (V^H x))``, never forming ``U D V^H``. A solve uses the
Woodbury identity ``A^-1 = L^-1 - L^-1 U C^-1 V^H L^-1`` with the ``K x K``
capacitance ``C = D^-1 + V^H L^-1 U``, and the determinant the matrix determinant
lemma ``det A = det C det D det L``; both need ``L`` to be non-singular. When ``L`` is
self-adjoint positive definite, ``V = U`` and ``D`` positive, the operator is too, and
``C`` is factored by Cholesky.
"""

from __future__ import annotations

from typing import Any

from ....framework.graph import Tensor, convert_to_tensor
from ....framework.scopes import name_scope
from ....framework.tensor_shape import TensorShape
from ... import array as array_ops
from ... import math as math_ops
from .. import decomp, diag, factor
from ..contraction import adjoint as matrix_adjoint
from .base import LinearOperator
from .diagonal import LinearOperatorDiag, LinearOperatorIdentity
from .hints import dense_matmul_of, require_compatible
from .wrappers import broadcast_batches


class LinearOperatorLowRankUpdate(LinearOperator):
    """``L + U D V^H`` for a ``LinearOperator`` ``L`` (see the module docstring).

    Args:
        base_operator: ``L``, shape ``[..., M, N]``.
        u: ``U``, ``[..., M, K]``.
        diag_update: the diagonal of ``D``, ``[..., K]`` (default: ones).
        v: ``V``, ``[..., N, K]`` (default: ``u``).
        is_diag_update_positive: whether ``D``'s entries are positive.

    Raises:
        TypeError: ``u``, ``v`` or ``diag_update`` differ in dtype from ``L``.
        ValueError: static dimensions that do not fit, or a hint contradicting what the
            arguments imply (self-adjoint, positive definite).
    """

    def __init__(
        self,
        base_operator: LinearOperator,
        u: Any,
        diag_update: Any = None,
        v: Any = None,
        is_diag_update_positive: bool | None = None,
        is_non_singular: bool | None = None,
        is_self_adjoint: bool | None = None,
        is_positive_definite: bool | None = None,
        is_square: bool | None = None,
        name: str = "LinearOperatorLowRankUpdate",
    ) -> None:
        dtype = base_operator.dtype
        with name_scope(name, values=[u, v, diag_update]):
            self._u = convert_to_tensor(u, name="u")
            self._v = self._u if v is None else convert_to_tensor(v, name="v")
            self._diag_update = (
                None if diag_update is None else convert_to_tensor(diag_update, name="diag_update")
            )
        for t in (self._u, self._v, self._diag_update):
            if t is not None and t.dtype.base_dtype != dtype:
                raise TypeError(
                    f"Expected argument to have dtype {dtype.name}. "
                    f"Found: {t.dtype.name} in {t.name}"
                )
        require_compatible(base_operator.range_dimension, self._u.shape[-2], "u rows")
        require_compatible(base_operator.domain_dimension, self._v.shape[-2], "v rows")
        require_compatible(self._u.shape[-1], self._v.shape[-1], "update rank")
        if self._diag_update is not None:
            require_compatible(self._u.shape[-1], self._diag_update.shape[-1], "diag_update")
        self._base = base_operator
        self._is_diag_update_positive = is_diag_update_positive
        self._use_cholesky = bool(
            base_operator.is_positive_definite
            and base_operator.is_self_adjoint
            and is_diag_update_positive
            and v is None
        )
        if base_operator.is_self_adjoint and v is None and not dtype.is_complex:
            if is_self_adjoint is False:
                raise ValueError(
                    "A = L + UDU^H, with L self-adjoint and D real diagonal.  Since UDU^H is "
                    "self-adjoint, this must be a self-adjoint operator."
                )
            is_self_adjoint = True
        if self._use_cholesky:
            if (
                is_positive_definite is False
                or is_self_adjoint is False
                or is_non_singular is False
            ):
                raise ValueError("Arguments imply this is self-adjoint positive-definite operator.")
            is_positive_definite = True
            is_self_adjoint = True
        with name_scope(name):
            if self._diag_update is None:
                rank = self._u.shape[-1].value
                k: Any = rank if rank is not None else array_ops.shape(self._u)[-1]
                self._diag_operator: LinearOperator = LinearOperatorIdentity(k, dtype=dtype)
            else:
                self._diag_operator = LinearOperatorDiag(
                    self._diag_update, is_positive_definite=is_diag_update_positive
                )
        parents = [self._u, self._v] + (
            [self._diag_update] if self._diag_update is not None else []
        )
        super().__init__(
            dtype=dtype,
            graph_parents=base_operator.graph_parents + parents,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
            name=name,
        )

    @property
    def base_operator(self) -> LinearOperator:
        """``L``."""
        return self._base

    @property
    def u(self) -> Tensor:
        """``U``."""
        return self._u

    @property
    def v(self) -> Tensor:
        """``V`` (``U`` when not given)."""
        return self._v

    @property
    def diag_update(self) -> Tensor | None:
        """The diagonal of ``D`` as given (``None``: the identity)."""
        return self._diag_update

    @property
    def diag_operator(self) -> LinearOperator:
        """``D`` as an operator (``LinearOperatorDiag`` or ``LinearOperatorIdentity``)."""
        return self._diag_operator

    @property
    def is_diag_update_positive(self) -> bool | None:
        """The hint that ``D``'s entries are positive."""
        return self._is_diag_update_positive

    def _shape(self) -> TensorShape:
        batch = self._base.batch_shape
        for t in (self._u, self._v):
            batch = array_ops.broadcast_static_shape(batch, t.shape[:-2])
        if self._diag_update is not None:
            batch = array_ops.broadcast_static_shape(batch, self._diag_update.shape[:-1])
        return batch.concatenate(self._base.shape[-2:])

    def _shape_tensor(self) -> Tensor:
        batch = self._base.batch_shape_tensor()
        for t in (self._u, self._v):
            batch = array_ops.broadcast_dynamic_shape(batch, array_ops.shape(t)[:-2])
        if self._diag_update is not None:
            batch = array_ops.broadcast_dynamic_shape(
                batch, array_ops.shape(self._diag_update)[:-1]
            )
        return array_ops.concat([batch, self._base.shape_tensor()[-2:]], 0)

    def _matmul(self, x: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        u, v = (self._v, self._u) if adjoint else (self._u, self._v)
        leading = self._base.matmul(x, adjoint=adjoint, adjoint_arg=adjoint_arg)
        vh_x = dense_matmul_of(v, x, adjoint=True, adjoint_arg=adjoint_arg)
        d_vh_x = self._diag_operator.matmul(vh_x, adjoint=adjoint)
        return math_ops.add(leading, dense_matmul_of(u, d_vh_x))

    def _capacitance(self) -> Tensor:
        """``C = D^-1 + V^H L^-1 U`` (``K x K``)."""
        linv_u = self._base.solve(self._u)
        vh_linv_u = dense_matmul_of(self._v, linv_u, adjoint=True)
        return self._diag_operator.inverse().add_to_tensor(vh_linv_u)

    def _check_base_non_singular(self) -> None:
        if self._base.is_non_singular is False:
            raise ValueError(
                "Solve not implemented unless this is a perturbation of a non-singular "
                "LinearOperator."
            )

    def _solve(self, rhs: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        self._check_base_non_singular()
        u, v = (self._v, self._u) if adjoint else (self._u, self._v)
        base = self._base
        linv_rhs = base.solve(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)
        vh_linv_rhs = dense_matmul_of(v, linv_rhs, adjoint=True)
        cap = self._capacitance()
        if self._use_cholesky:
            capinv = decomp.cholesky_solve(decomp.cholesky(cap), vh_linv_rhs)
        else:
            capinv = decomp.matrix_solve(cap, vh_linv_rhs, adjoint=adjoint)
        correction = base.solve(dense_matmul_of(u, capinv), adjoint=adjoint)
        return math_ops.subtract(linv_rhs, correction)

    def _determinant(self) -> Tensor:
        self._check_base_non_singular()
        parts = [
            self._base.determinant(),
            decomp.matrix_determinant(self._capacitance()),
        ]
        if self._diag_update is not None:
            parts.append(self._diag_operator.determinant())
        return _product(parts)

    def _log_abs_determinant(self) -> Tensor:
        self._check_base_non_singular()
        cap = self._capacitance()
        if self._use_cholesky:
            chol_diag = diag.matrix_diag_part(decomp.cholesky(cap))
            lad_cap = math_ops.multiply(
                math_ops.cast(2.0, self.dtype),
                math_ops.reduce_sum(
                    math_ops.cast(math_ops.log(math_ops.abs(chol_diag)), self.dtype), axis=[-1]
                ),
            )
        else:
            lad_cap = factor.slogdet(cap)[1]
        parts = [self._base.log_abs_determinant(), lad_cap]
        if self._diag_update is not None:
            parts.append(self._diag_operator.log_abs_determinant())
        result = parts[0]
        for p in parts[1:]:
            result = math_ops.add(result, p)
        return result

    def _to_dense(self) -> Tensor:
        d = self._diag_operator.matmul(matrix_adjoint(self._v))
        base, update = broadcast_batches([self._base.to_dense(), dense_matmul_of(self._u, d)], 2)
        return math_ops.add(base, update)


def _product(parts: list[Tensor]) -> Tensor:
    result = parts[0]
    for p in parts[1:]:
        result = math_ops.multiply(result, p)
    return result
