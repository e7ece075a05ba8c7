"""``tf.metrics``: streaming metrics as TF1 builds them, and ``confusion_matrix``.

Each metric keeps running totals in local variables (``GraphKeys.LOCAL_VARIABLES`` and
``METRIC_VARIABLES``, zeros, named in the metric's variable scope: ``accuracy/total``,
``accuracy/count``) and returns ``(value, update_op)``: ``update_op`` folds one batch
into the totals and evaluates to the metric so far, ``value`` reads it without
changing anything. Run ``tf.local_variables_initializer()`` first (and again to start
over), as in TF1.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ...framework import dtypes
from ...framework.graph import Tensor, convert_to_tensor, get_default_graph
from ...framework.scopes import control_dependencies, name_scope
from .. import array as array_ops
from ..array.indexing import unsorted_segment_sum
from ..cast import cast
from ..control.group import identity
from ..linalg.diag import eye
from ..math.arith import add, div_no_nan, maximum, squared_difference
from ..math.compare import equal, greater, logical_and, logical_not, where
from ..math.reduce import reduce_max, reduce_sum
from ..state.scope_context import variable_scope
from ..state.variables import GraphKeys, Variable, assign_add


def metric_variable(shape: Sequence[int], dtype: Any, name: str) -> Variable:
    """A zero-initialized local variable holding a metric's running total."""
    return Variable(
        array_ops.zeros(shape, dtype),
        trainable=False,
        collections=[GraphKeys.LOCAL_VARIABLES, GraphKeys.METRIC_VARIABLES],
        name=name,
    )


def collect(value: Tensor, update: Tensor, metrics: Any, updates: Any) -> tuple[Tensor, Tensor]:
    """Adds a metric's value and update op to the named collections; returns them."""
    graph = get_default_graph()
    if metrics:
        graph.add_to_collections(list(metrics), value)
    if updates:
        graph.add_to_collections(list(updates), update)
    return value, update


def collect_from(
    read: Callable[[Any, str], Tensor], totals: Any, updates: Any, metrics: Any, updates_: Any
) -> tuple[Tensor, Tensor]:
    """:func:`collect` of a metric whose value and update op are one function of its
    running totals: ``read(totals, "value")`` and ``read(updates, "update_op")``."""
    return collect(read(totals, "value"), read(updates, "update_op"), metrics, updates_)


def running_total(
    amount: Tensor,
    shape: Sequence[int],
    dtype: Any,
    name: str,
    axis: Any = None,
    update_name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """A metric variable ``name`` (zeros of ``shape``) read through an identity, and the
    op adding ``reduce_sum(amount, axis)`` to it (named ``update_name``)."""
    variable = metric_variable(shape, dtype, name)
    return identity(variable), assign_add(variable, reduce_sum(amount, axis), name=update_name)


def squeeze_to(x: Tensor, other: Tensor) -> Tensor:
    """``x`` without its last dimension when that is 1 and ``x`` has one more dimension
    than ``other`` (TF1's ``remove_squeezable_dimensions``, for static ranks)."""
    rx, ro = x.shape.rank, other.shape.rank
    if rx is not None and ro is not None and rx == ro + 1 and x.shape[-1].value == 1:
        return array_ops.squeeze(x, [-1])
    return x


def aligned(labels: Tensor, predictions: Tensor) -> tuple[Tensor, Tensor]:
    """``(labels, predictions)`` with a squeezable last dimension of either removed
    (:func:`squeeze_to`).

    Raises:
        ValueError: their shapes are then incompatible.
    """
    predictions = squeeze_to(predictions, labels)
    labels = squeeze_to(labels, predictions)
    predictions.shape.assert_is_compatible_with(labels.shape)
    return labels, predictions


def broadcast_weights(weights: Any, values: Tensor, dtype: Any = dtypes.float32) -> Tensor:
    """``weights`` as ``dtype`` (float32), broadcast to ``values``' shape."""
    w = cast(convert_to_tensor(weights), dtype)
    return w * array_ops.ones_like(values, dtype=dtype)


def mean(
    values: Any,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """The (weighted) mean of every value seen: ``total / count``."""
    with variable_scope(name, "mean", [values, weights]):
        values = cast(convert_to_tensor(values), dtypes.float32)
        total = metric_variable([], dtypes.float32, "total")
        count = metric_variable([], dtypes.float32, "count")
        if weights is None:
            number = cast(array_ops.size(values), dtypes.float32)
        else:
            w = broadcast_weights(weights, values)
            values = values * w
            number = reduce_sum(w)
        update_total = assign_add(total, reduce_sum(values))
        with control_dependencies([values]):
            update_count = assign_add(count, number)
        value = div_no_nan(total, maximum(count, 0.0), name="value")
        update = div_no_nan(update_total, maximum(update_count, 0.0), name="update_op")
        return collect(value, update, metrics_collections, updates_collections)


def accuracy(
    labels: Any,
    predictions: Any,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """The fraction of ``predictions`` equal to ``labels`` (weighted).

    Raises:
        ValueError: ``labels`` and ``predictions`` have incompatible shapes.
    """
    predictions, labels = convert_to_tensor(predictions), convert_to_tensor(labels)
    if not predictions.shape.is_compatible_with(labels.shape):
        raise ValueError(f"Shapes {predictions.shape} and {labels.shape} are incompatible")
    if predictions.dtype != labels.dtype:
        predictions = cast(predictions, labels.dtype)
    correct = cast(equal(predictions, labels), dtypes.float32)
    return mean(correct, weights, metrics_collections, updates_collections, name or "accuracy")


def mean_squared_error(
    labels: Any,
    predictions: Any,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """The mean of ``(labels - predictions) ** 2`` over everything seen."""
    predictions, labels = convert_to_tensor(predictions), convert_to_tensor(labels)
    squared = squared_difference(cast(labels, dtypes.float32), cast(predictions, dtypes.float32))
    return mean(
        squared, weights, metrics_collections, updates_collections, name or "mean_squared_error"
    )


def count_condition(
    condition: Tensor, weights: Any, default_name: str, name: str | None = None
) -> tuple[Tensor, Tensor]:
    """A running (weighted) count of the true entries of ``condition``: a
    ``<scope>/count`` variable, its value and its update op."""
    with variable_scope(name, default_name, [condition, weights]):
        hits = cast(condition, dtypes.float32)
        if weights is not None:
            hits = hits * broadcast_weights(weights, hits)
        return running_total(hits, [], dtypes.float32, "count")


def _bools(labels: Any, predictions: Any) -> tuple[Tensor, Tensor]:
    return (
        cast(convert_to_tensor(labels), dtypes.bool),
        cast(convert_to_tensor(predictions), dtypes.bool),
    )


def _ratio(
    kind: str,
    labels: Any,
    predictions: Any,
    weights: Any,
    metrics: Any,
    updates: Any,
    name: str | None,
) -> tuple[Tensor, Tensor]:
    """precision = tp / (tp + fp); recall = tp / (tp + fn); 0 before any hit."""
    with variable_scope(name, kind, [predictions, labels, weights]):
        truth, guess = _bools(labels, predictions)
        tp, tp_update = count_condition(logical_and(truth, guess), weights, "true_positives")
        miss = (
            logical_and(logical_not(truth), guess)
            if kind == "precision"
            else logical_and(truth, logical_not(guess))
        )
        other, other_update = count_condition(
            miss, weights, "false_positives" if kind == "precision" else "false_negatives"
        )

        def ratio(counts: tuple[Tensor, Tensor], label: str) -> Tensor:
            t, o = counts
            total = add(t, o)
            return where(
                greater(total, 0.0), div_no_nan(t, total), array_ops.zeros_like(t), name=label
            )

        return collect_from(ratio, (tp, other), (tp_update, other_update), metrics, updates)


def precision(
    labels: Any,
    predictions: Any,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """True positives over predicted positives (``predictions`` and ``labels`` as bools)."""
    return _ratio(
        "precision", labels, predictions, weights, metrics_collections, updates_collections, name
    )


def recall(
    labels: Any,
    predictions: Any,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """True positives over actual positives (``predictions`` and ``labels`` as bools)."""
    return _ratio(
        "recall", labels, predictions, weights, metrics_collections, updates_collections, name
    )


def confusion_matrix(
    labels: Any,
    predictions: Any,
    num_classes: Any = None,
    weights: Any = None,
    dtype: Any = dtypes.int32,
    name: str | None = None,
) -> Tensor:
    """``[num_classes, num_classes]`` counts of (label, prediction) pairs (or sums of
    ``weights``); ``num_classes`` defaults to the largest class seen plus one."""
    with name_scope(name, "confusion_matrix", [labels, predictions, num_classes, weights]):
        labels = cast(convert_to_tensor(labels), dtypes.int64)
        predictions = cast(convert_to_tensor(predictions), dtypes.int64)
        if num_classes is None:
            n = maximum(reduce_max(labels), reduce_max(predictions)) + 1
        else:
            n = cast(convert_to_tensor(num_classes), dtypes.int64)
        out_type = dtypes.as_dtype(dtype)
        values = (
            array_ops.ones_like(labels, dtype=out_type)
            if weights is None
            else cast(convert_to_tensor(weights), out_type)
            * array_ops.ones_like(labels, dtype=out_type)
        )
        flat = unsorted_segment_sum(
            array_ops.reshape(values, [-1]),
            array_ops.reshape(labels * n + predictions, [-1]),
            n * n,
        )
        return array_ops.reshape(flat, array_ops.stack([n, n]))


def mean_iou(
    labels: Any,
    predictions: Any,
    num_classes: int,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """The mean over classes of intersection over union, from a running confusion
    matrix (``mean_iou/total_confusion_matrix``); classes never seen are left out. As in
    TF1, ``update_op`` evaluates to the updated confusion matrix, not the metric."""
    with variable_scope(name, "mean_iou", [predictions, labels, weights]):
        total = metric_variable(
            [num_classes, num_classes], dtypes.float64, "total_confusion_matrix"
        )
        batch = confusion_matrix(
            array_ops.reshape(labels, [-1]),
            array_ops.reshape(predictions, [-1]),
            num_classes,
            weights=None if weights is None else array_ops.reshape(weights, [-1]),
            dtype=dtypes.float64,
        )
        update_matrix = assign_add(total, batch)

        def iou(matrix: Any, label: str) -> Tensor:
            rows, cols = reduce_sum(matrix, 0), reduce_sum(matrix, 1)
            diagonal = reduce_sum(matrix * eye(num_classes, dtype=dtypes.float64), 1)
            union = rows + cols - diagonal
            valid = reduce_sum(cast(greater(union, 0.0), dtypes.float64))
            union = where(greater(union, 0.0), union, array_ops.ones_like(union))
            score = reduce_sum(diagonal / union)
            result = where(
                greater(valid, 0.0), div_no_nan(score, valid), array_ops.zeros_like(score)
            )
            return cast(result, dtypes.float32, name=label)

        return collect(
            iou(total, "mean_iou"), update_matrix, metrics_collections, updates_collections
        )
