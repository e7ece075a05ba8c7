"""Candidate samplers and the sampled losses. The losses are compared with
``tensorflow.compat.v1`` on the same ``sampled_values`` (values and gradients); the
samplers, whose random stream is ours, against their distributions and TF's
expected-count formulas."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow

tf1 = pytest.importorskip("tensorflow.compat.v1")

RNG = np.random.default_rng(4)
W = RNG.normal(size=(12, 5)).astype(np.float32)
B = RNG.normal(size=12).astype(np.float32)
X = RNG.normal(size=(3, 5)).astype(np.float32)
SAMPLED = np.array([0, 4, 7, 1], np.int64)
TRUE_EXPECTED = RNG.uniform(0.1, 0.9, (3, 2)).astype(np.float32)
SAMPLED_EXPECTED = RNG.uniform(0.1, 0.9, 4).astype(np.float32)


def loss_and_grads(tf, loss_name, num_true, accidental, shards, strategy):
    with tf.Graph().as_default():
        labels = tf.constant(np.array([[4, 2], [9, 1], [3, 3]])[:, :num_true], tf.int64)
        if shards == 1:
            weights = tf.Variable(W)
            params = weights
            variables = [weights]
        else:  # rows of W split as the strategy says
            if strategy == "mod":
                parts = [W[i::shards] for i in range(shards)]
            else:
                parts = np.array_split(W, shards)
            variables = [tf.Variable(p) for p in parts]
            params = variables
        biases = tf.Variable(B)
        inputs = tf.Variable(X)
        sampled = (
            tf.constant(SAMPLED),
            tf.constant(TRUE_EXPECTED[:, :num_true]),
            tf.constant(SAMPLED_EXPECTED),
        )
        loss_fn = getattr(tf.nn, loss_name)
        loss = loss_fn(
            params,
            biases,
            labels,
            inputs,
            num_sampled=4,
            num_classes=12,
            num_true=num_true,
            sampled_values=sampled,
            remove_accidental_hits=accidental,
            partition_strategy=strategy,
        )
        grads = tf.gradients(tf.reduce_sum(loss * [1.0, 2.0, 3.0]), [*variables, biases, inputs])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            value, grad_values = sess.run([loss, grads])
    dense = [tf1_dense(g) for g in grad_values]
    return value, dense


def tf1_dense(g):
    """TF1 returns IndexedSlicesValue for gathers: densify."""
    if hasattr(g, "indices"):
        out = np.zeros(g.dense_shape, g.values.dtype)
        np.add.at(out, g.indices, g.values)
        return out
    return np.asarray(g)


@pytest.mark.tf
@pytest.mark.parametrize("loss_name", ["nce_loss", "sampled_softmax_loss"])
@pytest.mark.parametrize(
    "num_true, accidental, shards, strategy",
    [(1, False, 1, "mod"), (2, True, 1, "mod"), (1, True, 3, "mod"), (2, False, 3, "div")],
)
def test_sampled_losses_match_tf(loss_name, num_true, accidental, shards, strategy):
    ours = loss_and_grads(dataflow, loss_name, num_true, accidental, shards, strategy)
    theirs = loss_and_grads(tf1, loss_name, num_true, accidental, shards, strategy)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5, atol=1e-5)
    for a, b in zip(ours[1], theirs[1], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def _draw(sampler, unique, num_sampled=6, range_max=20, repeats=1500, **kwargs):
    tf = dataflow
    with tf.Graph().as_default():
        labels = tf.constant([[0], [5]], tf.int64)
        out = sampler(labels, 1, num_sampled, unique, range_max, seed=7, **kwargs)
        with tf.Session() as sess:
            return [sess.run(out) for _ in range(repeats)]


def _log_uniform(n):
    c = np.arange(n)
    return (np.log(c + 2) - np.log(c + 1)) / np.log(n + 1)


@pytest.mark.parametrize(
    "sampler, probabilities, kwargs",
    [
        (dataflow.nn.log_uniform_candidate_sampler, _log_uniform(20), {}),
        (dataflow.nn.uniform_candidate_sampler, np.full(20, 0.05), {}),
        (
            dataflow.nn.fixed_unigram_candidate_sampler,
            np.arange(1, 21) ** 0.5 / (np.arange(1, 21) ** 0.5).sum(),
            {"unigrams": list(range(1, 21)), "distortion": 0.5},
        ),
    ],
    ids=["log_uniform", "uniform", "fixed_unigram"],
)
def test_samplers_draw_their_distribution_with_tf_expected_counts(sampler, probabilities, kwargs):
    draws = _draw(sampler, unique=False, **kwargs)
    counts = np.bincount(np.concatenate([d.sampled_candidates for d in draws]), minlength=20)
    frequencies = counts / counts.sum()
    np.testing.assert_allclose(frequencies, probabilities, atol=0.012)
    first = draws[0]
    np.testing.assert_allclose(
        first.sampled_expected_count, 6 * probabilities[first.sampled_candidates], rtol=1e-6
    )
    np.testing.assert_allclose(
        first.true_expected_count[:, 0], 6 * probabilities[[0, 5]], rtol=1e-6
    )
    unique = _draw(sampler, unique=True, repeats=50, **kwargs)
    for d in unique:
        assert len(set(d.sampled_candidates.tolist())) == 6
        # -expm1(tries * log1p(-p)) for one number of tries shared by every class.
        p = probabilities[d.sampled_candidates]
        tries = np.log1p(-d.sampled_expected_count.astype(np.float64)) / np.log1p(-p)
        assert np.all(tries >= 6 - 1e-3) and np.ptp(tries) < 1e-2 * tries.max()


def test_samplers_repeat_with_a_seed_and_check_their_arguments():
    first = _draw(dataflow.nn.log_uniform_candidate_sampler, True, repeats=3)
    again = _draw(dataflow.nn.log_uniform_candidate_sampler, True, repeats=3)
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a.sampled_candidates, b.sampled_candidates)
    with dataflow.Graph().as_default():
        labels = dataflow.constant([[1]], dataflow.int64)
        with pytest.raises(ValueError, match="range is too small"):
            dataflow.nn.uniform_candidate_sampler(labels, 1, 5, True, 3)
        with pytest.raises(ValueError, match="Exactly one of vocab_file and unigrams"):
            dataflow.nn.fixed_unigram_candidate_sampler(labels, 1, 2, False, 3)
