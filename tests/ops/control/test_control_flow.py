"""Functional control flow: ``cond``, ``case``, ``while_loop`` and their gradients.

Values are checked against plain Python/numpy; gradients against ``autograd`` (of the
equivalent Python ``if`` / ``for`` loop) and central finite differences, to second order
(``check_op``).
"""

from __future__ import annotations

import collections

import autograd.numpy as anp
import cloudpickle
import numpy as np
import pytest

import dataflow as tf
from dataflow.testing.grad_check import check_op

pytestmark = pytest.mark.filterwarnings("ignore:Output seems independent of input")

Point = collections.namedtuple("Point", ["x", "y"])


def const_pred(value: bool) -> tf.Tensor:
    return tf.constant(value)


# --- cond: values and structure -------------------------------------------------------------
def test_cond_picks_a_branch(sess):
    x = tf.placeholder(tf.float32, [3])
    p = tf.placeholder(tf.bool, [])
    y = tf.cond(p, lambda: x * 2.0, lambda: x - 1.0)
    assert y.shape.as_list() == [3] and y.dtype == tf.float32
    xv = np.array([1.0, 2.0, 3.0], np.float32)
    np.testing.assert_allclose(sess.run(y, {x: xv, p: True}), xv * 2)
    np.testing.assert_allclose(sess.run(y, {x: xv, p: False}), xv - 1)


def test_cond_nested_structures(sess):
    x = tf.constant([1.0, 2.0])
    p = tf.placeholder(tf.bool, [])

    def true_fn():
        return {"b": (x, [x * 2.0]), "a": Point(x + 1.0, tf.constant(1))}

    def false_fn():  # same keys, other insertion order
        return {"a": Point(x - 1.0, tf.constant(2)), "b": (x * 0.0, [x])}

    out = tf.cond(p, true_fn, false_fn)
    assert isinstance(out["a"], Point) and isinstance(out["b"], tuple)
    assert isinstance(out["b"][1], list)
    got = sess.run(out, {p: True})
    np.testing.assert_allclose(got["a"].x, [2.0, 3.0])
    assert got["a"].y == 1
    np.testing.assert_allclose(got["b"][1][0], [2.0, 4.0])
    got = sess.run(out, {p: False})
    np.testing.assert_allclose(got["a"].x, [0.0, 1.0])
    assert got["a"].y == 2
    np.testing.assert_allclose(got["b"][0], [0.0, 0.0])


def test_cond_singletons_and_strict(sess):
    p = tf.constant(True)
    x = tf.constant(3.0)
    out = tf.cond(p, lambda: [x], lambda: [x + 1.0])
    assert isinstance(out, tf.Tensor)
    out = tf.cond(p, lambda: [x], lambda: [x + 1.0], strict=True)
    assert isinstance(out, list) and len(out) == 1
    assert sess.run(out) == [3.0]
    # Python values become constants inside the branch.
    assert sess.run(tf.cond(p, lambda: 1.0, lambda: 2.0)) == 1.0


def test_cond_static_shape_is_most_specific_common_shape():
    p = tf.placeholder(tf.bool, [])
    a = tf.placeholder(tf.float32, [2, 3])
    b = tf.placeholder(tf.float32, [2, None])
    c = tf.placeholder(tf.float32, [2])
    assert tf.cond(p, lambda: a, lambda: b).shape.as_list() == [2, None]
    assert tf.cond(p, lambda: a, lambda: a + 1.0).shape.as_list() == [2, 3]
    assert tf.cond(p, lambda: a, lambda: c).shape.rank is None


def test_cond_build_errors():
    x = tf.constant(1.0)
    p = tf.placeholder(tf.bool, [])
    with pytest.raises(TypeError, match="Python bool"):
        tf.cond(True, lambda: x, lambda: x)
    with pytest.raises(TypeError, match="callable"):
        tf.cond(p, x, lambda: x)
    # TypeError, as tensorflow.compat.v1 (TF 1.15 raised ValueError for these).
    with pytest.raises(TypeError, match="same nested structure"):
        tf.cond(p, lambda: (x, x), lambda: x)
    with pytest.raises(TypeError, match="same nested structure"):
        tf.cond(p, lambda: {"a": x}, lambda: {"b": x})
    with pytest.raises(TypeError, match="same type"):
        tf.cond(p, lambda: x, lambda: tf.constant(1))
    with pytest.raises(TypeError, match="operation"):
        tf.cond(p, lambda: x, lambda: tf.no_op())
    with pytest.raises(TypeError, match="bool"):
        tf.cond(tf.constant(1), lambda: x, lambda: x)
    with pytest.raises(ValueError, match="scalar"):
        tf.cond(tf.constant([True, False]), lambda: x, lambda: x)


def test_only_the_taken_branch_has_side_effects(sess):
    v = tf.Variable(0.0)
    w = tf.Variable(0.0)
    p = tf.placeholder(tf.bool, [])

    def true_fn():
        v.assign_add(1.0)  # not used by the output: runs anyway, as the branch's effect
        return tf.constant(1.0)

    def false_fn():
        with tf.control_dependencies([w.assign_add(10.0)]):
            return tf.constant(2.0)

    y = tf.cond(p, true_fn, false_fn)
    sess.run(tf.global_variables_initializer())
    for pv in (True, True, False, True):
        sess.run(y, {p: pv})
    assert sess.run(v) == 3.0 and sess.run(w) == 10.0


def test_cond_captures_tensors_and_variables(sess):
    x = tf.placeholder(tf.float32, [])
    v = tf.Variable(5.0)
    p = tf.placeholder(tf.bool, [])
    y = tf.cond(p, lambda: v * x, lambda: v.assign_add(x))
    sess.run(tf.global_variables_initializer())
    assert sess.run(y, {x: 2.0, p: True}) == 10.0
    assert sess.run(y, {x: 2.0, p: False}) == 7.0
    assert sess.run(y, {x: 2.0, p: True}) == 14.0
    op = y.op
    assert op.type == "If"  # stateful: a branch assigns
    assert tf.cond(p, lambda: x * 2.0, lambda: x).op.type == "StatelessIf"


def test_cond_control_dependencies(sess):
    v = tf.Variable(1.0)
    p = tf.constant(True)
    sess.run(tf.global_variables_initializer())
    with tf.control_dependencies([v.assign(5.0)]):
        y = tf.cond(p, lambda: v.read_value() * 2.0, lambda: tf.constant(0.0))
    assert sess.run(y) == 10.0
    # A control dependency on an outer op inside a branch becomes the If op's.
    sess.run(v.assign(1.0))
    bump = v.assign(7.0)

    def true_fn():
        with tf.control_dependencies([bump]):
            return tf.constant(1.0)

    z = tf.cond(p, true_fn, lambda: tf.constant(0.0))
    assert bump.op in z.op.control_inputs
    sess.run(z)
    assert sess.run(v) == 7.0


def test_cond_with_operations(sess):
    v = tf.Variable(0.0)
    p = tf.placeholder(tf.bool, [])
    op = tf.cond(p, lambda: tf.group(v.assign_add(1.0)), lambda: tf.no_op())
    assert isinstance(op, tf.Operation)
    sess.run(tf.global_variables_initializer())
    sess.run(op, {p: True})
    sess.run(op, {p: False})
    assert sess.run(v) == 1.0


def test_cond_errors_name_the_inner_op(sess):
    x = tf.placeholder(tf.float32, [])
    y = tf.cond(
        tf.constant(True),
        lambda: tf.debugging.check_numerics(x, "bad x", name="inner_check"),
        lambda: x,
    )
    with pytest.raises(tf.errors.InvalidArgumentError, match="inner_check"):
        sess.run(y, {x: np.nan})


# --- case -----------------------------------------------------------------------------------
def test_case_selects_first_true_and_default(sess):
    x = tf.placeholder(tf.int32, [])
    out = tf.case(
        [
            (tf.less(x, 0), lambda: tf.constant(-1)),
            (tf.less(x, 10), lambda: tf.constant(1)),
            (tf.less(x, 5), lambda: tf.constant(5)),
        ],
        default=lambda: tf.constant(100),
    )
    assert [sess.run(out, {x: v}) for v in (-3, 3, 7, 50)] == [-1, 1, 1, 100]


def test_case_without_default_uses_last_and_checks_it(sess):
    x = tf.placeholder(tf.int32, [])
    out = tf.case(
        {tf.less(x, 0): lambda: tf.constant(-1), tf.greater_equal(x, 5): lambda: tf.constant(5)}
    )
    assert sess.run(out, {x: -2}) == -1
    assert sess.run(out, {x: 9}) == 5
    with pytest.raises(tf.errors.InvalidArgumentError, match="None of the conditions"):
        sess.run(out, {x: 2})


def test_case_exclusive(sess):
    x = tf.placeholder(tf.int32, [])
    out = tf.case(
        [(tf.less(x, 5), lambda: tf.constant(1)), (tf.less(x, 10), lambda: tf.constant(2))],
        default=lambda: tf.constant(3),
        exclusive=True,
    )
    assert sess.run(out, {x: 7}) == 2
    with pytest.raises(tf.errors.InvalidArgumentError, match="exclusive"):
        sess.run(out, {x: 1})
    with pytest.raises(ValueError):
        tf.case([])
    with pytest.raises(TypeError):
        tf.case([(tf.less(x, 5),)])


# --- while_loop: values and structure ----------------------------------------------------------
def test_while_counts(sess):
    i = tf.constant(0)
    out = tf.while_loop(lambda i: i < 10, lambda i: i + 1, [i])
    assert isinstance(out, tf.Tensor) and sess.run(out) == 10
    out = tf.while_loop(lambda i: i < 10, lambda i: [i + 2], [i], return_same_structure=True)
    assert isinstance(out, list) and sess.run(out) == [10]
    # A bare tensor as loop_vars, and a loop that never runs.
    assert sess.run(tf.while_loop(lambda i: i < 0, lambda i: i + 1, i)) == 0
    # A loop variable the body passes through unchanged.
    x = tf.placeholder(tf.float32, [])
    assert sess.run(
        tf.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x), [i, x]), {x: 2.5}
    ) == [3, 2.5]


def test_while_nested_structures(sess):
    loop_vars = (
        tf.constant(0),
        Point(tf.constant(1.0), [tf.constant([1.0, 1.0])]),
        {"s": tf.constant(0.0)},
    )

    def body(i, p, d):
        return (i + 1, Point(p.x * 2.0, [p.y[0] + 1.0]), {"s": d["s"] + p.x})

    i, p, d = tf.while_loop(lambda i, p, d: i < 4, body, loop_vars)
    assert isinstance(p, Point)
    got = sess.run([i, p, d])
    assert got[0] == 4 and got[1].x == 16.0 and got[2]["s"] == 15.0
    np.testing.assert_allclose(got[1].y[0], [5.0, 5.0])
    with pytest.raises(ValueError, match="structure"):
        tf.while_loop(lambda i, x: i < 3, lambda i, x: [i + 1], [tf.constant(0), tf.constant(1.0)])


def test_while_maximum_iterations(sess):
    i = tf.constant(0)
    always = tf.while_loop(lambda i: tf.constant(True), lambda i: i + 1, [i], maximum_iterations=7)
    assert sess.run(always) == 7
    n = tf.placeholder(tf.int32, [])
    both = tf.while_loop(lambda i: i < 5, lambda i: i + 1, [i], maximum_iterations=n)
    assert sess.run(both, {n: 3}) == 3 and sess.run(both, {n: 30}) == 5
    assert sess.run(both, {n: 0}) == 0 and sess.run(both, {n: -2}) == 0


def test_while_shape_invariants(sess):
    x = tf.constant([1.0])
    i = tf.constant(0)
    cond = lambda i, x: i < 3
    body = lambda i, x: (i + 1, tf.concat([x, x], 0))
    with pytest.raises(ValueError, match="Const.*enters the loop with shape"):
        tf.while_loop(cond, body, [i, x])
    out = tf.while_loop(
        cond, body, [i, x], shape_invariants=[i.get_shape(), tf.TensorShape([None])]
    )
    assert out[1].shape.as_list() == [None]
    assert sess.run(out[1]).shape == (8,)
    with pytest.raises(ValueError, match="not compatible with the initial shape"):
        tf.while_loop(
            cond, body, [i, x], shape_invariants=[tf.TensorShape([]), tf.TensorShape([2])]
        )
    with pytest.raises(TypeError, match="type"):
        tf.while_loop(lambda x: x < 3.0, lambda x: tf.cast(x, tf.int32), [tf.constant(0.0)])


def test_while_captures_and_side_effects(sess):
    v = tf.Variable(0.0)
    step = tf.placeholder(tf.float32, [])

    def body(i, acc):
        with tf.control_dependencies([v.assign_add(1.0)]):
            return i + 1, acc + step * v.read_value()

    i, acc = tf.while_loop(lambda i, acc: i < 4, body, [tf.constant(0), tf.constant(0.0)])
    sess.run(tf.global_variables_initializer())
    assert sess.run(acc, {step: 2.0}) == 2.0 * (1 + 2 + 3 + 4)
    assert sess.run(v) == 4.0
    assert i.op.type == "While"


def test_while_runs_as_one_kernel_call(sess):
    """No task or kernel call per iteration: the plan has the same size for any count."""
    n = tf.placeholder(tf.int32, [])
    out = tf.while_loop(
        lambda i, x: i < n, lambda i, x: (i + 1, x * 1.5), [tf.constant(0), tf.constant(1.0)]
    )
    plan = sess.compiled_plan(out, {n: 3})
    assert len(plan.stages) == 1
    (call,) = [c for c in plan.stages[0].calls if c.op_type.endswith("While")]
    # Nobody differentiates here, so the loop records no per-iteration history.
    assert call.attrs["_outputs_read"] == (True, True, False, False, False)
    assert sess.run(out[1], {n: 3}) == 1.5**3
    assert sess.run(out[1], {n: 40}) == pytest.approx(1.5**40)


def test_nested_cond_inside_while_and_while_inside_cond(sess):
    def body(i, x):
        x = tf.cond(tf.equal(i % 2, 0), lambda: x + 1.0, lambda: x * 2.0)
        return i + 1, x

    _, y = tf.while_loop(lambda i, x: i < 5, body, [tf.constant(0), tf.constant(0.0)])
    assert sess.run(y) == ((((0 + 1) * 2 + 1) * 2) + 1)
    p = tf.placeholder(tf.bool, [])
    z = tf.cond(
        p,
        lambda: tf.while_loop(lambda k: k < 6, lambda k: k + 2, [tf.constant(0)]),
        lambda: tf.constant(-1),
    )
    assert sess.run(z, {p: True}) == 6 and sess.run(z, {p: False}) == -1


def test_compiled_plans_pickle(sess):
    w = tf.placeholder(tf.float32, [])
    out = tf.while_loop(
        lambda i, x: i < 3,
        lambda i, x: (i + 1, tf.cond(x > 1.0, lambda: x * w, lambda: x + 1.0)),
        [tf.constant(0), tf.constant(0.5)],
    )
    grad = tf.gradients(out[1], w)[0]
    plan = sess.compiled_plan([out, grad], {w: 2.0})
    again = cloudpickle.loads(cloudpickle.dumps(plan))
    assert again.num_calls == plan.num_calls


# --- gradients ------------------------------------------------------------------------------
def _branchy(pred_value: bool):
    def build(x, y):
        return tf.cond(const_pred(pred_value), lambda: tf.sin(x) * y, lambda: x * x + y)

    def ref(x, y):
        return anp.sin(x) * y if pred_value else x * x + y

    return build, ref


@pytest.mark.parametrize("pred_value", [True, False])
def test_cond_gradient_both_branches(pred_value):
    build, ref = _branchy(pred_value)
    rng = np.random.default_rng(1)
    check_op(build, ref, [rng.normal(size=(3,)), rng.normal(size=(3,))])


def test_cond_gradient_input_used_by_one_branch(sess):
    x = tf.placeholder(tf.float64, [2])
    y = tf.placeholder(tf.float64, [2])
    p = tf.placeholder(tf.bool, [])
    out = tf.cond(p, lambda: x * 3.0, lambda: y * y)
    gx, gy = tf.gradients(tf.reduce_sum(out), [x, y])
    feed = {x: [1.0, 2.0], y: [3.0, 4.0]}
    got = sess.run([gx, gy], {**feed, p: True})
    np.testing.assert_allclose(got[0], [3.0, 3.0])
    np.testing.assert_allclose(got[1], [0.0, 0.0])
    got = sess.run([gx, gy], {**feed, p: False})
    np.testing.assert_allclose(got[0], [0.0, 0.0])
    np.testing.assert_allclose(got[1], [6.0, 8.0])
    # An integer output carries no gradient; an unrelated input gets None.
    z = tf.placeholder(tf.float64, [])
    assert tf.gradients(tf.cond(p, lambda: x, lambda: y), z) == [None]


def test_cond_gradient_of_captured_variable(sess):
    v = tf.Variable([1.0, 2.0], dtype=tf.float64)
    w = tf.Variable(3.0, dtype=tf.float64)
    p = tf.placeholder(tf.bool, [])
    out = tf.cond(p, lambda: tf.reduce_sum(v * v), lambda: w * 2.0)
    gv, gw = tf.gradients(out, [v, w])
    sess.run(tf.global_variables_initializer())
    got = sess.run([gv, gw], {p: True})
    np.testing.assert_allclose(got[0], [2.0, 4.0])
    assert got[1] == 0.0
    got = sess.run([gv, gw], {p: False})
    np.testing.assert_allclose(got[0], [0.0, 0.0])
    assert got[1] == 2.0


def test_cond_gradient_reuses_the_forward_random_draw(sess):
    """A random op in a branch is recorded, not drawn again by the gradient."""
    x = tf.placeholder(tf.float32, [50])
    p = tf.placeholder(tf.bool, [])
    y = tf.cond(p, lambda: x * tf.random_uniform([50]), lambda: x)
    g = tf.gradients(tf.reduce_sum(y), x)[0]
    xv = np.ones(50, np.float32)
    yv, gv = sess.run([y, g], {x: xv, p: True})
    np.testing.assert_allclose(gv, yv)
    yv, gv = sess.run([y, g], {x: xv, p: False})
    np.testing.assert_allclose(gv, np.ones(50))


def _rnn_build(x, w):
    def body(i, h):
        return i + 1, tf.tanh(tf.linalg.matvec(w, h))

    return tf.while_loop(lambda i, h: i < 5, body, [tf.constant(0), x])[1]


def _rnn_ref(x, w):
    for _ in range(5):
        x = anp.tanh(anp.dot(w, x))
    return x


def test_while_gradient_loop_vars_and_captured_weight_to_second_order():
    """x_{t+1} = tanh(W x_t) for 5 steps: d/dx0 and d/dW vs autograd, finite differences,
    and second order (a gradient of the gradient loop)."""
    rng = np.random.default_rng(0)
    check_op(_rnn_build, _rnn_ref, [rng.normal(size=(3,)), 0.6 * rng.normal(size=(3, 3))])


def test_while_gradient_with_variable_weight_and_maximum_iterations(sess):
    rng = np.random.default_rng(2)
    w0 = 0.5 * rng.normal(size=(3, 3))
    x0 = rng.normal(size=(3,))
    w = tf.Variable(w0)
    x = tf.placeholder(tf.float64, [3])
    _, h = tf.while_loop(
        lambda i, h: tf.constant(True),
        lambda i, h: (i + 1, tf.tanh(tf.linalg.matvec(w, h)) + h * 0.5),
        [tf.constant(0), x],
        maximum_iterations=4,
    )
    loss = tf.reduce_sum(h * h)
    gx, gw = tf.gradients(loss, [x, w])
    sess.run(tf.global_variables_initializer())
    got = sess.run([gx, gw], {x: x0})

    import autograd

    def ref(x, w):
        for _ in range(4):
            x = anp.tanh(anp.dot(w, x)) + x * 0.5
        return anp.sum(x * x)

    np.testing.assert_allclose(got[0], autograd.grad(ref, 0)(x0, w0), rtol=1e-10)
    np.testing.assert_allclose(got[1], autograd.grad(ref, 1)(x0, w0), rtol=1e-10)


def test_while_gradient_with_unknown_batch_dimension(sess):
    x = tf.placeholder(tf.float64, [None, 2])
    w = tf.constant([[0.5, -0.3], [0.2, 0.8]], tf.float64)
    _, h = tf.while_loop(lambda i, h: i < 3, lambda i, h: (i + 1, tf.sin(tf.matmul(h, w))), [0, x])
    assert h.shape.as_list() == [None, 2]
    g = tf.gradients(tf.reduce_sum(h), x)[0]
    xv = np.array([[0.1, 0.2], [0.3, -0.4], [1.0, 2.0]])

    import autograd

    def ref(x):
        for _ in range(3):
            x = anp.sin(anp.dot(x, np.array([[0.5, -0.3], [0.2, 0.8]])))
        return anp.sum(x)

    np.testing.assert_allclose(sess.run(g, {x: xv}), autograd.grad(ref)(xv), rtol=1e-10)


def test_while_gradient_zero_iterations_and_back_prop_false(sess):
    x = tf.placeholder(tf.float64, [])
    y = tf.while_loop(lambda i, x: i < 0, lambda i, x: (i + 1, x * x), [tf.constant(0), x])[1]
    assert sess.run(tf.gradients(y * 3.0, x)[0], {x: 2.0}) == 3.0
    z = tf.while_loop(
        lambda i, x: i < 3, lambda i, x: (i + 1, x * x), [tf.constant(0), x], back_prop=False
    )[1]
    assert tf.gradients(z, x) == [None]


def test_while_gradient_refuses_a_loop_var_that_changes_shape():
    x = tf.placeholder(tf.float32, [1])
    out = tf.while_loop(
        lambda i, x: i < 3,
        lambda i, x: (i + 1, tf.concat([x, x], 0)),
        [tf.constant(0), x],
        shape_invariants=[tf.TensorShape([]), tf.TensorShape([None])],
    )
    with pytest.raises(ValueError, match="changes shape"):
        tf.gradients(tf.reduce_sum(out[1]), x)


def test_gradient_through_cond_inside_while():
    def build(x, a):
        def body(i, h):
            h = tf.cond(tf.equal(i % 2, 0), lambda: tf.sin(h) * a, lambda: h * h)
            return i + 1, h

        return tf.while_loop(lambda i, h: i < 4, body, [tf.constant(0), x])[1]

    def ref(x, a):
        for i in range(4):
            x = anp.sin(x) * a if i % 2 == 0 else x * x
        return x

    rng = np.random.default_rng(3)
    check_op(build, ref, [rng.normal(size=(2,)), rng.normal(size=(2,))])


def test_gradient_through_while_inside_while_and_inside_cond():
    def build(x, p):
        def outer(i, h):
            inner = tf.while_loop(
                lambda j, g: j < 2, lambda j, g: (j + 1, tf.sin(g) * p), [tf.constant(0), h]
            )[1]
            return i + 1, inner + h

        looped = tf.while_loop(lambda i, h: i < 3, outer, [tf.constant(0), x])[1]
        return tf.cond(tf.constant(True), lambda: looped * p, lambda: looped)

    def ref(x, p):
        for _ in range(3):
            g = x
            for _ in range(2):
                g = anp.sin(g) * p
            x = g + x
        return x * p

    rng = np.random.default_rng(4)
    check_op(build, ref, [rng.normal(size=(2,)), rng.normal(size=(2,))])


def test_while_gradient_reuses_each_iterations_random_draw(sess):
    """Random draws in a loop body are recorded per iteration (also through a nested
    stateful cond, whose gradient then runs on the recorded values)."""
    tf.set_random_seed(7)
    x = tf.placeholder(tf.float64, [20])

    def body(i, h):
        m = tf.cast(tf.random_uniform([20]) > 0.5, tf.float64)
        scaled = tf.cond(
            tf.equal(i, 1), lambda: h * tf.random_uniform([20], dtype=tf.float64), lambda: h
        )
        return i + 1, scaled * m + h * 0.5

    _, y = tf.while_loop(lambda i, h: i < 3, body, [tf.constant(0), x])
    g = tf.gradients(tf.reduce_sum(y), x)[0]
    assert y.op.type == "While"
    # h_{t+1} = h_t (s_t m_t + 0.5) with draws s_t (1 except at t == 1) and masks m_t, so
    # y = x * prod(factors) and dy/dx = prod(factors) = y / x.
    xv = np.full(20, 2.0)
    yv, gv = sess.run([y, g], {x: xv})
    np.testing.assert_allclose(gv, yv / 2.0)
    assert np.unique(gv).size > 2  # the draws differ per element and iteration


def test_read_only_variables_are_passed_by_value(sess):
    w = tf.Variable(2.0)
    x = tf.placeholder(tf.float32, [])
    _, y = tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * w), [tf.constant(0), x])
    z = tf.cond(x > 0.0, lambda: w * x, lambda: x)
    for op in (y.op, z.op):
        assert all(t.dtype != tf.resource for t in op.inputs)
        assert op.type.startswith("Stateless")
    gw = tf.gradients(y + z, w)[0]
    sess.run(tf.global_variables_initializer())
    # y = x w^3, z = w x: d/dw = 3 x w^2 + x
    assert sess.run(gw, {x: 1.5}) == pytest.approx(3 * 1.5 * 4 + 1.5)


def test_nested_bodies_capture_each_outer_tensor_once(sess):
    w = tf.Variable(2.0, dtype=tf.float64)
    x = tf.placeholder(tf.float64, [])
    p = tf.placeholder(tf.bool, [])
    inner = lambda: tf.while_loop(
        lambda i, a: i < 3,
        lambda i, a: (i + 1, a * w + x * 0.0),
        [0, x],
    )[1]
    y = tf.cond(p, inner, lambda: x)
    assert [t.dtype for t in y.op.inputs] == [tf.bool, tf.float64, tf.float64]
    loop = next(
        o for o in y.op.attrs["then_branch"].graph.get_operations() if o.type.endswith("While")
    )
    outers = [outer for outer, _ in loop.attrs["body"].graph.captures]
    assert len(outers) == len(set(outers)) == 2
    gx, gw = tf.gradients(y, [x, w])
    sess.run(tf.global_variables_initializer())
    assert sess.run([y, gx, gw], {x: 1.5, p: True}) == [12.0, 8.0, 3 * 1.5 * 4]


def test_gradient_uses_each_iterations_value_of_a_written_variable(sess):
    v = tf.Variable(0.0, dtype=tf.float64)
    x = tf.placeholder(tf.float64, [])

    def body(i, acc):
        with tf.control_dependencies([v.assign_add(1.0)]):
            return i + 1, acc + x * v.read_value()

    _, acc = tf.while_loop(
        lambda i, acc: i < 3, body, [tf.constant(0), tf.constant(0.0, tf.float64)]
    )
    assert any(t.dtype == tf.resource for t in acc.op.inputs)  # written: a handle
    gx, gv = tf.gradients(acc, [x, v])
    sess.run(tf.global_variables_initializer())
    got = sess.run([acc, gx, gv], {x: 2.0})
    assert got[0] == 2.0 * (1 + 2 + 3)
    assert got[1] == 1 + 2 + 3  # the values v had in each iteration, not its final one
    assert got[2] == 3 * 2.0


# --- TF1 parity -----------------------------------------------------------------------------
def _tf1_program(lib, x0, w0, pv):
    x = lib.constant(x0)
    w = lib.Variable(w0, name="w")
    p = lib.constant(pv)

    def body(i, h, acc):
        h = lib.tanh(lib.matmul(w, h))
        acc = lib.cond(lib.equal(i % 2, 0), lambda: acc + lib.reduce_sum(h), lambda: acc * 0.5)
        return i + 1, h, acc

    _, h, acc = lib.while_loop(
        lambda i, h, acc: i < 6, body, [lib.constant(0), x, lib.constant(0.0)]
    )
    out = lib.cond(p, lambda: acc * 2.0 + lib.reduce_sum(h), lambda: -acc)
    gx, gw = lib.gradients(out, [x, w])
    return [h, acc, out, gx, gw]


@pytest.mark.tf
@pytest.mark.parametrize("pv", [True, False])
def test_tf1_parity_rnn_with_conds(pv):
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    rng = np.random.default_rng(5)
    x0 = rng.normal(size=(3, 1)).astype(np.float32)
    w0 = (0.5 * rng.normal(size=(3, 3))).astype(np.float32)
    results = []
    for lib in (tf, tf1):
        graph = lib.Graph()
        with graph.as_default():
            fetches = _tf1_program(lib, x0, w0, pv)
            with lib.Session(graph=graph) as s:
                s.run(lib.global_variables_initializer())
                results.append(s.run(fetches))
    for a, b in zip(*results, strict=True):
        assert np.asarray(a).dtype == np.asarray(b).dtype
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
