"""``learned_unigram_candidate_sampler`` and ``all_candidate_sampler`` (``tf.nn`` and
``tf.random``) against ``tensorflow.compat.v1``: the expected counts, which depend only
on the classes seen so far, equal TF's step after step; the draws follow the learned
distribution (chi-square at a fixed seed)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import dataflow

pytestmark = pytest.mark.tf

tf1 = pytest.importorskip("tensorflow.compat.v1")

TRUE = [
    np.array([[1, 2], [1, 5], [3, 3]], np.int64),
    np.array([[0, 1], [1, 1], [4, 1]], np.int64),
    np.array([[4, 2], [2, 2], [2, 0]], np.int64),
]


def steps(tf, build):
    with tf.Graph().as_default():
        p = tf.placeholder(tf.int64, [3, 2])
        out = build(tf, p)
        with tf.Session() as sess:
            return [sess.run(out, {p: x}) for x in TRUE]


@pytest.mark.parametrize(
    "build",
    [
        lambda tf, p: tf.random.learned_unigram_candidate_sampler(p, 2, 4, False, 6, seed=1),
        lambda tf, p: tf.nn.learned_unigram_candidate_sampler(p, 2, 7, False, 8, seed=2),
        lambda tf, p: tf.nn.all_candidate_sampler(p, 2, 7, True),
        lambda tf, p: tf.random.all_candidate_sampler(p, 2, 6, False, name="all"),
    ],
)
def test_expected_counts_like_tf(build):
    ours, theirs = steps(dataflow, build), steps(tf1, build)
    for (s1, t1, e1), (s2, t2, e2) in zip(ours, theirs, strict=True):
        assert s1.dtype == s2.dtype and s1.shape == s2.shape
        np.testing.assert_allclose(t1, t2, rtol=1e-6)
        assert e1.shape == e2.shape
    with dataflow.Graph().as_default():
        op = build(dataflow, dataflow.placeholder(dataflow.int64, [3, 2]))
        assert [t.shape.as_list() for t in op] == [[s1.shape[0]], [3, 2], [s1.shape[0]]]


def test_sampled_expected_counts_follow_the_learned_counts():
    seen = np.ones(6)
    for step, (sampled, true_expected, expected) in enumerate(
        steps(dataflow, lambda tf, p: tf.nn.learned_unigram_candidate_sampler(p, 2, 4, False, 6))
    ):
        np.testing.assert_allclose(true_expected, 4 * seen[TRUE[step]] / seen.sum(), rtol=1e-6)
        np.testing.assert_allclose(expected, 4 * seen[sampled] / seen.sum(), rtol=1e-6)
        np.add.at(seen, TRUE[step].reshape(-1), 1)  # counted from the next step on


def test_true_classes_out_of_range_fail_like_tf():
    for tf in (dataflow, tf1):
        with tf.Graph().as_default():
            p = tf.placeholder(tf.int64, [1, 2])
            out = tf.nn.all_candidate_sampler(p, 2, 3, True)
            with tf.Session() as sess:
                with pytest.raises(tf.errors.InvalidArgumentError):
                    sess.run(out, {p: [[0, 3]]})


def test_draws_follow_the_learned_distribution():
    skewed = np.array([[0, 0]] * 50 + [[3, 1]] * 10, np.int64)
    with dataflow.Graph().as_default():
        p = dataflow.placeholder(dataflow.int64, [None, 2])
        sampled, _, _ = dataflow.nn.learned_unigram_candidate_sampler(p, 2, 2000, False, 5, seed=3)
        with dataflow.Session() as sess:
            sess.run(sampled, {p: skewed})  # drawn from the flat start, then learned
            draws = sess.run(sampled, {p: skewed[:1]})
    counts = np.ones(5)
    np.add.at(counts, skewed.reshape(-1), 1)
    observed = np.bincount(draws, minlength=5)
    assert stats.chisquare(observed, 2000 * counts / counts.sum()).pvalue > 1e-3
