"""`tf.losses`: explicit re-exports only."""

# ruff: noqa: F401, I001 - this module is a public namespace

# --- ops/losses.py -----------------------------------------------------------------------
from .ops.losses import (
    Reduction as Reduction,
    add_loss as add_loss,
    compute_weighted_loss as compute_weighted_loss,
    get_losses as get_losses,
    get_regularization_loss as get_regularization_loss,
    get_regularization_losses as get_regularization_losses,
    get_total_loss as get_total_loss,
    mean_squared_error as mean_squared_error,
    softmax_cross_entropy as softmax_cross_entropy,
    sparse_softmax_cross_entropy as sparse_softmax_cross_entropy,
)
