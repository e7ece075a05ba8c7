"""``tf.contrib.rnn``, ``tf.contrib.seq2seq`` and ``tf.contrib.legacy_seq2seq`` against
TF 1.15's semantics: ``contrib.rnn`` is TF 1.15's aliases of the core cells (checked
against ``tf.nn`` in ``tensorflow.compat.v1``), and the losses and decoder against the
core TF1 programs TF 1.15's contrib source builds, from the same initial values."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow
from dataflow import NotProvidedError

pytestmark = [
    pytest.mark.tf,
    pytest.mark.filterwarnings("ignore:.*is deprecated:UserWarning"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]

tf1 = pytest.importorskip("tensorflow").compat.v1

RNG = np.random.default_rng(2815)
BATCH, STEPS, DEPTH, CLASSES = 3, 4, 5, 6
SEQUENCES = RNG.normal(size=(BATCH, STEPS, DEPTH)).astype(np.float32)
LOGITS = RNG.normal(size=(BATCH, STEPS, CLASSES)).astype(np.float32)
TARGETS = RNG.integers(0, CLASSES, size=(BATCH, STEPS)).astype(np.int32)
WEIGHTS = np.array([[1, 1, 1, 0], [1, 1, 0, 0], [1, 1, 1, 1]], np.float32)


def run(tf, build, initial=None):
    """``build(tf) -> (outputs, loss)`` in a fresh graph: shapes, initial values, the
    outputs and the variables after one SGD step (TF's initial values loaded by name)."""
    with tf.Graph().as_default():
        outputs, loss = build(tf)
        step = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        variables = {v.name: v for v in tf.global_variables()}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for name, value in (initial or {}).items():
                variables[name].load(value, sess)
            start = {name: sess.run(v) for name, v in variables.items()}
            values = sess.run(outputs)
            sess.run(step)
            after = {name: sess.run(v) for name, v in variables.items()}
    return {k: v.shape.as_list() for k, v in variables.items()}, start, values, after


def check(contrib_program, reference_program, rtol=1e-5, atol=1e-5):
    shapes, initial, theirs, their_after = run(tf1, reference_program)
    our_shapes, _, ours, our_after = run(dataflow, contrib_program, initial)
    assert our_shapes == shapes
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)
    for key in their_after:
        np.testing.assert_allclose(our_after[key], their_after[key], rtol=rtol, atol=atol)


# --- contrib.rnn -------------------------------------------------------------------------
def test_contrib_rnn_is_the_core_cells():
    from dataflow.contrib import rnn

    for name in [
        "BasicLSTMCell",
        "LSTMCell",
        "GRUCell",
        "MultiRNNCell",
        "DropoutWrapper",
        "LSTMStateTuple",
        "BasicRNNCell",
        "RNNCell",
    ]:
        assert getattr(rnn, name) is getattr(dataflow.nn.rnn_cell, name)
        assert getattr(rnn.core_rnn_cell, name) is getattr(rnn, name)
    assert rnn.static_rnn is dataflow.nn.static_rnn


def test_static_bidirectional_rnn_follows_tf_nn():
    """An alias looked up when used: it is tf.nn's as soon as tf.nn has it."""
    core = getattr(dataflow.nn, "static_bidirectional_rnn", None)
    if core is None:
        with pytest.raises(NotProvidedError, match="static_bidirectional_rnn"):
            dataflow.contrib.rnn.static_bidirectional_rnn  # noqa: B018 - the lookup is the test
    else:
        assert dataflow.contrib.rnn.static_bidirectional_rnn is core


def test_static_lstm_language_model_matches_tf1():
    """The char-rnn pattern: contrib cells, static_rnn, legacy sequence_loss_by_example."""

    def program(tf, rnn, loss_by_example):
        steps = [tf.constant(SEQUENCES[:, t]) for t in range(STEPS)]
        cell = rnn.MultiRNNCell([rnn.BasicLSTMCell(4), rnn.GRUCell(3)])
        outputs, state = rnn.static_rnn(cell, steps, dtype=tf.float32)
        w = tf.get_variable("softmax_w", [3, CLASSES])
        logits = [tf.matmul(o, w) for o in outputs]
        targets = [tf.constant(TARGETS[:, t]) for t in range(STEPS)]
        weights = [tf.constant(WEIGHTS[:, t]) for t in range(STEPS)]
        loss = loss_by_example(tf, logits, targets, weights)
        return [tf.stack(outputs), loss], tf.reduce_mean(loss)

    def reference_loss(tf, logits, targets, weights):
        # TF 1.15's legacy_seq2seq.sequence_loss_by_example, step by step
        crossent = [
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=t, logits=lg) * w
            for lg, t, w in zip(logits, targets, weights)
        ]
        return tf.add_n(crossent) / (tf.add_n(weights) + 1e-12)

    check(
        lambda tf: program(
            tf,
            tf.contrib.rnn,
            lambda tf, *a: tf.contrib.legacy_seq2seq.sequence_loss_by_example(*a),
        ),
        lambda tf: program(tf, _tf1_rnn(tf), reference_loss),
    )


def _tf1_rnn(tf):
    """TF 1.15's tf.contrib.rnn names, from their core homes."""

    class Rnn:
        MultiRNNCell = tf.nn.rnn_cell.MultiRNNCell
        BasicLSTMCell = tf.nn.rnn_cell.BasicLSTMCell
        GRUCell = tf.nn.rnn_cell.GRUCell
        static_rnn = staticmethod(tf.nn.static_rnn)

    return Rnn


# --- legacy_seq2seq ----------------------------------------------------------------------
def _xent(logits, targets):
    logits = logits.astype(np.float64)
    log_z = np.log(np.exp(logits - logits.max(-1, keepdims=True)).sum(-1)) + logits.max(-1)
    return log_z - np.take_along_axis(logits, targets[..., None], -1)[..., 0]


def test_legacy_sequence_loss_matches_numpy():
    tf = dataflow
    logits = [tf.constant(LOGITS[:, t]) for t in range(STEPS)]
    targets = [tf.constant(TARGETS[:, t]) for t in range(STEPS)]
    weights = [tf.constant(WEIGHTS[:, t]) for t in range(STEPS)]
    seq = tf.contrib.legacy_seq2seq
    fetches = [
        seq.sequence_loss(logits, targets, weights),
        seq.sequence_loss(
            logits, targets, weights, average_across_timesteps=False, average_across_batch=False
        ),
        seq.sequence_loss_by_example(logits, targets, weights, average_across_timesteps=False),
    ]
    with tf.Session() as sess:
        mean, total, per_example = sess.run(fetches)
    xent = _xent(LOGITS, TARGETS) * WEIGHTS
    by_example = xent.sum(1) / (WEIGHTS.sum(1) + 1e-12)
    np.testing.assert_allclose(mean, by_example.sum() / BATCH, rtol=1e-5)
    np.testing.assert_allclose(total, xent.sum(), rtol=1e-5)
    np.testing.assert_allclose(per_example, xent.sum(1), rtol=1e-5)
    with pytest.raises(ValueError, match="Lengths of logits, weights, and targets"):
        seq.sequence_loss_by_example(logits, targets[:-1], weights)


@pytest.mark.parametrize("feed_previous", [False, True])
def test_rnn_decoder_matches_tf1(feed_previous):
    """TF 1.15's rnn_decoder: one cell over the inputs in scope ``rnn_decoder``; with a
    loop function, each later input is made from the previous output."""

    def program(tf, decoder):
        inputs = [tf.constant(SEQUENCES[:, t]) for t in range(STEPS)]
        cell = tf.nn.rnn_cell.GRUCell(DEPTH)
        init = tf.constant(np.ones((BATCH, DEPTH), np.float32) * 0.1)
        loop = (lambda prev, i: tf.tanh(prev) * 2.0) if feed_previous else None
        outputs, state = decoder(tf, inputs, init, cell, loop)
        return [tf.stack(outputs), state], tf.reduce_sum(tf.square(outputs))

    def reference(tf, inputs, state, cell, loop):
        outputs, prev = [], None
        with tf.variable_scope("rnn_decoder"):
            for i, inp in enumerate(inputs):
                if loop is not None and prev is not None:
                    inp = loop(prev, i)
                output, state = cell(inp, state)
                outputs.append(output)
                prev = output
        return outputs, state

    check(
        lambda tf: program(tf, lambda tf, *a: tf.contrib.legacy_seq2seq.rnn_decoder(*a)),
        lambda tf: program(tf, reference),
    )


# --- seq2seq.sequence_loss ---------------------------------------------------------------
SETTINGS = [
    {},
    {"average_across_timesteps": False},
    {"average_across_batch": False},
    {"average_across_timesteps": False, "average_across_batch": False},
    {
        "average_across_timesteps": False,
        "average_across_batch": False,
        "sum_over_timesteps": True,
        "sum_over_batch": True,
    },
    {"average_across_timesteps": False, "average_across_batch": False, "sum_over_timesteps": True},
]


def seq2seq_reference(
    tf,
    logits,
    targets,
    weights,
    average_across_timesteps=True,
    average_across_batch=True,
    sum_over_timesteps=False,
    sum_over_batch=False,
):
    """TF 1.15's contrib.seq2seq.sequence_loss, in core TF1 ops."""
    flat = tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=tf.reshape(targets, [-1]), logits=tf.reshape(logits, [-1, CLASSES])
    ) * tf.reshape(weights, [-1])
    if average_across_timesteps and average_across_batch:
        return tf.div_no_nan(tf.reduce_sum(flat), tf.reduce_sum(weights))
    if sum_over_timesteps and sum_over_batch:
        return tf.div_no_nan(tf.reduce_sum(flat), tf.cast(tf.count_nonzero(weights), tf.float32))
    crossent = tf.reshape(flat, [BATCH, STEPS])
    if average_across_timesteps or average_across_batch:
        axis = 1 if average_across_timesteps else 0
        crossent = tf.div_no_nan(tf.reduce_sum(crossent, [axis]), tf.reduce_sum(weights, [axis]))
    if sum_over_timesteps or sum_over_batch:
        axis = 1 if sum_over_timesteps else 0
        nonzero = tf.cast(tf.count_nonzero(weights, [axis]), tf.float32)
        crossent = tf.div_no_nan(tf.reduce_sum(crossent, [axis]), nonzero)
    return crossent


def test_seq2seq_sequence_loss_matches_tf1():
    def program(tf, loss_fn):
        logits = tf.get_variable("logits", initializer=tf.constant(LOGITS))
        losses = [
            loss_fn(tf, logits, tf.constant(TARGETS), tf.constant(WEIGHTS), **s) for s in SETTINGS
        ]
        return losses, tf.add_n([tf.reduce_sum(x) for x in losses])

    check(
        lambda tf: program(tf, lambda tf, *a, **k: tf.contrib.seq2seq.sequence_loss(*a, **k)),
        lambda tf: program(tf, seq2seq_reference),
    )


def test_seq2seq_sequence_loss_bad_input():
    tf = dataflow
    logits, targets, weights = tf.constant(LOGITS), tf.constant(TARGETS), tf.constant(WEIGHTS)
    with pytest.raises(ValueError, match="average_across_timesteps and sum_over_timesteps"):
        tf.contrib.seq2seq.sequence_loss(logits, targets, weights, sum_over_timesteps=True)
    with pytest.raises(ValueError, match="Logits must be"):
        tf.contrib.seq2seq.sequence_loss(targets, targets, weights)


def test_tile_batch_matches_numpy(sess):
    tiled = dataflow.contrib.seq2seq.tile_batch(dataflow.constant(SEQUENCES), 2)
    np.testing.assert_array_equal(sess.run(tiled), np.repeat(SEQUENCES, 2, axis=0))
