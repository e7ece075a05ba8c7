"""The resource-variable op records: ``VarHandleOp``, ``ReadVariableOp``, the assign and
scatter updates and ``VarIsInitializedOp``, each with its shape rule, kernel and gradient.

How a value lives in the device's ``ResourceStore`` and why updates copy or write in
place is described in ``state/variables.py``, whose ``Variable`` builds these ops.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...framework import dtypes, errors, registry
from ...framework.graph import Operation, Tensor
from ...framework.kernel_context import Folded
from ...framework.tensor_shape import TensorShape, broadcast_shapes, scalar
from .buffer_pool import BufferPool


# --- kernels ----------------------------------------------------------------------------
def _freeze(ctx: Any, value: Any) -> Any:
    """A buffer the store may keep: read-only on numpy (others get copies on fetch)."""
    if ctx.xp is np:
        value = np.asarray(value)
        value.flags.writeable = False
    return value


def _handle_kernel(ctx: Any, attrs: dict) -> Folded:
    return Folded(attrs["shared_name"])


def _check_shape(name: str, want: TensorShape, value: Any, what: str) -> None:
    dims = want.as_tuple()
    if (
        dims is not None
        and len(dims) == len(value.shape)
        and all(d is None or d == g for d, g in zip(dims, value.shape))
    ):
        return
    if dims is None:
        return
    raise errors.InvalidArgumentError(
        None,
        None,
        f"{what} of variable '{name}' has shape {tuple(value.shape)}, but the "
        f"variable has shape {want}",
    )


def _read_kernel(ctx: Any, attrs: dict) -> Any:
    return ctx.resources.read


def _token(ctx: Any, op_name: str) -> tuple | None:
    """``(step, op)``: lets a store ignore an update a cluster runs twice (None when the
    runtime has no step ids, as in the embedded session)."""
    step = ctx.step()
    return (step, op_name) if step else None


def _assign_kernel(ctx: Any, attrs: dict) -> Any:
    store, xp, op_name = ctx.resources, ctx.xp, ctx.op_name
    dtype = attrs["dtype"].as_numpy_dtype
    shape = attrs["shape"] if attrs.get("validate_shape", True) else TensorShape(None)

    def assign(handle: str, value: Any) -> Any:
        # Copy: the value may alias a feed or another tensor the store must not share.
        value = xp.array(value, dtype=dtype, copy=True)
        _check_shape(handle, shape, value, "Assigned value")
        return store.write(handle, _freeze(ctx, value), _token(ctx, op_name))

    return assign


def _broadcasts_to(shape: tuple, target: tuple) -> bool:
    """Whether an array of ``shape`` combines with one of ``target`` into ``target``."""
    return len(shape) <= len(target) and all(
        d in (1, t) for d, t in zip(reversed(shape), reversed(target))
    )


def in_place_updater(ctx: Any) -> tuple[Callable, BufferPool]:
    """For an update kernel: ``run(names, compute) -> new values``, ``compute`` applied
    through ``ResourceStore.update_in_place`` with the kernel's buffer pool (returned
    too, for its temporaries) and idempotency token."""
    store, op_name = ctx.resources, ctx.op_name
    pool = BufferPool(ctx.xp)

    def run(names: tuple[str, ...], compute: Callable[[list, list], None]) -> list:
        return store.update_in_place(names, compute, pool.like, pool.retire, _token(ctx, op_name))

    return run, pool


def _update_kernel(combine_name: str) -> Any:
    def factory(ctx: Any, attrs: dict) -> Any:
        combine = getattr(ctx.xp, combine_name)
        run, _ = in_place_updater(ctx)

        def update(handle: str, delta: Any) -> Any:
            def compute(olds: list, outs: list) -> None:
                old = olds[0]
                if delta.shape != old.shape and not _broadcasts_to(
                    tuple(delta.shape), tuple(old.shape)
                ):
                    raise errors.InvalidArgumentError(
                        None,
                        None,
                        f"Update of variable '{handle}' with shape "
                        f"{tuple(old.shape)} by a value of shape {tuple(delta.shape)} "
                        "would change its shape",
                    )
                combine(old, delta, out=outs[0])

            return run((handle,), compute)[0]

        return update

    return factory


def _scatter_kernel(mode: str) -> Any:
    """Writes rows of the variable, in place when the store is the buffer's only holder
    (an embedding update touches its rows, not a copy of the whole table), else into a
    copy that replaces it (``update_in_place``). Duplicate rows add up in ``add`` mode;
    in ``update`` mode the last write wins, as numpy's does."""

    def factory(ctx: Any, attrs: dict) -> Any:
        xp = ctx.xp
        run, _ = in_place_updater(ctx)

        def scatter(handle: str, indices: Any, updates: Any) -> Any:
            def compute(olds: list, outs: list) -> None:
                old, out = olds[0], outs[0]
                check_rows(handle, indices, old.shape[0] if old.ndim else 0)
                want = tuple(indices.shape) + tuple(old.shape[1:])
                if tuple(updates.shape) != want and not _broadcasts_to(tuple(updates.shape), want):
                    raise errors.InvalidArgumentError(
                        None,
                        None,
                        f"Scatter of variable '{handle}': updates of shape "
                        f"{tuple(updates.shape)} do not match indices.shape + "
                        f"variable.shape[1:] = {want}",
                    )
                if out is not old:
                    out[...] = old
                if mode == "update":
                    out[indices] = updates
                else:
                    xp.add.at(out, indices, updates)  # cupy has add.at too (v13+)

            return run((handle,), compute)[0]

        return scatter

    return factory


def check_rows(name: str, indices: Any, rows: int) -> None:
    """TF refuses row indices outside ``[0, rows)`` (numpy would wrap negative ones);
    checked before any row is written, since an in-place write cannot be undone."""
    if indices.size and (int(indices.min()) < 0 or int(indices.max()) >= rows):
        bad = indices[(indices < 0) | (indices >= rows)].reshape(-1)[0]
        raise errors.InvalidArgumentError(
            None, None, f"indices value {bad} is not in [0, {rows}) for variable '{name}'"
        )


def _is_initialized_kernel(ctx: Any, attrs: dict) -> Any:
    store, xp = ctx.resources, ctx.xp
    return lambda handle: xp.asarray(store.is_initialized(handle))


# --- shape rules --------------------------------------------------------------------------
def _infer_handle(op: Operation) -> list:
    return [(dtypes.resource, scalar())]


def _infer_read(op: Operation) -> list:
    return [(op.attrs["dtype"], op.attrs["shape"])]


def _infer_assign(op: Operation) -> list:
    value = op.inputs[1]
    dtype, shape = op.attrs["dtype"], op.attrs["shape"]
    if value.dtype != dtype:
        raise TypeError(
            f"cannot assign a value of dtype {value.dtype.name} to a variable of dtype {dtype.name}"
        )
    if op.attrs.get("validate_shape", True) and not shape.is_compatible_with(value.shape):
        raise ValueError(
            f"cannot assign a value of shape {value.shape} to a variable of shape {shape}"
        )
    return [(dtype, shape if op.attrs.get("validate_shape", True) else value.shape)]


def _infer_update(op: Operation) -> list:
    delta = op.inputs[1]
    dtype, shape = op.attrs["dtype"], op.attrs["shape"]
    if delta.dtype != dtype:
        raise TypeError(
            f"cannot update a variable of dtype {dtype.name} with a value of "
            f"dtype {delta.dtype.name}"
        )
    if delta.shape.rank is not None and shape.rank is not None:
        try:
            out = broadcast_shapes(shape, delta.shape)
        except ValueError:
            out = None
        if out is None or not out.is_compatible_with(shape):
            raise ValueError(
                f"cannot update a variable of shape {shape} with a value of shape {delta.shape}"
            )
    return [(dtype, shape)]


def _infer_scatter(op: Operation) -> list:
    indices, updates = op.inputs[1], op.inputs[2]
    if not indices.dtype.is_integer:
        raise TypeError(f"scatter indices must be integers, got {indices.dtype.name}")
    if updates.dtype != op.attrs["dtype"]:
        raise TypeError(
            f"scatter updates of dtype {updates.dtype.name} do not match the "
            f"variable dtype {op.attrs['dtype'].name}"
        )
    shape = op.attrs["shape"]
    if shape.rank is not None and indices.shape.rank is not None:
        expected = indices.shape.concatenate(shape[1:])
        if not updates.shape.is_compatible_with(expected):
            raise ValueError(f"scatter updates must have shape {expected}, got {updates.shape}")
    return [(op.attrs["dtype"], shape)]


def _infer_is_initialized(op: Operation) -> list:
    return [(dtypes.bool, scalar())]


def _read_grad(op: Operation, grad: Tensor) -> list:
    return [grad]


registry.register(
    registry.OpDef(
        "VarHandleOp",
        _infer_handle,
        _handle_kernel,
        registry.NOT_DIFFERENTIABLE,
        stateful=True,
        may_block=False,
        effectful=False,
        plumbing=True,
        creates_resource=True,
    )
)
registry.register(
    registry.OpDef(
        "ReadVariableOp", _infer_read, _read_kernel, _read_grad, stateful=True, may_block=False
    )
)
registry.register(
    registry.OpDef(
        "AssignVariableOp",
        _infer_assign,
        _assign_kernel,
        registry.NOT_DIFFERENTIABLE,
        stateful=True,
        may_block=False,
    )
)
registry.register(
    registry.OpDef(
        "AssignAddVariableOp",
        _infer_update,
        _update_kernel("add"),
        registry.NOT_DIFFERENTIABLE,
        stateful=True,
        may_block=False,
    )
)
registry.register(
    registry.OpDef(
        "AssignSubVariableOp",
        _infer_update,
        _update_kernel("subtract"),
        registry.NOT_DIFFERENTIABLE,
        stateful=True,
        may_block=False,
    )
)
registry.register(
    registry.OpDef(
        "ResourceScatterUpdate",
        _infer_scatter,
        _scatter_kernel("update"),
        registry.NOT_DIFFERENTIABLE,
        stateful=True,
        may_block=False,
    )
)
registry.register(
    registry.OpDef(
        "ResourceScatterAdd",
        _infer_scatter,
        _scatter_kernel("add"),
        registry.NOT_DIFFERENTIABLE,
        stateful=True,
        may_block=False,
    )
)
registry.register(
    registry.OpDef(
        "VarIsInitializedOp",
        _infer_is_initialized,
        _is_initialized_kernel,
        registry.NOT_DIFFERENTIABLE,
        stateful=True,
        may_block=False,
    )
)
