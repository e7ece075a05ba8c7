"""``tf.metrics``: streaming metrics, ``(value, update_op)`` pairs over local variables
(see ``ops/losses_metrics/metrics.py`` and ``ops/losses_metrics/streaming/``)."""

# ruff: noqa: I001 - this module is a public namespace: explicit re-exports only

from ._util.missing_names import missing_name_hook
from .ops.losses_metrics.metrics import (
    accuracy as accuracy,
    mean as mean,
    mean_iou as mean_iou,
    mean_squared_error as mean_squared_error,
    precision as precision,
    recall as recall,
)
from .ops.losses_metrics.streaming.averages import (
    mean_absolute_error as mean_absolute_error,
    mean_cosine_distance as mean_cosine_distance,
    mean_per_class_accuracy as mean_per_class_accuracy,
    mean_relative_error as mean_relative_error,
    mean_tensor as mean_tensor,
    percentage_below as percentage_below,
    root_mean_squared_error as root_mean_squared_error,
)
from .ops.losses_metrics.streaming.counting import (
    auc as auc,
    false_negatives as false_negatives,
    false_negatives_at_thresholds as false_negatives_at_thresholds,
    false_positives as false_positives,
    false_positives_at_thresholds as false_positives_at_thresholds,
    precision_at_thresholds as precision_at_thresholds,
    recall_at_thresholds as recall_at_thresholds,
    sensitivity_at_specificity as sensitivity_at_specificity,
    specificity_at_sensitivity as specificity_at_sensitivity,
    true_negatives as true_negatives,
    true_negatives_at_thresholds as true_negatives_at_thresholds,
    true_positives as true_positives,
    true_positives_at_thresholds as true_positives_at_thresholds,
)
from .ops.losses_metrics.streaming.top_k import (
    average_precision_at_k as average_precision_at_k,
    precision_at_k as precision_at_k,
    precision_at_top_k as precision_at_top_k,
    recall_at_k as recall_at_k,
    recall_at_top_k as recall_at_top_k,
    sparse_average_precision_at_k as sparse_average_precision_at_k,
    sparse_precision_at_k as sparse_precision_at_k,
)

__getattr__ = missing_name_hook("metrics", __name__)

del missing_name_hook  # not a TF1 name: keep it out of the namespace
