"""Fused updates of the Adadelta, FTRL and proximal optimizers (TF's ``training_ops``),
built like those of ``training_ops.py`` (same layouts, shape rule and in-place store
update). Formulas in TF1's order of operations::

    Adadelta         accum = accum * rho + grad ** 2 * (1 - rho)
                     update = sqrt(accum_update + epsilon) / sqrt(accum + epsilon) * grad
                     accum_update = accum_update * rho + update ** 2 * (1 - rho)
                     var -= update * lr
    ProximalGD       prox = var - alpha * grad
                     var = sign(prox) * max(|prox| - alpha * l1, 0) / (1 + alpha * l2)
                     (l1 = 0: var = prox / (1 + alpha * l2))
    ProximalAdagrad  accum += grad ** 2; alpha = lr / sqrt(accum); then as ProximalGD
    AdagradDA        grad_accum += grad; squared_accum += grad ** 2
                     denom = l2 * step * lr + sqrt(squared_accum)
                     var = sign(-grad_accum) * max(|grad_accum| - l1 * step, 0) / denom * lr
                     (l1 = 0: var = -grad_accum * lr / denom; step: the global step)
    Ftrl             new_accum = accum + grad ** 2
                     linear += grad' - (new_accum ** -p - accum ** -p) / lr * var
                     var = (clip(linear, -l1, l1) - linear)
                           / (new_accum ** -p / lr + 2 * l2)
                     accum = new_accum
                     (p = learning_rate_power; grad' = grad + 2 * l2_shrinkage * var)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...framework import registry
from ...framework.graph import Operation, Tensor
from .training_ops import (
    apply_update,
    check_grad,
    handles,
    infer_apply,
    rows_updater,
    scalars,
    sparse_type,
)


def _adadelta_kernel(ctx: Any, attrs: dict) -> Callable:
    xp, op_name = ctx.xp, ctx.op_name
    run, _ = rows_updater(ctx)

    def apply(
        var: str,
        accum: str,
        accum_update: str,
        lr: Any,
        rho: Any,
        epsilon: Any,
        grad: Any,
        indices: Any = None,
    ) -> None:
        lr, rho, epsilon = scalars(lr, rho, epsilon)

        def compute(olds: list, outs: list) -> None:
            (old, acc_old, upd_old), (new, acc, upd) = olds, outs
            check_grad(op_name, old, grad)
            accumulated = acc_old * rho + xp.square(grad) * (1 - rho)
            update = xp.sqrt(upd_old + epsilon) / xp.sqrt(accumulated + epsilon) * grad
            upd[...] = upd_old * rho + xp.square(update) * (1 - rho)
            acc[...] = accumulated
            new[...] = old - update * lr

        run((var, accum, accum_update), compute, indices)

    return apply


def _shrink(xp: Any, prox: Any, alpha: Any, l1: Any, l2: Any) -> Any:
    """The proximal step: soft-threshold by ``alpha * l1``, then scale by ``l2``."""
    if l1 > 0:
        return xp.sign(prox) * xp.maximum(xp.abs(prox) - alpha * l1, 0) / (1 + alpha * l2)
    return prox / (1 + alpha * l2)


def _proximal_gd_kernel(ctx: Any, attrs: dict) -> Callable:
    xp, op_name = ctx.xp, ctx.op_name
    run, _ = rows_updater(ctx)

    def apply(var: str, alpha: Any, l1: Any, l2: Any, delta: Any, indices: Any = None) -> None:
        alpha, l1, l2 = scalars(alpha, l1, l2)

        def compute(olds: list, outs: list) -> None:
            check_grad(op_name, olds[0], delta)
            outs[0][...] = _shrink(xp, olds[0] - alpha * delta, alpha, l1, l2)

        run((var,), compute, indices)

    return apply


def _proximal_adagrad_kernel(ctx: Any, attrs: dict) -> Callable:
    xp, op_name = ctx.xp, ctx.op_name
    run, _ = rows_updater(ctx)

    def apply(
        var: str, accum: str, lr: Any, l1: Any, l2: Any, grad: Any, indices: Any = None
    ) -> None:
        lr, l1, l2 = scalars(lr, l1, l2)

        def compute(olds: list, outs: list) -> None:
            (old, acc_old), (new, acc) = olds, outs
            check_grad(op_name, old, grad)
            accumulated = acc_old + xp.square(grad)
            alpha = lr / xp.sqrt(accumulated)
            new[...] = _shrink(xp, old - grad * alpha, alpha, l1, l2)
            acc[...] = accumulated

        run((var, accum), compute, indices)

    return apply


def _adagrad_da_kernel(ctx: Any, attrs: dict) -> Callable:
    xp, op_name = ctx.xp, ctx.op_name
    run, _ = rows_updater(ctx)

    def apply(
        var: str,
        grad_accum: str,
        squared_accum: str,
        grad: Any,
        lr: Any,
        l1: Any,
        l2: Any,
        step: Any,
        indices: Any = None,
    ) -> None:
        lr, l1, l2 = scalars(lr, l1, l2)
        step = step[()].astype(lr.dtype)  # TF's kernel multiplies in the variable's type

        def compute(olds: list, outs: list) -> None:
            (old, acc_old, sq_old), (new, acc, sq) = olds, outs
            check_grad(op_name, old, grad)
            accumulated = acc_old + grad
            squared = sq_old + xp.square(grad)
            denom = l2 * step * lr + xp.sqrt(squared)
            if l1 > 0:
                shrunk = xp.maximum(xp.abs(accumulated) - l1 * step, 0)
                new[...] = xp.sign(-accumulated) * shrunk / denom * lr
            else:
                new[...] = -accumulated * lr / denom
            acc[...] = accumulated
            sq[...] = squared

        run((var, grad_accum, squared_accum), compute, indices)

    return apply


def _ftrl_kernel(ctx: Any, attrs: dict) -> Callable:
    xp, op_name = ctx.xp, ctx.op_name
    run, _ = rows_updater(ctx)

    def apply(
        var: str,
        accum: str,
        linear: str,
        grad: Any,
        lr: Any,
        l1: Any,
        l2: Any,
        l2_shrinkage: Any,
        lr_power: Any,
        indices: Any = None,
    ) -> None:
        lr, l1, l2, l2_shrinkage, lr_power = scalars(lr, l1, l2, l2_shrinkage, lr_power)

        def power(a: Any) -> Any:
            return xp.sqrt(a) if lr_power == -0.5 else a ** (-lr_power)

        def compute(olds: list, outs: list) -> None:
            (old, acc_old, lin_old), (new, acc, lin) = olds, outs
            check_grad(op_name, old, grad)
            shrunk = grad + 2 * l2_shrinkage * old if l2_shrinkage > 0 else grad
            accumulated = acc_old + xp.square(grad)
            linear_new = lin_old + shrunk - (power(accumulated) - power(acc_old)) / lr * old
            x = xp.clip(linear_new, -l1, l1) - linear_new
            new[...] = x / (power(accumulated) / lr + 2 * l2)
            lin[...] = linear_new
            acc[...] = accumulated

        run((var, accum, linear), compute, indices)

    return apply


_LAYOUTS = {
    "ResourceApplyAdadelta": ("hhhsssg", _adadelta_kernel),
    "ResourceApplyProximalGradientDescent": ("hsssg", _proximal_gd_kernel),
    "ResourceApplyProximalAdagrad": ("hhsssg", _proximal_adagrad_kernel),
    "ResourceApplyFtrlV2": ("hhhgsssss", _ftrl_kernel),
    "ResourceApplyAdagradDA": ("hhhgsssn", _adagrad_da_kernel),
}
for _type, (_layout, _kernel) in _LAYOUTS.items():
    # Each dense update and its sparse form (TF's ``ResourceSparseApply*``): the same
    # kernel, given the rows' indices as its last input (``training_ops.rows_updater``).
    for _sparse in (False, True):
        registry.register(
            registry.OpDef(
                sparse_type(_type) if _sparse else _type,
                infer_apply(_layout + "i" if _sparse else _layout),
                _kernel,
                registry.NOT_DIFFERENTIABLE,
                stateful=True,
            )
        )


def resource_apply_adadelta(
    var: Any,
    accum: Any,
    accum_update: Any,
    lr: Tensor,
    rho: Tensor,
    epsilon: Tensor,
    grad: Tensor,
    name: str | None = None,
    indices: Tensor | None = None,
) -> Operation:
    """One Adadelta step (see the module docstring); of the rows ``indices`` if given."""
    inputs = [*handles([accum, accum_update]), lr, rho, epsilon, grad]
    return apply_update("ResourceApplyAdadelta", var, inputs, name, indices=indices)


def resource_apply_proximal_gradient_descent(
    var: Any,
    alpha: Tensor,
    l1: Tensor,
    l2: Tensor,
    delta: Tensor,
    name: str | None = None,
    indices: Tensor | None = None,
) -> Operation:
    """One proximal gradient-descent step; of the rows ``indices`` if given."""
    inputs = [alpha, l1, l2, delta]
    return apply_update("ResourceApplyProximalGradientDescent", var, inputs, name, indices=indices)


def resource_apply_proximal_adagrad(
    var: Any,
    accum: Any,
    lr: Tensor,
    l1: Tensor,
    l2: Tensor,
    grad: Tensor,
    name: str | None = None,
    indices: Tensor | None = None,
) -> Operation:
    """One proximal Adagrad step; of the rows ``indices`` if given."""
    inputs = [*handles([accum]), lr, l1, l2, grad]
    return apply_update("ResourceApplyProximalAdagrad", var, inputs, name, indices=indices)


def resource_apply_ftrl(
    var: Any,
    accum: Any,
    linear: Any,
    grad: Tensor,
    lr: Tensor,
    l1: Tensor,
    l2: Tensor,
    l2_shrinkage: Tensor,
    lr_power: Tensor,
    name: str | None = None,
    indices: Tensor | None = None,
) -> Operation:
    """One FTRL-Proximal step (with TF's optional L2 shrinkage); of the rows
    ``indices`` if given."""
    inputs = [*handles([accum, linear]), grad, lr, l1, l2, l2_shrinkage, lr_power]
    return apply_update("ResourceApplyFtrlV2", var, inputs, name, indices=indices)


def resource_apply_adagrad_da(
    var: Any,
    grad_accum: Any,
    squared_accum: Any,
    grad: Tensor,
    lr: Tensor,
    l1: Tensor,
    l2: Tensor,
    global_step: Tensor,
    name: str | None = None,
    indices: Tensor | None = None,
) -> Operation:
    """One Adagrad dual-averaging step at ``global_step`` (an int64 scalar); of the
    rows ``indices`` if given."""
    inputs = [*handles([grad_accum, squared_accum]), grad, lr, l1, l2, global_step]
    return apply_update("ResourceApplyAdagradDA", var, inputs, name, indices=indices)
