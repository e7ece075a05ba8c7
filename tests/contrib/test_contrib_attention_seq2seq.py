"""``tf.contrib.legacy_seq2seq.embedding_attention_seq2seq`` (with
``embedding_attention_decoder`` and ``attention_decoder``) against the core TF1 program
TF 1.15's legacy_seq2seq builds, unrolled by hand (TF 2 has no contrib): the variable
names (``.../attention_decoder/AttnW_0``, ``.../Attention_0/kernel``,
``.../AttnOutputProjection/kernel``, ...), and from TF's initial values the same outputs
and final state, fed the targets or its own arg-max; then the chatbot program's use,
inside ``model_with_buckets``."""

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

RNG = np.random.default_rng(2817)
B, T_ENC, T_DEC, H, E, N_ENC, N_DEC = 3, 4, 3, 5, 4, 7, 6
ENCODER = RNG.integers(0, N_ENC, size=(T_ENC, B)).astype(np.int32)
DECODER = RNG.integers(0, N_DEC, size=(T_DEC, B)).astype(np.int32)


def contrib(tf, feed_previous):
    outputs, state = tf.contrib.legacy_seq2seq.embedding_attention_seq2seq(
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
    """TF 1.15's embedding_attention_seq2seq, step by step in core TF1."""
    encoder_cell, decoder_cell = tf.nn.rnn_cell.BasicLSTMCell(H), tf.nn.rnn_cell.BasicLSTMCell(H)

    def linear(args, size):
        kernel = tf.get_variable("kernel", [sum(int(a.shape[1]) for a in args), size])
        bias = tf.get_variable("bias", [size], initializer=tf.zeros_initializer())
        return tf.matmul(tf.concat(args, 1), kernel) + bias

    with tf.variable_scope("embedding_attention_seq2seq"):
        state, states = encoder_cell.zero_state(B, tf.float32), []
        with tf.variable_scope("rnn"):
            for x in ENCODER:
                with tf.variable_scope("embedding_wrapper", reuse=tf.AUTO_REUSE):
                    init = tf.random_uniform_initializer(-np.sqrt(3), np.sqrt(3))
                    table = tf.get_variable("embedding", [N_ENC, E], initializer=init)
                    out, state = encoder_cell(tf.nn.embedding_lookup(table, x), state)
                    states.append(tf.reshape(out, [-1, 1, H]))
        hidden = tf.reshape(tf.concat(states, 1), [-1, T_ENC, 1, H])
        with tf.variable_scope("embedding_attention_decoder"):
            table = tf.get_variable("embedding", [N_DEC, E])
            with tf.variable_scope("attention_decoder", reuse=tf.AUTO_REUSE):
                features = tf.nn.conv2d(
                    hidden, tf.get_variable("AttnW_0", [1, 1, H, H]), [1, 1, 1, 1], "SAME"
                )
                v = tf.get_variable("AttnV_0", [H])

                def attend(query):
                    with tf.variable_scope("Attention_0"):
                        y = tf.reshape(linear([tf.concat(list(query), 1)], H), [-1, 1, 1, H])
                        weights = tf.nn.softmax(tf.reduce_sum(v * tf.tanh(features + y), [2, 3]))
                        read = tf.reduce_sum(
                            tf.reshape(weights, [-1, T_ENC, 1, 1]) * hidden, [1, 2]
                        )
                        return tf.reshape(read, [-1, H])

                attention, outputs = tf.zeros([B, H]), []
                for t in range(T_DEC):
                    ids = tf.argmax(outputs[-1], 1) if feed_previous and t > 0 else DECODER[t]
                    x = linear([tf.nn.embedding_lookup(table, ids), attention], E)
                    with tf.variable_scope("output_projection_wrapper"):
                        out, state = decoder_cell(x, state)
                        out = linear([out], N_DEC)
                    attention = attend(state)
                    with tf.variable_scope("AttnOutputProjection"):
                        outputs.append(linear([out, attention], N_DEC))
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
def test_embedding_attention_seq2seq_matches_tf1(feed_previous):
    start, theirs = run(tf1, lambda tf: reference(tf, feed_previous))
    ours_start, ours = run(dataflow, lambda tf: contrib(tf, feed_previous), start)
    assert sorted(ours_start) == sorted(start)
    prefix = "embedding_attention_seq2seq/embedding_attention_decoder/attention_decoder/"
    assert {prefix + n for n in ("AttnW_0:0", "Attention_0/kernel:0", "kernel:0")} <= set(start)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_chatbot_model_with_buckets_builds_and_runs():
    """The chiphuyen chatbot's model: embedding_attention_seq2seq with an output
    projection, inside model_with_buckets (the buckets share the variables), trained a
    few steps."""
    tf = dataflow
    buckets = [(2, 2), (4, 3)]
    enc = [tf.placeholder(tf.int32, [None]) for _ in range(4)]
    dec = [tf.placeholder(tf.int32, [None]) for _ in range(4)]
    masks = [tf.placeholder(tf.float32, [None]) for _ in range(4)]
    w = tf.get_variable("proj_w", [H, N_DEC])
    b = tf.get_variable("proj_b", [N_DEC])

    def seq2seq_f(encoder_inputs, decoder_inputs):
        cell = tf.nn.rnn_cell.GRUCell(H)  # a new cell per bucket, as TF's translate model
        return tf.contrib.legacy_seq2seq.embedding_attention_seq2seq(
            encoder_inputs, decoder_inputs, cell, N_ENC, N_DEC, E, output_projection=(w, b)
        )

    def projected_loss(labels, logits):  # the chatbot's loss reads projected outputs
        return tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=labels, logits=tf.matmul(logits, w) + b
        )

    outputs, losses = tf.contrib.legacy_seq2seq.model_with_buckets(
        enc, dec, dec[1:], masks, buckets, seq2seq_f, softmax_loss_function=projected_loss
    )
    # the buckets share one model: 5 encoder variables (embedding, GRU), 13 decoder ones
    # (embedding, AttnW_0, AttnV_0, input linear, GRU, Attention_0, AttnOutputProjection)
    assert len(tf.trainable_variables()) == 2 + 5 + 13
    assert [len(o) for o in outputs] == [2, 3] and outputs[1][0].shape.as_list() == [None, H]
    train = tf.train.GradientDescentOptimizer(0.5).minimize(losses[1])
    feed = {p: RNG.integers(0, 6, B).astype(np.int32) for p in enc + dec}
    feed.update({m: np.ones(B, np.float32) for m in masks})
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        before = sess.run(losses[1], feed)
        for _ in range(5):
            sess.run(train, feed)
        assert sess.run(losses[1], feed) < before


def test_attention_decoder_bad_input():
    tf = dataflow
    cell = tf.nn.rnn_cell.GRUCell(H)
    states = tf.zeros([B, T_ENC, H])
    decoder = tf.contrib.legacy_seq2seq.attention_decoder
    with pytest.raises(ValueError, match="at least 1 input"):
        decoder([], cell.zero_state(B, tf.float32), states, cell)
    with pytest.raises(ValueError, match="less than 1 heads"):
        decoder([tf.zeros([B, E])], cell.zero_state(B, tf.float32), states, cell, num_heads=0)
    with pytest.raises(ValueError, match="Shape\\[2\\]"):
        unknown = tf.placeholder(tf.float32, [B, T_ENC, None])
        decoder([tf.zeros([B, E])], cell.zero_state(B, tf.float32), unknown, cell)
