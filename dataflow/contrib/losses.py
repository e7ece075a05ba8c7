"""``tf.contrib.losses`` (also TF-Slim's ``slim.losses``): TF 1.15's deprecated loss
functions, which ``tf.losses`` replaced with the arguments in another order.

Each loss is built from core ops and reduced by ``compute_weighted_loss`` as TF 1.15's
``contrib/losses/python/losses/loss_ops.py`` reduces: the losses are summed over the
axes ``weights`` lacks, multiplied by ``weights`` and summed; the mean divides by the
number of elements the nonzero weights cover (zero when none do). A ``weights`` of shape
``[batch]`` therefore weighs whole examples of a ``[batch, d]`` loss, where ``tf.losses``
would broadcast it against the last axis. The mean is added to ``GraphKeys.LOSSES``.
``hinge_loss`` returns the unweighted, unreduced losses, as TF 1.15's does.
"""

from __future__ import annotations

from typing import Any

import dataflow as tf

from ..losses import add_loss as add_loss
from ..losses import get_losses as get_losses
from ..losses import get_regularization_losses as get_regularization_losses
from ..losses import get_total_loss as get_total_loss
from .missing import contrib_hook


def _rank(t: Any, what: str) -> int:
    if t.shape.rank is None:
        raise ValueError(f"{what}.get_shape().ndims cannot be None")
    return t.shape.rank


def _num_present(losses: Any, weights: Any, per_batch: bool = False) -> Any:
    """The number of loss elements the nonzero ``weights`` cover (per example with
    ``per_batch``)."""
    shape = tf.shape(losses)
    if weights.shape.rank == 0:
        batch = tf.cast(shape[0], tf.float32)
        per_example = tf.cast(tf.size(losses), tf.float32) / batch
        per_example = tf.where(tf.equal(weights, 0.0), 0.0, per_example)
        counts = tf.ones(tf.reshape(shape[0], [1])) * per_example
    else:
        nonzero = tf.cast(tf.not_equal(weights, 0.0), tf.float32)
        nonzero = tf.reduce_sum(nonzero, axis=list(range(1, weights.shape.rank)))
        spread = tf.cast(tf.reduce_prod(shape[weights.shape.rank :]), tf.float32)
        counts = nonzero * spread
    return counts if per_batch else tf.reduce_sum(counts)


def _scale(losses: Any, weights: Any) -> Any:
    """``losses`` summed over the axes ``weights`` lacks, times ``weights``, summed."""
    axes = list(range(max(0, weights.shape.rank), losses.shape.rank))
    return tf.reduce_sum(tf.reduce_sum(losses, axis=axes) * weights)


def _safe_div(numerator: Any, denominator: Any) -> Any:
    safe = tf.where(tf.equal(denominator, 0.0), tf.ones_like(denominator), denominator)
    return tf.where(tf.greater(denominator, 0.0), numerator / safe, tf.zeros_like(numerator))


def compute_weighted_loss(losses: Any, weights: Any = 1.0, scope: Any = None) -> Any:
    """The weighted mean of ``losses`` (see the module docstring), added to
    ``GraphKeys.LOSSES``.

    Raises:
        ValueError: the rank of ``losses`` or ``weights`` is unknown.
    """
    with tf.name_scope(scope, "weighted_loss", [losses, weights]):
        losses = tf.convert_to_tensor(losses)
        input_dtype = losses.dtype
        losses = tf.cast(losses, tf.float32)
        weights = tf.cast(tf.convert_to_tensor(weights), tf.float32)
        _rank(losses, "losses")
        w_rank = _rank(weights, "weights")
        if w_rank > 1 and weights.shape.as_list()[-1] in (1, None):
            weights = tf.squeeze(weights, [-1])
        mean = _safe_div(_scale(losses, weights), _num_present(losses, weights))
        mean = tf.cast(mean, input_dtype)
        add_loss(mean)
        return mean


def _pair(predictions: Any, labels: Any) -> tuple:
    predictions, labels = tf.convert_to_tensor(predictions), tf.convert_to_tensor(labels)
    predictions.shape.assert_is_compatible_with(labels.shape)
    return tf.cast(predictions, tf.float32), tf.cast(labels, tf.float32)


def absolute_difference(
    predictions: Any, labels: Any = None, weights: Any = 1.0, scope: Any = None
) -> Any:
    """The weighted mean of ``|predictions - labels|``."""
    with tf.name_scope(scope, "absolute_difference", [predictions, labels, weights]):
        predictions, labels = _pair(predictions, labels)
        return compute_weighted_loss(tf.abs(predictions - labels), weights)


def mean_squared_error(
    predictions: Any, labels: Any = None, weights: Any = 1.0, scope: Any = None
) -> Any:
    """The weighted mean of ``(predictions - labels) ** 2``."""
    with tf.name_scope(scope, "mean_squared_error", [predictions, labels, weights]):
        predictions, labels = _pair(predictions, labels)
        return compute_weighted_loss(tf.square(predictions - labels), weights)


def log_loss(
    predictions: Any,
    labels: Any = None,
    weights: Any = 1.0,
    epsilon: float = 1e-7,
    scope: Any = None,
) -> Any:
    """The weighted mean of the binary log loss of probabilities ``predictions``."""
    with tf.name_scope(scope, "log_loss", [predictions, labels, weights]):
        p, y = _pair(predictions, labels)
        losses = -y * tf.log(p + epsilon) - (1 - y) * tf.log(1 - p + epsilon)
        return compute_weighted_loss(losses, weights)


def hinge_loss(logits: Any, labels: Any = None, scope: Any = None) -> Any:
    """``relu(1 - (2 * labels - 1) * logits)`` elementwise: unweighted, unreduced."""
    with tf.name_scope(scope, "hinge_loss", [logits, labels]):
        logits, labels = tf.convert_to_tensor(logits), tf.convert_to_tensor(labels)
        logits.shape.assert_is_compatible_with(labels.shape)
        signs = 2 * tf.cast(labels, tf.float32) - 1
        return tf.nn.relu(1 - signs * logits)


def cosine_distance(
    predictions: Any,
    labels: Any = None,
    axis: int | None = None,
    weights: Any = 1.0,
    scope: Any = None,
    dim: int | None = None,
) -> Any:
    """The weighted mean of ``1 - sum(predictions * labels, axis)`` (both unit-normalized).

    Raises:
        ValueError: both or neither of ``axis`` and ``dim``.
    """
    if dim is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'axis' and 'dim'")
        axis = dim
    if axis is None:
        raise ValueError("`axis` and `dim` cannot both be None.")
    with tf.name_scope(scope, "cosine_distance_loss", [predictions, labels, weights]):
        predictions, labels = _pair(predictions, labels)
        losses = 1 - tf.reduce_sum(predictions * labels, axis=[axis])
        return compute_weighted_loss(losses, weights)


def sigmoid_cross_entropy(
    logits: Any,
    multi_class_labels: Any,
    weights: Any = 1.0,
    label_smoothing: float = 0,
    scope: Any = None,
) -> Any:
    """The weighted mean of the sigmoid cross-entropy, labels smoothed towards 1/2."""
    with tf.name_scope(scope, "sigmoid_cross_entropy_loss", [logits, multi_class_labels]):
        logits = tf.convert_to_tensor(logits)
        labels = tf.convert_to_tensor(multi_class_labels)
        logits.shape.assert_is_compatible_with(labels.shape)
        labels = tf.cast(labels, logits.dtype)
        if label_smoothing > 0:
            labels = labels * (1 - label_smoothing) + 0.5 * label_smoothing
        losses = tf.nn.sigmoid_cross_entropy_with_logits(
            labels=labels, logits=logits, name="xentropy"
        )
        return compute_weighted_loss(losses, weights)


def softmax_cross_entropy(
    logits: Any,
    onehot_labels: Any,
    weights: Any = 1.0,
    label_smoothing: float = 0,
    scope: Any = None,
) -> Any:
    """The weighted mean of the softmax cross-entropy, labels smoothed towards
    ``1 / num_classes``."""
    with tf.name_scope(scope, "softmax_cross_entropy_loss", [logits, onehot_labels]):
        logits = tf.convert_to_tensor(logits)
        labels = tf.convert_to_tensor(onehot_labels)
        logits.shape.assert_is_compatible_with(labels.shape)
        labels = tf.cast(labels, logits.dtype)
        if label_smoothing > 0:
            classes = tf.cast(tf.shape(labels)[1], logits.dtype)
            labels = labels * (1.0 - label_smoothing) + label_smoothing / classes
        losses = tf.nn.softmax_cross_entropy_with_logits_v2(
            labels=tf.stop_gradient(labels), logits=logits, name="xentropy"
        )
        return compute_weighted_loss(losses, weights)


def sparse_softmax_cross_entropy(
    logits: Any, labels: Any, weights: Any = 1.0, scope: Any = None
) -> Any:
    """The weighted mean of the sparse softmax cross-entropy; ``labels`` ``[batch]`` or
    ``[batch, 1]``."""
    with tf.name_scope(scope, "sparse_softmax_cross_entropy_loss", [logits, labels]):
        labels = tf.convert_to_tensor(labels)
        labels = tf.reshape(labels, tf.reshape(tf.shape(labels)[0], [1]))
        losses = tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=labels, logits=logits, name="xentropy"
        )
        return compute_weighted_loss(losses, weights)


__getattr__ = contrib_hook("losses", __name__)
