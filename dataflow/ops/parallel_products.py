"""Matrix products split over a step's intra-op threads (``_util/intra_op``).

Inside a step with more than one intra-op thread BLAS runs on one thread
(``runtime/execute/embedded_backend.py`` says why: BLAS's own threads spin after each
call and hold the cores the step's other kernels split their work over). A large
product is therefore split here: by rows of its result when it has more rows than
columns, else by columns, one part per thread, each part one BLAS call writing its
slice of the result (a column slice is a BLAS operand with a leading dimension, so no
copy). Each element of the result is the same dot product either way, computed by the
same kernel, so a split changes no value. A batched product (``BatchMatMulV2``) is
split over its first batch dimension, operands whose batches broadcast as broadcast
views (a weight shared by the batch is not copied).

A product whose contracted dimension is the long one (``long_dot``: a convolution's
filter gradient sums over every output pixel of the batch, ``[KH*KW*C, N*Ho*Wo] @
[N*Ho*Wo, O]``) has few rows and columns to split; it is split over the contracted
dimension instead, each thread summing its share, and the partial products are added
in a fixed order (so its value differs from one call's in rounding only).

A two-operand ``einsum`` that is one matrix product (the ``tensordot`` case: a dense
layer on a sequence, ``"btc,cd->btd"``) or a batch of them (attention's
``"bhqd,bhkd->bhqk"``) is computed as numpy's ``tensordot`` does, the operands
transposed and reshaped to matrices (with a batch dimension first), the product split
as above (``contraction_plan``, ``parallel_contraction``).

A product with few multiply-adds over large operands (``X @ beta`` over a 40 MB ``X``:
a matrix-vector product) is bound by memory, not arithmetic, and one core draws less of
the memory's bandwidth than two: from ``intra_op.STREAMED_FROM`` bytes moved it is split
too (``_split_streamed``), by the rows of the large operand, or over the contracted
dimension where that is the long one (``X.T @ r``, a linear model's gradient; partial
sums added in order, as ``long_dot``'s).

Other products under ``SPLIT_FROM`` multiply-adds, other namespaces (cupy) and integer or
mixed dtypes are one call, as they were.
"""

from __future__ import annotations

from math import prod
from typing import Any

from .._util import intra_op
from .host import is_host_namespace

# The fewest multiply-adds of a product worth splitting: 0.3-0.6 ms on one core of the
# 2-core VM (AVX-512), against the 30-100 us a helper thread takes to wake there. (An
# MLP's 128x784 @ 784x256, 26M, split in two took as long as whole.)
SPLIT_FROM = 1 << 25


def _splittable(a: Any, b: Any) -> bool:
    return a.dtype == b.dtype and a.dtype.kind in "fc"


def parallel_dot(xp: Any) -> Any:
    """``xp.dot`` of two matrices, split over the step's threads when large."""
    dot = xp.dot
    if not is_host_namespace(xp):
        return dot
    matmul = xp.matmul

    def product(a: Any, b: Any) -> Any:
        if intra_op.threads() < 2:
            return dot(a, b)
        if _worth_splitting(a, b):
            return _split_into(matmul, a, b, xp.empty((a.shape[0], b.shape[1]), a.dtype))
        if _streamed(a, b):
            return _split_streamed(xp, a, b)
        return dot(a, b)

    return product


def _streamed(a: Any, b: Any) -> bool:
    """Two matrices of one float dtype whose product moves ``STREAMED_FROM`` bytes or
    more: a matrix-vector product over a large matrix, however few its multiply-adds."""
    if a.ndim != 2 or b.ndim != 2 or not _splittable(a, b):
        return False
    out = a.shape[0] * b.shape[1] * a.itemsize
    return a.nbytes + b.nbytes + out >= intra_op.STREAMED_FROM


def _split_streamed(xp: Any, a: Any, b: Any) -> Any:
    """A memory-bound product (``_streamed``) in runs over the step's threads
    (``intra_op.split_streamed``), each run reading its own part of the large operand:
    of the contracted dimension where it is the longest (``X.T @ r``: each run sums its
    rows of X, the partial sums added in order), else of the rows of the result
    (``X @ beta``) or of its columns."""
    (m, k), n = a.shape, b.shape[1]
    dot = xp.dot
    if k >= max(m, n):
        partial: dict[int, Any] = {}

        def terms(lo: int, hi: int) -> None:
            partial[lo] = dot(a[:, lo:hi], b[lo:hi])

        intra_op.split_streamed(k, terms, blas=True)
        return summed_in_order(xp, [partial[lo] for lo in sorted(partial)])
    out = xp.empty((m, n), a.dtype)
    if m < n:

        def columns(lo: int, hi: int) -> None:
            xp.matmul(a, b[:, lo:hi], out=out[:, lo:hi])

        intra_op.split_streamed(n, columns, blas=True)
        return out

    # ``dot`` with ``out``, not ``matmul``: numpy's matmul of a transposed slice took as
    # long on two threads as on one (measured), its dot halves it.
    def rows(lo: int, hi: int) -> None:
        dot(a[lo:hi], b, out=out[lo:hi])

    intra_op.split_streamed(m, rows, blas=True)
    return out


def product_into(xp: Any) -> Any:
    """``xp.matmul(a, b, out=out)`` for matrices (``out`` C-contiguous, or a slice of
    such rows), split by rows or columns of ``out`` over the step's threads when large:
    the im2col convolutions write their products into recycled buffers."""
    matmul = xp.matmul
    if not is_host_namespace(xp):
        return lambda a, b, out: matmul(a, b, out=out)

    def product(a: Any, b: Any, out: Any) -> Any:
        if intra_op.threads() < 2 or not _worth_splitting(a, b):
            return matmul(a, b, out=out)
        return _split_into(matmul, a, b, out)

    return product


def _split_into(matmul: Any, a: Any, b: Any, out: Any) -> Any:
    """``matmul(a, b, out=out)`` by rows of ``out`` when it has more rows than columns,
    else by columns, one part per thread."""
    if a.shape[0] >= b.shape[1]:

        def rows(lo: int, hi: int) -> None:
            matmul(a[lo:hi], b, out=out[lo:hi])

        intra_op.split_per_thread(a.shape[0], rows, blas=True)
    else:

        def columns(lo: int, hi: int) -> None:
            matmul(a, b[:, lo:hi], out=out[:, lo:hi])

        intra_op.split_per_thread(b.shape[1], columns, blas=True)
    return out


def _worth_splitting(a: Any, b: Any) -> bool:
    """Two matrices of one float dtype whose product has ``SPLIT_FROM`` multiply-adds."""
    if a.ndim != 2 or b.ndim != 2 or not _splittable(a, b):
        return False
    return a.shape[0] * a.shape[1] * b.shape[1] >= SPLIT_FROM


def parallel_matmul(xp: Any) -> Any:
    """``xp.matmul``, a batch of products split over the step's threads by its first
    batch dimension when the whole is large (operands whose batches broadcast are
    split as broadcast views, not copied); matrices as ``parallel_dot``."""
    matmul = xp.matmul
    if not is_host_namespace(xp):
        return matmul
    dot = parallel_dot(xp)
    broadcast_shapes, broadcast_to = xp.broadcast_shapes, xp.broadcast_to

    def product(a: Any, b: Any) -> Any:
        if intra_op.threads() < 2:
            return matmul(a, b)
        if a.ndim == b.ndim == 2:
            return dot(a, b)
        if a.ndim < 2 or b.ndim < 2 or not _splittable(a, b):
            return matmul(a, b)
        try:
            batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
        except ValueError:
            return matmul(a, b)  # (raises numpy's error)
        m, k = a.shape[-2:]
        n = b.shape[-1]
        if batch[0] < 2 or prod(batch) * m * k * n < SPLIT_FROM:
            return matmul(a, b)
        a, b = broadcast_to(a, (*batch, m, k)), broadcast_to(b, (*batch, k, n))
        out = xp.empty((*batch, m, n), a.dtype)

        def matrices(lo: int, hi: int) -> None:
            matmul(a[lo:hi], b[lo:hi], out=out[lo:hi])

        intra_op.split_per_thread(batch[0], matrices, blas=True)
        return out

    return product


# Fewest terms of the contracted dimension a thread's share of ``long_dot`` sums.
TERMS_PER_SHARE = 4096


def long_dot(xp: Any, a: Any, b: Any) -> Any:
    """``a @ b`` for matrices whose shared dimension is long (module docstring)."""
    threads = intra_op.threads()
    terms = a.shape[1]
    if (
        threads < 2
        or not is_host_namespace(xp)
        or terms < 2 * TERMS_PER_SHARE
        or a.shape[0] * terms * b.shape[1] < SPLIT_FROM
        or not _splittable(a, b)
    ):
        return a @ b
    partial = in_runs(xp, terms, lambda lo, hi: a[:, lo:hi] @ b[lo:hi], TERMS_PER_SHARE)
    return summed_in_order(xp, partial)


def in_runs(xp: Any, count: int, run: Any, least: int = 1) -> list[Any]:
    """``run(lo, hi)`` (the computation for items ``lo:hi``) over ``[0, count)``, one run
    per intra-op thread of the step at most, each of ``least`` items or more (BLAS held
    to one thread meanwhile): the runs' results in order, one result where the step has
    one thread or ``xp`` is not numpy."""
    if not is_host_namespace(xp):
        return [run(0, count)]
    shares = max(1, min(intra_op.threads(), count // least))
    results: dict[int, Any] = {}
    intra_op.split(
        count, lambda lo, hi: results.__setitem__(lo, run(lo, hi)), -(-count // shares), True
    )
    return [results[lo] for lo in sorted(results)]


def summed_in_order(xp: Any, parts: list[Any]) -> Any:
    """The sum of ``parts`` (the runs' partial sums), added first to last: the same
    order whichever thread computed which, so a result does not vary between calls."""
    total = parts[0].copy() if len(parts) > 1 else parts[0]
    for more in parts[1:]:
        xp.add(total, more, out=total)
    return total


def contraction_plan(inputs: list[str], output: str) -> tuple | None:
    """How a two-operand einsum is a batch of matrix products (every label in both
    operands and the output a batch label, in both and not the output contracted, in
    one operand and the output free; no ellipsis, no label twice in one operand, none
    summed away from one operand alone): ``(batch, free labels of the first, contracted,
    free of the second)``, else ``None``. No batch label: one product (``tensordot``)."""
    if len(inputs) != 2 or any("." in spec or len(set(spec)) != len(spec) for spec in inputs):
        return None
    a, b = inputs
    if len(set(output)) != len(output) or any(c not in a + b for c in output):
        return None
    if any(c not in b and c not in output for c in a) or any(
        c not in a and c not in output for c in b
    ):
        return None
    batch = "".join(c for c in output if c in a and c in b)
    contracted = "".join(c for c in a if c in b and c not in output)
    free_a = "".join(c for c in a if c not in b)
    free_b = "".join(c for c in b if c not in a)
    return batch, free_a, contracted, free_b


def parallel_contraction(xp: Any, plan: tuple, inputs: list[str], output: str) -> Any:
    """The einsum ``plan`` (``contraction_plan``) describes, as numpy's ``tensordot``
    computes one product: the operands transposed and reshaped to matrices (``[batch,
    rows, contracted]`` and ``[batch, contracted, columns]`` with batch labels), the
    product split over the step's threads (``parallel_dot``, ``parallel_matmul``); or
    ``None`` where it is not worth splitting (the caller runs its einsum)."""
    batch, free_a, contracted, free_b = plan
    dot, matmul = parallel_dot(xp), parallel_matmul(xp)
    spec_a, spec_b = inputs
    order = batch + free_a + free_b
    to_output = [order.index(c) for c in output]
    left_axes = [spec_a.index(c) for c in batch + free_a + contracted]
    right_axes = [spec_b.index(c) for c in batch + contracted + free_b]

    def contract(a: Any, b: Any) -> Any:
        if intra_op.threads() < 2 or a.dtype != b.dtype or a.dtype.kind not in "fc":
            return None
        sizes = dict(zip(spec_a, a.shape, strict=True))
        if any(sizes.get(c, n) != n for c, n in zip(spec_b, b.shape, strict=True)):
            return None  # a size-1 label broadcast: the einsum's own business
        sizes.update(zip(spec_b, b.shape, strict=True))
        size = prod(sizes[c] for c in batch)
        m = prod(sizes[c] for c in free_a)
        k = prod(sizes[c] for c in contracted)
        n = prod(sizes[c] for c in free_b)
        if size * m * k * n < SPLIT_FROM:
            return None
        left = a.transpose(left_axes).reshape(size, m, k)
        right = b.transpose(right_axes).reshape(size, k, n)
        if size == 1:
            result = dot(left[0], right[0])
        else:
            result = matmul(left, right)
        return result.reshape([sizes[c] for c in order]).transpose(to_output)

    return contract


# The least work (about n^3 for an n x n matrix) of a LAPACK routine on one matrix that
# runs with BLAS on the step's threads (``per_matrix``): BLAS's threads then spin for
# about 0.1 s beside the step's next kernels. Measured on 2 cores, an inverse then six
# dependent 1024x1024 matmuls, threaded against one thread: n=900 155 vs 132 ms,
# n=1200 even, n=1500 280 vs 344 ms, n=2000 464 vs 654 ms.
LAPACK_THREADED_FROM = 1 << 31


def per_matrix(xp: Any, fn: Any) -> Any:
    """``fn`` (a LAPACK routine over a batch of matrices: ``inv``, ``solve``,
    ``cholesky``, ``eigh``...) split over the step's threads by its first batch
    dimension when every operand has the same one and the work is large: numpy's linalg
    loops over the matrices of a batch one by one with the GIL released, and each
    matrix's result does not depend on the others, so each part's values are the
    whole's. The parts are joined (a copy of the results, O(n^2) a matrix against the
    routine's O(n^3)); a tuple of results is joined member by member. One large matrix
    (or a batch that cannot be split) has nothing to split by: it runs with BLAS on the
    step's threads for the call (``intra_op.with_blas_threads``)."""
    if not is_host_namespace(xp):
        return fn
    concatenate = xp.concatenate

    def split_fn(*xs: Any, **options: Any) -> Any:
        first = xs[0]
        if intra_op.threads() < 2 or first.ndim < 2 or first.dtype.kind not in "fc":
            return fn(*xs, **options)
        batch, n = (first.shape[0] if first.ndim > 2 else 1), first.shape[-1]
        if first.size * n < SPLIT_FROM:  # about n^3 a matrix
            return fn(*xs, **options)
        if batch < 2 or any(x.ndim < 3 or x.shape[0] != batch for x in xs[1:]):
            if first.size * n < LAPACK_THREADED_FROM:
                return fn(*xs, **options)
            return intra_op.with_blas_threads(lambda: fn(*xs, **options))
        parts = in_runs(xp, batch, lambda lo, hi: fn(*(x[lo:hi] for x in xs), **options))
        if isinstance(parts[0], tuple):
            return tuple(concatenate(members) for members in zip(*parts, strict=True))
        return concatenate(parts)

    return split_fn
