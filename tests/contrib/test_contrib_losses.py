"""``tf.contrib.losses`` (``slim.losses``) against ``tf.losses`` in
``tensorflow.compat.v1`` with the arguments in TF 1.15's contrib order, and
``slim.model_analyzer`` on the same program built here and in TF1."""

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

RNG = np.random.default_rng(77)
LOGITS = RNG.normal(size=(4, 3)).astype(np.float32)
ONEHOT = np.eye(3, dtype=np.float32)[[0, 2, 1, 2]]
SPARSE = np.array([0, 2, 1, 2], np.int32)
PROBS = RNG.uniform(0.05, 0.95, size=(4, 3)).astype(np.float32)
BINARY = (RNG.uniform(size=(4, 3)) > 0.5).astype(np.float32)
EXAMPLE_WEIGHTS = np.array([1.0, 0.0, 2.0, 0.5], np.float32)
FULL_WEIGHTS = RNG.uniform(size=(4, 3)).astype(np.float32) * (RNG.uniform(size=(4, 3)) > 0.3)

# (contrib call, the tf.losses call of the same value). Weights of shape [batch] weigh
# whole examples in contrib; tf.losses gets them as [batch, 1] to mean the same.
EW = EXAMPLE_WEIGHTS[:, None]
CASES = {
    "softmax": (
        lambda L: L.softmax_cross_entropy(LOGITS, ONEHOT),
        lambda L: L.softmax_cross_entropy(ONEHOT, LOGITS),
    ),
    "softmax_weighted_smoothed": (
        lambda L: L.softmax_cross_entropy(LOGITS, ONEHOT, EXAMPLE_WEIGHTS, 0.1),
        lambda L: L.softmax_cross_entropy(ONEHOT, LOGITS, EXAMPLE_WEIGHTS, 0.1),
    ),
    "sparse_softmax": (
        lambda L: L.sparse_softmax_cross_entropy(LOGITS, SPARSE[:, None], EXAMPLE_WEIGHTS),
        lambda L: L.sparse_softmax_cross_entropy(SPARSE, LOGITS, EXAMPLE_WEIGHTS),
    ),
    "sigmoid": (
        lambda L: L.sigmoid_cross_entropy(LOGITS, BINARY, FULL_WEIGHTS, 0.2),
        lambda L: L.sigmoid_cross_entropy(BINARY, LOGITS, FULL_WEIGHTS, 0.2),
    ),
    "mse_example_weights": (
        lambda L: L.mean_squared_error(PROBS, BINARY, EXAMPLE_WEIGHTS),
        lambda L: L.mean_squared_error(BINARY, PROBS, EW),
    ),
    "absolute_zero_weight": (
        lambda L: L.absolute_difference(PROBS, BINARY, 0.0),
        lambda L: L.absolute_difference(BINARY, PROBS, 0.0),
    ),
    "log_loss": (
        lambda L: L.log_loss(PROBS, BINARY, FULL_WEIGHTS),
        lambda L: L.log_loss(BINARY, PROBS, FULL_WEIGHTS),
    ),
    "cosine": (
        lambda L: L.cosine_distance(ONEHOT, ONEHOT[::-1].copy(), dim=1),
        lambda L: L.cosine_distance(ONEHOT[::-1].copy(), ONEHOT, axis=1),
    ),
    "hinge_unreduced": (
        lambda L: L.hinge_loss(LOGITS, BINARY),
        lambda L: L.hinge_loss(BINARY, LOGITS, reduction=tf1.losses.Reduction.NONE),
    ),
}


def value(tf, build):
    with tf.Graph().as_default():
        out = build(tf)
        collected = len(tf.get_collection(tf.GraphKeys.LOSSES))
        with tf.Session() as sess:
            return sess.run(out), collected


@pytest.mark.parametrize("case", sorted(CASES))
def test_contrib_losses_equal_tf_losses(case):
    ours, reference = CASES[case]
    got, got_collected = value(dataflow, lambda tf: ours(tf.contrib.losses))
    want, want_collected = value(tf1, lambda tf: reference(tf.losses))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert got_collected == (0 if case == "hinge_unreduced" else 1)


def test_slim_losses_is_contrib_losses_and_gradients_flow():
    tf = dataflow
    assert tf.contrib.slim.losses is tf.contrib.losses
    with tf.Graph().as_default():
        w = tf.Variable(LOGITS)
        loss = tf.contrib.slim.losses.softmax_cross_entropy(w, ONEHOT)
        total = tf.contrib.slim.losses.get_total_loss()
        (grad,) = tf.gradients(loss, [w])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            g, t, l_ = sess.run([grad, total, loss])
    soft = np.exp(LOGITS) / np.exp(LOGITS).sum(1, keepdims=True)
    np.testing.assert_allclose(g, (soft - ONEHOT) / 4, rtol=1e-5, atol=1e-6)
    assert t == pytest.approx(l_)


def test_losses_refuse_an_unknown_weights_rank():
    tf = dataflow
    with tf.Graph().as_default():
        w = tf.placeholder(tf.float32)
        with pytest.raises(ValueError, match="weights.get_shape"):
            tf.contrib.losses.compute_weighted_loss(tf.constant(PROBS), w)


def analyzer_program(tf):
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    w = tf.get_variable("w", [3, 5])
    b = tf.get_variable("b", [5], dtype=tf.float64)
    return tf.matmul(x, w), [w, b]


def test_model_analyzer(capsys):
    analyzer = dataflow.contrib.slim.model_analyzer
    with dataflow.Graph().as_default():
        _, variables = analyzer_program(dataflow)
        sizes = analyzer.analyze_vars(variables, print_info=True)
    printed = capsys.readouterr().out.splitlines()
    assert sizes == (20, 3 * 5 * 4 + 5 * 8)
    assert printed[3] == "w:0 (float32 3x5) [15, bytes: 60]"
    assert printed[-2:] == ["Total size of variables: 20", "Total bytes of variables: 100"]
    # the same ops in the same order as TF1's graph: the same sizes, op by op
    lines = []
    for tf in (dataflow, tf1):
        with tf.Graph().as_default() as g:
            tf.constant(np.zeros((2, 4), np.float32), name="c")
            x = tf.placeholder(tf.float32, [None, 3], name="x")
            y = tf.placeholder(tf.float32, [2, 3], name="y")
            tf.add(x, y, name="sum")
            assert analyzer.analyze_ops(g, print_info=True) == 8 + 0 + 6 + 6
        lines.append(capsys.readouterr().out.splitlines()[3:])
    # TF 2's shapes hold None where TF 1.15's Dimension printed "?"
    assert (
        lines[0]
        == [line.replace("None", "?") for line in lines[1]]
        == [
            "c \t-> (float32 2x4) [8]",
            "x \t-> (float32 ?x3) [0]",
            "y \t-> (float32 2x3) [6]",
            "sum \t-> (float32 2x3) [6]",
        ]
    )
