"""``minimize``, ``compute_gradients`` and ``apply_gradients`` on small losses."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow as tf

# name -> (optimizer, tolerance on the parameters after 400 steps). RMSProp's steps do
# not shrink with the gradient (it divides by the gradient's scale), so with a constant
# learning rate it ends in a small cycle around the minimum; it gets a decaying rate.
OPTIMIZERS = {
    "gd": (lambda step: tf.train.GradientDescentOptimizer(0.1), 1e-6),
    "momentum": (lambda step: tf.train.MomentumOptimizer(0.05, 0.9), 1e-6),
    "nesterov": (lambda step: tf.train.MomentumOptimizer(0.05, 0.9, use_nesterov=True), 1e-6),
    "adagrad": (lambda step: tf.train.AdagradOptimizer(0.5), 1e-6),
    "rmsprop": (
        lambda step: tf.train.RMSPropOptimizer(
            tf.train.exponential_decay(0.05, step, 50, 0.5), momentum=0.5
        ),
        1e-4,
    ),
    "rmsprop_centered": (
        lambda step: tf.train.RMSPropOptimizer(
            tf.train.exponential_decay(0.05, step, 50, 0.5), centered=True
        ),
        1e-4,
    ),
    "adam": (lambda step: tf.train.AdamOptimizer(0.1), 1e-3),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_minimize_converges_on_a_quadratic(name, sess):
    # f(w, b) = ||A w - c||^2 / 2 + (b - 3)^2, minimum at w = A^-1 c, b = 3.
    a = np.array([[2.0, 0.5], [0.5, 1.0]])
    c = np.array([[1.0], [-2.0]])
    w = tf.Variable(np.zeros((2, 1)), name="w")
    b = tf.Variable(0.0, dtype=tf.float64, name="b")
    loss = 0.5 * tf.reduce_sum(tf.square(tf.matmul(tf.constant(a), w) - c)) + tf.square(b - 3.0)
    step = tf.train.get_or_create_global_step()
    make, tolerance = OPTIMIZERS[name]
    train = make(step).minimize(loss, global_step=step)
    sess.run(tf.global_variables_initializer())
    first = sess.run(loss)
    for _ in range(400):
        sess.run(train)
    assert sess.run(loss) < 1e-4 * first
    np.testing.assert_allclose(sess.run(w), np.linalg.solve(a, c), atol=tolerance)
    assert sess.run(b) == pytest.approx(3.0, abs=tolerance)
    assert sess.run(step) == 400


def test_compute_gradients_then_clip_then_apply(sess):
    w = tf.Variable(np.array([1.0, -4.0, 0.5]), name="w")
    unused = tf.Variable(np.ones(2), name="unused")
    loss = tf.reduce_sum(tf.square(w))  # gradient 2 w = [2, -8, 1]
    opt = tf.train.GradientDescentOptimizer(0.5)
    grads_and_vars = opt.compute_gradients(loss)
    assert [v for _, v in grads_and_vars] == [w, unused]
    assert grads_and_vars[1][0] is None
    clipped = [(tf.clip_by_value(g, -1.0, 1.0), v) for g, v in grads_and_vars if g is not None]
    train = opt.apply_gradients(clipped)
    sess.run(tf.global_variables_initializer())
    np.testing.assert_allclose(sess.run(grads_and_vars[0][0]), [2.0, -8.0, 1.0])
    sess.run(train)
    np.testing.assert_allclose(sess.run(w), [0.5, -3.5, 0.0])


def test_none_gradients_are_skipped_when_applying(sess):
    w = tf.Variable(np.array([1.0]), name="w")
    unused = tf.Variable(np.array([7.0]), name="unused")
    opt = tf.train.AdamOptimizer(0.1)
    train = opt.minimize(tf.reduce_sum(w * w), var_list=[w, unused])
    assert opt.get_slot(unused, "m") is None and opt.get_slot(w, "m") is not None
    sess.run(tf.global_variables_initializer())
    sess.run(train)
    assert sess.run(unused) == [7.0]
    assert sess.run(w)[0] == pytest.approx(0.9, rel=1e-6)


def test_var_list_trainable_default_and_nesting(sess):
    w = tf.Variable(2.0, dtype=tf.float64, name="w")
    frozen = tf.Variable(3.0, dtype=tf.float64, name="frozen", trainable=False)
    loss = w * frozen
    opt = tf.train.GradientDescentOptimizer(1.0)
    assert [v for _, v in opt.compute_gradients(loss)] == [w]
    assert [v for _, v in opt.compute_gradients(loss, var_list=[[w], (frozen,)])] == [w, frozen]
    sess.run(tf.global_variables_initializer())
    sess.run(opt.minimize(loss, var_list=[frozen]))
    assert sess.run([w, frozen]) == [2.0, 1.0]


@pytest.mark.parametrize(
    "gate",
    [tf.train.Optimizer.GATE_NONE, tf.train.Optimizer.GATE_OP, tf.train.Optimizer.GATE_GRAPH],
)
def test_gate_gradients_modes_give_the_same_update(gate, sess):
    w = tf.Variable(np.array([1.0, 2.0]), name="w")
    train = tf.train.GradientDescentOptimizer(0.25).minimize(
        tf.reduce_sum(tf.square(w)), gate_gradients=gate, colocate_gradients_with_ops=True
    )
    sess.run(tf.global_variables_initializer())
    sess.run(train)
    np.testing.assert_allclose(sess.run(w), [0.5, 1.0])


def test_grad_loss_and_callable_loss(sess):
    w = tf.Variable(np.array([1.0, 2.0]), name="w")
    opt = tf.train.GradientDescentOptimizer(1.0)
    scaled = opt.minimize(lambda: w * 3.0, grad_loss=tf.constant(np.array([0.5, -1.0])))
    sess.run(tf.global_variables_initializer())
    sess.run(scaled)
    np.testing.assert_allclose(sess.run(w), [1.0 - 1.5, 2.0 + 3.0])


def test_float32_model_trains(sess):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 3)).astype(np.float32)
    y = x @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.25
    X = tf.placeholder(tf.float32, [None, 3])
    w = tf.Variable(np.zeros((3, 1), np.float32), name="w")
    b = tf.Variable(np.zeros(1, np.float32), name="b")
    loss = tf.reduce_mean(tf.square(tf.matmul(X, w) + b - y))
    train = tf.train.AdamOptimizer(0.05).minimize(loss)
    sess.run(tf.global_variables_initializer())
    for _ in range(300):
        sess.run(train, {X: x})
    assert sess.run(w).dtype == np.float32
    np.testing.assert_allclose(sess.run(w).ravel(), [1.0, -2.0, 0.5], atol=1e-2)
    np.testing.assert_allclose(sess.run(b), [0.25], atol=1e-2)


# --- errors ---------------------------------------------------------------------------------
def test_no_gradients_for_any_variable():
    w = tf.Variable(np.ones(2), name="w")
    opt = tf.train.GradientDescentOptimizer(0.1)
    with pytest.raises(ValueError, match="No gradients provided for any variable"):
        opt.minimize(tf.constant(1.0), var_list=[w])
    with pytest.raises(ValueError, match="No gradients provided for any variable"):
        opt.minimize(tf.reduce_sum(tf.stop_gradient(w * 2.0)))


def test_compute_gradients_errors():
    w = tf.Variable(np.ones(2), name="w")
    opt = tf.train.GradientDescentOptimizer(0.1)
    with pytest.raises(ValueError, match="Invalid type tf.int32"):
        opt.minimize(tf.constant(1), var_list=[w])
    with pytest.raises(ValueError, match="No variables to optimize"):
        opt.compute_gradients(tf.reduce_sum(w), var_list=[])
    with pytest.raises(ValueError, match="gate_gradients must be one of"):
        opt.compute_gradients(tf.reduce_sum(w), gate_gradients=7)
    with pytest.raises(NotImplementedError, match="unsupported type"):
        opt.compute_gradients(tf.reduce_sum(w), var_list=[w.value()])
    with pytest.raises(ValueError, match="Invalid type tf.int32"):
        opt.compute_gradients(tf.reduce_sum(w), grad_loss=tf.constant(1))
    tf.reset_default_graph()
    with pytest.raises(ValueError, match="No variables to optimize"):
        tf.train.AdamOptimizer().minimize(tf.constant(1.0))


def test_integer_variables_are_refused():
    n = tf.Variable(3, name="n")
    with pytest.raises(TypeError, match="updates float variables, not int32"):
        tf.train.GradientDescentOptimizer(0.1).apply_gradients([(tf.constant(1), n)])
