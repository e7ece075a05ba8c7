"""Matrices and linear algebra: matmul, einsum, inverse, determinant, solve, Cholesky,
norms, traces, diagonals, and their gradients.

Primitives (one record each): ``MatMul`` (rank 2, transposes bound in the kernel
factory: it is on the hot path of every dense layer), ``BatchMatMulV2`` (rank >= 2,
numpy broadcasting of batch dimensions), ``Einsum``, ``MatrixInverse``,
``MatrixDeterminant``, ``MatrixSolve``, ``Cholesky``, ``MatrixDiag``,
``MatrixDiagPart``, ``MatrixSetDiag``, ``MatrixBandPart``, plus two private,
non-differentiable helpers: ``Eye`` (an identity of run-time size) and
``EinsumDiagonalMask`` (used by the einsum gradient).

Everything else is composite: ``tensordot`` and ``matvec`` are einsums, ``trace`` sums
a diagonal, ``norm`` is a reduction, ``matrix_triangular_solve`` solves with the
triangle selected by ``matrix_band_part``, ``logdet`` goes through ``cholesky``.

Gradient rules are built from these ops and from ``math``/``array`` ops, all of which
are differentiable, so second derivatives work. The gradient pass undoes broadcasting
(batch dimensions of ``matmul``, ellipsis dimensions of ``einsum``) with one
``SumToShape``, so the rules below never reduce anything themselves.

Einsum gradient, the one non-obvious rule. For ``z = einsum("s1,s2,...->so", x1, x2,
...)`` (real inputs), the gradient for ``xi`` is the einsum of the output gradient with
every other operand, written back to ``si``: ``einsum("so,s1,..(not si)..->si", g,
...)``. Two cases need a third kind of operand, a 0/1 tensor ``D`` shaped like ``xi``:

* a label (or the ellipsis) of ``si`` appears nowhere else (it was summed over in
  ``xi`` alone): ``D = ones_like(xi)`` supplies it, broadcasting ``g`` along it;
* a label repeats in ``si`` (a diagonal, e.g. ``"ii->i"``): its later occurrences are
  renamed to fresh labels, and ``D`` is 1 exactly where the renamed axes share an index
  (``EinsumDiagonalMask``), which puts the gradient on the diagonal.

Example: ``einsum("ii->", x)`` (the trace). ``si = "ii"`` becomes ``"iA"`` and the
gradient is ``einsum(",iA->iA", g, D)`` with ``D = eye``: ``g`` times the identity.
"""

from __future__ import annotations

import string
from collections import Counter
from collections.abc import Sequence
from math import prod
from typing import Any

import numpy as np

from ..framework import dtypes, registry
from ..framework.graph import Operation, Tensor, register_operator
from ..framework.scopes import name_scope
from ..framework.tensor_shape import TensorShape, broadcast_shapes
from ..framework.tensor_util import constant_value
from . import array as array_ops
from . import math as math_ops
from .build import apply_op, convert_inputs
from .constant import constant
from .rules import is_float, require_same_dtype

_ELLIPSIS = "..."


# --- shared static-shape helpers ----------------------------------------------------------
def _check_equal_dims(a: int | None, b: int | None, what: str = "") -> None:
    if a is not None and b is not None and a != b:
        raise ValueError(f"Dimensions must be equal, but are {a} and {b}{what}")


def _merge_dim(a: int | None, b: int | None, what: str = "") -> int | None:
    _check_equal_dims(a, b, what)
    return a if a is not None else b


def _require_rank_at_least(t: Tensor, rank: int) -> tuple | None:
    dims = t.shape.as_tuple()
    if dims is not None and len(dims) < rank:
        raise ValueError(f"Shape must be at least rank {rank} but is rank {len(dims)} "
                         f"(input '{t.name}')")
    return dims


def _batch_shape(t: Tensor, inner: int) -> TensorShape:
    dims = t.shape.as_tuple()
    return TensorShape(None) if dims is None else TensorShape(dims[:len(dims) - inner])


def _broadcast_batch(a: Tensor, b: Tensor, inner_a: int, inner_b: int) -> TensorShape:
    sa, sb = _batch_shape(a, inner_a), _batch_shape(b, inner_b)
    try:
        return broadcast_shapes(sa, sb)
    except ValueError:
        raise ValueError(f"Inputs must have compatible (broadcastable) batch dimensions: "
                         f"{a.shape} vs. {b.shape}") from None


def _require_dtype(op: Operation, check: Any, what: str) -> dtypes.DType:
    dtype = require_same_dtype(op)
    if not check(dtype):
        raise TypeError(f"'{op.type}' needs {what} inputs, got {dtype.name}")
    return dtype


def _is_matmul_dtype(d: dtypes.DType) -> bool:
    return (d.is_floating or d.is_complex or d.is_integer) and not d.is_bool


def _lapack(xp: Any, fn: Any, dtype: dtypes.DType) -> Any:
    """``fn`` for ``dtype``; LAPACK has no half precision, so float16 goes via float32."""
    if dtype == dtypes.float16:
        f16, f32 = xp.float16, xp.float32
        return lambda *xs: fn(*(x.astype(f32) for x in xs)).astype(f16)
    return fn


def _matrix_t(xp: Any, dtype: dtypes.DType, adjoint: bool) -> Any:
    """The (conjugate, for complex adjoints) transpose of the last two axes."""
    swap = xp.swapaxes
    if adjoint and dtype.is_complex:
        conj = xp.conj
        return lambda x: conj(swap(x, -1, -2))
    return lambda x: swap(x, -1, -2)


# --- MatMul (rank 2) ----------------------------------------------------------------------
def _infer_matmul(op: Operation) -> list:
    dtype = _require_dtype(op, _is_matmul_dtype, "numeric")
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
    _check_equal_dims(k, k2)
    return [(dtype, TensorShape([m, n]))]


def _matmul_kernel(ctx: Any, attrs: dict) -> Any:
    # Hot path: no per-call attribute logic; ``xp.dot`` on 2-D arrays calls BLAS gemm
    # directly and reads a transposed view without copying it.
    dot = ctx.xp.dot
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
    return [matmul(b, grad, adjoint_a=True, adjoint_b=True),
            matmul(grad, a, adjoint_a=True, adjoint_b=True)]


def _matmul_grad(op: Operation, grad: Tensor) -> list:
    a, b = op.inputs
    return _matmul_grad_pair(a, b, grad, op.attrs["transpose_a"], op.attrs["transpose_b"])


registry.register(registry.OpDef("MatMul", _infer_matmul, _matmul_kernel, _matmul_grad))


# --- BatchMatMulV2 (rank >= 2, broadcasting batch dimensions) -----------------------------
def _infer_batch_matmul(op: Operation) -> list:
    dtype = _require_dtype(op, _is_matmul_dtype, "numeric")
    a, b = op.inputs
    da, db = _require_rank_at_least(a, 2), _require_rank_at_least(b, 2)
    batch = _broadcast_batch(a, b, 2, 2)
    a0, a1 = da[-2:] if da is not None else (None, None)
    b0, b1 = db[-2:] if db is not None else (None, None)
    m, k = (a1, a0) if op.attrs["adj_x"] else (a0, a1)
    k2, n = (b1, b0) if op.attrs["adj_y"] else (b0, b1)
    _check_equal_dims(k, k2)
    return [(dtype, batch.concatenate(TensorShape([m, n])))]


def _batch_matmul_kernel(ctx: Any, attrs: dict) -> Any:
    matmul_ = ctx.xp.matmul
    adj_x, adj_y = attrs["adj_x"], attrs["adj_y"]
    tx = _matrix_t(ctx.xp, attrs["T"], True)
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
        z = string.ascii_uppercase[:rb - 2]
        grads[0] = einsum(f"{z}mn,{z}{'nk' if tb else 'kn'}->{'km' if ta else 'mk'}", grad, b)
    if rb == 2 and ra is not None and ra > 2:
        z = string.ascii_uppercase[:ra - 2]
        grads[1] = einsum(f"{z}{'km' if ta else 'mk'},{z}mn->{'nk' if tb else 'kn'}", a, grad)
    return grads


registry.register(registry.OpDef("BatchMatMulV2", _infer_batch_matmul, _batch_matmul_kernel,
                                 _batch_matmul_grad))


def matmul(a: Any, b: Any, transpose_a: bool = False, transpose_b: bool = False,
           adjoint_a: bool = False, adjoint_b: bool = False, a_is_sparse: bool = False,
           b_is_sparse: bool = False, output_type: Any = None, grad_a: bool = False,
           grad_b: bool = False, name: str | None = None) -> Tensor:
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
        raise TypeError(f"matmul: output_type {dtypes.as_dtype(output_type).name} differs "
                        f"from the input dtype {a.dtype.name}, which is not supported")
    complex_ = a.dtype.is_complex
    if not complex_:
        transpose_a, transpose_b = transpose_a or adjoint_a, transpose_b or adjoint_b
        adjoint_a = adjoint_b = False
    if a.shape.rank == 2 and b.shape.rank == 2 and not (adjoint_a or adjoint_b):
        return apply_op("MatMul", [a, b], {"transpose_a": bool(transpose_a),
                                           "transpose_b": bool(transpose_b), "T": a.dtype},
                        name=name)
    if complex_:
        # A plain (not conjugating) transpose of complex matrices goes through einsum.
        if transpose_a:
            a, adjoint_a = matrix_transpose(a), False
        if transpose_b:
            b, adjoint_b = matrix_transpose(b), False
        adj_x, adj_y = adjoint_a, adjoint_b
    else:
        adj_x, adj_y = transpose_a, transpose_b
    return apply_op("BatchMatMulV2", [a, b], {"adj_x": bool(adj_x), "adj_y": bool(adj_y),
                                              "T": a.dtype}, name=name)


register_operator("matmul", matmul)


def matvec(a: Any, b: Any, transpose_a: bool = False, adjoint_a: bool = False,
           a_is_sparse: bool = False, b_is_sparse: bool = False,
           name: str | None = None) -> Tensor:
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


# --- Einsum -------------------------------------------------------------------------------
def _split_spec(spec: str) -> tuple[str, str, bool]:
    """``"ab...cd"`` -> ``("ab", "cd", True)``; no ellipsis: ``(spec, "", False)``."""
    if _ELLIPSIS in spec:
        head, tail = spec.split(_ELLIPSIS)
        return head, tail, True
    return spec, "", False


def _letters(spec: str) -> str:
    return spec.replace(_ELLIPSIS, "")


def parse_equation(equation: str, num_inputs: int) -> tuple[list[str], str]:
    """Validates an einsum equation and returns ``(input_specs, output_spec)``, the
    output made explicit (implicit mode: the labels seen once, sorted, after "...")."""
    eq = equation.replace(" ", "")
    if eq.count("->") > 1:
        raise ValueError(f"Einsum equation '{equation}' has more than one '->'")
    lhs, arrow, out = eq.partition("->")
    ins = lhs.split(",")
    if len(ins) != num_inputs:
        raise ValueError(f"Einsum equation '{equation}' names {len(ins)} inputs, but "
                         f"{num_inputs} were given")
    for spec in [*ins, out]:
        if spec.count(_ELLIPSIS) > 1 or not all(
                c in string.ascii_letters for c in spec.replace(_ELLIPSIS, "", 1)):
            raise ValueError(f"Invalid subscripts '{spec}' in einsum equation '{equation}' "
                             "(use letters and at most one '...')")
    has_ellipsis = any(_ELLIPSIS in s for s in ins)
    if not arrow:
        counts = Counter(c for s in ins for c in _letters(s))
        out = (_ELLIPSIS if has_ellipsis else "") + "".join(
            sorted(c for c, k in counts.items() if k == 1))
    else:
        seen = set("".join(_letters(s) for s in ins))
        letters = _letters(out)
        if len(set(letters)) != len(letters):
            raise ValueError(f"Output subscripts '{out}' of einsum equation '{equation}' "
                             "repeat a label")
        missing = [c for c in letters if c not in seen]
        if missing:
            raise ValueError(f"Output label '{missing[0]}' of einsum equation '{equation}' "
                             "does not appear in any input")
        if _ELLIPSIS in out and not has_ellipsis:
            raise ValueError(f"Einsum equation '{equation}' has '...' in its output but in "
                             "no input")
    return ins, out


def _spec_dims(spec: str, shape: TensorShape, index: int) -> tuple[list, TensorShape | None]:
    """The (label, dim) pairs of one operand and the shape its ellipsis covers."""
    head, tail, has_ellipsis = _split_spec(spec)
    dims = shape.as_tuple()
    if dims is None:
        return [(c, None) for c in head + tail], (TensorShape(None) if has_ellipsis else None)
    n = len(head) + len(tail)
    if has_ellipsis and len(dims) < n:
        raise ValueError(f"Input {index} has rank {len(dims)}, fewer than the {n} labels of "
                         f"its subscripts '{spec}'")
    if not has_ellipsis and len(dims) != n:
        raise ValueError(f"Input {index} has rank {len(dims)}, but its subscripts '{spec}' "
                         f"name {n} dimensions")
    pairs = list(zip(head, dims[:len(head)], strict=True)) + \
        list(zip(tail, dims[len(dims) - len(tail):], strict=True))
    ell = TensorShape(dims[len(head):len(dims) - len(tail)]) if has_ellipsis else None
    return pairs, ell


def _infer_einsum(op: Operation) -> list:
    dtype = _require_dtype(op, _is_matmul_dtype, "numeric")
    equation = op.attrs["equation"]
    ins, out = parse_equation(equation, len(op.inputs))
    sizes: dict[str, int | None] = {}
    ells = []
    for i, (spec, t) in enumerate(zip(ins, op.inputs, strict=True)):
        pairs, ell = _spec_dims(spec, t.shape, i)
        for c, d in pairs:
            sizes[c] = _merge_dim(sizes.get(c), d, f" (label '{c}' of einsum equation "
                                                   f"'{equation}')")
        if ell is not None:
            ells.append(ell)
    try:
        ell_shape = broadcast_shapes(*ells) if ells else TensorShape([])
    except ValueError:
        raise ValueError(f"The '...' dimensions of einsum equation '{equation}' do not "
                         f"broadcast: {', '.join(str(e) for e in ells)}") from None
    head, tail, has_ellipsis = _split_spec(out)
    if not has_ellipsis and ell_shape.rank:
        raise ValueError(f"Output contains {ell_shape.rank} broadcasting dimension(s) but no "
                         f"ellipsis (...) was found in the output subscripts of einsum "
                         f"equation '{equation}'")
    if has_ellipsis and ell_shape.rank is None:
        return [(dtype, TensorShape(None))]
    dims = [sizes[c] for c in head] + (list(ell_shape.as_tuple()) if has_ellipsis else []) + \
        [sizes[c] for c in tail]
    return [(dtype, TensorShape(dims))]


# Below this many multiply-adds numpy's C einsum beats planning a BLAS contraction
# (measured: 16x16 matmul 4.5 us vs 15 us; 64x64: 53 us vs 22 us).
_EINSUM_BLAS_THRESHOLD = 1 << 16
# Kernels cache per-shape plans and masks; a feed whose shape changes every step must
# not grow them without bound.
_MAX_CACHED_SHAPES = 64


def _einsum_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    einsum_ = xp.einsum
    equation = attrs["equation"]
    ins, _ = parse_equation(equation, attrs["N"])
    if attrs["N"] == 1:
        def einsum_one(x: Any) -> Any:
            out = einsum_(equation, x)
            # Single-operand einsums (transposes, diagonals) may return views; never
            # alias an input (it may be a variable's buffer).
            return out.copy() if out.base is not None else out

        return einsum_one
    path_of = getattr(xp, "einsum_path", None)
    if path_of is None:  # e.g. cupy: its einsum plans contractions itself
        return lambda *xs: einsum_(equation, *xs)
    splits = [_split_spec(s) for s in ins]
    plans: dict[tuple, Any] = {}

    def plan(xs: Sequence[Any]) -> Any:
        sizes: dict[str, int] = {}
        ell = 1
        for (head, tail, has_ellipsis), x in zip(splits, xs, strict=True):
            shape = x.shape
            sizes.update(zip(head, shape[:len(head)], strict=True))
            if tail:
                sizes.update(zip(tail, shape[len(shape) - len(tail):], strict=True))
            if has_ellipsis:
                ell = max(ell, prod(shape[len(head):len(shape) - len(tail)]))
        cost = ell * prod(sizes.values())
        if cost < _EINSUM_BLAS_THRESHOLD:
            return False
        return path_of(equation, *xs, optimize="greedy")[0]

    def einsum_n(*xs: Any) -> Any:
        key = tuple(x.shape for x in xs)
        path = plans.get(key)
        if path is None:
            if len(plans) >= _MAX_CACHED_SHAPES:
                plans.clear()
            path = plans[key] = plan(xs)
        return einsum_(equation, *xs, optimize=path)

    return einsum_n


def _fresh_labels(used: str) -> list[str]:
    return [c for c in string.ascii_letters if c not in used]


def _rename_repeats(spec: str, fresh: list[str]) -> tuple[str, list[tuple[int, ...]]]:
    """Renames repeated labels of ``spec`` with fresh ones; returns the new spec and the
    groups of axes (negative after the ellipsis) that shared a label."""
    head, tail, has_ellipsis = _split_spec(spec)
    axes: dict[str, list[int]] = {}
    out_head, out_tail = [], []
    for part, out_part, axis_of in ((head, out_head, lambda k: k),
                                    (tail, out_tail, lambda k: k - len(tail))):
        for k, c in enumerate(part):
            if c in axes:
                out_part.append(fresh.pop(0))
            else:
                out_part.append(c)
                axes[c] = []
            axes[c].append(axis_of(k))
    renamed = "".join(out_head) + (_ELLIPSIS if has_ellipsis else "") + "".join(out_tail)
    return renamed, [tuple(v) for v in axes.values() if len(v) > 1]


def _einsum_grad(op: Operation, grad: Tensor) -> list:
    ins, out = parse_equation(op.attrs["equation"], len(op.inputs))
    grads: list[Tensor | None] = []
    for i, x in enumerate(op.inputs):
        spec = ins[i]
        others = [(s, t) for j, (s, t) in enumerate(zip(ins, op.inputs, strict=True))
                  if j != i]
        specs = [out] + [s for s, _ in others]
        operands = [grad] + [t for _, t in others]
        fresh = _fresh_labels(op.attrs["equation"])
        renamed, groups = _rename_repeats(spec, fresh)
        available = set("".join(specs))
        needs_support = groups or any(c not in available for c in _letters(spec)) or (
            _ELLIPSIS in spec and not any(_ELLIPSIS in s for s in specs))
        if needs_support:
            specs.append(renamed)
            operands.append(_diagonal_mask(x, groups) if groups else array_ops.ones_like(x))
        lhs = ",".join(specs)
        head, _, has_ellipsis = _split_spec(renamed)
        if not has_ellipsis and any(_ELLIPSIS in s for s in specs):
            # xi was broadcast along the ellipsis dimensions: keep them (leading) in the
            # result, and the pass's SumToShape sums them away.
            g = einsum(f"{lhs}->{_ELLIPSIS}{renamed}", *operands)
        elif has_ellipsis and head:
            # The pass's SumToShape sums leading axes; put the ellipsis first so the
            # broadcast axes it sums are the ellipsis's own, then move it back.
            front = _ELLIPSIS + _letters(renamed)
            g = einsum(f"{lhs}->{front}", *operands)
            dims = x.shape.as_tuple()
            if x.shape.is_fully_defined():
                n_tail = len(_letters(renamed)) - len(head)
                target: Any = [*dims[len(head):len(dims) - n_tail], *dims[:len(head)],
                               *dims[len(dims) - n_tail:]]
            else:
                target = array_ops.shape(einsum(f"{renamed}->{front}", x))
            g = einsum(f"{front}->{renamed}", array_ops.sum_to_shape(g, target))
        else:
            g = einsum(f"{lhs}->{renamed}", *operands)
        grads.append(g)
    return grads


registry.register(registry.OpDef("Einsum", _infer_einsum, _einsum_kernel, _einsum_grad))


def _infer_diagonal_mask(op: Operation) -> list:
    return [(op.inputs[0].dtype, op.inputs[0].shape)]


def _diagonal_mask_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    groups = attrs["groups"]
    cache: dict[tuple, Any] = {}

    def diagonal_mask(x: Any) -> Any:
        key = (x.shape, x.dtype)
        mask = cache.get(key)
        if mask is None:
            if len(cache) >= _MAX_CACHED_SHAPES:
                cache.clear()
            ndim = x.ndim
            keep = xp.ones((1,) * ndim, dtype=bool)
            for group in groups:
                first = group[0] % ndim
                index = xp.arange(x.shape[first]).reshape(
                    [x.shape[first] if a == first else 1 for a in range(ndim)])
                for axis in group[1:]:
                    axis %= ndim
                    other = xp.arange(x.shape[axis]).reshape(
                        [x.shape[axis] if a == axis else 1 for a in range(ndim)])
                    keep = keep & (index == other)
            mask = cache[key] = xp.broadcast_to(keep, x.shape).astype(x.dtype)
        return mask

    return diagonal_mask


registry.register(registry.OpDef("EinsumDiagonalMask", _infer_diagonal_mask,
                                 _diagonal_mask_kernel, registry.NOT_DIFFERENTIABLE))


def _diagonal_mask(x: Tensor, groups: list[tuple[int, ...]]) -> Tensor:
    """1 where the axes of each group share one index, else 0 (shape and dtype of x)."""
    return apply_op("EinsumDiagonalMask", [x], {"groups": tuple(groups)})


def einsum(equation: str, *inputs: Any, **kwargs: Any) -> Tensor:
    """Tensor contraction over the labels of ``equation`` (numpy's ``einsum``).

    ``"ij,jk->ik"`` is a matrix product, ``"bij,bjk->bik"`` a batched one, ``"ii->"``
    a trace, ``"...ij->...ji"`` a batched transpose; without ``->`` the output is the
    labels seen once, sorted. ``...`` stands for broadcast dimensions.

    Args:
        equation: the subscripts, e.g. ``"ij,jk->ik"``.
        *inputs: the operands, one per comma-separated input subscript.
        **kwargs: ``name`` (the op name); ``optimize`` is accepted and ignored.

    Returns:
        The contracted tensor.

    Raises:
        ValueError: a malformed equation, ranks that do not fit it, or a label bound to
            two different dimensions ("Dimensions must be equal, but are 3 and 4").
    """
    name = kwargs.pop("name", None)
    kwargs.pop("optimize", None)
    if kwargs:
        raise TypeError(f"einsum() got unexpected keyword arguments {sorted(kwargs)}")
    if not inputs:
        raise ValueError("einsum needs at least one input")
    if len(inputs) == 1 and isinstance(inputs[0], (list, tuple)):
        inputs = tuple(inputs[0])
    tensors = convert_inputs(list(inputs))
    ins, out = parse_equation(equation, len(tensors))
    canonical = ",".join(ins) + "->" + out
    return apply_op("Einsum", tensors, {"equation": canonical, "N": len(tensors)}, name=name)


def tensordot(a: Any, b: Any, axes: Any, name: str | None = None) -> Tensor:
    """Sums the products of ``a``'s and ``b``'s elements over the given axes.

    Args:
        a: a tensor of known rank.
        b: a tensor of known rank and the dtype of ``a``.
        axes: an int ``N`` (the last ``N`` axes of ``a`` with the first ``N`` of
            ``b``), or a pair ``[a_axes, b_axes]`` of ints or lists of ints.
        name: a name scope for the op.

    Returns:
        A tensor with the free axes of ``a`` followed by those of ``b``.

    Raises:
        ValueError: bad ``axes``, unknown ranks, or contracted dimensions that differ.
    """
    with name_scope(name, "Tensordot", [a, b]):
        a, b = convert_inputs([a, b])
        ra, rb = a.shape.rank, b.shape.rank
        if ra is None or rb is None:
            raise ValueError("tensordot needs inputs of known rank, got shapes "
                             f"{a.shape} and {b.shape}")
        a_axes, b_axes = _tensordot_axes(axes, ra, rb)
        letters = string.ascii_letters
        spec_a = list(letters[:ra])
        spec_b = list(letters[ra:ra + rb])
        for ia, ib in zip(a_axes, b_axes, strict=True):
            spec_b[ib] = spec_a[ia]
        free = [c for k, c in enumerate(spec_a) if k not in a_axes] + \
            [c for k, c in enumerate(spec_b) if k not in b_axes]
        return einsum(f"{''.join(spec_a)},{''.join(spec_b)}->{''.join(free)}", a, b)


def _tensordot_axes(axes: Any, ra: int, rb: int) -> tuple[list[int], list[int]]:
    if isinstance(axes, Tensor):
        value = constant_value(axes)
        if value is None:
            raise ValueError("tensordot needs 'axes' known at build time")
        axes = value.tolist()
    if isinstance(axes, np.ndarray):
        axes = axes.tolist()
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n < 0:
            raise ValueError("'axes' must be at least 0.")
        if n > ra or n > rb:
            raise ValueError(f"'axes' must not be larger than the number of dimensions of "
                             f"the inputs ({ra} and {rb}), got {n}.")
        return list(range(ra - n, ra)), list(range(n))
    if not isinstance(axes, (list, tuple)) or len(axes) != 2:
        raise ValueError(f"'axes' must be an integer or have length 2, got {axes!r}.")
    a_axes, b_axes = ([x] if isinstance(x, (int, np.integer)) else list(x) for x in axes)
    if len(a_axes) != len(b_axes):
        raise ValueError(f"Different number of contraction axes 'a' and 'b', "
                         f"{len(a_axes)} != {len(b_axes)}.")
    out = []
    for ax_list, rank in ((a_axes, ra), (b_axes, rb)):
        norm = []
        for ax in ax_list:
            ax = int(ax)
            if not -rank <= ax < rank:
                raise ValueError(f"tensordot axis {ax} is out of range for rank {rank}")
            norm.append(ax % rank)
        if len(set(norm)) != len(norm):
            raise ValueError(f"tensordot axes {ax_list} repeat an axis")
        out.append(norm)
    return out[0], out[1]


# --- MatrixInverse, MatrixDeterminant, MatrixSolve, Cholesky ------------------------------
def _square_dims(t: Tensor) -> tuple[TensorShape, int | None]:
    dims = _require_rank_at_least(t, 2)
    if dims is None:
        return TensorShape(None), None
    _check_equal_dims(dims[-2], dims[-1], f" (input '{t.name}' must be square matrices)")
    return TensorShape(dims[:-2]), _merge_dim(dims[-2], dims[-1])


def _infer_square(op: Operation) -> list:
    dtype = _require_dtype(op, is_float, "float or complex")
    batch, n = _square_dims(op.inputs[0])
    return [(dtype, batch.concatenate(TensorShape([n, n])))]


def _inverse_kernel(ctx: Any, attrs: dict) -> Any:
    xp, dtype = ctx.xp, attrs["T"]
    inv = _lapack(xp, xp.linalg.inv, dtype)
    if attrs["adjoint"]:
        adj = _matrix_t(xp, dtype, True)
        return lambda x: inv(adj(x))
    return inv


def _inverse_grad(op: Operation, grad: Tensor) -> list:
    # d(A^-1) = -A^-1 dA A^-1, so grad_A = -A^-H G A^-H (TF's rule, with the adjoint attr).
    ainv = op.outputs[0]
    adjoint = op.attrs["adjoint"]
    inner = matmul(grad, ainv, adjoint_a=adjoint, adjoint_b=not adjoint)
    return [math_ops.negative(matmul(ainv, inner, adjoint_a=not adjoint))]


registry.register(registry.OpDef("MatrixInverse", _infer_square, _inverse_kernel,
                                 _inverse_grad))


def matrix_inverse(input: Any, adjoint: bool = False, name: str | None = None) -> Tensor:  # noqa: A002
    """The inverses of the square matrices in the last two dimensions of ``input``.

    Args:
        input: a float or complex tensor of shape ``[..., M, M]``.
        adjoint: invert the (conjugate) transposes instead.
        name: the op name.

    A singular matrix is an ``InvalidArgumentError`` when the step runs.
    """
    x = convert_inputs([input])[0]
    return apply_op("MatrixInverse", [x], {"adjoint": bool(adjoint), "T": x.dtype}, name=name)


def _infer_det(op: Operation) -> list:
    dtype = _require_dtype(op, is_float, "float or complex")
    batch, _ = _square_dims(op.inputs[0])
    return [(dtype, batch)]


def _det_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    det = _lapack(xp, xp.linalg.det, attrs["T"])
    asarray = xp.asarray
    return lambda x: asarray(det(x))  # numpy returns a scalar for one matrix


def _det_grad(op: Operation, grad: Tensor) -> list:
    # d det(A) = det(A) tr(A^-1 dA), so grad_A = G det(A) A^-T (batched: per matrix).
    a, det = op.inputs[0], op.outputs[0]
    inverse = matrix_inverse(a)
    return [einsum("...,...,...ji->...ij", grad, det, inverse)]


registry.register(registry.OpDef("MatrixDeterminant", _infer_det, _det_kernel, _det_grad))


def matrix_determinant(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """The determinants of the square matrices in the last two dimensions of ``input``."""
    x = convert_inputs([input])[0]
    return apply_op("MatrixDeterminant", [x], {"T": x.dtype}, name=name)


def _infer_solve(op: Operation) -> list:
    dtype = _require_dtype(op, is_float, "float or complex")
    matrix, rhs = op.inputs
    _, n = _square_dims(matrix)
    drhs = _require_rank_at_least(rhs, 2)
    m, k = drhs[-2:] if drhs is not None else (None, None)
    _check_equal_dims(n, m)
    batch = _broadcast_batch(matrix, rhs, 2, 2)
    return [(dtype, batch.concatenate(TensorShape([_merge_dim(n, m), k])))]


def _solve_kernel(ctx: Any, attrs: dict) -> Any:
    xp, dtype = ctx.xp, attrs["T"]
    solve = _lapack(xp, xp.linalg.solve, dtype)
    if attrs["adjoint"]:
        adj = _matrix_t(xp, dtype, True)
        return lambda a, b: solve(adj(a), b)
    return solve


def _solve_grad(op: Operation, grad: Tensor) -> list:
    # X = A^-1 B: grad_B = A^-H G, grad_A = -grad_B X^H (TF's _MatrixSolveGrad).
    a, adjoint, c = op.inputs[0], op.attrs["adjoint"], op.outputs[0]
    grad_b = matrix_solve(a, grad, adjoint=not adjoint)
    if adjoint:
        grad_a = matmul(c, grad_b, adjoint_b=True)
    else:
        grad_a = matmul(grad_b, c, adjoint_b=True)
    return [math_ops.negative(grad_a), grad_b]


registry.register(registry.OpDef("MatrixSolve", _infer_solve, _solve_kernel, _solve_grad))


def matrix_solve(matrix: Any, rhs: Any, adjoint: bool = False,
                 name: str | None = None) -> Tensor:
    """Solves ``matrix @ X = rhs`` for ``X`` (``adjoint``: ``matrix^H @ X = rhs``).

    Args:
        matrix: ``[..., M, M]`` float or complex.
        rhs: ``[..., M, K]`` of the same dtype; batch dimensions broadcast.
        adjoint: solve with the (conjugate) transposes of ``matrix``.
        name: the op name.
    """
    a, b = convert_inputs([matrix, rhs])
    return apply_op("MatrixSolve", [a, b], {"adjoint": bool(adjoint), "T": a.dtype},
                    name=name)


def _cholesky_kernel(ctx: Any, attrs: dict) -> Any:
    # LAPACK potrf on the lower triangle, as TF (the upper triangle is never read).
    return _lapack(ctx.xp, ctx.xp.linalg.cholesky, attrs["T"])


def _cholesky_grad(op: Operation, grad: Tensor) -> list:
    # Murray 2016, "Differentiation of the Cholesky decomposition", as in TF:
    #   grad_A = 1/2 (S + S^H),  S = L^-H Phi(L^H G) L^-1,
    # with Phi taking the lower triangle and halving the diagonal.
    chol = op.outputs[0]
    chol_inv = matrix_inverse(chol)
    middle = matmul(chol, grad, adjoint_a=True)
    middle = matrix_set_diag(matrix_band_part(middle, -1, 0),
                             math_ops.multiply(matrix_diag_part(middle),
                                               _scalar(0.5, middle.dtype)))
    grad_a = matmul(matmul(chol_inv, middle, adjoint_a=True), chol_inv)
    grad_a = math_ops.add(grad_a, matrix_transpose(grad_a, conjugate=True))
    return [math_ops.multiply(grad_a, _scalar(0.5, grad_a.dtype))]


registry.register(registry.OpDef("Cholesky", _infer_square, _cholesky_kernel,
                                 _cholesky_grad))


def cholesky(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """The lower-triangular Cholesky factors ``L`` (``A = L L^H``) of the Hermitian
    positive-definite matrices in the last two dimensions of ``input``; only the lower
    triangle of ``input`` is read. A matrix that is not positive definite is an
    ``InvalidArgumentError`` when the step runs."""
    x = convert_inputs([input])[0]
    return apply_op("Cholesky", [x], {"T": x.dtype}, name=name)


def _scalar(value: float, dtype: dtypes.DType) -> Tensor:
    return constant(value, dtype=dtype)


# --- diagonals and bands ----------------------------------------------------------------
def _infer_matrix_diag(op: Operation) -> list:
    x = op.inputs[0]
    dims = _require_rank_at_least(x, 1)
    if dims is None:
        return [(x.dtype, TensorShape(None))]
    return [(x.dtype, TensorShape([*dims, dims[-1]]))]


def _matrix_diag_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp

    def matrix_diag_(d: Any) -> Any:
        n = d.shape[-1]
        out = xp.zeros(d.shape + (n,), dtype=d.dtype)
        index = xp.arange(n)
        out[..., index, index] = d
        return out

    return matrix_diag_


def _matrix_diag_grad(op: Operation, grad: Tensor) -> list:
    return [matrix_diag_part(grad)]


registry.register(registry.OpDef("MatrixDiag", _infer_matrix_diag, _matrix_diag_kernel,
                                  _matrix_diag_grad))


def _check_k(k: Any, what: str) -> None:
    if not (isinstance(k, (int, np.integer)) and int(k) == 0):
        raise NotImplementedError(f"{what} supports only the main diagonal (k=0), got k={k}")


def matrix_diag(diagonal: Any, name: str = "diag", k: int = 0, num_rows: int = -1,
                num_cols: int = -1, padding_value: Any = 0,
                align: str = "RIGHT_LEFT") -> Tensor:
    """Square matrices with the given diagonals (``[..., N]`` -> ``[..., N, N]``).

    Only the main diagonal (``k=0``), square outputs and zero padding are supported.
    """
    _check_k(k, "matrix_diag")
    if num_rows not in (-1, None) or num_cols not in (-1, None) or padding_value != 0:
        raise NotImplementedError("matrix_diag supports only square outputs padded with 0")
    return apply_op("MatrixDiag", [diagonal], name=name)


def _infer_matrix_diag_part(op: Operation) -> list:
    x = op.inputs[0]
    dims = _require_rank_at_least(x, 2)
    if dims is None:
        return [(x.dtype, TensorShape(None))]
    m, n = dims[-2:]
    k = None if m is None or n is None else min(m, n)
    return [(x.dtype, TensorShape([*dims[:-2], k]))]


def _matrix_diag_part_kernel(ctx: Any, attrs: dict) -> Any:
    diagonal = ctx.xp.diagonal
    return lambda x: diagonal(x, 0, -2, -1).copy()  # the view is read-only and aliases x


def _matrix_diag_part_grad(op: Operation, grad: Tensor) -> list:
    return [matrix_set_diag(array_ops.zeros_like(op.inputs[0]), grad)]


registry.register(registry.OpDef("MatrixDiagPart", _infer_matrix_diag_part,
                                  _matrix_diag_part_kernel, _matrix_diag_part_grad))


def matrix_diag_part(input: Any, name: str = "diag_part", k: int = 0,  # noqa: A002
                     padding_value: Any = 0, align: str = "RIGHT_LEFT") -> Tensor:
    """The main diagonals of the matrices of ``input`` (``[..., M, N]`` ->
    ``[..., min(M, N)]``). Only ``k=0`` is supported."""
    _check_k(k, "matrix_diag_part")
    return apply_op("MatrixDiagPart", [input], name=name)


def _infer_matrix_set_diag(op: Operation) -> list:
    x, d = op.inputs
    if x.dtype != d.dtype:
        raise TypeError(f"matrix_set_diag: diagonal dtype {d.dtype.name} differs from "
                        f"input dtype {x.dtype.name}")
    (want,) = [s for _, s in _infer_matrix_diag_part(op)]
    if not want.is_compatible_with(d.shape):
        raise ValueError(f"The diagonal must have shape {want} for an input of shape "
                         f"{x.shape}, got {d.shape}")
    return [(x.dtype, x.shape)]


def _matrix_set_diag_kernel(ctx: Any, attrs: dict) -> Any:
    arange = ctx.xp.arange

    def matrix_set_diag_(x: Any, d: Any) -> Any:
        out = x.copy()
        index = arange(d.shape[-1])
        out[..., index, index] = d
        return out

    return matrix_set_diag_


def _matrix_set_diag_grad(op: Operation, grad: Tensor) -> list:
    diagonal = op.inputs[1]
    return [matrix_set_diag(grad, array_ops.zeros_like(diagonal)), matrix_diag_part(grad)]


registry.register(registry.OpDef("MatrixSetDiag", _infer_matrix_set_diag,
                                  _matrix_set_diag_kernel, _matrix_set_diag_grad))


def matrix_set_diag(input: Any, diagonal: Any, name: str = "set_diag",  # noqa: A002
                    k: int = 0, align: str = "RIGHT_LEFT") -> Tensor:
    """``input`` with its main diagonals replaced by ``diagonal``. Only ``k=0``."""
    _check_k(k, "matrix_set_diag")
    x = convert_inputs([input])[0]
    d = convert_inputs([diagonal], dtype_hint=x.dtype)[0]
    return apply_op("MatrixSetDiag", [x, d], name=name)


def _infer_band_part(op: Operation) -> list:
    x = op.inputs[0]
    _require_rank_at_least(x, 2)
    return [(x.dtype, x.shape)]


def _band_part_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    lower, upper = attrs["num_lower"], attrs["num_upper"]
    masks: dict[tuple, Any] = {}

    def band_part(x: Any) -> Any:
        key = (x.shape[-2:], x.dtype)
        cached = masks.get(key)
        if cached is None:
            if len(masks) >= _MAX_CACHED_SHAPES:
                masks.clear()
            m, n = x.shape[-2:]
            rows = xp.arange(m).reshape(m, 1)
            cols = xp.arange(n).reshape(1, n)
            keep = xp.ones((m, n), dtype=bool)
            if lower >= 0:
                keep = keep & (rows - cols <= lower)
            if upper >= 0:
                keep = keep & (cols - rows <= upper)
            cached = masks[key] = (keep, xp.zeros((), dtype=x.dtype))
        keep, zero = cached
        return xp.where(keep, x, zero)

    return band_part


def _band_part_grad(op: Operation, grad: Tensor) -> list:
    return [matrix_band_part(grad, op.attrs["num_lower"], op.attrs["num_upper"])]


registry.register(registry.OpDef("MatrixBandPart", _infer_band_part, _band_part_kernel,
                                  _band_part_grad))


def matrix_band_part(input: Any, num_lower: Any, num_upper: Any,  # noqa: A002
                     name: str | None = None) -> Tensor:
    """Keeps a band of each matrix: ``num_lower`` subdiagonals and ``num_upper``
    superdiagonals (negative: the whole triangle), zeroing the rest.

    ``band_part(x, -1, 0)`` is the lower triangle, ``band_part(x, 0, 0)`` the diagonal.
    ``num_lower``/``num_upper`` must be known at build time.
    """
    bounds = []
    for value, what in ((num_lower, "num_lower"), (num_upper, "num_upper")):
        if isinstance(value, Tensor):
            folded = constant_value(value)
            if folded is None:
                raise ValueError(f"matrix_band_part needs {what} known at build time")
            value = folded
        bounds.append(int(value))
    return apply_op("MatrixBandPart", [input], {"num_lower": bounds[0],
                                               "num_upper": bounds[1]}, name=name)


# --- composites: transpose, trace, triangular solves, logdet --------------------------------
def matrix_transpose(a: Any, name: str = "matrix_transpose", conjugate: bool = False) -> Tensor:
    """Transposes the last two dimensions of ``a`` (conjugating if ``conjugate``)."""
    with name_scope(name, "matrix_transpose", [a]):
        a = convert_inputs([a])[0]
        rank = a.shape.rank
        if rank is not None and rank < 2:
            raise ValueError(f"Argument 'a' should be a (batch) matrix, with rank >= 2. "
                             f"Found: {a.shape}")
        if rank is not None:
            return array_ops.transpose(a, [*range(rank - 2), rank - 1, rank - 2],
                                       conjugate=conjugate)
        out = einsum("...ij->...ji", a)
        return math_ops.conj(out) if conjugate and a.dtype.is_complex else out


def adjoint(matrix: Any, name: str | None = None) -> Tensor:
    """The conjugate transposes of the matrices of ``matrix``."""
    return matrix_transpose(matrix, name=name or "adjoint", conjugate=True)


def trace(x: Any, name: str | None = None) -> Tensor:
    """The sums of the main diagonals of the matrices of ``x`` (``[..., M, N]`` ->
    ``[...]``)."""
    with name_scope(name, "Trace", [x]):
        return math_ops.reduce_sum(matrix_diag_part(x), axis=-1)


def matrix_triangular_solve(matrix: Any, rhs: Any, lower: bool = True, adjoint: bool = False,
                            name: str | None = None) -> Tensor:
    """Solves ``matrix @ X = rhs`` reading only the lower (``lower``) or upper triangle
    of ``matrix``.

    A general solve on the selected triangle (numpy has no triangular solver); its
    gradient reaches only that triangle, as TF's.
    """
    with name_scope(name, "MatrixTriangularSolve", [matrix, rhs]):
        band = matrix_band_part(matrix, -1, 0) if lower else matrix_band_part(matrix, 0, -1)
        return matrix_solve(band, rhs, adjoint=adjoint)


def cholesky_solve(chol: Any, rhs: Any, name: str | None = None) -> Tensor:
    """Solves ``A X = rhs`` given the Cholesky factors ``chol`` of ``A``."""
    with name_scope(name, "cholesky_solve", [chol, rhs]):
        y = matrix_triangular_solve(chol, rhs, lower=True, adjoint=False)
        return matrix_triangular_solve(chol, y, lower=True, adjoint=True)


def logdet(matrix: Any, name: str | None = None) -> Tensor:
    """``log(det(matrix))`` of Hermitian positive-definite matrices, via Cholesky."""
    with name_scope(name, "logdet", [matrix]):
        chol = cholesky(matrix)
        log_diag = math_ops.log(matrix_diag_part(chol))
        total = math_ops.reduce_sum(log_diag, axis=-1)
        return math_ops.multiply(total, _scalar(2.0, total.dtype))


# --- eye ----------------------------------------------------------------------------------
def _infer_eye(op: Operation) -> list:
    rows, cols, batch = op.inputs
    for t in op.inputs:
        if not t.dtype.is_integer:
            raise TypeError(f"eye needs integer sizes, got {t.dtype.name} for '{t.name}'")
    dims: list[int | None] = []
    batch_value = constant_value(batch)
    if batch_value is not None:
        dims.extend(int(d) for d in np.reshape(batch_value, [-1]))
    elif batch.shape.rank == 1 and batch.shape.as_tuple()[0] is not None:
        dims.extend([None] * batch.shape.as_tuple()[0])
    else:
        return [(op.attrs["dtype"], TensorShape(None))]
    for t in (rows, cols):
        value = constant_value(t)
        dims.append(None if value is None else int(value))
    return [(op.attrs["dtype"], TensorShape(dims))]


def _eye_kernel(ctx: Any, attrs: dict) -> Any:
    xp, dtype = ctx.xp, attrs["dtype"].as_numpy_dtype

    def eye_(rows: Any, cols: Any, batch: Any) -> Any:
        matrix = xp.eye(int(rows), int(cols), dtype=dtype)
        shape = tuple(int(d) for d in batch) + matrix.shape
        return matrix if len(shape) == 2 else xp.array(xp.broadcast_to(matrix, shape))

    return eye_


registry.register(registry.OpDef("Eye", _infer_eye, _eye_kernel, registry.NOT_DIFFERENTIABLE,
                                 foldable=True))


def _static_int(value: Any) -> int | None:
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, Tensor):
        folded = constant_value(value)
        return None if folded is None or np.ndim(folded) else int(folded)
    return int(value)


def eye(num_rows: Any, num_columns: Any = None, batch_shape: Any = None,
        dtype: Any = dtypes.float32, name: str | None = None) -> Tensor:
    """Identity matrices (ones on the main diagonal), optionally batched.

    Args:
        num_rows: the number of rows, an int or a scalar int tensor.
        num_columns: the number of columns (default: ``num_rows``).
        batch_shape: leading batch dimensions, a list of ints or a 1-D int tensor.
        dtype: the element type.
        name: the op name.

    Returns:
        A tensor of shape ``batch_shape + [num_rows, num_columns]``; a constant when
        every size is known at build time.
    """
    dtype = dtypes.as_dtype(dtype)
    if num_columns is None:
        num_columns = num_rows
    rows, cols = _static_int(num_rows), _static_int(num_columns)
    if isinstance(batch_shape, Tensor):
        folded = constant_value(batch_shape)
        batch = None if folded is None else [int(d) for d in np.reshape(folded, [-1])]
    else:
        batch = [] if batch_shape is None else [int(d) for d in batch_shape]
    if rows is not None and cols is not None and batch is not None:
        if rows < 0 or cols < 0:
            raise ValueError(f"eye needs non-negative sizes, got {rows} x {cols}")
        value = np.broadcast_to(np.eye(rows, cols, dtype=dtype.as_numpy_dtype),
                                [*batch, rows, cols]).copy()
        return constant(value, dtype=dtype, name=name or "eye")
    batch_tensor = batch_shape if batch_shape is not None else constant([], dtype=dtypes.int32)
    sizes = convert_inputs([num_rows, num_columns, batch_tensor], dtype_hint=dtypes.int32)
    return apply_op("Eye", sizes, {"dtype": dtype}, name=name or "eye")


# --- norm ---------------------------------------------------------------------------------
_MATRIX_ORDS = ("euclidean", "fro")


def _is_positive_number(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and \
        not isinstance(value, bool) and value > 0


def norm(tensor: Any, ord: Any = "euclidean", axis: Any = None,  # noqa: A002
         keepdims: bool | None = None, name: str | None = None,
         keep_dims: bool | None = None) -> Tensor:
    """Vector and matrix norms.

    Args:
        tensor: a float or complex tensor.
        ord: ``'euclidean'`` (default), ``'fro'``, ``1``, ``2``, ``np.inf`` or any
            positive number ``p`` for vector norms; ``'euclidean'``/``'fro'``, ``1`` and
            ``np.inf`` for matrix norms (max column / row sums of absolute values).
        axis: ``None`` (the whole tensor as one vector), an int (vector norms along it)
            or a pair of ints (matrix norms over those two axes).
        keepdims: keep the reduced axes with size 1.
        name: a name scope.
        keep_dims: deprecated alias of ``keepdims``.

    Returns:
        The norms, of ``tensor``'s dtype.

    Raises:
        ValueError: an unsupported ``ord`` or a bad ``axis`` (as TF1).
        NotImplementedError: ``ord=2`` over two axes (the largest singular value),
            which TF computes with an SVD this library does not have.
    """
    if keep_dims is not None:
        if keepdims is not None:
            raise ValueError("Cannot specify both 'keep_dims' and 'keepdims'")
        keepdims = keep_dims
    keepdims = bool(keepdims)
    is_matrix = isinstance(axis, (list, tuple)) and len(axis) == 2
    if is_matrix:
        if axis[0] == axis[1]:
            raise ValueError(f"'axis' must be a tuple of two distinct ints, got {axis}")
        if isinstance(ord, (int, float)) and not isinstance(ord, bool) and ord == 2:
            raise NotImplementedError("norm: the matrix 2-norm (largest singular value) is "
                                      "not implemented")
        if not (ord in _MATRIX_ORDS or ord == 1 or ord == np.inf):
            raise ValueError(f"'ord' must be a supported matrix norm in ['euclidean', 'fro', "
                             f"1, 2, inf], got {ord}")
    else:
        if axis is not None and not isinstance(axis, (int, np.integer)):
            raise ValueError(f"'axis' must be None, an integer, or a tuple of 2 unique "
                             f"integers, got {axis}")
        if not (ord == "euclidean" or _is_positive_number(ord)):
            raise ValueError(f"'ord' must be a supported vector norm, got {ord}")
    with name_scope(name, "norm", [tensor]):
        x = convert_inputs([tensor])[0]
        axes = list(axis) if is_matrix else axis
        if ord in _MATRIX_ORDS or (not is_matrix and ord == 2):
            square = math_ops.multiply(x, math_ops.conj(x)) if x.dtype.is_complex \
                else math_ops.square(x)
            return math_ops.sqrt(math_ops.reduce_sum(square, axis=axes, keepdims=keepdims))
        magnitude = math_ops.abs(x)
        if is_matrix:
            # ord=1: the largest column sum; ord=inf: the largest row sum.
            summed_axis, max_axis = (axes[0], axes[1]) if ord == 1 else (axes[1], axes[0])
            sums = math_ops.reduce_sum(magnitude, axis=summed_axis, keepdims=True)
            return math_ops.reduce_max(sums, axis=[summed_axis, max_axis], keepdims=keepdims)
        if ord == np.inf:
            return math_ops.reduce_max(magnitude, axis=axes, keepdims=keepdims)
        if ord == 1:
            return math_ops.reduce_sum(magnitude, axis=axes, keepdims=keepdims)
        p = _scalar(float(ord), magnitude.dtype)
        total = math_ops.reduce_sum(math_ops.pow(magnitude, p), axis=axes, keepdims=keepdims)
        return math_ops.pow(total, _scalar(1.0 / float(ord), magnitude.dtype))
