"""``tf.contrib.legacy_seq2seq.embedding_rnn_seq2seq`` (with ``tf.contrib.rnn``'s
``EmbeddingWrapper`` and ``OutputProjectionWrapper``) against the core TF1 program TF
1.15's ``legacy_seq2seq`` builds, unrolled by hand (TF 2 has no contrib): the variable
names (``embedding_rnn_seq2seq/rnn/embedding_wrapper/embedding``, ...), and from TF's
initial values the same decoder outputs and state, fed the targets or its own arg-max."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow

pytestmark = [
    pytest.mark.tf,
    pytest.mark.filterwarnings("ignore:.*is deprecated:UserWarning"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]

tf1 = pytest.importorskip("tensorflow").compat.v1

RNG = np.random.default_rng(2815)
B, T_ENC, T_DEC, H, E, N_ENC, N_DEC = 3, 4, 3, 5, 4, 7, 6
ENCODER = RNG.integers(0, N_ENC, size=(T_ENC, B)).astype(np.int32)
DECODER = RNG.integers(0, N_DEC, size=(T_DEC, B)).astype(np.int32)


def contrib(tf, feed_previous):
    outputs, state = tf.contrib.legacy_seq2seq.embedding_rnn_seq2seq(
        [tf.constant(x) for x in ENCODER],
        [tf.constant(x) for x in DECODER],
        tf.nn.rnn_cell.BasicLSTMCell(H),
        N_ENC,
        N_DEC,
        E,
        feed_previous=feed_previous,
    )
    return [tf.stack(outputs), *state]


def reference(tf, feed_previous):
    """TF 1.15's embedding_rnn_seq2seq, step by step in core TF1."""
    encoder_cell, decoder_cell = tf.nn.rnn_cell.BasicLSTMCell(H), tf.nn.rnn_cell.BasicLSTMCell(H)
    with tf.variable_scope("embedding_rnn_seq2seq"):
        state = encoder_cell.zero_state(B, tf.float32)
        with tf.variable_scope("rnn"):
            for x in ENCODER:
                with tf.variable_scope("embedding_wrapper", reuse=tf.AUTO_REUSE):
                    init = tf.random_uniform_initializer(-np.sqrt(3), np.sqrt(3))
                    table = tf.get_variable("embedding", [N_ENC, E], initializer=init)
                    _, state = encoder_cell(tf.nn.embedding_lookup(table, x), state)
        with tf.variable_scope("embedding_rnn_decoder"):
            table = tf.get_variable("embedding", [N_DEC, E])
            outputs, inputs = [], tf.nn.embedding_lookup(table, DECODER[0])
            with tf.variable_scope("rnn_decoder"):
                for t in range(T_DEC):
                    if t > 0:
                        inputs = (
                            tf.nn.embedding_lookup(table, tf.argmax(outputs[-1], 1))
                            if feed_previous
                            else tf.nn.embedding_lookup(table, DECODER[t])
                        )
                    with tf.variable_scope("output_projection_wrapper", reuse=tf.AUTO_REUSE):
                        out, state = decoder_cell(inputs, state)
                        w = tf.get_variable("kernel", [H, N_DEC])
                        b = tf.get_variable("bias", [N_DEC], initializer=tf.zeros_initializer())
                        outputs.append(tf.nn.bias_add(tf.matmul(out, w), b))
    return [tf.stack(outputs), *state]


def run(tf, build, initial=None):
    with tf.Graph().as_default():
        fetches = build(tf)
        variables = {v.name: v for v in tf.global_variables()}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for name, value in (initial or {}).items():
                variables[name].load(value, sess)
            start = {n: sess.run(v) for n, v in variables.items()}
            return start, sess.run(fetches)


@pytest.mark.parametrize("feed_previous", [False, True])
def test_embedding_rnn_seq2seq_matches_tf1(feed_previous):
    start, theirs = run(tf1, lambda tf: reference(tf, feed_previous))
    ours_start, ours = run(dataflow, lambda tf: contrib(tf, feed_previous), start)
    assert sorted(ours_start) == sorted(start)
    assert "embedding_rnn_seq2seq/rnn/embedding_wrapper/basic_lstm_cell/kernel:0" in start
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_wrappers_bad_input():
    tf = dataflow
    cell = tf.nn.rnn_cell.GRUCell(H)
    with pytest.raises(ValueError, match="output_size must be > 0"):
        tf.contrib.rnn.OutputProjectionWrapper(cell, 0)
    with pytest.raises(ValueError, match="embedding_classes and embedding_size must be > 0"):
        tf.contrib.rnn.EmbeddingWrapper(cell, 0, 3)
    with pytest.raises(ValueError, match="feed_previous is not provided"):
        tf.contrib.legacy_seq2seq.embedding_rnn_decoder(
            [tf.constant([1])],
            cell.zero_state(1, tf.float32),
            cell,
            4,
            3,
            feed_previous=tf.constant(True),
        )
