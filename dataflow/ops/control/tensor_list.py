"""Tensor lists: the ``variant`` values under ``tf.TensorArray`` (TF2's ``TensorList`` ops).

The approach: a list is an immutable value (a Python tuple) flowing through the graph
like any tensor, so a ``while_loop`` carries it as an ordinary loop variable and records
its per-iteration values for the gradient at the cost of a tuple of references. Every
op returns a new tuple and never changes its input (``SetItem`` copies the references,
not the arrays).

State kept in a value: one entry per element, an array or ``None`` for "not written".
Reading an unwritten element gives zeros when the element shape is fully known (TF1's
``TensorArray`` does the same, so a gradient can read elements nobody wrote) and an
``InvalidArgumentError`` otherwise.

Gradients: the gradient of a list is a list of the same length whose ``None`` entries
are zeros, so a gradient that touches one element costs one array, not a dense tensor
of the whole list; the ops that make and combine such gradients are in
``ops/control/tensor_list_grad.py``.

Example: ``l = FromTensor(x)`` (3 rows), ``y = GetItem(l, 1)``. The gradient of ``y``
with respect to ``l`` is the list ``(None, g, None)``; ``FromTensor``'s gradient turns
it back into ``[0, g, 0]``.
"""

from __future__ import annotations

from typing import Any

from ...framework import dtypes, errors, registry
from ...framework.graph import Operation, Tensor
from ...framework.tensor_shape import TensorShape, as_shape, scalar
from ..array.reorder import range_ as range_op
from ..array.shapes import shape
from ..build import apply_op, apply_op_n
from .tensor_list_grad import clear, gather_like, list_spec, padded, require_list, scatter_like

_NOT_DIFFERENTIABLE = registry.NOT_DIFFERENTIABLE


# --- shared kernel helpers ----------------------------------------------------------------
def _element_or_zeros(
    xp: Any, op_name: str, items: tuple, i: int, dtype: Any, shape: tuple | None
) -> Any:
    value = items[i]
    if value is not None:
        return value
    if shape is None:
        raise errors.InvalidArgumentError(
            None,
            op_name,
            f"{op_name}: could not read from TensorArray index {i}: it has not been written "
            "to and the element shape is not fully defined (set element_shape on the "
            "TensorArray to read unwritten elements as zeros)",
        )
    return xp.zeros(shape, dtype=dtype)


def _known_shape(items: tuple, static: TensorShape) -> tuple | None:
    """The element shape to use for unwritten elements: the static one when fully
    known, else that of any written element, else ``None`` (unknown)."""
    if static.is_fully_defined():
        return tuple(static.as_list())
    for value in items:
        if value is not None:
            return tuple(value.shape)
    return None


def _index(op_name: str, i: Any, length: int, resize: bool = False) -> int:
    i = int(i)
    if i < 0 or (i >= length and not resize):
        raise errors.InvalidArgumentError(
            None,
            op_name,
            f"{op_name}: index {i} is out of range for a TensorArray of size {length}"
            + ("" if resize else " (it is not dynamically sized)"),
        )
    return i


# --- TensorListReserve: a list of ``n`` unwritten elements ----------------------------------
def _infer_reserve(op: Operation) -> list:
    (n,) = op.inputs
    if not n.dtype.is_integer or not n.shape.is_compatible_with(scalar()):
        raise ValueError(f"TensorListReserve: the size must be a scalar integer, got {n!r}")
    return list_spec()


def _reserve_kernel(ctx: Any, attrs: dict) -> Any:
    op_name = ctx.op_name

    def reserve(n: Any) -> tuple:
        size = int(n)
        if size < 0:
            raise errors.InvalidArgumentError(
                None, op_name, f"{op_name}: a TensorArray's size must be >= 0, got {size}"
            )
        return (None,) * size

    return reserve


# --- TensorListFromTensor / TensorListStack ------------------------------------------------
def _infer_from_tensor(op: Operation) -> list:
    (t,) = op.inputs
    if t.shape.rank == 0:
        raise ValueError("TensorListFromTensor: unstack needs a tensor of rank >= 1, got a scalar")
    return list_spec()


def _from_tensor_kernel(ctx: Any, attrs: dict) -> Any:
    return lambda t: tuple(t[i] for i in range(t.shape[0]))


def _from_tensor_grad(op: Operation, grad: Tensor) -> list:
    (t,) = op.inputs
    return [gather_like(grad, _all_rows(t), t)]


def _infer_stack(op: Operation) -> list:
    require_list(op.inputs[0], "TensorListStack")
    n = op.attrs["num_elements"]
    return [(op.attrs["element_dtype"], TensorShape([n]).concatenate(op.attrs["element_shape"]))]


def _stack_kernel(ctx: Any, attrs: dict) -> Any:
    xp, op_name = ctx.xp, ctx.op_name
    dtype = attrs["element_dtype"].as_numpy_dtype
    static = attrs["element_shape"]

    def stack(items: tuple) -> Any:
        shape = _known_shape(items, static)
        if not items:
            if shape is None:
                raise errors.InvalidArgumentError(
                    None,
                    op_name,
                    f"{op_name}: cannot stack an empty TensorArray whose element shape is "
                    "not fully defined",
                )
            return xp.zeros((0,) + shape, dtype=dtype)
        rows = [_element_or_zeros(xp, op_name, items, i, dtype, shape) for i in range(len(items))]
        return _stack_rows(xp, op_name, rows)

    return stack


def _stack_rows(xp: Any, op_name: str, rows: list) -> Any:
    first = rows[0].shape
    for i, row in enumerate(rows):
        if row.shape != first:
            raise errors.InvalidArgumentError(
                None,
                op_name,
                f"{op_name}: TensorArray elements have different shapes ({tuple(first)} at "
                f"index 0, {tuple(row.shape)} at index {i}); use concat() instead of stack()",
            )
    return xp.stack(rows)


def _stack_grad(op: Operation, grad: Tensor) -> list:
    return [apply_op("TensorListFromTensor", [grad])]


# --- TensorListGetItem / TensorListSetItem -------------------------------------------------
def _infer_get_item(op: Operation) -> list:
    require_list(op.inputs[0], "TensorListGetItem")
    return [(op.attrs["element_dtype"], op.attrs["element_shape"])]


def _get_item_kernel(ctx: Any, attrs: dict) -> Any:
    xp, op_name = ctx.xp, ctx.op_name
    dtype = attrs["element_dtype"].as_numpy_dtype
    static = attrs["element_shape"]
    shape = tuple(static.as_list()) if static.is_fully_defined() else None

    def get_item(items: tuple, index: Any) -> Any:
        i = _index(op_name, index, len(items))
        return _element_or_zeros(xp, op_name, items, i, dtype, shape)

    return get_item


def _get_item_grad(op: Operation, grad: Tensor) -> list:
    items, index = op.inputs
    return [scatter_like(grad, index, items), None]


def _infer_set_item(op: Operation) -> list:
    require_list(op.inputs[0], "TensorListSetItem")
    return list_spec()


def _set_item_kernel(ctx: Any, attrs: dict) -> Any:
    op_name, resize = ctx.op_name, attrs["resize"]

    def set_item(items: tuple, index: Any, item: Any) -> tuple:
        i = _index(op_name, index, len(items), resize)
        items = padded(items, i + 1)
        return items[:i] + (item,) + items[i + 1 :]

    return set_item


def _set_item_grad(op: Operation, grad: Tensor) -> list:
    items, index, item = op.inputs
    return [clear(grad, index, items), None, gather_like(grad, index, item)]


# --- TensorListGather / TensorListScatter --------------------------------------------------
def _infer_gather(op: Operation) -> list:
    items, indices = op.inputs
    require_list(items, "TensorListGather")
    if indices.shape.rank not in (None, 1):
        raise ValueError(f"TensorListGather: indices must be a vector, got shape {indices.shape}")
    lead = indices.shape if indices.shape.rank == 1 else TensorShape([None])
    return [(op.attrs["element_dtype"], lead.concatenate(op.attrs["element_shape"]))]


def _gather_kernel(ctx: Any, attrs: dict) -> Any:
    xp, op_name = ctx.xp, ctx.op_name
    dtype = attrs["element_dtype"].as_numpy_dtype
    static = attrs["element_shape"]

    def gather(items: tuple, indices: Any) -> Any:
        shape = _known_shape(items, static)
        picks = [_index(op_name, i, len(items)) for i in indices.tolist()]
        if not picks:
            if shape is None:
                raise errors.InvalidArgumentError(
                    None, op_name, f"{op_name}: gathered no elements of unknown shape"
                )
            return xp.zeros((0,) + shape, dtype=dtype)
        rows = [_element_or_zeros(xp, op_name, items, i, dtype, shape) for i in picks]
        return _stack_rows(xp, op_name, rows)

    return gather


def _gather_grad(op: Operation, grad: Tensor) -> list:
    items, indices = op.inputs
    return [scatter_like(grad, indices, items), None]


def _infer_scatter(op: Operation) -> list:
    items, values, indices = op.inputs
    require_list(items, "TensorListScatter")
    if indices.shape.rank not in (None, 1):
        raise ValueError(f"TensorListScatter: indices must be a vector, got shape {indices.shape}")
    if values.shape.rank == 0:
        raise ValueError("TensorListScatter: the value must have rank >= 1, got a scalar")
    n, m = values.shape[:1], indices.shape
    if n.rank == 1 and m.rank == 1 and not n.is_compatible_with(m):
        raise ValueError(
            f"TensorListScatter: {m[0]} indices for a value with {n[0]} rows (shape {values.shape})"
        )
    return list_spec()


def _scatter_kernel(ctx: Any, attrs: dict) -> Any:
    op_name, resize = ctx.op_name, attrs["resize"]

    def scatter(items: tuple, values: Any, indices: Any) -> tuple:
        picks = indices.tolist()
        if len(picks) != values.shape[0]:
            raise errors.InvalidArgumentError(
                None,
                op_name,
                f"{op_name}: {len(picks)} indices for a value with {values.shape[0]} rows",
            )
        out = list(padded(items, max(picks, default=-1) + 1) if resize else items)
        for row, i in enumerate(picks):
            out[_index(op_name, i, len(out))] = values[row]
        return tuple(out)

    return scatter


def _scatter_grad(op: Operation, grad: Tensor) -> list:
    items, values, indices = op.inputs
    return [clear(grad, indices, items), gather_like(grad, indices, values), None]


# --- TensorListConcat / TensorListSplit -----------------------------------------------------
def _infer_concat(op: Operation) -> list:
    require_list(op.inputs[0], "TensorListConcat")
    inner = op.attrs["element_shape"]
    rest = TensorShape(None) if inner.rank is None else TensorShape([None]).concatenate(inner[1:])
    return [(op.attrs["element_dtype"], rest), (dtypes.int64, TensorShape([None]))]


def _concat_kernel(ctx: Any, attrs: dict) -> Any:
    xp, op_name = ctx.xp, ctx.op_name
    dtype = attrs["element_dtype"].as_numpy_dtype
    static = attrs["element_shape"]
    shape = tuple(static.as_list()) if static.is_fully_defined() else None

    def concat(items: tuple) -> tuple:
        if not items and shape is None:
            raise errors.InvalidArgumentError(
                None,
                op_name,
                f"{op_name}: cannot concat an empty TensorArray whose element shape is not "
                "fully defined",
            )
        rows = [_element_or_zeros(xp, op_name, items, i, dtype, shape) for i in range(len(items))]
        for i, row in enumerate(rows):
            if row.ndim == 0:
                raise errors.InvalidArgumentError(
                    None, op_name, f"{op_name}: element {i} is a scalar; concat needs rank >= 1"
                )
        lengths = xp.asarray([row.shape[0] for row in rows], dtype="int64")
        if not rows:
            return xp.zeros((0,) + (shape or (0,))[1:], dtype=dtype), lengths
        return xp.concatenate(rows), lengths

    return concat


def _concat_grad(op: Operation, grad: Tensor, _lengths_grad: Tensor | None = None) -> list:
    return [apply_op("TensorListSplit", [grad, op.outputs[1]])]


def _infer_split(op: Operation) -> list:
    value, lengths = op.inputs
    if value.shape.rank == 0:
        raise ValueError("TensorListSplit: the value must have rank >= 1, got a scalar")
    if not lengths.dtype.is_integer or lengths.shape.rank not in (None, 1):
        raise ValueError(f"TensorListSplit: lengths must be an integer vector, got {lengths!r}")
    return list_spec()


def _split_kernel(ctx: Any, attrs: dict) -> Any:
    op_name = ctx.op_name

    def split(value: Any, lengths: Any) -> tuple:
        sizes = [int(n) for n in lengths.tolist()]
        if any(n < 0 for n in sizes) or sum(sizes) != value.shape[0]:
            raise errors.InvalidArgumentError(
                None,
                op_name,
                f"{op_name}: lengths {sizes} must be >= 0 and sum to the value's first "
                f"dimension {value.shape[0]}",
            )
        out, start = [], 0
        for n in sizes:
            out.append(value[start : start + n])
            start += n
        return tuple(out)

    return split


def _split_grad(op: Operation, grad: Tensor) -> list:
    value, lengths = op.inputs
    return [apply_op("TensorListConcatLike", [grad, value, lengths]), None]


# --- TensorListLength ----------------------------------------------------------------------
def _infer_length(op: Operation) -> list:
    require_list(op.inputs[0], "TensorListLength")
    return [(dtypes.int32, scalar())]


def _length_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp
    return lambda items: xp.asarray(len(items), dtype="int32")


for _opdef in (
    registry.OpDef("TensorListReserve", _infer_reserve, _reserve_kernel, _NOT_DIFFERENTIABLE),
    registry.OpDef(
        "TensorListFromTensor", _infer_from_tensor, _from_tensor_kernel, _from_tensor_grad
    ),
    registry.OpDef("TensorListStack", _infer_stack, _stack_kernel, _stack_grad),
    registry.OpDef("TensorListGetItem", _infer_get_item, _get_item_kernel, _get_item_grad),
    registry.OpDef("TensorListSetItem", _infer_set_item, _set_item_kernel, _set_item_grad),
    registry.OpDef("TensorListGather", _infer_gather, _gather_kernel, _gather_grad),
    registry.OpDef("TensorListScatter", _infer_scatter, _scatter_kernel, _scatter_grad),
    registry.OpDef("TensorListConcat", _infer_concat, _concat_kernel, _concat_grad),
    registry.OpDef("TensorListSplit", _infer_split, _split_kernel, _split_grad),
    registry.OpDef("TensorListLength", _infer_length, _length_kernel, _NOT_DIFFERENTIABLE),
):
    registry.register(_opdef)


# --- builders ------------------------------------------------------------------------------
def _all_rows(t: Tensor) -> Tensor:
    return range_op(shape(t, out_type=dtypes.int32)[0])


def reserve(size: Any, element_dtype: Any, element_shape: Any, name: str | None = None) -> Tensor:
    attrs = {
        "element_dtype": dtypes.as_dtype(element_dtype),
        "element_shape": as_shape(element_shape),
    }
    return apply_op("TensorListReserve", [size], attrs, name=name, dtype_hint=dtypes.int32)


def stack(
    items: Tensor,
    element_dtype: Any,
    element_shape: TensorShape,
    num_elements: int | None,
    name: str | None = None,
) -> Tensor:
    attrs = {
        "element_dtype": element_dtype,
        "element_shape": element_shape,
        "num_elements": num_elements,
    }
    return apply_op("TensorListStack", [items], attrs, name=name)


def get_item(
    items: Tensor,
    index: Any,
    element_dtype: Any,
    element_shape: TensorShape,
    name: str | None = None,
) -> Tensor:
    attrs = {"element_dtype": element_dtype, "element_shape": element_shape}
    return apply_op("TensorListGetItem", [items, index], attrs, name=name, dtype_hint=dtypes.int32)


def set_item(
    items: Tensor, index: Any, item: Tensor, resize: bool, name: str | None = None
) -> Tensor:
    return apply_op("TensorListSetItem", [items, index, item], {"resize": resize}, name=name)


def gather(
    items: Tensor,
    indices: Any,
    element_dtype: Any,
    element_shape: TensorShape,
    name: str | None = None,
) -> Tensor:
    attrs = {"element_dtype": element_dtype, "element_shape": element_shape}
    return apply_op("TensorListGather", [items, indices], attrs, name=name, dtype_hint=dtypes.int32)


def scatter(
    items: Tensor, values: Tensor, indices: Any, resize: bool, name: str | None = None
) -> Tensor:
    return apply_op("TensorListScatter", [items, values, indices], {"resize": resize}, name=name)


def concat(
    items: Tensor, element_dtype: Any, element_shape: TensorShape, name: str | None = None
) -> Tensor:
    attrs = {"element_dtype": element_dtype, "element_shape": element_shape}
    return apply_op_n("TensorListConcat", [items], attrs, name=name).outputs[0]


def split(value: Tensor, lengths: Any, name: str | None = None) -> Tensor:
    return apply_op("TensorListSplit", [value, lengths], name=name, dtype_hint=dtypes.int64)


def length(items: Tensor, name: str | None = None) -> Tensor:
    return apply_op("TensorListLength", [items], name=name)
