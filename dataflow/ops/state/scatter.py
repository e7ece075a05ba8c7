"""The scatter updates of a variable beyond ``scatter_update``/``scatter_add``
(``resource_ops``): ``ResourceScatterSub``/``Mul``/``Div``/``Max``/``Min`` on rows, and
``ResourceScatterNdUpdate``/``Add``/``Sub`` on slices named by ``indices[..., :k]``, with
the module-level ``tf.scatter_*``/``tf.scatter_nd_*`` functions that build them, and
``batch_scatter_update`` over ``scatter_nd_update``.

Each kernel checks every index before writing (an in-place write cannot be undone), then
combines ``updates`` into the variable's buffer through ``in_place_updater`` with
numpy's unbuffered ``ufunc.at``, so repeated indices all take part, one after another,
as TF's kernels apply them. Integer ``Div`` truncates toward zero as TF's C++ does:
repeated divisors are first multiplied together (``trunc(trunc(a/b)/c) ==
trunc(a/(b*c))``). Like TF's, these updates have no gradient.
"""

from __future__ import annotations

import builtins
from typing import Any

from ...framework import errors, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor, get_default_graph
from ...framework.scopes import name_scope
from ...framework.tensor_shape import TensorShape
from ..array import broadcast_to, concat, expand_dims, range_, reshape, shape
from .resource_ops import check_rows, in_place_updater
from .variables import Variable

# op type -> (ufunc combining updates into the variable or None for a write, nd: bool)
_KINDS = {
    "ResourceScatterSub": ("subtract", False),
    "ResourceScatterMul": ("multiply", False),
    "ResourceScatterDiv": ("divide", False),
    "ResourceScatterMax": ("maximum", False),
    "ResourceScatterMin": ("minimum", False),
    "ResourceScatterNdUpdate": (None, True),
    "ResourceScatterNdAdd": ("add", True),
    "ResourceScatterNdSub": ("subtract", True),
}


def _infer(op: Operation) -> list:
    indices, updates = op.inputs[1], op.inputs[2]
    dtype, shape = op.attrs["dtype"], op.attrs["shape"]
    if indices.dtype.name not in ("int32", "int64"):
        raise TypeError(f"indices of '{op.type}' must be int32 or int64, got {indices.dtype.name}")
    if updates.dtype != dtype:
        raise TypeError(
            f"updates of '{op.type}' have dtype {updates.dtype.name}, but the variable has "
            f"dtype {dtype.name}"
        )
    if _KINDS[op.type][1]:
        dims, idims = shape.as_tuple(), indices.shape.as_tuple()
        if dims is None or idims is None or not idims or idims[-1] is None:
            return [(dtype, shape)]
        k = idims[-1]
        if k > len(dims):
            raise ValueError(
                f"indices.shape[-1] of '{op.type}' must be <= the variable's rank, but saw "
                f"indices shape {indices.shape} and variable shape {shape}"
            )
        expected = TensorShape(list(idims[:-1]) + list(dims[k:]))
    elif shape.rank is None or indices.shape.rank is None:
        return [(dtype, shape)]
    else:
        expected = indices.shape.concatenate(shape[1:])
    if not updates.shape.is_compatible_with(expected):
        raise ValueError(f"updates of '{op.type}' must have shape {expected}, got {updates.shape}")
    return [(dtype, shape)]


def _kernel(op_type: str) -> Any:
    combine, nd = _KINDS[op_type]

    def factory(ctx: Any, attrs: dict) -> Any:
        xp = ctx.xp
        run, _ = in_place_updater(ctx)

        def scatter(handle: str, indices: Any, updates: Any) -> Any:
            def compute(olds: list, outs: list) -> None:
                old, out = olds[0], outs[0]
                where = _where(handle, indices, old.shape, nd)
                want = tuple(indices.shape[:-1] if nd else indices.shape)
                want += tuple(old.shape[len(where) if nd else 1 :])
                if tuple(updates.shape) != want:
                    raise errors.InvalidArgumentError(
                        None,
                        None,
                        f"{op_type} of variable '{handle}': updates of shape "
                        f"{tuple(updates.shape)}, but the indices and the variable's "
                        f"shape need {want}",
                    )
                if out is not old:
                    out[...] = old
                if combine is None:
                    out[where] = updates
                elif combine == "divide" and out.dtype.kind in "iu":
                    divisor = xp.ones_like(out)
                    xp.multiply.at(divisor, where, updates)
                    quotient = xp.abs(out) // xp.abs(divisor)
                    out[...] = xp.where((out < 0) != (divisor < 0), -quotient, quotient)
                else:
                    getattr(xp, combine).at(out, where, updates)

            return run((handle,), compute)[0]

        return scatter

    return factory


def _where(handle: str, indices: Any, shape: tuple, nd: bool) -> Any:
    """The numpy index of the updated rows (or slices, for ``nd``), checked first."""
    if not nd:
        check_rows(handle, indices, shape[0] if shape else 0)
        return indices
    k = indices.shape[-1]
    if k > len(shape):
        raise errors.InvalidArgumentError(
            None, None, f"indices.shape[-1] = {k} is more than the rank of variable '{handle}'"
        )
    flat = indices.reshape(-1, k)
    for i in builtins.range(k):
        check_rows(handle, flat[:, i], shape[i])
    return builtins.tuple(indices[..., i] for i in builtins.range(k))


for _type in _KINDS:
    registry.register(
        registry.OpDef(
            _type,
            _infer,
            _kernel(_type),
            registry.NOT_DIFFERENTIABLE,
            stateful=True,
            may_block=False,
        )
    )


def _scatter(
    op_type: str, what: str, ref: Any, indices: Any, updates: Any, name: str | None
) -> Tensor:
    if not isinstance(ref, Variable):
        raise TypeError(f"{what} needs a tf.Variable as 'ref', got {type(ref).__name__}")
    graph = get_default_graph()
    with graph.colocate_with(ref.handle.op):
        inputs = [
            ref.handle,
            convert_to_tensor(indices),
            convert_to_tensor(updates, dtype=ref.dtype),
        ]
        attrs = {"dtype": ref.dtype, "shape": ref.shape}
        return graph.create_op(op_type, inputs, attrs, name=name).outputs[0]


def scatter_sub(
    ref: Variable, indices: Any, updates: Any, use_locking: bool = False, name: str | None = None
) -> Tensor:
    """Subtracts ``updates`` from ``ref[indices]`` (repeated indices all subtract);
    returns the new value.

    Raises:
        TypeError: ``ref`` is not a variable, or dtypes that do not match.
        ValueError: ``updates`` not of shape ``indices.shape + ref.shape[1:]``.
        InvalidArgumentError: an index outside ``ref``, when the step runs.
    """
    return _scatter("ResourceScatterSub", "scatter_sub", ref, indices, updates, name)


def scatter_mul(
    ref: Variable, indices: Any, updates: Any, use_locking: bool = False, name: str | None = None
) -> Tensor:
    """Multiplies ``ref[indices]`` by ``updates``; as ``scatter_sub`` otherwise."""
    return _scatter("ResourceScatterMul", "scatter_mul", ref, indices, updates, name)


def scatter_div(
    ref: Variable, indices: Any, updates: Any, use_locking: bool = False, name: str | None = None
) -> Tensor:
    """Divides ``ref[indices]`` by ``updates`` (integers truncate toward zero); as
    ``scatter_sub`` otherwise."""
    return _scatter("ResourceScatterDiv", "scatter_div", ref, indices, updates, name)


def scatter_max(
    ref: Variable, indices: Any, updates: Any, use_locking: bool = False, name: str | None = None
) -> Tensor:
    """``ref[indices] = maximum(ref[indices], updates)``; as ``scatter_sub`` otherwise."""
    return _scatter("ResourceScatterMax", "scatter_max", ref, indices, updates, name)


def scatter_min(
    ref: Variable, indices: Any, updates: Any, use_locking: bool = False, name: str | None = None
) -> Tensor:
    """``ref[indices] = minimum(ref[indices], updates)``; as ``scatter_sub`` otherwise."""
    return _scatter("ResourceScatterMin", "scatter_min", ref, indices, updates, name)


def scatter_nd_update(
    ref: Variable, indices: Any, updates: Any, use_locking: bool = True, name: str | None = None
) -> Tensor:
    """Writes ``updates`` into the slices of ``ref`` that the rows of ``indices``
    (``[..., k]``) name; returns the new value.

    Raises:
        TypeError: ``ref`` is not a variable, or dtypes that do not match.
        ValueError: ``updates`` not of shape ``indices.shape[:-1] + ref.shape[k:]``.
        InvalidArgumentError: an index outside ``ref``, when the step runs.
    """
    return _scatter("ResourceScatterNdUpdate", "scatter_nd_update", ref, indices, updates, name)


def scatter_nd_add(
    ref: Variable, indices: Any, updates: Any, use_locking: bool = False, name: str | None = None
) -> Tensor:
    """Adds ``updates`` into the slices of ``ref`` at ``indices`` (repeats add up); as
    ``scatter_nd_update`` otherwise."""
    return _scatter("ResourceScatterNdAdd", "scatter_nd_add", ref, indices, updates, name)


def scatter_nd_sub(
    ref: Variable, indices: Any, updates: Any, use_locking: bool = False, name: str | None = None
) -> Tensor:
    """Subtracts ``updates`` from the slices of ``ref`` at ``indices``; as
    ``scatter_nd_update`` otherwise."""
    return _scatter("ResourceScatterNdSub", "scatter_nd_sub", ref, indices, updates, name)


def batch_scatter_update(
    ref: Variable, indices: Any, updates: Any, use_locking: bool = True, name: str | None = None
) -> Tensor:
    """``ref[i..., indices[i..., j], ...] = updates[i..., j, ...]``: a ``scatter_update``
    per batch element (the leading ``rank(indices) - 1`` dimensions), one
    ``scatter_nd_update`` over indices extended by their batch coordinates, as TF1 builds it.

    Raises:
        ValueError: ``indices`` of unknown rank.
    """
    with name_scope(name, "BatchScatterUpdate", [indices, updates]):
        index = convert_to_tensor(indices)
        rank = index.shape.rank
        if rank is None:
            raise ValueError("batch_scatter_update needs indices of known rank")
        dims = shape(index, out_type=index.dtype)
        coordinates = []
        for d in builtins.range(rank - 1):
            along = reshape(range_(dims[d]), [-1 if i == d else 1 for i in builtins.range(rank)])
            coordinates.append(expand_dims(broadcast_to(along, dims), -1))
        nd = concat(coordinates + [expand_dims(index, -1)], -1)
        return scatter_nd_update(ref, nd, updates, use_locking)
