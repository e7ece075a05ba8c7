"""Running means of errors and rates: ``mean_absolute_error``, ``mean_relative_error``,
``mean_cosine_distance``, ``root_mean_squared_error``, ``percentage_below``,
``mean_tensor`` (elementwise) and ``mean_per_class_accuracy``.

All but the last two are ``metrics.mean`` (``<scope>/total`` and ``<scope>/count``) over a
per-element quantity, as in TF1.
"""

from __future__ import annotations

from typing import Any

from ....framework import dtypes
from ....framework.graph import Tensor, convert_to_tensor
from ....framework.scopes import control_dependencies
from ... import array as array_ops
from ... import math as math_ops
from ...array.indexing import unsorted_segment_sum
from ...cast import cast
from ...state.scope_context import variable_scope
from ...state.variables import assign_add
from ..metrics import (
    aligned,
    broadcast_weights,
    collect,
    mean,
    mean_squared_error,
    metric_variable,
)


def _pair(labels: Any, predictions: Any) -> tuple[Tensor, Tensor]:
    predictions, labels = convert_to_tensor(predictions), convert_to_tensor(labels)
    return aligned(labels, predictions)


def mean_absolute_error(
    labels: Any,
    predictions: Any,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """The running (weighted) mean of ``|predictions - labels|``."""
    labels, predictions = _pair(labels, predictions)
    errors = math_ops.abs(predictions - labels)
    return mean(
        errors, weights, metrics_collections, updates_collections, name or "mean_absolute_error"
    )


def mean_relative_error(
    labels: Any,
    predictions: Any,
    normalizer: Any,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """The running (weighted) mean of ``|labels - predictions| / normalizer`` (0 where
    ``normalizer`` is 0)."""
    labels, predictions = _pair(labels, predictions)
    normalizer = convert_to_tensor(normalizer, dtype=predictions.dtype)
    predictions.shape.assert_is_compatible_with(normalizer.shape)
    relative = math_ops.where(
        math_ops.equal(normalizer, 0.0),
        array_ops.zeros_like(labels),
        math_ops.div(math_ops.abs(labels - predictions), normalizer),
    )
    return mean(
        relative, weights, metrics_collections, updates_collections, name or "mean_relative_error"
    )


def mean_cosine_distance(
    labels: Any,
    predictions: Any,
    dim: int,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """``1 -`` the running mean of ``sum(labels * predictions, dim)``: the cosine distance
    of unit-normalized vectors along ``dim``."""
    labels, predictions = _pair(labels, predictions)
    radial = math_ops.reduce_sum(predictions * labels, axis=[dim], keepdims=True)
    value, update = mean(radial, weights, None, None, name or "mean_cosine_distance")
    return collect(
        math_ops.subtract(1.0, value),
        math_ops.subtract(1.0, update),
        metrics_collections,
        updates_collections,
    )


def root_mean_squared_error(
    labels: Any,
    predictions: Any,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """The square root of the running (weighted) mean squared error."""
    labels, predictions = _pair(labels, predictions)
    value, update = mean_squared_error(
        labels, predictions, weights, None, None, name or "root_mean_squared_error"
    )
    return collect(
        math_ops.sqrt(value), math_ops.sqrt(update), metrics_collections, updates_collections
    )


def percentage_below(
    values: Any,
    threshold: float,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """The running (weighted) fraction of ``values`` below ``threshold``."""
    values = convert_to_tensor(values)
    below = cast(math_ops.less(values, threshold), dtypes.float32)
    value, update = mean(below, weights, None, None, name or "percentage_below_threshold")
    return collect(value, update, metrics_collections, updates_collections)


def mean_tensor(
    values: Any,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """The elementwise running (weighted) mean of ``values`` (whose shape must be fully
    defined): ``total_tensor / count_tensor``, 0 where nothing was counted."""
    with variable_scope(name, "mean", (values, weights)):
        values = cast(convert_to_tensor(values), dtypes.float32)
        shape = values.shape.as_list()
        total = metric_variable(shape, dtypes.float32, "total_tensor")
        count = metric_variable(shape, dtypes.float32, "count_tensor")
        number = array_ops.ones_like(values)
        if weights is not None:
            w = broadcast_weights(weights, values)
            values, number = values * w, number * w
        update_total = assign_add(total, values)
        with control_dependencies([values]):
            update_count = assign_add(count, number)
        value = math_ops.div_no_nan(total, math_ops.maximum(count, 0.0), name="value")
        update = math_ops.div_no_nan(
            update_total, math_ops.maximum(update_count, 0.0), name="update_op"
        )
        return collect(value, update, metrics_collections, updates_collections)


def mean_per_class_accuracy(
    labels: Any,
    predictions: Any,
    num_classes: int,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """The mean over classes of each class's running (weighted) accuracy, classes by
    ``labels`` (``mean_accuracy/total`` counts, ``mean_accuracy/count`` hits, float32
    vectors of ``num_classes``). As in TF1, ``update_op`` evaluates to the per-class
    accuracies."""
    with variable_scope(name, "mean_accuracy", (predictions, labels, weights)):
        labels = cast(convert_to_tensor(labels), dtypes.int64)
        predictions = convert_to_tensor(predictions)
        if labels.shape.rank is None or labels.shape.rank > 1:
            labels = array_ops.reshape(labels, [-1])
        if predictions.shape.rank is None or predictions.shape.rank > 1:
            predictions = array_ops.reshape(predictions, [-1])
        predictions.shape.assert_is_compatible_with(labels.shape)
        total = metric_variable([num_classes], dtypes.float32, "total")
        count = metric_variable([num_classes], dtypes.float32, "count")
        ones = array_ops.ones(array_ops.reshape(array_ops.size(labels), [1]), dtypes.float32)
        if predictions.dtype != labels.dtype:
            predictions = cast(predictions, labels.dtype)
        correct = cast(math_ops.equal(predictions, labels), dtypes.float32)
        if weights is not None:
            w = cast(array_ops.reshape(convert_to_tensor(weights), [-1]), dtypes.float32)
            correct, ones = correct * w, ones * w
        update_total = assign_add(total, unsorted_segment_sum(ones, labels, num_classes))
        update_count = assign_add(count, unsorted_segment_sum(correct, labels, num_classes))
        per_class = math_ops.div_no_nan(count, math_ops.maximum(total, 0.0))
        value = math_ops.reduce_mean(per_class, name="mean_accuracy")
        update = math_ops.div_no_nan(
            update_count, math_ops.maximum(update_total, 0.0), name="update_op"
        )
        return collect(value, update, metrics_collections, updates_collections)
