"""Fused optimizer updates: one stateful op per variable update (TF's ``training_ops``).

Each ``ResourceApply*`` op takes the handles of a variable and of its slots, the
hyper-parameters (scalars of the variable's dtype) and the gradient, and applies one
optimizer step. Like TF1's ops it has no outputs: ``Optimizer.apply_gradients`` groups
these ops into the train op. The input order is TF1's (``ResourceApplyMomentum`` takes
``(var, accum, lr, grad, momentum)``), described per op by a *layout* string with one
letter per input: ``h`` a resource handle, ``s`` a scalar hyper-parameter, ``g`` the
gradient.

Why fused rather than composite (STYLE habit 2): a composite update (reads, five to ten
elementwise ops, assigns) costs as many kernel calls and temporaries per variable, and
could interleave with a concurrent step between the slot and the variable writes. The
fused kernel does the arithmetic in a few ``out=`` passes and updates the variable and
its slots together, through ``ResourceStore.update_in_place``: under their locks, and
in place when nobody else holds their buffers (as TF's kernels write into the
variable), else into new buffers that replace them, so a value read or fetched earlier
never changes under its holder. Kernel bodies use ``ctx.xp`` only, so they run on numpy
and cupy alike.

Formulas, in TF1's order of operations (``core/kernels/training_ops.cc``)::

    GradientDescent  var -= alpha * delta
    Momentum         accum = accum * momentum + grad
                     var -= accum * lr
                     (Nesterov: var -= grad * lr + accum * momentum * lr)
    Adagrad          accum += grad ** 2
                     var -= grad * lr / sqrt(accum)
    RMSProp          ms += (grad ** 2 - ms) * (1 - rho)
                     mom = mom * momentum + grad * lr / sqrt(ms + epsilon)
                     var -= mom
    CenteredRMSProp  as RMSProp, with mg += (grad - mg) * (1 - rho)
                     and the denominator sqrt(ms - mg ** 2 + epsilon)
    Adam             alpha = lr * sqrt(1 - beta2_power) / (1 - beta1_power)
                     m += (grad - m) * (1 - beta1)
                     v += (grad ** 2 - v) * (1 - beta2)
                     var -= m * alpha / (sqrt(v) + epsilon)

Example: ``ResourceApplyGradientDescent(w, 0.1, g)`` with ``w = [1, 2]`` and
``g = [10, 10]`` leaves ``w = [0, 1]``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..framework import dtypes, errors, registry
from ..framework.graph import Operation, Tensor, get_default_graph
from ..ops.variable_ops import in_place_updater

# --- the shape/dtype rule shared by every apply op -------------------------------------------


def infer_apply(layout: str) -> Callable[[Operation], list]:
    def infer(op: Operation) -> list:
        if len(op.inputs) != len(layout):
            raise ValueError(f"'{op.type}' takes {len(layout)} inputs, got {len(op.inputs)}")
        dtype, shape = op.attrs["dtype"], op.attrs["shape"]
        if not (dtype.is_floating or dtype.is_complex):
            raise TypeError(f"'{op.type}' updates float variables, not {dtype.name}")
        for kind, t in zip(layout, op.inputs, strict=True):
            if kind == "h":
                if t.dtype != dtypes.resource:
                    raise TypeError(
                        f"'{op.type}' needs a variable handle for input "
                        f"'{t.name}', got dtype {t.dtype.name}"
                    )
            elif t.dtype != dtype:
                what = "gradient" if kind == "g" else "hyper-parameter"
                raise TypeError(
                    f"'{op.type}': the {what} '{t.name}' has dtype "
                    f"{t.dtype.name}, but the variable has dtype {dtype.name}"
                )
            elif kind == "s" and t.shape.rank not in (None, 0):
                raise ValueError(
                    f"'{op.type}': hyper-parameter '{t.name}' must be a scalar, got shape {t.shape}"
                )
            elif kind == "g" and not t.shape.is_compatible_with(shape):
                raise ValueError(
                    f"'{op.type}': gradient '{t.name}' of shape {t.shape} "
                    f"does not match the variable's shape {shape}"
                )
        return []

    return infer


def check_grad(op_name: str, var: Any, grad: Any) -> None:
    if grad.shape != var.shape:
        raise errors.InvalidArgumentError(
            None,
            op_name,
            f"var and grad do not have the same shape: {tuple(var.shape)} vs {tuple(grad.shape)}",
        )


# --- kernels ------------------------------------------------------------------------------------
# Every kernel hands its variable and slots to ``store.update_in_place``, which holds
# their locks and passes the current buffers (``olds``) and where each new value goes
# (``outs``: the stored buffer itself when nobody else holds it, TF's in-place update,
# else a fresh one). The arithmetic is ``out=`` ufunc calls in TF's order of operations;
# each reads an element before writing it, so ``outs[i] is olds[i]`` is safe. The
# gradient's shape is checked before anything is written. Temporaries come from the
# kernel's ``BufferPool``, as do replacement buffers, and go back to it.
def scalars(*values: Any) -> list[Any]:
    """0-d hyper-parameters as scalars of their dtype (``x[()]``): numpy scalar
    arithmetic costs a fifth of 0-d array arithmetic (Adam's per-step prologue: 0.9 us
    against 4.5 us), and keeps the dtype, as TF's ``T`` does."""
    return [v[()] for v in values]


def _gradient_descent_kernel(ctx: Any, attrs: dict) -> Callable:
    xp, op_name = ctx.xp, ctx.op_name
    run, pool = in_place_updater(ctx)

    def apply(var: str, alpha: Any, delta: Any) -> None:
        (alpha,) = scalars(alpha)

        def compute(olds: list, outs: list) -> None:
            check_grad(op_name, olds[0], delta)
            step = xp.multiply(delta, alpha, out=pool.like(olds[0]))
            xp.subtract(olds[0], step, out=outs[0])
            pool.retire(step)

        run((var,), compute)

    return apply


def _momentum_kernel(ctx: Any, attrs: dict) -> Callable:
    xp, op_name = ctx.xp, ctx.op_name
    nesterov = bool(attrs.get("use_nesterov", False))
    run, pool = in_place_updater(ctx)

    def apply(var: str, accum: str, lr: Any, grad: Any, momentum: Any) -> None:
        lr, momentum = scalars(lr, momentum)

        def compute(olds: list, outs: list) -> None:
            (old, acc_old), (new, acc) = olds, outs
            check_grad(op_name, old, grad)
            xp.multiply(acc_old, momentum, out=acc)
            acc += grad
            step = pool.like(old)
            if nesterov:
                xp.multiply(grad, lr, out=step)
                scratch = xp.multiply(acc, momentum, out=pool.like(old))
                scratch *= lr
                step += scratch
                pool.retire(scratch)
            else:
                xp.multiply(acc, lr, out=step)
            xp.subtract(old, step, out=new)
            pool.retire(step)

        run((var, accum), compute)

    return apply


def _adagrad_kernel(ctx: Any, attrs: dict) -> Callable:
    xp, op_name = ctx.xp, ctx.op_name
    run, pool = in_place_updater(ctx)

    def apply(var: str, accum: str, lr: Any, grad: Any) -> None:
        (lr,) = scalars(lr)

        def compute(olds: list, outs: list) -> None:
            (old, acc_old), (new, acc) = olds, outs
            check_grad(op_name, old, grad)
            squared = xp.square(grad, out=pool.like(old))
            xp.add(squared, acc_old, out=acc)
            step = xp.multiply(grad, lr, out=pool.like(old))
            root = xp.sqrt(acc, out=squared)
            step /= root
            xp.subtract(old, step, out=new)
            pool.retire(step, root)

        run((var, accum), compute)

    return apply


def _rms_prop_kernel(centered: bool) -> Callable:
    def factory(ctx: Any, attrs: dict) -> Callable:
        xp, op_name = ctx.xp, ctx.op_name
        run, pool = in_place_updater(ctx)

        def apply(var: str, *args: Any) -> None:
            if centered:
                mg, ms, mom, lr, rho, momentum, epsilon, grad = args
                names: tuple[str, ...] = (var, mg, ms, mom)
            else:
                ms, mom, lr, rho, momentum, epsilon, grad = args
                names = (var, ms, mom)
            lr, rho, momentum, epsilon = scalars(lr, rho, momentum, epsilon)
            one_minus_rho = 1 - rho

            def compute(olds: list, outs: list) -> None:
                old, new = olds[0], outs[0]
                ms_old, mom_old = olds[-2:]
                ms_new, mom_new = outs[-2:]
                check_grad(op_name, old, grad)
                t, denom = pool.like(old), pool.like(old)
                xp.square(grad, out=t)
                t -= ms_old
                t *= one_minus_rho
                xp.add(t, ms_old, out=ms_new)
                if centered:
                    mg_old, mg_new = olds[1], outs[1]
                    xp.subtract(grad, mg_old, out=t)
                    t *= one_minus_rho
                    xp.add(t, mg_old, out=mg_new)
                    xp.square(mg_new, out=denom)
                    xp.subtract(ms_new, denom, out=denom)
                    denom += epsilon
                else:
                    xp.add(ms_new, epsilon, out=denom)
                xp.sqrt(denom, out=denom)
                xp.multiply(grad, lr, out=t)
                t /= denom
                xp.multiply(mom_old, momentum, out=denom)
                xp.add(t, denom, out=mom_new)
                xp.subtract(old, mom_new, out=new)
                pool.retire(t, denom)

            run(names, compute)

        return apply

    return factory


def _adam_kernel(ctx: Any, attrs: dict) -> Callable:
    xp, op_name = ctx.xp, ctx.op_name
    run, pool = in_place_updater(ctx)

    def apply(
        var: str,
        m: str,
        v: str,
        beta1_power: Any,
        beta2_power: Any,
        lr: Any,
        beta1: Any,
        beta2: Any,
        epsilon: Any,
        grad: Any,
    ) -> None:
        beta1_power, beta2_power, lr, beta1, beta2, epsilon = scalars(
            beta1_power, beta2_power, lr, beta1, beta2, epsilon
        )
        alpha = lr * xp.sqrt(1 - beta2_power) / (1 - beta1_power)
        one_minus_beta1, one_minus_beta2 = 1 - beta1, 1 - beta2

        def compute(olds: list, outs: list) -> None:
            (old, m_old, v_old), (new, m_new, v_new) = olds, outs
            check_grad(op_name, old, grad)
            t, step = pool.like(old), pool.like(old)
            xp.subtract(grad, m_old, out=t)
            t *= one_minus_beta1
            xp.add(t, m_old, out=m_new)
            xp.square(grad, out=t)
            t -= v_old
            t *= one_minus_beta2
            xp.add(t, v_old, out=v_new)
            denom = xp.sqrt(v_new, out=t)
            denom += epsilon
            xp.multiply(m_new, alpha, out=step)
            step /= denom
            xp.subtract(old, step, out=new)
            pool.retire(t, step)

        run((var, m, v), compute)

    return apply


_LAYOUTS = {
    "ResourceApplyGradientDescent": ("hsg", _gradient_descent_kernel),
    "ResourceApplyMomentum": ("hhsgs", _momentum_kernel),
    "ResourceApplyAdagrad": ("hhsg", _adagrad_kernel),
    "ResourceApplyRMSProp": ("hhhssssg", _rms_prop_kernel(False)),
    "ResourceApplyCenteredRMSProp": ("hhhhssssg", _rms_prop_kernel(True)),
    "ResourceApplyAdam": ("hhhssssssg", _adam_kernel),
}
for _type, (_layout, _kernel) in _LAYOUTS.items():
    registry.register(
        registry.OpDef(
            _type, infer_apply(_layout), _kernel, registry.NOT_DIFFERENTIABLE, stateful=True
        )
    )


# --- builders ------------------------------------------------------------------------------------
def apply_update(
    op_type: str, var: Any, inputs: list[Any], name: str | None, extra: dict | None = None
) -> Operation:
    """Creates the apply op of ``var`` colocated with it; returns the ``Operation``."""
    graph = get_default_graph()
    attrs = {"dtype": var.dtype, "shape": var.shape}
    attrs.update(extra or {})
    with graph.colocate_with(var.op):
        tensors = [var.handle, *inputs]
        for t in tensors:
            if not isinstance(t, Tensor):
                raise TypeError(f"'{op_type}' inputs must be tensors, got {t!r}")
        return graph.create_op(op_type, tensors, attrs, name=name)


def handles(slots: list[Any]) -> list[Tensor]:
    return [s.handle for s in slots]


def resource_apply_gradient_descent(
    var: Any, alpha: Tensor, delta: Tensor, name: str | None = None
) -> Operation:
    """``var -= alpha * delta``."""
    return apply_update("ResourceApplyGradientDescent", var, [alpha, delta], name)


def resource_apply_momentum(
    var: Any,
    accum: Any,
    lr: Tensor,
    grad: Tensor,
    momentum: Tensor,
    use_nesterov: bool = False,
    name: str | None = None,
) -> Operation:
    """``accum = accum * momentum + grad; var -= lr * accum`` (or the Nesterov form)."""
    return apply_update(
        "ResourceApplyMomentum",
        var,
        [*handles([accum]), lr, grad, momentum],
        name,
        {"use_nesterov": bool(use_nesterov)},
    )


def resource_apply_adagrad(
    var: Any, accum: Any, lr: Tensor, grad: Tensor, name: str | None = None
) -> Operation:
    """``accum += grad ** 2; var -= lr * grad / sqrt(accum)``."""
    return apply_update("ResourceApplyAdagrad", var, [*handles([accum]), lr, grad], name)


def resource_apply_rms_prop(
    var: Any,
    ms: Any,
    mom: Any,
    lr: Tensor,
    rho: Tensor,
    momentum: Tensor,
    epsilon: Tensor,
    grad: Tensor,
    name: str | None = None,
) -> Operation:
    """RMSProp with momentum (see the module docstring)."""
    return apply_update(
        "ResourceApplyRMSProp", var, [*handles([ms, mom]), lr, rho, momentum, epsilon, grad], name
    )


def resource_apply_centered_rms_prop(
    var: Any,
    mg: Any,
    ms: Any,
    mom: Any,
    lr: Tensor,
    rho: Tensor,
    momentum: Tensor,
    epsilon: Tensor,
    grad: Tensor,
    name: str | None = None,
) -> Operation:
    """Centered RMSProp: the second moment minus the squared mean gradient."""
    return apply_update(
        "ResourceApplyCenteredRMSProp",
        var,
        [*handles([mg, ms, mom]), lr, rho, momentum, epsilon, grad],
        name,
    )


def resource_apply_adam(
    var: Any,
    m: Any,
    v: Any,
    beta1_power: Tensor,
    beta2_power: Tensor,
    lr: Tensor,
    beta1: Tensor,
    beta2: Tensor,
    epsilon: Tensor,
    grad: Tensor,
    name: str | None = None,
) -> Operation:
    """Adam with TF1's bias correction folded into the step size."""
    return apply_update(
        "ResourceApplyAdam",
        var,
        [*handles([m, v]), beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad],
        name,
    )
