"""Operators made of other operators, acting through them:
``LinearOperatorAdjoint`` (``A^H``), ``LinearOperatorInversion`` (``A^-1``) and
``LinearOperatorComposition`` (``A1 A2 ... An``).

None of them forms a matrix: the adjoint calls its operator with ``adjoint`` flipped,
the inversion swaps ``matmul`` and ``solve``, and the composition applies its operators
right to left (solving left to right). Batch dimensions broadcast through the calls.
Also here: ``broadcast_batches``, which brings the pieces of a block result to one
batch shape before they are concatenated.
"""

from __future__ import annotations

from typing import Any

from ....framework.graph import Tensor
from ....framework.tensor_shape import TensorShape
from ... import array as array_ops
from ... import math as math_ops
from ..contraction import adjoint as matrix_adjoint
from .base import DEFAULT_CONSTRUCTIONS, LinearOperator
from .hints import all_true_hint, combine_hints, require_compatible


def static_batch(operators: list[LinearOperator]) -> TensorShape:
    """The broadcast static batch shape of ``operators``."""
    batch = operators[0].batch_shape
    for op in operators[1:]:
        batch = array_ops.broadcast_static_shape(batch, op.batch_shape)
    return batch


def dynamic_batch(operators: list[LinearOperator]) -> Tensor:
    """The broadcast batch shape of ``operators`` as a 1-D int32 tensor."""
    batch = operators[0].batch_shape_tensor()
    for op in operators[1:]:
        batch = array_ops.broadcast_dynamic_shape(batch, op.batch_shape_tensor())
    return batch


def broadcast_batches(tensors: list[Tensor], inner: int) -> list[Tensor]:
    """``tensors`` broadcast to one batch shape (all dimensions but the last
    ``inner``), static where the shapes are known."""
    shapes = [t.shape for t in tensors]
    if all(s.is_fully_defined() for s in shapes):
        batch = shapes[0][:-inner]
        for s in shapes[1:]:
            batch = array_ops.broadcast_static_shape(batch, s[:-inner])
        return [
            t
            if t.shape[:-inner] == batch
            else array_ops.broadcast_to(t, batch.concatenate(t.shape[-inner:]).as_list())
            for t in tensors
        ]
    dyn = array_ops.shape(tensors[0])[:-inner]
    for t in tensors[1:]:
        dyn = array_ops.broadcast_dynamic_shape(dyn, array_ops.shape(t)[:-inner])
    return [
        array_ops.broadcast_to(t, array_ops.concat([dyn, array_ops.shape(t)[-inner:]], 0))
        for t in tensors
    ]


class LinearOperatorAdjoint(LinearOperator):
    """The adjoint ``A^H`` of ``operator``, through ``operator``'s own methods.

    Raises:
        ValueError: a hint differs from ``operator``'s.
    """

    def __init__(
        self,
        operator: LinearOperator,
        is_non_singular: bool | None = None,
        is_self_adjoint: bool | None = None,
        is_positive_definite: bool | None = None,
        is_square: bool | None = None,
        name: str | None = None,
    ) -> None:
        self._operator = operator
        super().__init__(
            dtype=operator.dtype,
            graph_parents=operator.graph_parents,
            is_non_singular=combine_hints(
                "non-singular", "adjoint", operator.is_non_singular, is_non_singular
            ),
            is_self_adjoint=combine_hints(
                "self-adjoint", "adjoint", operator.is_self_adjoint, is_self_adjoint
            ),
            is_positive_definite=combine_hints(
                "positive-definite", "adjoint", operator.is_positive_definite, is_positive_definite
            ),
            is_square=combine_hints("square", "adjoint", operator.is_square, is_square),
            name=name if name is not None else operator.name + "_adjoint",
        )

    @property
    def operator(self) -> LinearOperator:
        """The operator this is the adjoint of."""
        return self._operator

    def _shape(self) -> TensorShape:
        s = self._operator.shape
        return s[:-2].concatenate([s[-1], s[-2]])

    def _shape_tensor(self) -> Tensor:
        s = self._operator.shape_tensor()
        return array_ops.concat([s[:-2], s[-1:], s[-2:-1]], 0)

    def _matmul(self, x: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        return self._operator.matmul(x, adjoint=not adjoint, adjoint_arg=adjoint_arg)

    def _matvec(self, x: Tensor, adjoint: bool = False) -> Tensor:
        return self._operator.matvec(x, adjoint=not adjoint)

    def _solve(self, rhs: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        return self._operator.solve(rhs, adjoint=not adjoint, adjoint_arg=adjoint_arg)

    def _solvevec(self, rhs: Tensor, adjoint: bool = False) -> Tensor:
        return self._operator.solvevec(rhs, adjoint=not adjoint)

    def _determinant(self) -> Tensor:
        if self.is_self_adjoint:
            return self._operator.determinant()
        return math_ops.conj(self._operator.determinant())

    def _log_abs_determinant(self) -> Tensor:
        return self._operator.log_abs_determinant()

    def _trace(self) -> Tensor:
        return math_ops.conj(self._operator.trace())

    def _diag_part(self) -> Tensor:
        return math_ops.conj(self._operator.diag_part())

    def _to_dense(self) -> Tensor:
        return matrix_adjoint(self._operator.to_dense())

    def _eigvals(self) -> Tensor:
        return math_ops.conj(self._operator.eigvals())

    def _cond(self) -> Tensor:
        return self._operator.cond()

    def _assert_non_singular(self) -> Any:
        return self._operator.assert_non_singular()

    def _assert_positive_definite(self) -> Any:
        return self._operator.assert_positive_definite()

    def _assert_self_adjoint(self) -> Any:
        return self._operator.assert_self_adjoint()

    def _linop_adjoint(self) -> LinearOperator:
        return self._operator


class LinearOperatorInversion(LinearOperator):
    """The inverse ``A^-1`` of ``operator``: ``matmul`` is ``operator.solve`` and
    ``solve`` is ``operator.matmul``.

    Raises:
        ValueError: ``operator`` or the hints say singular or not square, or a hint
            differs from ``operator``'s.
    """

    def __init__(
        self,
        operator: LinearOperator,
        is_non_singular: bool | None = None,
        is_self_adjoint: bool | None = None,
        is_positive_definite: bool | None = None,
        is_square: bool | None = None,
        name: str | None = None,
    ) -> None:
        if operator.is_non_singular is False or is_non_singular is False:
            raise ValueError(
                f"operator and supplied hints must be non-singular. Found: "
                f"operator.is_non_singular = {operator.is_non_singular}, "
                f"is_non_singular = {is_non_singular}."
            )
        if operator.is_square is False or is_square is False:
            raise ValueError(
                f"operator and supplied hints must be square. Found: "
                f"operator.is_square = {operator.is_square}, is_square = {is_square}."
            )
        self._operator = operator
        super().__init__(
            dtype=operator.dtype,
            graph_parents=operator.graph_parents,
            is_non_singular=combine_hints(
                "non-singular", "inverse", operator.is_non_singular, is_non_singular
            ),
            is_self_adjoint=combine_hints(
                "self-adjoint", "inverse", operator.is_self_adjoint, is_self_adjoint
            ),
            is_positive_definite=combine_hints(
                "positive-definite", "inverse", operator.is_positive_definite, is_positive_definite
            ),
            is_square=combine_hints("square", "inverse", operator.is_square, is_square),
            name=name if name is not None else operator.name + "_inv",
        )

    @property
    def operator(self) -> LinearOperator:
        """The operator this is the inverse of."""
        return self._operator

    def _shape(self) -> TensorShape:
        return self._operator.shape

    def _shape_tensor(self) -> Tensor:
        return self._operator.shape_tensor()

    def _matmul(self, x: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        return self._operator.solve(x, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _matvec(self, x: Tensor, adjoint: bool = False) -> Tensor:
        return self._operator.solvevec(x, adjoint=adjoint)

    def _solve(self, rhs: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        return self._operator.matmul(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _solvevec(self, rhs: Tensor, adjoint: bool = False) -> Tensor:
        return self._operator.matvec(rhs, adjoint=adjoint)

    def _determinant(self) -> Tensor:
        return math_ops.reciprocal(self._operator.determinant())

    def _log_abs_determinant(self) -> Tensor:
        return math_ops.negative(self._operator.log_abs_determinant())

    def _cond(self) -> Tensor:
        return self._operator.cond()

    def _eigvals(self) -> Tensor:
        return math_ops.reciprocal(self._operator.eigvals())

    def _assert_non_singular(self) -> Any:
        return self._operator.assert_non_singular()

    def _assert_positive_definite(self) -> Any:
        return self._operator.assert_positive_definite()

    def _assert_self_adjoint(self) -> Any:
        return self._operator.assert_self_adjoint()

    def _linop_inverse(self) -> LinearOperator:
        return self._operator


class LinearOperatorComposition(LinearOperator):
    """The product ``A1 A2 ... An`` of ``operators`` (same dtype, chained static
    dimensions), whose batch shapes broadcast.

    Raises:
        ValueError: ``operators`` is empty, neighbouring dimensions differ, or
            ``is_non_singular=False`` for non-singular operators.
        TypeError: the operators' dtypes differ.
    """

    def __init__(
        self,
        operators: list[LinearOperator],
        is_non_singular: bool | None = None,
        is_self_adjoint: bool | None = None,
        is_positive_definite: bool | None = None,
        is_square: bool | None = None,
        name: str | None = None,
    ) -> None:
        operators = list(operators)
        if not operators:
            raise ValueError(f"Expected a non-empty list of operators. Found: {operators}")
        check_same_dtype(operators)
        for a, b in zip(operators[:-1], operators[1:]):
            require_compatible(a.domain_dimension, b.range_dimension, "Operators are incompatible")
        self._operators = operators
        is_non_singular = all_true_hint(
            [op.is_non_singular for op in operators],
            is_non_singular,
            "The composition of non-singular operators is always non-singular.",
        )
        super().__init__(
            dtype=operators[0].dtype,
            graph_parents=[t for op in operators for t in op.graph_parents],
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
            name=name if name is not None else "_o_".join(op.name for op in operators),
        )

    @property
    def operators(self) -> list[LinearOperator]:
        """The factors, leftmost first."""
        return self._operators

    def _shape(self) -> TensorShape:
        ops = self._operators
        return static_batch(ops).concatenate([ops[0].range_dimension, ops[-1].domain_dimension])

    def _shape_tensor(self) -> Tensor:
        ops = self._operators
        return array_ops.concat(
            [
                dynamic_batch(ops),
                array_ops.stack(
                    [ops[0].range_dimension_tensor(), ops[-1].domain_dimension_tensor()]
                ),
            ],
            0,
        )

    def _matmul(self, x: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        order = self._operators if adjoint else self._operators[::-1]
        result = order[0].matmul(x, adjoint=adjoint, adjoint_arg=adjoint_arg)
        for op in order[1:]:
            result = op.matmul(result, adjoint=adjoint)
        return result

    def _solve(self, rhs: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        order = self._operators[::-1] if adjoint else self._operators
        result = order[0].solve(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)
        for op in order[1:]:
            result = op.solve(result, adjoint=adjoint)
        return result

    def _determinant(self) -> Tensor:
        result = self._operators[0].determinant()
        for op in self._operators[1:]:
            result = math_ops.multiply(result, op.determinant())
        return result

    def _log_abs_determinant(self) -> Tensor:
        result = self._operators[0].log_abs_determinant()
        for op in self._operators[1:]:
            result = math_ops.add(result, op.log_abs_determinant())
        return result

    def _to_dense(self) -> Tensor:
        result = self._operators[-1].to_dense()
        for op in self._operators[-2::-1]:
            result = op.matmul(result)
        return result


def check_same_dtype(operators: list[LinearOperator]) -> None:
    """Raises ``TypeError`` unless every operator has the same dtype."""
    dtypes_seen = {op.dtype for op in operators}
    if len(dtypes_seen) > 1:
        raise TypeError(
            "Expected all operators to have the same dtype.  Found "
            + "   ".join(f"{op.name}: {op.dtype.name}" for op in operators)
        )


def _compose(left: LinearOperator, right: LinearOperator) -> LinearOperator:
    both_non_singular = left.is_non_singular is True and right.is_non_singular is True
    return LinearOperatorComposition(
        [left, right],
        is_non_singular=True if both_non_singular else None,
        is_square=True if left.is_square is True and right.is_square is True else None,
    )


DEFAULT_CONSTRUCTIONS.update(
    adjoint=LinearOperatorAdjoint, inverse=LinearOperatorInversion, matmul=_compose
)
