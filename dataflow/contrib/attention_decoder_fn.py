"""``tf.contrib.seq2seq``'s attention decoder functions of TF 1.1 (removed before TF
1.15): ``prepare_attention``, ``attention_decoder_fn_train`` and
``attention_decoder_fn_inference``, for ``dynamic_rnn_decoder`` (``decoder_fn.py``).

``prepare_attention`` projects the attention states to ``keys`` (variable
``attention_keys/weights``, no bias) and keeps them as ``values``; it returns those and
two functions. The score function turns a query ``[batch, units]`` into a context
vector: scores over the attention length (Bahdanau: ``sum(attnV * tanh(keys + query
attnW))``, variables under ``attention_score``; Luong: ``sum(keys * query)``), softmax,
then the alignment-weighted sum of the values. The construct function maps ``[query,
context]`` to the attention vector (``attention_construct/weights``, made on first use,
and reused when the caller's scope reuses, as TF 1.1 did).

Each decoder step feeds ``[input, attention]`` to the cell (zeros for the first
attention, shaped like the top layer's output), and the attention built from the cell's
output is what the step emits (through ``output_fn`` in inference, whose arg-max
embedding is the next input, as ``simple_decoder_fn_inference``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import dataflow as tf

from .framework import nest


def _init_attention(encoder_state: Any) -> Any:
    """Zeros like the top layer's output (``h`` of an ``LSTMStateTuple``)."""
    top = encoder_state[-1] if isinstance(encoder_state, tuple) else encoder_state
    if isinstance(top, tf.nn.rnn_cell.LSTMStateTuple):
        top = top.h
    return tf.zeros_like(top)


def _score_fn(num_units: int, attention_option: str, reuse: Any) -> Callable:
    with tf.variable_scope("attention_score", reuse=reuse):
        if attention_option == "bahdanau":
            query_w = tf.get_variable("attnW", [num_units, num_units], dtype=tf.float32)
            score_v = tf.get_variable("attnV", [num_units], dtype=tf.float32)

    def attention_score_fn(query: Any, keys: Any, values: Any) -> Any:
        """The context vector ``[batch, num_units]`` for ``query``.

        Raises:
            ValueError: an attention option other than ``luong`` or ``bahdanau``.
        """
        if attention_option == "bahdanau":
            query = tf.reshape(tf.matmul(query, query_w), [-1, 1, num_units])
            scores = tf.reduce_sum(score_v * tf.tanh(keys + query), [2])
        elif attention_option == "luong":
            query = tf.reshape(query, [-1, 1, num_units])
            scores = tf.reduce_sum(keys * query, [2])
        else:
            raise ValueError(f"Unknown attention option {attention_option}!")
        alignments = tf.expand_dims(tf.nn.softmax(scores), 2)
        context = tf.reduce_sum(alignments * values, [1])
        context.set_shape([None, num_units])
        return context

    return attention_score_fn


def _construct_fn(num_units: int, score_fn: Callable, reuse: Any) -> Callable:
    with tf.variable_scope("attention_construct", reuse=reuse) as scope:

        def attention_construct_fn(query: Any, keys: Any, values: Any) -> Any:
            context = score_fn(query, keys, values)
            joined = tf.concat([query, context], 1)
            # TF 1.1 entered a captured scope with the caller's reuse (TF 1.15 keeps the
            # captured one's): an inference decoder after ``reuse_variables()`` shares
            # the training decoder's weights, as the programs of its time expect
            inherited = True if tf.get_variable_scope().reuse else None
            return tf.contrib.layers.linear(
                joined, num_units, biases_initializer=None, reuse=inherited, scope=scope
            )

    return attention_construct_fn


def prepare_attention(
    attention_states: Any, attention_option: str, num_units: int, reuse: Any = False
) -> tuple:
    """``(keys, values, score_fn, construct_fn)`` for ``attention_states``
    ``[batch, length, num_units]`` (see the module docstring)."""
    with tf.variable_scope("attention_keys", reuse=reuse) as scope:
        keys = tf.contrib.layers.linear(
            attention_states, num_units, biases_initializer=None, scope=scope
        )
    score_fn = _score_fn(num_units, attention_option, reuse)
    return keys, attention_states, score_fn, _construct_fn(num_units, score_fn, reuse)


def attention_decoder_fn_train(
    encoder_state: Any,
    attention_keys: Any,
    attention_values: Any,
    attention_score_fn: Callable,
    attention_construct_fn: Callable,
    name: str | None = None,
) -> Callable:
    """A training ``decoder_fn``: teacher-forced inputs joined with the attention."""
    del attention_score_fn  # the construct function calls it

    def decoder_fn(time, cell_state, cell_input, cell_output, context_state):
        with tf.name_scope(name, "attention_decoder_fn_train"):
            if cell_state is None:
                cell_state = encoder_state
                attention = _init_attention(encoder_state)
            else:
                attention = attention_construct_fn(cell_output, attention_keys, attention_values)
                cell_output = attention
            next_input = tf.concat([cell_input, attention], 1)
            return None, cell_state, next_input, cell_output, context_state

    return decoder_fn


def attention_decoder_fn_inference(
    output_fn: Callable | None,
    encoder_state: Any,
    attention_keys: Any,
    attention_values: Any,
    attention_score_fn: Callable,
    attention_construct_fn: Callable,
    embeddings: Any,
    start_of_sequence_id: Any,
    end_of_sequence_id: Any,
    maximum_length: Any,
    num_decoder_symbols: Any,
    dtype: Any = None,
    name: str | None = None,
) -> Callable:
    """A greedy inference ``decoder_fn`` with attention (see the module docstring);
    all sequences finish once ``time > maximum_length``."""
    del attention_score_fn
    dtype = tf.int32 if dtype is None else dtype
    with tf.name_scope(name, "attention_decoder_fn_inference"):
        start_id = tf.convert_to_tensor(start_of_sequence_id, dtype)
        end_id = tf.convert_to_tensor(end_of_sequence_id, dtype)
        maximum_length = tf.convert_to_tensor(maximum_length, dtype)
        num_symbols = tf.convert_to_tensor(num_decoder_symbols, dtype)
        first = nest.flatten(encoder_state)[0]
        batch_size = first.shape.as_list()[0] if first.shape.rank else None
        if batch_size is None:
            batch_size = tf.shape(first)[0]
        output_fn = output_fn or (lambda x: x)

    def decoder_fn(time, cell_state, cell_input, cell_output, context_state):
        with tf.name_scope(name, "attention_decoder_fn_inference"):
            if cell_input is not None:
                raise ValueError(f"Expected cell_input to be None, but saw: {cell_input}")
            if cell_output is None:  # time 0
                next_id = tf.ones([batch_size], dtype=dtype) * start_id
                done = tf.zeros([batch_size], dtype=tf.bool)
                cell_state = encoder_state
                cell_output = tf.zeros([num_symbols], dtype=tf.float32)
                attention = _init_attention(encoder_state)
            else:
                attention = attention_construct_fn(cell_output, attention_keys, attention_values)
                cell_output = output_fn(attention)
                next_id = tf.cast(tf.argmax(cell_output, 1), dtype)
                done = tf.equal(next_id, end_id)
            next_input = tf.concat([tf.gather(embeddings, next_id), attention], 1)
            done = tf.cond(
                tf.greater(time, maximum_length),
                lambda: tf.ones([batch_size], dtype=tf.bool),
                lambda: done,
            )
            return done, cell_state, next_input, cell_output, context_state

    return decoder_fn
