"""``tf.contrib.legacy_seq2seq``: the per-step losses, the plain and embedding RNN
decoders, ``embedding_rnn_seq2seq``, the attention decoders and
``embedding_attention_seq2seq``, and ``model_with_buckets``, over Python lists of
``[batch, ...]`` tensors, one per time step (TF 1.15's
``legacy_seq2seq/python/ops/seq2seq.py``)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from .. import nn
from .._util import nest
from ..framework.graph import Tensor, convert_to_tensor
from ..framework.scopes import name_scope
from ..layers.rnn import static_rnn
from ..ops import array as array_ops
from ..ops.control.group import stop_gradient
from ..ops.linalg import matmul
from ..ops.math import add_n, argmax, cast, reduce_sum, tanh
from ..ops.state.initializers import zeros_initializer
from ..ops.state.scope import get_variable, get_variable_scope
from ..ops.state.scope_context import variable_scope
from .missing import contrib_hook
from .rnn_wrappers import EmbeddingWrapper, OutputProjectionWrapper


def sequence_loss_by_example(
    logits: list,
    targets: list,
    weights: list,
    average_across_timesteps: bool = True,
    softmax_loss_function: Callable | None = None,
    name: str | None = None,
) -> Tensor:
    """The weighted cross-entropy of each example, ``[batch]``: the sum over steps of
    ``weight * xent(logit, target)``, divided by the summed weights (plus 1e-12) when
    ``average_across_timesteps``.

    Raises:
        ValueError: the three lists of different lengths.
    """
    if len(targets) != len(logits) or len(weights) != len(logits):
        raise ValueError(
            "Lengths of logits, weights, and targets must be the same "
            f"{len(logits)}, {len(weights)}, {len(targets)}."
        )
    with name_scope(name, "sequence_loss_by_example", logits + targets + weights):
        losses = []
        for logit, target, weight in zip(logits, targets, weights):
            if softmax_loss_function is None:
                target = array_ops.reshape(target, [-1])
                crossent = nn.sparse_softmax_cross_entropy_with_logits(labels=target, logits=logit)
            else:
                crossent = softmax_loss_function(labels=target, logits=logit)
            losses.append(crossent * weight)
        log_perps = add_n(losses)
        if average_across_timesteps:
            log_perps = log_perps / (add_n(weights) + 1e-12)
    return log_perps


def sequence_loss(
    logits: list,
    targets: list,
    weights: list,
    average_across_timesteps: bool = True,
    average_across_batch: bool = True,
    softmax_loss_function: Callable | None = None,
    name: str | None = None,
) -> Tensor:
    """The sum of ``sequence_loss_by_example`` over the batch, divided by the batch
    size when ``average_across_batch``: a scalar."""
    with name_scope(name, "sequence_loss", logits + targets + weights):
        cost = reduce_sum(
            sequence_loss_by_example(
                logits,
                targets,
                weights,
                average_across_timesteps=average_across_timesteps,
                softmax_loss_function=softmax_loss_function,
            )
        )
        if average_across_batch:
            batch_size = array_ops.shape(targets[0])[0]
            return cost / cast(batch_size, cost.dtype)
        return cost


def rnn_decoder(
    decoder_inputs: list,
    initial_state: Any,
    cell: Any,
    loop_function: Callable | None = None,
    scope: Any = None,
) -> tuple[list, Any]:
    """Runs ``cell`` from ``initial_state`` over ``decoder_inputs``; returns the
    outputs (a list) and the final state. With ``loop_function(prev_output, i)``, each
    input after the first is made from the previous output instead (greedy decoding)."""
    with variable_scope(scope or "rnn_decoder"):
        state = initial_state
        outputs: list = []
        prev = None
        for i, inp in enumerate(decoder_inputs):
            if loop_function is not None and prev is not None:
                with variable_scope("loop_function", reuse=True):
                    inp = loop_function(prev, i)
            if i > 0:
                get_variable_scope().reuse_variables()
            output, state = cell(inp, state)
            outputs.append(output)
            if loop_function is not None:
                prev = output
    return outputs, state


def _extract_argmax_and_embed(
    embedding: Any, output_projection: Any = None, update_embedding: bool = True
) -> Callable:
    """A ``loop_function``: the embedding of the previous output's arg-max (projected
    first by ``output_projection``, a ``(weights, biases)`` pair, if given)."""

    def loop_function(prev: Tensor, _: int) -> Tensor:
        if output_projection is not None:
            prev = nn.xw_plus_b(prev, output_projection[0], output_projection[1])
        emb_prev = nn.embedding_lookup(embedding, argmax(prev, 1))
        return emb_prev if update_embedding else stop_gradient(emb_prev)

    return loop_function


def embedding_rnn_decoder(
    decoder_inputs: list,
    initial_state: Any,
    cell: Any,
    num_symbols: int,
    embedding_size: int,
    output_projection: Any = None,
    feed_previous: bool = False,
    update_embedding_for_previous: bool = True,
    scope: Any = None,
) -> tuple[list, Any]:
    """``rnn_decoder`` over the embeddings (``embedding`` ``[num_symbols,
    embedding_size]``, scope ``embedding_rnn_decoder``) of integer ``decoder_inputs``;
    with ``feed_previous``, each input after the first is the embedding of the previous
    output's arg-max.

    Raises:
        ValueError: ``feed_previous`` not a Python bool (a tensor is not provided).
    """
    if not isinstance(feed_previous, bool):
        raise ValueError(
            "embedding_rnn_decoder: a tensor feed_previous is not provided by dataflow; "
            "pass True or False"
        )
    with variable_scope(scope or "embedding_rnn_decoder") as vs:
        if output_projection is not None:
            output_projection = (
                convert_to_tensor(output_projection[0], dtype=vs.dtype),
                convert_to_tensor(output_projection[1], dtype=vs.dtype),
            )
        embedding = get_variable("embedding", [num_symbols, embedding_size])
        loop_function = (
            _extract_argmax_and_embed(embedding, output_projection, update_embedding_for_previous)
            if feed_previous
            else None
        )
        embedded = [nn.embedding_lookup(embedding, i) for i in decoder_inputs]
        return rnn_decoder(embedded, initial_state, cell, loop_function=loop_function)


def embedding_rnn_seq2seq(
    encoder_inputs: list,
    decoder_inputs: list,
    cell: Any,
    num_encoder_symbols: int,
    num_decoder_symbols: int,
    embedding_size: int,
    output_projection: Any = None,
    feed_previous: bool = False,
    dtype: Any = None,
    scope: Any = None,
) -> tuple[list, Any]:
    """An encoder (a copy of ``cell`` behind an ``EmbeddingWrapper``, run by
    ``static_rnn`` over the integer ``encoder_inputs``) whose final state starts an
    ``embedding_rnn_decoder`` (``cell`` with an ``OutputProjectionWrapper`` to
    ``num_decoder_symbols`` unless ``output_projection`` is given), in scope
    ``embedding_rnn_seq2seq``. Returns the decoder's outputs and final state."""
    with variable_scope(scope or "embedding_rnn_seq2seq") as vs:
        if dtype is not None:
            vs.set_dtype(dtype)
        else:
            dtype = vs.dtype
        encoder_cell = EmbeddingWrapper(
            copy.deepcopy(cell),
            embedding_classes=num_encoder_symbols,
            embedding_size=embedding_size,
        )
        _, encoder_state = static_rnn(encoder_cell, encoder_inputs, dtype=dtype)
        if output_projection is None:
            cell = OutputProjectionWrapper(cell, num_decoder_symbols)
        return embedding_rnn_decoder(
            decoder_inputs,
            encoder_state,
            cell,
            num_decoder_symbols,
            embedding_size,
            output_projection=output_projection,
            feed_previous=feed_previous,
        )


def _linear(args: list, output_size: int) -> Tensor:
    """``concat(args) @ kernel + bias`` with variables ``kernel`` and ``bias`` (zeros) in
    the current scope, as TF 1.15's ``core_rnn_cell._Linear``."""
    total = sum(a.shape.as_list()[1] for a in args)
    dtype = args[0].dtype
    kernel = get_variable("kernel", [total, output_size], dtype=dtype)
    bias = get_variable("bias", [output_size], dtype=dtype, initializer=zeros_initializer())
    joined = args[0] if len(args) == 1 else array_ops.concat(args, 1)
    return nn.bias_add(matmul(joined, kernel), bias)


def attention_decoder(
    decoder_inputs: list,
    initial_state: Any,
    attention_states: Tensor,
    cell: Any,
    output_size: int | None = None,
    num_heads: int = 1,
    loop_function: Callable | None = None,
    dtype: Any = None,
    scope: Any = None,
    initial_state_attention: bool = False,
) -> tuple[list, Any]:
    """An RNN decoder reading ``attention_states`` ``[batch, length, size]`` through
    ``num_heads`` additive attentions (TF 1.15's legacy ``attention_decoder``).

    Each step feeds the cell ``linear([input] + attentions)`` (variables ``kernel``,
    ``bias`` of the decoder's scope), then attends with the new state: per head ``a``, a
    score ``sum(AttnV_a * tanh(W_a h + linear(state)))`` over the positions (``AttnW_a``
    a 1x1 convolution of the states, the query's linear in ``Attention_a``), softmax
    weights and their weighted sum of the states; the output is
    ``linear([cell output] + attentions)`` in ``AttnOutputProjection``. The first
    step's attentions are zeros (or read from ``initial_state`` with
    ``initial_state_attention``); ``loop_function(prev, i)`` replaces the inputs after
    the first. Returns the outputs ``[batch, output_size]`` and the final state.

    Raises:
        ValueError: no inputs, ``num_heads < 1``, an attention size or input size not
            known statically.
    """
    if not decoder_inputs:
        raise ValueError("Must provide at least 1 input to attention decoder.")
    if num_heads < 1:
        raise ValueError("With less than 1 heads, use a non-attention decoder.")
    dims = attention_states.shape.with_rank(3).as_list()
    if dims[2] is None:
        raise ValueError(f"Shape[2] of attention_states must be known: {attention_states.shape}")
    if output_size is None:
        output_size = cell.output_size
    with variable_scope(scope or "attention_decoder") as vs:
        if dtype is not None:
            vs.set_dtype(dtype)
        dtype = vs.dtype
        batch_size = array_ops.shape(decoder_inputs[0])[0]
        attn_length: Any = dims[1]
        if attn_length is None:
            attn_length = array_ops.shape(attention_states)[1]
        attn_size = int(dims[2])
        hidden = array_ops.reshape(attention_states, [-1, attn_length, 1, attn_size])
        features, vectors = [], []
        for a in range(num_heads):
            k = get_variable(f"AttnW_{a}", [1, 1, attn_size, attn_size], dtype=dtype)
            features.append(nn.conv2d(hidden, k, [1, 1, 1, 1], "SAME"))
            vectors.append(get_variable(f"AttnV_{a}", [attn_size], dtype=dtype))

        def attention(query: Any) -> list:
            if nest.is_nested(query):
                query = array_ops.concat(nest.flatten(query), 1)
            reads = []
            for a in range(num_heads):
                with variable_scope(f"Attention_{a}"):
                    y = array_ops.reshape(_linear([query], attn_size), [-1, 1, 1, attn_size])
                    scores = reduce_sum(vectors[a] * tanh(features[a] + y), [2, 3])
                    weights = nn.softmax(scores)
                    read = reduce_sum(
                        array_ops.reshape(weights, [-1, attn_length, 1, 1]) * hidden, [1, 2]
                    )
                    reads.append(array_ops.reshape(read, [-1, attn_size]))
            return reads

        zeros = array_ops.zeros(array_ops.stack([batch_size, attn_size]), dtype=dtype)
        zeros.set_shape([None, attn_size])
        attns = [zeros] * num_heads
        state = initial_state
        if initial_state_attention:
            attns = attention(initial_state)
        outputs: list = []
        prev = None
        for i, inp in enumerate(decoder_inputs):
            if i > 0:
                get_variable_scope().reuse_variables()
            if loop_function is not None and prev is not None:
                with variable_scope("loop_function", reuse=True):
                    inp = loop_function(prev, i)
            input_size = inp.shape.with_rank(2).as_list()[1]
            if input_size is None:
                raise ValueError(f"Could not infer input size from input: {inp.name}")
            cell_output, state = cell(_linear([inp, *attns], input_size), state)
            if i == 0 and initial_state_attention:
                with variable_scope(get_variable_scope(), reuse=True):
                    attns = attention(state)
            else:
                attns = attention(state)
            with variable_scope("AttnOutputProjection"):
                output = _linear([cell_output, *attns], output_size)
            if loop_function is not None:
                prev = output
            outputs.append(output)
    return outputs, state


def embedding_attention_decoder(
    decoder_inputs: list,
    initial_state: Any,
    attention_states: Tensor,
    cell: Any,
    num_symbols: int,
    embedding_size: int,
    num_heads: int = 1,
    output_size: int | None = None,
    output_projection: Any = None,
    feed_previous: bool = False,
    update_embedding_for_previous: bool = True,
    dtype: Any = None,
    scope: Any = None,
    initial_state_attention: bool = False,
) -> tuple[list, Any]:
    """``attention_decoder`` over the embeddings (variable ``embedding``, scope
    ``embedding_attention_decoder``) of the integer ``decoder_inputs``; with
    ``feed_previous``, each step after the first reads the embedding of the previous
    output's arg-max (through ``output_projection`` if given)."""
    if output_projection is not None:
        biases = convert_to_tensor(output_projection[1], dtype=dtype)
        biases.shape.assert_is_compatible_with([num_symbols])
    with variable_scope(scope or "embedding_attention_decoder") as vs:
        if dtype is not None:
            vs.set_dtype(dtype)
        embedding = get_variable("embedding", [num_symbols, embedding_size])
        loop_function = (
            _extract_argmax_and_embed(embedding, output_projection, update_embedding_for_previous)
            if feed_previous
            else None
        )
        embedded = [nn.embedding_lookup(embedding, i) for i in decoder_inputs]
        return attention_decoder(
            embedded,
            initial_state,
            attention_states,
            cell,
            output_size=output_size,
            num_heads=num_heads,
            loop_function=loop_function,
            initial_state_attention=initial_state_attention,
        )


def embedding_attention_seq2seq(
    encoder_inputs: list,
    decoder_inputs: list,
    cell: Any,
    num_encoder_symbols: int,
    num_decoder_symbols: int,
    embedding_size: int,
    num_heads: int = 1,
    output_projection: Any = None,
    feed_previous: bool = False,
    dtype: Any = None,
    scope: Any = None,
    initial_state_attention: bool = False,
) -> tuple[list, Any]:
    """An encoder (a copy of ``cell`` behind an ``EmbeddingWrapper``, run by
    ``static_rnn``) whose outputs the ``embedding_attention_decoder`` attends to,
    starting from its final state (``cell`` with an ``OutputProjectionWrapper`` to
    ``num_decoder_symbols`` unless ``output_projection`` is given), in scope
    ``embedding_attention_seq2seq``. ``feed_previous`` is a Python bool. Returns the
    decoder's outputs and final state."""
    with variable_scope(scope or "embedding_attention_seq2seq") as vs:
        if dtype is not None:
            vs.set_dtype(dtype)
        else:
            dtype = vs.dtype
        encoder_cell = EmbeddingWrapper(
            copy.deepcopy(cell),
            embedding_classes=num_encoder_symbols,
            embedding_size=embedding_size,
        )
        encoder_outputs, encoder_state = static_rnn(encoder_cell, encoder_inputs, dtype=dtype)
        top_states = [array_ops.reshape(e, [-1, 1, cell.output_size]) for e in encoder_outputs]
        attention_states = array_ops.concat(top_states, 1)
        output_size = None
        if output_projection is None:
            cell = OutputProjectionWrapper(cell, num_decoder_symbols)
            output_size = num_decoder_symbols
        return embedding_attention_decoder(
            decoder_inputs,
            encoder_state,
            attention_states,
            cell,
            num_decoder_symbols,
            embedding_size,
            num_heads=num_heads,
            output_size=output_size,
            output_projection=output_projection,
            feed_previous=feed_previous,
            initial_state_attention=initial_state_attention,
        )


def model_with_buckets(
    encoder_inputs: list,
    decoder_inputs: list,
    targets: list,
    weights: list,
    buckets: list,
    seq2seq: Callable,
    softmax_loss_function: Callable | None = None,
    per_example_loss: bool = False,
    name: str | None = None,
) -> tuple[list, list]:
    """One model per bucket, sharing its variables: for bucket ``j`` of ``(encoder
    length, decoder length)``, ``seq2seq(encoder_inputs[:e], decoder_inputs[:d])`` (in
    the caller's variable scope, reusing it from the second bucket) and its
    ``sequence_loss`` (or ``sequence_loss_by_example``) against the first ``d`` targets
    and weights.

    Returns:
        ``(outputs, losses)``: per bucket, its list of outputs and its loss.

    Raises:
        ValueError: fewer encoder inputs, targets or weights than the last bucket needs.
    """
    if len(encoder_inputs) < buckets[-1][0]:
        raise ValueError(
            f"Length of encoder_inputs ({len(encoder_inputs)}) must be at least that of "
            f"last bucket ({buckets[-1][0]})."
        )
    if len(targets) < buckets[-1][1]:
        raise ValueError(
            f"Length of targets ({len(targets)}) must be at least that of last bucket "
            f"({buckets[-1][1]})."
        )
    if len(weights) < buckets[-1][1]:
        raise ValueError(
            f"Length of weights ({len(weights)}) must be at least that of last bucket "
            f"({buckets[-1][1]})."
        )
    loss = sequence_loss_by_example if per_example_loss else sequence_loss
    outputs: list = []
    losses: list = []
    everything = encoder_inputs + decoder_inputs + targets + weights
    with name_scope(name, "model_with_buckets", everything):
        for j, (enc_len, dec_len) in enumerate(buckets):
            with variable_scope(get_variable_scope(), reuse=True if j > 0 else None):
                bucket_outputs, _ = seq2seq(encoder_inputs[:enc_len], decoder_inputs[:dec_len])
                outputs.append(bucket_outputs)
                losses.append(
                    loss(
                        bucket_outputs,
                        targets[:dec_len],
                        weights[:dec_len],
                        softmax_loss_function=softmax_loss_function,
                    )
                )
    return outputs, losses


__getattr__ = contrib_hook("legacy_seq2seq", __name__)
