"""Operators over one matrix-shaped parameter: ``LinearOperatorFullMatrix``,
``LinearOperatorLowerTriangular``, ``LinearOperatorHouseholder``,
``LinearOperatorPermutation``, ``LinearOperatorToeplitz`` and
``LinearOperatorTridiag``.

A full matrix multiplies with ``matmul``; a lower-triangular one solves with a
triangular solve and reads its determinant off the diagonal; a Householder reflection
``I - 2 v v^H / |v|^2`` is its own inverse with determinant ``-1``; a permutation
gathers rows (its inverse is its transpose, its determinant the sign of the
permutation, counted from inversions); a Toeplitz matrix is gathered from its first
column and row into a dense matrix; a tridiagonal one multiplies and solves with the
tridiagonal ops.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ....framework import dtypes
from ....framework.graph import Tensor, convert_to_tensor
from ....framework.scopes import name_scope
from ....framework.tensor_shape import TensorShape
from ... import array as array_ops
from ... import math as math_ops
from ...debug import check_ops
from .. import decomp, diag, solvers
from ..contraction import adjoint as matrix_adjoint
from .base import DEFAULT_CONSTRUCTIONS, LinearOperator
from .hints import FLOAT_OR_COMPLEX, check_dtype, dense_matmul_of, real_dtype_of


def _matrix_arg(value: Any, what: str, name: str) -> Tensor:
    with name_scope(name, values=[value]):
        t = convert_to_tensor(value, name=what)
    check_dtype(t, FLOAT_OR_COMPLEX, what)
    if t.shape.rank is not None and t.shape.rank < 2:
        raise ValueError(f"Argument {what} must have at least 2 dimensions.  Found: {t}")
    return t


class LinearOperatorFullMatrix(LinearOperator):
    """A (batch of) dense matrices ``matrix`` ``[..., M, N]``.

    Raises:
        TypeError: ``matrix`` is not float or complex.
        ValueError: ``matrix`` has rank below 2.
    """

    def __init__(
        self,
        matrix: Any,
        is_non_singular: bool | None = None,
        is_self_adjoint: bool | None = None,
        is_positive_definite: bool | None = None,
        is_square: bool | None = None,
        name: str = "LinearOperatorFullMatrix",
    ) -> None:
        self._matrix = _matrix_arg(matrix, "matrix", name)
        super().__init__(
            dtype=self._matrix.dtype,
            graph_parents=[self._matrix],
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
            name=name,
        )

    def _shape(self) -> TensorShape:
        return self._matrix.shape

    def _shape_tensor(self) -> Tensor:
        return array_ops.shape(self._matrix)

    def _matmul(self, x: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        return dense_matmul_of(self._matrix, x, adjoint, adjoint_arg)

    def _to_dense(self) -> Tensor:
        return self._matrix


class LinearOperatorLowerTriangular(LinearOperator):
    """A (batch of) square lower-triangular matrices: the lower triangle of ``tril``
    ``[..., N, N]`` (the strictly upper part is ignored).

    Raises:
        ValueError: ``is_square=False`` or ``tril`` of rank below 2.
    """

    def __init__(
        self,
        tril: Any,
        is_non_singular: bool | None = None,
        is_self_adjoint: bool | None = None,
        is_positive_definite: bool | None = None,
        is_square: bool | None = None,
        name: str = "LinearOperatorLowerTriangular",
    ) -> None:
        if is_square is False:
            raise ValueError("Only square lower triangular operators supported at this time.")
        raw = _matrix_arg(tril, "tril", name)
        with name_scope(name, values=[raw]):
            self._tril = diag.matrix_band_part(raw, -1, 0)
        super().__init__(
            dtype=raw.dtype,
            graph_parents=[raw],
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=True,
            name=name,
        )

    def _shape(self) -> TensorShape:
        return self._tril.shape

    def _shape_tensor(self) -> Tensor:
        return array_ops.shape(self._tril)

    def _diag(self) -> Tensor:
        return diag.matrix_diag_part(self._tril)

    def _matmul(self, x: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        return dense_matmul_of(self._tril, x, adjoint, adjoint_arg)

    def _solve(self, rhs: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        rhs = matrix_adjoint(rhs) if adjoint_arg else rhs
        return decomp.matrix_triangular_solve(self._tril, rhs, lower=True, adjoint=adjoint)

    def _determinant(self) -> Tensor:
        return math_ops.reduce_prod(self._diag(), axis=[-1])

    def _log_abs_determinant(self) -> Tensor:
        lad = math_ops.reduce_sum(math_ops.log(math_ops.abs(self._diag())), axis=[-1])
        return math_ops.cast(lad, self.dtype)

    def _to_dense(self) -> Tensor:
        return self._tril

    def _diag_part(self) -> Tensor:
        return self._diag()

    def _eigvals(self) -> Tensor:
        return self._diag()

    def _assert_non_singular(self) -> Any:
        return check_ops.assert_positive(
            math_ops.abs(self._diag()), message="Singular operator: diagonal contained zero."
        )


class LinearOperatorHouseholder(LinearOperator):
    """A (batch of) Householder reflections ``I - 2 v v^H / |v|^2`` from
    ``reflection_axis`` ``v`` ``[..., N]``: self-adjoint, its own inverse, never
    positive definite.

    Raises:
        ValueError: ``is_self_adjoint``/``is_square`` false, or
            ``is_positive_definite`` true.
    """

    def __init__(
        self,
        reflection_axis: Any,
        is_non_singular: bool | None = None,
        is_self_adjoint: bool | None = None,
        is_positive_definite: bool | None = None,
        is_square: bool | None = None,
        name: str = "LinearOperatorHouseholder",
    ) -> None:
        with name_scope(name, values=[reflection_axis]):
            self._axis = convert_to_tensor(reflection_axis, name="reflection_axis")
        check_dtype(self._axis, FLOAT_OR_COMPLEX, "reflection_axis")
        if self._axis.shape.rank is not None and self._axis.shape.rank < 1:
            raise ValueError("Argument reflection_axis must have at least 1 dimension.")
        if is_self_adjoint is False:
            raise ValueError("A Householder operator is always self adjoint.")
        if is_non_singular is False:
            raise ValueError("A Householder operator is always non-singular.")
        if is_positive_definite is True:
            raise ValueError("A Householder operator is always non-positive definite.")
        if is_square is False:
            raise ValueError("A Householder operator is always square.")
        super().__init__(
            dtype=self._axis.dtype,
            graph_parents=[self._axis],
            is_non_singular=is_non_singular,
            is_self_adjoint=True,
            is_positive_definite=False,
            is_square=True,
            name=name,
        )

    @property
    def reflection_axis(self) -> Tensor:
        """The vector ``v`` normal to the reflecting hyperplane."""
        return self._axis

    def _shape(self) -> TensorShape:
        s = self._axis.shape
        return s.concatenate(s[-1:])

    def _shape_tensor(self) -> Tensor:
        s = array_ops.shape(self._axis)
        return array_ops.concat([s, s[-1:]], 0)

    def _unit(self) -> Tensor:
        sq = math_ops.reduce_sum(
            math_ops.real(math_ops.multiply(math_ops.conj(self._axis), self._axis)),
            axis=-1,
            keepdims=True,
        )
        return math_ops.realdiv(self._axis, math_ops.cast(math_ops.sqrt(sq), self.dtype))

    def _matmul(self, x: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        x = matrix_adjoint(x) if adjoint_arg else x
        u = array_ops.expand_dims(self._unit(), -1)
        proj = dense_matmul_of(u, dense_matmul_of(u, x, adjoint=True))
        return math_ops.subtract(x, math_ops.multiply(math_ops.cast(2.0, self.dtype), proj))

    def _solve(self, rhs: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        return self._matmul(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _batch_like(self, value: float) -> Tensor:
        return math_ops.add(array_ops.zeros_like(math_ops.real(self._axis[..., 0])), value)

    def _determinant(self) -> Tensor:
        return math_ops.cast(self._batch_like(-1.0), self.dtype)

    def _log_abs_determinant(self) -> Tensor:
        return math_ops.cast(self._batch_like(0.0), self.dtype)

    def _diag_part(self) -> Tensor:
        u = self._unit()
        two = math_ops.cast(2.0, self.dtype)
        return math_ops.subtract(
            math_ops.cast(1.0, self.dtype),
            math_ops.multiply(two, math_ops.multiply(u, math_ops.conj(u))),
        )

    def _trace(self) -> Tensor:
        n = math_ops.cast(array_ops.shape(self._axis)[-1], real_dtype_of(self._axis.dtype))
        return math_ops.cast(math_ops.add(self._batch_like(-2.0), n), self.dtype)

    def _eigvals(self) -> Tensor:
        ones = array_ops.ones_like(math_ops.real(self._axis[..., 1:]))
        return math_ops.cast(
            array_ops.concat([array_ops.expand_dims(self._batch_like(-1.0), -1), ones], -1),
            self.dtype,
        )

    def _assert_non_singular(self) -> Any:
        return check_ops.assert_positive(
            math_ops.reduce_sum(math_ops.abs(self._axis), axis=-1),
            message="Householder reflection axis must be nonzero.",
        )

    def _linop_inverse(self) -> LinearOperator:
        return self


class LinearOperatorPermutation(LinearOperator):
    """A (batch of) permutation matrices: ``A @ x`` takes row ``perm[i]`` of ``x`` as
    row ``i`` (``A[i, perm[i]] = 1``), from an integer ``perm`` ``[..., N]``.

    Raises:
        TypeError: ``perm`` is not an integer tensor.
        ValueError: ``perm`` has rank 0, or ``is_square=False``.
    """

    def __init__(
        self,
        perm: Any,
        dtype: Any = dtypes.float32,
        is_non_singular: bool | None = None,
        is_self_adjoint: bool | None = None,
        is_positive_definite: bool | None = None,
        is_square: bool | None = None,
        name: str = "LinearOperatorPermutation",
    ) -> None:
        with name_scope(name, values=[perm]):
            self._perm = convert_to_tensor(perm, name="perm")
        if not self._perm.dtype.is_integer:
            raise TypeError(f"`perm` must be integer dtype. Found: {self._perm.dtype.name}")
        if self._perm.shape.rank is not None and self._perm.shape.rank < 1:
            raise ValueError("Argument `perm` must have at least 1 dimension.")
        if is_non_singular is False:
            raise ValueError("A Permutation operator is always non-singular.")
        if is_square is False:
            raise ValueError("A Permutation operator is always square.")
        super().__init__(
            dtype=dtype,
            graph_parents=[self._perm],
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=True,
            name=name,
        )

    @property
    def perm(self) -> Tensor:
        """The permutation, ``batch_shape + [N]``."""
        return self._perm

    def _shape(self) -> TensorShape:
        s = self._perm.shape
        return s.concatenate(s[-1:])

    def _shape_tensor(self) -> Tensor:
        s = array_ops.shape(self._perm)
        return array_ops.concat([s, s[-1:]], 0)

    def _n(self) -> Any:
        n = self._perm.shape[-1].value
        return n if n is not None else array_ops.shape(self._perm)[-1]

    def _to_dense(self) -> Tensor:
        return array_ops.one_hot(self._perm, self._n(), dtype=self.dtype)

    def _matmul(self, x: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        x = matrix_adjoint(x) if adjoint_arg else x
        # A one-hot product gathers rows for any batch broadcasting; the gradient to x
        # is the transposed product, as TF's gather-based route gives.
        return dense_matmul_of(self._to_dense(), x, adjoint=adjoint)

    def _solve(self, rhs: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        return self._matmul(rhs, adjoint=not adjoint, adjoint_arg=adjoint_arg)

    def _determinant(self) -> Tensor:
        p = self._perm
        later = math_ops.greater(array_ops.expand_dims(p, -1), array_ops.expand_dims(p, -2))
        n = self._n()
        upper = diag.matrix_band_part(array_ops.ones([n, n], dtype=dtypes.int32), 0, -1)
        inversions = math_ops.reduce_sum(
            math_ops.multiply(math_ops.cast(later, dtypes.int32), upper), axis=[-2, -1]
        )
        sign = math_ops.subtract(1, math_ops.multiply(2, math_ops.floormod(inversions, 2)))
        return math_ops.cast(sign, self.dtype)

    def _log_abs_determinant(self) -> Tensor:
        return array_ops.zeros_like(self._determinant())

    def _diag_part(self) -> Tensor:
        positions = math_ops.cast(array_ops.range_(self._n()), self._perm.dtype)
        return math_ops.cast(math_ops.equal(self._perm, positions), self.dtype)

    def _linop_inverse(self) -> LinearOperator:
        return LinearOperatorPermutation(
            math_ops.argsort(self._perm, axis=-1), dtype=self.dtype, is_non_singular=True
        )


class LinearOperatorToeplitz(LinearOperator):
    """A (batch of) square Toeplitz matrices from their first column ``col`` and first
    row ``row`` (both ``[..., N]``; ``row[..., 0]`` is ignored, ``col[..., 0]`` is the
    diagonal).

    Raises:
        ValueError: ``is_square=False``.
    """

    def __init__(
        self,
        col: Any,
        row: Any,
        is_non_singular: bool | None = None,
        is_self_adjoint: bool | None = None,
        is_positive_definite: bool | None = None,
        is_square: bool | None = None,
        name: str = "LinearOperatorToeplitz",
    ) -> None:
        if is_square is False:
            raise ValueError("Only square Toeplitz operators currently supported.")
        with name_scope(name, values=[col, row]):
            self._col = convert_to_tensor(col, name="col")
            self._row = convert_to_tensor(row, name="row", dtype=self._col.dtype)
        check_dtype(self._col, FLOAT_OR_COMPLEX, "col")
        for t, what in ((self._col, "col"), (self._row, "row")):
            if t.shape.rank is not None and t.shape.rank < 1:
                raise ValueError(f"Argument {what} must have at least 1 dimension.")
        self._col.shape[-1:].assert_is_compatible_with(self._row.shape[-1:])
        super().__init__(
            dtype=self._col.dtype,
            graph_parents=[self._col, self._row],
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=True,
            name=name,
        )

    @property
    def col(self) -> Tensor:
        """The first column."""
        return self._col

    @property
    def row(self) -> Tensor:
        """The first row."""
        return self._row

    def _shape(self) -> TensorShape:
        batch = array_ops.broadcast_static_shape(self._col.shape[:-1], self._row.shape[:-1])
        n = self._col.shape[-1].merge_with(self._row.shape[-1])
        return batch.concatenate([n, n])

    def _shape_tensor(self) -> Tensor:
        batch = array_ops.broadcast_dynamic_shape(
            array_ops.shape(self._col)[:-1], array_ops.shape(self._row)[:-1]
        )
        n = array_ops.shape(self._col)[-1:]
        return array_ops.concat([batch, n, n], 0)

    def _to_dense(self) -> Tensor:
        n = self._col.shape[-1].value
        col, row = self._col, self._row
        if self.shape.is_fully_defined():
            target: Any = self.shape[:-1].as_list()
        else:
            target = self.shape_tensor()[:-1]
        col, row = array_ops.broadcast_to(col, target), array_ops.broadcast_to(row, target)
        # values[k] = T[i, j] for k = (n - 1) + i - j: the first row reversed, then the
        # column; a gather by the (i - j) matrix builds T for every batch member.
        values = array_ops.concat([array_ops.reverse(row[..., 1:], [-1]), col], -1)
        if n is not None:
            idx: Any = (n - 1) + np.subtract.outer(np.arange(n), np.arange(n)).astype(np.int32)
        else:
            m = array_ops.shape(self._col)[-1]
            r = array_ops.range_(m)
            idx = math_ops.add(
                math_ops.subtract(array_ops.expand_dims(r, -1), array_ops.expand_dims(r, 0)),
                m - 1,
            )
        return array_ops.gather(values, idx, axis=-1)

    def _matmul(self, x: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        return dense_matmul_of(self._to_dense(), x, adjoint, adjoint_arg)

    def _diag_part(self) -> Tensor:
        n = self.domain_dimension.value
        ones = array_ops.ones([n] if n is not None else array_ops.shape(self._col)[-1:], self.dtype)
        return math_ops.multiply(array_ops.expand_dims(self._col[..., 0], -1), ones)


_FORMATS = ("compact", "sequence", "matrix")


class LinearOperatorTridiag(LinearOperator):
    """A (batch of) square tridiagonal matrices given by ``diagonals`` in the format of
    ``tf.linalg.tridiagonal_matmul``: ``compact`` (``[..., 3, N]``: super, main and
    sub-diagonal; the last superdiagonal and first subdiagonal entries are ignored),
    ``sequence`` (three ``[..., N]`` tensors) or ``matrix`` (``[..., N, N]``).

    Raises:
        ValueError: an unknown ``diagonals_format`` or ``is_square=False``.
    """

    def __init__(
        self,
        diagonals: Any,
        diagonals_format: str = "compact",
        is_non_singular: bool | None = None,
        is_self_adjoint: bool | None = None,
        is_positive_definite: bool | None = None,
        is_square: bool | None = None,
        name: str = "LinearOperatorTridiag",
    ) -> None:
        if diagonals_format not in _FORMATS:
            raise ValueError(
                f"Diagonals Format must be one of compact, matrix, sequence, got {diagonals_format}"
            )
        if is_square is False:
            raise ValueError("Only square tridiagonal operators are supported.")
        with name_scope(name, values=[diagonals]):
            if diagonals_format == "sequence":
                parts = [convert_to_tensor(d, name="diagonals") for d in diagonals]
                self._diagonals: Any = parts
                self._sup, self._main, self._sub = parts
            else:
                t = convert_to_tensor(diagonals, name="diagonals")
                self._diagonals = t
                if diagonals_format == "compact":
                    self._sup, self._main, self._sub = t[..., 0, :], t[..., 1, :], t[..., 2, :]
                else:
                    self._main = diag.matrix_diag_part(t)
                    zero = array_ops.zeros_like(self._main[..., :1])
                    sup = diag.matrix_diag_part(t[..., :-1, 1:])
                    sub = diag.matrix_diag_part(t[..., 1:, :-1])
                    self._sup = array_ops.concat([sup, zero], -1)
                    self._sub = array_ops.concat([zero, sub], -1)
        check_dtype(self._main, FLOAT_OR_COMPLEX, "diagonals")
        self._diagonals_format = diagonals_format
        super().__init__(
            dtype=self._main.dtype,
            graph_parents=[self._sup, self._main, self._sub],
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=True,
            name=name,
        )

    @property
    def diagonals(self) -> Any:
        """The diagonals as given."""
        return self._diagonals

    @property
    def diagonals_format(self) -> str:
        """``compact``, ``sequence`` or ``matrix``."""
        return self._diagonals_format

    def _shape(self) -> TensorShape:
        s = self._main.shape
        return s.concatenate(s[-1:])

    def _shape_tensor(self) -> Tensor:
        s = array_ops.shape(self._main)
        return array_ops.concat([s, s[-1:]], 0)

    def _three(self, adjoint: bool) -> list[Tensor]:
        if not adjoint:
            return [self._sup, self._main, self._sub]
        zero = array_ops.zeros_like(self._main[..., :1])
        sup = array_ops.concat([math_ops.conj(self._sub[..., 1:]), zero], -1)
        sub = array_ops.concat([zero, math_ops.conj(self._sup[..., :-1])], -1)
        return [sup, math_ops.conj(self._main), sub]

    def _matmul(self, x: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        x = matrix_adjoint(x) if adjoint_arg else x
        return solvers.tridiagonal_matmul(self._three(adjoint), x, diagonals_format="sequence")

    def _solve(self, rhs: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        rhs = matrix_adjoint(rhs) if adjoint_arg else rhs
        return solvers.tridiagonal_solve(self._three(adjoint), rhs, diagonals_format="sequence")

    def _diag_part(self) -> Tensor:
        return self._main

    def _trace(self) -> Tensor:
        return math_ops.reduce_sum(self._main, axis=-1)


def _cholesky_factor(operator: LinearOperator) -> LinearOperator:
    return LinearOperatorLowerTriangular(
        decomp.cholesky(operator.to_dense()),
        is_non_singular=True,
        is_self_adjoint=False,
        is_square=True,
    )


DEFAULT_CONSTRUCTIONS["cholesky"] = _cholesky_factor
