"""Stateless random ops (``tf.random.stateless_*``): the values are a function of the
``seed`` argument (a shape-``[2]`` integer tensor) and the shape alone, the same on
every run and in every session, with no stream kept between runs.

Each kernel seeds a fresh generator (``xp.random.default_rng``) from the two seed
words and draws as the stateful op of the same distribution does. The numbers are not
TF's (TF uses Philox counters); equal seeds give equal values within this project, and
the distributions are TF's: uniform on ``[minval, maxval)``, normal, normal truncated at
two standard deviations, categorical from logits, gamma (with the gradient to ``alpha``
of ``distributions.py``), Poisson and binomial. Not differentiable otherwise.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...framework import dtypes, errors, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor
from ...framework.scopes import name_scope
from ...framework.tensor_shape import TensorShape, broadcast_shapes
from ...framework.tensor_util import constant_value
from .. import array as array_ops
from .. import math as math_ops
from ..build import apply_op
from .distributions import random_gamma_grad, special_functions
from .random_ops import draw_dtype, shape_dims, shape_tensor, static_shape

_FLOATS = (dtypes.float16, dtypes.float32, dtypes.float64)


def _generator(xp: Any, seed: Any) -> Any:
    words = [int(w) & 0xFFFFFFFF for w in seed.reshape(-1).tolist()]
    if len(words) != 2:
        raise errors.InvalidArgumentError(
            None, None, f"seed must have shape [2], not [{len(words)}]"
        )
    return xp.random.default_rng((words[0] << 32) | words[1])


def _seed_tensor(seed: Any) -> Tensor:
    seed = convert_to_tensor(seed, name="seed", preferred_dtype=dtypes.int64)
    if seed.dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"seed must be int32 or int64, got {seed.dtype.name}")
    if not seed.shape.is_compatible_with(TensorShape([2])):
        raise ValueError(f"seed must have shape [2], not {seed.shape}")
    return seed


def _infer(op: Operation) -> list:
    """(shape, seed, params...) -> shape, or shape broadcast with the params."""
    out = static_shape(op.inputs[0])
    for t in op.inputs[2:]:
        out = broadcast_shapes(out, t.shape)
    return [(op.attrs["dtype"], out)]


def _kernel(draw: Any) -> Any:
    """A stateless kernel: a fresh generator from the seed, then ``draw``."""

    def kernel(ctx: Any, attrs: dict) -> Any:
        xp, dtype = ctx.xp, attrs["dtype"]

        def stateless(shape: Any, seed: Any, *params: Any) -> Any:
            rng = _generator(xp, seed)
            size = shape_dims(shape)
            return xp.asarray(draw(xp, rng, size, dtype, *params)).astype(dtype.as_numpy_dtype)

        return stateless

    return kernel


def _truncated(xp: Any, rng: Any, size: tuple, dtype: Any) -> Any:
    draw = draw_dtype(dtype)
    x = rng.standard_normal(size, dtype=draw)
    flat = x.reshape(-1)
    redo = xp.flatnonzero(xp.abs(flat) >= 2)
    while redo.size:
        fresh = rng.standard_normal(int(redo.size), dtype=draw)
        flat[redo] = fresh
        redo = redo[xp.abs(fresh) >= 2]
    return x


def _uniform_int(xp: Any, rng: Any, size: tuple, dtype: Any, low: Any, high: Any) -> Any:
    if int(low) >= int(high):
        raise errors.InvalidArgumentError(
            None, None, f"Need minval < maxval: {int(low)} >= {int(high)}"
        )
    return rng.integers(int(low), int(high), size=size, dtype=dtype.as_numpy_dtype)


def _gamma(xp: Any, rng: Any, size: tuple, dtype: Any, alpha: Any) -> Any:
    return rng.standard_gamma(xp.broadcast_to(alpha, size).astype(np.float64), size=size)


def _binomial(xp: Any, rng: Any, size: tuple, dtype: Any, counts: Any, probs: Any) -> Any:
    n = xp.broadcast_to(counts, size).astype(np.int64)
    p = xp.broadcast_to(probs, size).astype(np.float64)
    return rng.binomial(n, p, size=size)


def _stateless_gamma_grad(op: Operation, grad: Tensor) -> list:
    alpha, sample = op.inputs[2], op.outputs[0]
    partial = random_gamma_grad(array_ops.broadcast_to(alpha, array_ops.shape(sample)), sample)
    summed = grad * partial
    # Sum over the dimensions alpha was broadcast along (the pass undoes broadcasting).
    return [None, None, summed]


def _unit_uniform(xp: Any, rng: Any, size: tuple, dtype: Any) -> Any:
    return rng.random(size, dtype=draw_dtype(dtype))


def _normal(xp: Any, rng: Any, size: tuple, dtype: Any) -> Any:
    return rng.standard_normal(size, dtype=draw_dtype(dtype))


def _poisson(xp: Any, rng: Any, size: tuple, dtype: Any, lam: Any) -> Any:
    return rng.poisson(xp.broadcast_to(lam, size).astype(np.float64), size=size)


_NONE = registry.NOT_DIFFERENTIABLE
registry.register(registry.OpDef("StatelessRandomUniform", _infer, _kernel(_unit_uniform), _NONE))
registry.register(registry.OpDef("StatelessRandomNormal", _infer, _kernel(_normal), _NONE))
registry.register(registry.OpDef("StatelessTruncatedNormal", _infer, _kernel(_truncated), _NONE))
registry.register(registry.OpDef("StatelessRandomUniformInt", _infer, _kernel(_uniform_int), _NONE))
registry.register(
    registry.OpDef("StatelessRandomGammaV2", _infer, _kernel(_gamma), _stateless_gamma_grad)
)
registry.register(registry.OpDef("StatelessRandomPoisson", _infer, _kernel(_poisson), _NONE))
registry.register(registry.OpDef("StatelessRandomBinomial", _infer, _kernel(_binomial), _NONE))


def _float(dtype: Any, what: str) -> dtypes.DType:
    dtype = dtypes.as_dtype(dtype)
    if dtype not in _FLOATS:
        raise TypeError(f"{what}: dtype must be float16, float32 or float64, got {dtype.name}")
    return dtype


def _apply(op_type: str, shape: Any, seed: Any, params: list, dtype: Any) -> Tensor:
    return apply_op(
        op_type, [shape_tensor(shape), _seed_tensor(seed), *params], {"dtype": dtype}, name=op_type
    )


def stateless_random_uniform(
    shape: Any,
    seed: Any,
    minval: Any = 0,
    maxval: Any = None,
    dtype: Any = dtypes.float32,
    name: str | None = None,
) -> Tensor:
    """Uniform values on ``[minval, maxval)`` (``[0, 1)`` for floats by default; integer
    dtypes need both bounds), a function of ``seed`` and ``shape``.

    Raises:
        ValueError: an integer dtype without ``minval`` and ``maxval``, or another dtype.
    """
    dtype = dtypes.as_dtype(dtype)
    if dtype not in (*_FLOATS, dtypes.int32, dtypes.int64):
        raise ValueError(f"stateless_random_uniform: unsupported dtype {dtype.name}")
    with name_scope(name, "stateless_random_uniform", [shape, seed, minval, maxval]):
        if dtype.is_integer:
            if minval is None or maxval is None:
                raise ValueError(
                    f"For integer dtype {dtype.name}, minval and maxval must be both `None` "
                    "or both non-`None`."
                )
            low = convert_to_tensor(minval, dtype=dtype, name="min")
            high = convert_to_tensor(maxval, dtype=dtype, name="max")
            return _apply("StatelessRandomUniformInt", shape, seed, [low, high], dtype)
        unit = _apply("StatelessRandomUniform", shape, seed, [], dtype)
        low = convert_to_tensor(minval, dtype=dtype, name="min")
        high = convert_to_tensor(1 if maxval is None else maxval, dtype=dtype, name="max")
        return math_ops.add(unit * (high - low), low)


def stateless_random_normal(
    shape: Any,
    seed: Any,
    mean: Any = 0.0,
    stddev: Any = 1.0,
    dtype: Any = dtypes.float32,
    name: str | None = None,
) -> Tensor:
    """Normal values of ``mean`` and ``stddev``, a function of ``seed`` and ``shape``."""
    dtype = _float(dtype, "stateless_random_normal")
    with name_scope(name, "stateless_random_normal", [shape, seed, mean, stddev]):
        z = _apply("StatelessRandomNormal", shape, seed, [], dtype)
        return math_ops.add(
            z * convert_to_tensor(stddev, dtype=dtype), convert_to_tensor(mean, dtype=dtype)
        )


def stateless_truncated_normal(
    shape: Any,
    seed: Any,
    mean: Any = 0.0,
    stddev: Any = 1.0,
    dtype: Any = dtypes.float32,
    name: str | None = None,
) -> Tensor:
    """Normal values redrawn beyond two standard deviations, a function of ``seed``."""
    dtype = _float(dtype, "stateless_truncated_normal")
    with name_scope(name, "stateless_truncated_normal", [shape, seed, mean, stddev]):
        z = _apply("StatelessTruncatedNormal", shape, seed, [], dtype)
        return math_ops.add(
            z * convert_to_tensor(stddev, dtype=dtype), convert_to_tensor(mean, dtype=dtype)
        )


def stateless_random_gamma(
    shape: Any,
    seed: Any,
    alpha: Any,
    beta: Any = None,
    dtype: Any = dtypes.float32,
    name: str | None = None,
) -> Tensor:
    """Gamma(``alpha``, rate ``beta``) values of ``shape`` (which ``alpha`` and ``beta``
    broadcast to), a function of ``seed``; differentiable in ``alpha`` and ``beta``."""
    dtype = _float(dtype, "stateless_random_gamma")
    with name_scope(name, "stateless_random_gamma", [shape, seed, alpha, beta]):
        alpha = convert_to_tensor(alpha, dtype=dtype, name="alpha")
        draws = _apply("StatelessRandomGammaV2", shape, seed, [alpha], dtype)
        if beta is not None:
            draws = draws / convert_to_tensor(beta, dtype=dtype, name="beta")
        return math_ops.maximum(np.finfo(dtype.as_numpy_dtype).tiny, draws)


def stateless_random_poisson(
    shape: Any, seed: Any, lam: Any, dtype: Any = dtypes.int32, name: str | None = None
) -> Tensor:
    """Poisson(``lam``) values of ``shape`` (``lam`` broadcasts to it) as ``dtype``."""
    dtype = dtypes.as_dtype(dtype)
    with name_scope(name, "stateless_random_poisson", [shape, seed, lam]):
        lam = convert_to_tensor(lam, name="lam", preferred_dtype=dtypes.float32)
        return _apply("StatelessRandomPoisson", shape, seed, [lam], dtype)


def stateless_random_binomial(
    shape: Any,
    seed: Any,
    counts: Any,
    probs: Any,
    output_dtype: Any = dtypes.int32,
    name: str | None = None,
) -> Tensor:
    """Binomial(``counts``, ``probs``) values of ``shape`` as ``output_dtype``."""
    dtype = dtypes.as_dtype(output_dtype)
    with name_scope(name, "stateless_random_binomial", [shape, seed, counts, probs]):
        counts = convert_to_tensor(counts, name="counts", preferred_dtype=dtypes.float32)
        probs = convert_to_tensor(probs, name="probs", dtype=counts.dtype)
        return _apply("StatelessRandomBinomial", shape, seed, [counts, probs], dtype)


# --- StatelessMultinomial ---------------------------------------------------------------------
def _infer_multinomial(op: Operation) -> list:
    logits, num_samples = op.inputs[:2]
    if not logits.dtype.is_floating:
        raise TypeError(f"logits must be floating point, got {logits.dtype.name}")
    if logits.shape.rank not in (None, 2):
        raise ValueError(f"logits must be 2-D [batch_size, num_classes], got shape {logits.shape}")
    n = constant_value(num_samples)
    batch = logits.shape[0].value if logits.shape.rank == 2 else None
    return [(op.attrs["output_dtype"], TensorShape([batch, None if n is None else int(n)]))]


def _multinomial_kernel(ctx: Any, attrs: dict) -> Any:
    xp, out = ctx.xp, attrs["output_dtype"].as_numpy_dtype

    def stateless_multinomial(logits: Any, num_samples: Any, seed: Any) -> Any:
        n = int(num_samples)
        batch, classes = logits.shape
        if batch == 0 or n == 0:
            return xp.zeros((batch, n), dtype=out)
        # Gumbel-max: the argmax of logits plus Gumbel noise is a categorical draw.
        noise = -xp.log(-xp.log(_generator(xp, seed).random((batch, n, classes))))
        return xp.argmax(logits.astype(xp.float64)[:, None, :] + noise, axis=-1).astype(out)

    return stateless_multinomial


registry.register(
    registry.OpDef(
        "StatelessMultinomial", _infer_multinomial, _multinomial_kernel, registry.NOT_DIFFERENTIABLE
    )
)


def stateless_categorical(
    logits: Any, num_samples: Any, seed: Any, dtype: Any = dtypes.int64, name: str | None = None
) -> Tensor:
    """``[batch_size, num_samples]`` class indices drawn from ``logits``' categorical
    distributions, a function of ``seed``."""
    with name_scope(name, "stateless_categorical", [logits, seed]):
        logits = convert_to_tensor(logits, name="logits")
        num = convert_to_tensor(num_samples, name="num_samples", preferred_dtype=dtypes.int32)
        attrs = {"output_dtype": dtypes.as_dtype(dtype)}
        return apply_op(
            "StatelessMultinomial",
            [logits, num, _seed_tensor(seed)],
            attrs,
            name="StatelessMultinomial",
        )


def stateless_multinomial(
    logits: Any,
    num_samples: Any,
    seed: Any,
    output_dtype: Any = dtypes.int64,
    name: str | None = None,
) -> Tensor:
    """TF1's name of ``stateless_categorical``."""
    with name_scope(name, "stateless_multinomial", [logits, seed]):
        return stateless_categorical(logits, num_samples, seed, output_dtype)


# --- StatelessTruncatedNormalBounded ----------------------------------------------------------
def _bounded_truncated(xp: Any, rng: Any, size: tuple, dtype: Any, low: Any, high: Any) -> Any:
    """Standard normal draws conditioned on ``[low, high]``, by the inverse CDF; a range
    right of 0 is drawn mirrored (from ``[-high, -low]``) so both tails keep precision."""
    special = special_functions(xp)
    a = xp.broadcast_to(low, size).astype(np.float64)
    b = xp.broadcast_to(high, size).astype(np.float64)
    if bool(xp.any(a > b)):
        raise errors.InvalidArgumentError(
            None, None, "Invalid truncation bounds: minvals must not exceed maxvals"
        )
    flip = a > 0
    lo, hi = xp.where(flip, -b, a), xp.where(flip, -a, b)
    cdf_lo, cdf_hi = special.ndtr(lo), special.ndtr(hi)
    u = rng.random(size)
    z = special.ndtri(cdf_lo + u * (cdf_hi - cdf_lo))
    z = xp.clip(z, lo, hi)
    return xp.where(flip, -z, z)


def _bounded_grad(op: Operation, grad: Tensor) -> list:
    """Implicit reparameterization: the draw ``z`` keeps its CDF level ``u`` within
    ``[a, b]``, so ``dz/da = phi(a) (1 - u) / phi(z)`` and ``dz/db = phi(b) u / phi(z)``."""
    a, b, z = op.inputs[2], op.inputs[3], op.outputs[0]

    def cdf(x: Tensor) -> Tensor:
        return 0.5 * (1.0 + math_ops.erf(x * np.sqrt(0.5)))

    mass = cdf(b) - cdf(a)
    u = math_ops.div_no_nan(cdf(z) - cdf(a), mass)
    da = math_ops.exp((z * z - a * a) / 2.0) * (1.0 - u)
    db = math_ops.exp((z * z - b * b) / 2.0) * u
    return [None, None, grad * da, grad * db]


registry.register(
    registry.OpDef(
        "StatelessTruncatedNormalBounded", _infer, _kernel(_bounded_truncated), _bounded_grad
    )
)


def stateless_parameterized_truncated_normal(
    shape: Any,
    seed: Any,
    means: Any = 0.0,
    stddevs: Any = 1.0,
    minvals: Any = -2.0,
    maxvals: Any = 2.0,
    name: str | None = None,
) -> Tensor:
    """Normal(``means``, ``stddevs``) values of ``shape`` conditioned on
    ``[minvals, maxvals]`` (each parameter broadcasting to ``shape``), a function of
    ``seed``; differentiable in all four parameters (implicit reparameterization)."""
    with name_scope(
        name, "stateless_parameterized_truncated_normal", [shape, means, stddevs, minvals, maxvals]
    ):
        means = convert_to_tensor(means, name="means")
        dtype = _float(means.dtype, "stateless_parameterized_truncated_normal")
        stddevs = convert_to_tensor(stddevs, name="stddevs", dtype=dtype)
        minvals = convert_to_tensor(minvals, name="minvals", dtype=dtype)
        maxvals = convert_to_tensor(maxvals, name="maxvals", dtype=dtype)
        low, high = (minvals - means) / stddevs, (maxvals - means) / stddevs
        z = _apply("StatelessTruncatedNormalBounded", shape, seed, [low, high], dtype)
        return math_ops.add(means, stddevs * z)
