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
fused kernel does the arithmetic in a few passes over freshly allocated buffers and
replaces the slots and the variable together, inside ``store.update`` on the variable,
i.e. under the variable's lock.

Store rules (``ops/state.py``, ``runtime/resources.py``): a stored buffer is never
written in place. A kernel allocates new arrays (in-place arithmetic only on those),
freezes them, and swaps them in. Kernel bodies use ``ctx.xp`` only, so they run on
numpy and cupy alike.

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

import sys
from collections.abc import Callable
from typing import Any

from ..framework import dtypes, errors, registry
from ..framework.graph import Operation, Tensor, get_default_graph
from ..ops.state import _freeze

# --- the shape/dtype rule shared by every apply op -------------------------------------------


def _infer_apply(layout: str) -> Callable[[Operation], list]:
    def infer(op: Operation) -> list:
        if len(op.inputs) != len(layout):
            raise ValueError(f"'{op.type}' takes {len(layout)} inputs, got {len(op.inputs)}")
        dtype, shape = op.attrs["dtype"], op.attrs["shape"]
        if not (dtype.is_floating or dtype.is_complex):
            raise TypeError(f"'{op.type}' updates float variables, not {dtype.name}")
        for kind, t in zip(layout, op.inputs, strict=True):
            if kind == "h":
                if t.dtype != dtypes.resource:
                    raise TypeError(f"'{op.type}' needs a variable handle for input "
                                    f"'{t.name}', got dtype {t.dtype.name}")
            elif t.dtype != dtype:
                what = "gradient" if kind == "g" else "hyper-parameter"
                raise TypeError(f"'{op.type}': the {what} '{t.name}' has dtype "
                                f"{t.dtype.name}, but the variable has dtype {dtype.name}")
            elif kind == "s" and t.shape.rank not in (None, 0):
                raise ValueError(f"'{op.type}': hyper-parameter '{t.name}' must be a "
                                 f"scalar, got shape {t.shape}")
            elif kind == "g" and not t.shape.is_compatible_with(shape):
                raise ValueError(f"'{op.type}': gradient '{t.name}' of shape {t.shape} "
                                 f"does not match the variable's shape {shape}")
        return []

    return infer


def _check_grad(op_name: str, var: Any, grad: Any) -> None:
    if grad.shape != var.shape:
        raise errors.InvalidArgumentError(
            None, op_name, f"var and grad do not have the same shape: {tuple(var.shape)} "
            f"vs {tuple(grad.shape)}")


# --- recycling retired buffers --------------------------------------------------------------
def _refcount_at(pool: list, i: int) -> int:
    return sys.getrefcount(pool[i])


# The count ``_refcount_at`` reports for an object held by nothing but the pool,
# measured once rather than assumed (it differs between Python versions).
_UNSHARED = _refcount_at([object()], 0)
_POOL_SIZE = 8


class _Buffers:
    """Output buffers of one update op, recycled from the ones its updates retire.

    Replacing (never mutating) stored values means each step allocates a new variable
    and new slots and frees the old ones. For large variables that churn is costly:
    freed chunks at the top of the heap go back to the OS and come back as page faults
    (measured on the 784x256 Adam update: ~300 faults and ~0.4 ms of system time per
    step). So an update *retires* the buffers it replaced into this pool, and a later
    update writes into one of them, but only once nothing else holds it: a retired
    buffer is no longer in the store, so nobody can obtain it anew, and a reader that
    got it before (a read earlier in a step, a concurrent step) holds a reference, which
    the reference count shows. This is numpy's own temporary elision, applied across
    steps. It costs one retired copy of each variable and slot. numpy only (cupy has
    its own memory pool); the pool is touched under the variable's lock only.
    """

    __slots__ = ("_xp", "_pool", "_recycle")

    def __init__(self, xp: Any):
        self._xp = xp
        self._pool: list[Any] = []
        self._recycle = getattr(xp, "__name__", "") == "numpy"

    def like(self, template: Any) -> Any:
        """A writeable array shaped and typed like ``template`` (contents undefined)."""
        pool = self._pool
        for i in range(len(pool)):
            if _refcount_at(pool, i) == _UNSHARED and pool[i].shape == template.shape \
                    and pool[i].dtype == template.dtype:
                buffer = pool.pop(i)
                buffer.flags.writeable = True
                return buffer
        return self._xp.empty_like(template)

    def retire(self, *buffers: Any) -> None:
        """Offers replaced (or scratch) buffers for reuse."""
        if self._recycle:
            for buffer in buffers:
                if len(self._pool) < _POOL_SIZE and buffer.flags.owndata:
                    self._pool.append(buffer)


# --- kernels ------------------------------------------------------------------------------------
# Every kernel checks the gradient's shape, computes into buffers from ``_Buffers`` with
# ``out=`` and in-place arithmetic on those only, swaps the new slots and variable into
# the store inside ``store.update`` (the variable's lock), and retires the old ones.
def _gradient_descent_kernel(ctx: Any, attrs: dict) -> Callable:
    store, xp, op_name = ctx.resources, ctx.xp, ctx.op_name
    buffers = _Buffers(xp)

    def apply(var: str, alpha: Any, delta: Any) -> None:
        def update(old: Any) -> Any:
            _check_grad(op_name, old, delta)
            step = xp.multiply(delta, alpha, out=buffers.like(old))
            new = xp.subtract(old, step, out=buffers.like(old))
            buffers.retire(step, old)
            return _freeze(ctx, new)

        store.update(var, update)

    return apply


def _momentum_kernel(ctx: Any, attrs: dict) -> Callable:
    store, xp, op_name = ctx.resources, ctx.xp, ctx.op_name
    nesterov = bool(attrs.get("use_nesterov", False))
    buffers = _Buffers(xp)

    def apply(var: str, accum: str, lr: Any, grad: Any, momentum: Any) -> None:
        def update(old: Any) -> Any:
            _check_grad(op_name, old, grad)
            acc_old = store.read(accum)
            acc = xp.multiply(acc_old, momentum, out=buffers.like(old))
            acc += grad
            if nesterov:
                step = xp.multiply(grad, lr, out=buffers.like(old))
                scratch = xp.multiply(acc, momentum, out=buffers.like(old))
                scratch *= lr
                step += scratch
                buffers.retire(scratch)
            else:
                step = xp.multiply(acc, lr, out=buffers.like(old))
            new = xp.subtract(old, step, out=buffers.like(old))
            store.write(accum, _freeze(ctx, acc))
            buffers.retire(step, acc_old, old)
            return _freeze(ctx, new)

        store.update(var, update)

    return apply


def _adagrad_kernel(ctx: Any, attrs: dict) -> Callable:
    store, xp, op_name = ctx.resources, ctx.xp, ctx.op_name
    buffers = _Buffers(xp)

    def apply(var: str, accum: str, lr: Any, grad: Any) -> None:
        def update(old: Any) -> Any:
            _check_grad(op_name, old, grad)
            acc_old = store.read(accum)
            acc = xp.square(grad, out=buffers.like(old))
            acc += acc_old
            step = xp.multiply(grad, lr, out=buffers.like(old))
            scratch = xp.sqrt(acc, out=buffers.like(old))
            step /= scratch
            new = xp.subtract(old, step, out=scratch)
            store.write(accum, _freeze(ctx, acc))
            buffers.retire(step, acc_old, old)
            return _freeze(ctx, new)

        store.update(var, update)

    return apply


def _rms_prop_kernel(centered: bool) -> Callable:
    def factory(ctx: Any, attrs: dict) -> Callable:
        store, xp, op_name = ctx.resources, ctx.xp, ctx.op_name
        buffers = _Buffers(xp)

        def apply(var: str, *args: Any) -> None:
            if centered:
                mg, ms, mom, lr, rho, momentum, epsilon, grad = args
            else:
                ms, mom, lr, rho, momentum, epsilon, grad = args
            one_minus_rho = 1 - rho

            def update(old: Any) -> Any:
                _check_grad(op_name, old, grad)
                ms_old, mom_old = store.read(ms), store.read(mom)
                ms_new = xp.square(grad, out=buffers.like(old))
                ms_new -= ms_old
                ms_new *= one_minus_rho
                ms_new += ms_old
                denom = buffers.like(old)
                if centered:
                    mg_old = store.read(mg)
                    mg_new = xp.subtract(grad, mg_old, out=buffers.like(old))
                    mg_new *= one_minus_rho
                    mg_new += mg_old
                    xp.square(mg_new, out=denom)
                    xp.subtract(ms_new, denom, out=denom)
                    denom += epsilon
                else:
                    xp.add(ms_new, epsilon, out=denom)
                xp.sqrt(denom, out=denom)
                mom_new = xp.multiply(grad, lr, out=buffers.like(old))
                mom_new /= denom
                mom_new += xp.multiply(mom_old, momentum, out=denom)
                new = xp.subtract(old, mom_new, out=denom)
                store.write(ms, _freeze(ctx, ms_new))
                store.write(mom, _freeze(ctx, mom_new))
                retired = [ms_old, mom_old, old]
                if centered:
                    store.write(mg, _freeze(ctx, mg_new))
                    retired.append(mg_old)
                buffers.retire(*retired)
                return _freeze(ctx, new)

            store.update(var, update)

        return apply

    return factory


def _adam_kernel(ctx: Any, attrs: dict) -> Callable:
    store, xp, op_name = ctx.resources, ctx.xp, ctx.op_name
    buffers = _Buffers(xp)

    def apply(var: str, m: str, v: str, beta1_power: Any, beta2_power: Any, lr: Any,
              beta1: Any, beta2: Any, epsilon: Any, grad: Any) -> None:
        # Scalar arithmetic on 0-d arrays keeps the variable's dtype (as TF's T does).
        alpha = lr * xp.sqrt(1 - beta2_power) / (1 - beta1_power)
        one_minus_beta1, one_minus_beta2 = 1 - beta1, 1 - beta2

        def update(old: Any) -> Any:
            _check_grad(op_name, old, grad)
            m_old, v_old = store.read(m), store.read(v)
            m_new = xp.subtract(grad, m_old, out=buffers.like(old))
            m_new *= one_minus_beta1
            m_new += m_old
            v_new = xp.square(grad, out=buffers.like(old))
            v_new -= v_old
            v_new *= one_minus_beta2
            v_new += v_old
            denom = xp.sqrt(v_new, out=buffers.like(old))
            denom += epsilon
            step = xp.multiply(m_new, alpha, out=buffers.like(old))
            step /= denom
            new = xp.subtract(old, step, out=denom)
            store.write(m, _freeze(ctx, m_new))
            store.write(v, _freeze(ctx, v_new))
            buffers.retire(step, m_old, v_old, old)
            return _freeze(ctx, new)

        store.update(var, update)

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
    registry.register(registry.OpDef(_type, _infer_apply(_layout), _kernel,
                                     registry.NOT_DIFFERENTIABLE, stateful=True))


# --- builders ------------------------------------------------------------------------------------
def _apply(op_type: str, var: Any, inputs: list[Any], name: str | None,
           extra: dict | None = None) -> Operation:
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


def _handles(slots: list[Any]) -> list[Tensor]:
    return [s.handle for s in slots]


def resource_apply_gradient_descent(var: Any, alpha: Tensor, delta: Tensor,
                                    name: str | None = None) -> Operation:
    """``var -= alpha * delta``."""
    return _apply("ResourceApplyGradientDescent", var, [alpha, delta], name)


def resource_apply_momentum(var: Any, accum: Any, lr: Tensor, grad: Tensor,
                            momentum: Tensor, use_nesterov: bool = False,
                            name: str | None = None) -> Operation:
    """``accum = accum * momentum + grad; var -= lr * accum`` (or the Nesterov form)."""
    return _apply("ResourceApplyMomentum", var, [*_handles([accum]), lr, grad, momentum],
                  name, {"use_nesterov": bool(use_nesterov)})


def resource_apply_adagrad(var: Any, accum: Any, lr: Tensor, grad: Tensor,
                           name: str | None = None) -> Operation:
    """``accum += grad ** 2; var -= lr * grad / sqrt(accum)``."""
    return _apply("ResourceApplyAdagrad", var, [*_handles([accum]), lr, grad], name)


def resource_apply_rms_prop(var: Any, ms: Any, mom: Any, lr: Tensor, rho: Tensor,
                            momentum: Tensor, epsilon: Tensor, grad: Tensor,
                            name: str | None = None) -> Operation:
    """RMSProp with momentum (see the module docstring)."""
    return _apply("ResourceApplyRMSProp", var,
                  [*_handles([ms, mom]), lr, rho, momentum, epsilon, grad], name)


def resource_apply_centered_rms_prop(var: Any, mg: Any, ms: Any, mom: Any, lr: Tensor,
                                     rho: Tensor, momentum: Tensor, epsilon: Tensor,
                                     grad: Tensor, name: str | None = None) -> Operation:
    """Centered RMSProp: the second moment minus the squared mean gradient."""
    return _apply("ResourceApplyCenteredRMSProp", var,
                  [*_handles([mg, ms, mom]), lr, rho, momentum, epsilon, grad], name)


def resource_apply_adam(var: Any, m: Any, v: Any, beta1_power: Tensor, beta2_power: Tensor,
                        lr: Tensor, beta1: Tensor, beta2: Tensor, epsilon: Tensor,
                        grad: Tensor, name: str | None = None) -> Operation:
    """Adam with TF1's bias correction folded into the step size."""
    return _apply("ResourceApplyAdam", var, [*_handles([m, v]), beta1_power, beta2_power,
                                             lr, beta1, beta2, epsilon, grad], name)
