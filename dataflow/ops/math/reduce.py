"""Reductions: ``Sum Mean Max Min Prod All Any``, and ``BroadcastReduced``, the adjoint
of a reduction that their gradients share (TF1's ``math_ops`` reductions). ``ArgMax``,
``ArgMin`` and ``Cumsum`` are in ``math/argmax_cumsum.py``; the fused sums of squares in
``math/sum_of_squares.py``.

Each op type is one record: shape/dtype rule, kernel (through ``ctx.xp``) and gradient
rule side by side. The axes are an optional int32/int64 input (a constant in almost
every graph): the shape rule folds it at build time when it can (``_reduced_shape``),
and kernels turn it into a tuple once per plan (``AxesReader`` remembers the last axes
array, which for a constant is the same object every step). Kernels return exactly the
static dtype, so they pass ``dtype=`` to numpy reductions that would otherwise widen
(``sum`` of int32 gives int64 in numpy); an integer ``Mean`` truncates toward zero, as
TF's does.

Gradients re-insert the reduced dimensions with ``BroadcastReduced(grad, shape(x),
axes)``; e.g. for ``y = reduce_sum(x, 1)`` with ``x`` of shape [2, 3], ``dx =
BroadcastReduced(dy, [2, 3], [1])``: ``dy`` of shape [2] is viewed as [2, 1] and
broadcast to [2, 3]. ``Max``/``Min`` share the gradient among the elements equal to
the extremum; ``Prod``'s handles zeros without dividing by them.

Composite reductions (``reduce_logsumexp``, ``reduce_variance``, ...) are in
``composite``.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ...framework import dtypes, errors, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor
from ...framework.tensor_shape import TensorShape
from ...framework.tensor_util import constant_shape, constant_value
from ..array.shapes import ones_like, zeros_like
from ..array.shapes import shape as _shape_op
from ..build import apply_op
from ..cast import cast
from ..constant import constant
from ..rules import is_bool, is_int_or_float
from .arith import BINARY_ELEMENTWISE, NUMBER, UNARY_ELEMENTWISE, multiply, realdiv, times_conj
from .compare import NOT_DIFF, equal, logical_and, select


# --- reductions ------------------------------------------------------------------------
class AxesReader:
    """Turns an axes array into a tuple of ints, remembering the last array seen.

    Constant axes arrive as the same bound object on every step, so the conversion
    runs once per plan. (One tuple assignment keeps this safe between threads.)
    """

    __slots__ = ("_last", "_last_whole")

    def __init__(self) -> None:
        self._last: tuple[Any, Any] = (None, None)
        self._last_whole: tuple[Any, int, Any] = (None, -1, None)

    def __call__(self, axes: Any) -> Any:
        if axes is None:
            return None
        last = self._last
        if last[0] is axes:
            return last[1]
        value = tuple(int(a) for a in axes.reshape(-1).tolist())
        self._last = (axes, value)
        return value

    def scalar(self, axis: Any) -> int:
        return self(axis)[0]

    def whole(self, axes: Any, ndim: int) -> Any:
        """``_whole(self(axes), ndim)``, remembered with the axes array and ``ndim`` (so
        the range check and the whole-array test run once per plan, not per step)."""
        if axes is None:
            return None
        last = self._last_whole
        if last[0] is axes and last[1] == ndim:
            return last[2]
        value = _whole(self(axes), ndim)
        self._last_whole = (axes, ndim, value)
        return value


def _reduced_shape(op: Operation, axes_input: int = 1) -> TensorShape:
    """Static output shape of a reduction with optional axes at ``axes_input``."""
    x = op.inputs[0]
    keep = op.attrs["keep_dims"]
    rank = x.shape.rank
    if len(op.inputs) > axes_input:
        value = constant_value(op.inputs[axes_input])
        if value is None:
            if keep and rank is not None:
                return TensorShape([None] * rank)
            return TensorShape(None)
        axes = [int(a) for a in np.reshape(value, [-1])]
    else:
        axes = list(range(rank)) if rank is not None else []
    if rank is None:
        return TensorShape(None)
    for a in axes:
        if not -rank <= a < rank:
            raise ValueError(f"Invalid reduction dimension {a} for input with {rank} dimensions")
    reduced = {a % rank for a in axes}
    dims = x.shape.as_list()
    if keep:
        return TensorShape([1 if i in reduced else d for i, d in enumerate(dims)])
    return TensorShape([d for i, d in enumerate(dims) if i not in reduced])


def check_axes(op: Operation, index: int = 1) -> None:
    if len(op.inputs) > index:
        axes = op.inputs[index]
        if axes.dtype not in (dtypes.int32, dtypes.int64):
            raise TypeError(
                f"The axis of '{op.type}' must be int32 or int64, got {axes.dtype.name}"
            )
        if axes.shape.rank is not None and axes.shape.rank > 1:
            raise ValueError(
                f"The axis of '{op.type}' must be a scalar or a vector, got shape {axes.shape}"
            )


def _reduction_rule(check: Callable[[dtypes.DType], bool], what: str) -> Callable:
    def rule(op: Operation) -> list:
        x = op.inputs[0]
        if not check(x.dtype):
            raise TypeError(f"'{op.type}' needs {what} inputs, got {x.dtype.name} for '{x.name}'")
        check_axes(op)
        return [(x.dtype, _reduced_shape(op))]

    return rule


def _in_range(axis: Any, ndim: int) -> Any:
    """``axis`` (a tuple of ints, or ``None``), after refusing a dimension out of range
    as TF1 does at run time (an input of unknown rank cannot be checked when built)."""
    if axis and (builtins.min(axis) < -ndim or builtins.max(axis) >= ndim):
        bad = next(a for a in axis if not -ndim <= a < ndim)
        raise errors.InvalidArgumentError(
            None,
            None,
            f"Invalid reduction dimension {bad} for input with {ndim} "
            f"dimensions: axis must be in the range [{-ndim}, {ndim})",
        )
    return axis


def _whole(axis: Any, ndim: int) -> Any:
    """``None`` when ``axis`` names every dimension (a whole-array reduction, numpy's
    fastest path: ``reduce_sum(x)`` passes all axes explicitly), else ``axis``. An axis
    out of range is refused (``_in_range``), never wrapped around."""
    if axis is None:
        return None
    _in_range(axis, ndim)
    if len(axis) != ndim:
        return axis
    return None if len({a % ndim for a in axis}) == ndim else axis


# The ufunc whose ``reduce`` each reduction is: called directly it skips numpy's
# Python-level ``np.sum``/``np.max`` wrapper, 1.5 us a call on small arrays.
_REDUCE_UFUNCS = {
    "sum": "add",
    "prod": "multiply",
    "max": "maximum",
    "min": "minimum",
    "all": "logical_and",
    "any": "logical_or",
}


def reduction_kernel(fn_name: str, pass_dtype: bool = False) -> Callable:
    """Factory for ``xp.<fn_name>(x, axis, keepdims)`` reductions."""

    def factory(ctx: Any, attrs: dict) -> Any:
        fn = getattr(ctx.xp, fn_name)
        ufunc = getattr(ctx.xp, _REDUCE_UFUNCS[fn_name], None)
        keep = attrs["keep_dims"]
        read = AxesReader()
        if ufunc is not None and fn_name in ("max", "min"):

            def extremum(x: Any, axes: Any = None) -> Any:
                axis = read.whole(axes, x.ndim)
                if x.size == 0:  # numpy's own message for an empty extremum
                    return fn(x, axis=axis, keepdims=keep)
                return ufunc.reduce(x, axis=axis, keepdims=keep)

            return extremum
        if ufunc is not None:
            cast = pass_dtype or fn_name in ("all", "any")
            # numpy widens int32 sums/products to int64 unless told the dtype; logical
            # reductions of a bool input stay bool.
            return lambda x, axes=None: ufunc.reduce(
                x, axis=read.whole(axes, x.ndim), keepdims=keep, dtype=x.dtype if cast else None
            )
        if pass_dtype:
            return lambda x, axes=None: fn(
                x, axis=_in_range(read(axes), x.ndim), keepdims=keep, dtype=x.dtype
            )
        return lambda x, axes=None: fn(x, axis=_in_range(read(axes), x.ndim), keepdims=keep)

    factory.__name__ = f"_{fn_name}_kernel"
    return factory


def mean_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    keep = attrs["keep_dims"]
    read = AxesReader()

    def mean(x: Any, axes: Any = None) -> Any:
        axis = read.whole(axes, x.ndim)
        if x.dtype.kind in "fc":
            if axis is None and not keep and x.dtype.itemsize >= 4 and x.flags.c_contiguous:
                # A whole-array mean (the usual loss) as one contiguous pairwise sum and a
                # divide: the same arithmetic as xp.mean, without its per-axis overhead
                # (3-4x faster on a [N, 1] column). ``/`` keeps a numpy scalar on numpy's
                # scalar fast path (a true_divide call costs 1 us more); NEP 50 keeps the
                # dtype when dividing by a Python int.
                return xp.add.reduce(x.reshape(-1)) / builtins.max(x.size, 1)
            return xp.mean(x, axis=axis, keepdims=keep)
        # Integer mean: the sum divided by the count, truncated toward zero (as TF).
        total = xp.sum(x, axis=axis, keepdims=keep, dtype=x.dtype)
        count = builtins.max(x.size // builtins.max(total.size, 1), 1)
        quotient = total // count
        return quotient + ((total % count != 0) & (total < 0)).astype(x.dtype)

    return mean


def _shape_tensor(x: Tensor) -> Tensor:
    """``shape(x)``: a constant when the static shape is fully known."""
    if x.shape.is_fully_defined():
        return constant(x.shape.as_list(), dtype=dtypes.int32)
    # shape(f(x)) is shape(x) for an elementwise f: asking x leaves f's output read by
    # the reduction alone, so the two can fuse (reduce_mean(square(x)), fusion above).
    return _shape_op(shape_root(x, {}))


def shape_root(t: Tensor, roots: dict[Tensor, Tensor]) -> Tensor:
    """A tensor with ``t``'s run-time shape, found through ops that keep a shape:
    elementwise one-input ops; elementwise two-input ops with a scalar operand, or with
    operands of one root; ``BroadcastReduced`` and ``Reshape`` (a gradient reshaped
    back), whose output has the shape their ``Shape`` input reads; ops whose registry
    record names the input whose shape their output has (``shape_of_input``: ``Relu``,
    ``BiasAdd``, ``MaxPoolGrad``, ...). ``roots`` memoizes (a graph may reach a tensor
    by many paths)."""
    found = roots.get(t)
    if found is not None:
        return found
    op, root = t.op, t
    same_as = registry.lookup(op.type).shape_of_input
    if same_as is not None:
        root = shape_root(op.inputs[same_as], roots)
    elif op.type in UNARY_ELEMENTWISE:
        root = shape_root(op.inputs[0], roots)
    elif op.type in ("BroadcastReduced", "Reshape") and op.inputs[1].op.type == "Shape":
        root = shape_root(op.inputs[1].op.inputs[0], roots)
    elif op.type in BINARY_ELEMENTWISE:
        a, b = op.inputs
        if b.shape.rank == 0:
            root = shape_root(a, roots)
        elif a.shape.rank == 0:
            root = shape_root(b, roots)
        elif shape_root(a, roots) is shape_root(b, roots):
            root = roots[a]
    roots[t] = root
    return root


def _unreduce(grad: Tensor, op: Operation, mean: bool = False) -> Tensor:
    """``grad`` (shaped like the reduction ``op``'s output) broadcast to its input;
    with ``mean``, also divided by the number of elements each output reduced."""
    x = op.inputs[0]
    inputs = [grad, _shape_tensor(x)] + list(op.inputs[1:2])
    return apply_op(
        "BroadcastReduced",
        inputs,
        {"keep_dims": op.attrs["keep_dims"], "shape_hint": x.shape, "mean": mean},
    )


def _reduction_axes(op: Operation) -> Tensor | None:
    return op.inputs[1] if len(op.inputs) > 1 else None


def _with_axes(op: Operation, grad: Tensor) -> list:
    """``[grad]`` plus ``None`` for the axes input, if the reduction has one."""
    return [grad] + [None] * (len(op.inputs) - 1)


def _sum_grad(op: Operation, grad: Tensor) -> list:
    return _with_axes(op, _unreduce(grad, op))


def _mean_grad(op: Operation, grad: Tensor) -> list:
    x, y = op.inputs[0], op.outputs[0]
    x_size, y_size = x.shape.num_elements(), y.shape.num_elements()
    if x_size is not None and y_size is not None:  # both fully defined
        count: Any = x_size // builtins.max(y_size, 1)
        return _with_axes(op, _unreduce(realdiv(grad, count), op))
    # Sizes known only at run time: one op divides by the count while it broadcasts
    # (instead of a chain of Shape/Prod/FloorDiv/Cast/RealDiv ops on tiny vectors).
    return _with_axes(op, _unreduce(grad, op, mean=True))


def _min_or_max_grad(op: Operation, grad: Tensor) -> list:
    """The gradient is shared equally among the elements equal to the extremum."""
    x, y = op.inputs[0], op.outputs[0]
    axes = _reduction_axes(op)
    keep = op.attrs["keep_dims"]
    hits = cast(equal(_unreduce(y, op), x), grad.dtype)
    count = _unreduce(reduce_sum(hits, axes, keepdims=keep), op)
    return _with_axes(op, multiply(realdiv(hits, count), _unreduce(grad, op)))


def _prod_grad(op: Operation, grad: Tensor) -> list:
    """d prod(x) / dx_i = prod of the others, handling zeros.

    With no zero in a reduced group it is ``p / x_i``; with one zero, the product of the
    nonzero elements at that zero and 0 elsewhere; with more, 0 everywhere.
    """
    x = op.inputs[0]
    axes = _reduction_axes(op)
    keep = op.attrs["keep_dims"]
    is_zero = equal(x, 0)
    zeros = zeros_like(x)
    safe_x = select(is_zero, ones_like(x), x)
    zero_count = _unreduce(reduce_sum(cast(is_zero, x.dtype), axes, keepdims=keep), op)
    nonzero_prod = _unreduce(reduce_prod(safe_x, axes, keepdims=keep), op)
    others = select(
        equal(zero_count, 0),
        realdiv(nonzero_prod, safe_x),
        select(logical_and(equal(zero_count, 1), is_zero), nonzero_prod, zeros),
    )
    return _with_axes(op, times_conj(_unreduce(grad, op), others))


_NUMERIC_REDUCE = (is_int_or_float, "integer or floating-point")
# (type, kernel, gradient, accepted dtypes, foldable)
_REDUCTIONS: list[tuple[str, Callable, Any, tuple, bool]] = [
    # Sum, Mean and Prod take complex tensors too (TF1); Prod's rule conjugates.
    ("Sum", reduction_kernel("sum", pass_dtype=True), _sum_grad, NUMBER, True),
    ("Mean", mean_kernel, _mean_grad, NUMBER, False),
    ("Prod", reduction_kernel("prod", pass_dtype=True), _prod_grad, NUMBER, True),
    ("Max", reduction_kernel("max"), _min_or_max_grad, _NUMERIC_REDUCE, True),
    ("Min", reduction_kernel("min"), _min_or_max_grad, _NUMERIC_REDUCE, True),
    ("All", reduction_kernel("all"), NOT_DIFF, (is_bool, "bool"), True),
    ("Any", reduction_kernel("any"), NOT_DIFF, (is_bool, "bool"), True),
]
for _type, _kernel, _grad, _dtypes, _fold in _REDUCTIONS:
    registry.register(
        registry.OpDef(_type, _reduction_rule(*_dtypes), _kernel, _grad, foldable=_fold)
    )


def _infer_broadcast_reduced(op: Operation) -> list:
    target = constant_shape(op.inputs[1])
    hint = op.attrs["shape_hint"]
    shape = hint if target is None else TensorShape(target).merge_with(hint)
    return [(op.inputs[0].dtype, shape)]


def _broadcast_reduced_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    keep = attrs["keep_dims"]
    mean = attrs.get("mean", False)
    read_axes, read_shape = AxesReader(), AxesReader()
    host = xp is np
    # The last (grad, target, result): the gradient of a loss is usually a constant
    # (``grad_ys``, bound once per plan) broadcast to the same shape every step, and the
    # result is a read-only view, so it is reused as is. Only read-only grads are
    # remembered (a fed array could change in place between steps); one tuple
    # assignment keeps this safe between threads.
    last: list = [(None, None, None)]

    def broadcast_reduced(grad: Any, shape: Any, axes: Any = None) -> Any:
        target = read_shape(shape)
        seen, seen_target, seen_view = last[0]
        if grad is seen and target == seen_target and axes is None:
            return seen_view
        given = grad
        if mean:
            count = math.prod(target) // builtins.max(grad.size, 1)
            grad = xp.true_divide(grad, builtins.max(count, 1)).astype(grad.dtype, copy=False)
        if axes is not None and not keep:
            kept = list(target)
            for a in read_axes(axes):
                kept[a] = 1
            grad = grad.reshape(kept)
        if grad.size == 1 and host:
            # The gradient of a whole-array reduction (the loss): a zero-stride view
            # of the one element, built directly (numpy's broadcast_to costs 3x more).
            view = xp.ndarray(target, grad.dtype, xp.ascontiguousarray(grad), 0, (0,) * len(target))
            view.flags.writeable = False
            if axes is None and not given.flags.writeable:
                last[0] = (given, target, view)
            return view
        # A read-only view, not a copy (kernels never write into their inputs).
        return xp.broadcast_to(grad, target)

    return broadcast_reduced


def _broadcast_reduced_grad(op: Operation, grad: Tensor) -> list:
    axes = op.inputs[2] if len(op.inputs) > 2 else None
    reduce = reduce_mean if op.attrs.get("mean", False) else reduce_sum
    return [reduce(grad, axes, keepdims=op.attrs["keep_dims"])] + [None] * (len(op.inputs) - 1)


# The adjoint of a reduction (like XLA's broadcast_in_dim): re-inserts the reduced
# dimensions (unless the reduction kept them) and broadcasts to the input's shape.
registry.register(
    registry.OpDef(
        "BroadcastReduced",
        _infer_broadcast_reduced,
        _broadcast_reduced_kernel,
        _broadcast_reduced_grad,
        foldable=True,
    )
)


def pick(new: Any, old: Any, new_name: str, old_name: str) -> Any:
    if old is not None:
        if new is not None:
            raise ValueError(f"Cannot specify both '{new_name}' and '{old_name}'.")
        return old
    return new


def axis_tensor(axis: Any) -> Tensor | None:
    if axis is None or isinstance(axis, Tensor):
        return axis
    value = np.asarray(axis)
    if value.size == 0:
        return constant(np.zeros(value.shape, np.int32))
    if value.dtype.kind not in "iu":
        return convert_to_tensor(axis)  # e.g. a Variable; the shape rule checks its dtype
    # Python ints give int32 (as in TF1); an int64 numpy value stays int64.
    is_int64 = isinstance(axis, (np.ndarray, np.generic)) and value.dtype == np.int64
    return constant(value, dtype=dtypes.int64 if is_int64 else dtypes.int32)


def _reduce(
    op_type: str,
    input_tensor: Any,
    axis: Any,
    keepdims: Any,
    name: str | None,
    reduction_indices: Any,
    keep_dims: Any,
) -> Tensor:
    axis = pick(axis, reduction_indices, "axis", "reduction_indices")
    keepdims = bool(pick(keepdims, keep_dims, "keepdims", "keep_dims"))
    x = convert_to_tensor(input_tensor)
    axes = axis_tensor(axis)
    inputs = [x] if axes is None else [x, axes]
    return apply_op(op_type, inputs, {"keep_dims": keepdims}, name=name)


_REDUCE_DOC = """Computes the {what} of elements across dimensions of a tensor.

    Reduces ``input_tensor`` along ``axis``: each reduced dimension is removed unless
    ``keepdims`` is true, in which case it is kept with length 1. With ``axis=None``
    all dimensions are reduced.

    Args:
        input_tensor: the tensor to reduce ({dtypes}).
        axis: an int, a list of ints (negative counts from the end), ``None``, or an
            int32/int64 tensor. A tensor whose value is unknown while building gives
            an output of unknown shape.
        keepdims: keep reduced dimensions with length 1.
        name: optional op name.
        reduction_indices: the deprecated name of ``axis``.
        keep_dims: the deprecated name of ``keepdims``.

    Raises:
        ValueError: an axis is out of range, or both spellings of an argument are given.
        TypeError: the input dtype is not supported.
    """


def reduce_sum(
    input_tensor: Any,
    axis: Any = None,
    keepdims: Any = None,
    name: str | None = None,
    reduction_indices: Any = None,
    keep_dims: Any = None,
) -> Tensor:
    return _reduce("Sum", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_mean(
    input_tensor: Any,
    axis: Any = None,
    keepdims: Any = None,
    name: str | None = None,
    reduction_indices: Any = None,
    keep_dims: Any = None,
) -> Tensor:
    return _reduce("Mean", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_max(
    input_tensor: Any,
    axis: Any = None,
    keepdims: Any = None,
    name: str | None = None,
    reduction_indices: Any = None,
    keep_dims: Any = None,
) -> Tensor:
    return _reduce("Max", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_min(
    input_tensor: Any,
    axis: Any = None,
    keepdims: Any = None,
    name: str | None = None,
    reduction_indices: Any = None,
    keep_dims: Any = None,
) -> Tensor:
    return _reduce("Min", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_prod(
    input_tensor: Any,
    axis: Any = None,
    keepdims: Any = None,
    name: str | None = None,
    reduction_indices: Any = None,
    keep_dims: Any = None,
) -> Tensor:
    return _reduce("Prod", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_all(
    input_tensor: Any,
    axis: Any = None,
    keepdims: Any = None,
    name: str | None = None,
    reduction_indices: Any = None,
    keep_dims: Any = None,
) -> Tensor:
    return _reduce("All", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_any(
    input_tensor: Any,
    axis: Any = None,
    keepdims: Any = None,
    name: str | None = None,
    reduction_indices: Any = None,
    keep_dims: Any = None,
) -> Tensor:
    return _reduce("Any", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


for _fn, _what, _dtypes_doc in [
    (reduce_sum, "sum", "integer or floating-point"),
    (reduce_mean, "mean", "integer or floating-point; integer means truncate"),
    (reduce_max, "maximum", "integer or floating-point"),
    (reduce_min, "minimum", "integer or floating-point"),
    (reduce_prod, "product", "integer or floating-point"),
    (reduce_all, "logical and", "bool"),
    (reduce_any, "logical or", "bool"),
]:
    _fn.__doc__ = _REDUCE_DOC.format(what=_what, dtypes=_dtypes_doc)


del _type, _kernel, _grad, _dtypes, _fold, _fn, _what, _dtypes_doc
