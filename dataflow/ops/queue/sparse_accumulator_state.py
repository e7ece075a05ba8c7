"""The state behind a ``SparseConditionalAccumulator``: a sum of fresh sparse gradients
(``IndexedSlices``: row indices and value rows) and, per row, how many gradients
touched it.

It keeps ``ConditionalAccumulator``'s rules (``queue/accumulator_state.py``: stale
gradients dropped, ``take_grad`` waits for ``num_required``, empties the accumulator
and advances its global step) with a sparse sum:

* the sum is three arrays: row indices, one summed value row per index, and per
  index the number of applied gradients that held it;
* the first gradient is kept as it comes (its rows in its order, each counted once,
  as TF's kernel keeps it); ``apply_grad`` merges each later one in with one
  ``unique`` over the old and new indices and scatter-adds (``numpy.add.at``), which
  leaves the rows in ascending order and counts a row once per gradient holding it.
  TF merges the two lists as sorted lists: for sorted indices without repeats (what
  ``IndexedSlices`` gradients of gathers hold once deduplicated) the results agree;
  for unsorted ones TF's order and pairing depend on the order they came in;
* ``take_grad`` with ``'MEAN'`` divides each row by its own count, as TF's kernel
  does (a row two of three replicas touched is the mean of those two), and returns
  ``(indices, values, shape)``: ``shape[0]`` is the accumulator's first dimension
  (-1 when unknown), the other entries those of the value rows.

The checks are TF's, with its ``InvalidArgumentError`` messages: indices a vector,
values of rank >= 1 with one row per index, a given dense shape agreeing with the
accumulator's, indices below its first dimension when known, and value rows shaped
like the accumulator's (and like those already summed).

Example: ``apply(([0, 2], [[1], [2]]))``, ``apply(([2, 3], [[4], [6]]))``,
``take_grad(2)`` returns indices ``[0, 2, 3]`` and values ``[[1], [3], [6]]``.

A plain class; no Dask, testable alone. It does its array work through the array
namespace it is given (the kernels' ``ctx.xp``), on host arrays: the accumulator
lives in host memory, as TF1's.
"""

from __future__ import annotations

from typing import Any

from ...framework import errors
from .accumulator_state import AccumulatorState


def _invalid(message: str) -> Exception:
    return errors.InvalidArgumentError(None, None, message)


class SparseAccumulatorState(AccumulatorState):
    """``AccumulatorState`` over ``(indices, values, dense_shape or None)`` gradients,
    computed with the array namespace ``xp``."""

    def __init__(self, name: str, shape: tuple | None, reduction: str, xp: Any) -> None:
        super().__init__(name, shape, reduction)
        self.xp = xp

    def _check_shape(self, grad: Any) -> None:
        indices, values, dense_shape = grad
        if indices.ndim != 1:
            raise _invalid(
                f"Input indices should be vector but received shape: {list(indices.shape)}"
            )
        if values.ndim == 0:
            raise _invalid("Values cannot be 0-dimensional.")
        if values.shape[0] != indices.shape[0]:
            raise _invalid(
                f"Expected {indices.shape[0]} non-empty input values, got {values.shape[0]}"
            )
        want = self.shape
        if want is None:
            return
        if dense_shape is not None:
            if len(want) > dense_shape.size:
                raise _invalid(
                    f"Shape mismatch: expected shape rank at least {len(want)}, "
                    f"got {dense_shape.size}"
                )
            for i, dim in enumerate(want):
                if dim is not None and dim != int(dense_shape[i]):
                    raise _invalid(
                        f"Shape mismatch: expected shape dim {i} to be {dim}, "
                        f"got {int(dense_shape[i])}"
                    )
        if want and want[0] is not None and indices.size:
            over = self.xp.flatnonzero(indices >= want[0])
            if over.size:
                raise _invalid(
                    f"Shape mismatch: index of slice {int(over[0])} exceeded limits of "
                    f"shape; index is {int(indices[over[0]])} exceeded {want[0]}"
                )

    def _check_rows(self, values: Any) -> None:
        """Value rows shaped like the accumulator's, or like those summed already."""
        if self._sum is not None:
            summed = self._sum[1]
            if summed.ndim != values.ndim:
                raise _invalid(
                    f"Shape mismatch: expected values rank {summed.ndim}, got {values.ndim}"
                )
            for i in range(1, summed.ndim):
                if summed.shape[i] != values.shape[i]:
                    raise _invalid(
                        f"Shape mismatch: expected values dim {i} to be "
                        f"{summed.shape[i]}, got {values.shape[i]}"
                    )
            return
        want = self.shape
        if want is None:
            return
        if len(want) > values.ndim:
            raise _invalid(
                f"Shape mismatch: expected values rank at least {len(want)}, got {values.ndim}"
            )
        for i in range(1, len(want)):
            if want[i] is not None and want[i] != values.shape[i]:
                raise _invalid(
                    f"Shape mismatch: expected values dim {i} to be {want[i]}, "
                    f"got {values.shape[i]}"
                )

    def _add(self, grad: Any) -> None:
        xp = self.xp
        indices, values, _ = grad
        self._check_rows(values)
        if self._sum is None:
            self._sum = (indices.copy(), values.copy(), xp.ones(indices.size, xp.int64))
            return
        old_indices, old_values, old_counts = self._sum
        merged, where = xp.unique(xp.concatenate([old_indices, indices]), return_inverse=True)
        where = where.reshape(-1)  # (numpy 2.0 shaped it like the input)
        sums = xp.zeros((merged.size,) + values.shape[1:], values.dtype)
        xp.add.at(sums, where, xp.concatenate([old_values, values]))
        counts = xp.zeros(merged.size, xp.int64)
        xp.add.at(counts, where[: old_indices.size], old_counts)
        counts[xp.unique(where[old_indices.size :])] += 1  # once per gradient
        self._sum = (merged, sums, counts)

    def _result(self) -> Any:
        indices, values, counts = self._sum
        if self.reduction == "MEAN":
            values = values / counts.reshape((-1,) + (1,) * (values.ndim - 1))
        first = -1 if not self.shape or self.shape[0] is None else self.shape[0]
        dense_shape = self.xp.asarray([first, *values.shape[1:]], dtype=self.xp.int64)
        return indices, values, dense_shape
