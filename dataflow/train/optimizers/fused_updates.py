"""The dense optimizer updates on host float32/float64 arrays as compiled loops (numba,
the ``fast`` extra; ``ops/compiled.py``), each in the order of operations of its ufunc
kernel in ``training_ops``.

A ufunc kernel makes one pass over memory per operation: Adam's twelve, RMSProp's ten,
momentum's four. A loop reads each operand once and does the arithmetic in registers.
Per element every operation is rounded once, in the ufunc kernel's order, so the values
are the ufunc kernel's (and TF1's where that kernel matches TF1's, as Adam's does on
x86-64, whose TF wheels have no fused multiply-adds): bit for bit on this project's
VM; the tests allow a few roundings a step, so that they hold on any CPU. Adam, per
element::

    m   = (g - m) * (1 - beta1) + m
    v   = (g * g - v) * (1 - beta2) + v
    var = var - (m * alpha) / (sqrt(v) + epsilon)

1.33M float32 parameters: 0.86 ms in one loop on one thread of this project's VM, where
the blocked BLAS route (``adam_blas``, taken without numba) takes 2.9 ms and TF1 1.7 ms
(docs/performance.md).

Each loop works in place: the variable and its slots are both read and written, and
are separate buffers. (A loop whose inputs and outputs were all distinct arrays that
might alias was not vectorized: LLVM's alias checks gave up, 4.1 ms.) Where someone
holds an old buffer (``outs`` differ from ``olds``), its values are copied into the
fresh one first. Hyper-parameters are passed as the arrays' dtype, so a float32 update
computes in float32. Below ``MIN_SIZE`` elements the ufunc kernels stay: their dozen
calls cost microseconds, and a small program should not pay numba's import and first
compile (~0.7 s) to save them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...ops.compiled import Kernel

MIN_SIZE = 1 << 12


# Signatures: (variable, its slots..., gradient, hyper-parameters...), all updated in place.
def _gradient_descent(var, g, alpha):
    for i in range(var.shape[0]):
        var[i] = var[i] - g[i] * alpha


def _momentum(var, accum, g, lr, momentum):
    for i in range(var.shape[0]):
        acc = accum[i] * momentum + g[i]
        accum[i] = acc
        var[i] = var[i] - acc * lr


def _nesterov_momentum(var, accum, g, lr, momentum):
    for i in range(var.shape[0]):
        acc = accum[i] * momentum + g[i]
        accum[i] = acc
        var[i] = var[i] - (g[i] * lr + (acc * momentum) * lr)


def _adagrad(var, accum, g, lr):
    for i in range(var.shape[0]):
        grad = g[i]
        acc = grad * grad + accum[i]
        accum[i] = acc
        var[i] = var[i] - (grad * lr) / np.sqrt(acc)


def _rms_prop(var, ms, mom, g, lr, one_minus_rho, momentum, epsilon):
    for i in range(var.shape[0]):
        grad = g[i]
        ms_i = (grad * grad - ms[i]) * one_minus_rho + ms[i]
        ms[i] = ms_i
        mom_i = (grad * lr) / np.sqrt(ms_i + epsilon) + mom[i] * momentum
        mom[i] = mom_i
        var[i] = var[i] - mom_i


def _centered_rms_prop(var, mg, ms, mom, g, lr, one_minus_rho, momentum, epsilon):
    for i in range(var.shape[0]):
        grad = g[i]
        ms_i = (grad * grad - ms[i]) * one_minus_rho + ms[i]
        ms[i] = ms_i
        mg_i = (grad - mg[i]) * one_minus_rho + mg[i]
        mg[i] = mg_i
        denom = np.sqrt((ms_i - mg_i * mg_i) + epsilon)
        mom_i = (grad * lr) / denom + mom[i] * momentum
        mom[i] = mom_i
        var[i] = var[i] - mom_i


def _adam(var, m, v, g, alpha, one_minus_beta1, one_minus_beta2, epsilon):
    for i in range(var.shape[0]):
        grad = g[i]
        m_i = (grad - m[i]) * one_minus_beta1 + m[i]
        v_i = (grad * grad - v[i]) * one_minus_beta2 + v[i]
        m[i] = m_i
        v[i] = v_i
        var[i] = var[i] - (m_i * alpha) / (np.sqrt(v_i) + epsilon)


def applies_to(arrays: tuple) -> bool:
    """Whether a loop can update ``arrays`` (variable, slots, gradient and outputs): at
    least ``MIN_SIZE`` elements of one float dtype, each a C-contiguous, aligned numpy
    array."""
    dtype = arrays[0].dtype
    return (
        arrays[0].size >= MIN_SIZE
        and dtype in (np.float32, np.float64)
        and all(
            type(a) is np.ndarray and a.dtype == dtype and a.flags.c_contiguous and a.flags.aligned
            for a in arrays
        )
    )


class FusedUpdate:
    """One optimizer's loop. ``update(olds, outs, grad, *hyper)`` applies it to the
    variable and slots ``olds``, writing ``outs`` (each the old buffer itself or a
    fresh one), and returns ``True``; or returns ``False``, having changed nothing,
    where the arrays do not qualify (``applies_to``) or numba is unavailable: the
    caller then runs its ufunc kernel."""

    def __init__(self, loop: Callable) -> None:
        self.kernel = Kernel(loop)

    def update(self, olds: list, outs: list, grad: Any, *hyper: Any) -> bool:
        if not applies_to((*olds, *outs, grad)) or self.kernel.compiled() is None:
            return False
        for old, new in zip(olds, outs, strict=True):
            if new is not old:
                new[...] = old
        scalar = outs[0].dtype.type
        flat = [a.reshape(-1) for a in (*outs, grad)]
        ran, _ = self.kernel(*flat, *(scalar(h) for h in hyper))
        return ran


GRADIENT_DESCENT = FusedUpdate(_gradient_descent)
MOMENTUM = FusedUpdate(_momentum)
NESTEROV_MOMENTUM = FusedUpdate(_nesterov_momentum)
ADAGRAD = FusedUpdate(_adagrad)
RMS_PROP = FusedUpdate(_rms_prop)
CENTERED_RMS_PROP = FusedUpdate(_centered_rms_prop)
ADAM = FusedUpdate(_adam)
