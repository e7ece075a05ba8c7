"""Initializers: objects that build a variable's initial value (TF1's ``initializers``).

An initializer is called as ``init(shape, dtype=None, partition_info=None)`` and
returns a tensor of that shape and dtype (its own ``dtype`` when ``dtype`` is None);
``get_variable`` calls it inside the variable's ``Initializer`` name scope. The random
ones build the random ops of ``random.py`` with the initializer's ``seed``, so a seeded
initializer (or a graph seed) gives the same initial values in every session, the same
within this project but not TensorFlow's numbers.

Constant fills (``zeros``, ``ones``, scalar ``constant``) are ``Fill`` ops of a scalar
(beyond a thousand elements, for ``zeros``/``ones``), so a large variable's initializer
does not embed a large array in the graph (which Dask would ship to the scheduler).

Variance scaling (``glorot_*``, ``he_*``, ``lecun_*``) uses TF's fans: for a shape
``[..., fan_in_dim, fan_out_dim]`` with receptive field ``r = prod(shape[:-2])``,
``fan_in = shape[-2] * r`` and ``fan_out = shape[-1] * r`` (a conv kernel ``[kh, kw, in,
out]`` has ``fan_in = kh*kw*in``); a vector has ``fan_in = fan_out = shape[0]``; a scalar
1. E.g. ``glorot_uniform`` on ``[3, 5]`` draws from ``U(-l, l)``, ``l = sqrt(6 / (3 + 5))``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ...framework import dtypes, registry
from ...framework.graph import Operation, Tensor
from ...framework.scopes import name_scope
from ...framework.tensor_shape import TensorShape, as_shape
from .. import array as array_ops
from ..build import apply_op
from ..constant import constant
from ..random import random_ops


def _assert_float_dtype(dtype: Any) -> dtypes.DType:
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(
            f"Argument `dtype` is expected to be floating point. Received: {dtype.name}."
        )
    return dtype


def _as_dims(shape: Any) -> list[int]:
    """An initializer's ``shape`` argument (list, tuple, ``TensorShape``) as ints."""
    shape = as_shape(shape)
    if not shape.is_fully_defined():
        raise ValueError(f"an initializer needs a fully defined shape, got {shape}")
    return shape.as_list()


def _fill(shape: Any, value: Any, dtype: dtypes.DType, name: str) -> Tensor:
    """``value`` (a scalar) filled into ``shape`` at run time."""
    with name_scope(None, name):
        return array_ops.fill(_as_dims(shape), constant(value, dtype=dtype))


def _compute_fans(shape: list[int]) -> tuple[int, int]:
    """TF's ``(fan_in, fan_out)`` of a weight shape (see the module docstring)."""
    if len(shape) < 1:
        return 1, 1
    if len(shape) == 1:
        return int(shape[0]), int(shape[0])
    if len(shape) == 2:
        return int(shape[0]), int(shape[1])
    receptive_field = 1
    for dim in shape[:-2]:
        receptive_field *= dim
    return int(shape[-2] * receptive_field), int(shape[-1] * receptive_field)


class Initializer:
    """Base class of initializers: ``init(shape, dtype=None, partition_info=None)``."""

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Tensor:
        raise NotImplementedError

    def get_config(self) -> dict:
        """The constructor arguments, for ``from_config``."""
        return {}

    @classmethod
    def from_config(cls, config: dict) -> Initializer:
        return cls(**config)


class Zeros(Initializer):
    """Initializes to 0 (``False`` for bool, ``b""`` for strings)."""

    def __init__(self, dtype: Any = dtypes.float32):
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Tensor:
        dtype = dtypes.as_dtype(dtype if dtype is not None else self.dtype)
        if dtype == dtypes.string:
            return _fill(shape, b"", dtype, "zeros")
        return array_ops.zeros(_as_dims(shape), dtype)

    def get_config(self) -> dict:
        return {"dtype": self.dtype.name}


class Ones(Initializer):
    """Initializes to 1."""

    def __init__(self, dtype: Any = dtypes.float32):
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Tensor:
        dtype = dtypes.as_dtype(dtype if dtype is not None else self.dtype)
        return array_ops.ones(_as_dims(shape), dtype)

    def get_config(self) -> dict:
        return {"dtype": self.dtype.name}


class Constant(Initializer):
    """Initializes to a constant value.

    Args:
        value: a Python scalar (filled into the shape), or a list / numpy array. A list
            with fewer elements than the shape is padded with its last element (TF1);
            more elements is a ``ValueError``.
        dtype: the default dtype.
        verify_shape: require ``value``'s shape to equal the requested shape.
    """

    def __init__(self, value: Any = 0, dtype: Any = dtypes.float32, verify_shape: bool = False):
        if not (np.isscalar(value) or isinstance(value, (list, tuple, np.ndarray))):
            raise TypeError(
                f"Invalid type for initial value={value} of type: "
                f"{type(value).__name__}. Expected Python scalar, list or tuple "
                "of values, or numpy.ndarray."
            )
        self.value = value
        self.dtype = dtypes.as_dtype(dtype)
        self._verify_shape = verify_shape

    def __call__(
        self,
        shape: Any,
        dtype: Any = None,
        partition_info: Any = None,
        verify_shape: bool | None = None,
    ) -> Tensor:
        dtype = dtypes.as_dtype(dtype if dtype is not None else self.dtype)
        verify_shape = self._verify_shape if verify_shape is None else verify_shape
        dims = _as_dims(shape)
        value = np.asarray(self.value)
        if value.size == 1 and not verify_shape:
            return _fill(dims, value.reshape(()), dtype, "Const")
        if verify_shape and list(value.shape) != dims:
            raise TypeError(f"Expected Tensor's shape: {tuple(dims)}, got {value.shape}.")
        size = int(np.prod(dims, dtype=np.int64))
        flat = value.reshape(-1)
        if flat.size > size:
            raise ValueError(
                f"Too many elements provided. Takes at most {size}, but got {flat.size}."
            )
        if 0 < flat.size < size:
            flat = np.concatenate([flat, np.repeat(flat[-1:], size - flat.size)])
        return constant(flat.reshape(dims), dtype=dtype)

    def get_config(self) -> dict:
        return {"value": self.value, "dtype": self.dtype.name}


class RandomUniform(Initializer):
    """Initializes from ``U[minval, maxval)`` (``maxval`` default 1 for floats)."""

    def __init__(
        self,
        minval: Any = 0.0,
        maxval: Any = None,
        seed: int | None = None,
        dtype: Any = dtypes.float32,
    ):
        self.minval = minval
        self.maxval = maxval
        self.seed = seed
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Tensor:
        dtype = dtypes.as_dtype(dtype if dtype is not None else self.dtype)
        return random_ops.random_uniform(
            _as_dims(shape), self.minval, self.maxval, dtype, seed=self.seed
        )

    def get_config(self) -> dict:
        return {
            "minval": self.minval,
            "maxval": self.maxval,
            "seed": self.seed,
            "dtype": self.dtype.name,
        }


class _MeanStddevInitializer(Initializer):
    """A draw of the random op ``_draw(shape, mean, stddev, dtype, seed=)``."""

    _draw: Callable[..., Tensor]

    def __init__(
        self,
        mean: Any = 0.0,
        stddev: Any = 1.0,
        seed: int | None = None,
        dtype: Any = dtypes.float32,
    ):
        self.mean = mean
        self.stddev = stddev
        self.seed = seed
        self.dtype = _assert_float_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Tensor:
        dtype = dtypes.as_dtype(dtype if dtype is not None else self.dtype)
        return self._draw(_as_dims(shape), self.mean, self.stddev, dtype, seed=self.seed)

    def get_config(self) -> dict:
        return {
            "mean": self.mean,
            "stddev": self.stddev,
            "seed": self.seed,
            "dtype": self.dtype.name,
        }


class RandomNormal(_MeanStddevInitializer):
    """Initializes from a normal distribution with ``mean`` and ``stddev``."""

    _draw = staticmethod(random_ops.random_normal)


class TruncatedNormal(_MeanStddevInitializer):
    """Initializes from a normal distribution truncated at 2 ``stddev`` (re-drawn)."""

    _draw = staticmethod(random_ops.truncated_normal)


class UniformUnitScaling(Initializer):
    """``U(-m, m)`` with ``m = factor * sqrt(3 / input_size)`` (deprecated in TF1)."""

    def __init__(self, factor: float = 1.0, seed: int | None = None, dtype: Any = dtypes.float32):
        self.factor = factor
        self.seed = seed
        self.dtype = _assert_float_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Tensor:
        dtype = dtypes.as_dtype(dtype if dtype is not None else self.dtype)
        dims = _as_dims(shape)
        scale_dims = dims if partition_info is None else _as_dims(partition_info.full_shape)
        input_size = max(float(np.prod(scale_dims[:-1])), 1.0)
        limit = math.sqrt(3 / input_size) * self.factor
        return random_ops.random_uniform(dims, -limit, limit, dtype, seed=self.seed)

    def get_config(self) -> dict:
        return {"factor": self.factor, "seed": self.seed, "dtype": self.dtype.name}


class VarianceScaling(Initializer):
    """Scales the spread to the weight's fans.

    With ``n`` = ``fan_in``, ``fan_out`` or their mean (``mode``), the variance is
    ``scale / n``: ``truncated_normal`` (alias ``normal``) uses stddev ``sqrt(scale / n) /
    0.8796...`` (so the truncated distribution has that variance), ``untruncated_normal``
    stddev ``sqrt(scale / n)``, ``uniform`` the limit ``sqrt(3 scale / n)``.

    Raises:
        ValueError: ``scale <= 0``, or an unknown ``mode`` or ``distribution``.
    """

    def __init__(
        self,
        scale: float = 1.0,
        mode: str = "fan_in",
        distribution: str = "truncated_normal",
        seed: int | None = None,
        dtype: Any = dtypes.float32,
    ):
        if scale <= 0.0:
            raise ValueError(f"Argument `scale` must be a positive float. Received: {scale}")
        if mode not in {"fan_in", "fan_out", "fan_avg"}:
            raise ValueError(
                "Argument `mode` should be one of ('fan_in', 'fan_out', "
                f"'fan_avg'). Received: {mode}"
            )
        distribution = distribution.lower()
        if distribution not in {"normal", "uniform", "truncated_normal", "untruncated_normal"}:
            raise ValueError(
                "Argument `distribution` should be one of ('normal', "
                "'uniform', 'truncated_normal', 'untruncated_normal'). "
                f"Received: {distribution}"
            )
        self.scale = scale
        self.mode = mode
        self.distribution = distribution
        self.seed = seed
        self.dtype = _assert_float_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Tensor:
        dtype = dtypes.as_dtype(dtype if dtype is not None else self.dtype)
        dims = _as_dims(shape)
        scale_dims = dims if partition_info is None else _as_dims(partition_info.full_shape)
        fan_in, fan_out = _compute_fans(scale_dims)
        scale = self.scale
        if self.mode == "fan_in":
            scale /= max(1.0, fan_in)
        elif self.mode == "fan_out":
            scale /= max(1.0, fan_out)
        else:
            scale /= max(1.0, (fan_in + fan_out) / 2.0)
        if self.distribution in ("normal", "truncated_normal"):
            # 0.8796... is the stddev of a unit normal truncated to (-2, 2).
            stddev = math.sqrt(scale) / 0.87962566103423978
            return random_ops.truncated_normal(dims, 0.0, stddev, dtype, seed=self.seed)
        if self.distribution == "untruncated_normal":
            return random_ops.random_normal(dims, 0.0, math.sqrt(scale), dtype, seed=self.seed)
        limit = math.sqrt(3.0 * scale)
        return random_ops.random_uniform(dims, -limit, limit, dtype, seed=self.seed)

    def get_config(self) -> dict:
        return {
            "scale": self.scale,
            "mode": self.mode,
            "distribution": self.distribution,
            "seed": self.seed,
            "dtype": self.dtype.name,
        }


class _Glorot(VarianceScaling):
    """Variance scaling with ``scale=1``, ``mode="fan_avg"`` and the class's distribution."""

    _distribution: str

    def __init__(self, seed: int | None = None, dtype: Any = dtypes.float32):
        super().__init__(
            scale=1.0, mode="fan_avg", distribution=self._distribution, seed=seed, dtype=dtype
        )

    def get_config(self) -> dict:
        return {"seed": self.seed, "dtype": self.dtype.name}


class GlorotUniform(_Glorot):
    """Glorot (Xavier) uniform: ``U(-l, l)``, ``l = sqrt(6 / (fan_in + fan_out))``."""

    _distribution = "uniform"


class GlorotNormal(_Glorot):
    """Glorot (Xavier) normal: truncated normal, variance ``2 / (fan_in + fan_out)``."""

    _distribution = "truncated_normal"


# --- Orthogonal --------------------------------------------------------------------------
def _infer_orthogonal(op: Operation) -> list:
    return [(op.attrs["dtype"], TensorShape(op.attrs["shape"]))]


def _orthogonal_kernel(ctx: Any, attrs: dict) -> Any:
    # A fused op (draw, QR, sign fix, reshape) because the op library has no QR op of
    # its own; it is stateful and seeded like the random ops.
    xp, rng = ctx.xp, random_ops.generator_source(ctx, attrs)
    dims, gain = tuple(attrs["shape"]), attrs["gain"]
    draw = random_ops.draw_dtype(attrs["dtype"])
    out = attrs["dtype"].as_numpy_dtype
    rows = math.prod(dims[:-1])
    cols = int(dims[-1])
    flat = (cols, rows) if rows < cols else (rows, cols)

    def orthogonal() -> Any:
        a = rng().standard_normal(flat, dtype=draw)
        q, r = xp.linalg.qr(a)
        q = q * xp.sign(xp.diagonal(r))  # makes the distribution uniform (Haar)
        if rows < cols:
            q = q.T
        return (q.reshape(dims) * gain).astype(out)

    return orthogonal


registry.register(
    registry.OpDef(
        "RandomOrthogonal",
        _infer_orthogonal,
        _orthogonal_kernel,
        registry.NOT_DIFFERENTIABLE,
        stateful=True,
    )
)


class Orthogonal(Initializer):
    """Initializes to a random orthogonal matrix (rows or columns orthonormal).

    A shape ``[..., n]`` is flattened to ``[prod(...), n]``; the QR factorization of a
    normal random matrix, with the signs of ``R``'s diagonal moved into ``Q``, gives a
    uniformly distributed orthogonal matrix, scaled by ``gain``.
    """

    def __init__(self, gain: float = 1.0, seed: int | None = None, dtype: Any = dtypes.float32):
        self.gain = gain
        self.seed = seed
        self.dtype = _assert_float_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Tensor:
        dtype = _assert_float_dtype(dtype if dtype is not None else self.dtype)
        dims = _as_dims(shape)
        if len(dims) < 2:
            raise ValueError(
                "The tensor to initialize, specified by argument `shape` must "
                f"be at least two-dimensional. Received shape={dims}"
            )
        attrs = dict(
            random_ops.seed_attrs(self.seed), dtype=dtype, shape=tuple(dims), gain=float(self.gain)
        )
        with name_scope(None, "orthogonal"):
            return apply_op("RandomOrthogonal", [], attrs)

    def get_config(self) -> dict:
        return {"gain": self.gain, "seed": self.seed, "dtype": self.dtype.name}


class Identity(Initializer):
    """Initializes a 2-D shape to ``gain`` times the identity matrix."""

    def __init__(self, gain: float = 1.0, dtype: Any = dtypes.float32):
        self.gain = gain
        self.dtype = _assert_float_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Tensor:
        dims = _as_dims(shape)
        if len(dims) != 2:
            raise ValueError(
                "The tensor to initialize, specified by argument `shape` must "
                f"be at least two-dimensional. Received shape={dims}"
            )
        dtype = dtypes.as_dtype(dtype if dtype is not None else self.dtype)
        return constant(self.gain * np.eye(dims[0], dims[1]), dtype=dtype, name="identity")

    def get_config(self) -> dict:
        return {"gain": self.gain, "dtype": self.dtype.name}


def lecun_normal(seed: int | None = None) -> VarianceScaling:
    """Truncated normal with variance ``1 / fan_in``."""
    return VarianceScaling(scale=1.0, mode="fan_in", distribution="truncated_normal", seed=seed)


def lecun_uniform(seed: int | None = None) -> VarianceScaling:
    """Uniform with variance ``1 / fan_in``."""
    return VarianceScaling(scale=1.0, mode="fan_in", distribution="uniform", seed=seed)


def he_normal(seed: int | None = None) -> VarianceScaling:
    """Truncated normal with variance ``2 / fan_in``."""
    return VarianceScaling(scale=2.0, mode="fan_in", distribution="truncated_normal", seed=seed)


def he_uniform(seed: int | None = None) -> VarianceScaling:
    """Uniform with variance ``2 / fan_in``."""
    return VarianceScaling(scale=2.0, mode="fan_in", distribution="uniform", seed=seed)


zeros_initializer = Zeros
ones_initializer = Ones
constant_initializer = Constant
random_uniform_initializer = RandomUniform
random_normal_initializer = RandomNormal
truncated_normal_initializer = TruncatedNormal
uniform_unit_scaling_initializer = UniformUnitScaling
variance_scaling_initializer = VarianceScaling
glorot_uniform_initializer = GlorotUniform
glorot_normal_initializer = GlorotNormal
orthogonal_initializer = Orthogonal
identity_initializer = Identity
