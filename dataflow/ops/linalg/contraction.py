"""Einsum and the contractions built on it (``tensordot``, ``matrix_transpose``), and
the static-shape helpers the whole linalg family shares.

Primitives (one record each): ``Einsum`` (numpy's ``einsum``; large contractions go
through a cached BLAS plan, small ones through numpy's C loop) and ``EinsumDiagonalMask``
(a private, non-differentiable helper of the einsum gradient). Composites:
``tensordot`` (one einsum), ``matrix_transpose``/``adjoint`` (a ``Transpose`` when the
rank is known, else the einsum ``"...ij->...ji"``). ``parse_equation`` validates an
equation and makes its output explicit (implicit mode: the labels seen once, sorted).

The shared helpers (``check_equal_dims``, ``merge_dim``, ``require_rank_at_least``,
``broadcast_batch``, ``require_dtype``, ``lapack``, ``matrix_t``, ...) live here
because einsum is the bottom of the family: ``products``, ``diag`` and
``decomp`` import them from this module.

Einsum gradient, the one non-obvious rule. For ``z = einsum("s1,s2,...->so", x1, x2,
...)``, the gradient for ``xi`` is the einsum of the output gradient with every other
operand (conjugated, for complex inputs), written back to ``si``:
``einsum("so,s1,..(not si)..->si", g, ...)``. Two cases need a third kind of operand,
a 0/1 tensor ``D`` shaped like ``xi``:

* a label (or the ellipsis) of ``si`` appears nowhere else (it was summed over in
  ``xi`` alone): ``D = ones_like(xi)`` supplies it, broadcasting ``g`` along it;
* a label repeats in ``si`` (a diagonal, e.g. ``"ii->i"``): its later occurrences are
  renamed to fresh labels, and ``D`` is 1 exactly where the renamed axes share an index
  (``EinsumDiagonalMask``), which puts the gradient on the diagonal.

Example: ``einsum("ii->", x)`` (the trace). ``si = "ii"`` becomes ``"iA"`` and the
gradient is ``einsum(",iA->iA", g, D)`` with ``D = eye``: ``g`` times the identity.
The gradient pass undoes broadcasting of ellipsis dimensions with one ``SumToShape``.
"""

from __future__ import annotations

import string
from collections import Counter
from collections.abc import Sequence
from math import prod
from typing import Any

import numpy as np

from ...framework import dtypes, registry
from ...framework.graph import Operation, Tensor
from ...framework.scopes import name_scope
from ...framework.tensor_shape import TensorShape, broadcast_shapes
from ...framework.tensor_util import constant_value
from .. import array as array_ops
from .. import math as math_ops
from ..build import apply_op, convert_inputs
from ..parallel_products import contraction_plan, parallel_contraction, per_matrix
from ..rules import require_same_dtype

_ELLIPSIS = "..."


# --- shared static-shape helpers ----------------------------------------------------------
def check_equal_dims(a: int | None, b: int | None, what: str = "") -> None:
    if a is not None and b is not None and a != b:
        raise ValueError(f"Dimensions must be equal, but are {a} and {b}{what}")


def merge_dim(a: int | None, b: int | None, what: str = "") -> int | None:
    check_equal_dims(a, b, what)
    return a if a is not None else b


def require_rank_at_least(t: Tensor, rank: int) -> tuple | None:
    dims = t.shape.as_tuple()
    if dims is not None and len(dims) < rank:
        raise ValueError(
            f"Shape must be at least rank {rank} but is rank {len(dims)} (input '{t.name}')"
        )
    return dims


def _batch_shape(t: Tensor, inner: int) -> TensorShape:
    dims = t.shape.as_tuple()
    return TensorShape(None) if dims is None else TensorShape(dims[: len(dims) - inner])


def broadcast_batch(a: Tensor, b: Tensor, inner_a: int, inner_b: int) -> TensorShape:
    sa, sb = _batch_shape(a, inner_a), _batch_shape(b, inner_b)
    try:
        return broadcast_shapes(sa, sb)
    except ValueError:
        raise ValueError(
            f"Inputs must have compatible (broadcastable) batch dimensions: {a.shape} vs. {b.shape}"
        ) from None


def require_dtype(op: Operation, check: Any, what: str) -> dtypes.DType:
    dtype = require_same_dtype(op)
    if not check(dtype):
        raise TypeError(f"'{op.type}' needs {what} inputs, got {dtype.name}")
    return dtype


def is_matmul_dtype(d: dtypes.DType) -> bool:
    return (d.is_floating or d.is_complex or d.is_integer) and not d.is_bool


def lapack(xp: Any, fn: Any, dtype: dtypes.DType) -> Any:
    """``fn`` for ``dtype``; LAPACK has no half precision, so float16 goes via float32.
    A large batch of matrices is split over the step's intra-op threads (``per_matrix``:
    BLAS runs on one thread inside steps)."""
    fn = per_matrix(xp, fn)
    if dtype == dtypes.float16:
        f16, f32 = xp.float16, xp.float32
        return lambda *xs: fn(*(x.astype(f32) for x in xs)).astype(f16)
    return fn


def matrix_t(xp: Any, dtype: dtypes.DType, adjoint: bool) -> Any:
    """The (conjugate, for complex adjoints) transpose of the last two axes."""
    swap = xp.swapaxes
    if adjoint and dtype.is_complex:
        conj = xp.conj
        return lambda x: conj(swap(x, -1, -2))
    return lambda x: swap(x, -1, -2)


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
        raise ValueError(
            f"Einsum equation '{equation}' names {len(ins)} inputs, but {num_inputs} were given"
        )
    for spec in [*ins, out]:
        if spec.count(_ELLIPSIS) > 1 or not all(
            c in string.ascii_letters for c in spec.replace(_ELLIPSIS, "", 1)
        ):
            raise ValueError(
                f"Invalid subscripts '{spec}' in einsum equation '{equation}' "
                "(use letters and at most one '...')"
            )
    has_ellipsis = any(_ELLIPSIS in s for s in ins)
    if not arrow:
        counts = Counter(c for s in ins for c in _letters(s))
        out = (_ELLIPSIS if has_ellipsis else "") + "".join(
            sorted(c for c, k in counts.items() if k == 1)
        )
    else:
        seen = set("".join(_letters(s) for s in ins))
        letters = _letters(out)
        if len(set(letters)) != len(letters):
            raise ValueError(
                f"Output subscripts '{out}' of einsum equation '{equation}' repeat a label"
            )
        missing = [c for c in letters if c not in seen]
        if missing:
            raise ValueError(
                f"Output label '{missing[0]}' of einsum equation '{equation}' "
                "does not appear in any input"
            )
        if _ELLIPSIS in out and not has_ellipsis:
            raise ValueError(
                f"Einsum equation '{equation}' has '...' in its output but in no input"
            )
    return ins, out


def _spec_dims(spec: str, shape: TensorShape, index: int) -> tuple[list, TensorShape | None]:
    """The (label, dim) pairs of one operand and the shape its ellipsis covers."""
    head, tail, has_ellipsis = _split_spec(spec)
    dims = shape.as_tuple()
    if dims is None:
        return [(c, None) for c in head + tail], (TensorShape(None) if has_ellipsis else None)
    n = len(head) + len(tail)
    if has_ellipsis and len(dims) < n:
        raise ValueError(
            f"Input {index} has rank {len(dims)}, fewer than the {n} labels of "
            f"its subscripts '{spec}'"
        )
    if not has_ellipsis and len(dims) != n:
        raise ValueError(
            f"Input {index} has rank {len(dims)}, but its subscripts '{spec}' name {n} dimensions"
        )
    pairs = list(zip(head, dims[: len(head)], strict=True)) + list(
        zip(tail, dims[len(dims) - len(tail) :], strict=True)
    )
    ell = TensorShape(dims[len(head) : len(dims) - len(tail)]) if has_ellipsis else None
    return pairs, ell


def _infer_einsum(op: Operation) -> list:
    dtype = require_dtype(op, is_matmul_dtype, "numeric")
    equation = op.attrs["equation"]
    ins, out = parse_equation(equation, len(op.inputs))
    sizes: dict[str, int | None] = {}
    ells = []
    for i, (spec, t) in enumerate(zip(ins, op.inputs, strict=True)):
        pairs, ell = _spec_dims(spec, t.shape, i)
        for c, d in pairs:
            sizes[c] = merge_dim(sizes.get(c), d, f" (label '{c}' of einsum equation '{equation}')")
        if ell is not None:
            ells.append(ell)
    try:
        ell_shape = broadcast_shapes(*ells) if ells else TensorShape([])
    except ValueError:
        raise ValueError(
            f"The '...' dimensions of einsum equation '{equation}' do not "
            f"broadcast: {', '.join(str(e) for e in ells)}"
        ) from None
    head, tail, has_ellipsis = _split_spec(out)
    if not has_ellipsis and ell_shape.rank:
        raise ValueError(
            f"Output contains {ell_shape.rank} broadcasting dimension(s) but no "
            f"ellipsis (...) was found in the output subscripts of einsum "
            f"equation '{equation}'"
        )
    if has_ellipsis and ell_shape.rank is None:
        return [(dtype, TensorShape(None))]
    dims = (
        [sizes[c] for c in head]
        + (ell_shape.as_list() if has_ellipsis else [])
        + [sizes[c] for c in tail]
    )
    return [(dtype, TensorShape(dims))]


# Below this many multiply-adds numpy's C einsum beats planning a BLAS contraction
# (measured: 16x16 matmul 4.5 us vs 15 us; 64x64: 53 us vs 22 us).
_EINSUM_BLAS_THRESHOLD = 1 << 16
# Kernels cache per-shape plans and masks; a feed whose shape changes every step must
# not grow them without bound.
MAX_CACHED_SHAPES = 64


def _einsum_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    einsum_ = xp.einsum
    equation = attrs["equation"]
    ins, out = parse_equation(equation, attrs["N"])
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
    # A matrix product in disguise (``tensordot``: a dense layer on a sequence) is split
    # over the step's intra-op threads, as ``MatMul`` is (``ops/parallel_products.py``).
    as_product = contraction_plan(ins, out)
    contract = parallel_contraction(xp, as_product, ins, out) if as_product else None

    def plan(xs: Sequence[Any]) -> Any:
        sizes: dict[str, int] = {}
        ell = 1
        for (head, tail, has_ellipsis), x in zip(splits, xs, strict=True):
            shape = x.shape
            sizes.update(zip(head, shape[: len(head)], strict=True))
            if tail:
                sizes.update(zip(tail, shape[len(shape) - len(tail) :], strict=True))
            if has_ellipsis:
                ell = max(ell, prod(shape[len(head) : len(shape) - len(tail)]))
        cost = ell * prod(sizes.values())
        if cost < _EINSUM_BLAS_THRESHOLD:
            return False
        return path_of(equation, *xs, optimize="greedy")[0]

    def einsum_n(*xs: Any) -> Any:
        if contract is not None:
            result = contract(*xs)
            if result is not None:
                return result
        key = tuple(x.shape for x in xs)
        path = plans.get(key)
        if path is None:
            if len(plans) >= MAX_CACHED_SHAPES:
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
    out_head: list[str] = []
    out_tail: list[str] = []
    for part, out_part, axis_of in (
        (head, out_head, lambda k: k),
        (tail, out_tail, lambda k: k - len(tail)),
    ):
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
        others = [(s, t) for j, (s, t) in enumerate(zip(ins, op.inputs, strict=True)) if j != i]
        specs = [out] + [s for s, _ in others]
        # Complex operands: the rule is linear in each other operand, so TF's convention
        # (a real loss's gradient is dL/dRe + i dL/dIm) contracts grad with their conj.
        operands = [grad] + [math_ops.conj(t) for _, t in others]
        fresh = _fresh_labels(op.attrs["equation"])
        renamed, groups = _rename_repeats(spec, fresh)
        available = set("".join(specs))
        needs_support = (
            groups
            or any(c not in available for c in _letters(spec))
            or (_ELLIPSIS in spec and not any(_ELLIPSIS in s for s in specs))
        )
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
            if x.shape.is_fully_defined():
                dims = x.shape.as_list()
                n_tail = len(_letters(renamed)) - len(head)
                target: Any = [
                    *dims[len(head) : len(dims) - n_tail],
                    *dims[: len(head)],
                    *dims[len(dims) - n_tail :],
                ]
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
            if len(cache) >= MAX_CACHED_SHAPES:
                cache.clear()
            ndim = x.ndim
            keep = xp.ones((1,) * ndim, dtype=bool)
            for group in groups:
                first = group[0] % ndim
                index = xp.arange(x.shape[first]).reshape(
                    [x.shape[first] if a == first else 1 for a in range(ndim)]
                )
                for axis in group[1:]:
                    axis %= ndim
                    other = xp.arange(x.shape[axis]).reshape(
                        [x.shape[axis] if a == axis else 1 for a in range(ndim)]
                    )
                    keep = keep & (index == other)
            mask = cache[key] = xp.broadcast_to(keep, x.shape).astype(x.dtype)
        return mask

    return diagonal_mask


registry.register(
    registry.OpDef(
        "EinsumDiagonalMask",
        _infer_diagonal_mask,
        _diagonal_mask_kernel,
        registry.NOT_DIFFERENTIABLE,
    )
)


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
            raise ValueError(
                f"tensordot needs inputs of known rank, got shapes {a.shape} and {b.shape}"
            )
        a_axes, b_axes = _tensordot_axes(axes, ra, rb)
        letters = string.ascii_letters
        spec_a = list(letters[:ra])
        spec_b = list(letters[ra : ra + rb])
        for ia, ib in zip(a_axes, b_axes, strict=True):
            spec_b[ib] = spec_a[ia]
        free = [c for k, c in enumerate(spec_a) if k not in a_axes] + [
            c for k, c in enumerate(spec_b) if k not in b_axes
        ]
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
            raise ValueError(
                f"'axes' must not be larger than the number of dimensions of "
                f"the inputs ({ra} and {rb}), got {n}."
            )
        return list(range(ra - n, ra)), list(range(n))
    if not isinstance(axes, (list, tuple)) or len(axes) != 2:
        raise ValueError(f"'axes' must be an integer or have length 2, got {axes!r}.")
    a_axes, b_axes = ([x] if isinstance(x, (int, np.integer)) else list(x) for x in axes)
    if len(a_axes) != len(b_axes):
        raise ValueError(
            f"Different number of contraction axes 'a' and 'b', {len(a_axes)} != {len(b_axes)}."
        )
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


# --- matrix_transpose, adjoint --------------------------------------------------------------
def matrix_transpose(a: Any, name: str = "matrix_transpose", conjugate: bool = False) -> Tensor:
    """Transposes the last two dimensions of ``a`` (conjugating if ``conjugate``)."""
    with name_scope(name, "matrix_transpose", [a]):
        a = convert_inputs([a])[0]
        rank = a.shape.rank
        if rank is not None and rank < 2:
            raise ValueError(
                f"Argument 'a' should be a (batch) matrix, with rank >= 2. Found: {a.shape}"
            )
        if rank is not None:
            return array_ops.transpose(
                a, [*range(rank - 2), rank - 1, rank - 2], conjugate=conjugate
            )
        out = einsum("...ij->...ji", a)
        if conjugate and a.dtype.is_complex:
            return math_ops.conj(out)
        return out


def adjoint(matrix: Any, name: str | None = None) -> Tensor:
    """The conjugate transposes of the matrices of ``matrix``."""
    return matrix_transpose(matrix, name=name or "adjoint", conjugate=True)
