"""Ranking metrics over the top ``k`` predictions: ``precision_at_k``,
``recall_at_k`` (and their ``*_at_top_k`` forms taking the predicted ids),
``average_precision_at_k``, with TF1's ``sparse_*`` aliases.

Each row of ``labels`` (``[D1, ..., DN, num_labels]`` ids, or ``[D1, ..., DN]`` for one
label; or a ``SparseTensor`` of ids) is a set, as TF1's set ops read it, and so is each
row of predicted ids. Per row: true positives ``|P & L|``, false positives ``|P - L|``,
false negatives ``|L - P|``, counted by comparing every predicted id with every label of
its row (a ``[..., k, num_labels]`` grid; a repeated id counts once). With ``class_id``
only that class is looked at. The running sums are float64 local variables named after
their name scope (``precision_at_2/true_positive_at_2``), as in TF1.
"""

from __future__ import annotations

from typing import Any

from ....framework import dtypes
from ....framework.graph import Tensor, convert_to_tensor
from ....framework.scopes import name_scope
from ....framework.sparse_tensor import SparseTensor
from ... import array as array_ops
from ... import math as math_ops
from ...array.reorder import range_
from ...cast import cast
from ...sparse.sparse_ops import sparse_tensor_to_dense
from ..metrics import broadcast_weights, collect, running_total


def _at_k_name(name: str, k: int | None = None, class_id: int | None = None) -> str:
    name = f"{name}_at_{'k' if k is None else k}"
    if class_id is not None:
        name = f"{name}_class{class_id}"
    return name


def _first_of_row(ids: Tensor, valid: Tensor) -> Tensor:
    """True for the valid entries of each row (last axis) not repeating an earlier
    valid entry: the members of the row's set, each once."""
    same = math_ops.equal(array_ops.expand_dims(ids, -1), array_ops.expand_dims(ids, -2))
    same = math_ops.logical_and(same, array_ops.expand_dims(valid, -2))
    n = array_ops.shape(ids)[-1]
    positions = range_(n)
    earlier = math_ops.less(
        array_ops.expand_dims(positions, 0), array_ops.expand_dims(positions, 1)
    )
    repeated = math_ops.reduce_any(math_ops.logical_and(same, earlier), -1)
    return math_ops.logical_and(valid, math_ops.logical_not(repeated))


def _dense_labels(labels: Any, predictions_idx: Tensor) -> tuple[Tensor, Tensor]:
    """Labels as ``[..., num_labels]`` int64 ids and a mask of the real ones (a
    ``SparseTensor``'s rows are padded with -1, masked out)."""
    if isinstance(labels, SparseTensor):
        values = cast(labels.values, dtypes.int64)
        ids = sparse_tensor_to_dense(
            SparseTensor(labels.indices, values, labels.dense_shape), default_value=-1
        )
        ones = array_ops.ones_like(values, dtype=dtypes.int32)
        filled = sparse_tensor_to_dense(SparseTensor(labels.indices, ones, labels.dense_shape))
        return ids, math_ops.greater(filled, 0)
    ids = cast(convert_to_tensor(labels), dtypes.int64)
    rank, prediction_rank = ids.shape.rank, predictions_idx.shape.rank
    if rank is not None and prediction_rank is not None and rank == prediction_rank - 1:
        ids = array_ops.expand_dims(ids, -1)
    return ids, array_ops.ones_like(ids, dtype=dtypes.bool)


def _set_counts(
    labels: Any, predictions_idx: Tensor, class_id: int | None
) -> tuple[Tensor, Tensor, Tensor]:
    """Per-row float64 (true positives, false positives, false negatives)."""
    ids, present = _dense_labels(labels, predictions_idx)
    predicted = cast(predictions_idx, dtypes.int64)
    predicted_valid = array_ops.ones_like(predicted, dtype=dtypes.bool)
    if class_id is not None:
        present = math_ops.logical_and(present, math_ops.equal(ids, class_id))
        predicted_valid = math_ops.equal(predicted, class_id)
    in_labels = math_ops.reduce_any(
        math_ops.logical_and(
            math_ops.equal(array_ops.expand_dims(predicted, -1), array_ops.expand_dims(ids, -2)),
            array_ops.expand_dims(present, -2),
        ),
        -1,
    )
    members = _first_of_row(predicted, predicted_valid)
    label_members = _first_of_row(ids, present)

    def count(mask: Tensor) -> Tensor:
        return math_ops.reduce_sum(cast(mask, dtypes.float64), -1)

    tp = count(math_ops.logical_and(members, in_labels))
    fp = count(math_ops.logical_and(members, math_ops.logical_not(in_labels)))
    fn = count(label_members) - tp
    return tp, fp, fn


def _running_sum(per_row: Tensor, weights: Any, scope_name: str) -> tuple[Tensor, Tensor]:
    """A float64 running total of ``per_row`` (times ``weights``) in a variable named
    after its own name scope ``scope_name``, and its update op ``<scope>/update``."""
    with name_scope(None, scope_name, (per_row, weights)) as scope:
        if weights is not None:
            per_row = per_row * cast(convert_to_tensor(weights), dtypes.float64)
        return running_total(per_row, [], dtypes.float64, scope, update_name="update")


def _ratio_at_top_k(
    kind: str,
    labels: Any,
    predictions_idx: Any,
    k: int | None,
    class_id: int | None,
    weights: Any,
    metrics: Any,
    updates: Any,
    name: str | None,
) -> tuple[Tensor, Tensor]:
    scope_name = _at_k_name(kind, k, class_id)
    with name_scope(name, scope_name, (predictions_idx, labels, weights)) as scope:
        predictions_idx = cast(convert_to_tensor(predictions_idx), dtypes.int64)
        tp_rows, fp_rows, fn_rows = _set_counts(labels, predictions_idx, class_id)
        tp, tp_update = _running_sum(tp_rows, weights, _at_k_name("true_positive", k, class_id))
        if kind == "precision":
            other_name, other_rows = "false_positive", fp_rows
        else:
            other_name, other_rows = "false_negative", fn_rows
        other, other_update = _running_sum(other_rows, weights, _at_k_name(other_name, k, class_id))
        value = math_ops.div(tp, math_ops.add(tp, other), name=scope)
        update = math_ops.div(tp_update, math_ops.add(tp_update, other_update), name="update")
        return collect(value, update, metrics, updates)


def precision_at_top_k(
    labels: Any,
    predictions_idx: Any,
    k: int | None = None,
    class_id: int | None = None,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """Running precision of predicted ids ``predictions_idx`` (``[..., k]``) against
    ``labels``: ``tp / (tp + fp)`` (float64; NaN before anything is counted)."""
    return _ratio_at_top_k(
        "precision",
        labels,
        predictions_idx,
        k,
        class_id,
        weights,
        metrics_collections,
        updates_collections,
        name,
    )


def recall_at_top_k(
    labels: Any,
    predictions_idx: Any,
    k: int | None = None,
    class_id: int | None = None,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """Running recall of predicted ids ``predictions_idx`` (``[..., k]``) against
    ``labels``: ``tp / (tp + fn)`` (float64; NaN before anything is counted)."""
    return _ratio_at_top_k(
        "recall",
        labels,
        predictions_idx,
        k,
        class_id,
        weights,
        metrics_collections,
        updates_collections,
        name,
    )


def precision_at_k(
    labels: Any,
    predictions: Any,
    k: int,
    class_id: int | None = None,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """``precision_at_top_k`` of the ``k`` highest ``predictions`` (scores ``[..., C]``)."""
    with name_scope(
        name, _at_k_name("precision", k, class_id), (predictions, labels, weights)
    ) as scope:
        top = math_ops.top_k(predictions, k).indices
        return precision_at_top_k(
            labels, top, k, class_id, weights, metrics_collections, updates_collections, scope
        )


def recall_at_k(
    labels: Any,
    predictions: Any,
    k: int,
    class_id: int | None = None,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """``recall_at_top_k`` of the ``k`` highest ``predictions`` (scores ``[..., C]``)."""
    with name_scope(
        name, _at_k_name("recall", k, class_id), (predictions, labels, weights)
    ) as scope:
        top = math_ops.top_k(predictions, k).indices
        return recall_at_top_k(
            labels, top, k, class_id, weights, metrics_collections, updates_collections, scope
        )


def _average_precision_rows(
    labels: Any, predictions_idx: Tensor, k: int, classes: Tensor
) -> Tensor:
    """Per-row average precision of the ranked ids: the sum over relevant positions of
    the precision up to them, over ``min(k, number of labels)`` (labels outside
    ``[0, classes)`` are not counted; a ``SparseTensor`` row's set counts each id once)."""
    ids, present = _dense_labels(labels, predictions_idx)
    # TF1 cleans labels at or above ``classes`` only when the largest one is.
    out_of_range = math_ops.logical_and(
        math_ops.greater_equal(math_ops.reduce_max(ids), classes),
        math_ops.greater_equal(ids, classes),
    )
    present = math_ops.logical_and(present, math_ops.logical_not(out_of_range))
    with name_scope(None, "average_precision", (predictions_idx, labels)) as scope:
        hit = math_ops.reduce_any(
            math_ops.logical_and(
                math_ops.equal(
                    array_ops.expand_dims(predictions_idx, -1), array_ops.expand_dims(ids, -2)
                ),
                array_ops.expand_dims(present, -2),
            ),
            -1,
        )
        relevant = cast(hit, dtypes.float64)
        found = math_ops.cumsum(relevant, axis=-1)
        retrieved = math_ops.cumsum(array_ops.ones_like(relevant), axis=-1)
        summed = math_ops.reduce_sum(math_ops.div(found, retrieved) * relevant, -1)
        if isinstance(labels, SparseTensor):
            members = _first_of_row(ids, present)
        else:
            members = math_ops.logical_and(present, math_ops.greater_equal(ids, 0))
        label_count = math_ops.reduce_sum(cast(members, dtypes.float64), -1)
        return math_ops.div(summed, math_ops.minimum(label_count, float(k)), name=scope)


def average_precision_at_k(
    labels: Any,
    predictions: Any,
    k: int,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """The running mean over rows of the average precision of the ``k`` highest
    ``predictions``: ``average_precision_at_<k>/total`` over ``.../max`` (the row count,
    or the sum of ``weights``), float64.

    Raises:
        ValueError: ``k < 1``.
    """
    if k < 1:
        raise ValueError(f"Invalid k={k}.")
    with name_scope(
        name, _at_k_name("average_precision", k), (predictions, labels, weights)
    ) as scope:
        predictions = convert_to_tensor(predictions)
        top = cast(math_ops.top_k(predictions, k).indices, dtypes.int64)
        classes = cast(array_ops.shape(predictions)[-1], dtypes.int64)
        rows = _average_precision_rows(labels, top, k, classes)
        if weights is None:
            w = array_ops.ones_like(rows)
        else:
            w = broadcast_weights(weights, rows, dtypes.float64)
            rows = rows * w
        most, most_update = _running_sum(w, None, "max")
        total, total_update = _running_sum(rows, None, "total")
        value = math_ops.div_no_nan(total, most, name="mean")
        update = math_ops.div_no_nan(total_update, most_update, name=scope)
        return collect(value, update, metrics_collections, updates_collections)


sparse_precision_at_k = precision_at_k
sparse_average_precision_at_k = average_precision_at_k
