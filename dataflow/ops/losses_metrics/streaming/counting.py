"""Confusion counts: ``true_positives`` ... ``false_negatives`` (plain and at
thresholds), ``precision_at_thresholds``/``recall_at_thresholds``, ``auc`` (ROC or PR,
four summation methods) and ``sensitivity_at_specificity``/``specificity_at_sensitivity``.

The thresholded metrics share one helper, as in TF1: predictions (checked to lie in
[0, 1] when the step runs) are compared with every threshold at once, a
``[thresholds, batch]`` boolean grid, and each of the four counts is a float32 variable
of one entry per threshold named ``true_positives``, ``false_negatives``,
``true_negatives``, ``false_positives`` in the metric's variable scope.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ....framework import dtypes
from ....framework.graph import Tensor, convert_to_tensor
from ....framework.scopes import control_dependencies
from ... import array as array_ops
from ... import math as math_ops
from ...cast import cast
from ...control.group import identity
from ...debug.check_ops import assert_greater_equal, assert_less_equal
from ...state.scope_context import variable_scope
from ..metrics import (
    aligned,
    broadcast_weights,
    collect,
    collect_from,
    count_condition,
    running_total,
)

EPSILON = 1e-7
_KINDS = ("tp", "fn", "tn", "fp")
_VARIABLE_NAMES = {
    "tp": "true_positives",
    "fn": "false_negatives",
    "tn": "true_negatives",
    "fp": "false_positives",
}


def _counter(kind: str, pick: Any) -> Any:
    def metric(
        labels: Any,
        predictions: Any,
        weights: Any = None,
        metrics_collections: Any = None,
        updates_collections: Any = None,
        name: str | None = None,
    ) -> tuple[Tensor, Tensor]:
        truth, guess = aligned(
            cast(convert_to_tensor(labels), dtypes.bool),
            cast(convert_to_tensor(predictions), dtypes.bool),
        )
        value, update = count_condition(pick(truth, guess), weights, kind, name)
        return collect(value, update, metrics_collections, updates_collections)

    metric.__name__ = metric.__qualname__ = kind
    metric.__doc__ = (
        f"The running (weighted) count of {kind.replace('_', ' ')} (``labels`` and "
        f"``predictions`` as bools), in a float32 ``{kind}/count`` local variable."
    )
    return metric


_not, _and = math_ops.logical_not, math_ops.logical_and
true_positives = _counter("true_positives", lambda t, g: _and(t, g))
false_positives = _counter("false_positives", lambda t, g: _and(_not(t), g))
true_negatives = _counter("true_negatives", lambda t, g: _and(_not(t), _not(g)))
false_negatives = _counter("false_negatives", lambda t, g: _and(t, _not(g)))


def confusion_at_thresholds(
    labels: Any,
    predictions: Any,
    thresholds: Sequence[float],
    weights: Any = None,
    includes: Sequence[str] = _KINDS,
) -> tuple[dict[str, Tensor], dict[str, Tensor]]:
    """Counts (``tp``, ``fn``, ``tn``, ``fp``, those in ``includes``) of predictions
    above each threshold, as variables and their update ops, in the current scope."""
    predictions = convert_to_tensor(predictions)
    checks = [
        assert_greater_equal(
            predictions,
            np.zeros((), predictions.dtype.as_numpy_dtype),
            message="predictions must be in [0, 1]",
        ),
        assert_less_equal(
            predictions,
            np.ones((), predictions.dtype.as_numpy_dtype),
            message="predictions must be in [0, 1]",
        ),
    ]
    with control_dependencies(checks):
        scores = identity(cast(predictions, dtypes.float32))
    truth, scores = aligned(cast(convert_to_tensor(labels), dtypes.bool), scores)
    cuts = convert_to_tensor(np.asarray(thresholds, np.float32).reshape(-1, 1))
    above = math_ops.greater(array_ops.reshape(scores, [1, -1]), cuts)
    positive = array_ops.reshape(truth, [1, -1])
    w = None
    if weights is not None:
        w = array_ops.reshape(broadcast_weights(weights, scores), [1, -1])
    conditions = {
        "tp": lambda: _and(positive, above),
        "fn": lambda: _and(positive, _not(above)),
        "tn": lambda: _and(_not(positive), _not(above)),
        "fp": lambda: _and(_not(positive), above),
    }
    values, updates = {}, {}
    for kind in _KINDS:
        if kind not in includes:
            continue
        hits = cast(conditions[kind](), dtypes.float32)
        if w is not None:
            hits = hits * w
        values[kind], updates[kind] = running_total(
            hits, [len(thresholds)], dtypes.float32, _VARIABLE_NAMES[kind], 1
        )
    return values, updates


def _at_thresholds(kind: str) -> Any:
    def metric(
        labels: Any,
        predictions: Any,
        thresholds: Sequence[float],
        weights: Any = None,
        metrics_collections: Any = None,
        updates_collections: Any = None,
        name: str | None = None,
    ) -> tuple[Tensor, Tensor]:
        with variable_scope(name, _VARIABLE_NAMES[kind], (predictions, labels, weights)):
            values, updates = confusion_at_thresholds(
                labels, predictions, thresholds, weights, (kind,)
            )
            return collect(values[kind], updates[kind], metrics_collections, updates_collections)

    label = _VARIABLE_NAMES[kind]
    metric.__name__ = metric.__qualname__ = f"{label}_at_thresholds"
    metric.__doc__ = (
        f"Running (weighted) {label.replace('_', ' ')} of predictions above each "
        f"threshold: a float32 vector, one entry per threshold (predictions in [0, 1])."
    )
    return metric


true_positives_at_thresholds = _at_thresholds("tp")
false_positives_at_thresholds = _at_thresholds("fp")
true_negatives_at_thresholds = _at_thresholds("tn")
false_negatives_at_thresholds = _at_thresholds("fn")


def _ratio_at_thresholds(kind: str) -> Any:
    other = "fp" if kind == "precision" else "fn"

    def metric(
        labels: Any,
        predictions: Any,
        thresholds: Sequence[float],
        weights: Any = None,
        metrics_collections: Any = None,
        updates_collections: Any = None,
        name: str | None = None,
    ) -> tuple[Tensor, Tensor]:
        with variable_scope(name, f"{kind}_at_thresholds", (predictions, labels, weights)):
            values, updates = confusion_at_thresholds(
                labels, predictions, thresholds, weights, ("tp", other)
            )

            def ratio(c: dict, label: str) -> Tensor:
                return math_ops.div(c["tp"], EPSILON + c["tp"] + c[other], name=f"{kind}_{label}")

            return collect_from(ratio, values, updates, metrics_collections, updates_collections)

    metric.__name__ = metric.__qualname__ = f"{kind}_at_thresholds"
    metric.__doc__ = (
        f"The {kind} of predictions above each threshold, one entry per threshold: "
        f"``tp / (1e-7 + tp + {other})`` over running float32 counts."
    )
    return metric


precision_at_thresholds = _ratio_at_thresholds("precision")
recall_at_thresholds = _ratio_at_thresholds("recall")


def _even_thresholds(num_thresholds: int) -> list[float]:
    inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
    return [0.0 - EPSILON, *inner, 1.0 + EPSILON]


def _interpolated_pr_area(tp: Tensor, fp: Tensor, fn: Tensor, n: int) -> Tensor:
    """The area under the PR curve, interpolating precision between thresholds
    (Davis & Goadrich 2006), TF1's ``careful_interpolation`` for PR."""
    dtp = tp[: n - 1] - tp[1:]
    p = tp + fp
    slope = math_ops.div_no_nan(dtp, math_ops.maximum(p[: n - 1] - p[1:], 0.0))
    intercept = tp[1:] - slope * p[1:]
    both = _and(math_ops.greater(p[: n - 1], 0.0), math_ops.greater(p[1:], 0.0))
    ratio = math_ops.where(
        both,
        math_ops.div_no_nan(p[: n - 1], math_ops.maximum(p[1:], 0.0)),
        array_ops.ones_like(p[1:]),
    )
    increment = math_ops.div_no_nan(
        slope * (dtp + intercept * math_ops.log(ratio)), math_ops.maximum(tp[1:] + fn[1:], 0.0)
    )
    return math_ops.reduce_sum(increment, name="interpolate_pr_auc")


_SUMMATIONS = ("trapezoidal", "careful_interpolation", "minoring", "majoring")


def auc(
    labels: Any,
    predictions: Any,
    weights: Any = None,
    num_thresholds: int = 200,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    curve: str = "ROC",
    name: str | None = None,
    summation_method: str = "trapezoidal",
    thresholds: Sequence[float] | None = None,
) -> tuple[Tensor, Tensor]:
    """The area under the ROC (or precision-recall, ``curve="PR"``) curve, from running
    confusion counts at ``num_thresholds`` thresholds spread over [0, 1] (or at
    ``thresholds``, with 0 - 1e-7 and 1 + 1e-7 added at the ends).

    ``summation_method``: ``"trapezoidal"`` (default), ``"minoring"`` / ``"majoring"``
    (lower / upper Riemann sums), or ``"careful_interpolation"`` (for PR, precision
    interpolated between thresholds; for ROC, trapezoidal).

    Raises:
        ValueError: an unknown ``curve`` or ``summation_method``.
    """
    if curve not in ("ROC", "PR"):
        raise ValueError(f"curve must be either ROC or PR, {curve} unknown")
    if summation_method not in _SUMMATIONS:
        raise ValueError(f"Invalid summation_method: {summation_method}")
    if thresholds is not None:
        cuts = [0.0 - EPSILON, *(float(t) for t in thresholds), 1.0 + EPSILON]
    else:
        cuts = _even_thresholds(num_thresholds)
    n = len(cuts)
    with variable_scope(name, "auc", (labels, predictions, weights)):
        values, updates = confusion_at_thresholds(labels, predictions, cuts, weights)

        def area(c: dict, label: str) -> Tensor:
            tp, fn, tn, fp = (c[k] for k in _KINDS)
            if curve == "PR" and summation_method == "careful_interpolation":
                return identity(_interpolated_pr_area(tp, fp, fn, n), name=label)
            recall = math_ops.div(tp + EPSILON, tp + fn + EPSILON)
            if curve == "ROC":
                x, y = math_ops.div(fp, fp + tn + EPSILON), recall
            else:
                x, y = recall, math_ops.div(tp + EPSILON, tp + fp + EPSILON)
            if summation_method == "minoring":
                heights = math_ops.minimum(y[: n - 1], y[1:])
            elif summation_method == "majoring":
                heights = math_ops.maximum(y[: n - 1], y[1:])
            else:
                heights = (y[: n - 1] + y[1:]) / 2.0
            return math_ops.reduce_sum((x[: n - 1] - x[1:]) * heights, name=label)

        return collect_from(area, values, updates, metrics_collections, updates_collections)


def _trade_off(what: str, rate: float, inputs: tuple[Any, ...], pick: Any) -> tuple[Tensor, Tensor]:
    """The value and update op of ``<other>_at_<what>``: checks ``rate`` (``what``, in
    [0, 1]), opens the variable scope and applies ``pick`` to the four running counts at
    ``num_thresholds`` evenly spaced thresholds, ``inputs`` being ``(labels, predictions,
    weights, num_thresholds, name)``.

    Raises:
        ValueError: ``rate`` outside [0, 1].
    """
    if rate < 0 or rate > 1:
        raise ValueError(f"`{what}` must be in the range [0, 1]. Currently, `{what}` is {rate}.")
    labels, predictions, weights, num_thresholds, name = inputs
    other = "specificity" if what == "sensitivity" else "sensitivity"
    with variable_scope(name, f"{other}_at_{what}", (predictions, labels, weights)):
        values, updates = confusion_at_thresholds(
            labels, predictions, _even_thresholds(num_thresholds), weights
        )
        return pick(values, "value"), pick(updates, "update_op")


def sensitivity_at_specificity(
    labels: Any,
    predictions: Any,
    specificity: float,
    weights: Any = None,
    num_thresholds: int = 200,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """The sensitivity (``tp / (tp + fn)``) at the first of ``num_thresholds`` evenly
    spaced thresholds whose specificity is closest to ``specificity``.

    Raises:
        ValueError: ``specificity`` outside [0, 1].
    """

    def pick(c: dict, label: str) -> Tensor:
        tp, fn, tn, fp = (c[k] for k in _KINDS)
        rates = math_ops.div(tn, tn + fp + EPSILON)
        index = cast(math_ops.argmin(math_ops.abs(rates - specificity), 0), dtypes.int32)
        hit, miss = array_ops.gather(tp, index), array_ops.gather(fn, index)
        return math_ops.div(hit, hit + miss + EPSILON, name=label)

    inputs = (labels, predictions, weights, num_thresholds, name)
    value, update = _trade_off("specificity", specificity, inputs, pick)
    return collect(value, update, metrics_collections, updates_collections)


def specificity_at_sensitivity(
    labels: Any,
    predictions: Any,
    sensitivity: float,
    weights: Any = None,
    num_thresholds: int = 200,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """The specificity (``tn / (tn + fp)``) at the last of ``num_thresholds`` evenly
    spaced thresholds whose sensitivity is closest to ``sensitivity``.

    Raises:
        ValueError: ``sensitivity`` outside [0, 1].
    """

    def pick(c: dict, label: str) -> Tensor:
        tp, fn, tn, fp = (c[k] for k in _KINDS)
        distance = math_ops.abs(math_ops.div(tp, tp + fn + EPSILON) - sensitivity)
        closest = cast(math_ops.equal(distance, math_ops.reduce_min(distance)), dtypes.int64)
        # The last closest threshold: where the running count of them peaks first.
        index = cast(math_ops.argmax(math_ops.cumsum(closest), 0), dtypes.int32)
        hit, miss = array_ops.gather(tn, index), array_ops.gather(fp, index)
        return math_ops.div(hit, hit + miss + EPSILON, name=label)

    inputs = (labels, predictions, weights, num_thresholds, name)
    value, update = _trade_off("sensitivity", sensitivity, inputs, pick)
    return collect(value, update, metrics_collections, updates_collections)
