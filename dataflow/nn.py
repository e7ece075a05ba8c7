"""`tf.nn`: explicit re-exports only."""

# ruff: noqa: F401, I001 - this module is a public namespace: explicit re-exports only

# --- ops/nn/activations.py ---------------------------------------------------------------
from .ops.nn.activations import (
    crelu as crelu,
    elu as elu,
    leaky_relu as leaky_relu,
    log_softmax as log_softmax,
    relu as relu,
    relu6 as relu6,
    selu as selu,
    sigmoid as sigmoid,
    sigmoid_cross_entropy_with_logits as sigmoid_cross_entropy_with_logits,
    silu as silu,
    softmax as softmax,
    softmax_cross_entropy_with_logits as softmax_cross_entropy_with_logits,
    softmax_cross_entropy_with_logits_v2 as softmax_cross_entropy_with_logits_v2,
    softplus as softplus,
    softsign as softsign,
    sparse_softmax_cross_entropy_with_logits as sparse_softmax_cross_entropy_with_logits,
    swish as swish,
    tanh as tanh,
    weighted_cross_entropy_with_logits as weighted_cross_entropy_with_logits,
)

# --- ops/nn/impl.py ----------------------------------------------------------------------
from . import rnn_cell as rnn_cell
from .layers.rnn import (
    bidirectional_dynamic_rnn as bidirectional_dynamic_rnn,
    dynamic_rnn as dynamic_rnn,
    static_bidirectional_rnn as static_bidirectional_rnn,
    static_rnn as static_rnn,
)
from .ops.sparse.sparse_ops import embedding_lookup_sparse as embedding_lookup_sparse
from .ops.nn.impl import (
    batch_normalization as batch_normalization,
    bias_add as bias_add,
    dropout as dropout,
    embedding_lookup as embedding_lookup,
    l2_loss as l2_loss,
    l2_normalize as l2_normalize,
    local_response_normalization as local_response_normalization,
    local_response_normalization as lrn,
    moments as moments,
    relu_layer as relu_layer,
    xw_plus_b as xw_plus_b,
    zero_fraction as zero_fraction,
)

# --- ops/nn/conv/conv2d.py ---------------------------------------------------------------
from .ops.nn.conv.conv2d import (
    conv1d as conv1d,
    conv2d as conv2d,
    conv2d_backprop_filter as conv2d_backprop_filter,
    conv2d_backprop_input as conv2d_backprop_input,
    conv2d_transpose as conv2d_transpose,
)

# --- ops/nn/conv/conv3d.py, ops/nn/pool3d.py ---------------------------------------------
from .ops.nn.conv.conv3d import (
    conv3d as conv3d,
    conv3d_backprop_filter as conv3d_backprop_filter,
    conv3d_backprop_filter as conv3d_backprop_filter_v2,
    conv3d_transpose as conv3d_transpose,
)
from .ops.nn.pool3d import (
    avg_pool3d as avg_pool3d,
    max_pool3d as max_pool3d,
)

# --- ops/nn/conv/by_rank.py, depthwise_native.py, ops/nn/pool_by_rank.py ---------------
from .ops.nn.conv.by_rank import (
    atrous_conv2d_transpose as atrous_conv2d_transpose,
    conv1d_transpose as conv1d_transpose,
    conv_transpose as conv_transpose,
    convolution as convolution,
    with_space_to_batch as with_space_to_batch,
)
from .ops.nn.conv.depthwise_native import (
    depthwise_conv2d_native as depthwise_conv2d_native,
    depthwise_conv2d_native_backprop_filter as depthwise_conv2d_backprop_filter,
    depthwise_conv2d_native_backprop_filter as depthwise_conv2d_native_backprop_filter,
    depthwise_conv2d_native_backprop_input as depthwise_conv2d_backprop_input,
    depthwise_conv2d_native_backprop_input as depthwise_conv2d_native_backprop_input,
)
from .ops.nn.pool_by_rank import (
    avg_pool1d as avg_pool1d,
    avg_pool_v2 as avg_pool_v2,
    max_pool1d as max_pool1d,
    max_pool_v2 as max_pool_v2,
    pool as pool,
)

# --- ops/array: TF1 exports these in tf.nn too (the same functions) ----------------------
from .ops.array import (
    depth_to_space as depth_to_space,
    space_to_batch as space_to_batch,
    space_to_depth as space_to_depth,
)

# --- ops/nn/statistics.py ----------------------------------------------------------------
from .ops.nn.statistics import (
    batch_norm_with_global_normalization as batch_norm_with_global_normalization,
    compute_average_loss as compute_average_loss,
    normalize_moments as normalize_moments,
    scale_regularization_loss as scale_regularization_loss,
    sufficient_statistics as sufficient_statistics,
    weighted_moments as weighted_moments,
)

# --- ops/nn/pool.py ----------------------------------------------------------------------
from .ops.nn.pool import (
    avg_pool as avg_pool,
    avg_pool2d as avg_pool2d,
    max_pool as max_pool,
    max_pool2d as max_pool2d,
)
from .ops.nn.candidate_sampling import (
    all_candidate_sampler as all_candidate_sampler,
    fixed_unigram_candidate_sampler as fixed_unigram_candidate_sampler,
    learned_unigram_candidate_sampler as learned_unigram_candidate_sampler,
    log_uniform_candidate_sampler as log_uniform_candidate_sampler,
    nce_loss as nce_loss,
    sampled_softmax_loss as sampled_softmax_loss,
    uniform_candidate_sampler as uniform_candidate_sampler,
)
from .ops.nn.impl import (
    fused_batch_norm as fused_batch_norm,
    log_poisson_loss as log_poisson_loss,
)
from .ops.nn.conv.depthwise import (
    atrous_conv2d as atrous_conv2d,
    depthwise_conv2d as depthwise_conv2d,
    separable_conv2d as separable_conv2d,
)
from .ops.nn.ctc.loss import ctc_loss as ctc_loss
from .ops.nn.ctc.beam_search import ctc_beam_search_decoder as ctc_beam_search_decoder
from .ops.nn.ctc.composites import (
    collapse_repeated as collapse_repeated,
    ctc_beam_search_decoder_v2 as ctc_beam_search_decoder_v2,
    ctc_unique_labels as ctc_unique_labels,
)
from .ops.nn.ctc.decoders import ctc_greedy_decoder as ctc_greedy_decoder
from .ops.nn.argmax_pool import max_pool_with_argmax as max_pool_with_argmax
from .ops.nn.approx_topk import (
    approx_max_k as approx_max_k,
    approx_min_k as approx_min_k,
)
from .ops.math.ordering import (
    in_top_k as in_top_k,
    top_k as top_k,
)

# --- ops/nn/morphology.py, fractional.py, safe_embedding.py; layers/raw_rnn.py -----------
from .ops.nn.morphology import (
    dilation2d as dilation2d,
    erosion2d as erosion2d,
)
from .ops.nn.fractional import (
    fractional_avg_pool as fractional_avg_pool,
    fractional_max_pool as fractional_max_pool,
)
from .ops.nn.candidate_sampling import compute_accidental_hits as compute_accidental_hits
from .ops.nn.ctc.composites import ctc_loss_v2 as ctc_loss_v2
from .ops.nn.safe_embedding import safe_embedding_lookup_sparse as safe_embedding_lookup_sparse
from .layers.raw_rnn import (
    raw_rnn as raw_rnn,
    static_state_saving_rnn as static_state_saving_rnn,
)

from ._util.missing_names import missing_name_hook

__getattr__ = missing_name_hook("nn", __name__)

del missing_name_hook  # not a TF1 name: keep it out of the namespace
