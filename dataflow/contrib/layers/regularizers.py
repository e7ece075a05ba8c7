"""``tf.contrib.layers``' regularizers: functions of a weight returning a loss tensor."""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

from ... import nn
from ...framework.graph import Tensor, convert_to_tensor, get_default_graph
from ...framework.scopes import add_to_collection, name_scope
from ...ops.math import abs as abs_
from ...ops.math import add_n, multiply, reduce_sum
from ...ops.state.variables import GraphKeys

WEIGHTS = "weights"  # contrib's GraphKeys.WEIGHTS


def _check_scale(scale: Any) -> None:
    if isinstance(scale, numbers.Integral):
        raise ValueError(f"scale cannot be an integer: {scale}")
    if isinstance(scale, numbers.Real) and scale < 0.0:
        raise ValueError(f"Setting a scale less than 0 on a regularizer: {scale}")


def _regularizer(kind: str, scale: float, scope: str | None, fn: Callable) -> Callable:
    _check_scale(scale)
    if isinstance(scale, numbers.Real) and scale == 0.0:
        return lambda _: None

    def regularize(weights: Any) -> Tensor:
        with name_scope(scope, kind, [weights]) as name:
            weights = convert_to_tensor(weights)
            my_scale = convert_to_tensor(scale, dtype=weights.dtype.base_dtype, name="scale")
            return multiply(my_scale, fn(weights), name=name)

    return regularize


def l1_regularizer(scale: float, scope: str | None = None) -> Callable:
    """A function ``scale * sum(|w|)`` of a weight (``None`` for ``scale == 0``).

    Raises:
        ValueError: an integer or negative ``scale``.
    """
    return _regularizer("l1_regularizer", scale, scope, lambda w: reduce_sum(abs_(w)))


def l2_regularizer(scale: float, scope: str | None = None) -> Callable:
    """A function ``scale * sum(w ** 2) / 2`` (``scale * tf.nn.l2_loss(w)``) of a weight
    (``None`` for ``scale == 0``).

    Raises:
        ValueError: an integer or negative ``scale``.
    """
    return _regularizer("l2_regularizer", scale, scope, nn.l2_loss)


def l1_l2_regularizer(
    scale_l1: float = 1.0, scale_l2: float = 1.0, scope: str | None = None
) -> Callable:
    """The sum of ``l1_regularizer(scale_l1)`` and ``l2_regularizer(scale_l2)``."""
    return sum_regularizer([l1_regularizer(scale_l1), l2_regularizer(scale_l2)], scope=scope)


def sum_regularizer(regularizer_list: list, scope: str | None = None) -> Callable:
    """A function summing the (non-None) losses of ``regularizer_list``."""
    regularizers = [r for r in regularizer_list if r is not None]

    def regularize(weights: Any) -> Tensor | None:
        with name_scope(scope, "sum_regularizer", [weights]) as name:
            losses = [loss for r in regularizers if (loss := r(weights)) is not None]
            return add_n(losses, name=name) if losses else None

    return regularize


def apply_regularization(regularizer: Callable, weights_list: list | None = None) -> Tensor:
    """The sum of ``regularizer`` over ``weights_list`` (default: the ``"weights"``
    collection), also added to ``GraphKeys.REGULARIZATION_LOSSES``.

    Raises:
        ValueError: no weights, or ``regularizer`` gives no loss for any of them.
    """
    if weights_list is None:
        weights_list = get_default_graph().get_collection(WEIGHTS)
    if not weights_list:
        raise ValueError("No weights to regularize.")
    with name_scope("get_regularization_penalty", values=weights_list) as scope:
        penalties = [p for p in (regularizer(w) for w in weights_list) if p is not None]
        if not penalties:
            raise ValueError("No regularization penalties were returned by the regularizer.")
        summed = add_n(penalties, name=scope)
    add_to_collection(GraphKeys.REGULARIZATION_LOSSES, summed)
    return summed
