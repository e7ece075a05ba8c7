"""Moments in pieces and losses averaged over a batch: TF1's
``tf.nn.sufficient_statistics``, ``normalize_moments``, ``weighted_moments``,
``batch_norm_with_global_normalization``, ``compute_average_loss`` and
``scale_regularization_loss``. Composites over reductions and elementwise math, in the
order TF computes them (so float32 results round alike).

* ``sufficient_statistics`` gives the element count over ``axes`` and the sums of
  ``x - shift`` and ``(x - shift) ** 2``; ``normalize_moments`` turns them into a mean
  and a variance (``E[(x-s)^2] - E[x-s]^2``, then the shift added back to the mean).
* ``weighted_moments`` weights each element by a frequency broadcast against ``x``.
* ``compute_average_loss`` is the summed per-example loss over the global batch size
  (the first dimension times the replicas: one here, there is no distribution
  strategy), zero when that size is zero; ``scale_regularization_loss`` divides by the
  number of replicas (one).

Example: ``sufficient_statistics([[1., 2.], [3., 4.]], [0])`` is ``(2, [4, 6],
[10, 20], None)``, and ``normalize_moments`` of that is ``([2, 3], [1, 1])``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...framework import dtypes, errors
from ...framework.graph import Tensor, convert_to_tensor
from ...framework.scopes import name_scope
from ...framework.tensor_util import constant_value
from .. import array as array_ops
from .. import math as math_ops
from ..constant import constant
from .impl import batch_normalization

# Distribution strategies are not provided: every loss is computed in one replica.
_REPLICAS = 1


def _keep(keep_dims: Any, keepdims: Any) -> bool:
    if keep_dims is not None and keepdims is not None:
        raise ValueError("Cannot specify both 'keep_dims' and 'keepdims'")
    return bool(keepdims if keep_dims is None else keep_dims)


def sufficient_statistics(
    x: Any,
    axes: Sequence[int],
    shift: Any = None,
    keep_dims: bool | None = None,
    name: str | None = None,
    keepdims: bool | None = None,
) -> tuple:
    """The sufficient statistics of the mean and variance of ``x`` over ``axes``.

    Args:
        x: a tensor.
        axes: the dimensions to reduce.
        shift: ``None`` or a tensor broadcastable to ``x``, subtracted before summing
            (for numerical stability).
        keep_dims: keep the reduced dimensions with size 1; ``keepdims`` is an alias.
        name: a name scope.

    Returns:
        ``(count, mean_ss, variance_ss, shift)``: the number of elements reduced (of
        ``x``'s dtype), the sums of ``x - shift`` and of its squares, and ``shift``
        (``None`` when not given).
    """
    keep = _keep(keep_dims, keepdims)
    axes = [int(a) for a in axes]
    with name_scope(name, "sufficient_statistics", [x, shift]):
        x = convert_to_tensor(x, name="x")
        dims = x.shape.as_list() if x.shape.rank is not None else None
        if dims is not None and all(dims[a] is not None for a in axes):
            n = 1
            for a in axes:
                n *= int(dims[a] or 0)  # known (checked above)
            counts = constant(n, dtype=x.dtype, name="count")
        else:
            sizes = array_ops.gather(array_ops.shape(x), axes)
            counts = math_ops.cast(math_ops.reduce_prod(sizes), x.dtype, name="count")
        if shift is not None:
            shift = convert_to_tensor(shift, dtype=x.dtype, name="shift")
            m_ss = math_ops.subtract(x, shift)
            v_ss = math_ops.squared_difference(x, shift)
        else:
            m_ss, v_ss = x, math_ops.square(x)
        m_ss = math_ops.reduce_sum(m_ss, axes, keepdims=keep, name="mean_ss")
        v_ss = math_ops.reduce_sum(v_ss, axes, keepdims=keep, name="var_ss")
    return counts, m_ss, v_ss, shift


def normalize_moments(
    counts: Any, mean_ss: Any, variance_ss: Any, shift: Any, name: str | None = None
) -> tuple:
    """The mean and variance from ``sufficient_statistics``'s ``(counts, mean_ss,
    variance_ss, shift)`` (``shift`` may be ``None``). Returns ``(mean, variance)``."""
    with name_scope(name, "normalize", [counts, mean_ss, variance_ss, shift]):
        mean_ss = convert_to_tensor(mean_ss, name="mean_ss")
        divisor = math_ops.reciprocal(
            convert_to_tensor(counts, dtype=mean_ss.dtype), name="divisor"
        )
        shifted_mean = math_ops.multiply(mean_ss, divisor, name="shifted_mean")
        if shift is not None:
            mean = math_ops.add(
                shifted_mean, convert_to_tensor(shift, dtype=mean_ss.dtype), name="mean"
            )
        else:
            mean = shifted_mean
        variance = math_ops.subtract(
            math_ops.multiply(convert_to_tensor(variance_ss, dtype=mean_ss.dtype), divisor),
            math_ops.square(shifted_mean),
            name="variance",
        )
    return mean, variance


def weighted_moments(
    x: Any,
    axes: Sequence[int],
    frequency_weights: Any,
    name: str | None = None,
    keep_dims: bool | None = None,
    keepdims: bool | None = None,
) -> tuple:
    """The frequency-weighted mean and variance of ``x`` over ``axes``.

    Args:
        x: a float tensor (float16 is accumulated in float32, as TF).
        axes: the dimensions to reduce.
        frequency_weights: a tensor broadcastable to ``x`` (cast to its dtype).
        name: a name scope.
        keep_dims: keep the reduced dimensions; ``keepdims`` is an alias.

    Returns:
        ``(mean, variance)``: ``sum(w * x) / sum(w)`` and ``sum(w * (x - mean)^2) /
        sum(w)``, ``w`` broadcast to ``x``.
    """
    keep = _keep(keep_dims, keepdims)
    axes = [int(a) for a in axes]
    with name_scope(name, "weighted_moments", [x, frequency_weights, axes]):
        x = convert_to_tensor(x, name="x")
        weights = convert_to_tensor(frequency_weights, name="frequency_weights")
        half = x.dtype == dtypes.float16
        if half:
            x = math_ops.cast(x, dtypes.float32)
        if weights.dtype != x.dtype:
            weights = math_ops.cast(weights, x.dtype)
        weighted_sum = math_ops.reduce_sum(math_ops.multiply(weights, x), axes, keepdims=True)
        broadcast = math_ops.add(weights, array_ops.zeros_like(x))
        divisor = math_ops.reciprocal(math_ops.reduce_sum(broadcast, axes, keepdims=True))
        mean = math_ops.multiply(weighted_sum, divisor)
        distsq = math_ops.reduce_sum(
            math_ops.multiply(weights, math_ops.squared_difference(x, mean)), axes, keepdims=True
        )
        variance = math_ops.multiply(distsq, divisor)
        if not keep:
            mean = array_ops.squeeze(mean, axes)
            variance = array_ops.squeeze(variance, axes)
        if half:
            mean = math_ops.cast(mean, dtypes.float16)
            variance = math_ops.cast(variance, dtypes.float16)
    return mean, variance


def batch_norm_with_global_normalization(
    t: Any = None,
    m: Any = None,
    v: Any = None,
    beta: Any = None,
    gamma: Any = None,
    variance_epsilon: Any = None,
    scale_after_normalization: Any = None,
    name: str | None = None,
    input: Any = None,
    mean: Any = None,
    variance: Any = None,
) -> Tensor:
    """TF1's older batch normalization: ``batch_normalization(t, m, v, beta, gamma if
    scale_after_normalization else None, variance_epsilon)``.

    Args:
        t: the input (``input`` is an alias), usually 4-D.
        m, v: the mean and variance over the channels (``mean``/``variance`` aliases).
        beta: the offset; gamma: the scale, used only when ``scale_after_normalization``.
        variance_epsilon: a small float added to the variance.
        name: a name scope.
    """
    t = input if t is None else t
    m = mean if m is None else m
    v = variance if v is None else v
    return batch_normalization(
        t, m, v, beta, gamma if scale_after_normalization else None, variance_epsilon, name
    )


def compute_average_loss(
    per_example_loss: Any, sample_weight: Any = None, global_batch_size: Any = None
) -> Tensor:
    """The per-example loss summed and divided by the global batch size (zero when that
    is zero).

    Args:
        per_example_loss: a tensor of rank 1 or more.
        sample_weight: optional weights, broadcastable to it (the product is taken in
            float32, then cast back, as TF).
        global_batch_size: an integer; default the first dimension of
            ``per_example_loss`` (times one replica).

    Raises:
        ValueError: a rank-0 loss.
        TypeError: a non-integer ``global_batch_size``.
        InvalidArgumentError: a negative ``global_batch_size`` known at build time.
    """
    loss = convert_to_tensor(per_example_loss)
    dtype = loss.dtype
    if loss.shape.rank == 0:
        raise ValueError(
            "Invalid value passed for `per_example_loss`. Expected a tensor with at least "
            f"rank 1. Received per_example_loss={loss} with rank 0"
        )
    if sample_weight is not None:
        weights = math_ops.cast(convert_to_tensor(sample_weight), dtypes.float32)
        loss32 = math_ops.cast(loss, dtypes.float32)
        if (
            weights.shape.rank is not None
            and loss32.shape.rank is not None
            and weights.shape.rank == loss32.shape.rank + 1
            and weights.shape.as_list()[-1] == 1
        ):
            weights = array_ops.squeeze(weights, [-1])
        loss = math_ops.cast(math_ops.multiply(loss32, weights), dtype)
    if global_batch_size is None:
        batch = array_ops.shape(loss)[0] * _REPLICAS
    else:
        batch = convert_to_tensor(global_batch_size)
        if batch.shape.rank not in (None, 0):
            raise ValueError(f"global_batch_size must be scalar, got shape {batch.shape}")
        if not batch.dtype.is_integer:
            raise TypeError(f"global_batch_size must be an integer, got {batch.dtype.name}")
        value = constant_value(batch)
        if value is not None and int(value) < 0:
            raise errors.InvalidArgumentError(
                None, None, f"global_batch_size must be non-negative, got {int(value)}"
            )
    total = math_ops.reduce_sum(loss)
    return math_ops.div_no_nan(total, math_ops.cast(batch, dtype))


def scale_regularization_loss(regularization_loss: Any) -> Tensor:
    """The regularization loss summed and divided by the number of replicas (one: no
    distribution strategy is provided)."""
    total = math_ops.reduce_sum(convert_to_tensor(regularization_loss))
    return math_ops.truediv(total, constant(_REPLICAS, dtype=total.dtype))
