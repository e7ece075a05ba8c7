"""Gamma, Poisson and the stateless draws against ``tensorflow.compat.v1`` (static
shapes, dtypes, build-time errors, the gamma sampler's gradient) and against their
distributions (Kolmogorov-Smirnov and moment tests at fixed seeds, so each outcome is
fixed: a p-value threshold of 1e-3 is a check of the distribution, not a flaky test)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import dataflow

pytestmark = pytest.mark.tf

tf1 = pytest.importorskip("tensorflow.compat.v1")

BOTH = [dataflow, tf1]


def run(tf, build, feed=None):
    with tf.Graph().as_default():
        tf.set_random_seed(5)
        out = build(tf)
        with tf.Session() as sess:
            return sess.run(out, feed)


SHAPES = {
    "gamma": lambda tf: tf.random.gamma([3, 4], [1.0, 2.0]),
    "gamma_beta": lambda tf: tf.random.gamma(
        [5], [[1.0], [2.0]], beta=[1.0, 3.0, 2.0], dtype=tf.float64
    ),
    "random_gamma": lambda tf: tf.random_gamma([2], 3.0),
    "poisson": lambda tf: tf.random.poisson([1.0, 4.0], [3, 2]),
    "poisson_int": lambda tf: tf.random_poisson(2.0, [7], dtype=tf.int64),
    "stateless_uniform": lambda tf: tf.random.stateless_uniform([2, 3], seed=[1, 2]),
    "stateless_uniform_int": lambda tf: tf.random.stateless_uniform(
        [4], seed=[1, 2], minval=3, maxval=9, dtype=tf.int64
    ),
    "stateless_normal": lambda tf: tf.random.stateless_normal([3], seed=[1, 2], dtype=tf.float64),
    "stateless_truncated_normal": lambda tf: tf.random.stateless_truncated_normal(
        [2, 2], seed=[3, 4]
    ),
    "stateless_categorical": lambda tf: tf.random.stateless_categorical(
        [[0.0, 1.0, 2.0]], 5, seed=[1, 2], dtype=tf.int32
    ),
    "stateless_multinomial": lambda tf: tf.random.stateless_multinomial(
        [[0.0, 1.0]], 4, seed=[1, 2]
    ),
    "stateless_gamma": lambda tf: tf.random.stateless_gamma([3, 2], seed=[1, 2], alpha=[1.0, 2.0]),
    "stateless_poisson": lambda tf: tf.random.stateless_poisson(
        [3, 2], seed=[1, 2], lam=[1.0, 2.0]
    ),
    "stateless_parameterized_truncated_normal": lambda tf: (
        tf.random.stateless_parameterized_truncated_normal(
            [3, 2], seed=[1, 2], means=[0.0, 1.0], stddevs=2.0, minvals=-1.0, maxvals=[1.0, 4.0]
        )
    ),
    "stateless_binomial": lambda tf: tf.random.stateless_binomial(
        [4], seed=[1, 2], counts=[5.0, 6.0, 7.0, 8.0], probs=0.5
    ),
}


@pytest.mark.parametrize("case", sorted(SHAPES))
def test_static_shapes_dtypes_and_values_shape_like_tf(case):
    shapes = []
    for tf in BOTH:
        with tf.Graph().as_default():
            t = SHAPES[case](tf)
            with tf.Session() as sess:
                value = sess.run(t)
            shapes.append((t.shape.as_list(), t.dtype.name, value.shape, value.dtype))
    assert shapes[0] == shapes[1]


@pytest.mark.parametrize(
    "build",
    [
        lambda tf: tf.random.stateless_uniform([2], seed=[1, 2, 3]),
        lambda tf: tf.random.stateless_uniform([2], seed=[1, 2], dtype=tf.int32),
        lambda tf: tf.random.stateless_normal([2], seed=[1, 2], dtype=tf.int32),
    ],
)
def test_bad_arguments_fail_at_build_time_like_tf(build):
    raised = []
    for tf in BOTH:
        with tf.Graph().as_default(), pytest.raises((ValueError, TypeError)) as info:
            build(tf)
        raised.append(info.type)
    assert issubclass(raised[0], raised[1]) or issubclass(raised[1], raised[0])


def test_gamma_samples_follow_the_gamma_distribution():
    alpha, beta = np.float32([0.3, 1.0, 4.5]), np.float32([1.0, 2.0, 0.5])
    x = run(dataflow, lambda tf: tf.random.gamma([4000], alpha, beta=beta, seed=1))
    assert x.shape == (4000, 3) and x.dtype == np.float32
    for j in range(3):
        p = stats.kstest(x[:, j], stats.gamma(alpha[j], scale=1 / beta[j]).cdf).pvalue
        assert p > 1e-3


def test_gamma_gradient_is_tfs_reparameterization():
    """d sample / d alpha equals TF's RandomGammaGrad at our samples, and d/d beta is
    -sample / beta (sample = Gamma(alpha, 1) / beta)."""
    alpha, beta = np.float32([0.4, 1.0, 3.0, 20.0]), np.float32(2.0)
    with dataflow.Graph().as_default():
        a = dataflow.constant(alpha)
        b = dataflow.constant(beta)
        x = dataflow.random.gamma([50], a, beta=b, seed=3)
        upstream = np.random.default_rng(0).random((50, 4)).astype(np.float32)
        da, db = dataflow.gradients(x, [a, b], grad_ys=upstream)
        with dataflow.Session() as sess:
            xs, da_v, db_v = sess.run([x, da, db])
    with tf1.Graph().as_default(), tf1.Session() as sess:
        tf_partial = sess.run(
            tf1.raw_ops.RandomGammaGrad(alpha=np.broadcast_to(alpha, xs.shape), sample=xs * beta)
        )
    np.testing.assert_allclose(da_v, (upstream * tf_partial / beta).sum(0), rtol=2e-3)
    np.testing.assert_allclose(db_v, (upstream * -xs / beta).sum(), rtol=1e-4)


def test_stateless_gamma_gradient_matches_tf_partial():
    alpha = np.float32([0.7, 2.5])
    with dataflow.Graph().as_default():
        a = dataflow.constant(alpha)
        x = dataflow.random.stateless_gamma([30, 2], seed=[4, 4], alpha=a)
        (da,) = dataflow.gradients(x, [a])
        with dataflow.Session() as sess:
            xs, da_v = sess.run([x, da])
    with tf1.Graph().as_default(), tf1.Session() as sess:
        tf_partial = sess.run(
            tf1.raw_ops.RandomGammaGrad(alpha=np.broadcast_to(alpha, xs.shape), sample=xs)
        )
    np.testing.assert_allclose(da_v, tf_partial.sum(0), rtol=2e-3)


def test_poisson_samples_follow_the_poisson_distribution():
    lam = np.float32([0.5, 3.0, 40.0])
    x = run(dataflow, lambda tf: tf.random.poisson(lam, [20000], seed=2))
    assert x.dtype == np.float32 and np.all(x == np.round(x))
    n = x.shape[0]
    for j in range(3):
        assert abs(x[:, j].mean() - lam[j]) < 5 * np.sqrt(lam[j] / n)
        assert abs(x[:, j].var() / lam[j] - 1) < 0.05


def test_poisson_and_stateless_draws_are_not_differentiable():
    with dataflow.Graph().as_default():
        lam = dataflow.constant([1.0, 2.0])
        assert dataflow.gradients(dataflow.random.poisson(lam, [3]), lam) == [None]
        mean = dataflow.constant(1.0)
        z = dataflow.random.stateless_normal([3], seed=[1, 1], mean=mean)
        (g,) = dataflow.gradients(z, mean)  # through the shift, not the draw
        with dataflow.Session() as sess:
            assert sess.run(g) == 3.0


def stateless_runs(build):
    """Two runs in one session and one in another: a stateless op's values repeat."""
    with dataflow.Graph().as_default():
        t = build(dataflow)
        with dataflow.Session() as sess:
            first, second = sess.run(t), sess.run(t)
        with dataflow.Session() as sess:
            third = sess.run(t)
    return first, second, third


STATELESS = {
    "uniform": (
        lambda tf, s: tf.random.stateless_uniform([20000], seed=s, minval=-1.0, maxval=3.0),
        stats.uniform(-1, 4).cdf,
    ),
    "normal": (
        lambda tf, s: tf.random.stateless_normal([20000], seed=s, mean=1.0, stddev=2.0),
        stats.norm(1, 2).cdf,
    ),
    "truncated_normal": (
        lambda tf, s: tf.random.stateless_truncated_normal([20000], seed=s, stddev=3.0),
        stats.truncnorm(-2, 2, scale=3).cdf,
    ),
    "gamma": (
        lambda tf, s: tf.random.stateless_gamma([20000], seed=s, alpha=2.5, beta=0.5),
        stats.gamma(2.5, scale=2).cdf,
    ),
    "parameterized_truncated_normal": (
        lambda tf, s: tf.random.stateless_parameterized_truncated_normal(
            [20000], seed=s, means=1.0, stddevs=2.0, minvals=0.5, maxvals=6.0
        ),
        stats.truncnorm(-0.25, 2.5, loc=1, scale=2).cdf,
    ),
    "parameterized_truncated_normal_far_tail": (
        lambda tf, s: tf.random.stateless_parameterized_truncated_normal(
            [20000], seed=s, minvals=3.0, maxvals=5.0
        ),
        stats.truncnorm(3, 5).cdf,
    ),
    "normal_float64": (
        lambda tf, s: tf.random.stateless_normal([20000], seed=s, dtype=tf.float64),
        stats.norm().cdf,
    ),
}


@pytest.mark.parametrize("case", sorted(STATELESS))
def test_stateless_draws_are_deterministic_and_distributed_right(case):
    build, cdf = STATELESS[case]
    first, second, third = stateless_runs(lambda tf: build(tf, [7, 11]))
    np.testing.assert_array_equal(first, second)
    np.testing.assert_array_equal(first, third)
    other, _, _ = stateless_runs(lambda tf: build(tf, [7, 12]))
    assert not np.array_equal(first, other)
    assert stats.kstest(first, cdf).pvalue > 1e-3
    assert stats.kstest(other, cdf).pvalue > 1e-3


def test_stateless_discrete_draws():
    ints, _, again = stateless_runs(
        lambda tf: tf.random.stateless_uniform(
            [30000], seed=[1, 9], minval=2, maxval=7, dtype=tf.int32
        )
    )
    np.testing.assert_array_equal(ints, again)
    counts = np.bincount(ints, minlength=7)[2:]
    assert ints.min() == 2 and ints.max() == 6
    assert stats.chisquare(counts).pvalue > 1e-3
    logits = np.log([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]])
    classes, _, again = stateless_runs(
        lambda tf: tf.random.stateless_categorical(logits, 20000, seed=[2, 3])
    )
    np.testing.assert_array_equal(classes, again)
    for row, probs in zip(classes, np.exp(logits)):
        assert stats.chisquare(np.bincount(row, minlength=3), probs * row.size).pvalue > 1e-3
    poisson, _, _ = stateless_runs(
        lambda tf: tf.random.stateless_poisson([20000], seed=[5, 5], lam=6.0)
    )
    assert abs(poisson.mean() - 6.0) < 5 * np.sqrt(6.0 / 20000)
    binomial, _, _ = stateless_runs(
        lambda tf: tf.random.stateless_binomial([20000], seed=[5, 6], counts=12.0, probs=0.25)
    )
    assert binomial.dtype == np.int32
    assert abs(binomial.mean() - 3.0) < 5 * np.sqrt(12 * 0.25 * 0.75 / 20000)
    assert abs(binomial.var() / (12 * 0.25 * 0.75) - 1) < 0.05


def test_candidate_samplers_are_tf_random_names_too():
    for name in ("uniform", "log_uniform", "fixed_unigram"):
        sampler = f"{name}_candidate_sampler"
        assert getattr(dataflow.random, sampler) is getattr(dataflow.nn, sampler)


def test_parameterized_truncated_normal_gradients_hold_the_draw_at_its_level():
    """A stateless draw is a deterministic function of its parameters, so central
    differences at the same seed measure the implicit reparameterization gradient."""
    params = {"means": 0.5, "stddevs": 1.5, "minvals": -1.0, "maxvals": 2.5}
    with dataflow.Graph().as_default():
        tensors = {k: dataflow.constant(v, dataflow.float64) for k, v in params.items()}
        x = dataflow.random.stateless_parameterized_truncated_normal([6], seed=[2, 9], **tensors)
        weights = np.linspace(0.5, 2.0, 6)
        y = dataflow.reduce_sum(x * weights)
        grads = dataflow.gradients(y, list(tensors.values()))
        with dataflow.Session() as sess:
            analytic = sess.run(grads)
            eps = 1e-6
            for (k, t), g in zip(tensors.items(), analytic):
                plus = sess.run(y, {t: params[k] + eps})
                minus = sess.run(y, {t: params[k] - eps})
                np.testing.assert_allclose(g, (plus - minus) / (2 * eps), rtol=1e-5)


def test_parameterized_truncated_normal_bad_bounds_fail_like_tf():
    for tf in BOTH:
        with tf.Graph().as_default():
            x = tf.random.stateless_parameterized_truncated_normal(
                [3], seed=[1, 1], minvals=2.0, maxvals=1.0
            )
            with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError):
                sess.run(x)
