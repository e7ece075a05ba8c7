"""Diagonal operators: ``LinearOperatorDiag``, ``LinearOperatorIdentity``,
``LinearOperatorScaledIdentity`` and ``LinearOperatorZeros``.

Each keeps only its diagonal (a tensor, a multiplier, or just a size), so a product is
an elementwise multiply, a solve a division, the determinant a product and the
Cholesky factor a square root; none of them ever builds the dense matrix except in
``to_dense``. Products and inverses of diagonal operators stay diagonal operators.
The sized ones take TF's ``assert_proper_shapes``; their arguments' static dimensions
are checked whatever it says, and no run-time shape assertions are added.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ....framework import dtypes
from ....framework.graph import Tensor, convert_to_tensor
from ....framework.scopes import name_scope
from ....framework.tensor_shape import TensorShape
from ....framework.tensor_util import constant_value
from ... import array as array_ops
from ... import math as math_ops
from ...debug import check_ops
from .. import diag
from ..contraction import adjoint as matrix_adjoint
from .base import LinearOperator
from .hints import FLOAT_OR_COMPLEX, check_dtype, real_dtype_of


def _real_log_abs(x: Tensor, dtype: dtypes.DType, axis: Any) -> Tensor:
    """``sum(log|x|)`` over ``axis``, in ``dtype`` (complex operators give a complex
    zero-imaginary result, as TF)."""
    return math_ops.cast(math_ops.reduce_sum(math_ops.log(math_ops.abs(x)), axis=axis), dtype)


class LinearOperatorDiag(LinearOperator):
    """A (batch of) square diagonal matrices ``diag(d)``, from ``diag`` ``[..., N]``.

    Raises:
        ValueError: ``diag`` has rank 0, or a hint contradicts the structure (a real
            diagonal is always self-adjoint; the operator is always square).
        TypeError: ``diag`` is not a float or complex tensor.
    """

    def __init__(
        self,
        diag: Any,
        is_non_singular: bool | None = None,
        is_self_adjoint: bool | None = None,
        is_positive_definite: bool | None = None,
        is_square: bool | None = None,
        name: str = "LinearOperatorDiag",
    ) -> None:
        with name_scope(name, values=[diag]):
            self._diag = convert_to_tensor(diag, name="diag")
        check_dtype(self._diag, FLOAT_OR_COMPLEX, "diag")
        if self._diag.shape.rank is not None and self._diag.shape.rank < 1:
            raise ValueError(f"Argument diag must have at least 1 dimension.  Found: {diag}")
        if not self._diag.dtype.is_complex:
            if is_self_adjoint is False:
                raise ValueError("A real diagonal operator is always self adjoint.")
            is_self_adjoint = True
        if is_square is False:
            raise ValueError("Only square diagonal operators currently supported.")
        super().__init__(
            dtype=self._diag.dtype,
            graph_parents=[self._diag],
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=True,
            name=name,
        )

    @property
    def diag(self) -> Tensor:
        """The diagonal, ``batch_shape + [N]``."""
        return self._diag

    def _shape(self) -> TensorShape:
        d = self._diag.shape
        return d.concatenate(d[-1:])

    def _shape_tensor(self) -> Tensor:
        d = array_ops.shape(self._diag)
        return array_ops.concat([d, d[-1:]], 0)

    def _term(self, adjoint: bool) -> Tensor:
        return math_ops.conj(self._diag) if adjoint else self._diag

    def _matmul(self, x: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        x = matrix_adjoint(x) if adjoint_arg else x
        return math_ops.multiply(array_ops.expand_dims(self._term(adjoint), -1), x)

    def _matvec(self, x: Tensor, adjoint: bool = False) -> Tensor:
        return math_ops.multiply(self._term(adjoint), x)

    def _solve(self, rhs: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        rhs = matrix_adjoint(rhs) if adjoint_arg else rhs
        return math_ops.realdiv(rhs, array_ops.expand_dims(self._term(adjoint), -1))

    def _solvevec(self, rhs: Tensor, adjoint: bool = False) -> Tensor:
        return math_ops.realdiv(rhs, self._term(adjoint))

    def _determinant(self) -> Tensor:
        return math_ops.reduce_prod(self._diag, axis=[-1])

    def _log_abs_determinant(self) -> Tensor:
        return _real_log_abs(self._diag, self.dtype, [-1])

    def _to_dense(self) -> Tensor:
        return diag.matrix_diag(self._diag)

    def _diag_part(self) -> Tensor:
        return self._diag

    def _trace(self) -> Tensor:
        return math_ops.reduce_sum(self._diag, axis=-1)

    def _add_to_tensor(self, x: Tensor) -> Tensor:
        return diag.matrix_set_diag(x, math_ops.add(diag.matrix_diag_part(x), self._diag))

    def _eigvals(self) -> Tensor:
        return self._diag

    def _cond(self) -> Tensor:
        a = math_ops.abs(self._diag)
        return math_ops.realdiv(math_ops.reduce_max(a, axis=-1), math_ops.reduce_min(a, axis=-1))

    def _assert_non_singular(self) -> Any:
        return check_ops.assert_positive(
            math_ops.abs(self._diag), message="Singular operator:  Diagonal contained zero values."
        )

    def _assert_positive_definite(self) -> Any:
        return check_ops.assert_positive(
            math_ops.real(self._diag),
            message="Operator was not positive definite: real part of the diagonal not positive.",
        )

    def _assert_self_adjoint(self) -> Any:
        return check_ops.assert_equal(
            math_ops.imag(self._diag),
            array_ops.zeros_like(math_ops.imag(self._diag)),
            message="This diagonal operator contained non-zero imaginary values.",
        )

    def _linop_adjoint(self) -> LinearOperator:
        return LinearOperatorDiag(
            math_ops.conj(self._diag),
            is_non_singular=self.is_non_singular,
            is_positive_definite=self.is_positive_definite,
        )

    def _linop_inverse(self) -> LinearOperator:
        return LinearOperatorDiag(
            math_ops.reciprocal(self._diag),
            is_non_singular=self.is_non_singular,
            is_self_adjoint=self.is_self_adjoint,
            is_positive_definite=self.is_positive_definite,
        )

    def _linop_cholesky(self) -> LinearOperator:
        return LinearOperatorDiag(
            math_ops.sqrt(self._diag), is_non_singular=True, is_positive_definite=True
        )

    def _linop_matmul(self, left: LinearOperator, right: LinearOperator) -> LinearOperator:
        if isinstance(right, LinearOperatorDiag):
            return LinearOperatorDiag(
                math_ops.multiply(self._diag, right.diag),
                is_non_singular=_and_hint(self.is_non_singular, right.is_non_singular),
            )
        return super()._linop_matmul(left, right)


def _and_hint(a: bool | None, b: bool | None) -> bool | None:
    return True if a is True and b is True else None


def _num_rows_tensor(value: Any, what: str) -> tuple[Tensor, int | None]:
    """``value`` as a scalar int32 tensor and its static value, checked as TF checks
    ``num_rows``."""
    t = convert_to_tensor(value, name=what)
    if not t.dtype.is_integer:
        raise TypeError(f"Argument {what} must be integer type.  Found: {t}")
    if t.shape.rank is not None and t.shape.rank != 0:
        raise ValueError(f"Argument {what} must be a 0-D Tensor.  Found: {t}")
    static = constant_value(t)
    if static is not None and int(static) < 0:
        raise ValueError(f"Argument {what} must be non-negative.  Found: {int(static)}")
    t = math_ops.cast(t, dtypes.int32)
    return t, None if static is None else int(static)


def _batch_shape_arg(batch_shape: Any) -> tuple[Tensor | None, TensorShape | None]:
    """The ``batch_shape`` argument as a 1-D int32 tensor and a static ``TensorShape``."""
    if batch_shape is None:
        return None, None
    t = convert_to_tensor(batch_shape, dtype=dtypes.int32, name="batch_shape")
    if t.shape.rank is not None and t.shape.rank != 1:
        raise ValueError(f"Argument batch_shape must be a 1-D Tensor.  Found: {t}")
    static = constant_value(t)
    if static is not None and np.any(np.asarray(static) < 0):
        raise ValueError(f"Argument batch_shape must be non-negative.  Found: {static}")
    if static is not None:
        return t, TensorShape([int(v) for v in np.asarray(static)])
    n = t.shape[0].value
    return t, TensorShape([None] * n) if n is not None else TensorShape(None)


class _SizedOperator(LinearOperator):
    """An operator whose shape is ``batch_shape + [num_rows, num_columns]`` from
    integers (identity, zeros)."""

    _batch: Tensor | None
    _batch_static: TensorShape | None
    _rows: Tensor
    _rows_static: int | None
    _cols: Tensor
    _cols_static: int | None

    def _shape(self) -> TensorShape:
        matrix = TensorShape([self._rows_static, self._cols_static])
        if self._batch_static is None:
            return matrix
        return self._batch_static.concatenate(matrix)

    def _shape_tensor(self) -> Tensor:
        matrix = array_ops.stack([self._rows, self._cols])
        if self._batch is None:
            return matrix
        return array_ops.concat([self._batch, matrix], 0)

    def _batch_arg(self) -> Any:
        if self._batch_static is not None and self._batch_static.is_fully_defined():
            return self._batch_static.as_list()
        return self._batch

    def _batch_filled(self, value: float, extra: list) -> Tensor:
        """``value`` of shape ``batch_shape + extra`` in the operator's dtype."""
        if self._batch is None and all(isinstance(e, int) for e in extra):
            shape: Any = extra
        else:
            parts: list[Any] = [] if self._batch is None else [self._batch]
            parts.append(array_ops.reshape(array_ops.stack(extra), [-1]) if extra else [])
            shape = array_ops.concat([math_ops.cast(p, dtypes.int32) for p in parts], 0)
            static = constant_value(shape)
            shape = [int(v) for v in static] if static is not None else shape
        filler = array_ops.ones if value == 1 else array_ops.zeros
        return filler(shape, dtype=self.dtype)


class LinearOperatorIdentity(_SizedOperator):
    """A (batch of) ``num_rows x num_rows`` identity matrices; ``matmul`` returns its
    argument (broadcast to ``batch_shape`` when one is given).

    Raises:
        ValueError: a hint other than ``True``, or a negative or non-scalar ``num_rows``.
    """

    is_identity = True

    def __init__(
        self,
        num_rows: Any,
        batch_shape: Any = None,
        dtype: Any = None,
        is_non_singular: bool = True,
        is_self_adjoint: bool = True,
        is_positive_definite: bool = True,
        is_square: bool = True,
        assert_proper_shapes: bool = False,
        name: str = "LinearOperatorIdentity",
    ) -> None:
        if not is_self_adjoint:
            raise ValueError("An identity operator is always self adjoint.")
        if not is_non_singular:
            raise ValueError("An identity operator is always non-singular.")
        if not is_positive_definite:
            raise ValueError("An identity operator is always positive-definite.")
        if not is_square:
            raise ValueError("An identity operator is always square.")
        with name_scope(name, values=[num_rows]):
            self._rows, self._rows_static = _num_rows_tensor(num_rows, "num_rows")
            self._batch, self._batch_static = _batch_shape_arg(batch_shape)
        self._cols, self._cols_static = self._rows, self._rows_static
        super().__init__(
            dtype=dtype if dtype is not None else dtypes.float32,
            is_non_singular=True,
            is_self_adjoint=True,
            is_positive_definite=True,
            is_square=True,
            name=name,
        )

    def _broadcast(self, x: Tensor) -> Tensor:
        if self._batch is None:
            return x
        special = self._batch_static.concatenate([1, 1]) if self._batch_static else None
        if special is not None and special.is_fully_defined() and x.shape.is_fully_defined():
            if array_ops.broadcast_static_shape(x.shape, special) == x.shape:
                return x
        zeros = self._batch_filled(0, [1, 1])
        return math_ops.add(x, zeros)

    def _matmul(self, x: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        return self._broadcast(matrix_adjoint(x) if adjoint_arg else x)

    def _matvec(self, x: Tensor, adjoint: bool = False) -> Tensor:
        return array_ops.squeeze(self._matmul(array_ops.expand_dims(x, -1)), axis=[-1])

    def _solve(self, rhs: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        return self._matmul(rhs, adjoint_arg=adjoint_arg)

    def _solvevec(self, rhs: Tensor, adjoint: bool = False) -> Tensor:
        return self._matvec(rhs)

    def _determinant(self) -> Tensor:
        return self._batch_filled(1, [])

    def _log_abs_determinant(self) -> Tensor:
        return self._batch_filled(0, [])

    def _to_dense(self) -> Tensor:
        n: Any = self._rows_static if self._rows_static is not None else self._rows
        return diag.eye(num_rows=n, batch_shape=self._batch_arg(), dtype=self.dtype)

    def _diag_part(self) -> Tensor:
        n: Any = self._rows_static if self._rows_static is not None else self._rows
        return self._batch_filled(1, [n])

    def _trace(self) -> Tensor:
        return math_ops.multiply(self._batch_filled(1, []), math_ops.cast(self._rows, self.dtype))

    def _add_to_tensor(self, x: Tensor) -> Tensor:
        return diag.matrix_set_diag(x, math_ops.add(diag.matrix_diag_part(x), 1))

    def _eigvals(self) -> Tensor:
        return self._diag_part()

    def _assert_non_singular(self) -> Any:
        return check_ops.assert_equal(self._rows, self._rows)

    _assert_positive_definite = _assert_non_singular
    _assert_self_adjoint = _assert_non_singular

    def _linop_inverse(self) -> LinearOperator:
        return self

    def _linop_cholesky(self) -> LinearOperator:
        return self


class LinearOperatorScaledIdentity(LinearOperator):
    """A (batch of) ``num_rows x num_rows`` matrices ``c I``, from ``multiplier``
    ``c`` of shape ``batch_shape``.

    Raises:
        ValueError: ``is_square=False``, a bad ``num_rows``, or a real multiplier
            with ``is_self_adjoint=False``.
    """

    def __init__(
        self,
        num_rows: Any,
        multiplier: Any,
        is_non_singular: bool | None = None,
        is_self_adjoint: bool | None = None,
        is_positive_definite: bool | None = None,
        is_square: bool = True,
        assert_proper_shapes: bool = False,
        name: str = "LinearOperatorScaledIdentity",
    ) -> None:
        if not is_square:
            raise ValueError("A ScaledIdentity operator is always square.")
        with name_scope(name, values=[multiplier, num_rows]):
            self._multiplier = convert_to_tensor(multiplier, name="multiplier")
            self._rows, self._rows_static = _num_rows_tensor(num_rows, "num_rows")
        check_dtype(self._multiplier, FLOAT_OR_COMPLEX, "multiplier")
        if not self._multiplier.dtype.is_complex:
            if is_self_adjoint is False:
                raise ValueError("A real diagonal operator is always self adjoint.")
            is_self_adjoint = True
        super().__init__(
            dtype=self._multiplier.dtype,
            graph_parents=[self._multiplier],
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=True,
            name=name,
        )

    @property
    def multiplier(self) -> Tensor:
        """The scale ``c``, shape ``batch_shape``."""
        return self._multiplier

    def _shape(self) -> TensorShape:
        return self._multiplier.shape.concatenate([self._rows_static, self._rows_static])

    def _shape_tensor(self) -> Tensor:
        return array_ops.concat(
            [array_ops.shape(self._multiplier), array_ops.stack([self._rows, self._rows])], 0
        )

    def _mult(self, adjoint: bool, extra: int) -> Tensor:
        m = math_ops.conj(self._multiplier) if adjoint else self._multiplier
        for _ in range(extra):
            m = array_ops.expand_dims(m, -1)
        return m

    def _matmul(self, x: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        x = matrix_adjoint(x) if adjoint_arg else x
        return math_ops.multiply(x, self._mult(adjoint, 2))

    def _matvec(self, x: Tensor, adjoint: bool = False) -> Tensor:
        return math_ops.multiply(x, self._mult(adjoint, 1))

    def _solve(self, rhs: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        rhs = matrix_adjoint(rhs) if adjoint_arg else rhs
        return math_ops.realdiv(rhs, self._mult(adjoint, 2))

    def _solvevec(self, rhs: Tensor, adjoint: bool = False) -> Tensor:
        return math_ops.realdiv(rhs, self._mult(adjoint, 1))

    def _n(self) -> Tensor:
        return math_ops.cast(self._rows, self.dtype)

    def _determinant(self) -> Tensor:
        return math_ops.pow(self._multiplier, self._n())

    def _log_abs_determinant(self) -> Tensor:
        lad = math_ops.multiply(
            math_ops.cast(self._rows, real_dtype_of(self._multiplier.dtype)),
            math_ops.log(math_ops.abs(self._multiplier)),
        )
        return math_ops.cast(lad, self.dtype)

    def _to_dense(self) -> Tensor:
        n: Any = self._rows_static if self._rows_static is not None else self._rows
        return math_ops.multiply(self._mult(False, 2), diag.eye(num_rows=n, dtype=self.dtype))

    def _diag_part(self) -> Tensor:
        n: Any = self._rows_static if self._rows_static is not None else self._rows
        return math_ops.multiply(self._mult(False, 1), array_ops.ones([n], dtype=self.dtype))

    def _trace(self) -> Tensor:
        return math_ops.multiply(self._multiplier, self._n())

    def _add_to_tensor(self, x: Tensor) -> Tensor:
        return diag.matrix_set_diag(x, math_ops.add(diag.matrix_diag_part(x), self._mult(False, 1)))

    def _eigvals(self) -> Tensor:
        return self._diag_part()

    def _cond(self) -> Tensor:
        return array_ops.ones_like(math_ops.abs(self._multiplier))

    def _assert_non_singular(self) -> Any:
        return check_ops.assert_positive(
            math_ops.abs(self._multiplier), message="LinearOperator was singular"
        )

    def _assert_positive_definite(self) -> Any:
        return check_ops.assert_positive(
            math_ops.real(self._multiplier), message="LinearOperator was not positive definite."
        )

    def _linop_inverse(self) -> LinearOperator:
        return LinearOperatorScaledIdentity(
            self._rows,
            math_ops.reciprocal(self._multiplier),
            is_non_singular=self.is_non_singular,
            is_self_adjoint=self.is_self_adjoint,
            is_positive_definite=self.is_positive_definite,
        )

    def _linop_cholesky(self) -> LinearOperator:
        return LinearOperatorScaledIdentity(
            self._rows,
            math_ops.sqrt(self._multiplier),
            is_non_singular=True,
            is_positive_definite=True,
        )

    def _linop_matmul(self, left: LinearOperator, right: LinearOperator) -> LinearOperator:
        if isinstance(right, LinearOperatorScaledIdentity):
            return LinearOperatorScaledIdentity(
                self._rows,
                math_ops.multiply(self._multiplier, right.multiplier),
                is_non_singular=_and_hint(self.is_non_singular, right.is_non_singular),
            )
        return super()._linop_matmul(left, right)


class LinearOperatorZeros(_SizedOperator):
    """A (batch of) all-zero ``num_rows x num_columns`` matrices.

    Raises:
        ValueError: ``is_non_singular`` or ``is_positive_definite`` set, or
            ``is_square`` with different static row and column counts.
    """

    def __init__(
        self,
        num_rows: Any,
        num_columns: Any = None,
        batch_shape: Any = None,
        dtype: Any = None,
        is_non_singular: bool = False,
        is_self_adjoint: bool = True,
        is_positive_definite: bool = False,
        is_square: bool = True,
        assert_proper_shapes: bool = False,
        name: str = "LinearOperatorZeros",
    ) -> None:
        if is_non_singular:
            raise ValueError("A Zeros operator is always singular.")
        if is_positive_definite:
            raise ValueError("A Zeros operator is always not positive-definite.")
        with name_scope(name, values=[num_rows]):
            self._rows, self._rows_static = _num_rows_tensor(num_rows, "num_rows")
            if num_columns is None:
                self._cols, self._cols_static = self._rows, self._rows_static
            else:
                self._cols, self._cols_static = _num_rows_tensor(num_columns, "num_columns")
            self._batch, self._batch_static = _batch_shape_arg(batch_shape)
        if (
            is_square
            and self._rows_static is not None
            and self._cols_static is not None
            and self._rows_static != self._cols_static
        ):
            raise ValueError(
                f"LinearOperatorZeros initialized as is_square=True, but got "
                f"num_rows({self._rows_static}) != num_columns({self._cols_static})"
            )
        super().__init__(
            dtype=dtype if dtype is not None else dtypes.float32,
            is_non_singular=False,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=False,
            is_square=is_square,
            name=name,
        )

    def _matmul(self, x: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        x = matrix_adjoint(x) if adjoint_arg else x
        rows: Any = self._cols if adjoint else self._rows
        static = self._cols_static if adjoint else self._rows_static
        column = self._batch_filled(0, [static if static is not None else rows, 1])
        return math_ops.add(array_ops.zeros_like(x[..., :1, :]), column)

    def _determinant(self) -> Tensor:
        return self._batch_filled(0, [])

    def _log_abs_determinant(self) -> Tensor:
        return math_ops.log(math_ops.abs(self._determinant()))

    def _to_dense(self) -> Tensor:
        r: Any = self._rows_static if self._rows_static is not None else self._rows
        c: Any = self._cols_static if self._cols_static is not None else self._cols
        return self._batch_filled(0, [r, c])

    def _diag_part(self) -> Tensor:
        if self._rows_static is not None and self._cols_static is not None:
            k: Any = min(self._rows_static, self._cols_static)
        else:
            k = math_ops.minimum(self._rows, self._cols)
        return self._batch_filled(0, [k])

    def _trace(self) -> Tensor:
        return self._batch_filled(0, [])

    def _add_to_tensor(self, x: Tensor) -> Tensor:
        return x

    def _linop_matmul(self, left: LinearOperator, right: LinearOperator) -> LinearOperator:
        other = right if left is self else left
        rows = self._rows if left is self else left.range_dimension_tensor()
        cols = right.domain_dimension_tensor() if left is self else self._cols
        return LinearOperatorZeros(
            rows,
            cols,
            batch_shape=array_ops.broadcast_dynamic_shape(
                self.batch_shape_tensor(), other.batch_shape_tensor()
            ),
            dtype=self.dtype,
            is_self_adjoint=False,
            is_square=False,
        )
