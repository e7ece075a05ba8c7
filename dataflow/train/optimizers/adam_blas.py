"""Adam's dense update on host (numpy) float32/float64 arrays through BLAS level-1 calls.

numpy has no fused ufuncs, so the TF1-ordered update costs twelve elementwise passes
(``training_ops``' ``_adam_kernel``); even on data in cache each costs ~0.2-0.4 ms per
3.2M float32, and a dense layer's kernel spends most of its update there. BLAS's level-1
routines fold a scale and an add into one pass, in place, and take offsets (no slice
objects per block): the update below is eight calls per block::

    m   = beta1 * m + (1 - beta1) * g                      scal, axpy
    t   = g ** 2;  v = beta2 * v + (1 - beta2) * t           square, rot
    t   = m / (sqrt(v) + epsilon);  var += -alpha * t        sqrt, add, divide, axpy

``rot`` (a plane rotation: ``x = c*x + s*y``, ``y = c*y - s*x``, with ``c = beta2``,
``s = 1 - beta2``) updates v in one pass; what it leaves in the scratch ``t`` is not
used. These are TF1's formulas rearranged (TF1 writes ``m += (g - m) * (1 - beta1)``
and ``var -= m * alpha / (sqrt(v) + epsilon)``), so each step rounds differently from
TF1's in the last bits (OpenBLAS may also round a multiply-add once, not twice). The
drift over 300 steps against TF1 is in docs/performance.md and
tests/train/test_adam_blas.py. TF1's own sparse Adam
(``_apply_sparse_shared``) uses the ``beta1 * m + ...`` form too.

Blocks of ``BLOCK`` elements keep a block's operands in cache between the calls. The
calls run on one thread when the process's BLAS is held to one (``threadpoolctl``).
scipy's BLAS library is loaded on the first update, not at ``import dataflow`` (importing
``scipy.linalg`` took 0.11 s of the 0.6 s import); the runtime's own limits
(``runtime.inter_op``, ``runtime.server``) load it before they take effect, so they
cover it.
"""

from __future__ import annotations

from typing import Any

# Elements per block: 1 MB per float32 operand, five operands (var, m, v, the gradient,
# the scratch) in the 32 MB L3 of this project's 2-core VM. Measured on the 3.2M-element
# update: 256K-512K blocks 4.8-4.9 ms, 128K 5.2-5.6, 32K (an L2-sized block) 5.6-6.0,
# 1M 5.3, the whole array at once 6.2-6.5.
BLOCK = 1 << 18
# Smaller variables keep the ufunc kernel: below ~16K elements the checks and the
# conversions here cost more than the passes saved (a 1024-element bias: 21 -> 27 us a
# step through BLAS; 16K about even; 51K 0.90x; 131K 0.83x).
MIN_SIZE = 1 << 15

# The routine names per dtype; ``update`` looks them up in scipy's BLAS.
_ROUTINES = {
    "float32": ("sscal", "saxpy", "srot"),
    "float64": ("dscal", "daxpy", "drot"),
}


def applies_to(arrays: tuple) -> bool:
    """Whether the BLAS update is worth it and can work on ``arrays`` in place: at least
    ``MIN_SIZE`` elements, of one real float dtype BLAS has (float32/float64),
    C-contiguous and aligned. scipy's wrappers would copy anything else silently, and
    the update would land in the copy."""
    dtype = arrays[0].dtype
    return (
        arrays[0].size >= MIN_SIZE
        and dtype.name in _ROUTINES
        and all(a.dtype == dtype and a.flags.c_contiguous and a.flags.aligned for a in arrays)
    )


def update(
    xp: Any,
    olds: list,
    outs: list,
    grad: Any,
    scratch: Any,
    alpha: Any,
    beta1: Any,
    beta2: Any,
    epsilon: Any,
) -> None:
    """Applies one Adam step to ``olds`` = ``[var, m, v]``, writing ``outs`` (each the
    old buffer itself or a fresh one to fill), a block at a time. ``scratch``: a buffer
    of ``min(BLOCK, var.size)`` elements. Hyper-parameters are scalars of the arrays'
    dtype; ``alpha`` is the bias-corrected step size. Call only if ``applies_to`` the
    arrays."""
    from scipy.linalg import blas

    scal, axpy, rot = (getattr(blas, name) for name in _ROUTINES[olds[0].dtype.name])
    var, m, v = (a.reshape(-1) for a in outs)
    g = grad.reshape(-1)
    # Fresh buffers (someone holds the old one): each block is copied over first.
    copies = [
        (old.reshape(-1), new.reshape(-1))
        for old, new in zip(olds, outs, strict=True)
        if new is not old
    ]
    # f2py takes Python floats; each is exactly the dtype's value (float32 widens).
    one_minus_beta1, one_minus_beta2 = float(1 - beta1), float(1 - beta2)
    b1, b2, minus_alpha = float(beta1), float(beta2), -float(alpha)
    size = var.shape[0]
    for lo in range(0, size, BLOCK):
        k = min(BLOCK, size - lo)
        hi = lo + k
        for old, new in copies:
            new[lo:hi] = old[lo:hi]
        t = scratch[:k]
        scal(b1, m, k, lo, 1)
        axpy(g, m, k, one_minus_beta1, lo, 1, lo, 1)
        xp.square(g[lo:hi], out=t)
        rot(v, t, b2, one_minus_beta2, k, lo, 1, 0, 1, 1, 1)
        xp.sqrt(v[lo:hi], out=t)
        xp.add(t, epsilon, out=t)
        xp.divide(m[lo:hi], t, out=t)
        axpy(t, var, k, minus_alpha, 0, 1, lo, 1)
