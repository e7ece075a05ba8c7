"""``py_func`` / ``numpy_function`` and ``autograd_op``: forward, errors, gradients."""

from __future__ import annotations

import autograd.numpy as anp
import cloudpickle
import numpy as np
import pytest

import dataflow as tf
from dataflow.testing.grad_check import check_op

pytestmark = pytest.mark.filterwarnings("ignore:Output seems independent of input")


# --- py_func forward ------------------------------------------------------------------------
def test_py_func_single_and_list_outputs(sess):
    x = tf.placeholder(tf.float32, [3])
    y = tf.py_func(lambda a: a * 2, [x], tf.float32)
    assert isinstance(y, tf.Tensor) and y.dtype == tf.float32 and y.shape.rank is None
    a, b = tf.py_func(
        lambda a: (a.sum(dtype=np.float64), a.astype(np.int32)), [x], [tf.float64, tf.int32]
    )
    assert a.dtype == tf.float64 and b.dtype == tf.int32
    xv = np.array([1.5, 2.0, 3.0], np.float32)
    got = sess.run([y, a, b], {x: xv})
    np.testing.assert_allclose(got[0], xv * 2)
    assert got[0].dtype == np.float32
    assert got[1] == 6.5 and got[2].dtype == np.int32
    np.testing.assert_array_equal(got[2], [1, 2, 3])
    # A single tensor input need not be in a list.
    z = tf.numpy_function(lambda a: (a + 0.5).astype(np.float64), x, tf.float64)
    assert sess.run(z, {x: xv}).dtype == np.float64


@pytest.mark.parametrize(
    ("result", "tout", "got"),
    [
        (lambda a: a.astype(np.float64), "float32", "float64"),
        (lambda a: 1.0, "float32", "float64"),  # a Python float is float64, as in TF1
        (lambda a: 1, "int32", "int64"),
        (lambda a: a, "float64", "float32"),
    ],
)
def test_py_func_results_must_have_the_declared_dtype(sess, result, tout, got):
    # TF1 refuses them (InvalidArgumentError naming both dtypes); nothing is cast.
    x = tf.constant([1.0, 2.0])
    y = tf.py_func(result, [x], getattr(tf, tout), name="typed")
    with pytest.raises(
        tf.errors.InvalidArgumentError,
        match=rf"(?s)0-th value returned by py_func 'typed' is {got}, but "
        rf"expects {tout}.*\[\[node typed ",
    ):
        sess.run(y)
    second = tf.py_func(lambda a: (a, result(a)), [x], [tf.float32, getattr(tf, tout)])
    with pytest.raises(tf.errors.InvalidArgumentError, match="1-th value"):
        sess.run(second)
    assert sess.run(x).tolist() == [1.0, 2.0]


def test_py_func_shapes_can_be_set_and_ops_without_outputs_run(sess):
    seen = []
    x = tf.constant([1.0, 2.0])
    y = tf.py_func(np.square, [x], tf.float32)
    y.set_shape([2])
    assert (y + 1.0).shape.as_list() == [2]
    op = tf.py_func(lambda a: seen.append(float(a.sum())), [x], [])
    assert isinstance(op, tf.Operation)
    sess.run(op)
    assert seen == [3.0]
    assert tf.py_func(np.square, [x], tf.float32, stateful=False).op.type == "PyFuncStateless"
    assert y.op.type == "PyFunc"


def test_py_func_errors_name_the_op(sess):
    def boom(a):
        raise ValueError("nope")

    x = tf.constant([1.0])
    y = tf.py_func(boom, [x], tf.float32, name="my_func")
    with pytest.raises(tf.errors.InvalidArgumentError, match="ValueError: nope") as info:
        sess.run(y)
    assert "my_func" in info.value.message
    with pytest.raises(tf.errors.InvalidArgumentError, match="returned 1 value"):
        sess.run(tf.py_func(lambda a: a, [x], [tf.float32, tf.float32]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="expects float32"):
        sess.run(tf.py_func(lambda a: "text", [x], tf.float32))
    with pytest.raises(tf.errors.InvalidArgumentError, match="not convertible"):
        sess.run(tf.py_func(lambda a: [[1.0], [2.0, 3.0]], [x], tf.float32))

    def stop(a):
        raise StopIteration

    with pytest.raises(tf.errors.OutOfRangeError):
        sess.run(tf.py_func(stop, [x], tf.float32))
    with pytest.raises(TypeError):
        tf.py_func(3, [x], tf.float32)


def test_py_func_closure_pickles_in_plans(sess):
    offset = np.float32(4.0)
    x = tf.placeholder(tf.float32, [])
    y = tf.py_func(lambda a: a + offset, [x], tf.float32)
    plan = sess.compiled_plan(y, {x: 1.0})
    again = cloudpickle.loads(cloudpickle.dumps(plan))
    call = next(c for s in again.stages for c in s.calls if c.op_type == "PyFunc")
    assert call.attrs["func"](np.float32(1.0)) == 5.0
    assert sess.run(y, {x: 1.0}) == 5.0


# --- py_func gradients ----------------------------------------------------------------------
def test_py_func_without_grad_has_none(sess):
    # As TF1's (PyFunc is registered not differentiable): None, and other paths still flow.
    x = tf.placeholder(tf.float32, [2])
    y = tf.py_func(np.sin, [x], tf.float32)
    assert tf.gradients(y, x) == [None]
    (g,) = tf.gradients(tf.reduce_sum(y) + tf.reduce_sum(x * 3.0), x)
    np.testing.assert_array_equal(sess.run(g, {x: [1.0, 2.0]}), [3.0, 3.0])


def test_py_func_graph_gradient(sess):
    def grad(op, g):
        return [g * tf.cos(op.inputs[0])]

    x = tf.placeholder(tf.float64, [3])
    y = tf.py_func(np.sin, [x], tf.float64, grad=grad)
    y.set_shape([3])
    g = tf.gradients(tf.reduce_sum(y * y), x)[0]
    xv = np.array([0.1, 0.5, 1.0])
    np.testing.assert_allclose(sess.run(g, {x: xv}), 2 * np.sin(xv) * np.cos(xv))


def test_py_func_gradient_function_stays_out_of_plans(sess):
    x = tf.placeholder(tf.float64, [])
    scale = tf.constant(2.0, tf.float64)  # a tensor in the gradient's closure
    y = tf.py_func(lambda a: a * 2.0, [x], tf.float64, grad=lambda op, g: [g * scale])
    g = tf.gradients(y, x)[0]
    plan = sess.compiled_plan([y, g], {x: 1.0})
    cloudpickle.dumps(plan)  # tensors refuse pickling: the closure is not in the plan
    assert sess.run(g, {x: 1.0}) == 2.0


def test_py_func_numpy_gradient(sess):
    def grad(a, b, g):  # numpy: inputs, then output gradients; one array per input
        return g * b, g * a

    x = tf.placeholder(tf.float64, [2])
    y = tf.placeholder(tf.float64, [2])
    out = tf.py_func(lambda a, b: a * b, [x, y], tf.float64, grad=grad)
    gx, gy = tf.gradients(tf.reduce_sum(out * 3.0), [x, y])
    assert gx.shape.as_list() == [2]
    got = sess.run([gx, gy], {x: [1.0, 2.0], y: [3.0, 4.0]})
    np.testing.assert_allclose(got[0], [9.0, 12.0])
    np.testing.assert_allclose(got[1], [3.0, 6.0])


def test_py_func_gradient_inside_cond_and_while(sess):
    """A stateful py_func in a body is recorded, and its gradient still applies."""
    calls = []

    def f(a):
        calls.append(1)
        return a**3

    def grad(a, g):
        return 3 * a**2 * g

    x = tf.placeholder(tf.float64, [])
    p = tf.placeholder(tf.bool, [])

    def cubed(v):
        out = tf.py_func(f, [v], tf.float64, grad=grad)
        out.set_shape([])
        return out

    y = tf.cond(p, lambda: cubed(x), lambda: x)
    _, z = tf.while_loop(lambda i, h: i < 2, lambda i, h: (i + 1, cubed(h)), [tf.constant(0), x])
    gy = tf.gradients(y, x)[0]
    gz = tf.gradients(z, x)[0]
    calls.clear()
    assert sess.run(gy, {x: 2.0, p: True}) == 12.0
    assert len(calls) == 1  # the gradient did not call f again
    assert sess.run(gy, {x: 2.0, p: False}) == 1.0
    calls.clear()
    # z = (x^3)^3 = x^9: dz/dx = 9 x^8
    assert sess.run(gz, {x: 1.5}) == pytest.approx(9 * 1.5**8)
    assert len(calls) == 2


# --- autograd_op ----------------------------------------------------------------------------
@tf.autograd_op
def softplus_times(x, y):
    return anp.logaddexp(0.0, x) * y


def test_autograd_op_first_and_second_order():
    rng = np.random.default_rng(0)
    check_op(
        lambda x, y: softplus_times(x, y),
        lambda x, y: anp.logaddexp(0.0, x) * y,
        [rng.normal(size=(4,)), rng.normal(size=(4,))],
    )


def test_autograd_op_multiple_outputs_and_integer_inputs():
    @tf.autograd_op(Tout=[tf.float64, tf.float64])
    def two(x, n):
        return anp.sin(x) * n, anp.sum(x**2)

    def build(x):
        a, b = two(x, tf.constant(2.0, tf.float64))  # outputs of unknown shape
        return a + b

    rng = np.random.default_rng(1)
    check_op(build, lambda x: anp.sin(x) * 2.0 + anp.sum(x**2), [rng.normal(size=(3,))])

    @tf.autograd_op
    def scale(x, k):
        return x * k

    x = tf.placeholder(tf.float32, [2])
    k = tf.constant(3, tf.int32)
    gx, gk = tf.gradients(tf.reduce_sum(scale(x, k)), [x, k])
    assert gk is None
    with tf.Session(config=tf.ConfigProto(debug=True)) as sess:
        out = sess.run(gx, {x: [1.0, 2.0]})
    np.testing.assert_allclose(out, [3.0, 3.0])
    assert out.dtype == np.float32


def test_autograd_op_names_and_namespace():
    assert tf.autograd_op is not None
    x = tf.constant([1.0])
    assert softplus_times(x, x).op.name.startswith("softplus_times")
    lam = tf.autograd_op(lambda a: a * 2.0)
    assert lam(x).op.name == "lambda"  # "<lambda>" made a valid op name
