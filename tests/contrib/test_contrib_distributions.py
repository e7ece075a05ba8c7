"""``tf.contrib.distributions.Normal`` against TF 1.15's ``tf.distributions.Normal``
(still in ``tensorflow.compat.v1``): every quantity over broadcast batches, gradients,
and the sample's shape, moments and seed rules (the random stream is dataflow's)."""

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

LOC = np.array([[0.0], [1.5], [-2.0]], np.float32)  # [3, 1]
SCALE = np.array([0.5, 1.0, 2.0, 3.0], np.float32)  # [4]: batch shape [3, 4]
# from the far lower tail (z = -24: the series) to the upper (z = 11: -ndtr(-z))
X = np.linspace(-12.0, 12.0, 12, dtype=np.float32).reshape(3, 4)


def quantities(tf, dist_cls):
    loc, scale = tf.Variable(LOC), tf.Variable(SCALE)
    d = dist_cls(loc, scale)
    out = {
        "log_prob": d.log_prob(X),
        "prob": d.prob(X),
        "cdf": d.cdf(X),
        "log_cdf": d.log_cdf(X),
        "survival_function": d.survival_function(X),
        "log_survival_function": d.log_survival_function(X),
        "mean": d.mean(),
        "mode": d.mode(),
        "stddev": d.stddev(),
        "variance": d.variance(),
        "entropy": d.entropy(),
        "batch_shape_tensor": d.batch_shape_tensor(),
    }
    loss = tf.reduce_sum(out["log_prob"]) + tf.reduce_sum(out["entropy"] * out["cdf"])
    out["grads"] = tf.gradients(loss, [loc, scale])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        values = sess.run(out)
    return values, d.batch_shape.as_list(), d.event_shape.as_list()


def test_normal_matches_tf_distributions_normal():
    with dataflow.Graph().as_default():
        ours = quantities(dataflow, dataflow.contrib.distributions.Normal)
    with tf1.Graph().as_default():
        theirs = quantities(tf1, tf1.distributions.Normal)
    assert ours[1:] == theirs[1:] == ([3, 4], [])
    for key, want in theirs[0].items():
        got = ours[0][key]
        if key == "grads":
            for g, w in zip(got, want, strict=True):
                np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
        else:
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=key)


def test_sample_shape_moments_seeds_and_reparameterization():
    tf = dataflow
    with tf.Graph().as_default():
        tf.set_random_seed(7)
        loc, scale = tf.constant(LOC), tf.constant(SCALE)
        d = tf.contrib.distributions.Normal(loc=loc, scale=scale)
        s = d.sample([20000], seed=3)
        again = d.sample([20000], seed=3)
        other = d.sample(2, seed=4)
        assert s.shape.as_list() == [20000, 3, 4]
        (dloc,) = tf.gradients(tf.reduce_sum(s), [loc])
        assert s.op.name.startswith("Normal/sample/")
        with tf.Session() as sess:
            a, b, o, g = sess.run([s, again, other, dloc])
        with tf.Session() as sess:
            a2 = sess.run(s)
    np.testing.assert_allclose(a.mean(0), np.broadcast_to(LOC, (3, 4)), atol=0.06)
    np.testing.assert_allclose(a.std(0), np.broadcast_to(SCALE, (3, 4)), rtol=0.03)
    np.testing.assert_array_equal(a, a2)  # graph seed and op seed: the same in a new session
    np.testing.assert_array_equal(a, b)  # two ops with the same seeds draw the same
    assert o.shape == (2, 3, 4) and not np.allclose(o, a[:2])
    np.testing.assert_allclose(g, np.full((3, 1), 20000 * 4.0))  # draws * scale + loc
    with tf1.Graph().as_default():
        ref = tf1.distributions.Normal(LOC, SCALE).sample([5, 2], seed=3)
        assert ref.shape.as_list() == [5, 2, 3, 4]


def test_validate_args_refuses_a_nonpositive_scale():
    tf = dataflow
    with tf.Graph().as_default():
        with pytest.raises(tf.errors.InvalidArgumentError):  # a constant: at build time
            tf.contrib.distributions.Normal(0.0, -1.0, validate_args=True)
        scale = tf.placeholder(tf.float32, [])
        d = tf.contrib.distributions.Normal(0.0, scale, validate_args=True)
        with tf.Session() as sess:
            assert sess.run(d.stddev(), {scale: 2.0}) == 2.0
            with pytest.raises(tf.errors.InvalidArgumentError):
                sess.run(d.stddev(), {scale: -1.0})
