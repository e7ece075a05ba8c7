"""``tf.linalg.LinearOperator``: the abstract base of the structured matrix operators.

A ``LinearOperator`` stands for a (batch of) ``M x N`` matrices without necessarily
holding them: a subclass says what its shape is (``_shape``, and ``_shape_tensor`` when
some dimension is known only at run time) and how it multiplies (``_matmul``); every
other method has a generic fallback here, built from graph ops over ``to_dense()``
(``matrix_solve``, ``slogdet``, ``cholesky``, ``matrix_diag_part``), which a subclass
overrides with a fast path where its structure gives one (a diagonal solve is a
division). Everything is built in the graph from ordinary ops, so gradients come from
those ops.

The public methods check what can be checked at graph-build time (dtypes, static
dimensions, the ``is_*`` hints) and open a name scope ``<operator name>/<method>``
before calling the private hook. The hints follow TF1: positive definite implies
non-singular, and non-singular or self-adjoint imply square; a hint contradicting
another, or a static shape, raises ``ValueError`` at construction.

Operators built from operators (``adjoint()``, ``inverse()``, ``cholesky()``, and
``matmul``/``solve`` with an operator argument) go through the hooks ``_linop_adjoint``,
``_linop_inverse``, ``_linop_cholesky``, ``_linop_matmul`` and ``_linop_solve``, which a
subclass overrides to stay structured (the inverse of a diagonal is a diagonal); the
defaults wrap the operator in ``LinearOperatorAdjoint``/``Inversion``/``Composition``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ....framework import dtypes
from ....framework.graph import Tensor, convert_to_tensor
from ....framework.scopes import name_scope
from ....framework.tensor_shape import Dimension, TensorShape
from ... import array as array_ops
from ... import math as math_ops
from ...constant import constant
from ...debug import check_ops
from .. import decomp, diag, factor
from ..contraction import adjoint as matrix_adjoint
from .hints import require_compatible, static_dim

# How ``adjoint()``, ``inverse()``, ``cholesky()`` and ``matmul`` of two operators
# build an operator when the class has no structured answer: with the wrapping classes,
# which are defined in modules importing this one and fill the table when imported
# (``wrappers``: adjoint, inverse, matmul; ``dense``: cholesky). The package's
# ``__init__`` imports them all, so the table is full before any operator exists.
DEFAULT_CONSTRUCTIONS: dict[str, Callable[..., Any]] = {}


class LinearOperator:
    """Base class of the linear operators: a (batch of) matrices acting on tensors.

    Subclasses implement ``_shape`` (a ``TensorShape``), ``_shape_tensor`` (an int32
    tensor, needed only when the static shape is not fully defined) and ``_matmul(x,
    adjoint, adjoint_arg)``; the other hooks (``_solve``, ``_determinant``,
    ``_log_abs_determinant``, ``_diag_part``, ``_to_dense``, ``_trace``, ...) fall back
    to dense computations.

    Args:
        dtype: the operator's dtype (what ``matmul`` accepts and returns).
        graph_parents: the tensors the operator is built from.
        is_non_singular, is_self_adjoint, is_positive_definite, is_square: hints
            (``True``/``False``/``None`` for unknown) that select algorithms.
        name: the name scope of the operator's methods.

    Raises:
        ValueError: the hints contradict one another.
    """

    def __init__(
        self,
        dtype: Any,
        graph_parents: Any = None,
        is_non_singular: bool | None = None,
        is_self_adjoint: bool | None = None,
        is_positive_definite: bool | None = None,
        is_square: bool | None = None,
        name: str | None = None,
    ) -> None:
        if is_positive_definite:
            if is_non_singular is False:
                raise ValueError("A positive definite matrix is always non-singular.")
            is_non_singular = True
        if is_non_singular:
            if is_square is False:
                raise ValueError("A non-singular matrix is always square.")
            is_square = True
        if is_self_adjoint:
            if is_square is False:
                raise ValueError("A self-adjoint matrix is always square.")
            is_square = True
        self._dtype = dtypes.as_dtype(dtype).base_dtype
        self._graph_parents = list(graph_parents or [])
        self._is_non_singular = is_non_singular
        self._is_self_adjoint = is_self_adjoint
        self._is_positive_definite = is_positive_definite
        self._is_square_set_or_implied_by_hints = is_square
        self._name = name or type(self).__name__

    # --- identity and hints ------------------------------------------------------------
    @contextlib.contextmanager
    def _name_scope(self, name: str | None = None) -> Iterator[None]:
        with name_scope(self.name):
            if name is None:
                yield
            else:
                with name_scope(name):
                    yield

    @property
    def dtype(self) -> dtypes.DType:
        """The dtype of the tensors this operator acts on."""
        return self._dtype

    @property
    def name(self) -> str:
        """The operator's name (the scope of its methods' ops)."""
        return self._name

    @property
    def graph_parents(self) -> list:
        """The tensors this operator was built from."""
        return self._graph_parents

    @property
    def is_non_singular(self) -> bool | None:
        """Whether the operator is invertible (``None``: not known)."""
        return self._is_non_singular

    @property
    def is_self_adjoint(self) -> bool | None:
        """Whether the operator equals its adjoint (``None``: not known)."""
        return self._is_self_adjoint

    @property
    def is_positive_definite(self) -> bool | None:
        """Whether ``Re(x^H A x) > 0`` for every nonzero ``x`` (``None``: not known)."""
        return self._is_positive_definite

    @property
    def is_square(self) -> bool | None:
        """Whether the operator is square: from the static shape when known, else the
        hint."""
        auto = self.domain_dimension == self.range_dimension
        if auto is False and self._is_square_set_or_implied_by_hints:
            raise ValueError("User set is_square hint to True, but the operator was not square.")
        return auto if auto is not None else self._is_square_set_or_implied_by_hints

    # --- shapes ------------------------------------------------------------------------
    def _shape(self) -> TensorShape:
        raise NotImplementedError(f"{type(self).__name__} must implement _shape")

    def _shape_tensor(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} must implement _shape_tensor")

    @property
    def shape(self) -> TensorShape:
        """The static shape ``batch_shape + [M, N]``."""
        return TensorShape(self._shape())

    def shape_tensor(self, name: str = "shape_tensor") -> Tensor:
        """The shape as a 1-D int32 tensor (a constant when statically known)."""
        with self._name_scope(name):
            if self.shape.is_fully_defined():
                return constant(self.shape.as_list(), dtype=dtypes.int32)
            return self._shape_tensor()

    @property
    def batch_shape(self) -> TensorShape:
        """The static batch dimensions (all but the last two)."""
        return self.shape[:-2]

    def batch_shape_tensor(self, name: str = "batch_shape_tensor") -> Tensor:
        """The batch dimensions as a 1-D int32 tensor."""
        with self._name_scope(name):
            if self.batch_shape.is_fully_defined():
                return constant(self.batch_shape.as_list(), dtype=dtypes.int32)
            return self.shape_tensor()[:-2]

    @property
    def tensor_rank(self) -> int | None:
        """The rank of the matrix this operator stands for (``None`` when unknown)."""
        return self.shape.rank

    def tensor_rank_tensor(self, name: str = "tensor_rank_tensor") -> Tensor:
        """The rank as a scalar int32 tensor."""
        with self._name_scope(name):
            if self.tensor_rank is not None:
                return constant(self.tensor_rank, dtype=dtypes.int32)
            return array_ops.size(self.shape_tensor())

    @property
    def domain_dimension(self) -> Dimension:
        """``N``, the number of columns (a ``Dimension``)."""
        return self.shape[-1]

    def domain_dimension_tensor(self, name: str = "domain_dimension_tensor") -> Tensor:
        """``N`` as a scalar int32 tensor."""
        with self._name_scope(name):
            n = static_dim(self.domain_dimension)
            if n is not None:
                return constant(n, dtype=dtypes.int32)
            return self.shape_tensor()[-1]

    @property
    def range_dimension(self) -> Dimension:
        """``M``, the number of rows (a ``Dimension``)."""
        return self.shape[-2]

    def range_dimension_tensor(self, name: str = "range_dimension_tensor") -> Tensor:
        """``M`` as a scalar int32 tensor."""
        with self._name_scope(name):
            m = static_dim(self.range_dimension)
            if m is not None:
                return constant(m, dtype=dtypes.int32)
            return self.shape_tensor()[-2]

    def _check_input_dtype(self, arg: Tensor) -> None:
        if arg.dtype.base_dtype != self.dtype:
            raise TypeError(
                f"Expected argument to have dtype {self.dtype.name}. "
                f"Found: {arg.dtype.name} in tensor {arg.name}"
            )

    # --- products and solves -------------------------------------------------------------
    def _matmul(self, x: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} must implement _matmul")

    def matmul(
        self, x: Any, adjoint: bool = False, adjoint_arg: bool = False, name: str = "matmul"
    ) -> Any:
        """``A @ x`` (``A^H`` with ``adjoint``, ``x^H`` with ``adjoint_arg``).

        ``x`` is a tensor ``[..., N, R]`` whose batch dimensions broadcast with the
        operator's, or a ``LinearOperator`` (the result is then an operator).

        Raises:
            ValueError: the static inner dimensions differ.
            TypeError: ``x``'s dtype is not the operator's.
        """
        if isinstance(x, LinearOperator):
            left = self.adjoint() if adjoint else self
            right = x.adjoint() if adjoint_arg else x
            require_compatible(
                left.domain_dimension, right.range_dimension, "Operators are incompatible"
            )
            with self._name_scope(name):
                return left._linop_matmul(left, right)
        with self._name_scope(name):
            x = convert_to_tensor(x, name="x")
            self._check_input_dtype(x)
            self_dim = -2 if adjoint else -1
            arg_dim = -1 if adjoint_arg else -2
            require_compatible(self.shape[self_dim], x.shape[arg_dim], "matmul")
            return self._matmul(x, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def __matmul__(self, other: Any) -> Any:
        return self.matmul(other)

    def _matvec(self, x: Tensor, adjoint: bool = False) -> Tensor:
        y = self.matmul(array_ops.expand_dims(x, -1), adjoint=adjoint)
        return array_ops.squeeze(y, axis=[-1])

    def matvec(self, x: Any, adjoint: bool = False, name: str = "matvec") -> Tensor:
        """``A @ x`` for a (batch of) vectors ``x`` ``[..., N]``."""
        with self._name_scope(name):
            x = convert_to_tensor(x, name="x")
            self._check_input_dtype(x)
            self_dim = -2 if adjoint else -1
            require_compatible(self.shape[self_dim], x.shape[-1], "matvec")
            return self._matvec(x, adjoint=adjoint)

    def _can_use_cholesky(self) -> bool:
        return bool(self.is_self_adjoint and self.is_positive_definite)

    def _dense_solve(self, rhs: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        rhs = matrix_adjoint(rhs) if adjoint_arg else rhs
        if self._can_use_cholesky():
            return decomp.cholesky_solve(decomp.cholesky(self.to_dense()), rhs)
        return decomp.matrix_solve(self.to_dense(), rhs, adjoint=adjoint)

    def _solve(self, rhs: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        return self._dense_solve(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _check_solvable(self) -> None:
        if self.is_non_singular is False:
            raise NotImplementedError(
                "Exact solve not implemented for an operator that is expected to be singular."
            )
        if self.is_square is False:
            raise NotImplementedError(
                "Exact solve not implemented for an operator that is expected to not be square."
            )

    def solve(
        self, rhs: Any, adjoint: bool = False, adjoint_arg: bool = False, name: str = "solve"
    ) -> Any:
        """``X`` with ``A X = rhs`` (``A^H X = rhs`` with ``adjoint``; ``rhs^H`` with
        ``adjoint_arg``); ``rhs`` may be a ``LinearOperator``.

        Raises:
            NotImplementedError: the hints say the operator is singular or not square.
            ValueError: the static dimensions differ.
        """
        self._check_solvable()
        if isinstance(rhs, LinearOperator):
            left = self.adjoint() if adjoint else self
            right = rhs.adjoint() if adjoint_arg else rhs
            require_compatible(
                left.domain_dimension, right.range_dimension, "Operators are incompatible"
            )
            with self._name_scope(name):
                return left._linop_solve(left, right)
        with self._name_scope(name):
            rhs = convert_to_tensor(rhs, name="rhs")
            self._check_input_dtype(rhs)
            self_dim = -1 if adjoint else -2
            arg_dim = -1 if adjoint_arg else -2
            require_compatible(self.shape[self_dim], rhs.shape[arg_dim], "solve")
            return self._solve(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _solvevec(self, rhs: Tensor, adjoint: bool = False) -> Tensor:
        x = self.solve(array_ops.expand_dims(rhs, -1), adjoint=adjoint)
        return array_ops.squeeze(x, axis=[-1])

    def solvevec(self, rhs: Any, adjoint: bool = False, name: str = "solve") -> Tensor:
        """``x`` with ``A x = rhs`` for a (batch of) vectors ``rhs`` ``[..., M]``."""
        self._check_solvable()
        with self._name_scope(name):
            rhs = convert_to_tensor(rhs, name="rhs")
            self._check_input_dtype(rhs)
            self_dim = -1 if adjoint else -2
            require_compatible(self.shape[self_dim], rhs.shape[-1], "solvevec")
            return self._solvevec(rhs, adjoint=adjoint)

    # --- scalars of the matrix -----------------------------------------------------------
    def _check_square_for(self, what: str) -> None:
        if self.is_square is False:
            raise NotImplementedError(
                f"{what} not implemented for an operator that is expected to not be square."
            )

    def _determinant(self) -> Tensor:
        if self._can_use_cholesky():
            return math_ops.exp(self.log_abs_determinant())
        return decomp.matrix_determinant(self.to_dense())

    def determinant(self, name: str = "det") -> Tensor:
        """The determinant of each matrix, shape ``batch_shape``."""
        self._check_square_for("Determinant")
        with self._name_scope(name):
            return self._determinant()

    def _log_abs_determinant(self) -> Tensor:
        if self._can_use_cholesky():
            chol_diag = diag.matrix_diag_part(decomp.cholesky(self.to_dense()))
            log_det = 2.0 * math_ops.reduce_sum(math_ops.log(math_ops.abs(chol_diag)), axis=[-1])
            return math_ops.cast(log_det, self.dtype)
        _, log_abs = factor.slogdet(self.to_dense())
        return log_abs

    def log_abs_determinant(self, name: str = "log_abs_det") -> Tensor:
        """``log |det A|`` of each matrix, shape ``batch_shape``."""
        self._check_square_for("Determinant")
        with self._name_scope(name):
            return self._log_abs_determinant()

    def _to_dense(self) -> Tensor:
        batch = self.batch_shape
        n = static_dim(self.domain_dimension)
        batch_arg: Any = batch.as_list() if batch.is_fully_defined() else self.batch_shape_tensor()
        num_rows: Any = n if n is not None else self.domain_dimension_tensor()
        eye = diag.eye(num_rows=num_rows, batch_shape=batch_arg, dtype=self.dtype)
        return self.matmul(eye)

    def to_dense(self, name: str = "to_dense") -> Tensor:
        """The matrix as a dense tensor ``batch_shape + [M, N]``."""
        with self._name_scope(name):
            return self._to_dense()

    def _diag_part(self) -> Tensor:
        return diag.matrix_diag_part(self.to_dense())

    def diag_part(self, name: str = "diag_part") -> Tensor:
        """The main diagonal, ``batch_shape + [min(M, N)]``."""
        with self._name_scope(name):
            return self._diag_part()

    def _trace(self) -> Tensor:
        return math_ops.reduce_sum(self.diag_part(), axis=-1)

    def trace(self, name: str = "trace") -> Tensor:
        """The sum of the main diagonal, shape ``batch_shape``."""
        with self._name_scope(name):
            return self._trace()

    def _add_to_tensor(self, x: Tensor) -> Tensor:
        return math_ops.add(self.to_dense(), x)

    def add_to_tensor(self, x: Any, name: str = "add_to_tensor") -> Tensor:
        """``A + x`` for a tensor ``x`` of the operator's shape."""
        with self._name_scope(name):
            x = convert_to_tensor(x, name="x")
            self._check_input_dtype(x)
            return self._add_to_tensor(x)

    def _eigvals(self) -> Tensor:
        if not self.is_self_adjoint:
            raise NotImplementedError("Only self-adjoint matrices are supported.")
        return factor.self_adjoint_eigvals(self.to_dense())

    def eigvals(self, name: str = "eigvals") -> Tensor:
        """The eigenvalues (only for self-adjoint operators, as TF), ``batch + [N]``."""
        if not self.is_self_adjoint:
            raise NotImplementedError("Only self-adjoint matrices are supported.")
        with self._name_scope(name):
            return self._eigvals()

    def _cond(self) -> Tensor:
        vals = factor.svd(self.to_dense(), compute_uv=False)
        return math_ops.realdiv(
            math_ops.reduce_max(vals, axis=-1), math_ops.reduce_min(vals, axis=-1)
        )

    def cond(self, name: str = "cond") -> Tensor:
        """The condition number (largest over smallest singular value)."""
        with self._name_scope(name):
            return self._cond()

    # --- checks --------------------------------------------------------------------------
    def _assert_non_singular(self) -> Any:
        if self._can_use_cholesky():
            return self.assert_positive_definite()
        vals = factor.svd(self.to_dense(), compute_uv=False)
        ratio = math_ops.realdiv(
            math_ops.reduce_max(vals, axis=-1), math_ops.reduce_min(vals, axis=-1)
        )
        eps = float(np.finfo(vals.dtype.as_numpy_dtype).eps)
        return check_ops.assert_less(
            ratio,
            math_ops.cast(100.0 / eps, vals.dtype),
            message="Singular matrix up to precision epsilon.",
        )

    def assert_non_singular(self, name: str = "assert_non_singular") -> Any:
        """An op that fails at run time (``InvalidArgumentError``) if some matrix is
        singular."""
        with self._name_scope(name):
            return self._assert_non_singular()

    def _assert_positive_definite(self) -> Any:
        if self.is_self_adjoint:
            chol = decomp.cholesky(self.to_dense())
            return check_ops.assert_positive(
                math_ops.real(diag.matrix_diag_part(chol)),
                message="Matrix was not positive definite.",
            )
        raise NotImplementedError("assert_positive_definite is not implemented.")

    def assert_positive_definite(self, name: str = "assert_positive_definite") -> Any:
        """An op that fails at run time if some (self-adjoint) matrix is not positive
        definite."""
        with self._name_scope(name):
            return self._assert_positive_definite()

    def _assert_self_adjoint(self) -> Any:
        dense = self.to_dense()
        return check_ops.assert_equal(
            dense, matrix_adjoint(dense), message="Matrix was not equal to its adjoint."
        )

    def assert_self_adjoint(self, name: str = "assert_self_adjoint") -> Any:
        """An op that fails at run time if some matrix differs from its adjoint."""
        with self._name_scope(name):
            return self._assert_self_adjoint()

    # --- operators from operators ---------------------------------------------------------
    def _linop_adjoint(self) -> LinearOperator:
        return DEFAULT_CONSTRUCTIONS["adjoint"](self)

    def adjoint(self, name: str = "adjoint") -> LinearOperator:
        """The adjoint (conjugate transpose) as an operator; ``self`` when the operator
        is self-adjoint."""
        if self.is_self_adjoint is True:
            return self
        with self._name_scope(name):
            return self._linop_adjoint()

    H = property(adjoint, None)

    def _linop_inverse(self) -> LinearOperator:
        return DEFAULT_CONSTRUCTIONS["inverse"](self)

    def inverse(self, name: str = "inverse") -> LinearOperator:
        """The inverse as an operator.

        Raises:
            ValueError: the hints say the operator is singular or not square.
        """
        if self.is_square is False:
            raise ValueError(
                "Cannot take the Inverse: This operator represents a non square matrix."
            )
        if self.is_non_singular is False:
            raise ValueError("Cannot take the Inverse: This operator represents a singular matrix.")
        with self._name_scope(name):
            return self._linop_inverse()

    def _linop_cholesky(self) -> LinearOperator:
        return DEFAULT_CONSTRUCTIONS["cholesky"](self)

    def cholesky(self, name: str = "cholesky") -> LinearOperator:
        """The lower-triangular Cholesky factor as an operator.

        Raises:
            ValueError: the hints do not say self-adjoint and positive definite.
        """
        if not self._can_use_cholesky():
            raise ValueError(
                "Cannot take the Cholesky decomposition: "
                "Not a positive definite self adjoint matrix."
            )
        with self._name_scope(name):
            return self._linop_cholesky()

    def _linop_matmul(self, left: LinearOperator, right: LinearOperator) -> LinearOperator:
        if getattr(right, "is_identity", False):
            return left
        if getattr(left, "is_identity", False):
            return right
        return DEFAULT_CONSTRUCTIONS["matmul"](left, right)

    def _linop_solve(self, left: LinearOperator, right: LinearOperator) -> LinearOperator:
        if getattr(left, "is_identity", False):
            return right
        return left.inverse()._linop_matmul(left.inverse(), right)
