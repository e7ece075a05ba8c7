"""``tf.contrib.seq2seq``'s ``LuongAttention``, ``BahdanauAttention`` and
``AttentionWrapper`` (decoded with ``BasicDecoder`` and ``dynamic_decode``) against the
core TF1 program TF 1.15's ``attention_wrapper.py`` builds, unrolled by hand (TF 2 has
no ``contrib.seq2seq``): the same variable names, and from TF's initial values the same
attention outputs, final alignments and cell state."""

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

RNG = np.random.default_rng(2028)
B, T, D, TM, DM, H, A = 2, 4, 3, 5, 6, 7, 4
INPUTS = RNG.normal(size=(B, T, D)).astype(np.float32)
MEMORY = RNG.normal(size=(B, TM, DM)).astype(np.float32)
MEMORY_LENGTHS = np.array([5, 3], np.int32)
KINDS = ["luong", "luong_scaled", "bahdanau", "bahdanau_normalized"]


def contrib(tf, kind):
    memory = tf.constant(MEMORY)
    if kind.startswith("luong"):
        mechanism = tf.contrib.seq2seq.LuongAttention(
            H, memory, memory_sequence_length=MEMORY_LENGTHS, scale=kind == "luong_scaled"
        )
    else:
        mechanism = tf.contrib.seq2seq.BahdanauAttention(
            H,
            memory,
            memory_sequence_length=MEMORY_LENGTHS,
            normalize=kind == "bahdanau_normalized",
        )
    cell = tf.contrib.seq2seq.AttentionWrapper(
        tf.nn.rnn_cell.BasicLSTMCell(H),
        mechanism,
        attention_layer_size=A,
        alignment_history=True,
    )
    helper = tf.contrib.seq2seq.TrainingHelper(tf.constant(INPUTS), [T] * B)
    decoder = tf.contrib.seq2seq.BasicDecoder(cell, helper, cell.zero_state(B, tf.float32))
    outputs, state, _ = tf.contrib.seq2seq.dynamic_decode(decoder)
    history = tf.transpose(state.alignment_history.stack(), [1, 0, 2])
    return [outputs.rnn_output, state.alignments, history, state.cell_state]


def reference(tf, kind):
    """TF 1.15's attention, step by step, in core TF1 ops."""
    mask = tf.sequence_mask(MEMORY_LENGTHS, TM)
    values = tf.constant(MEMORY) * tf.cast(mask, tf.float32)[:, :, None]
    keys = tf.layers.Dense(H, use_bias=False, name="memory_layer")(values)
    cell = tf.nn.rnn_cell.BasicLSTMCell(H)
    query_layer = tf.layers.Dense(H, use_bias=False, name="query_layer")
    attention_layer = tf.layers.Dense(A, use_bias=False, name="attention_layer")
    state, attention = cell.zero_state(B, tf.float32), tf.zeros([B, A])
    outputs, history = [], []
    with tf.variable_scope("decoder"):
        for t in range(T):
            with tf.variable_scope("attention_wrapper", reuse=tf.AUTO_REUSE):
                out, state = cell(tf.concat([tf.constant(INPUTS[:, t]), attention], -1), state)
                scope = "luong_attention" if kind.startswith("luong") else "bahdanau_attention"
                with tf.variable_scope(scope, reuse=tf.AUTO_REUSE):
                    if kind.startswith("luong"):
                        score = tf.squeeze(tf.matmul(out[:, None], keys, transpose_b=True), [1])
                        if kind == "luong_scaled":
                            score *= tf.get_variable(
                                "attention_g", (), initializer=tf.ones_initializer()
                            )
                    else:
                        query = query_layer(out)[:, None]
                        v = tf.get_variable("attention_v", [H])
                        if kind == "bahdanau_normalized":
                            g = tf.get_variable(
                                "attention_g",
                                (),
                                initializer=tf.constant_initializer(np.sqrt(1.0 / H)),
                            )
                            b = tf.get_variable(
                                "attention_b", [H], initializer=tf.zeros_initializer()
                            )
                            v = g * v * tf.rsqrt(tf.reduce_sum(tf.square(v)))
                            score = tf.reduce_sum(v * tf.tanh(keys + query + b), [2])
                        else:
                            score = tf.reduce_sum(v * tf.tanh(keys + query), [2])
                score = tf.where(mask, score, tf.ones_like(score) * -np.inf)
                alignments = tf.nn.softmax(score)
                context = tf.squeeze(tf.matmul(alignments[:, None], values), [1])
                attention = attention_layer(tf.concat([out, context], 1))
            outputs.append(attention)
            history.append(alignments)
    return [tf.stack(outputs, 1), alignments, tf.stack(history, 1), state]


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


@pytest.mark.parametrize("kind", KINDS)
def test_attention_wrapper_matches_tf1(kind):
    start, theirs = run(tf1, lambda tf: reference(tf, kind))
    ours_start, ours = run(dataflow, lambda tf: contrib(tf, kind), start)
    assert sorted(ours_start) == sorted(start)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-5, atol=1e-6)
    assert np.all(ours[1][1, MEMORY_LENGTHS[1] :] == 0)  # masked memory gets no weight
    for a, b in zip(ours[3], theirs[3], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_attention_bad_input():
    tf = dataflow
    memory = tf.constant(MEMORY)
    mechanism = tf.contrib.seq2seq.LuongAttention(H + 1, memory)
    with pytest.raises(ValueError, match="Incompatible or unknown inner dimensions"):
        mechanism(tf.zeros([B, H]), None)
    with pytest.raises(ValueError, match="memory must be"):
        tf.contrib.seq2seq.BahdanauAttention(H, tf.zeros([B, DM]))
    with pytest.raises(TypeError, match="attention_mechanism must be"):
        tf.contrib.seq2seq.AttentionWrapper(tf.nn.rnn_cell.GRUCell(H), memory)
    cell = tf.contrib.seq2seq.AttentionWrapper(tf.nn.rnn_cell.GRUCell(H), mechanism)
    with pytest.raises(TypeError, match="AttentionWrapperState"):
        cell(tf.zeros([B, D]), tf.zeros([B, H]))
    state = cell.zero_state(B, tf.float32)
    assert state.clone(time=tf.constant(3)).cell_state is state.cell_state
    assert cell.output_size == DM  # the context, without attention_layer_size
