"""Matrix products split over a step's intra-op threads (``_util/intra_op``).

Inside a step with more than one intra-op thread BLAS runs on one thread
(``runtime/execute/embedded_backend.py`` says why: BLAS's own threads spin after each
call and hold the cores the step's other kernels split their work over). A large
product is therefore split here: by rows of its result when it has more rows than
columns, else by columns, one part per thread, each part one BLAS call writing its
slice of the result (a column slice is a BLAS operand with a leading dimension, so no
copy). Each element of the result is the same dot product either way, computed by the
same kernel, so a split changes no value. A batched product (``BatchMatMulV2``) is
split over its batch when both operands have the same 3-D one; a broadcast batch runs
as one call.

A product whose contracted dimension is the long one (``long_dot``: a convolution's
filter gradient sums over every output pixel of the batch, ``[KH*KW*C, N*Ho*Wo] @
[N*Ho*Wo, O]``) has few rows and columns to split; it is split over the contracted
dimension instead, each thread summing its share, and the partial products are added
in a fixed order (so its value differs from one call's in rounding only).

A two-operand ``einsum`` that is one matrix product (the ``tensordot`` case: a dense
layer on a sequence, ``"btc,cd->btd"``) is computed as numpy's ``tensordot`` does, the
operands transposed and reshaped to matrices, with the product split as above
(``contraction_plan``, ``parallel_contraction``).

Products under ``SPLIT_FROM`` multiply-adds, other namespaces (cupy) and integer or
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
        threads = intra_op.threads()
        if threads < 2 or a.ndim != 2 or b.ndim != 2:
            return dot(a, b)
        m, k = a.shape
        n = b.shape[1]
        if m * k * n < SPLIT_FROM or not _splittable(a, b):
            return dot(a, b)
        out = xp.empty((m, n), a.dtype)
        if m >= n:

            def rows(lo: int, hi: int) -> None:
                matmul(a[lo:hi], b, out=out[lo:hi])

            intra_op.split_per_thread(m, rows, blas=True)
        else:

            def columns(lo: int, hi: int) -> None:
                matmul(a, b[:, lo:hi], out=out[:, lo:hi])

            intra_op.split_per_thread(n, columns, blas=True)
        return out

    return product


def parallel_matmul(xp: Any) -> Any:
    """``xp.matmul``, a batch of products split over the step's threads when the two
    operands have the same 3-D batch and the whole is large; matrices as
    ``parallel_dot``."""
    matmul = xp.matmul
    if not is_host_namespace(xp):
        return matmul
    dot = parallel_dot(xp)

    def product(a: Any, b: Any) -> Any:
        threads = intra_op.threads()
        if threads < 2:
            return matmul(a, b)
        if a.ndim == b.ndim == 2:
            return dot(a, b)
        if a.ndim != 3 or b.ndim != 3 or a.shape[0] != b.shape[0] or not _splittable(a, b):
            return matmul(a, b)
        batch, m, k = a.shape
        n = b.shape[2]
        if batch < 2 or batch * m * k * n < SPLIT_FROM:
            return matmul(a, b)
        out = xp.empty((batch, m, n), a.dtype)

        def matrices(lo: int, hi: int) -> None:
            matmul(a[lo:hi], b[lo:hi], out=out[lo:hi])

        intra_op.split_per_thread(batch, matrices, blas=True)
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
    shares = min(threads, terms // TERMS_PER_SHARE)
    grain = -(-terms // shares)
    partial: list[Any] = [None] * shares

    def share(lo: int, hi: int) -> None:
        partial[lo // grain] = a[:, lo:hi] @ b[lo:hi]

    intra_op.split(terms, share, grain, blas=True)
    return summed_in_order(xp, partial)


def summed_in_order(xp: Any, parts: list[Any]) -> Any:
    """The sum of ``parts`` (the runs' partial sums), added first to last: the same
    order whichever thread computed which, so a result does not vary between calls."""
    total = parts[0].copy() if len(parts) > 1 else parts[0]
    for more in parts[1:]:
        xp.add(total, more, out=total)
    return total


def contraction_plan(inputs: list[str], output: str) -> tuple | None:
    """How a two-operand einsum is one matrix product (the ``tensordot`` case: every
    label in one operand and the output, or in both operands and not the output; no
    ellipsis, no label twice in one operand): ``(free labels of the first, contracted,
    free of the second)``, else ``None``."""
    if len(inputs) != 2 or any("." in spec or len(set(spec)) != len(spec) for spec in inputs):
        return None
    a, b = inputs
    contracted = [c for c in a if c in b]
    if any(c in output for c in contracted) or len(set(output)) != len(output):
        return None
    free_a, free_b = [c for c in a if c not in b], [c for c in b if c not in a]
    if sorted(output) != sorted(free_a + free_b):
        return None
    return "".join(free_a), "".join(contracted), "".join(free_b)


def parallel_contraction(xp: Any, plan: tuple, inputs: list[str], output: str) -> Any:
    """The einsum ``plan`` (``contraction_plan``) describes, as ``parallel_dot`` of the
    operands transposed and reshaped to matrices (what ``numpy.tensordot`` does), or
    ``None`` where it is not worth splitting (the caller runs its einsum)."""
    free_a, contracted, free_b = plan
    dot = parallel_dot(xp)
    spec_a, spec_b = inputs
    order = free_a + free_b

    def contract(a: Any, b: Any) -> Any:
        if intra_op.threads() < 2 or a.dtype != b.dtype or a.dtype.kind not in "fc":
            return None
        sizes = dict(zip(spec_a, a.shape, strict=True))
        sizes.update(zip(spec_b, b.shape, strict=True))
        m = prod(sizes[c] for c in free_a)
        k = prod(sizes[c] for c in contracted)
        n = prod(sizes[c] for c in free_b)
        if m * k * n < SPLIT_FROM:
            return None
        left = a.transpose([spec_a.index(c) for c in free_a + contracted]).reshape(m, k)
        right = b.transpose([spec_b.index(c) for c in contracted + free_b]).reshape(k, n)
        result = dot(left, right).reshape([sizes[c] for c in order])
        return result.transpose([order.index(c) for c in output])

    return contract
