"""Block-structured operators: ``LinearOperatorBlockDiag`` (a direct sum),
``LinearOperatorBlockLowerTriangular`` and ``LinearOperatorKronecker``.

A block operator splits its argument along the matrix dimension into the blocks'
pieces, lets each block act on its piece, brings the results to one batch shape and
concatenates them. A block lower-triangular solve is block forward substitution (the
adjoint solve block back substitution). A Kronecker product ``A1 (x) ... (x) Ak``
never forms its matrix: the argument is reshaped so that factor ``i`` acts on axis
``i`` of an ``[n1, ..., nk]`` grid (moved to the matrix position, with the other axes
folded into columns and a leading batch axis), one factor at a time. Its determinant
is ``prod det(Ai)^(N / ni)``.
"""

from __future__ import annotations

import math
from typing import Any

from ....framework.graph import Tensor, convert_to_tensor
from ....framework.tensor_shape import Dimension, TensorShape
from ... import array as array_ops
from ... import math as math_ops
from ..contraction import adjoint as matrix_adjoint
from .base import LinearOperator
from .hints import all_true_hint, dense_matmul_of, real_dtype_of, require_compatible, static_dim
from .wrappers import broadcast_batches, check_same_dtype, dynamic_batch, static_batch


def _dim(op: LinearOperator, domain: bool) -> Any:
    """An operator's domain (or range) dimension: an int when static, else a tensor."""
    d = static_dim(op.domain_dimension if domain else op.range_dimension)
    if d is not None:
        return d
    return op.domain_dimension_tensor() if domain else op.range_dimension_tensor()


def _sizes(dims: list) -> Any:
    if all(isinstance(d, int) for d in dims):
        return dims
    return array_ops.stack([convert_to_tensor(d) for d in dims])


def _sum_dims(dims: list[Dimension]) -> Dimension:
    values = [d.value for d in dims]
    return Dimension(None if None in values else sum(values))


def _sum(tensors: list[Tensor]) -> Tensor:
    result = tensors[0]
    for t in tensors[1:]:
        result = math_ops.add(result, t)
    return result


def _product(tensors: list[Tensor]) -> Tensor:
    result = tensors[0]
    for t in tensors[1:]:
        result = math_ops.multiply(result, t)
    return result


def _concat_blocks(pieces: list[Tensor], axis: int, inner: int) -> Tensor:
    return array_ops.concat(broadcast_batches(pieces, inner), axis)


class LinearOperatorBlockDiag(LinearOperator):
    """The block-diagonal (direct sum) of ``operators``: ``[[A1, 0], [0, A2]]``.

    Raises:
        TypeError: the operators' dtypes differ.
        ValueError: ``operators`` is empty, or a hint contradicts the blocks' hints.
    """

    def __init__(
        self,
        operators: list[LinearOperator],
        is_non_singular: bool | None = None,
        is_self_adjoint: bool | None = None,
        is_positive_definite: bool | None = None,
        is_square: bool | None = True,
        name: str | None = None,
    ) -> None:
        operators = list(operators)
        if not operators:
            raise ValueError(f"Expected a non-empty list of operators. Found: {operators}")
        check_same_dtype(operators)
        self._operators = operators
        super().__init__(
            dtype=operators[0].dtype,
            graph_parents=[t for op in operators for t in op.graph_parents],
            is_non_singular=all_true_hint(
                [op.is_non_singular for op in operators],
                is_non_singular,
                "The direct sum of non-singular operators is always non-singular.",
            ),
            is_self_adjoint=all_true_hint(
                [op.is_self_adjoint for op in operators],
                is_self_adjoint,
                "The direct sum of self-adjoint operators is always self-adjoint.",
            ),
            is_positive_definite=all_true_hint(
                [op.is_positive_definite for op in operators],
                is_positive_definite,
                "The direct sum of positive definite operators is always positive definite.",
            ),
            is_square=all_true_hint(
                [op.is_square for op in operators],
                is_square,
                "The direct sum of square operators is always square.",
            ),
            name=name if name is not None else "_ds_".join(op.name for op in operators),
        )

    @property
    def operators(self) -> list[LinearOperator]:
        """The diagonal blocks, top-left first."""
        return self._operators

    def _shape(self) -> TensorShape:
        ops = self._operators
        return static_batch(ops).concatenate(
            [
                _sum_dims([op.range_dimension for op in ops]),
                _sum_dims([op.domain_dimension for op in ops]),
            ]
        )

    def _shape_tensor(self) -> Tensor:
        ops = self._operators
        rows = math_ops.add_n([op.range_dimension_tensor() for op in ops])
        cols = math_ops.add_n([op.domain_dimension_tensor() for op in ops])
        return array_ops.concat([dynamic_batch(ops), array_ops.stack([rows, cols])], 0)

    def _apply(self, x: Tensor, adjoint: bool, adjoint_arg: bool, solve: bool) -> Tensor:
        x = matrix_adjoint(x) if adjoint_arg else x
        # matmul takes the domain pieces (range with adjoint); solve the other way.
        domain = adjoint == solve
        pieces = array_ops.split(x, _sizes([_dim(op, domain) for op in self._operators]), axis=-2)
        fn = "solve" if solve else "matmul"
        results = [getattr(op, fn)(p, adjoint=adjoint) for op, p in zip(self._operators, pieces)]
        return _concat_blocks(results, -2, 2)

    def _matmul(self, x: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        return self._apply(x, adjoint, adjoint_arg, solve=False)

    def _solve(self, rhs: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        return self._apply(rhs, adjoint, adjoint_arg, solve=True)

    def _determinant(self) -> Tensor:
        return _product([op.determinant() for op in self._operators])

    def _log_abs_determinant(self) -> Tensor:
        return _sum([op.log_abs_determinant() for op in self._operators])

    def _trace(self) -> Tensor:
        return _sum([op.trace() for op in self._operators])

    def _diag_part(self) -> Tensor:
        if not all(op.is_square for op in self._operators):
            return super()._diag_part()
        return _concat_blocks([op.diag_part() for op in self._operators], -1, 1)

    def _to_dense(self) -> Tensor:
        dense = broadcast_batches([op.to_dense() for op in self._operators], 2)
        cols = [_dim(op, True) for op in self._operators]
        rows = []
        for i, block in enumerate(dense):
            before = _sum_or_zero(cols[:i])
            after = _sum_or_zero(cols[i + 1 :])
            rows.append(_pad_columns(block, before, after))
        return array_ops.concat(rows, -2)

    def _linop_adjoint(self) -> LinearOperator:
        return LinearOperatorBlockDiag([op.adjoint() for op in self._operators])

    def _linop_inverse(self) -> LinearOperator:
        return LinearOperatorBlockDiag([op.inverse() for op in self._operators])

    def _linop_cholesky(self) -> LinearOperator:
        return LinearOperatorBlockDiag(
            [op.cholesky() for op in self._operators], is_non_singular=True
        )


def _pad_columns(block: Tensor, before: Any, after: Any) -> Tensor:
    """``block`` with ``before``/``after`` zero columns (ints or scalar tensors)."""
    lead = [[0, 0]] * (len(block.shape) - 1)
    if isinstance(before, int) and isinstance(after, int):
        return array_ops.pad(block, lead + [[before, after]])
    last = array_ops.reshape(array_ops.stack([before, after]), [1, 2])
    paddings = array_ops.concat([array_ops.zeros([len(lead), 2], dtype=last.dtype), last], 0)
    return array_ops.pad(block, paddings)


def _sum_or_zero(dims: list) -> Any:
    if not dims:
        return 0
    if all(isinstance(d, int) for d in dims):
        return sum(dims)
    return math_ops.add_n([convert_to_tensor(d) for d in dims])


class LinearOperatorBlockLowerTriangular(LinearOperator):
    """A square block lower-triangular operator from ``operators``, a list of lists
    whose ``i``-th row holds the ``i + 1`` blocks ``A_i0 ... A_ii`` (the diagonal blocks
    square).

    Raises:
        ValueError: ``operators`` is empty or a row has the wrong length, or the blocks'
            dimensions do not fit together.
        TypeError: the blocks' dtypes differ.
    """

    def __init__(
        self,
        operators: list[list[LinearOperator]],
        is_non_singular: bool | None = None,
        is_self_adjoint: bool | None = None,
        is_positive_definite: bool | None = None,
        is_square: bool | None = None,
        name: str = "LinearOperatorBlockLowerTriangular",
    ) -> None:
        rows = [list(row) for row in operators]
        if not rows:
            raise ValueError(f"Expected a non-empty list of operators. Found: {operators}")
        for i, row in enumerate(rows):
            if len(row) != i + 1:
                raise ValueError(
                    f"Argument `operators` must be a list of lists where the {i}th list "
                    f"has length {i + 1}. Found length {len(row)}."
                )
        flat = [op for row in rows for op in row]
        check_same_dtype(flat)
        for i, row in enumerate(rows):
            require_compatible(
                row[i].domain_dimension, row[i].range_dimension, "Diagonal blocks must be square"
            )
            for j, op in enumerate(row[:-1]):
                require_compatible(op.range_dimension, row[i].range_dimension, "Block rows")
                require_compatible(
                    op.domain_dimension, rows[j][j].domain_dimension, "Block columns"
                )
        if is_square is False:
            raise ValueError("A block lower-triangular operator is always square.")
        self._operators = rows
        self._diag_ops = [row[i] for i, row in enumerate(rows)]
        super().__init__(
            dtype=flat[0].dtype,
            graph_parents=[t for op in flat for t in op.graph_parents],
            is_non_singular=all_true_hint(
                [op.is_non_singular for op in self._diag_ops],
                is_non_singular,
                "A block lower triangular operator with non-singular diagonal blocks is "
                "always non-singular.",
            ),
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=True,
            name=name,
        )

    @property
    def operators(self) -> list[list[LinearOperator]]:
        """The blocks, row by row."""
        return self._operators

    def _flat(self) -> list[LinearOperator]:
        return [op for row in self._operators for op in row]

    def _shape(self) -> TensorShape:
        n = _sum_dims([op.domain_dimension for op in self._diag_ops])
        return static_batch(self._flat()).concatenate([n, n])

    def _shape_tensor(self) -> Tensor:
        n = math_ops.add_n([op.domain_dimension_tensor() for op in self._diag_ops])
        return array_ops.concat([dynamic_batch(self._flat()), array_ops.stack([n, n])], 0)

    def _split(self, x: Tensor) -> list[Tensor]:
        return array_ops.split(x, _sizes([_dim(op, True) for op in self._diag_ops]), axis=-2)

    def _matmul(self, x: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        x = matrix_adjoint(x) if adjoint_arg else x
        pieces = self._split(x)
        k = len(self._diag_ops)
        if adjoint:
            out = [
                _sum([self._operators[i][j].matmul(pieces[i], adjoint=True) for i in range(j, k)])
                for j in range(k)
            ]
        else:
            out = [
                _sum([self._operators[i][j].matmul(pieces[j]) for j in range(i + 1)])
                for i in range(k)
            ]
        return _concat_blocks(out, -2, 2)

    def _solve(self, rhs: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        rhs = matrix_adjoint(rhs) if adjoint_arg else rhs
        pieces = self._split(rhs)
        k = len(self._diag_ops)
        sol: list[Any] = [None] * k
        order = range(k - 1, -1, -1) if adjoint else range(k)
        for i in order:
            b = pieces[i]
            if adjoint:
                known = [
                    self._operators[j][i].matmul(sol[j], adjoint=True) for j in range(i + 1, k)
                ]
            else:
                known = [self._operators[i][j].matmul(sol[j]) for j in range(i)]
            if known:
                b = math_ops.subtract(b, _sum(known))
            sol[i] = self._diag_ops[i].solve(b, adjoint=adjoint)
        return _concat_blocks(sol, -2, 2)

    def _determinant(self) -> Tensor:
        return _product([op.determinant() for op in self._diag_ops])

    def _log_abs_determinant(self) -> Tensor:
        return _sum([op.log_abs_determinant() for op in self._diag_ops])

    def _trace(self) -> Tensor:
        return _sum([op.trace() for op in self._diag_ops])

    def _diag_part(self) -> Tensor:
        return _concat_blocks([op.diag_part() for op in self._diag_ops], -1, 1)

    def _to_dense(self) -> Tensor:
        k = len(self._diag_ops)
        cols = [_dim(op, True) for op in self._diag_ops]
        rows = []
        for i, row in enumerate(self._operators):
            block = _concat_blocks([op.to_dense() for op in row], -1, 2)
            rows.append(_pad_columns(block, 0, _sum_or_zero(cols[i + 1 : k])))
        return _concat_blocks(rows, -2, 2)


class LinearOperatorKronecker(LinearOperator):
    """The Kronecker product ``A1 (x) A2 (x) ... (x) Ak`` of ``operators``, whose batch
    shapes broadcast.

    Raises:
        TypeError: the operators' dtypes differ.
        ValueError: ``operators`` is empty, or a hint contradicts the factors' hints.
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
        self._operators = operators
        super().__init__(
            dtype=operators[0].dtype,
            graph_parents=[t for op in operators for t in op.graph_parents],
            is_non_singular=all_true_hint(
                [op.is_non_singular for op in operators],
                is_non_singular,
                "The Kronecker product of non-singular operators is always non-singular.",
            ),
            is_self_adjoint=all_true_hint(
                [op.is_self_adjoint for op in operators],
                is_self_adjoint,
                "The Kronecker product of self-adjoint operators is always self-adjoint.",
            ),
            is_positive_definite=all_true_hint(
                [op.is_positive_definite for op in operators],
                is_positive_definite,
                "The Kronecker product of positive-definite operators is always positive-definite.",
            ),
            is_square=all_true_hint(
                [op.is_square for op in operators],
                is_square,
                "The Kronecker product of square operators is always square.",
            ),
            name=name if name is not None else "_x_".join(op.name for op in operators),
        )

    @property
    def operators(self) -> list[LinearOperator]:
        """The factors, outermost first."""
        return self._operators

    def _shape(self) -> TensorShape:
        def prod(dims: list[Dimension]) -> Dimension:
            out = 1
            for d in dims:
                if d.value is None:
                    return Dimension(None)
                out *= d.value
            return Dimension(out)

        ops = self._operators
        return static_batch(ops).concatenate(
            [prod([op.range_dimension for op in ops]), prod([op.domain_dimension for op in ops])]
        )

    def _shape_tensor(self) -> Tensor:
        ops = self._operators
        rows = _product([op.range_dimension_tensor() for op in ops])
        cols = _product([op.domain_dimension_tensor() for op in ops])
        return array_ops.concat([dynamic_batch(ops), array_ops.stack([rows, cols])], 0)

    def _factorwise(self, x: Tensor, adjoint: bool, solve: bool) -> Tensor | None:
        """Applies each factor to its axis of the grid; ``None`` when a needed static
        dimension or rank is unknown."""
        ins_or_none = [
            static_dim(op.range_dimension if adjoint != solve else op.domain_dimension)
            for op in self._operators
        ]
        outs_or_none = [
            static_dim(op.domain_dimension if adjoint != solve else op.range_dimension)
            for op in self._operators
        ]
        r = static_dim(x.shape[-1])
        batch_x = x.shape[:-2]
        if None in ins_or_none or None in outs_or_none or r is None:
            return None
        if not batch_x.is_fully_defined():
            return None
        ins = [int(d or 0) for d in ins_or_none]
        outs = [int(d or 0) for d in outs_or_none]
        batch = array_ops.broadcast_static_shape(self.batch_shape, batch_x)
        if not batch.is_fully_defined():
            return None
        b = [int(d or 0) for d in batch.as_list()]
        rank = len(b)
        cur = array_ops.broadcast_to(x, b + [math.prod(ins), r]) if batch_x != batch else x
        dims = list(ins)
        for i, op in enumerate(self._operators):
            lead = 1
            for d in dims[:i]:
                lead *= d
            tail = r
            for d in dims[i + 1 :]:
                tail *= d
            cur = array_ops.reshape(cur, b + [lead, dims[i], tail])
            cur = array_ops.transpose(cur, [rank] + list(range(rank)) + [rank + 1, rank + 2])
            cur = op.solve(cur, adjoint=adjoint) if solve else op.matmul(cur, adjoint=adjoint)
            cur = array_ops.transpose(cur, list(range(1, rank + 1)) + [0, rank + 1, rank + 2])
            dims[i] = outs[i]
            cur = array_ops.reshape(cur, b + [lead * outs[i] * (tail // r), r])
        return cur

    def _matmul(self, x: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        x = matrix_adjoint(x) if adjoint_arg else x
        out = self._factorwise(x, adjoint, solve=False)
        if out is not None:
            return out
        return dense_matmul_of(self.to_dense(), x, adjoint=adjoint)

    def _solve(self, rhs: Tensor, adjoint: bool = False, adjoint_arg: bool = False) -> Tensor:
        rhs = matrix_adjoint(rhs) if adjoint_arg else rhs
        out = self._factorwise(rhs, adjoint, solve=True)
        if out is not None:
            return out
        return super()._solve(rhs, adjoint=adjoint)

    def _powers(self) -> list[Tensor]:
        """``N / n_i`` for each factor, in the operator's real dtype."""
        total = self.domain_dimension_tensor()
        return [
            math_ops.cast(
                math_ops.floordiv(total, op.domain_dimension_tensor()), real_dtype_of(self.dtype)
            )
            for op in self._operators
        ]

    def _determinant(self) -> Tensor:
        return _product(
            [
                math_ops.pow(op.determinant(), math_ops.cast(p, self.dtype))
                for op, p in zip(self._operators, self._powers())
            ]
        )

    def _log_abs_determinant(self) -> Tensor:
        return _sum(
            [
                math_ops.multiply(op.log_abs_determinant(), math_ops.cast(p, self.dtype))
                for op, p in zip(self._operators, self._powers())
            ]
        )

    def _trace(self) -> Tensor:
        return _product([op.trace() for op in self._operators])

    def _diag_part(self) -> Tensor:
        if not all(op.is_square for op in self._operators):
            return super()._diag_part()
        result = self._operators[0].diag_part()
        for op in self._operators[1:]:
            d = op.diag_part()
            outer = math_ops.multiply(
                array_ops.expand_dims(result, -1), array_ops.expand_dims(d, -2)
            )
            result = _flatten_last(outer, 2)
        return result

    def _to_dense(self) -> Tensor:
        result = self._operators[0].to_dense()
        for op in self._operators[1:]:
            d = op.to_dense()
            a = array_ops.expand_dims(array_ops.expand_dims(result, -1), -3)
            b = array_ops.expand_dims(array_ops.expand_dims(d, -2), -4)
            result = _flatten_pairs(math_ops.multiply(a, b))
        return result

    def _linop_adjoint(self) -> LinearOperator:
        return LinearOperatorKronecker([op.adjoint() for op in self._operators])

    def _linop_inverse(self) -> LinearOperator:
        return LinearOperatorKronecker([op.inverse() for op in self._operators])

    def _linop_cholesky(self) -> LinearOperator:
        return LinearOperatorKronecker(
            [op.cholesky() for op in self._operators], is_non_singular=True
        )


def _flatten_last(t: Tensor, n: int) -> Tensor:
    """Merges the last ``n`` (= 2) dimensions of ``t``."""
    s = t.shape
    if s.is_fully_defined():
        dims = [int(d or 0) for d in s.as_list()]
        return array_ops.reshape(t, dims[:-n] + [dims[-2] * dims[-1]])
    dyn = array_ops.shape(t)
    return array_ops.reshape(
        t, array_ops.concat([dyn[:-n], array_ops.expand_dims(dyn[-2] * dyn[-1], 0)], 0)
    )


def _flatten_pairs(t: Tensor) -> Tensor:
    """``[..., m1, m2, n1, n2]`` -> ``[..., m1*m2, n1*n2]``."""
    s = t.shape
    if s.is_fully_defined():
        d = [int(v or 0) for v in s.as_list()]
        return array_ops.reshape(t, d[:-4] + [d[-4] * d[-3], d[-2] * d[-1]])
    dyn = array_ops.shape(t)
    return array_ops.reshape(
        t, array_ops.concat([dyn[:-4], array_ops.stack([dyn[-4] * dyn[-3], dyn[-2] * dyn[-1]])], 0)
    )
