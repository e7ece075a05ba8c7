"""Adam's dense update on host float32/float64 arrays as one compiled loop (numba, the
``fast`` extra; ``ops/compiled.py``), in TF1's formulas and order of operations.

Per element, each operation rounded once as TF1's Eigen kernel rounds it on x86-64 (its
wheels have no fused multiply-adds) and as the ufunc kernel of ``training_ops`` does::

    m   = (g - m) * (1 - beta1) + m
    v   = (g * g - v) * (1 - beta2) + v
    var = var - (m * alpha) / (sqrt(v) + epsilon)

so the values are TF1's bit for bit, unlike the BLAS route (``adam_blas``), whose
rearranged formulas differ in the last bits. One pass reads var, m, v and g and writes
var, m and v: 1.33M float32 parameters in 0.86 ms on one thread of this project's VM,
where the BLAS blocks take 2.9 ms and TF1 1.7 ms (docs/performance.md).

The loop works in place: var, m and v are both read and written, and are separate
buffers (a loop whose inputs and outputs are all distinct arrays that may alias is not
vectorized: LLVM's alias checks gave up, 4.1 ms). Where someone holds an old buffer
(``outs`` differ from ``olds``), the old values are copied into the fresh one first.
Scalars are passed as the arrays' dtype, so a float32 update computes in float32.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...ops.compiled import Kernel

# Below this many elements the ufunc kernel's dozen calls cost a few microseconds, and a
# small program should not pay numba's import and first compile (~0.7 s) to save them.
MIN_SIZE = 1 << 12


def _adam_in_place(var, m, v, g, alpha, one_minus_beta1, one_minus_beta2, epsilon):  # noqa: ANN001, ANN202
    for i in range(var.shape[0]):
        grad = g[i]
        m_i = (grad - m[i]) * one_minus_beta1 + m[i]
        v_i = (grad * grad - v[i]) * one_minus_beta2 + v[i]
        m[i] = m_i
        v[i] = v_i
        var[i] = var[i] - (m_i * alpha) / (np.sqrt(v_i) + epsilon)


_kernel = Kernel(_adam_in_place)


def applies_to(arrays: tuple) -> bool:
    """Whether the loop can update ``arrays`` (var, m, v, grad and the outputs): at least
    ``MIN_SIZE`` elements of one float dtype, each C-contiguous and aligned."""
    dtype = arrays[0].dtype
    return (
        arrays[0].size >= MIN_SIZE
        and dtype in (np.float32, np.float64)
        and all(
            type(a) is np.ndarray and a.dtype == dtype and a.flags.c_contiguous and a.flags.aligned
            for a in arrays
        )
    )


def update(olds: list, outs: list, grad: Any, alpha: Any, beta1: Any, beta2: Any, epsilon: Any) -> bool:
    """Applies one Adam step to ``olds`` = ``[var, m, v]``, writing ``outs`` (each the old
    buffer itself or a fresh one), and returns ``True``; or returns ``False``, having
    changed nothing, where numba is unavailable (the caller then takes its own route).
    Call only where ``applies_to`` the arrays; ``alpha`` is the bias-corrected step."""
    if _kernel.compiled() is None:
        return False
    for old, new in zip(olds, outs, strict=True):
        if new is not old:
            new[...] = old
    scalar = outs[0].dtype.type
    flat = [a.reshape(-1) for a in (*outs, grad)]
    one = scalar(1)
    ran, _ = _kernel(
        *flat, scalar(alpha), one - scalar(beta1), one - scalar(beta2), scalar(epsilon)
    )
    return ran
