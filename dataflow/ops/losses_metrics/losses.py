"""``tf.losses``: weighted losses that reduce to a scalar and record themselves in the
``tf.GraphKeys.LOSSES`` collection, as TF1's ``losses_impl``.

Every loss computes per-element losses, then ``compute_weighted_loss`` multiplies them
by ``weights`` (broadcast) and reduces as ``reduction`` says. The default,
``SUM_BY_NONZERO_WEIGHTS``, divides the weighted sum by the number of elements whose
broadcast weight is non-zero (all of them when ``weights`` is a non-zero Python
number), and gives 0 rather than NaN when there are none.

Precision: TF1 computes the weighting in float32 whatever the input dtype. Here float16
inputs are weighted in float32 (as TF) but float64 inputs stay in float64, so float64
models keep their precision; float32 results are TF's.

Example::

    loss = tf.losses.mean_squared_error(labels, predictions, weights=[[1.], [0.]])
    # (sum of squared errors of row 0) / (number of elements of row 0)
    tf.losses.get_total_loss()   # this loss plus any regularization losses
"""

from __future__ import annotations

import numbers
from typing import Any

from ...framework import dtypes
from ...framework.graph import Tensor, convert_to_tensor, get_default_graph
from ...framework.scopes import name_scope
from .. import array as array_ops
from .. import math as math_ops
from ..constant import constant
from ..control.group import stop_gradient
from ..nn import activations as nn
from ..state.variables import GraphKeys

LOSSES = GraphKeys.LOSSES
REGULARIZATION_LOSSES = GraphKeys.REGULARIZATION_LOSSES


class Reduction:
    """How ``compute_weighted_loss`` reduces weighted per-element losses."""

    NONE = "none"
    SUM = "weighted_sum"
    SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"
    MEAN = "weighted_mean"
    SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"
    SUM_OVER_NONZERO_WEIGHTS = SUM_BY_NONZERO_WEIGHTS

    @classmethod
    def all(cls) -> tuple[str, ...]:
        return (
            cls.NONE,
            cls.SUM,
            cls.MEAN,
            cls.SUM_OVER_BATCH_SIZE,
            cls.SUM_OVER_NONZERO_WEIGHTS,
            cls.SUM_BY_NONZERO_WEIGHTS,
        )

    @classmethod
    def validate(cls, key: str) -> None:
        if key not in cls.all():
            raise ValueError(f"Invalid Reduction Key {key}. Key should be one of {cls.all()}.")


def _compute_dtype(dtype: dtypes.DType) -> dtypes.DType:
    return dtypes.float64 if dtype == dtypes.float64 else dtypes.float32


def _cast(x: Tensor, dtype: dtypes.DType) -> Tensor:
    return x if x.dtype == dtype else math_ops.cast(x, dtype)


def _safe_div(total: Tensor, count: Tensor) -> Tensor:
    """``total / count``, and 0 where ``count`` is 0."""
    return math_ops.div_no_nan(total, count, name="value")


def _num_elements(losses: Tensor) -> Tensor:
    with name_scope(None, "num_elements", [losses]):
        return math_ops.cast(array_ops.size(losses), losses.dtype)


def _num_present(losses: Tensor, weights: Any, weights_t: Tensor) -> Tensor:
    """The number of elements of ``losses`` whose broadcast weight is non-zero."""
    if isinstance(weights, numbers.Real) and not isinstance(weights, bool) and weights != 0:
        return _num_elements(losses)
    with name_scope(None, "num_present", [losses, weights_t]):
        zero = constant(0, dtype=weights_t.dtype)
        present = math_ops.cast(math_ops.not_equal(weights_t, zero), losses.dtype)
        present = math_ops.multiply(present, array_ops.ones_like(losses))  # broadcast
        return math_ops.reduce_sum(present)


def _check_weights(weights: Tensor, losses: Tensor) -> None:
    """TF's ``assert_broadcastable``, statically: weights are a scalar, or of the rank
    of ``losses`` with each dimension 1 or equal."""
    w, lo = weights.shape, losses.shape
    if w.rank is None or lo.rank is None or w.rank == 0:
        return
    if w.rank != lo.rank:
        raise ValueError(
            f"weights can not be broadcast to values. values.rank={lo.rank}. "
            f"weights.rank={w.rank}. values.shape={lo}. weights.shape={w}."
        )
    for a, b in zip(w.as_list(), lo.as_list(), strict=True):
        if a is not None and b is not None and a not in (1, b):
            raise ValueError(
                f"weights can not be broadcast to values. values.shape={lo}. weights.shape={w}."
            )


def compute_weighted_loss(
    losses: Any,
    weights: Any = 1.0,
    scope: str | None = None,
    loss_collection: str | None = LOSSES,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Tensor:
    """Weights per-element ``losses`` and reduces them.

    Args:
        losses: a float tensor of per-element losses.
        weights: a scalar, or a tensor broadcastable to ``losses`` (of its rank, each
            dimension 1 or equal).
        scope: a name scope.
        loss_collection: the collection the loss is added to (``None``: none).
        reduction: a ``Reduction`` key (default ``SUM_BY_NONZERO_WEIGHTS``).

    Returns:
        A scalar of the dtype of ``losses`` (the weighted losses for ``NONE``).
    """
    Reduction.validate(reduction)
    if weights is None:
        raise ValueError("weights must not be None")
    with name_scope(scope, "weighted_loss", [losses, weights]):
        losses = convert_to_tensor(losses)
        input_dtype = losses.dtype
        dtype = _compute_dtype(input_dtype)
        weights_t = _cast(
            convert_to_tensor(weights, dtype=dtype if isinstance(weights, numbers.Real) else None),
            dtype,
        )
        _check_weights(weights_t, losses)
        losses = _cast(losses, dtype)
        weighted = math_ops.multiply(losses, weights_t)
        if reduction == Reduction.NONE:
            loss = weighted
        else:
            loss = math_ops.reduce_sum(weighted)
            if reduction == Reduction.MEAN:
                loss = _safe_div(
                    loss,
                    math_ops.reduce_sum(math_ops.multiply(array_ops.ones_like(losses), weights_t)),
                )
            elif reduction == Reduction.SUM_BY_NONZERO_WEIGHTS:
                loss = _safe_div(loss, _num_present(losses, weights, weights_t))
            elif reduction == Reduction.SUM_OVER_BATCH_SIZE:
                loss = _safe_div(loss, _num_elements(losses))
        loss = _cast(loss, input_dtype)
        add_loss(loss, loss_collection)
        return loss


def mean_squared_error(
    labels: Any,
    predictions: Any,
    weights: Any = 1.0,
    scope: str | None = None,
    loss_collection: str | None = LOSSES,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Tensor:
    """Weighted mean squared error between ``labels`` and ``predictions``.

    Args:
        labels: the ground truth, of the shape of ``predictions``.
        predictions: the predicted values.
        weights: a scalar or a tensor broadcastable to the losses.
        scope: a name scope.
        loss_collection: the collection the loss is added to.
        reduction: a ``Reduction`` key.

    Raises:
        ValueError: ``labels`` or ``predictions`` is ``None``, or their shapes differ.
    """
    with name_scope(scope, "mean_squared_error", [predictions, labels, weights]) as sc:
        labels, predictions = _pair(labels, predictions)
        losses = math_ops.squared_difference(predictions, labels)
        return compute_weighted_loss(losses, weights, sc, loss_collection, reduction)


def _require_arguments(**arguments: Any) -> None:
    """A ``ValueError`` naming the first argument that is ``None`` (in the order given)."""
    for name, value in arguments.items():
        if value is None:
            raise ValueError(f"Argument `{name}` must not be None.")


def _labels_like_logits(labels: Any, logits: Any) -> tuple[Tensor, Tensor]:
    """``labels`` cast to the dtype of ``logits`` (as a tensor), shapes checked compatible."""
    logits = convert_to_tensor(logits)
    labels = _cast(convert_to_tensor(labels), logits.dtype)
    if not logits.shape.is_compatible_with(labels.shape):
        raise ValueError(f"Shapes {logits.shape} and {labels.shape} are incompatible")
    return labels, logits


def softmax_cross_entropy(
    onehot_labels: Any,
    logits: Any,
    weights: Any = 1.0,
    label_smoothing: float = 0,
    scope: str | None = None,
    loss_collection: str | None = LOSSES,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Tensor:
    """Weighted softmax cross-entropy between one-hot ``onehot_labels`` and ``logits``.

    Args:
        onehot_labels: one-hot (or probability) labels, ``[batch, num_classes]``.
        logits: unscaled log probabilities, ``[batch, num_classes]``.
        weights: a scalar, or ``[batch]`` per-example weights.
        label_smoothing: if positive, labels become ``labels * (1 - label_smoothing) +
            label_smoothing / num_classes``.
        scope, loss_collection, reduction: as for ``mean_squared_error``.

    Raises:
        ValueError: a missing argument, or mismatched shapes.
    """
    _require_arguments(onehot_labels=onehot_labels, logits=logits)
    with name_scope(scope, "softmax_cross_entropy_loss", [logits, onehot_labels, weights]) as sc:
        labels, logits = _labels_like_logits(onehot_labels, logits)
        if label_smoothing > 0:
            static = labels.shape[-1].value if labels.shape.rank else None
            num_classes = (
                constant(static, dtype=logits.dtype)
                if static is not None
                else math_ops.cast(array_ops.shape(labels)[-1], logits.dtype)
            )
            labels = math_ops.add(
                math_ops.multiply(labels, constant(1 - label_smoothing, dtype=logits.dtype)),
                math_ops.divide(constant(label_smoothing, dtype=logits.dtype), num_classes),
            )
        labels = stop_gradient(labels)
        losses = nn.softmax_cross_entropy_with_logits_v2(
            labels=labels, logits=logits, name="xentropy"
        )
        return compute_weighted_loss(losses, weights, sc, loss_collection, reduction)


def sparse_softmax_cross_entropy(
    labels: Any,
    logits: Any,
    weights: Any = 1.0,
    scope: str | None = None,
    loss_collection: str | None = LOSSES,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Tensor:
    """Weighted softmax cross-entropy between integer ``labels`` and ``logits``.

    Args:
        labels: int class ids, ``[batch]`` (or ``[batch, 1]``, squeezed as in TF).
        logits: unscaled log probabilities, ``[batch, num_classes]``.
        weights: a scalar, or ``[batch]`` per-example weights (``[batch, 1]`` is
            squeezed).
        scope, loss_collection, reduction: as for ``mean_squared_error``.
    """
    _require_arguments(labels=labels, logits=logits)
    with name_scope(scope, "sparse_softmax_cross_entropy_loss", [logits, labels, weights]) as sc:
        logits = convert_to_tensor(logits)
        labels = convert_to_tensor(labels)
        labels, weights = _remove_squeezable(labels, logits, weights)
        losses = nn.sparse_softmax_cross_entropy_with_logits(
            labels=labels, logits=logits, name="xentropy"
        )
        return compute_weighted_loss(losses, weights, sc, loss_collection, reduction)


def _pair(labels: Any, predictions: Any, what: str = "predictions") -> tuple:
    """Both as tensors of the compute dtype, checked for compatible shapes."""
    _require_arguments(labels=labels, **{what: predictions})
    predictions = convert_to_tensor(predictions)
    dtype = _compute_dtype(predictions.dtype)
    predictions = _cast(predictions, dtype)
    labels = _cast(convert_to_tensor(labels), dtype)
    if not predictions.shape.is_compatible_with(labels.shape):
        raise ValueError(f"Shapes {predictions.shape} and {labels.shape} are incompatible")
    return labels, predictions


def absolute_difference(
    labels: Any,
    predictions: Any,
    weights: Any = 1.0,
    scope: str | None = None,
    loss_collection: str | None = LOSSES,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Tensor:
    """Weighted absolute difference ``|predictions - labels|`` (an L1 loss). Arguments as
    for ``mean_squared_error``."""
    with name_scope(scope, "absolute_difference", [predictions, labels, weights]) as sc:
        labels, predictions = _pair(labels, predictions)
        losses = math_ops.abs(math_ops.subtract(predictions, labels))
        return compute_weighted_loss(losses, weights, sc, loss_collection, reduction)


def huber_loss(
    labels: Any,
    predictions: Any,
    weights: Any = 1.0,
    delta: float = 1.0,
    scope: str | None = None,
    loss_collection: str | None = LOSSES,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Tensor:
    """Weighted Huber loss: ``0.5 * e**2`` for ``|e| <= delta``, else ``delta * (|e| -
    0.5 * delta)``, with ``e = predictions - labels``."""
    with name_scope(scope, "huber_loss", [predictions, labels, weights]) as sc:
        labels, predictions = _pair(labels, predictions)
        error = math_ops.abs(math_ops.subtract(predictions, labels))
        delta_t = constant(delta, dtype=error.dtype)
        quadratic = math_ops.minimum(error, delta_t)
        linear = math_ops.subtract(error, quadratic)
        losses = math_ops.add(
            math_ops.multiply(constant(0.5, dtype=error.dtype), math_ops.square(quadratic)),
            math_ops.multiply(delta_t, linear),
        )
        return compute_weighted_loss(losses, weights, sc, loss_collection, reduction)


def log_loss(
    labels: Any,
    predictions: Any,
    weights: Any = 1.0,
    epsilon: float = 1e-7,
    scope: str | None = None,
    loss_collection: str | None = LOSSES,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Tensor:
    """Weighted log loss of probabilities: ``-labels * log(predictions + epsilon) - (1 -
    labels) * log(1 - predictions + epsilon)``."""
    with name_scope(scope, "log_loss", [predictions, labels, weights]) as sc:
        labels, predictions = _pair(labels, predictions)
        eps = constant(epsilon, dtype=labels.dtype)
        one = constant(1, dtype=labels.dtype)
        losses = math_ops.subtract(
            math_ops.negative(
                math_ops.multiply(labels, math_ops.log(math_ops.add(predictions, eps)))
            ),
            math_ops.multiply(
                math_ops.subtract(one, labels),
                math_ops.log(math_ops.add(math_ops.subtract(one, predictions), eps)),
            ),
        )
        return compute_weighted_loss(losses, weights, sc, loss_collection, reduction)


def sigmoid_cross_entropy(
    multi_class_labels: Any,
    logits: Any,
    weights: Any = 1.0,
    label_smoothing: float = 0,
    scope: str | None = None,
    loss_collection: str | None = LOSSES,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Tensor:
    """Weighted sigmoid cross-entropy of independent binary ``multi_class_labels``; with
    ``label_smoothing``, labels become ``labels * (1 - s) + 0.5 * s``."""
    _require_arguments(multi_class_labels=multi_class_labels, logits=logits)
    with name_scope(
        scope, "sigmoid_cross_entropy_loss", [logits, multi_class_labels, weights]
    ) as sc:
        labels, logits = _labels_like_logits(multi_class_labels, logits)
        if label_smoothing > 0:
            labels = math_ops.add(
                math_ops.multiply(labels, constant(1 - label_smoothing, dtype=logits.dtype)),
                constant(0.5 * label_smoothing, dtype=logits.dtype),
            )
        losses = nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, sc, loss_collection, reduction)


def hinge_loss(
    labels: Any,
    logits: Any,
    weights: Any = 1.0,
    scope: str | None = None,
    loss_collection: str | None = LOSSES,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Tensor:
    """Weighted hinge loss ``max(0, 1 - (2 * labels - 1) * logits)`` for 0/1 ``labels``."""
    with name_scope(scope, "hinge_loss", [logits, labels, weights]) as sc:
        labels, logits = _pair(labels, logits, "logits")
        one = constant(1, dtype=logits.dtype)
        signs = math_ops.subtract(math_ops.multiply(constant(2, dtype=logits.dtype), labels), one)
        losses = nn.relu(math_ops.subtract(one, math_ops.multiply(signs, logits)))
        return compute_weighted_loss(losses, weights, sc, loss_collection, reduction)


def cosine_distance(
    labels: Any,
    predictions: Any,
    axis: int | None = None,
    weights: Any = 1.0,
    scope: str | None = None,
    loss_collection: str | None = LOSSES,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
    dim: int | None = None,
) -> Tensor:
    """Weighted cosine distance ``1 - sum(labels * predictions, axis)`` between
    unit-normalized ``labels`` and ``predictions``. ``dim`` is an alias of ``axis``."""
    if axis is not None and dim is not None:
        raise ValueError("Cannot specify both 'axis' and 'dim'")
    axis = dim if axis is None else axis
    if axis is None:
        raise ValueError("You must specify argument `axis`.")
    with name_scope(scope, "cosine_distance_loss", [predictions, labels, weights]) as sc:
        labels, predictions = _pair(labels, predictions)
        total = math_ops.reduce_sum(
            math_ops.multiply(predictions, labels), axis=[axis], keepdims=True
        )
        losses = math_ops.subtract(constant(1, dtype=total.dtype), total)
        return compute_weighted_loss(losses, weights, sc, loss_collection, reduction)


def mean_pairwise_squared_error(
    labels: Any,
    predictions: Any,
    weights: Any = 1.0,
    scope: str | None = None,
    loss_collection: str | None = LOSSES,
) -> Tensor:
    """The mean, over each sample's pairs of elements, of the squared difference of their
    differences: ``(p_j - p_k) - (l_j - l_k)``, summed over the batch (TF1's
    ``tf.losses.mean_pairwise_squared_error``).

    With ``d = predictions - labels`` over a sample's ``n`` elements (``n`` counting the
    elements whose broadcast weight is non-zero), the pairs' mean is
    ``2 * (sum(d**2) / (n - 1) - sum(d)**2 / (n * (n - 1)))``, which needs no ``n**2``
    pairs in memory; samples with ``n < 2`` give 0. Each sample's value is multiplied by
    its weight (``weights`` broadcast to ``labels``: a scalar, or ``[batch, 1, ...]``
    for one per sample), then the batch is summed; 0 if nothing is present. Dimension 0
    is the batch. Each ``value`` op is named as TF1 names it (the result is
    ``.../value_2``).
    """
    with name_scope(scope, "mean_pairwise_squared_error", [predictions, labels, weights]):
        labels, predictions = _pair(labels, predictions)
        weights_t = _cast(convert_to_tensor(weights), predictions.dtype)
        diffs = math_ops.subtract(predictions, labels)
        _check_weights(weights_t, diffs)
        axis = array_ops.range_(1, array_ops.rank(diffs))
        # Elements of each sample whose broadcast weight is non-zero.
        zero = constant(0, dtype=weights_t.dtype)
        present = math_ops.cast(math_ops.not_equal(weights_t, zero), diffs.dtype)
        present = math_ops.multiply(present, array_ops.ones_like(diffs))
        n = math_ops.reduce_sum(present, axis=axis, keepdims=True)
        one = constant(1, dtype=diffs.dtype)
        squares = math_ops.reduce_sum(math_ops.square(diffs), axis=axis, keepdims=True)
        term1 = math_ops.multiply(
            constant(2, dtype=diffs.dtype),
            math_ops.div_no_nan(
                squares, math_ops.maximum(math_ops.subtract(n, one), 0.0), name="value"
            ),
        )
        total = math_ops.reduce_sum(diffs, axis=axis, keepdims=True)
        pairs = math_ops.maximum(math_ops.multiply(n, math_ops.subtract(n, one)), 0.0)
        term2 = math_ops.multiply(
            constant(2, dtype=diffs.dtype),
            math_ops.div_no_nan(math_ops.square(total), pairs, name="value"),
        )
        per_sample = math_ops.subtract(term1, term2)
        loss = math_ops.reduce_sum(math_ops.multiply(per_sample, weights_t))
        result = math_ops.where(
            math_ops.greater(math_ops.reduce_sum(n), constant(0, dtype=n.dtype)),
            loss,
            array_ops.zeros_like(loss),
            name="value",
        )
        add_loss(result, loss_collection)
        return result


def _remove_squeezable(labels: Tensor, logits: Tensor, weights: Any) -> tuple:
    """Squeezes a trailing size-1 dimension of ``labels`` (and then of ``weights``) when
    their rank is one more than expected (static ranks only)."""
    lr, gr = labels.shape.rank, logits.shape.rank
    if lr is not None and gr is not None and lr == gr:
        last = labels.shape[-1].value
        if last in (1, None):
            labels = array_ops.squeeze(labels, [-1])
    if isinstance(weights, numbers.Real):
        return labels, weights
    weights = convert_to_tensor(weights)
    wr, lr = weights.shape.rank, labels.shape.rank
    if wr is not None and lr is not None and wr == lr + 1:
        weights = array_ops.squeeze(weights, [-1])
    return labels, weights


def add_loss(loss: Any, loss_collection: str | None = LOSSES) -> None:
    """Adds ``loss`` to the ``loss_collection`` collection (none when ``None``)."""
    if loss_collection:
        get_default_graph().add_to_collection(loss_collection, loss)


def get_losses(scope: str | None = None, loss_collection: str = LOSSES) -> list:
    """The losses in ``loss_collection`` (those whose names match ``scope``)."""
    return get_default_graph().get_collection(loss_collection, scope)


def get_regularization_losses(scope: str | None = None) -> list:
    """The losses in the ``REGULARIZATION_LOSSES`` collection."""
    return get_default_graph().get_collection(REGULARIZATION_LOSSES, scope)


def get_regularization_loss(
    scope: str | None = None, name: str = "total_regularization_loss"
) -> Tensor:
    """The sum of the regularization losses (0.0 when there are none)."""
    losses = get_regularization_losses(scope)
    if losses:
        return math_ops.add_n(losses, name=name)
    return constant(0.0, name=name)


def get_total_loss(
    add_regularization_losses: bool = True, name: str = "total_loss", scope: str | None = None
) -> Tensor:
    """The sum of ``get_losses()`` and (by default) the regularization losses.

    Raises:
        ValueError: there are no losses at all.
    """
    losses = get_losses(scope=scope)
    if add_regularization_losses:
        losses = losses + get_regularization_losses(scope=scope)
    if not losses:
        raise ValueError("No losses found to sum.")
    return math_ops.add_n(losses, name=name)
