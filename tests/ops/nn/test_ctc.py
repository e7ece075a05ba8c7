"""``tf.nn.ctc_loss`` and ``tf.nn.ctc_greedy_decoder`` against ``tensorflow.compat.v1``
(losses, gradients, decoded sparse tensors, error classes), the loss's gradient against
an ``autograd`` reference and finite differences (``specs_ctc.ctc_reference``), and a
few steps of training a CTC model, step for step against TF1.

The op table (``specs_ctc``) holds one row per op as well; this file sweeps the
options, layouts, lengths and label shapes a row cannot.
"""

from __future__ import annotations

import numpy as np
import pytest

import dataflow
from dataflow.framework import errors
from dataflow.testing import grad_check
from dataflow.testing.tf_parity import assert_same_fetches, run_in_fresh_graph

from ..specs_ctc import (
    beam_outputs,
    ctc_reference,
    exact_best_labelings,
    greedy_outputs,
    greedy_reference,
    sparse_labels,
)

RNG = np.random.default_rng(7)


def tf1_module():
    return pytest.importorskip("tensorflow.compat.v1")


def loss_and_gradient(tf, logits, labels, lengths, weights=None, **options):
    """``build`` for ``run_in_fresh_graph``: the loss and the gradient of its weighted
    sum (weights make each entry's share of the gradient visible)."""

    def build(tf):
        x = tf.placeholder(logits.dtype, logits.shape)
        loss = tf.nn.ctc_loss(sparse_labels(tf, labels), x, lengths, **options)
        w = np.arange(1, len(labels) + 1) if weights is None else weights
        (grad,) = tf.gradients(tf.reduce_sum(loss * w.astype(logits.dtype)), [x])
        return [loss, grad], {x: logits}

    return run_in_fresh_graph(tf, build)


def assert_parity(logits, labels, lengths, rtol=1e-5, atol=2e-5, **options):
    """Our loss and gradient equal TF1's. TF's kernel runs its recursion in the logits'
    dtype (float32 here mostly) with float log-sum-exps; ours in float64: the gradients
    differ by up to a few 1e-6 where TF's rounding accumulates."""
    tf1 = tf1_module()
    ours = loss_and_gradient(dataflow, logits, labels, lengths, **options)
    theirs = loss_and_gradient(tf1, logits, labels, lengths, **options)
    assert_same_fetches(ours, theirs, rtol=rtol, atol=atol)
    return ours


# --- the loss against TF1 ---------------------------------------------------------------------
@pytest.mark.tf
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("time_major", [True, False])
@pytest.mark.parametrize("merge", [True, False])
@pytest.mark.parametrize("collapse", [False, True])
def test_loss_and_gradient_match_tf1(dtype, time_major, merge, collapse) -> None:
    labels = [[1, 1, 2], [0, 2, 2, 2, 1], [3], [2, 0, 1, 0]]
    lengths = [9, 10, 3, 7]
    logits = (RNG.standard_normal((10, 4, 5)) * 2).astype(dtype)
    if not time_major:
        logits = np.ascontiguousarray(logits.transpose(1, 0, 2))
    loss, grad = assert_parity(
        logits,
        labels,
        lengths,
        time_major=time_major,
        ctc_merge_repeated=merge,
        preprocess_collapse_repeated=collapse,
    )
    assert loss.dtype == dtype and np.all(np.isfinite(loss))
    steps = grad if time_major else grad.transpose(1, 0, 2)
    for b, n in enumerate(lengths):  # no gradient past an entry's sequence_length
        assert not steps[n:, b].any()


@pytest.mark.tf
@pytest.mark.parametrize(
    "shape", [(1, 1, 2), (4, 1, 3), (30, 6, 12), (50, 2, 40)], ids=lambda s: "x".join(map(str, s))
)
def test_shapes_match_tf1(shape) -> None:
    max_time, batch, num_classes = shape
    rng = np.random.default_rng(max_time * batch)
    labels = []
    for _ in range(batch):
        n = int(rng.integers(1, max(2, max_time // 3)))
        labels.append(rng.integers(0, num_classes - 1, n).tolist())
    shortest = [min(len(row) * 2, max_time) for row in labels]
    lengths = rng.integers(shortest, max_time + 1).tolist()
    logits = rng.standard_normal(shape).astype(np.float32)
    assert_parity(logits, labels, lengths)


@pytest.mark.tf
def test_impossible_and_ignored_entries_match_tf1() -> None:
    """[1, 1, 1] in 3 steps has no path when merging repeats (loss inf, gradient the
    softmax); with ignore_longer_outputs_than_inputs an entry whose labels outnumber its
    steps, and one of 0 steps, score 0 with gradient 0."""
    logits = RNG.standard_normal((6, 4, 4)).astype(np.float32)
    loss, grad = assert_parity(
        logits,
        [[1, 1, 1], [0, 1], [2, 0, 1, 0, 1, 1, 2], [1]],
        [3, 6, 6, 0],
        ignore_longer_outputs_than_inputs=True,
    )
    assert loss[0] == np.inf and loss[2] == 0 and loss[3] == 0
    assert not grad[:, 2].any() and not grad[:, 3].any()
    softmax = np.exp(logits[:3, 0]) / np.exp(logits[:3, 0]).sum(-1, keepdims=True)
    np.testing.assert_allclose(grad[:3, 0], softmax * 1, rtol=1e-6)


@pytest.mark.tf
def test_labels_ending_with_blank_values_match_tf1() -> None:
    """A value >= num_classes - 1 ends the label sequence; with collapsing, repeats
    merge before that rule applies. Gaps in the label columns do not matter."""
    tf1 = tf1_module()
    logits = RNG.standard_normal((7, 2, 4)).astype(np.float32)

    def build(tf):
        labels = tf.SparseTensor(
            np.array([[0, 0], [0, 1], [0, 2], [0, 5], [1, 1], [1, 3]], np.int64),
            np.array([2, 2, 3, 9, 0, 1], np.int32),
            np.array([2, 6], np.int64),
        )
        x = tf.constant(logits)
        loss = tf.nn.ctc_loss(labels, x, [7, 7], preprocess_collapse_repeated=True)
        return [loss, tf.gradients(loss, x)[0]], None

    assert_same_fetches(run_in_fresh_graph(dataflow, build), run_in_fresh_graph(tf1, build))


def test_labels_of_only_blank_values_score_the_all_blank_path(sess) -> None:
    """No label left once values >= num_classes - 1 are dropped: the all-blank path.
    (TF's kernel indexes out of bounds here, so TF1 is no reference: see ctc.py.)"""
    logits = RNG.standard_normal((5, 1, 4))
    loss = dataflow.nn.ctc_loss(
        dataflow.SparseTensor([[0, 0]], dataflow.constant([3]), [1, 1]),
        dataflow.constant(logits),
        [5],
    )
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    np.testing.assert_allclose(sess.run(loss), [-log_probs[:, 0, 3].sum()], rtol=1e-12)


@pytest.mark.tf
def test_labels_fed_through_a_sparse_placeholder_match_tf1() -> None:
    tf1 = tf1_module()
    logits = RNG.standard_normal((5, 2, 3)).astype(np.float32)
    value = (np.array([[0, 0], [0, 1], [1, 0]], np.int64), np.array([0, 1, 1], np.int32), [2, 2])

    def build(tf):
        labels = tf.sparse_placeholder(tf.int32)
        lengths = tf.placeholder(tf.int32, [None])
        x = tf.placeholder(tf.float32, [None, None, 3])
        loss = tf.nn.ctc_loss(labels, x, lengths, time_major=False)
        grad = tf.gradients(loss, x)[0]
        return [loss, grad], {labels: value, lengths: [5, 3], x: logits.transpose(1, 0, 2)}

    assert_same_fetches(run_in_fresh_graph(dataflow, build), run_in_fresh_graph(tf1, build))


# --- the gradient against autograd and finite differences -------------------------------------
@pytest.mark.parametrize("merge", [True, False])
def test_gradient_matches_autograd_and_finite_differences(merge) -> None:
    labels, lengths = [[0, 0, 1], [2], [1, 2, 1, 2]], [7, 2, 6]
    logits = RNG.standard_normal((7, 3, 4))
    grad_check.check_op(
        lambda x: dataflow.nn.ctc_loss(
            sparse_labels(dataflow, labels), x, lengths, ctc_merge_repeated=merge
        ),
        lambda x: ctc_reference(x, labels, lengths, merge),
        [logits],
        order=1,
    )


def test_loss_is_the_reference_value_for_large_logits(sess) -> None:
    """Logits of magnitude 50 (probabilities near 1e-40): log space keeps it exact."""
    labels, lengths = [[1, 0], [2, 2]], [5, 5]
    logits = RNG.standard_normal((5, 2, 4)) * 50
    loss = dataflow.nn.ctc_loss(sparse_labels(dataflow, labels), logits, lengths)
    np.testing.assert_allclose(sess.run(loss), ctc_reference(logits, labels, lengths), rtol=1e-12)


@pytest.mark.tf
def test_second_derivative_is_refused_as_in_tf1() -> None:
    for tf in (dataflow, tf1_module()):
        with tf.Graph().as_default():
            x = tf.constant(RNG.standard_normal((4, 1, 3)).astype(np.float32))
            loss = tf.nn.ctc_loss(sparse_labels(tf, [[0, 1]]), x, [4])
            (grad,) = tf.gradients(loss, [x])
            with pytest.raises(LookupError, match="second"):
                tf.gradients(tf.reduce_sum(grad * grad), [x])


# --- training -------------------------------------------------------------------------------
@pytest.mark.tf
def test_gradient_descent_on_ctc_matches_tf1_step_by_step() -> None:
    """A linear model over 8 features, batch-major, 5 steps of GradientDescent: the loss
    falls and every step's loss equals TF1's."""
    tf1 = tf1_module()
    features = RNG.standard_normal((3, 12, 8)).astype(np.float32)
    w0 = (RNG.standard_normal((8, 5)) * 0.1).astype(np.float32)
    labels, lengths = [[0, 1, 2], [3, 3], [1, 0, 1, 3]], [12, 9, 11]

    def build(tf):
        w = tf.Variable(w0)
        logits = tf.reshape(tf.matmul(tf.reshape(features, [-1, 8]), w), [3, 12, 5])
        loss = tf.reduce_mean(
            tf.nn.ctc_loss(sparse_labels(tf, labels), logits, lengths, time_major=False)
        )
        train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
        return loss, train, w

    runs = []
    for tf in (dataflow, tf1):
        with tf.Graph().as_default():
            loss, train, w = build(tf)
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                losses = [sess.run([loss, train])[0] for _ in range(5)]
                runs.append((np.array(losses), sess.run(w)))
    (ours, w_ours), (theirs, w_theirs) = runs
    assert np.all(np.diff(ours) < 0), ours
    np.testing.assert_allclose(ours, theirs, rtol=1e-5)
    np.testing.assert_allclose(w_ours, w_theirs, rtol=1e-4, atol=1e-6)


# --- the greedy decoder -----------------------------------------------------------------------
@pytest.mark.tf
@pytest.mark.parametrize("merge", [True, False])
@pytest.mark.parametrize("blank_index", [None, 0, -2])
@pytest.mark.parametrize("lengths", [[6, 5, 0, 2], [6, 6, 6, 6], [0, 0, 0, 0]])
def test_greedy_decoder_matches_tf1(merge, blank_index, lengths) -> None:
    """Integer logits, so ties are common: the first maximum wins, as in TF."""
    tf1 = tf1_module()
    logits = RNG.integers(0, 3, (6, 4, 3)).astype(np.float32)

    def build(tf):
        return greedy_outputs(
            tf, tf.constant(logits), lengths, merge_repeated=merge, blank_index=blank_index
        ), None

    ours = run_in_fresh_graph(dataflow, build)
    assert_same_fetches(ours, run_in_fresh_graph(tf1, build))
    if blank_index is None:
        for got, want in zip(ours, greedy_reference(logits, lengths, merge)):
            np.testing.assert_array_equal(got, want)


@pytest.mark.tf
def test_greedy_decoder_fetches_a_sparse_tensor_value_like_tf1() -> None:
    tf1 = tf1_module()
    logits = RNG.standard_normal((8, 3, 6))
    values = []
    for tf in (dataflow, tf1):
        with tf.Graph().as_default():
            decoded, neg_sum = tf.nn.ctc_greedy_decoder(tf.constant(logits), [8, 4, 7])
            assert len(decoded) == 1 and decoded[0].dense_shape.shape.as_list() == [2]
            assert neg_sum.shape.as_list() == [3, 1]
            with tf.Session() as sess:
                values.append(sess.run([decoded[0], neg_sum]))
    (ours, ours_neg), (theirs, theirs_neg) = values
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(ours_neg, theirs_neg, rtol=1e-12)


# --- beam search ------------------------------------------------------------------------------
BEAM_CASES = [
    # (max_time, batch, classes, beam_width, top_paths, merge_repeated, logit scale)
    (1, 1, 3, 3, 3, True, 1.0),
    (6, 3, 4, 1, 1, True, 2.0),
    (8, 2, 5, 4, 2, False, 2.0),
    (10, 3, 3, 10, 4, True, 0.5),
    (12, 2, 6, 7, 7, False, 5.0),
    (30, 4, 12, 100, 5, True, 1.0),
]


@pytest.mark.tf
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", BEAM_CASES, ids=lambda c: "-".join(map(str, c)))
def test_beam_search_decoder_matches_tf1(case, dtype) -> None:
    """Same paths in the same order and the same log-probabilities (TF sums in float32;
    we in float64), over narrow beams that prune hard and wide ones, lengths from 0."""
    tf1 = tf1_module()
    max_time, batch, classes, width, paths, merge, scale = case
    rng = np.random.default_rng(max_time * 100 + classes)
    logits = (rng.standard_normal((max_time, batch, classes)) * scale).astype(dtype)
    lengths = [max_time] + rng.integers(0, max_time + 1, batch - 1).tolist()

    def build(tf):
        options = {"beam_width": width, "top_paths": paths, "merge_repeated": merge}
        return beam_outputs(tf, tf.constant(logits), lengths, **options), None

    assert_same_fetches(
        run_in_fresh_graph(dataflow, build), run_in_fresh_graph(tf1, build), rtol=1e-5
    )


def test_an_unpruned_beam_finds_the_exact_best_labelings(sess) -> None:
    logits = RNG.standard_normal((5, 2, 3)) * 3
    got = sess.run(
        beam_outputs(dataflow, logits, [5, 4], beam_width=100, top_paths=4, merge_repeated=False)
    )
    for a, b in zip(got, exact_best_labelings(logits, [5, 4], 4)):
        np.testing.assert_allclose(a, b, rtol=1e-12)


@pytest.mark.tf
def test_beam_search_decoder_on_ties_matches_tf1() -> None:
    """Zero logits: every one-label path is equally likely; TF lists them in label
    order, and so do we."""
    tf1 = tf1_module()

    def build(tf):
        return beam_outputs(tf, tf.zeros([3, 2, 4]), [3, 3], top_paths=3), None

    assert_same_fetches(run_in_fresh_graph(dataflow, build), run_in_fresh_graph(tf1, build))


@pytest.mark.tf
@pytest.mark.parametrize(
    "options, lengths, error",
    [
        ({"beam_width": 2, "top_paths": 3}, [3, 3], "InvalidArgumentError"),
        ({"beam_width": 5, "top_paths": 2}, [0, 3], "InvalidArgumentError"),
        ({}, [4, 3], "FailedPreconditionError"),
    ],
)
def test_beam_search_decoder_run_time_errors_match_tf1(options, lengths, error) -> None:
    for tf in (dataflow, tf1_module()):
        with tf.Graph().as_default():
            _, log_probs = tf.nn.ctc_beam_search_decoder(tf.zeros([3, 2, 4]), lengths, **options)
            with tf.Session() as sess, pytest.raises(getattr(tf.errors, error)):
                sess.run(log_probs)


@pytest.mark.tf
@pytest.mark.parametrize("options", [{"beam_width": 0}, {"top_paths": 0}])
def test_beam_search_decoder_build_errors_match_tf1(options) -> None:
    for tf in (dataflow, tf1_module()):
        with tf.Graph().as_default(), pytest.raises(ValueError):
            tf.nn.ctc_beam_search_decoder(tf.zeros([3, 2, 4]), [3, 3], **options)


@pytest.mark.tf
def test_op_names_match_tf1() -> None:
    """The ops are named as TF1 names them (no scope of their own)."""
    names = []
    for tf in (dataflow, tf1_module()):
        with tf.Graph().as_default():
            x = tf.zeros([3, 1, 4])
            loss = tf.nn.ctc_loss(sparse_labels(tf, [[0]]), x, [3])
            (greedy,), _ = tf.nn.ctc_greedy_decoder(x, [3])
            (beam,), _ = tf.nn.ctc_beam_search_decoder(x, [3])
            names.append([t.op.name for t in (loss, greedy.values, beam.values)])
    assert names[0] == names[1] == ["CTCLoss", "CTCGreedyDecoder", "CTCBeamSearchDecoder"]


# --- bad input --------------------------------------------------------------------------------
def _labels(tf, indices, values, shape):
    return tf.SparseTensor(
        np.array(indices, np.int64).reshape(-1, 2), np.array(values, np.int32), shape
    )


BUILD_ERRORS = {
    "labels_not_sparse": (
        TypeError,
        lambda tf: tf.nn.ctc_loss(tf.constant([[1]]), tf.zeros([3, 1, 4]), [3]),
    ),
    "int64_label_values": (
        TypeError,
        lambda tf: tf.nn.ctc_loss(
            tf.SparseTensor([[0, 0]], tf.constant([1], tf.int64), [1, 1]), tf.zeros([3, 1, 4]), [3]
        ),
    ),
    "integer_logits": (
        TypeError,
        lambda tf: tf.nn.ctc_loss(
            _labels(tf, [[0, 0]], [1], [1, 1]), tf.zeros([3, 1, 4], tf.int32), [3]
        ),
    ),
    "rank_2_logits": (
        ValueError,
        lambda tf: tf.nn.ctc_loss(_labels(tf, [[0, 0]], [1], [1, 1]), tf.zeros([3, 4]), [3]),
    ),
    "batch_mismatch": (
        ValueError,
        lambda tf: tf.nn.ctc_loss(_labels(tf, [[0, 0]], [1], [1, 1]), tf.zeros([3, 2, 4]), [3]),
    ),
    "rank_2_lengths": (
        ValueError,
        lambda tf: tf.nn.ctc_loss(_labels(tf, [[0, 0]], [1], [1, 1]), tf.zeros([3, 1, 4]), [[3]]),
    ),
    "greedy_rank_2": (ValueError, lambda tf: tf.nn.ctc_greedy_decoder(tf.zeros([3, 4]), [3])),
    "greedy_batch_mismatch": (
        ValueError,
        lambda tf: tf.nn.ctc_greedy_decoder(tf.zeros([3, 2, 4]), [3]),
    ),
}


@pytest.mark.tf
@pytest.mark.parametrize("case", sorted(BUILD_ERRORS))
def test_build_time_errors_match_tf1(case) -> None:
    error, build = BUILD_ERRORS[case]
    for tf in (dataflow, tf1_module()):
        with tf.Graph().as_default(), pytest.raises(error):
            build(tf)


RUN_ERRORS = {
    # name: (labels (indices, values, shape), lengths, logits shape, options, error, match)
    "empty_labels": (([[0, 0]], [1], [2, 1]), [3, 3], (3, 2, 4), {}, "Labels length is zero"),
    "negative_label": (([[0, 0]], [-1], [1, 1]), [3], (3, 1, 4), {}, "nonnegative"),
    "label_after_blank": (([[0, 0], [0, 1]], [3, 1], [1, 2]), [3], (3, 1, 4), {}, "non-null"),
    "not_enough_time": (
        ([[0, i] for i in range(4)], [0, 1, 0, 1], [1, 4]),
        [3],
        (3, 1, 4),
        {},
        "Not enough time",
    ),
    "too_long_sequence": (([[0, 0]], [1], [1, 1]), [4], (3, 1, 4), {}, "sequence_length"),
    "negative_sequence": (([[0, 0]], [1], [1, 1]), [-1], (3, 1, 4), {}, "seq_len"),
    "zero_steps": (([[0, 0]], [1], [1, 1]), [0], (3, 1, 4), {}, "Not enough time"),
    "unsorted_indices": (([[0, 1], [0, 0]], [1, 2], [1, 2]), [3], (3, 1, 4), {}, "order"),
    "batch_out_of_range": (([[0, 0], [2, 0]], [1, 2], [3, 1]), [3], (3, 1, 4), {}, "bounds"),
    "no_time": (
        ([[0, 0]], [1], [1, 1]),
        [0],
        (0, 1, 4),
        {"ignore_longer_outputs_than_inputs": True},
        "Max time",
    ),
}


@pytest.mark.tf
@pytest.mark.parametrize("case", sorted(RUN_ERRORS))
def test_run_time_errors_match_tf1(case) -> None:
    (indices, values, shape), lengths, logits_shape, options, match = RUN_ERRORS[case]
    tf1 = tf1_module()
    for tf in (dataflow, tf1):
        with tf.Graph().as_default():
            loss = tf.nn.ctc_loss(
                _labels(tf, indices, values, shape), tf.zeros(logits_shape), lengths, **options
            )
            with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError) as info:
                sess.run(loss)
            if tf is dataflow:
                assert match in str(info.value) and "CTCLoss" in str(info.value)


@pytest.mark.tf
@pytest.mark.parametrize(
    "lengths, shape, options, error",
    [
        ([4], (3, 1, 4), {}, "FailedPreconditionError"),
        ([2], (3, 1, 4), {"blank_index": 4}, "InvalidArgumentError"),
        ([0], (0, 1, 4), {}, "InvalidArgumentError"),
    ],
)
def test_greedy_decoder_run_time_errors_match_tf1(lengths, shape, options, error) -> None:
    for tf in (dataflow, tf1_module()):
        with tf.Graph().as_default():
            (decoded,), _ = tf.nn.ctc_greedy_decoder(tf.zeros(shape), lengths, **options)
            with tf.Session() as sess, pytest.raises(getattr(tf.errors, error)):
                sess.run(decoded.values)


def test_errors_are_invalid_argument_errors_naming_the_op(sess) -> None:
    loss = dataflow.nn.ctc_loss(
        _labels(dataflow, [[0, 0]], [1], [1, 1]), dataflow.zeros([3, 1, 4]), [5]
    )
    with pytest.raises(errors.InvalidArgumentError, match="sequence_length\\(0\\) <= 3"):
        sess.run(loss)
