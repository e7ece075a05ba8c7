"""``tf.contrib.seq2seq``: the weighted sequence loss, ``tile_batch``, and the decoding
loop (``BasicDecoder``, its helpers and ``dynamic_decode``, in ``decoders.py``) and
attention (``attention.py``), and TF 1.1's decoder-function API (``dynamic_rnn_decoder``,
``simple_decoder_fn_*``, in ``decoder_fn.py``; ``prepare_attention``,
``attention_decoder_fn_*``, in ``attention_decoder_fn.py``)."""

from __future__ import annotations

from typing import Any

from .. import nn
from ..framework.graph import Tensor, convert_to_tensor
from ..framework.scopes import name_scope
from ..ops import array as array_ops
from ..ops.math import cast, count_nonzero, div_no_nan, reduce_sum
from .attention import AttentionWrapper as AttentionWrapper
from .attention import AttentionWrapperState as AttentionWrapperState
from .attention import BahdanauAttention as BahdanauAttention
from .attention import LuongAttention as LuongAttention
from .attention_decoder_fn import attention_decoder_fn_inference as attention_decoder_fn_inference
from .attention_decoder_fn import attention_decoder_fn_train as attention_decoder_fn_train
from .attention_decoder_fn import prepare_attention as prepare_attention
from .decoder_fn import dynamic_rnn_decoder as dynamic_rnn_decoder
from .decoder_fn import simple_decoder_fn_inference as simple_decoder_fn_inference
from .decoder_fn import simple_decoder_fn_train as simple_decoder_fn_train
from .decoders import BasicDecoder as BasicDecoder
from .decoders import BasicDecoderOutput as BasicDecoderOutput
from .decoders import GreedyEmbeddingHelper as GreedyEmbeddingHelper
from .decoders import Helper as Helper
from .decoders import SampleEmbeddingHelper as SampleEmbeddingHelper
from .decoders import TrainingHelper as TrainingHelper
from .decoders import dynamic_decode as dynamic_decode
from .missing import contrib_hook


def sequence_loss(
    logits: Any,
    targets: Any,
    weights: Any,
    average_across_timesteps: bool = True,
    average_across_batch: bool = True,
    sum_over_timesteps: bool = False,
    sum_over_batch: bool = False,
    softmax_loss_function: Any = None,
    name: str | None = None,
) -> Tensor:
    """Weighted cross-entropy of ``logits`` ``[batch, time, classes]`` against integer
    ``targets`` ``[batch, time]``, with ``weights`` ``[batch, time]``.

    The loss of each position times its weight is averaged over time and/or batch (by
    the summed weights: ``average_*``), or summed and divided by the number of nonzero
    weights (``sum_over_*``); with neither, the ``[batch, time]`` losses are returned.

    Raises:
        ValueError: ranks other than 3/2/2, or averaging and summing over the same axis.
    """
    if average_across_timesteps and sum_over_timesteps:
        raise ValueError(
            "average_across_timesteps and sum_over_timesteps cannot be set to True at same time."
        )
    if average_across_batch and sum_over_batch:
        raise ValueError(
            "average_across_batch and sum_over_batch cannot be set to True at same time."
        )
    with name_scope(name, "sequence_loss", [logits, targets, weights]):
        logits, targets, weights = (convert_to_tensor(t) for t in (logits, targets, weights))
        if logits.shape.rank != 3:
            raise ValueError("Logits must be a [batch_size x sequence_length x logits] tensor")
        if targets.shape.rank != 2:
            raise ValueError("Targets must be a [batch_size x sequence_length] tensor")
        if weights.shape.rank != 2:
            raise ValueError("Weights must be a [batch_size x sequence_length] tensor")
        num_classes = array_ops.shape(logits)[2]
        flat_logits = array_ops.reshape(logits, array_ops.stack([-1, num_classes]))
        flat_targets = array_ops.reshape(targets, [-1])
        if softmax_loss_function is None:
            crossent = nn.sparse_softmax_cross_entropy_with_logits(
                labels=flat_targets, logits=flat_logits
            )
        else:
            crossent = softmax_loss_function(labels=flat_targets, logits=flat_logits)
        crossent = crossent * array_ops.reshape(weights, [-1])
        if average_across_timesteps and average_across_batch:
            return div_no_nan(reduce_sum(crossent), reduce_sum(weights))
        if sum_over_timesteps and sum_over_batch:
            nonzero = cast(count_nonzero(weights), crossent.dtype)
            return div_no_nan(reduce_sum(crossent), nonzero)
        crossent = array_ops.reshape(crossent, array_ops.shape(logits)[0:2])
        if average_across_timesteps != average_across_batch:
            axis = 1 if average_across_timesteps else 0
            crossent = div_no_nan(
                reduce_sum(crossent, axis=[axis]), reduce_sum(weights, axis=[axis])
            )
        if sum_over_timesteps != sum_over_batch:
            axis = 1 if sum_over_timesteps else 0
            nonzero = cast(count_nonzero(weights, axis=[axis]), crossent.dtype)
            crossent = div_no_nan(reduce_sum(crossent, axis=[axis]), nonzero)
        return crossent


def tile_batch(t: Any, multiplier: int, name: str | None = None) -> Any:
    """Repeats each batch entry of ``t`` (or of each tensor of a nest of them)
    ``multiplier`` times in place: ``[b0, b0, b1, b1, ...]`` for 2."""
    from .framework import nest

    def tile(x: Any) -> Tensor:
        x = convert_to_tensor(x)
        shape = array_ops.shape(x)
        tiled = array_ops.tile(
            array_ops.expand_dims(x, 1),
            array_ops.concat([[1, multiplier], array_ops.ones_like(shape[1:])], 0),
        )
        return array_ops.reshape(tiled, array_ops.concat([[shape[0] * multiplier], shape[1:]], 0))

    with name_scope(name, "tile_batch", nest.flatten(t)):
        return nest.map_structure(tile, t)


__getattr__ = contrib_hook("seq2seq", __name__)
