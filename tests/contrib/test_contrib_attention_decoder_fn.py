"""``tf.contrib.seq2seq.prepare_attention`` with ``attention_decoder_fn_train`` and
``attention_decoder_fn_inference`` (TF 1.1's API) in the program that used them (a
training decoder, then ``reuse_variables`` and an inference decoder in the same
scope), against the same program written with ``tf.nn.raw_rnn`` in
``tensorflow.compat.v1`` following TF 1.1's ``attention_decoder_fn.py``: variable
names and shapes, outputs, final states, and the variables after one SGD step."""

from __future__ import annotations

import numpy as np
import pytest

from .test_contrib_rnn_seq2seq import check

pytestmark = [
    pytest.mark.tf,
    pytest.mark.filterwarnings("ignore:.*is deprecated:UserWarning"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]

tf1 = pytest.importorskip("tensorflow").compat.v1

RNG = np.random.default_rng(12)
BATCH, ENC_STEPS, STEPS, VOCAB, DEPTH, UNITS = 3, 6, 4, 7, 4, 5
ENCODER_OUTPUTS = RNG.normal(size=(ENC_STEPS, BATCH, UNITS)).astype(np.float32)
STATE_C = RNG.normal(size=(BATCH, UNITS)).astype(np.float32)
STATE_H = RNG.normal(size=(BATCH, UNITS)).astype(np.float32)
IDS = RNG.integers(0, VOCAB, size=(STEPS, BATCH)).astype(np.int32)  # time major
LENGTHS = np.array([4, 1, 3], np.int32)
SOS, EOS, MAX_LEN = 1, 2, 5


def setup(tf):
    embeddings = tf.get_variable("embeddings", [VOCAB, DEPTH])
    state = tf.nn.rnn_cell.LSTMStateTuple(tf.constant(STATE_C), tf.constant(STATE_H))
    cell = tf.nn.rnn_cell.BasicLSTMCell(UNITS)
    states = tf.transpose(tf.constant(ENCODER_OUTPUTS), [1, 0, 2])
    return embeddings, state, cell, states


def contrib_program(tf, option):
    embeddings, state, cell, states = setup(tf)
    s2s = tf.contrib.seq2seq
    with tf.variable_scope("Decoder") as scope:

        def output_fn(x):
            return tf.layers.dense(x, VOCAB, name="projection", reuse=tf.AUTO_REUSE)

        keys, values, score_fn, construct_fn = s2s.prepare_attention(states, option, UNITS)
        train_fn = s2s.attention_decoder_fn_train(state, keys, values, score_fn, construct_fn)
        infer_fn = s2s.attention_decoder_fn_inference(
            output_fn, state, keys, values, score_fn, construct_fn, embeddings,
            SOS, EOS, MAX_LEN, VOCAB,
        )  # fmt: skip
        inputs = tf.nn.embedding_lookup(embeddings, IDS)
        train, train_state, _ = s2s.dynamic_rnn_decoder(
            cell, train_fn, inputs, LENGTHS, time_major=True, scope=scope
        )
        logits = output_fn(train)
        scope.reuse_variables()
        infer, infer_state, _ = s2s.dynamic_rnn_decoder(
            cell, infer_fn, time_major=True, scope=scope
        )
    loss = tf.reduce_sum(tf.square(logits)) + tf.reduce_sum(tf.square(infer))
    return [logits, train_state.h, infer, infer_state.c, tf.argmax(infer, -1)], loss


def reference_program(tf, option):
    """TF 1.1's functions, written out over TF1's raw_rnn."""
    embeddings, state, cell, states = setup(tf)
    with tf.variable_scope("Decoder", reuse=tf.AUTO_REUSE) as scope:

        def output_fn(x):
            return tf.layers.dense(x, VOCAB, name="projection", reuse=tf.AUTO_REUSE)

        def linear(x, name):
            with tf.variable_scope(name):
                w = tf.get_variable("weights", [x.shape[-1], UNITS])
            return tf.tensordot(x, w, 1) if x.shape.ndims > 2 else tf.matmul(x, w)

        keys = linear(states, "attention_keys")
        with tf.variable_scope("attention_score"):
            if option == "bahdanau":
                attn_w = tf.get_variable("attnW", [UNITS, UNITS])
                attn_v = tf.get_variable("attnV", [UNITS])

        def attention(query):
            if option == "bahdanau":
                q = tf.reshape(tf.matmul(query, attn_w), [-1, 1, UNITS])
                scores = tf.reduce_sum(attn_v * tf.tanh(keys + q), [2])
            else:
                scores = tf.reduce_sum(keys * tf.reshape(query, [-1, 1, UNITS]), [2])
            context = tf.reduce_sum(tf.expand_dims(tf.nn.softmax(scores), 2) * states, [1])
            return linear(tf.concat([query, context], 1), "attention_construct")

        inputs_ta = tf.TensorArray(tf.float32, size=STEPS).unstack(
            tf.nn.embedding_lookup(embeddings, IDS)
        )

        def train_loop(time, out, cell_state, loop_state):
            if cell_state is None:
                att, cell_state, emit = tf.zeros_like(state.h), state, None
                x = inputs_ta.read(0)
            else:
                att = emit = attention(out)
                x = tf.cond(
                    tf.equal(time, STEPS),
                    lambda: tf.zeros([BATCH, DEPTH]),
                    lambda: inputs_ta.read(tf.minimum(time, STEPS - 1)),
                )
            done = time >= LENGTHS
            return done, tf.concat([x, att], 1), cell_state, emit, done

        def infer_loop(time, out, cell_state, loop_state):
            if cell_state is None:
                ids = tf.fill([BATCH], SOS)
                done = tf.zeros([BATCH], tf.bool)
                att, cell_state, emit = tf.zeros_like(state.h), state, tf.zeros([VOCAB])
            else:
                att = attention(out)
                emit = output_fn(att)
                ids = tf.cast(tf.argmax(emit, 1), tf.int32)
                done = tf.equal(ids, EOS)
            done = tf.cond(time > MAX_LEN, lambda: tf.ones([BATCH], tf.bool), lambda: done)
            return done, tf.concat([tf.gather(embeddings, ids), att], 1), cell_state, emit, done

        train_ta, train_state, _ = tf.nn.raw_rnn(cell, train_loop, scope=scope)
        logits = output_fn(train_ta.stack())
        infer_ta, infer_state, _ = tf.nn.raw_rnn(cell, infer_loop, scope=scope)
        infer = infer_ta.stack()
    loss = tf.reduce_sum(tf.square(logits)) + tf.reduce_sum(tf.square(infer))
    return [logits, train_state.h, infer, infer_state.c, tf.argmax(infer, -1)], loss


@pytest.mark.parametrize("option", ["bahdanau", "luong"])
def test_attention_decoder_fns(option):
    check(lambda tf: contrib_program(tf, option), lambda tf: reference_program(tf, option))


def test_unknown_attention_option():
    import dataflow as tf

    with tf.Graph().as_default():
        states = tf.zeros([2, 3, UNITS])
        _, _, score_fn, _ = tf.contrib.seq2seq.prepare_attention(states, "dot", UNITS)
        with pytest.raises(ValueError, match="Unknown attention option dot"):
            score_fn(tf.zeros([2, UNITS]), states, states)
