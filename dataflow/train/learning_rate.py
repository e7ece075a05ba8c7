"""Learning-rate schedules of ``tf.train`` (TF1's ``learning_rate_decay``).

Each function returns a scalar tensor computed from the global step at every run, built
from ordinary ops (composites, no kernels of their own), with TF1's name scopes and
formulas:

* ``exponential_decay``: ``lr * decay_rate ** (step / decay_steps)``, the exponent
  floored when ``staircase``;
* ``piecewise_constant``: ``values[i]`` on the i-th interval of ``boundaries``
  (``x <= boundaries[0]`` is the first);
* ``polynomial_decay``: from ``lr`` to ``end_learning_rate`` over ``decay_steps`` as
  ``(1 - step / decay_steps) ** power``, optionally restarting (``cycle``);
* ``natural_exp_decay``: ``lr * exp(-decay_rate * p)``, ``p = step / decay_steps``
  (floored when ``staircase``); ``inverse_time_decay``: ``lr / (1 + decay_rate * p)``;
* ``cosine_decay``: half a cosine from ``lr`` down to ``alpha * lr`` over
  ``decay_steps``, flat after; ``cosine_decay_restarts``: the same curve restarted
  (SGDR), period ``i`` lasting ``first_decay_steps * t_mul**i`` steps and peaking at
  ``lr * m_mul**i``;
* ``linear_cosine_decay``: ``lr * ((alpha + linear) * cosine + beta)``, ``linear``
  falling from 1 to 0 over ``decay_steps``, ``cosine`` making ``num_periods`` periods;
  ``noisy_linear_cosine_decay`` adds Gaussian noise to ``linear`` at every run, of
  variance ``initial_variance / (1 + step)**variance_decay``.

Example: ``exponential_decay(0.1, step, 100, 0.5, staircase=True)`` is 0.1 for steps
0..99, 0.05 for 100..199, ...
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Sequence
from typing import Any

from ..framework.graph import Tensor, convert_to_tensor, get_default_graph
from ..ops import math as math_ops
from ..ops.constant import constant
from ..ops.random.random_ops import random_normal


def _as_dtype(value: Any, dtype: Any) -> Tensor:
    """``value`` (a number or tensor) as a tensor of ``dtype``."""
    if isinstance(value, Tensor) or hasattr(value, "_as_graph_element"):
        t = convert_to_tensor(value)
        return t if t.dtype == dtype else math_ops.cast(t, dtype)
    return constant(value, dtype=dtype)


@contextlib.contextmanager
def _schedule_inputs(
    schedule: str, scope_name: str, inputs: tuple[Any, ...]
) -> Iterator[tuple[Any, ...]]:
    """A schedule's preamble. ``inputs`` is ``(learning_rate, global_step, *others)``:
    refuses a ``None`` global step (naming ``schedule``), opens the name scope
    ``scope_name`` and yields ``(scope, lr, step, *others)``, all tensors of the
    learning rate's dtype."""
    learning_rate, global_step, *others = inputs
    if global_step is None:
        raise ValueError(f"global_step is required for {schedule}.")
    with get_default_graph().name_scope(scope_name) as scope:
        lr = convert_to_tensor(learning_rate, name="learning_rate")
        yield (scope, lr, *(_as_dtype(v, lr.dtype) for v in (global_step, *others)))


def _progress(step: Tensor, steps: Tensor, staircase: bool) -> Tensor:
    p = math_ops.truediv(step, steps)
    return math_ops.floor(p) if staircase else p


def exponential_decay(
    learning_rate: Any,
    global_step: Any,
    decay_steps: Any,
    decay_rate: Any,
    staircase: bool = False,
    name: str | None = None,
) -> Tensor:
    """``learning_rate * decay_rate ** (global_step / decay_steps)``.

    Args:
        learning_rate: the initial learning rate (float or scalar tensor).
        global_step: the step counter (an integer variable or tensor).
        decay_steps: steps per decay period (positive).
        decay_rate: the factor applied per period.
        staircase: decay in whole periods (floor the exponent).
        name: name of the result (default ``ExponentialDecay``).

    Returns:
        A scalar tensor of ``learning_rate``'s dtype.

    Raises:
        ValueError: ``global_step`` is ``None``.
    """
    with _schedule_inputs(
        "exponential_decay",
        name or "ExponentialDecay",
        (learning_rate, global_step, decay_steps, decay_rate),
    ) as (scope, lr, step, steps, rate):
        p = _progress(step, steps, staircase)
        return math_ops.multiply(lr, math_ops.pow(rate, p), name=scope)


def piecewise_constant(
    x: Any, boundaries: Sequence[Any], values: Sequence[Any], name: str | None = None
) -> Tensor:
    """``values[0]`` while ``x <= boundaries[0]``, ``values[1]`` while
    ``boundaries[0] < x <= boundaries[1]``, ..., ``values[-1]`` after the last boundary.

    Raises:
        ValueError: ``len(values) != len(boundaries) + 1``, or the values' dtypes differ.
    """
    if len(boundaries) != len(values) - 1:
        raise ValueError("The length of boundaries should be 1 less than the length of values")
    graph = get_default_graph()
    with graph.name_scope(name or "PiecewiseConstant") as scope:
        x = convert_to_tensor(x)
        bounds = [_as_dtype(b, x.dtype) for b in boundaries]
        vals = [convert_to_tensor(v) for v in values]
        for v in vals[1:]:
            if v.dtype != vals[0].dtype:
                raise ValueError(
                    f"Values must have elements all with the same dtype "
                    f"({vals[0].dtype.name} != {v.dtype.name})."
                )
        # From the last interval back to the first: the first boundary x stays below
        # decides, as TF1's case() does.
        result = vals[-1]
        for i in range(len(bounds) - 1, -1, -1):
            result = math_ops.where(
                math_ops.less_equal(x, bounds[i]), vals[i], result, name=scope if i == 0 else None
            )
        if not bounds:
            result = math_ops.multiply(result, constant(1, dtype=result.dtype), name=scope)
        return result


def polynomial_decay(
    learning_rate: Any,
    global_step: Any,
    decay_steps: Any,
    end_learning_rate: Any = 0.0001,
    power: Any = 1.0,
    cycle: bool = False,
    name: str | None = None,
) -> Tensor:
    """``(lr - end) * (1 - min(step, decay_steps) / decay_steps) ** power + end``.

    With ``cycle``, ``decay_steps`` is multiplied by ``ceil(step / decay_steps)`` (1 at
    step 0) so the schedule restarts.

    Raises:
        ValueError: ``global_step`` is ``None``.
    """
    with _schedule_inputs(
        "polynomial_decay",
        name or "PolynomialDecay",
        (learning_rate, global_step, decay_steps, end_learning_rate, power),
    ) as (scope, lr, step, steps, end, power_t):
        dtype = lr.dtype
        if cycle:
            one = constant(1, dtype=dtype)
            multiplier = math_ops.where(
                math_ops.equal(step, constant(0, dtype=dtype)),
                one,
                math_ops.ceil(math_ops.truediv(step, steps)),
            )
            steps = math_ops.multiply(steps, multiplier)
        else:
            step = math_ops.minimum(step, steps)
        p = math_ops.truediv(step, steps)
        decayed = math_ops.multiply(
            math_ops.subtract(lr, end),
            math_ops.pow(math_ops.subtract(constant(1, dtype=dtype), p), power_t),
        )
        return math_ops.add(decayed, end, name=scope)


def natural_exp_decay(
    learning_rate: Any,
    global_step: Any,
    decay_steps: Any,
    decay_rate: Any,
    staircase: bool = False,
    name: str | None = None,
) -> Tensor:
    """``learning_rate * exp(-decay_rate * global_step / decay_steps)``.

    Args:
        learning_rate: the initial learning rate (float or scalar tensor).
        global_step: the step counter (an integer variable or tensor).
        decay_steps: steps per decay period.
        decay_rate: the rate of the exponential.
        staircase: decay in whole periods (floor ``global_step / decay_steps``).
        name: the name scope (default ``ExponentialDecay``, as TF1 names it: TF1 builds
            this schedule as an exponential decay of rate ``exp(-decay_rate)``).

    Raises:
        ValueError: ``global_step`` is ``None``.
    """
    with _schedule_inputs(
        "natural_exp_decay",
        name or "ExponentialDecay",
        (learning_rate, global_step, decay_steps, decay_rate),
    ) as (scope, lr, step, steps, rate):
        p = _progress(step, steps, staircase)
        exponent = math_ops.exp(math_ops.multiply(math_ops.negative(rate), p))
        return math_ops.multiply(lr, exponent, name=scope)


def inverse_time_decay(
    learning_rate: Any,
    global_step: Any,
    decay_steps: Any,
    decay_rate: Any,
    staircase: bool = False,
    name: str | None = None,
) -> Tensor:
    """``learning_rate / (1 + decay_rate * global_step / decay_steps)``.

    Arguments as :func:`natural_exp_decay` (default scope ``InverseTimeDecay``).

    Raises:
        ValueError: ``global_step`` is ``None``.
    """
    with _schedule_inputs(
        "inverse_time_decay",
        name or "InverseTimeDecay",
        (learning_rate, global_step, decay_steps, decay_rate),
    ) as (scope, lr, step, steps, rate):
        p = _progress(step, steps, staircase)
        denominator = math_ops.add(constant(1, dtype=lr.dtype), math_ops.multiply(rate, p))
        return math_ops.truediv(lr, denominator, name=scope)


def _half_cosine(fraction: Tensor, periods: Tensor | None = None) -> Tensor:
    """``0.5 * (1 + cos(pi * fraction))``, or with ``periods``:
    ``0.5 * (1 + cos(2 pi * periods * fraction))``."""
    dtype = fraction.dtype
    angle = math_ops.multiply(constant(math.pi, dtype=dtype), fraction)
    if periods is not None:
        angle = math_ops.multiply(math_ops.multiply(constant(2, dtype=dtype), periods), angle)
    return math_ops.multiply(
        constant(0.5, dtype=dtype), math_ops.add(constant(1, dtype=dtype), math_ops.cos(angle))
    )


def cosine_decay(
    learning_rate: Any,
    global_step: Any,
    decay_steps: Any,
    alpha: Any = 0.0,
    name: str | None = None,
) -> Tensor:
    """Cosine decay from ``learning_rate`` to ``alpha * learning_rate`` over
    ``decay_steps`` steps, then flat: ``lr * ((1 - alpha) * c + alpha)`` with
    ``c = 0.5 * (1 + cos(pi * min(step, decay_steps) / decay_steps))``.

    Raises:
        ValueError: ``global_step`` is ``None``.
    """
    with _schedule_inputs(
        "cosine decay", name or "CosineDecay", (learning_rate, global_step, decay_steps, alpha)
    ) as (scope, lr, step, steps, a):
        step = math_ops.minimum(step, steps)
        cosine = _half_cosine(math_ops.truediv(step, steps))
        decayed = math_ops.add(
            math_ops.multiply(math_ops.subtract(constant(1, dtype=lr.dtype), a), cosine), a
        )
        return math_ops.multiply(lr, decayed, name=scope)


def cosine_decay_restarts(
    learning_rate: Any,
    global_step: Any,
    first_decay_steps: Any,
    t_mul: float = 2.0,
    m_mul: float = 1.0,
    alpha: Any = 0.0,
    name: str | None = None,
) -> Tensor:
    """Cosine decay with warm restarts (SGDR, Loshchilov & Hutter 2016).

    Period ``i`` (from 0) lasts ``first_decay_steps * t_mul**i`` steps; within it the
    rate follows :func:`cosine_decay`'s curve from ``lr * m_mul**i`` down to ``alpha``
    times that.

    Raises:
        ValueError: ``global_step`` is ``None``.
    """
    with _schedule_inputs(
        "cosine decay restarts",
        name or "SGDRDecay",
        (learning_rate, global_step, first_decay_steps, alpha, t_mul, m_mul),
    ) as (scope, lr, step, first, a, t, m):
        one = constant(1, dtype=lr.dtype)
        done = math_ops.truediv(step, first)  # in first periods
        if t_mul == 1.0:
            restart = math_ops.floor(done)
            into = math_ops.subtract(done, restart)
        else:
            # Periods grow geometrically: the first i of them take (1 - t**i) / (1 - t)
            # first-periods, so the current one is the i that sum stays below.
            restart = math_ops.floor(
                math_ops.truediv(
                    math_ops.log(
                        math_ops.subtract(one, math_ops.multiply(done, math_ops.subtract(one, t)))
                    ),
                    math_ops.log(t),
                )
            )
            elapsed = math_ops.truediv(
                math_ops.subtract(one, math_ops.pow(t, restart)), math_ops.subtract(one, t)
            )
            into = math_ops.truediv(math_ops.subtract(done, elapsed), math_ops.pow(t, restart))
        peak = math_ops.pow(m, restart)
        cosine = math_ops.multiply(peak, _half_cosine(into))
        decayed = math_ops.add(math_ops.multiply(math_ops.subtract(one, a), cosine), a)
        return math_ops.multiply(lr, decayed, name=scope)


def _linear_and_cosine(
    step: Tensor, steps: Tensor, periods: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    """(the clipped step, the linear fall from 1 to 0, the periodic cosine factor)."""
    step = math_ops.minimum(step, steps)
    linear = math_ops.truediv(math_ops.subtract(steps, step), steps)
    cosine = _half_cosine(math_ops.truediv(step, steps), periods)
    return step, linear, cosine


def linear_cosine_decay(
    learning_rate: Any,
    global_step: Any,
    decay_steps: Any,
    num_periods: Any = 0.5,
    alpha: Any = 0.0,
    beta: Any = 0.001,
    name: str | None = None,
) -> Tensor:
    """``lr * ((alpha + linear) * cosine + beta)`` (Bello et al. 2017), with
    ``linear = (decay_steps - s) / decay_steps`` and
    ``cosine = 0.5 * (1 + cos(2 pi * num_periods * s / decay_steps))``,
    ``s = min(global_step, decay_steps)``.

    Raises:
        ValueError: ``global_step`` is ``None``.
    """
    with _schedule_inputs(
        "linear cosine decay",
        name or "LinearCosineDecay",
        (learning_rate, global_step, decay_steps, num_periods, alpha, beta),
    ) as (scope, lr, step, steps, periods, a, b):
        _, linear, cosine = _linear_and_cosine(step, steps, periods)
        decayed = math_ops.add(math_ops.multiply(math_ops.add(a, linear), cosine), b)
        return math_ops.multiply(lr, decayed, name=scope)


def noisy_linear_cosine_decay(
    learning_rate: Any,
    global_step: Any,
    decay_steps: Any,
    initial_variance: Any = 1.0,
    variance_decay: Any = 0.55,
    num_periods: Any = 0.5,
    alpha: Any = 0.0,
    beta: Any = 0.001,
    name: str | None = None,
) -> Tensor:
    """:func:`linear_cosine_decay` with noise: ``linear`` gets a fresh normal sample of
    variance ``initial_variance / (1 + s)**variance_decay`` at every run.

    Raises:
        ValueError: ``global_step`` is ``None``.
    """
    with _schedule_inputs(
        "noisy linear cosine decay",
        name or "NoisyLinearCosineDecay",
        (learning_rate, global_step, decay_steps, num_periods, alpha, beta),
    ) as (scope, lr, step, steps, periods, a, b):
        dtype = lr.dtype
        step, linear, cosine = _linear_and_cosine(step, steps, periods)
        variance = math_ops.truediv(
            _as_dtype(initial_variance, dtype),
            math_ops.pow(
                math_ops.add(constant(1, dtype=dtype), step), _as_dtype(variance_decay, dtype)
            ),
        )
        noise = math_ops.multiply(random_normal([], dtype=dtype), math_ops.sqrt(variance))
        noisy = math_ops.add(linear, noise)
        decayed = math_ops.add(math_ops.multiply(math_ops.add(a, noisy), cosine), b)
        return math_ops.multiply(lr, decayed, name=scope)
