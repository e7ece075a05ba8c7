"""The special-function rows of the op table (``tests/ops/op_table.py``) added with
issue 32's long tail: Bessel functions, incomplete gamma and beta functions, ``zeta``,
the ``x log y`` family, inverse error functions.

References are ``autograd.scipy.special``'s where it has the function; the modified
Bessel functions of the second kind, which it lacks, are ``scipy.special``'s with their
textbook derivatives (``K0' = -K1``, ``K1' = -K0 - K1 / x``) declared to autograd here.
Inputs sit inside each function's domain (``K`` and ``Y`` need ``x > 0``).
"""

from __future__ import annotations

import autograd.numpy as anp
import autograd.scipy.special as asp
import numpy as np
import scipy.special as sp
from autograd.extend import defvjp, primitive

from dataflow.testing.op_spec import OpSpec, call

RNG = np.random.default_rng(2718)


def rand(*shape):
    return RNG.standard_normal(shape)


def positive(*shape, low=0.3, high=3.0):
    return RNG.uniform(low, high, shape)


k0 = primitive(sp.k0)
k1 = primitive(sp.k1)
defvjp(k0, lambda ans, x: lambda g: -g * k1(x))
defvjp(k1, lambda ans, x: lambda g: g * (-k0(x) - k1(x) / x))


def k0e(x):
    return anp.exp(x) * k0(x)


def k1e(x):
    return anp.exp(x) * k1(x)


def i0e(x):
    return anp.exp(-anp.abs(x)) * asp.i0(x)


def i1e(x):
    return anp.exp(-anp.abs(x)) * asp.i1(x)


def _bessel(name, reference, x, **kwargs):
    return OpSpec(f"bessel_{name}", call(f"math.special.bessel_{name}"), reference, [x], **kwargs)


ROWS = [
    _bessel("i0", asp.i0, rand(3, 4), rtol=1e-6),
    _bessel("i0e", i0e, rand(3, 4), rtol=1e-6),
    _bessel("i1", asp.i1, rand(3, 4), rtol=1e-6),
    _bessel("i1e", i1e, rand(3, 4), rtol=1e-6),
    _bessel("j0", asp.j0, rand(3, 4) * 3, rtol=1e-6),
    _bessel("j1", asp.j1, rand(3, 4) * 3, rtol=1e-6),
    _bessel("y0", asp.y0, positive(3, 4), rtol=1e-6),
    _bessel("y1", asp.y1, positive(3, 4), rtol=1e-6),
    _bessel("k0", k0, positive(3, 4), rtol=1e-6),
    _bessel("k0e", k0e, positive(3, 4), rtol=1e-6),
    _bessel("k1", k1, positive(3, 4), rtol=1e-6),
    _bessel("k1e", k1e, positive(3, 4), rtol=1e-6),
]
