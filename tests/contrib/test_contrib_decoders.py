"""``tf.contrib.seq2seq``'s ``BasicDecoder``, ``TrainingHelper``,
``GreedyEmbeddingHelper`` and ``dynamic_decode`` against the core TF1 programs they
are equivalent to (TF 2 has no ``contrib.seq2seq``): teacher forcing is ``dynamic_rnn``
and a ``Dense`` layer in scope ``decoder``; greedy decoding is the unrolled loop feeding
back the arg-max's embedding, stopped when every sequence has produced the end token.
Same variable names, TF's initial values loaded by name."""

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

RNG = np.random.default_rng(1228)
B, T, D, H, V = 3, 5, 4, 6, 3
INPUTS = RNG.normal(size=(B, T, D)).astype(np.float32)
LENGTHS = np.array([5, 2, 3], np.int32)
MAX_STEPS = 7


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


def check(contrib, reference):
    start, theirs = run(tf1, reference)
    ours_start, ours = run(dataflow, contrib, start)
    assert sorted(ours_start) == sorted(start)
    return ours, theirs


@pytest.mark.parametrize("impute_finished", [True, False])
def test_training_helper_is_dynamic_rnn_and_a_dense_layer(impute_finished):
    def contrib(tf):
        cell = tf.nn.rnn_cell.GRUCell(H)
        helper = tf.contrib.seq2seq.TrainingHelper(tf.constant(INPUTS), LENGTHS)
        decoder = tf.contrib.seq2seq.BasicDecoder(
            cell, helper, cell.zero_state(B, tf.float32), output_layer=tf.layers.Dense(V)
        )
        outputs, state, lengths = tf.contrib.seq2seq.dynamic_decode(
            decoder, impute_finished=impute_finished
        )
        return [outputs.rnn_output, outputs.sample_id, state, lengths]

    def reference(tf):
        cell = tf.nn.rnn_cell.GRUCell(H)
        with tf.variable_scope("decoder") as scope:
            lengths = LENGTHS if impute_finished else None
            steps = T if impute_finished else int(LENGTHS.max())
            out, state = tf.nn.dynamic_rnn(
                cell,
                tf.constant(INPUTS[:, :steps]),
                sequence_length=lengths,
                dtype=tf.float32,
                scope=scope,
            )
            logits = tf.layers.Dense(V)(out)
        ids = tf.argmax(logits, -1, output_type=tf.int32)
        if impute_finished:  # finished sequences emit zeros
            mask = tf.sequence_mask(LENGTHS, T)
            logits = logits * tf.cast(mask, tf.float32)[:, :, None]
            ids = ids * tf.cast(mask, tf.int32)
        return [logits, ids, state, tf.constant(LENGTHS)]

    ours, theirs = check(contrib, reference)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(ours[1], theirs[1])
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(ours[3], theirs[3])


def test_greedy_embedding_helper_is_the_unrolled_argmax_loop():
    def reference(tf):
        cell = tf.nn.rnn_cell.BasicLSTMCell(H)
        embedding = tf.get_variable("embedding", [V, D])
        state = cell.zero_state(B, tf.float32)
        inputs = tf.nn.embedding_lookup(embedding, tf.constant([0, 1, 2]))
        layer = tf.layers.Dense(V)
        logits, ids = [], []
        with tf.variable_scope("decoder"):
            for _ in range(MAX_STEPS):
                out, state = cell(inputs, state)
                logits.append(layer(out))
                ids.append(tf.argmax(logits[-1], -1, output_type=tf.int32))
                inputs = tf.nn.embedding_lookup(embedding, ids[-1])
        return [tf.stack(logits, 1), tf.stack(ids, 1)]

    start, (all_logits, all_ids) = run(tf1, reference)
    end = int(all_ids[1, 2])  # the unrolled loop does not depend on it: row 1 ends by step 3

    def contrib(tf):
        cell = tf.nn.rnn_cell.BasicLSTMCell(H)
        embedding = tf.get_variable("embedding", [V, D])
        helper = tf.contrib.seq2seq.GreedyEmbeddingHelper(embedding, [0, 1, 2], end)
        decoder = tf.contrib.seq2seq.BasicDecoder(
            cell, helper, cell.zero_state(B, tf.float32), output_layer=tf.layers.Dense(V)
        )
        outputs, state, lengths = tf.contrib.seq2seq.dynamic_decode(
            decoder, maximum_iterations=MAX_STEPS
        )
        return [outputs.rnn_output, outputs.sample_id, lengths]

    ours_start, (logits, ids, lengths) = run(dataflow, contrib, start)
    assert sorted(ours_start) == sorted(start)
    # TF 1.15's stopping rule, on the reference's ids: each sequence's length is the
    # step of its first end token plus one (else MAX_STEPS); the loop runs to the longest.
    hit = all_ids == end
    want_lengths = np.where(hit.any(1), hit.argmax(1) + 1, MAX_STEPS)
    assert want_lengths[1] <= 3
    steps = want_lengths.max()
    np.testing.assert_array_equal(lengths, want_lengths)
    np.testing.assert_array_equal(ids, all_ids[:, :steps])
    np.testing.assert_allclose(logits, all_logits[:, :steps], rtol=1e-5, atol=1e-6)


def test_decoder_bad_input():
    tf = dataflow
    with pytest.raises(ValueError, match="sequence_length to be a vector"):
        tf.contrib.seq2seq.TrainingHelper(tf.constant(INPUTS), 3)
    with pytest.raises(ValueError, match="end_token must be a scalar"):
        tf.contrib.seq2seq.GreedyEmbeddingHelper(tf.zeros([V, D]), [0, 0], [1, 1])
    cell = tf.nn.rnn_cell.GRUCell(H)
    with pytest.raises(TypeError, match="helper must be a Helper"):
        tf.contrib.seq2seq.BasicDecoder(cell, object(), cell.zero_state(B, tf.float32))
    helper = tf.contrib.seq2seq.TrainingHelper(tf.constant(INPUTS), LENGTHS)
    decoder = tf.contrib.seq2seq.BasicDecoder(cell, helper, cell.zero_state(B, tf.float32))
    with pytest.raises(ValueError, match="maximum_iterations must be a scalar"):
        tf.contrib.seq2seq.dynamic_decode(decoder, maximum_iterations=[3])


def test_sample_embedding_helper_draws_from_the_softmax():
    """At a tiny temperature it is the greedy decoder; at temperature 1 each step's ids
    follow the softmax of the outputs (checked on the first step, whose outputs are the
    same for every sequence of a batch started from the same token)."""
    tf = dataflow
    n = 4000
    cell = tf.nn.rnn_cell.GRUCell(H)
    embedding = tf.get_variable("embedding", [V, D])
    layer = tf.layers.Dense(V, bias_initializer=tf.constant_initializer([0.5, -0.5, 0.0]))

    def decode(helper, batch, scope):
        decoder = tf.contrib.seq2seq.BasicDecoder(
            cell, helper, cell.zero_state(batch, tf.float32), output_layer=layer
        )
        return tf.contrib.seq2seq.dynamic_decode(decoder, maximum_iterations=4, scope=scope)[0]

    start = tf.zeros([n], tf.int32)
    greedy = decode(tf.contrib.seq2seq.GreedyEmbeddingHelper(embedding, start[:8], -1), 8, "d")
    cold = decode(
        tf.contrib.seq2seq.SampleEmbeddingHelper(embedding, start[:8], -1, 1e-4, seed=3), 8, "d"
    )
    warm = decode(tf.contrib.seq2seq.SampleEmbeddingHelper(embedding, start, -1, seed=4), n, "d")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        g, c, w = sess.run([greedy.sample_id, cold.sample_id, warm])
    np.testing.assert_array_equal(c, g)
    logits = w.rnn_output[0, 0].astype(np.float64)
    p = np.exp(logits - logits.max())
    p /= p.sum()
    freq = np.bincount(w.sample_id[:, 0], minlength=V) / n
    np.testing.assert_allclose(freq, p, atol=5 * np.sqrt(0.25 / n))  # 5 binomial sigmas
