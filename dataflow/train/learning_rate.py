"""Learning-rate schedules of ``tf.train`` (TF1's ``learning_rate_decay``).

Each function returns a scalar tensor computed from the global step at every run, built
from ordinary ops (composites, no kernels of their own), with TF1's name scopes and
formulas:

* ``exponential_decay``: ``lr * decay_rate ** (step / decay_steps)``, the exponent
  floored when ``staircase``;
* ``piecewise_constant``: ``values[i]`` on the i-th interval of ``boundaries``
  (``x <= boundaries[0]`` is the first);
* ``polynomial_decay``: from ``lr`` to ``end_learning_rate`` over ``decay_steps`` as
  ``(1 - step / decay_steps) ** power``, optionally restarting (``cycle``).

Example: ``exponential_decay(0.1, step, 100, 0.5, staircase=True)`` is 0.1 for steps
0..99, 0.05 for 100..199, ...
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..framework.graph import Tensor, convert_to_tensor, get_default_graph
from ..ops import math as math_ops
from ..ops.constant import constant


def _as_dtype(value: Any, dtype: Any) -> Tensor:
    """``value`` (a number or tensor) as a tensor of ``dtype``."""
    if isinstance(value, Tensor) or hasattr(value, "_as_graph_element"):
        t = convert_to_tensor(value)
        return t if t.dtype == dtype else math_ops.cast(t, dtype)
    return constant(value, dtype=dtype)


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
    if global_step is None:
        raise ValueError("global_step is required for exponential_decay.")
    graph = get_default_graph()
    with graph.name_scope(name or "ExponentialDecay") as scope:
        lr = convert_to_tensor(learning_rate, name="learning_rate")
        dtype = lr.dtype
        step = _as_dtype(global_step, dtype)
        p = math_ops.truediv(step, _as_dtype(decay_steps, dtype))
        if staircase:
            p = math_ops.floor(p)
        return math_ops.multiply(lr, math_ops.pow(_as_dtype(decay_rate, dtype), p), name=scope)


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
    if global_step is None:
        raise ValueError("global_step is required for polynomial_decay.")
    graph = get_default_graph()
    with graph.name_scope(name or "PolynomialDecay") as scope:
        lr = convert_to_tensor(learning_rate, name="learning_rate")
        dtype = lr.dtype
        end = _as_dtype(end_learning_rate, dtype)
        power_t = _as_dtype(power, dtype)
        step = _as_dtype(global_step, dtype)
        steps = _as_dtype(decay_steps, dtype)
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
