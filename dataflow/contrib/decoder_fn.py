"""``tf.contrib.seq2seq``'s decoder-function API of TF 1.1 (removed before TF 1.15):
``dynamic_rnn_decoder``, ``simple_decoder_fn_train`` and ``simple_decoder_fn_inference``.

``dynamic_rnn_decoder`` is TF's ``raw_rnn`` loop with a ``decoder_fn`` deciding each
step. Before the loop, ``decoder_fn(0, None, first_input, None, None)`` gives the initial
state, the first input and the emitted structure; then one ``while_loop`` (in variable
scope ``scope`` or ``rnn``) keeps ``(time, finished [batch], input, outputs
TensorArray, state, loop state)`` and, while some sequence is unfinished, runs the cell,
asks ``decoder_fn(time + 1, state, next input, output, context)`` for
``(done, state, input, emit, context)``, writes ``emit`` at ``time`` (zeros for
sequences already finished, whose state is carried through unchanged) and ORs ``done``
into ``finished``. In training ``done`` is None and a sequence finishes when ``time``
reaches its ``sequence_length``; the training inputs are read from a TensorArray (zeros
past the last step). It returns ``(outputs, final_state, final_context_state)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import dataflow as tf

from .framework import nest


def simple_decoder_fn_train(encoder_state: Any, name: str | None = None) -> Callable:
    """A ``decoder_fn`` for training: starts from ``encoder_state`` and passes the given
    inputs, states and outputs through (``done`` None: ``sequence_length`` decides)."""
    with tf.name_scope(name, "simple_decoder_fn_train", nest.flatten(encoder_state)):
        pass

    def decoder_fn(time, cell_state, cell_input, cell_output, context_state):
        with tf.name_scope(name, "simple_decoder_fn_train"):
            state = encoder_state if cell_state is None else cell_state
            return None, state, cell_input, cell_output, context_state

    return decoder_fn


def simple_decoder_fn_inference(
    output_fn: Callable | None,
    encoder_state: Any,
    embeddings: Any,
    start_of_sequence_id: Any,
    end_of_sequence_id: Any,
    maximum_length: Any,
    num_decoder_symbols: Any,
    dtype: Any = None,
    name: str | None = None,
) -> Callable:
    """A greedy ``decoder_fn`` for inference: starts from ``encoder_state`` with the
    embedding of ``start_of_sequence_id``, emits ``output_fn(cell_output)`` (logits over
    ``num_decoder_symbols``), feeds back the embedding of their arg-max, and finishes a
    sequence at ``end_of_sequence_id``, and all of them once ``time > maximum_length``.
    """
    dtype = tf.int32 if dtype is None else dtype
    with tf.name_scope(name, "simple_decoder_fn_inference", nest.flatten(encoder_state)):
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
        with tf.name_scope(name, "simple_decoder_fn_inference"):
            if cell_input is not None:
                raise ValueError(f"Expected cell_input to be None, but saw: {cell_input}")
            if cell_output is None:  # time 0
                next_id = tf.ones([batch_size], dtype=dtype) * start_id
                done = tf.zeros([batch_size], dtype=tf.bool)
                cell_state = encoder_state
                cell_output = tf.zeros([num_symbols], dtype=tf.float32)
            else:
                cell_output = output_fn(cell_output)
                next_id = tf.cast(tf.argmax(cell_output, 1), dtype)
                done = tf.equal(next_id, end_id)
            next_input = tf.gather(embeddings, next_id)
            done = tf.cond(
                tf.greater(time, maximum_length),
                lambda: tf.ones([batch_size], dtype=tf.bool),
                lambda: done,
            )
            return done, cell_state, next_input, cell_output, context_state

    return decoder_fn


def _zeros_like_emit(emit: Any, batch_size: Any) -> Any:
    """Zeros of ``[batch, *emit.shape]`` for each emitted tensor of the first step."""

    def zeros(e: Any) -> Any:
        e = tf.convert_to_tensor(e)
        size = e.shape.as_list() if e.shape.is_fully_defined() else tf.shape(e)
        return tf.zeros(tf.concat([[batch_size], size], 0), e.dtype)

    return nest.map_structure(zeros, emit)


def dynamic_rnn_decoder(
    cell: Any,
    decoder_fn: Callable,
    inputs: Any = None,
    sequence_length: Any = None,
    parallel_iterations: int | None = None,
    swap_memory: bool = False,
    time_major: bool = False,
    scope: Any = None,
    name: str | None = None,
) -> tuple:
    """Runs ``cell`` step by step as ``decoder_fn`` directs (see the module docstring).

    Args:
        cell: an ``RNNCell``.
        decoder_fn: ``(time, cell_state, cell_input, cell_output, context_state) ->
            (done, next_state, next_input, emit_output, next_context_state)``.
        inputs: training inputs ``[batch, time, depth]`` (``[time, batch, depth]`` if
            ``time_major``), or None for inference.
        sequence_length: ``[batch]`` lengths, used when ``decoder_fn``'s ``done`` is None
            (defaults to the inputs' number of steps).
        parallel_iterations, swap_memory: passed to ``while_loop``.
        time_major: the layout of ``inputs`` and of the outputs.
        scope: the variable scope of the cell's variables (default ``rnn``).
        name: the name scope (default ``dynamic_rnn_decoder``).

    Returns:
        ``(outputs, final_state, final_context_state)``.

    Raises:
        ValueError: ``inputs`` of rank below 3 or of unknown depth.
    """
    with tf.name_scope(name, "dynamic_rnn_decoder"):
        if inputs is not None:
            inputs = tf.convert_to_tensor(inputs)
            if inputs.shape.rank is not None and inputs.shape.rank < 3:
                raise ValueError("Inputs must have at least three dimensions")
            if inputs.shape.rank is None or inputs.shape.as_list()[-1] is None:
                raise ValueError("Inputs must not be `None` in the feature (3'rd) dimension")
            if not time_major:
                inputs = tf.transpose(inputs, [1, 0, 2])
            input_depth = inputs.shape.as_list()[2]
            static_batch = inputs.shape.as_list()[1]
            max_time = inputs.shape.as_list()[0]
            if max_time is None:
                max_time = tf.shape(inputs)[0]
            inputs_ta = tf.TensorArray(inputs.dtype, size=max_time).unstack(inputs)
            if sequence_length is None:
                sequence_length = tf.fill(tf.shape(inputs)[1:2], max_time)

        def loop_fn(time, cell_output, cell_state, loop_state):
            done = context_state = None
            if cell_state is not None:
                done, context_state = (
                    loop_state
                    if isinstance(loop_state, tuple)
                    else (
                        loop_state,
                        None,
                    )
                )
            if inputs is not None:
                if cell_state is None:
                    next_input = inputs_ta.read(0)
                else:
                    batch = static_batch if static_batch is not None else tf.shape(done)[0]
                    next_input = tf.cond(
                        tf.equal(time, max_time),
                        lambda: tf.zeros([batch, input_depth], dtype=inputs.dtype),
                        lambda: inputs_ta.read(time),
                    )
            else:
                next_input = None
            next_done, next_state, next_input, emit, next_context = decoder_fn(
                time, cell_state, next_input, cell_output, context_state
            )
            if next_done is None:
                next_done = time >= sequence_length
            loop = next_done if next_context is None else (next_done, next_context)
            return next_done, next_input, next_state, emit, loop

        with tf.variable_scope(scope or "rnn"):
            outputs_ta, state, loop_state = _raw_rnn(
                cell, loop_fn, parallel_iterations or 32, swap_memory
            )
        outputs = outputs_ta.stack()
        final_context = loop_state[1] if isinstance(loop_state, tuple) else None
        if not time_major:
            outputs = tf.transpose(outputs, [1, 0, 2])
        return outputs, state, final_context


def _raw_rnn(cell: Any, loop_fn: Callable, parallel_iterations: int, swap_memory: bool):
    """TF's ``raw_rnn`` loop, for one emitted tensor: ``(outputs TensorArray, final
    state, final loop state)``."""
    time = tf.constant(0, dtype=tf.int32)
    finished, first_input, state, emit, loop_state = loop_fn(time, None, None, None)
    first = nest.flatten(first_input)[0]
    batch_size = first.shape.as_list()[0] if first.shape.rank else None
    if batch_size is None:
        batch_size = tf.shape(first)[0]
    if emit is None:
        emit = tf.zeros([cell.output_size], dtype=nest.flatten(state)[0].dtype)
    zero_emit = _zeros_like_emit(emit, batch_size)
    emit_ta = tf.TensorArray(zero_emit.dtype, size=0, dynamic_size=True)

    def through(done: Any, current: Any, candidate: Any) -> Any:
        """``current`` for finished sequences, ``candidate`` for the others."""

        def pick(cur: Any, cand: Any) -> Any:
            return cand if cur.shape.rank == 0 else tf.where(done, cur, cand)

        return nest.map_structure(pick, current, candidate)

    def body(time, finished, current_input, emit_ta, state, loop_state):
        output, cell_state = cell(current_input, state)
        nest.assert_same_structure(state, cell_state)
        next_time = time + 1
        next_finished, next_input, next_state, emit, next_loop = loop_fn(
            next_time, output, cell_state, loop_state
        )
        nest.assert_same_structure(state, next_state)
        loop_state = loop_state if next_loop is None else next_loop
        emit = through(finished, zero_emit, emit)
        next_state = through(finished, state, next_state)
        emit_ta = emit_ta.write(time, emit)
        finished = tf.logical_or(finished, next_finished)
        return next_time, finished, next_input, emit_ta, next_state, loop_state

    def cond(time, finished, *_):
        return tf.logical_not(tf.reduce_all(finished))

    _, _, _, emit_ta, state, loop_state = tf.while_loop(
        cond,
        body,
        [time, finished, first_input, emit_ta, state, loop_state],
        parallel_iterations=parallel_iterations,
        swap_memory=swap_memory,
    )
    return emit_ta, state, loop_state
