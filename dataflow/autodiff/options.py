"""The enums that steer ``tf.gradients``: ``tf.AggregationMethod`` (how fan-out
contributions are summed) and ``tf.UnconnectedGradients`` (what an ``x`` that ``ys``
do not depend on gets)."""

from __future__ import annotations

import enum
from typing import Any


class AggregationMethod:
    """How ``tf.gradients`` sums the contributions reaching one tensor (TF1's
    ``tf.AggregationMethod``). Every method gives the same sum here: dataflow adds them
    with one ``AddN``; the experimental methods only changed TF1's memory schedule.
    """

    ADD_N = 0
    DEFAULT = ADD_N
    EXPERIMENTAL_TREE = 1
    EXPERIMENTAL_ACCUMULATE_N = 2


_METHODS = (
    AggregationMethod.ADD_N,
    AggregationMethod.EXPERIMENTAL_TREE,
    AggregationMethod.EXPERIMENTAL_ACCUMULATE_N,
)


def check_aggregation_method(method: Any) -> None:
    """Raises ``ValueError`` (as TF1, at build time) for an unknown method."""
    if method is not None and method not in _METHODS:
        raise ValueError(
            f"Invalid `aggregation_method` specified {method}. "
            f"Accepted values are {list(_METHODS)}."
        )


class UnconnectedGradients(enum.Enum):
    """What ``tf.gradients`` returns for an ``x`` that ``ys`` do not depend on:
    ``NONE`` (``None``, the default) or ``ZERO`` (zeros of ``x``'s shape)."""

    NONE = "none"
    ZERO = "zero"


def as_unconnected_gradients(value: Any) -> UnconnectedGradients:
    """The member for ``value`` (a member or its string value).

    Raises:
        ValueError: any other value (TF1's message).
    """
    try:
        return UnconnectedGradients(value)
    except ValueError:
        raise ValueError(f"Unknown value for unconnected_gradients: {value!r}") from None
