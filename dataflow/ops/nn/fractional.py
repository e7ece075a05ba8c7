"""Fractional pooling: TF1's ``tf.nn.fractional_max_pool`` and ``fractional_avg_pool``
(Graham, "Fractional Max-Pooling", 2014).

A dimension of ``n`` inputs pools to ``m = floor(n / ratio)`` outputs (the division in
float32, as TF's kernel does it) through a *pooling sequence* ``s_0 = 0 < s_1 < ... <
s_m = n`` whose steps are all ``k = n // m`` or ``k + 1``. TF's two ways to draw one:

* random (``pseudo_random=False``): ``n % m`` steps of ``k + 1`` and the rest ``k``, in
  a random order. Here the order is the ranks of ``m`` uniforms: the ``n % m`` smallest
  get ``k + 1``.
* pseudo-random: ``alpha = n / m``, one ``u`` uniform on ``[0, u_max)`` with ``u_max =
  min((k + 2) / alpha - 1, (n + 1 - k) / alpha - (m - 1))``, and ``s_i = ceil(alpha (i +
  u)) - ceil(alpha u)`` for ``0 < i < m``.

Output ``i`` pools rows ``s_i .. s_{i+1} - 1`` (``.. s_{i+1}`` when ``overlapping``,
clipped to the input), and likewise for columns. The sequences follow TF's rules but
are not TF's bit-for-bit (its Philox stream is not reproduced). ``deterministic=True``
draws them from ``stateless_random_uniform`` seeded by ``(seed, seed2)`` (random seeds
chosen at build time when both are 0, as TF chooses them per kernel), so every run uses
the same regions; otherwise each run draws new ones from a ``random_uniform`` (TF then
requires both seeds to be 0). The sequences' static shape is ``[m + 1]``, what the
kernel returns (TF's shape function says ``[m]``).

The pooling is a composite, so its gradient is the graph's: each window's taps are
gathered into an ``[N, Ho, Wo, L, C]`` tensor (``L`` = the longest window's area; short
windows repeat their last row or column after the real ones, which changes neither a
maximum nor, masked out, a mean). Max pooling selects the first maximum in row-major
order with ``ArgMax`` and a ``Select``, so the gradient goes to that input, as TF's
``FractionalMaxPoolGrad`` routes it; mean pooling sums the real taps and divides by
their count, so each input gets ``dy / count`` of every window holding it, as
``FractionalAvgPoolGrad``.
"""

from __future__ import annotations

import random as py_random
from typing import Any

import numpy as np

from ...framework import dtypes, errors
from ...framework.graph import Tensor, convert_to_tensor
from ...framework.scopes import name_scope
from ...framework.tensor_shape import TensorShape
from .. import array as array_ops
from .. import math as math_ops
from ..math.ordering import argsort
from ..random.random_ops import random_uniform
from ..random.stateless import stateless_random_uniform


def _check_ratio(pooling_ratio: Any) -> list[float]:
    ratio = [float(r) for r in pooling_ratio]
    if len(ratio) != 4:
        raise ValueError(
            f"pooling_ratio must be a list of 4 floats [1.0, row_ratio, col_ratio, 1.0], "
            f"got {ratio}"
        )
    for r in ratio:
        if r < 1.0:
            raise ValueError(f"pooling_ratio cannot be smaller than 1, got: {r}")
    if ratio[0] != 1.0 or ratio[3] != 1.0:
        raise errors.UnimplementedError(
            None,
            None,
            "Fractional pooling is not yet supported on the batch nor channel dimension.",
        )
    return ratio


def _output_size(size: Any, ratio: float) -> Any:
    """``floor(size / ratio)`` in float32 (int when ``size`` is known, else a tensor)."""
    if isinstance(size, int):
        out = int(np.floor(np.float32(size) / np.float32(ratio)))
        if out <= 0:
            raise ValueError(
                f"fractional pooling of {size} inputs by a ratio of {ratio} leaves no output"
            )
        return out
    quotient = math_ops.cast(size, dtypes.float32) / np.float32(ratio)
    return math_ops.cast(math_ops.floor(quotient), dtypes.int32)


def _uniform(shape: Any, seeds: tuple | None, dtype: Any = dtypes.float32) -> Tensor:
    if seeds is None:
        return random_uniform(shape, dtype=dtype)
    return stateless_random_uniform(shape, list(seeds), dtype=dtype)


def _sequence(size: Any, out: Any, pseudo_random: bool, seeds: tuple | None) -> Tensor:
    """A pooling sequence of ``out + 1`` int64 boundaries over ``size`` inputs."""
    n = math_ops.cast(convert_to_tensor(size), dtypes.int64)
    m = math_ops.cast(convert_to_tensor(out), dtypes.int64)
    k = n // m
    zero = array_ops.zeros([1], dtypes.int64)
    if not pseudo_random:
        ranks = argsort(argsort(_uniform(array_ops.reshape(m, [1]), seeds)))
        longer = math_ops.cast(
            math_ops.less(math_ops.cast(ranks, dtypes.int64), n % m), dtypes.int64
        )
        return array_ops.concat([zero, math_ops.cumsum(k + longer)], 0)
    alpha = math_ops.cast(n, dtypes.float64) / math_ops.cast(m, dtypes.float64)
    kf = math_ops.cast(k, dtypes.float64)
    mf = math_ops.cast(m, dtypes.float64)
    u_max = math_ops.minimum(
        (kf + 2.0) / alpha - 1.0, (math_ops.cast(n, dtypes.float64) + 1.0 - kf) / alpha - (mf - 1.0)
    )
    u = _uniform([], seeds, dtypes.float64) * u_max
    inner = math_ops.cast(array_ops.range_(1, m), dtypes.float64)
    steps = math_ops.ceil(alpha * (inner + u)) - math_ops.ceil(alpha * u)
    last = array_ops.reshape(n, [1])
    return array_ops.concat([zero, math_ops.cast(steps, dtypes.int64), last], 0)


def _taps(sequence: Tensor, size: Any, overlapping: bool) -> tuple[Tensor, Tensor, Tensor]:
    """Per output, the input positions of its window padded to the longest one
    (``[out, L]``), which of them are real, and the window's length (``[out]``)."""
    n = math_ops.cast(convert_to_tensor(size), dtypes.int64)
    starts = sequence[:-1]
    ends = math_ops.minimum(sequence[1:] - (0 if overlapping else 1), n - 1)
    longest = math_ops.reduce_max(ends - starts) + 1
    offsets = array_ops.range_(longest)
    wanted = array_ops.expand_dims(starts, 1) + array_ops.expand_dims(offsets, 0)
    last = array_ops.expand_dims(ends, 1)
    return math_ops.minimum(wanted, last), math_ops.less_equal(wanted, last), ends - starts + 1


def _pool(
    value: Any,
    pooling_ratio: Any,
    pseudo_random: bool,
    overlapping: bool,
    deterministic: bool,
    seed: int,
    seed2: int,
    name: str | None,
    kind: str,
) -> tuple:
    """The shared body of both poolings (``kind`` is ``"max"`` or ``"avg"``)."""
    ratio = _check_ratio(pooling_ratio)
    op_name = "FractionalMaxPool" if kind == "max" else "FractionalAvgPool"
    if deterministic:
        if seed == 0 and seed2 == 0:
            chooser = py_random.SystemRandom()
            seed, seed2 = chooser.getrandbits(31), chooser.getrandbits(31)
        seeds: tuple | None = (int(seed), int(seed2))
    else:
        if seed != 0 or seed2 != 0:
            raise errors.InvalidArgumentError(
                None, None, "Both seed and seed2 should be 0 if `deterministic` is false."
            )
        seeds = None
    with name_scope(name, op_name):
        x = convert_to_tensor(value, name="value")
        if not (x.dtype.is_floating or x.dtype in (dtypes.int32, dtypes.int64)):
            raise TypeError(f"{op_name} needs a float, int32 or int64 input, got {x.dtype.name}")
        known = x.shape.with_rank(4).as_list()
        dynamic = array_ops.shape(x)
        sizes = [known[d] if known[d] is not None else dynamic[d] for d in (1, 2)]
        outs = [_output_size(s, r) for s, r in zip(sizes, ratio[1:3], strict=True)]
        row_seq = _sequence(sizes[0], outs[0], pseudo_random, seeds)
        col_seq = _sequence(sizes[1], outs[1], pseudo_random, seeds and (seeds[0], seeds[1] + 1))
        output = pool_with_sequences(x, row_seq, col_seq, overlapping, kind)
        output.set_shape(
            TensorShape([known[0], *(o if isinstance(o, int) else None for o in outs), known[3]])
        )
        for seq, o in zip((row_seq, col_seq), outs, strict=True):
            seq.set_shape(TensorShape([o + 1 if isinstance(o, int) else None]))
        return output, row_seq, col_seq


def pool_with_sequences(
    value: Any, row_pooling_sequence: Any, col_pooling_sequence: Any, overlapping: bool, kind: str
) -> Tensor:
    """Fractional pooling of an NHWC ``value`` over given pooling sequences (module
    docstring): ``kind`` ``"max"`` or ``"avg"``. The sequences' rules are not checked."""
    x = convert_to_tensor(value)
    rows, row_real, row_len = _taps(
        math_ops.cast(convert_to_tensor(row_pooling_sequence), dtypes.int64),
        array_ops.shape(x)[1],
        overlapping,
    )
    cols, col_real, col_len = _taps(
        math_ops.cast(convert_to_tensor(col_pooling_sequence), dtypes.int64),
        array_ops.shape(x)[2],
        overlapping,
    )
    gathered = array_ops.gather(array_ops.gather(x, rows, axis=1), cols, axis=3)
    # [N, Ho, Lr, Wo, Lc, C] -> [N, Ho, Wo, Lr * Lc, C]: taps in row-major window order
    taps = array_ops.transpose(gathered, [0, 1, 3, 2, 4, 5])
    shape = array_ops.shape(taps)
    flat = array_ops.reshape(
        taps, array_ops.stack([shape[0], shape[1], shape[2], shape[3] * shape[4], shape[5]])
    )
    zeros = array_ops.zeros_like(flat)
    if kind == "max":
        first = math_ops.argmax(flat, axis=3, output_type=dtypes.int32)
        chosen = array_ops.one_hot(first, array_ops.shape(flat)[3], axis=3, dtype=dtypes.bool)
        return math_ops.reduce_sum(math_ops.where(chosen, flat, zeros), axis=3)
    real = math_ops.logical_and(
        array_ops.reshape(row_real, array_ops.stack([1, shape[1], 1, shape[3], 1, 1])),
        array_ops.reshape(col_real, array_ops.stack([1, 1, shape[2], 1, shape[4], 1])),
    )
    real = array_ops.reshape(real, array_ops.stack([1, shape[1], shape[2], shape[3] * shape[4], 1]))
    real = math_ops.logical_and(real, array_ops.ones_like(flat, dtype=dtypes.bool))
    total = math_ops.reduce_sum(math_ops.where(real, flat, zeros), axis=3)
    count = array_ops.expand_dims(array_ops.expand_dims(row_len, 1) * col_len, -1)
    count = math_ops.cast(count, x.dtype)
    if x.dtype.is_floating:
        return math_ops.realdiv(total, count)
    return math_ops.truncatediv(total, count)


def fractional_max_pool(
    value: Any,
    pooling_ratio: Any,
    pseudo_random: bool = False,
    overlapping: bool = False,
    deterministic: bool = False,
    seed: int = 0,
    seed2: int = 0,
    name: str | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """Fractional max pooling of an NHWC ``value`` (TF1's v1 signature).

    Args:
        value: ``[batch, height, width, channels]``: float32/64, int32 or int64.
        pooling_ratio: 4 floats ``[1.0, row_ratio, col_ratio, 1.0]``, each >= 1; the
            output has ``floor(size / ratio)`` rows and columns.
        pseudo_random: draw the pooling sequences pseudo-randomly (module docstring)
            instead of randomly.
        overlapping: a window also takes the boundary row and column it shares with the
            next one.
        deterministic: use the same pooling regions in every run.
        seed, seed2: the seeds of those regions when ``deterministic`` (both 0: chosen
            at random once); must both be 0 otherwise.
        name: a name scope (default ``FractionalMaxPool``).

    Returns:
        ``(output, row_pooling_sequence, col_pooling_sequence)``: the pooled tensor and
        the int64 boundaries of the row and column windows (``rows + 1`` and
        ``cols + 1`` entries). The gradient goes to each window's first maximum.

    Raises:
        ValueError: ``pooling_ratio`` not of 4 entries or below 1, or no output.
        UnimplementedError: a ratio other than 1 for the batch or channels.
        InvalidArgumentError: seeds given without ``deterministic``.
    """
    return _pool(
        value, pooling_ratio, pseudo_random, overlapping, deterministic, seed, seed2, name, "max"
    )


def fractional_avg_pool(
    value: Any,
    pooling_ratio: Any,
    pseudo_random: bool = False,
    overlapping: bool = False,
    deterministic: bool = False,
    seed: int = 0,
    seed2: int = 0,
    name: str | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """Fractional average pooling of an NHWC ``value`` (TF1's v1 signature); the
    arguments, results and errors are those of ``fractional_max_pool``, each output the
    mean of its window (integer inputs divide with truncation, as TF's kernel). The
    gradient spreads each output's gradient evenly over its window."""
    return _pool(
        value, pooling_ratio, pseudo_random, overlapping, deterministic, seed, seed2, name, "avg"
    )
