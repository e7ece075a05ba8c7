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


ROWS: list = [
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


zeta_ref = primitive(sp.zeta)
defvjp(zeta_ref, None, lambda ans, x, q: lambda g: -g * x * zeta_ref(x + 1, q))
dawsn = primitive(sp.dawsn)
defvjp(dawsn, lambda ans, x: lambda g: g * (1 - 2 * x * ans))
expi = primitive(sp.expi)
defvjp(expi, lambda ans, x: lambda g: g * anp.exp(x) / x)
fresnel_s = primitive(lambda x: sp.fresnel(x)[0])
fresnel_c = primitive(lambda x: sp.fresnel(x)[1])
defvjp(fresnel_s, lambda ans, x: lambda g: g * anp.sin(np.pi / 2 * x * x))
defvjp(fresnel_c, lambda ans, x: lambda g: g * anp.cos(np.pi / 2 * x * x))
spence = primitive(sp.spence)
defvjp(spence, lambda ans, x: lambda g: g * anp.log(x) / (1 - x))


def unit(*shape):
    return RNG.uniform(0.05, 0.95, shape)


def nonzero(*shape):
    return RNG.choice([-1.0, 1.0], shape) * RNG.uniform(0.3, 2.0, shape)


ROWS += [
    # autograd differentiates the incomplete gamma function in x only; the gradient in
    # a (IgammaGradA, no gradient of its own) is compared with TF1's and with finite
    # differences in tests/ops/math/test_math_tail_tf.py.
    OpSpec("igamma", call("math.igamma"), asp.gammainc, [positive(3, 4), positive(3, 4)], wrt=(1,)),
    OpSpec(
        "igammac", call("math.igammac"), asp.gammaincc, [positive(3, 4), positive(3, 4)], wrt=(1,)
    ),
    OpSpec(
        "igamma_grad_a",
        lambda tf, a, x: tf.gradients(tf.math.igamma(a, x), a)[0],
        lambda a, x: np.gradient(
            sp.gammainc(a + np.array([[[-1e-5]], [[0]], [[1e-5]]]), x), 1e-5, axis=0
        )[1],
        [positive(2, 3), positive(2, 3)],
        grad=0,
        rtol=1e-7,
        tf_rtol=1e-6,
    ),
    OpSpec(
        "betainc",
        call("math.betainc"),
        asp.betainc,
        [positive(3, 4), positive(3, 4), unit(3, 4)],
        wrt=(2,),
        rtol=1e-6,
    ),
    OpSpec("zeta", call("math.zeta"), zeta_ref, [positive(3, 4) + 1.5, positive(3, 4)], wrt=(1,)),
    OpSpec("erfinv", call("math.erfinv"), asp.erfinv, [unit(3, 4) * 1.8 - 0.9], rtol=1e-6),
    OpSpec(
        "ndtri",
        call("math.ndtri"),
        lambda p: np.sqrt(2.0) * asp.erfinv(2 * p - 1),
        [unit(3, 4)],
        rtol=1e-6,
    ),
    OpSpec("erfcinv", call("math.erfcinv"), asp.erfcinv, [unit(3, 4) * 1.8 + 0.1], rtol=1e-6),
    OpSpec("dawsn", call("math.special.dawsn"), dawsn, [rand(3, 4)], rtol=1e-6),
    OpSpec("expint", call("math.special.expint"), expi, [positive(3, 4)], rtol=1e-6),
    OpSpec("fresnel_cos", call("math.special.fresnel_cos"), fresnel_c, [rand(3, 4)], rtol=1e-6),
    OpSpec("fresnel_sin", call("math.special.fresnel_sin"), fresnel_s, [rand(3, 4)], rtol=1e-6),
    OpSpec("spence", call("math.special.spence"), spence, [positive(3, 4)], rtol=1e-6),
    OpSpec(
        "xlogy", call("math.xlogy"), lambda x, y: x * anp.log(y), [nonzero(3, 4), positive(3, 4)]
    ),
    OpSpec("xdivy", call("math.xdivy"), lambda x, y: x / y, [nonzero(3, 4), nonzero(3, 4)]),
    OpSpec(
        "xlog1py",
        call("math.xlog1py"),
        lambda x, y: x * anp.log1p(y),
        [nonzero(3, 4), positive(3, 4)],
    ),
    OpSpec(
        "multiply_no_nan",
        call("math.multiply_no_nan"),
        lambda x, y: x * y,
        [rand(3, 4), nonzero(3, 4)],
    ),
    OpSpec(
        "nextafter",
        call("math.nextafter"),
        np.nextafter,
        [rand(3, 4), rand(3, 4)],
        grad=0,
        rtol=0,
        tf_rtol=0,
    ),
    OpSpec(
        "segment_prod",
        lambda tf, x: tf.math.segment_prod(x, [0, 0, 1, 3, 3]),
        lambda x: anp.stack([x[0] * x[1], x[2], anp.ones(x.shape[1:]), x[3] * x[4]]),
        [rand(5, 3)],
    ),
]

ROWS += [
    OpSpec(
        "cumulative_logsumexp",
        lambda tf, x: tf.math.cumulative_logsumexp(x, axis=1),
        lambda x: anp.log(anp.cumsum(anp.exp(x), axis=1)),
        [rand(3, 5)],
    ),
    OpSpec(
        "cumulative_logsumexp_exclusive_reverse",
        lambda tf, x: tf.math.cumulative_logsumexp(x, axis=0, exclusive=True, reverse=True)[:-1],
        lambda x: anp.log(anp.cumsum(anp.exp(x[::-1]), axis=0))[::-1][1:],
        [rand(4, 3)],
    ),
]
