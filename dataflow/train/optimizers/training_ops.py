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

Where numba is installed, the dense updates of gradient descent, momentum, Adagrad,
RMSProp and Adam on large host float32/float64 arrays run as one compiled loop each
(``fused_updates``), in the same order of operations: the same values. Without numba,
Adam's is the exception: it runs through BLAS level-1 calls in fewer passes
(``adam_blas``), its formulas rearranged as ``m = beta1 * m + (1 - beta1) * grad``
(and v likewise) and ``var -= alpha * (m / (sqrt(v) + epsilon))``, so its values
differ from TF1's in the last bits of each step; on cupy (and for other dtypes) it
keeps TF1's order, and there matches TF1's CPU kernel bit for bit.

Sparse forms (``ResourceSparseApply*``, for ``IndexedSlices`` gradients: embeddings)
take the rows' unique ``indices`` as their last input and a gradient of just those
rows; they apply the same formulas to those rows of the variable and its slots
(``rows_updater``), leaving the other rows untouched. Rounding may differ from TF's
sparse kernels in the last bit where those write a formula another way (``rsqrt``).
Adam's follows TF1's ``_apply_sparse_shared`` instead: ``m = m * beta1`` and
``v = v * beta2`` everywhere, the rows' ``grad * (1 - beta1)`` and
``grad ** 2 * (1 - beta2)`` scattered in, then ``var -= alpha * m / (sqrt(v) + eps)``
everywhere. Gradient descent has none: its sparse step is TF1's ``ResourceScatterAdd``
of ``-grad * lr``.

Example: ``ResourceApplyGradientDescent(w, 0.1, g)`` with ``w = [1, 2]`` and
``g = [10, 10]`` leaves ``w = [0, 1]``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...framework import dtypes, errors, registry
from ...framework.graph import Operation, Tensor, get_default_graph
from ...framework.tensor_shape import TensorShape
from ...ops.host import is_host_namespace
from ...ops.state.buffer_pool import BufferPool
from ...ops.state.resource_ops import check_rows, in_place_updater
from . import adam_blas, fused_updates

# --- the shape/dtype rule shared by every apply op -------------------------------------------


def infer_apply(layout: str) -> Callable[[Operation], list]:
    def infer(op: Operation) -> list:
        if len(op.inputs) != len(layout):
            raise ValueError(f"'{op.type}' takes {len(layout)} inputs, got {len(op.inputs)}")
        dtype, shape = op.attrs["dtype"], op.attrs["shape"]
        if not (dtype.is_floating or dtype.is_complex):
            raise TypeError(f"'{op.type}' updates float variables, not {dtype.name}")
        if "i" in layout:  # a sparse update: the gradient holds the rows at ``indices``
            indices = op.inputs[layout.index("i")]
            rows = indices.shape[0] if indices.shape.rank == 1 else None
            shape = TensorShape([rows]).concatenate(shape[1:]) if shape.rank else shape
        for kind, t in zip(layout, op.inputs, strict=True):
            if kind == "i":
                if not t.dtype.is_integer or t.shape.rank not in (None, 1):
                    raise TypeError(
                        f"'{op.type}': indices '{t.name}' must be an integer vector, got "
                        f"{t.dtype.name} of shape {t.shape}"
                    )
            elif kind == "h":
                if t.dtype != dtypes.resource:
                    raise TypeError(
                        f"'{op.type}' needs a variable handle for input "
                        f"'{t.name}', got dtype {t.dtype.name}"
                    )
            elif kind == "n":  # a step count (AdagradDA's global step): any integer scalar
                if not t.dtype.is_integer or t.shape.rank not in (None, 0):
                    raise TypeError(
                        f"'{op.type}': the step '{t.name}' must be an integer scalar, got "
                        f"{t.dtype.name} of shape {t.shape}"
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
def rows_updater(ctx: Any) -> tuple[Callable, BufferPool]:
    """``in_place_updater`` whose ``run(names, compute, indices=None)`` also applies a
    sparse update: given ``indices`` (unique: the optimizer sums duplicates first, as
    TF's does), ``compute`` gets copies of just those rows of each variable (and the
    gradient holds the same rows), and the new rows are written back, in place when the
    store allows it. The rows are checked before anything is written; the others stay
    untouched, bit for bit."""
    run, pool = in_place_updater(ctx)
    xp = ctx.xp

    def run_rows(names: tuple[str, ...], compute: Callable, indices: Any = None) -> list:
        if indices is None:
            return run(names, compute)

        def on_rows(olds: list, outs: list) -> None:
            check_rows(names[0], indices, olds[0].shape[0])
            rows = [xp.take(old, indices, axis=0) for old in olds]
            compute(rows, rows)  # outs is olds: allowed (see update_in_place)
            for old, out, new in zip(olds, outs, rows, strict=True):
                if out is not old:
                    out[...] = old
                out[indices] = new

        return run(names, on_rows)

    return run_rows, pool


def scalars(*values: Any) -> list[Any]:
    """0-d hyper-parameters as scalars of their dtype (``x[()]``): numpy scalar
    arithmetic costs a fifth of 0-d array arithmetic (Adam's per-step prologue: 0.9 us
    against 4.5 us), and keeps the dtype, as TF's ``T`` does."""
    return [v[()] for v in values]


def _gradient_descent_kernel(ctx: Any, attrs: dict) -> Callable:
    xp, op_name = ctx.xp, ctx.op_name
    run, pool = in_place_updater(ctx)
    on_host = is_host_namespace(xp)

    def apply(var: str, alpha: Any, delta: Any) -> None:
        (alpha,) = scalars(alpha)

        def compute(olds: list, outs: list) -> None:
            check_grad(op_name, olds[0], delta)
            if on_host and fused_updates.GRADIENT_DESCENT.update(olds, outs, delta, alpha):
                return
            step = xp.multiply(delta, alpha, out=pool.like(olds[0]))
            xp.subtract(olds[0], step, out=outs[0])
            pool.retire(step)

        run((var,), compute)

    return apply


def _momentum_kernel(ctx: Any, attrs: dict) -> Callable:
    xp, op_name = ctx.xp, ctx.op_name
    nesterov = bool(attrs.get("use_nesterov", False))
    run, pool = rows_updater(ctx)
    fused = fused_updates.NESTEROV_MOMENTUM if nesterov else fused_updates.MOMENTUM
    on_host = is_host_namespace(xp)

    def apply(var: str, accum: str, lr: Any, grad: Any, momentum: Any, indices: Any = None) -> None:
        lr, momentum = scalars(lr, momentum)

        def compute(olds: list, outs: list) -> None:
            (old, acc_old), (new, acc) = olds, outs
            check_grad(op_name, old, grad)
            if on_host and fused.update(olds, outs, grad, lr, momentum):
                return
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

        run((var, accum), compute, indices)

    return apply


def _adagrad_kernel(ctx: Any, attrs: dict) -> Callable:
    xp, op_name = ctx.xp, ctx.op_name
    run, pool = rows_updater(ctx)
    on_host = is_host_namespace(xp)

    def apply(var: str, accum: str, lr: Any, grad: Any, indices: Any = None) -> None:
        (lr,) = scalars(lr)

        def compute(olds: list, outs: list) -> None:
            (old, acc_old), (new, acc) = olds, outs
            check_grad(op_name, old, grad)
            if on_host and fused_updates.ADAGRAD.update(olds, outs, grad, lr):
                return
            squared = xp.square(grad, out=pool.like(old))
            xp.add(squared, acc_old, out=acc)
            step = xp.multiply(grad, lr, out=pool.like(old))
            root = xp.sqrt(acc, out=squared)
            step /= root
            xp.subtract(old, step, out=new)
            pool.retire(step, root)

        run((var, accum), compute, indices)

    return apply


def _rms_prop_kernel(centered: bool) -> Callable:
    def factory(ctx: Any, attrs: dict) -> Callable:
        xp, op_name = ctx.xp, ctx.op_name
        run, pool = rows_updater(ctx)
        fused = fused_updates.CENTERED_RMS_PROP if centered else fused_updates.RMS_PROP
        on_host = is_host_namespace(xp)

        def apply(var: str, *args: Any) -> None:
            dense = 8 if centered else 7
            indices = args[dense] if len(args) > dense else None
            args = args[:dense]
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
                if on_host and fused.update(olds, outs, grad, lr, one_minus_rho, momentum, epsilon):
                    return
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

            run(names, compute, indices)

        return apply

    return factory


_ADAM_CHUNK = 1 << 17  # elements per block of a large dense Adam update (512 KB float32)


def _adam_kernel(ctx: Any, attrs: dict) -> Callable:
    xp, op_name = ctx.xp, ctx.op_name
    run, pool = in_place_updater(ctx)
    on_host = is_host_namespace(xp)

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
        indices: Any = None,
    ) -> None:
        beta1_power, beta2_power, lr, beta1, beta2, epsilon = scalars(
            beta1_power, beta2_power, lr, beta1, beta2, epsilon
        )
        alpha = lr * xp.sqrt(1 - beta2_power) / (1 - beta1_power)
        one_minus_beta1, one_minus_beta2 = 1 - beta1, 1 - beta2

        def passes(old: Any, m_old: Any, v_old: Any, g: Any, outs: tuple, t: Any, step: Any):
            new, m_new, v_new = outs
            xp.subtract(g, m_old, out=t)
            t *= one_minus_beta1
            xp.add(t, m_old, out=m_new)
            xp.square(g, out=t)
            t -= v_old
            t *= one_minus_beta2
            xp.add(t, v_old, out=v_new)
            denom = xp.sqrt(v_new, out=t)
            denom += epsilon
            xp.multiply(m_new, alpha, out=step)
            step /= denom
            xp.subtract(old, step, out=new)

        def compute(olds: list, outs: list) -> None:
            (old, m_old, v_old), (new, m_new, v_new) = olds, outs
            check_grad(op_name, old, grad)
            arrays = (old, m_old, v_old, grad, new, m_new, v_new)
            if on_host and fused_updates.ADAM.update(
                olds, outs, grad, alpha, one_minus_beta1, one_minus_beta2, epsilon
            ):
                return  # one compiled loop (numba installed), TF1's values
            if on_host and adam_blas.applies_to(arrays):  # eight BLAS/ufunc calls a block
                scratch = pool.like(old.reshape(-1)[: adam_blas.BLOCK])
                adam_blas.update(xp, olds, outs, grad, scratch, alpha, beta1, beta2, epsilon)
                pool.retire(scratch)
                return
            contiguous = all(a.flags.c_contiguous for a in arrays)
            if not on_host or old.size <= 2 * _ADAM_CHUNK or not contiguous:
                t, step = pool.like(old), pool.like(old)
                passes(old, m_old, v_old, grad, (new, m_new, v_new), t, step)
                pool.retire(t, step)
                return
            # Large host variables (complex or float16 here) a block at a time: the
            # twelve elementwise passes then run on data in cache, not through memory
            # (3.2M float32: ~40% faster). Same operations per element, so the same
            # values. On a GPU, blocks would only multiply the kernel launches.
            flat = [a.reshape(-1) for a in arrays]
            t, step = pool.like(flat[0][:_ADAM_CHUNK]), pool.like(flat[0][:_ADAM_CHUNK])
            for lo in range(0, old.size, _ADAM_CHUNK):
                part = [a[lo : lo + _ADAM_CHUNK] for a in flat]
                k = part[0].shape[0]
                passes(part[0], part[1], part[2], part[3], tuple(part[4:]), t[:k], step[:k])
            pool.retire(t, step)

        def compute_sparse(olds: list, outs: list) -> None:
            # TF1's ``_apply_sparse_shared``: m and v decay everywhere, the gathered
            # rows' terms are scattered in, and every row of var moves (m is not zero).
            (old, m_old, v_old), (new, m_new, v_new) = olds, outs
            check_rows(var, indices, old.shape[0])
            rows = (indices.shape[0], *old.shape[1:])
            if tuple(grad.shape) != rows:
                raise errors.InvalidArgumentError(
                    None, op_name, f"grad must have shape {rows}, got {tuple(grad.shape)}"
                )
            xp.multiply(m_old, beta1, out=m_new)
            xp.add.at(m_new, indices, grad * one_minus_beta1)
            xp.multiply(v_old, beta2, out=v_new)
            xp.add.at(v_new, indices, xp.square(grad) * one_minus_beta2)
            t, step = pool.like(old), pool.like(old)
            denom = xp.sqrt(v_new, out=t)
            denom += epsilon
            xp.multiply(m_new, alpha, out=step)
            step /= denom
            xp.subtract(old, step, out=new)
            pool.retire(t, step)

        run((var, m, v), compute if indices is None else compute_sparse)

    return apply


def sparse_type(op_type: str) -> str:
    """``ResourceApplyAdam`` -> ``ResourceSparseApplyAdam``."""
    return op_type.replace("ResourceApply", "ResourceSparseApply", 1)


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
    if _type != "ResourceApplyGradientDescent":  # sparse: a ResourceScatterAdd, as TF's
        # The sparse form of each update (TF's ``ResourceSparseApply*``; Adam's is TF1's
        # composite of ``_apply_sparse_shared``, fused): the same kernel, given the rows'
        # ``indices`` as its last input.
        registry.register(
            registry.OpDef(
                sparse_type(_type),
                infer_apply(_layout + "i"),
                _kernel,
                registry.NOT_DIFFERENTIABLE,
                stateful=True,
            )
        )


# --- builders ------------------------------------------------------------------------------------
def apply_update(
    op_type: str,
    var: Any,
    inputs: list[Any],
    name: str | None,
    extra: dict | None = None,
    indices: Tensor | None = None,
) -> Operation:
    """Creates the apply op of ``var`` colocated with it; returns the ``Operation``.
    Given ``indices`` (unique rows), the sparse form: ``inputs``' gradient holds just
    those rows."""
    graph = get_default_graph()
    attrs = {"dtype": var.dtype, "shape": var.shape}
    attrs.update(extra or {})
    if indices is not None:
        op_type, inputs = sparse_type(op_type), [*inputs, indices]
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
    indices: Tensor | None = None,
) -> Operation:
    """``accum = accum * momentum + grad; var -= lr * accum`` (or the Nesterov form)."""
    return apply_update(
        "ResourceApplyMomentum",
        var,
        [*handles([accum]), lr, grad, momentum],
        name,
        {"use_nesterov": bool(use_nesterov)},
        indices,
    )


def resource_apply_adagrad(
    var: Any,
    accum: Any,
    lr: Tensor,
    grad: Tensor,
    name: str | None = None,
    indices: Tensor | None = None,
) -> Operation:
    """``accum += grad ** 2; var -= lr * grad / sqrt(accum)``."""
    inputs = [*handles([accum]), lr, grad]
    return apply_update("ResourceApplyAdagrad", var, inputs, name, indices=indices)


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
    indices: Tensor | None = None,
) -> Operation:
    """RMSProp with momentum (see the module docstring)."""
    inputs = [*handles([ms, mom]), lr, rho, momentum, epsilon, grad]
    return apply_update("ResourceApplyRMSProp", var, inputs, name, indices=indices)


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
    indices: Tensor | None = None,
) -> Operation:
    """Centered RMSProp: the second moment minus the squared mean gradient."""
    inputs = [*handles([mg, ms, mom]), lr, rho, momentum, epsilon, grad]
    return apply_update("ResourceApplyCenteredRMSProp", var, inputs, name, indices=indices)


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
    indices: Tensor | None = None,
) -> Operation:
    """Adam with TF1's bias correction folded into the step size. Given ``indices``,
    TF1's sparse Adam: m and v decay densely, the rows' terms are scattered in."""
    inputs = [*handles([m, v]), beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad]
    return apply_update("ResourceApplyAdam", var, inputs, name, indices=indices)
