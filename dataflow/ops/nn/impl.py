"""Composite neural-network helpers (TF's ``impl``): ``bias_add``, ``xw_plus_b``,
``l2_loss``, ``moments``, ``batch_normalization``, ``l2_normalize``,
``local_response_normalization`` (``lrn``), ``zero_fraction``, ``dropout`` and
``embedding_lookup``.

Each is a builder over math/array/random ops in a name scope, with no kernel or gradient
of its own: their gradients come from the primitives they are made of (so lookups give
dense gradients through ``gather``, as API.md promises).

``embedding_lookup`` over a sharded table. TF1 splits the ids by owner shard
(``dynamic_partition``), gathers on each shard and stitches the rows back. Here each
shard gathers *all* ids, with the ids it does not own redirected to its row 0, next to
itself (colocated), and a select keeps its own rows; the selections are summed. That
costs ``n`` gathers of ``len(ids)`` rows instead of one, but uses only dense ops with
ordinary gradients, each shard's gradient is a dense gather gradient computed on its
device, and no shard is ever copied off its device whole. Example, ``'mod'`` with 2
shards: id 5 is row 2 of shard 1; shard 0 gathers row 0 for it and discards it.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...framework import dtypes
from ...framework.graph import Tensor, convert_to_tensor
from ...framework.scopes import colocate_with, name_scope
from .. import array as array_ops
from .. import linalg as linalg_ops
from .. import math as math_ops
from ..constant import constant
from ..control.group import identity
from ..random import random_ops
from ..state.store import PartitionedVariable
from .activations import relu
from .bias import bias_add_op


def _scalar(value: Any, dtype: dtypes.DType) -> Tensor:
    return constant(value, dtype=dtype)


# --- bias_add, l2_loss, moments, l2_normalize -----------------------------------------------
def bias_add(
    value: Any, bias: Any, data_format: str | None = None, name: str | None = None
) -> Tensor:
    """Adds a 1-D ``bias`` along the channel dimension of ``value``.

    Args:
        value: a tensor of rank at least 2.
        bias: a 1-D tensor whose size is ``value``'s channel dimension (the last one for
            ``'NHWC'``, the default; the second one, index 1, for ``'NCHW'``).
        data_format: ``'NHWC'``/``'N...C'`` or ``'NCHW'``/``'NC...'``.
        name: a name for the op.
    """
    with name_scope(name, "BiasAdd", [value, bias]) as scope:
        value = convert_to_tensor(value)
        bias = convert_to_tensor(bias, dtype=value.dtype)
        channels_first = data_format is not None and data_format.upper().startswith("NC")
        rank = value.shape.rank
        if bias.shape.rank is not None and bias.shape.rank != 1:
            raise ValueError(f"bias must be 1-D, got shape {bias.shape}")
        if rank is not None and rank < 2:
            raise ValueError(f"value must have rank at least 2, got shape {value.shape}")
        if rank is not None and bias.shape.rank is not None:
            c = value.shape.as_tuple()[1 if channels_first else -1]
            b = bias.shape.as_tuple()[0]
            if c is not None and b is not None and c != b:
                raise ValueError(
                    f"Dimensions must be equal, but are {c} and {b}: bias "
                    f"{bias.shape} does not match the channels of value "
                    f"{value.shape}"
                )
        return bias_add_op(value, bias, "NCHW" if channels_first else "NHWC", name=scope)


def xw_plus_b(x: Any, weights: Any, biases: Any, name: str | None = None) -> Tensor:
    """``matmul(x, weights) + biases`` (a dense layer without activation).

    Args:
        x: a 2-D tensor ``[batch, in_units]``.
        weights: a 2-D tensor ``[in_units, out_units]``.
        biases: a 1-D tensor ``[out_units]``.
        name: a name for the op.
    """
    with name_scope(name, "xw_plus_b", [x, weights, biases]) as scope:
        return bias_add(linalg_ops.matmul(x, weights), biases, name=scope)


def relu_layer(x: Any, weights: Any, biases: Any, name: str | None = None) -> Tensor:
    """``relu(matmul(x, weights) + biases)``."""
    with name_scope(name, "relu_layer", [x, weights, biases]) as scope:
        return relu(xw_plus_b(x, weights, biases), name=scope)


def l2_loss(t: Any, name: str | None = None) -> Tensor:
    """Half the squared L2 norm of ``t``: ``sum(t ** 2) / 2``."""
    with name_scope(name, "L2Loss", [t]) as scope:
        t = convert_to_tensor(t)
        if not t.dtype.is_floating:
            raise TypeError(
                f"l2_loss needs a floating-point 't', got {t.dtype.name} for '{t.name}'"
            )
        return math_ops.multiply(
            math_ops.reduce_sum(math_ops.square(t)), _scalar(0.5, t.dtype), name=scope
        )


def moments(
    x: Any,
    axes: Sequence[int],
    shift: Any = None,
    name: str | None = None,
    keep_dims: bool | None = None,
    keepdims: bool | None = None,
) -> tuple:
    """Mean and variance of ``x`` over ``axes``.

    Float16 inputs are accumulated in float32, as in TF. The variance is the mean of
    ``(x - mean) ** 2``. (TF1 stops the gradient at ``mean`` there: harmless to first
    order, since the centered values sum to zero, but it makes second derivatives wrong;
    here they are exact.)

    Args:
        x: a float tensor.
        axes: the dimensions to reduce (``[0]`` for a batch, ``[0, 1, 2]`` for NHWC
            batch normalization).
        shift: unused (TF1 compatibility).
        name: a name scope.
        keep_dims: keep the reduced dimensions with size 1. ``keepdims`` is an alias.

    Returns:
        ``(mean, variance)``.
    """
    if keep_dims is not None and keepdims is not None:
        raise ValueError("Cannot specify both 'keep_dims' and 'keepdims'")
    keep = bool(keepdims if keep_dims is None else keep_dims)
    with name_scope(name, "moments", [x, axes]):
        x = convert_to_tensor(x)
        y = math_ops.cast(x, dtypes.float32) if x.dtype == dtypes.float16 else x
        axes = list(axes)
        mean = math_ops.reduce_mean(y, axis=axes, keepdims=True, name="mean")
        variance = math_ops.reduce_mean(
            math_ops.squared_difference(y, mean), axis=axes, keepdims=True, name="variance"
        )
        if not keep:
            mean = array_ops.squeeze(mean, axes)
            variance = array_ops.squeeze(variance, axes)
        if x.dtype == dtypes.float16:
            return math_ops.cast(mean, dtypes.float16), math_ops.cast(variance, dtypes.float16)
        return mean, variance


def batch_normalization(
    x: Any,
    mean: Any,
    variance: Any,
    offset: Any,
    scale: Any,
    variance_epsilon: float,
    name: str | None = None,
) -> Tensor:
    """Normalizes ``x``: ``(x - mean) / sqrt(variance + epsilon) * scale + offset``.

    Args:
        x: the input tensor.
        mean, variance: tensors broadcastable to ``x`` (e.g. from ``moments``).
        offset: ``beta``, added after normalizing, or ``None``.
        scale: ``gamma``, multiplied after normalizing, or ``None``.
        variance_epsilon: a small float added to ``variance``.
        name: a name scope.
    """
    with name_scope(name, "batchnorm", [x, mean, variance, scale, offset]) as scope:
        x = convert_to_tensor(x)
        inv = math_ops.rsqrt(
            math_ops.add(
                convert_to_tensor(variance, dtype=x.dtype), _scalar(variance_epsilon, x.dtype)
            )
        )
        if scale is not None:
            inv = math_ops.multiply(inv, convert_to_tensor(scale, dtype=x.dtype))
        shift = math_ops.multiply(convert_to_tensor(mean, dtype=x.dtype), inv)
        shift = (
            math_ops.subtract(convert_to_tensor(offset, dtype=x.dtype), shift)
            if offset is not None
            else math_ops.negative(shift)
        )
        return math_ops.add(math_ops.multiply(x, inv), shift, name=scope)


def zero_fraction(value: Any, name: str | None = None) -> Tensor:
    """The fraction of zeros in ``value``, as a float32 scalar."""
    with name_scope(name, "zero_fraction", [value]) as scope:
        value = convert_to_tensor(value)
        zeros = math_ops.cast(math_ops.equal(value, constant(0, dtype=value.dtype)), dtypes.float32)
        return math_ops.reduce_mean(zeros, name=scope)


def l2_normalize(
    x: Any, axis: Any = None, epsilon: float = 1e-12, name: str | None = None, dim: Any = None
) -> Tensor:
    """``x / sqrt(max(sum(x ** 2, axis), epsilon))``.

    Args:
        x: a float tensor.
        axis: the dimension(s) to normalize along (``None``: all). ``dim`` is an alias.
        epsilon: a lower bound on the squared norm (avoids dividing by zero).
        name: a name for the op.
    """
    if axis is not None and dim is not None:
        raise ValueError("Cannot specify both 'axis' and 'dim'")
    axis = dim if axis is None else axis
    with name_scope(name, "l2_normalize", [x]) as scope:
        x = convert_to_tensor(x)
        square_sum = math_ops.reduce_sum(math_ops.square(x), axis=axis, keepdims=True)
        inv_norm = math_ops.rsqrt(math_ops.maximum(square_sum, _scalar(epsilon, x.dtype)))
        return math_ops.multiply(x, inv_norm, name=scope)


def local_response_normalization(
    input: Any,
    depth_radius: int = 5,
    bias: float = 1.0,
    alpha: float = 1.0,
    beta: float = 0.5,
    name: str | None = None,
) -> Tensor:
    """Local response normalization across channels (``tf.nn.lrn``): each value of a
    4-D ``input`` divided by ``(bias + alpha * sqr_sum) ** beta``, ``sqr_sum`` the sum
    of squares over the channels within ``depth_radius`` of its own.

    The windowed sum is one product with a banded 0/1 matrix over the channels (its
    gradient and the second order come from the product's), rather than a kernel.

    Raises:
        TypeError: ``input`` is not float16 or float32 (TF1's allowed types).
        ValueError: ``input`` is not 4-D.
    """
    with name_scope(name, "LRN", [input]) as scope:
        x = convert_to_tensor(input)
        if x.dtype not in (dtypes.float16, dtypes.float32):
            raise TypeError(
                f"Value passed to parameter 'input' of LRN has DataType {x.dtype.name} "
                "not in list of allowed values: float16, float32"
            )
        if x.shape.rank not in (None, 4):
            raise ValueError(f"LRN: shape must be rank 4 but is rank {x.shape.rank}")
        depth = x.shape.as_list()[-1] if x.shape.rank is not None else None
        if depth is not None:
            band = np.abs(np.subtract.outer(np.arange(depth), np.arange(depth)))
            window = constant((band <= depth_radius).astype(x.dtype.as_numpy_dtype))
        else:
            ones = array_ops.ones(array_ops.stack([array_ops.shape(x)[-1]] * 2), dtype=x.dtype)
            window = linalg_ops.matrix_band_part(ones, depth_radius, depth_radius)
        sqr_sum = linalg_ops.tensordot(math_ops.square(x), window, [[3], [0]])
        scale = _scalar(bias, x.dtype) + _scalar(alpha, x.dtype) * sqr_sum
        return math_ops.multiply(x, math_ops.pow(scale, _scalar(-beta, x.dtype)), name=scope)


# --- dropout ------------------------------------------------------------------------------------
def dropout(
    x: Any,
    keep_prob: Any = None,
    noise_shape: Any = None,
    seed: int | None = None,
    name: str | None = None,
    rate: Any = None,
) -> Tensor:
    """Zeroes elements of ``x`` with probability ``rate`` and scales the rest by
    ``1 / (1 - rate)``, so the expected sum is unchanged.

    Args:
        x: a float tensor.
        keep_prob: TF1's probability of keeping each element (``rate = 1 - keep_prob``);
            give this or ``rate``, a float or a scalar tensor.
        noise_shape: the shape of the random keep/drop mask, broadcast against ``x``
            (e.g. ``[batch, 1, 1, channels]`` drops whole feature maps).
        seed: the op-level seed (see ``tf.set_random_seed``).
        name: a name scope.
        rate: the probability of dropping each element, in ``[0, 1)``.

    Raises:
        ValueError: both or neither of ``keep_prob`` and ``rate``, a number outside
            ``[0, 1)``, or a non-float ``x``.
    """
    if (keep_prob is None) == (rate is None):
        raise ValueError("dropout needs exactly one of keep_prob and rate")
    with name_scope(name, "dropout", [x]) as scope:
        x = convert_to_tensor(x)
        if not x.dtype.is_floating:
            raise ValueError(
                f"x has to be a floating point tensor since it's going to be "
                f"scaled. Got a {x.dtype.name} tensor instead."
            )
        if rate is None:
            if isinstance(keep_prob, numbers.Real):
                # typeshed's numbers.Real declares no comparison operators.
                if not 0 < keep_prob <= 1:  # type: ignore[operator]
                    raise ValueError(
                        f"keep_prob must be a scalar tensor or a float in the "
                        f"range (0, 1], got {keep_prob}"
                    )
                rate = 1 - keep_prob
            else:
                keep_prob = convert_to_tensor(keep_prob, dtype=x.dtype)
                rate = math_ops.subtract(_scalar(1, x.dtype), keep_prob)
        if isinstance(rate, numbers.Real):
            if not 0 <= rate < 1:  # type: ignore[operator]  # (numbers.Real, as above)
                raise ValueError(
                    f"rate must be a scalar tensor or a float in the range [0, 1), got {rate}"
                )
            if rate == 0:
                return identity(x, name=scope)
            keep = _scalar(1 - rate, x.dtype)
            rate_t = _scalar(rate, x.dtype)
        else:
            rate_t = convert_to_tensor(rate, dtype=x.dtype)
            keep = math_ops.subtract(_scalar(1, x.dtype), rate_t)
        if noise_shape is None:
            noise_shape = x.shape.as_list() if x.shape.is_fully_defined() else array_ops.shape(x)
        uniform = random_ops.random_uniform(noise_shape, seed=seed, dtype=x.dtype)
        mask = math_ops.cast(math_ops.greater_equal(uniform, rate_t), x.dtype)
        return math_ops.multiply(math_ops.divide(x, keep), mask, name=scope)


# --- embedding_lookup -----------------------------------------------------------------------------
def embedding_lookup(
    params: Any,
    ids: Any,
    partition_strategy: str = "mod",
    name: str | None = None,
    validate_indices: bool = True,
    max_norm: float | None = None,
) -> Tensor:
    """Looks up rows of ``params`` (a table, or a table sharded into a list).

    Args:
        params: a tensor or variable of shape ``[vocab, ...]``, or a list of them
            sharding the table along dimension 0.
        ids: an int32/int64 tensor of row ids.
        partition_strategy: how a list shards the table. ``'mod'``: id ``i`` is row
            ``i // n`` of shard ``i % n``; ``'div'``: contiguous blocks, the first
            ``vocab % n`` shards one row longer.
        name: a name scope.
        validate_indices: ignored (ids are always checked when the gather runs).
        max_norm: if given, each looked-up row with a larger L2 norm is scaled down to it.

    Returns:
        A tensor of shape ``ids.shape + params.shape[1:]``. The gradient with respect to
        a variable table (or each variable shard) is an ``IndexedSlices`` of the rows
        looked up (in a shard, the ids it owns), as in TF1.
    """
    if isinstance(params, (list, tuple, PartitionedVariable)):
        shards = list(params)
    else:
        shards = [params]
    if not shards:
        raise ValueError("embedding_lookup needs at least one params tensor")
    if partition_strategy not in ("mod", "div"):
        raise ValueError(f"partition_strategy must be 'mod' or 'div', got {partition_strategy!r}")
    with name_scope(name, "embedding_lookup", shards + [ids]) as scope:
        ids = convert_to_tensor(ids)
        if ids.dtype not in (dtypes.int32, dtypes.int64):
            raise TypeError(f"ids must be int32 or int64, got {ids.dtype.name}")
        if len(shards) == 1:
            with colocate_with(_colocation_target(shards[0])):
                result = array_ops.gather(convert_to_tensor(shards[0]), ids)
        else:
            tables = [convert_to_tensor(p) for p in shards]
            result = _sharded_lookup(shards, tables, ids, partition_strategy)
        if max_norm is not None:
            result = _clip_rows(result, ids, max_norm)
        return identity(result, name=scope)


def _colocation_target(p: Any) -> Any:
    handle = getattr(p, "op", None)
    return handle if handle is not None else convert_to_tensor(p).op


def _sharded_lookup(shards: list, tables: list[Tensor], ids: Tensor, strategy: str) -> Tensor:
    """TF1's partitioned lookup: the ids are split by the shard owning them (a
    ``boolean_mask`` per shard stands in for ``dynamic_partition``), each shard gathers
    its own rows next to itself, and the rows go back to their places (one
    ``UnsortedSegmentSum`` over the concatenated pieces: ``dynamic_stitch``). So each
    shard's gradient is an ``IndexedSlices`` of just the ids it owns, as in TF1."""
    n = len(tables)
    dtype = ids.dtype
    flat = array_ops.reshape(ids, [-1])
    sizes = [t.shape[0].value if t.shape.rank else None for t in tables]
    if strategy == "mod":
        owner = math_ops.floormod(flat, _scalar(n, dtype))
        local = math_ops.floordiv(flat, _scalar(n, dtype))
    else:
        known_sizes = [s for s in sizes if s is not None]
        if len(known_sizes) < len(sizes):
            raise ValueError("partition_strategy='div' needs shards with a static first dimension")
        starts = [sum(known_sizes[:p]) for p in range(n)]
        # owner = number of shard starts <= id, minus one.
        owner = (
            math_ops.add_n(
                [
                    math_ops.cast(math_ops.greater_equal(flat, _scalar(start, dtype)), dtype)
                    for start in starts[1:]
                ]
            )
            if n > 2
            else math_ops.cast(math_ops.greater_equal(flat, _scalar(starts[1], dtype)), dtype)
        )
        offsets = array_ops.gather(constant(starts, dtype=dtype), owner)
        local = math_ops.subtract(flat, offsets)
    count = array_ops.size(flat)
    positions = array_ops.range_(count)
    pieces, places = [], []
    for p, (shard, table) in enumerate(zip(shards, tables, strict=True)):
        mine = math_ops.equal(owner, _scalar(p, dtype))
        places.append(array_ops.boolean_mask(positions, mine))
        rows = array_ops.boolean_mask(local, mine)
        with colocate_with(_colocation_target(shard)):
            pieces.append(array_ops.gather(table, rows))
    stitched = array_ops.unsorted_segment_sum(
        array_ops.concat(pieces, 0), array_ops.concat(places, 0), count
    )
    rest = tables[0].shape[1:]
    if rest.rank is None:
        raise ValueError("embedding_lookup needs shards of known rank")
    if ids.shape.is_fully_defined() and rest.is_fully_defined():
        return array_ops.reshape(stitched, ids.shape.as_list() + rest.as_list())
    tail = array_ops.shape(stitched)[1:]
    return array_ops.reshape(stitched, array_ops.concat([array_ops.shape(ids), tail], 0))


def _clip_rows(result: Tensor, ids: Tensor, max_norm: float) -> Tensor:
    """Scales each looked-up row whose L2 norm exceeds ``max_norm`` down to it."""
    rank = result.shape.rank
    ids_rank = ids.shape.rank
    if rank is None or ids_rank is None:
        raise ValueError("max_norm needs ids and params of known rank")
    axes = list(range(ids_rank, rank))
    if not axes:
        return result
    norm = math_ops.sqrt(math_ops.reduce_sum(math_ops.square(result), axis=axes, keepdims=True))
    limit = _scalar(max_norm, result.dtype)
    scale = math_ops.divide(limit, math_ops.maximum(norm, limit))
    return math_ops.multiply(result, scale)


def fused_batch_norm(
    x: Any,
    scale: Any,
    offset: Any,
    mean: Any = None,
    variance: Any = None,
    epsilon: float = 0.001,
    data_format: str = "NHWC",
    is_training: bool = True,
    name: str | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """Batch normalization of a 4-D NHWC ``x`` over its channels, TF1's fused form:
    returns ``(y, mean, variance)``. Training normalizes with the batch's statistics and
    returns the batch mean and the *sample* variance (``n / (n - 1)``, for the moving
    averages); otherwise ``mean`` and ``variance`` normalize and come back unchanged.
    ``epsilon`` is at least 1.001e-5, as TF1 makes it.

    Raises:
        ValueError: ``x`` is not 4-D, ``data_format`` is not NHWC, or ``mean`` and
            ``variance`` are missing when not training.
    """
    if data_format != "NHWC":
        raise ValueError("fused_batch_norm: only data_format='NHWC' is provided")
    with name_scope(name, "FusedBatchNorm", [x, scale, offset]):
        x = convert_to_tensor(x)
        if x.shape.rank not in (None, 4):
            raise ValueError(f"x must be 4-D, got shape {x.shape}")
        epsilon = max(float(epsilon), 1.001e-5)
        if is_training:
            batch_mean, batch_var = moments(x, [0, 1, 2])
            y = batch_normalization(x, batch_mean, batch_var, offset, scale, epsilon)
            count = math_ops.cast(array_ops.size(x) // array_ops.shape(x)[3], x.dtype)
            return y, batch_mean, batch_var * count / math_ops.maximum(count - 1.0, 1.0)
        if mean is None or variance is None:
            raise ValueError("both 'mean' and 'variance' must be given when is_training is False")
        y = batch_normalization(x, mean, variance, offset, scale, epsilon)
        return y, convert_to_tensor(mean), convert_to_tensor(variance)


def log_poisson_loss(
    targets: Any, log_input: Any, compute_full_loss: bool = False, name: str | None = None
) -> Tensor:
    """The negative log-likelihood of ``targets`` under a Poisson distribution of rate
    ``exp(log_input)``, up to a constant: ``exp(log_input) - log_input * targets``; with
    ``compute_full_loss``, plus Stirling's approximation of ``log(targets!)`` for
    targets above 1.

    Raises:
        ValueError: ``targets`` and ``log_input`` have different shapes.
    """
    with name_scope(name, "log_poisson_loss", [targets, log_input]):
        log_input = convert_to_tensor(log_input)
        targets = convert_to_tensor(targets, dtype=log_input.dtype)
        if not targets.shape.is_compatible_with(log_input.shape):
            raise ValueError(
                f"log_input and targets must have the same shape ({log_input.shape} vs "
                f"{targets.shape})"
            )
        result = math_ops.exp(log_input) - log_input * targets
        if not compute_full_loss:
            return result
        stirling = (
            targets * math_ops.log(targets) - targets + 0.5 * math_ops.log(2.0 * np.pi * targets)
        )
        small = math_ops.logical_and(targets >= 0.0, targets <= 1.0)
        return result + math_ops.where(small, array_ops.zeros_like(targets), stirling)
