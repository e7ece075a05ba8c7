"""Gamma and Poisson draws: ``tf.random.gamma`` (``RandomGamma``, with TF's implicit
reparameterization gradient to ``alpha`` through ``RandomGammaGrad``) and
``tf.random.poisson`` (``RandomPoissonV2``, not differentiable).

Both draw ``shape + param.shape`` values: ``shape`` independent samples of each
parameter. Streams and seeds work as for every stateful random op (``random_ops.py``).

``RandomGammaGrad(alpha, x)`` is ``dx/dalpha`` for a Gamma(alpha, 1) draw ``x`` held at
its CDF level: ``-(dP(alpha, x)/dalpha) / p(x; alpha)`` with ``P`` the regularized lower
incomplete gamma function (``scipy.special.gammainc``, differentiated in ``alpha`` by
central differences at a relative step of 1e-4 in float64) and ``p`` the density.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...framework import dtypes, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor
from ...framework.scopes import name_scope
from ...framework.tensor_shape import broadcast_shapes
from .. import array as array_ops
from .. import math as math_ops
from ..array.reorder import range_
from ..build import apply_op
from .random_ops import (
    draw_dtype,
    generator_source,
    seed_attrs,
    shape_dims,
    shape_tensor,
    static_shape,
)


def special_functions(xp: Any) -> Any:
    """``scipy.special`` (``cupyx.scipy.special`` for cupy)."""
    if getattr(xp, "__name__", "").startswith("cupy"):
        import cupyx.scipy.special as special
    else:
        import scipy.special as special
    return special


def _infer_draws(op: Operation) -> list:
    """(shape, param) -> shape ++ param.shape, of the op's output dtype."""
    shape, param = op.inputs
    out = static_shape(shape).concatenate(param.shape)
    return [(op.attrs["dtype"], out)]


# --- RandomGamma -----------------------------------------------------------------------------
def _gamma_kernel(ctx: Any, attrs: dict) -> Any:
    rng = generator_source(ctx, attrs)
    draw, out = draw_dtype(attrs["dtype"]), attrs["dtype"].as_numpy_dtype

    def random_gamma(shape: Any, alpha: Any) -> Any:
        size = shape_dims(shape) + tuple(alpha.shape)
        return rng().standard_gamma(alpha.astype(draw), size=size, dtype=draw).astype(out)

    return random_gamma


def _gamma_grad(op: Operation, grad: Tensor) -> list:
    shape, alpha = op.inputs
    sample = op.outputs[0]
    sample_dims = array_ops.size(shape)
    leading = array_ops.concat(
        [array_ops.ones([sample_dims], dtypes.int32), array_ops.shape(alpha)], 0
    )
    partial = random_gamma_grad(array_ops.reshape(alpha, leading), sample)
    summed = math_ops.reduce_sum(grad * partial, axis=range_(sample_dims))
    return [None, summed]


registry.register(
    registry.OpDef("RandomGamma", _infer_draws, _gamma_kernel, _gamma_grad, stateful=True)
)


def _infer_gamma_grad(op: Operation) -> list:
    alpha, x = op.inputs
    if alpha.dtype != x.dtype or not alpha.dtype.is_floating:
        raise TypeError(
            f"RandomGammaGrad needs alpha and sample of one float dtype, got "
            f"{alpha.dtype.name} and {x.dtype.name}"
        )
    return [(alpha.dtype, broadcast_shapes(alpha.shape, x.shape))]


def _gamma_grad_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp

    def random_gamma_grad(alpha: Any, x: Any) -> Any:
        special = special_functions(xp)
        a, s = xp.broadcast_arrays(alpha.astype(xp.float64), x.astype(xp.float64))
        h = 1e-4 * a
        dp_da = (special.gammainc(a + h, s) - special.gammainc(a - h, s)) / (2 * h)
        # The density where it is representable; elsewhere (x = 0, or a density that
        # underflows) the derivative is taken as 0.
        s_safe = xp.where(s > 0, s, 1.0)
        log_density = (a - 1) * xp.log(s_safe) - s_safe - special.gammaln(a)
        ok = (s > 0) & (log_density > -700)
        out = xp.where(ok, -dp_da * xp.exp(-xp.where(ok, log_density, 0.0)), 0.0)
        return out.astype(alpha.dtype)

    return random_gamma_grad


registry.register(
    registry.OpDef(
        "RandomGammaGrad", _infer_gamma_grad, _gamma_grad_kernel, registry.NOT_DIFFERENTIABLE
    )
)


def random_gamma_grad(alpha: Any, sample: Any, name: str | None = None) -> Tensor:
    """``d sample / d alpha`` of Gamma(``alpha``, 1) draws ``sample`` (elementwise,
    broadcasting), the derivative TF's gamma sampler is differentiated with."""
    return apply_op("RandomGammaGrad", [alpha, sample], {}, name=name or "RandomGammaGrad")


def _float_dtype(dtype: Any) -> dtypes.DType:
    dtype = dtypes.as_dtype(dtype)
    if dtype not in (dtypes.float16, dtypes.float32, dtypes.float64):
        raise TypeError(f"gamma needs float16, float32 or float64, got {dtype.name}")
    return dtype


def random_gamma(
    shape: Any,
    alpha: Any,
    beta: Any = None,
    dtype: Any = dtypes.float32,
    seed: int | None = None,
    name: str | None = None,
) -> Tensor:
    """Draws ``shape + broadcast(alpha, beta).shape`` samples of Gamma(``alpha``,
    rate ``beta``) (``beta`` default 1), at least the dtype's smallest normal number.

    Gradients flow to ``alpha`` (implicit reparameterization, as TF's) and ``beta``.
    """
    dtype = _float_dtype(dtype)
    with name_scope(name, "random_gamma", [shape, alpha, beta]):
        shape_t = shape_tensor(shape)
        alpha = convert_to_tensor(alpha, name="alpha", dtype=dtype)
        beta = convert_to_tensor(1 if beta is None else beta, name="beta", dtype=dtype)
        both = array_ops.broadcast_dynamic_shape(array_ops.shape(alpha), array_ops.shape(beta))
        alpha_b = array_ops.broadcast_to(alpha, both)
        static = broadcast_shapes(alpha.shape, beta.shape)
        if static.rank is not None:
            alpha_b.set_shape(static)
        attrs = dict(seed_attrs(seed), dtype=dtype)
        draws = apply_op("RandomGamma", [shape_t, alpha_b], attrs, name="RandomGamma")
        tiny = np.finfo(dtype.as_numpy_dtype).tiny
        return math_ops.maximum(tiny, draws / beta)


# --- RandomPoissonV2 --------------------------------------------------------------------------
def _poisson_kernel(ctx: Any, attrs: dict) -> Any:
    rng = generator_source(ctx, attrs)
    out = attrs["dtype"].as_numpy_dtype

    def random_poisson(shape: Any, rate: Any) -> Any:
        size = shape_dims(shape) + tuple(rate.shape)
        lam = rng().poisson(rate.astype(np.float64), size=size)
        return lam.astype(out)

    return random_poisson


registry.register(
    registry.OpDef(
        "RandomPoissonV2",
        _infer_draws,
        _poisson_kernel,
        registry.NOT_DIFFERENTIABLE,
        stateful=True,
    )
)

_POISSON_DTYPES = (dtypes.float16, dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64)


def random_poisson(
    lam: Any,
    shape: Any,
    dtype: Any = dtypes.float32,
    seed: int | None = None,
    name: str | None = None,
) -> Tensor:
    """Draws ``shape + lam.shape`` Poisson(``lam``) samples as ``dtype`` (TF1's
    argument order: rates first). Not differentiable."""
    dtype = dtypes.as_dtype(dtype)
    if dtype not in _POISSON_DTYPES:
        raise TypeError(f"poisson: unsupported output dtype {dtype.name}")
    with name_scope(name, "random_poisson", [lam, shape]):
        shape_t = shape_tensor(shape)
        lam = convert_to_tensor(lam, name="lam", preferred_dtype=dtypes.float32)
        if not (lam.dtype.is_floating or lam.dtype.is_integer):
            raise TypeError(f"poisson: lam must be numeric, got {lam.dtype.name}")
        attrs = dict(seed_attrs(seed), dtype=dtype)
        return apply_op("RandomPoissonV2", [shape_t, lam], attrs, name="RandomPoissonV2")
