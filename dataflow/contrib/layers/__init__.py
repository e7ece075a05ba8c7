"""``tf.contrib.layers``: TF 1.15 contrib's layers, initializers, regularizers and
summaries, as public TF1 programs use them (``docs/api.md`` lists the names and how
often a corpus of programs uses each)."""

from ...ops.nn.safe_embedding import (
    safe_embedding_lookup_sparse as safe_embedding_lookup_sparse,
)
from ..framework import arg_scope as arg_scope
from ..missing import contrib_hook
from .core import avg_pool2d as avg_pool2d
from .core import batch_norm as batch_norm
from .core import conv2d as conv2d
from .core import convolution as convolution
from .core import convolution2d as convolution2d
from .core import dropout as dropout
from .core import flatten as flatten
from .core import fully_connected as fully_connected
from .core import layer_norm as layer_norm
from .core import linear as linear
from .core import max_pool2d as max_pool2d
from .core import one_hot_encoding as one_hot_encoding
from .core import relu as relu
from .encoders import embed_sequence as embed_sequence
from .initializers import variance_scaling_initializer as variance_scaling_initializer
from .initializers import xavier_initializer as xavier_initializer
from .initializers import xavier_initializer_conv2d as xavier_initializer_conv2d
from .optimizers import OPTIMIZER_CLS_NAMES as OPTIMIZER_CLS_NAMES
from .optimizers import OPTIMIZER_SUMMARIES as OPTIMIZER_SUMMARIES
from .optimizers import optimize_loss as optimize_loss
from .regularizers import apply_regularization as apply_regularization
from .regularizers import l1_l2_regularizer as l1_l2_regularizer
from .regularizers import l1_regularizer as l1_regularizer
from .regularizers import l2_regularizer as l2_regularizer
from .regularizers import sum_regularizer as sum_regularizer
from .summaries import summarize_activation as summarize_activation
from .summaries import summarize_activations as summarize_activations
from .summaries import summarize_tensor as summarize_tensor
from .summaries import summarize_tensors as summarize_tensors

__getattr__ = contrib_hook("layers", __name__)

del contrib_hook  # not a TF1 name
