"""``exponential_decay``, ``piecewise_constant``, ``polynomial_decay`` and the global step."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow as tf


def _values(lr_tensor, step, steps):
    with tf.Session(config=tf.ConfigProto(debug=True)) as sess:
        return [sess.run(lr_tensor, {step: s}) for s in steps]


@pytest.mark.parametrize("staircase", [False, True])
def test_exponential_decay_values(staircase):
    step = tf.placeholder(tf.int64, [], name="step")
    lr = tf.train.exponential_decay(0.1, step, 10, 0.5, staircase=staircase)
    assert lr.name == "ExponentialDecay:0" and lr.dtype == tf.float32
    steps = [0, 1, 5, 9, 10, 11, 25, 100]
    exponent = [s // 10 if staircase else s / 10 for s in steps]
    want = [np.float32(0.1) * np.float32(0.5) ** np.float32(e) for e in exponent]
    np.testing.assert_allclose(_values(lr, step, steps), want, rtol=1e-6)


def test_exponential_decay_float64_tensor_arguments(sess):
    step = tf.Variable(np.int64(7), name="s", trainable=False)
    lr = tf.train.exponential_decay(
        tf.constant(2.0, tf.float64),
        step,
        tf.constant(4),
        tf.constant(0.25, tf.float64),
        name="decayed",
    )
    assert lr.name == "decayed:0" and lr.dtype == tf.float64
    sess.run(tf.global_variables_initializer())
    assert sess.run(lr) == pytest.approx(2.0 * 0.25 ** (7 / 4), rel=1e-14)


def test_exponential_decay_needs_a_global_step():
    with pytest.raises(ValueError, match="global_step is required"):
        tf.train.exponential_decay(0.1, None, 10, 0.5)


def test_piecewise_constant():
    step = tf.placeholder(tf.int32, [], name="step")
    lr = tf.train.piecewise_constant(step, [10, 20], [1.0, 0.5, 0.1])
    assert lr.dtype == tf.float32 and lr.name.startswith("PiecewiseConstant")
    steps = [0, 10, 11, 20, 21, 1000]
    np.testing.assert_allclose(_values(lr, step, steps), [1.0, 1.0, 0.5, 0.5, 0.1, 0.1])
    with pytest.raises(ValueError, match="1 less than"):
        tf.train.piecewise_constant(step, [10], [1.0])


@pytest.mark.parametrize("cycle", [False, True])
def test_polynomial_decay(cycle):
    step = tf.placeholder(tf.int64, [], name="step")
    lr = tf.train.polynomial_decay(0.1, step, 10, end_learning_rate=0.01, power=2.0, cycle=cycle)
    assert lr.name == "PolynomialDecay:0"
    steps = [0, 3, 10, 15, 25]
    want = []
    for s in steps:
        if cycle:
            decay_steps = 10 * (1 if s == 0 else np.ceil(s / 10))
        else:
            decay_steps, s = 10, min(s, 10)
        want.append((0.1 - 0.01) * (1 - s / decay_steps) ** 2 + 0.01)
    np.testing.assert_allclose(_values(lr, step, steps), want, rtol=1e-6)


def test_decayed_learning_rate_drives_an_optimizer(sess):
    w = tf.Variable(np.array([0.0]), name="w")
    step = tf.train.get_or_create_global_step()
    lr = tf.train.exponential_decay(1.0, step, 1, 0.5, staircase=True)
    train = tf.train.GradientDescentOptimizer(lr).apply_gradients(
        [(tf.constant(np.array([-1.0])), w)], global_step=step
    )
    sess.run(tf.global_variables_initializer())
    for _ in range(4):
        sess.run(train)
    np.testing.assert_allclose(sess.run(w), [1 + 0.5 + 0.25 + 0.125])


# --- global step ------------------------------------------------------------------------
def test_get_or_create_global_step():
    assert tf.train.get_global_step() is None
    with tf.name_scope("somewhere"):
        step = tf.train.get_or_create_global_step()
    assert step.name == "global_step:0"
    assert step.dtype == tf.int64 and step.shape == tf.TensorShape([])
    assert not step.trainable
    assert tf.get_collection(tf.GraphKeys.GLOBAL_STEP) == [step]
    assert step in tf.global_variables() and step not in tf.trainable_variables()
    assert tf.train.get_or_create_global_step() is step
    assert tf.train.get_global_step() is step
    with pytest.raises(ValueError, match='"global_step" already exists'):
        tf.train.create_global_step()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(step) == 0


def test_global_step_per_graph():
    other = tf.Graph()
    step = tf.train.create_global_step(other)
    assert step.graph is other
    assert tf.train.get_global_step() is None
    assert tf.train.get_global_step(other) is step


def test_global_step_found_by_name_and_checked():
    step = tf.Variable(np.int64(0), name="global_step", trainable=False)
    assert tf.train.get_global_step() is step
    tf.reset_default_graph()
    tf.get_default_graph().add_to_collection(tf.GraphKeys.GLOBAL_STEP, tf.constant(1.0))
    with pytest.raises(TypeError, match="does not have integer type"):
        tf.train.get_global_step()
