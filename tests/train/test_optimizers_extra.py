"""Adadelta, FTRL and the proximal optimizers against ``tensorflow.compat.v1``: the same
training program gives the same variables and slots (by TF1's names) after a few steps,
and the constructors refuse what TF1 refuses."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow

pytestmark = pytest.mark.tf

tf1 = pytest.importorskip("tensorflow.compat.v1")

RNG = np.random.default_rng(5)
X = RNG.normal(size=(16, 3))
Y = X @ np.array([[1.0], [-2.0], [0.0]]) + 0.1 * RNG.normal(size=(16, 1))

OPTIMIZERS = {
    "adadelta": lambda tf: tf.train.AdadeltaOptimizer(1.0, rho=0.9, epsilon=1e-6),
    "adadelta_defaults": lambda tf: tf.train.AdadeltaOptimizer(),
    "proximal_gd": lambda tf: tf.train.ProximalGradientDescentOptimizer(0.05),
    "proximal_gd_l1_l2": lambda tf: tf.train.ProximalGradientDescentOptimizer(
        0.05, l1_regularization_strength=0.05, l2_regularization_strength=0.1
    ),
    "proximal_adagrad_l1_l2": lambda tf: tf.train.ProximalAdagradOptimizer(
        0.3,
        initial_accumulator_value=0.2,
        l1_regularization_strength=0.02,
        l2_regularization_strength=0.05,
    ),
    "ftrl": lambda tf: tf.train.FtrlOptimizer(0.3),
    "ftrl_l1_l2_power": lambda tf: tf.train.FtrlOptimizer(
        0.3,
        learning_rate_power=-0.7,
        l1_regularization_strength=0.05,
        l2_regularization_strength=0.02,
    ),
    "ftrl_shrinkage": lambda tf: tf.train.FtrlOptimizer(
        0.3, l2_shrinkage_regularization_strength=0.1, l1_regularization_strength=0.01
    ),
}


def train(tf, make, dtype, steps=5):
    with tf.Graph().as_default():
        w = tf.Variable(np.full((3, 1), 0.5, dtype), name="w")
        b = tf.Variable(np.zeros(1, dtype), name="b")
        prediction = tf.matmul(tf.constant(X.astype(dtype)), w) + b
        loss = tf.reduce_mean(tf.square(prediction - Y.astype(dtype)))
        opt = make(tf)
        step = opt.minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(steps):
                sess.run(step)
            return {v.name: sess.run(v) for v in tf.global_variables()}


# TF1's proximal optimizers do not cast their hyper-parameters to float64 variables (its
# own TypeError); they are compared in float32, and ours in float64 with float32 below.
CASES = [
    (name, dtype)
    for name in sorted(OPTIMIZERS)
    for dtype in (np.float64, np.float32)
    if not (name.startswith("proximal") and dtype == np.float64)
]


@pytest.mark.parametrize("name, dtype", CASES)
def test_steps_match_tf(name, dtype):
    ours = train(dataflow, OPTIMIZERS[name], dtype)
    theirs = train(tf1, OPTIMIZERS[name], dtype)
    assert sorted(ours) == sorted(theirs)
    tol = 1e-10 if dtype == np.float64 else 2e-5
    for key in theirs:
        assert ours[key].dtype == theirs[key].dtype, key
        np.testing.assert_allclose(ours[key], theirs[key], rtol=tol, atol=tol, err_msg=key)


@pytest.mark.parametrize("name", [n for n in sorted(OPTIMIZERS) if n.startswith("proximal")])
def test_proximal_float64_agrees_with_float32(name):
    wide = train(dataflow, OPTIMIZERS[name], np.float64)
    narrow = train(dataflow, OPTIMIZERS[name], np.float32)
    for key in wide:
        assert wide[key].dtype == np.float64
        np.testing.assert_allclose(wide[key], narrow[key], rtol=1e-5, atol=1e-6, err_msg=key)


@pytest.mark.parametrize(
    "make",
    [
        lambda tf: tf.train.FtrlOptimizer(0.1, learning_rate_power=0.5),
        lambda tf: tf.train.FtrlOptimizer(0.1, initial_accumulator_value=-1.0),
        lambda tf: tf.train.FtrlOptimizer(0.1, l1_regularization_strength=-1.0),
        lambda tf: tf.train.ProximalAdagradOptimizer(0.1, initial_accumulator_value=0.0),
    ],
    ids=["ftrl_power", "ftrl_accumulator", "ftrl_l1", "proximal_adagrad_accumulator"],
)
def test_constructor_errors_match_tf(make):
    classes = []
    for tf in (dataflow, tf1):
        with pytest.raises(Exception) as info:
            make(tf)
        classes.append(type(info.value).__name__)
    assert classes[0] == classes[1] == "ValueError"
