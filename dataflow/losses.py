"""`tf.losses`: explicit re-exports only."""

# ruff: noqa: I001 - this module is a public namespace

# --- ops/losses_metrics/losses.py --------------------------------------------------------
from .ops.losses_metrics.losses import (
    Reduction as Reduction,
    absolute_difference as absolute_difference,
    add_loss as add_loss,
    compute_weighted_loss as compute_weighted_loss,
    cosine_distance as cosine_distance,
    get_losses as get_losses,
    get_regularization_loss as get_regularization_loss,
    get_regularization_losses as get_regularization_losses,
    get_total_loss as get_total_loss,
    hinge_loss as hinge_loss,
    huber_loss as huber_loss,
    log_loss as log_loss,
    mean_pairwise_squared_error as mean_pairwise_squared_error,
    mean_squared_error as mean_squared_error,
    sigmoid_cross_entropy as sigmoid_cross_entropy,
    softmax_cross_entropy as softmax_cross_entropy,
    sparse_softmax_cross_entropy as sparse_softmax_cross_entropy,
)

from ._util.missing_names import missing_name_hook

__getattr__ = missing_name_hook("losses", __name__)

del missing_name_hook  # not a TF1 name: keep it out of the namespace
