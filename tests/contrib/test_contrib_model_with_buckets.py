"""``tf.contrib.legacy_seq2seq.model_with_buckets`` against the core TF1 program TF
1.15's function builds (TF 2 has no contrib): per bucket, the seq2seq model in the
caller's variable scope (reused from the second bucket) on the first inputs, and the
legacy ``sequence_loss`` (or per-example loss) of its outputs; the same variables, outputs
and losses from TF's initial values."""

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

RNG = np.random.default_rng(2816)
B, F, H, V = 3, 4, 5, 6
BUCKETS = [(2, 2), (4, 3)]
ENC = RNG.normal(size=(4, B, F)).astype(np.float32)
DEC = RNG.normal(size=(3, B, F)).astype(np.float32)
TARGETS = RNG.integers(0, V, size=(3, B)).astype(np.int32)
WEIGHTS = (RNG.random((3, B)) > 0.3).astype(np.float32)


def seq2seq(tf, encoder_inputs, decoder_inputs):
    """A GRU encoder-decoder with an output projection, as a program passes one."""
    cell = tf.nn.rnn_cell.GRUCell(H)
    _, state = tf.nn.static_rnn(cell, encoder_inputs, dtype=tf.float32, scope="encoder")
    outputs, state = tf.nn.static_rnn(cell, decoder_inputs, initial_state=state, scope="decoder")
    w = tf.get_variable("proj_w", [H, V])
    b = tf.get_variable("proj_b", [V])
    return [tf.matmul(o, w) + b for o in outputs], state


def core_loss(tf, logits, targets, weights, per_example, loss_fn):
    """TF 1.15's legacy sequence_loss(_by_example), written in core ops."""
    steps = []
    for logit, target, weight in zip(logits, targets, weights):
        if loss_fn is None:
            xent = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=target, logits=logit)
        else:
            xent = loss_fn(labels=target, logits=logit)
        steps.append(xent * weight)
    per = tf.add_n(steps) / (tf.add_n(weights) + 1e-12)
    return per if per_example else tf.reduce_sum(per) / tf.cast(tf.shape(targets[0])[0], tf.float32)


def smoothed(tf):
    def loss(labels, logits):
        onehot = tf.one_hot(labels, V) * 0.9 + 0.1 / V
        return tf.nn.softmax_cross_entropy_with_logits(labels=onehot, logits=logits)

    return loss


def build(tf, ours, per_example, custom):
    enc = [tf.constant(x) for x in ENC]
    dec = [tf.constant(x) for x in DEC]
    targets = [tf.constant(t) for t in TARGETS]
    weights = [tf.constant(w) for w in WEIGHTS]
    loss_fn = smoothed(tf) if custom else None
    with tf.variable_scope("model"):
        if ours:
            return tf.contrib.legacy_seq2seq.model_with_buckets(
                enc,
                dec,
                targets,
                weights,
                BUCKETS,
                lambda x, y: seq2seq(tf, x, y),
                softmax_loss_function=loss_fn,
                per_example_loss=per_example,
            )
        outputs, losses = [], []
        for j, (e, d) in enumerate(BUCKETS):
            with tf.variable_scope(tf.get_variable_scope(), reuse=True if j > 0 else None):
                out, _ = seq2seq(tf, enc[:e], dec[:d])
                outputs.append(out)
                losses.append(core_loss(tf, out, targets[:d], weights[:d], per_example, loss_fn))
        return outputs, losses


def run(tf, ours, per_example, custom, values=None):
    with tf.Graph().as_default():
        fetches = build(tf, ours, per_example, custom)
        variables = {v.op.name: v for v in tf.global_variables()}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            if values is not None:
                for name, v in variables.items():
                    v.load(values[name], sess)
            return sess.run(fetches), {n: sess.run(v) for n, v in variables.items()}


@pytest.mark.parametrize("per_example, custom", [(False, False), (True, False), (False, True)])
def test_matches_the_core_tf1_program(per_example, custom):
    (theirs, their_vars) = run(tf1, False, per_example, custom)
    (ours, our_vars) = run(dataflow, True, per_example, custom, their_vars)
    assert sorted(our_vars) == sorted(their_vars)
    assert "model/proj_w" in our_vars and len(our_vars) == 6
    (outputs, losses), (want_outputs, want_losses) = ours, theirs
    assert [len(o) for o in outputs] == [2, 3]
    for got, want in zip(outputs, want_outputs):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    for got, want in zip(losses, want_losses):
        assert np.shape(got) == np.shape(want) == ((B,) if per_example else ())
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_short_inputs_raise_value_error():
    x = [dataflow.zeros([B, F])] * 3
    t = [dataflow.zeros([B], dataflow.int32)] * 3
    w = [dataflow.ones([B])] * 3
    fn = lambda a, b: seq2seq(dataflow, a, b)
    mwb = dataflow.contrib.legacy_seq2seq.model_with_buckets
    with pytest.raises(ValueError, match="encoder_inputs \\(3\\).*last bucket \\(4\\)"):
        mwb(x, x, t, w, BUCKETS, fn)
    with pytest.raises(ValueError, match="targets \\(2\\)"):
        mwb(x + x, x, t[:2], w, BUCKETS, fn)
    with pytest.raises(ValueError, match="weights \\(2\\)"):
        mwb(x + x, x, t, w[:2], BUCKETS, fn)
