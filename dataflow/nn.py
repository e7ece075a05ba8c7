"""`tf.nn`: explicit re-exports only."""

# ruff: noqa: F401, I001 - this module is a public namespace

# --- ops/nn.py ---------------------------------------------------------------------------
from .ops.nn import (
    bias_add as bias_add,
    dropout as dropout,
    elu as elu,
    embedding_lookup as embedding_lookup,
    l2_loss as l2_loss,
    l2_normalize as l2_normalize,
    leaky_relu as leaky_relu,
    log_softmax as log_softmax,
    moments as moments,
    relu as relu,
    relu6 as relu6,
    selu as selu,
    sigmoid as sigmoid,
    sigmoid_cross_entropy_with_logits as sigmoid_cross_entropy_with_logits,
    softmax as softmax,
    softmax_cross_entropy_with_logits as softmax_cross_entropy_with_logits,
    softmax_cross_entropy_with_logits_v2 as softmax_cross_entropy_with_logits_v2,
    softplus as softplus,
    sparse_softmax_cross_entropy_with_logits as sparse_softmax_cross_entropy_with_logits,
    tanh as tanh,
)

# --- ops/nn_conv.py ----------------------------------------------------------------------
from .ops.nn_conv import (
    avg_pool as avg_pool,
    conv2d as conv2d,
    conv2d_backprop_filter as conv2d_backprop_filter,
    conv2d_backprop_input as conv2d_backprop_input,
    max_pool as max_pool,
)
