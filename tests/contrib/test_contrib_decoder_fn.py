"""``tf.contrib.seq2seq.dynamic_rnn_decoder`` with ``simple_decoder_fn_train`` and
``simple_decoder_fn_inference`` (TF 1.1's API) against the TF1 programs they amount to:
``tf.nn.dynamic_rnn`` from the encoder state (training), and ``tf.nn.raw_rnn`` with
the greedy loop function of TF 1.1's ``decoder_fn.py`` (inference), from the same
initial values: outputs, final states, and the variables after one SGD step."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow

from .test_contrib_rnn_seq2seq import check

pytestmark = [
    pytest.mark.tf,
    pytest.mark.filterwarnings("ignore:.*is deprecated:UserWarning"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]

tf1 = pytest.importorskip("tensorflow").compat.v1

RNG = np.random.default_rng(11)
BATCH, STEPS, VOCAB, DEPTH, UNITS = 3, 5, 7, 4, 6
IDS = RNG.integers(0, VOCAB, size=(BATCH, STEPS)).astype(np.int32)
LENGTHS = np.array([5, 2, 3], np.int32)  # the longest is STEPS: dynamic_rnn's length
STATE_C = RNG.normal(size=(BATCH, UNITS)).astype(np.float32)
STATE_H = RNG.normal(size=(BATCH, UNITS)).astype(np.float32)
SOS, EOS, MAX_LEN = 1, 2, 4


def common(tf):
    embeddings = tf.get_variable("embeddings", [VOCAB, DEPTH])
    state = tf.nn.rnn_cell.LSTMStateTuple(tf.constant(STATE_C), tf.constant(STATE_H))
    cell = tf.nn.rnn_cell.BasicLSTMCell(UNITS)

    def output_fn(x):
        return tf.layers.dense(x, VOCAB, name="projection", reuse=tf.AUTO_REUSE)

    return embeddings, state, cell, output_fn


def train_program(tf, time_major, ours):
    embeddings, state, cell, output_fn = common(tf)
    inputs = tf.nn.embedding_lookup(embeddings, IDS.T if time_major else IDS)
    if ours:
        outputs, final, context = tf.contrib.seq2seq.dynamic_rnn_decoder(
            cell,
            tf.contrib.seq2seq.simple_decoder_fn_train(state),
            inputs=inputs,
            sequence_length=LENGTHS,
            time_major=time_major,
            scope="decoder",
        )
        assert context is None
    else:
        outputs, final = tf.nn.dynamic_rnn(
            cell, inputs, LENGTHS, state, time_major=time_major, scope="decoder"
        )
    logits = output_fn(outputs)
    return [outputs, final.c, final.h, logits], tf.reduce_sum(tf.square(logits))


def inference_program(tf, ours):
    embeddings, state, cell, output_fn = common(tf)
    if ours:
        decoder_fn = tf.contrib.seq2seq.simple_decoder_fn_inference(
            output_fn, state, embeddings, SOS, EOS, MAX_LEN, VOCAB
        )
        logits, final, _ = tf.contrib.seq2seq.dynamic_rnn_decoder(
            cell, decoder_fn, time_major=True, scope="decoder"
        )
    else:

        def loop_fn(time, cell_output, cell_state, loop_state):
            if cell_output is None:
                ids = tf.fill([BATCH], SOS)
                done = tf.zeros([BATCH], tf.bool)
                cell_state, emit = state, tf.zeros([VOCAB])
            else:
                emit = output_fn(cell_output)
                ids = tf.cast(tf.argmax(emit, 1), tf.int32)
                done = tf.equal(ids, EOS)
            done = tf.cond(time > MAX_LEN, lambda: tf.ones([BATCH], tf.bool), lambda: done)
            return done, tf.gather(embeddings, ids), cell_state, emit, done

        logits_ta, final, _ = tf.nn.raw_rnn(cell, loop_fn, scope="decoder")
        logits = logits_ta.stack()
    return [logits, final.c, final.h, tf.argmax(logits, -1)], tf.reduce_sum(tf.square(logits))


@pytest.mark.parametrize("time_major", [False, True])
def test_dynamic_rnn_decoder_training(time_major):
    check(
        lambda tf: train_program(tf, time_major, ours=True),
        lambda tf: train_program(tf, time_major, ours=False),
    )


def test_dynamic_rnn_decoder_inference():
    check(lambda tf: inference_program(tf, True), lambda tf: inference_program(tf, False))


def test_context_state_is_returned_and_bad_inputs_refused():
    tf = dataflow
    with tf.Graph().as_default():
        cell = tf.nn.rnn_cell.GRUCell(3)
        start = tf.zeros([2, 3])

        def decoder_fn(time, cell_state, cell_input, cell_output, context):
            if cell_state is None:
                return None, start, cell_input, cell_output, tf.constant(0)
            return None, cell_state, cell_input, cell_output, context + 1

        inputs = tf.ones([2, 4, 3])
        outputs, _, context = tf.contrib.seq2seq.dynamic_rnn_decoder(
            cell, decoder_fn, inputs, sequence_length=[4, 1]
        )
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            out, steps = sess.run([outputs, context])
        assert out.shape == (2, 4, 3) and steps == 4
        np.testing.assert_array_equal(out[1, 1:], 0.0)
        with pytest.raises(ValueError, match="at least three dimensions"):
            tf.contrib.seq2seq.dynamic_rnn_decoder(cell, decoder_fn, tf.ones([2, 3]))
