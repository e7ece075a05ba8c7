"""``BiasAdd``/``BiasAddGrad`` and the two fused kernels of a CNN block:
``BiasAddRelu`` (``relu(bias_add(x, b))``) and ``MaxPoolGradRelu`` (the ReLU gradient
of a max pool's gradient). References: numpy, autograd and finite differences
(``check_op``), the unfused kernels, and ``tensorflow.compat.v1``."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow as tf
from dataflow.framework import registry
from dataflow.testing.grad_check import check_op


@pytest.fixture
def sess():
    with tf.Graph().as_default(), tf.Session() as session:
        yield session


class _NumpyContext:
    xp = np


def _kernel(op_type: str, attrs: dict):
    return registry.lookup(op_type).kernel(_NumpyContext, attrs)


rng = np.random.default_rng(7)
POOL_2X2 = {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1], "padding": "SAME"}


# --- BiasAdd and BiasAddGrad ----------------------------------------------------------------
@pytest.mark.parametrize(
    "shape,data_format",
    [((5, 3), "NHWC"), ((2, 3, 4), "NHWC"), ((2, 5, 6, 4), "NHWC"), ((2, 3, 2, 2, 4), "NHWC")]
    + [((2, 4, 3), "NCHW"), ((2, 4, 3, 2), "NCHW")],
)
def test_bias_add_and_its_gradients_match_autograd(shape, data_format):
    channels = shape[1] if data_format == "NCHW" else shape[-1]
    x, b = rng.standard_normal(shape), rng.standard_normal(channels)
    expand = (slice(None),) + (None,) * (len(shape) - 2) if data_format == "NCHW" else ...

    check_op(
        lambda a, c: tf.nn.bias_add(a, c, data_format=data_format),
        lambda a, c: a + c[expand],
        [x, b],
    )


def test_bias_add_is_tf1s_op_with_a_bias_add_grad_gradient():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 4])
        b = tf.Variable(np.zeros(4, np.float32))
        y = tf.nn.bias_add(x, b, name="logits")
        (gb,) = tf.gradients(tf.reduce_sum(y), [b])
    assert y.op.type == "BiasAdd" and y.op.name == "logits"
    assert y.op.get_attr("data_format") == "NHWC"
    assert gb.op.type == "BiasAddGrad"


def test_bias_add_on_views_integers_and_empty_batches(sess):
    wide = rng.standard_normal((3, 4, 10)).astype(np.float32)
    view = wide[:, :, ::2]  # not contiguous
    b = rng.standard_normal(5).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 4, 5])
    np.testing.assert_array_equal(sess.run(tf.nn.bias_add(x, b), {x: view}), view + b)
    i = tf.placeholder(tf.int32, [None, 3])
    got = sess.run(tf.nn.bias_add(i, np.array([1, 2, 3], np.int32)), {i: [[10, 20, 30]]})
    assert got.dtype == np.int32 and got.tolist() == [[11, 22, 33]]
    out, grad = sess.run(
        [tf.nn.bias_add(x, b), tf.gradients(tf.reduce_sum(tf.nn.bias_add(x, b) * 2.0), x)[0]],
        {x: np.zeros((0, 4, 5), np.float32)},
    )
    assert out.shape == (0, 4, 5) and grad.shape == (0, 4, 5)


def test_bias_add_grad_of_an_empty_batch_is_zero(sess):
    b = tf.Variable(np.ones(3, np.float32))
    x = tf.placeholder(tf.float32, [None, 2, 3])
    (gb,) = tf.gradients(tf.reduce_sum(tf.nn.bias_add(x, b)), [b])
    sess.run(tf.global_variables_initializer())
    got = sess.run(gb, {x: np.zeros((0, 2, 3), np.float32)})
    assert got.dtype == np.float32 and got.tolist() == [0.0, 0.0, 0.0]


def test_bias_add_with_channels_known_only_at_run_time_is_checked(sess):
    x = tf.placeholder(tf.float32, [None, None])
    b = tf.placeholder(tf.float32, [None])
    y = tf.nn.bias_add(x, b)
    with pytest.raises(tf.errors.InvalidArgumentError, match="as many biases as the channel"):
        sess.run(y, {x: np.zeros((2, 3), np.float32), b: np.zeros(4, np.float32)})
    np.testing.assert_array_equal(
        sess.run(y, {x: np.zeros((2, 3), np.float32), b: [1.0, 2.0, 3.0]}), [[1, 2, 3]] * 2
    )


def test_bias_add_grad_sums_as_precisely_as_numpy(sess):
    g = rng.standard_normal((64, 28, 28, 32)).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 28, 28, 32])
    b = tf.Variable(np.zeros(32, np.float32))
    (gb,) = tf.gradients(tf.nn.bias_add(x, b), [b], grad_ys=tf.constant(g))
    sess.run(tf.global_variables_initializer())
    got = sess.run(gb, {x: np.zeros_like(g)})
    exact = g.astype(np.float64).sum(axis=(0, 1, 2))
    numpy_error = np.abs(g.sum(axis=(0, 1, 2)) - exact).max()
    assert np.abs(got - exact).max() <= max(numpy_error, 1e-4)


# --- BiasAddRelu ----------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(3, 5), (4, 6, 7, 8), (200, 17, 9, 3)])
def test_relu_of_a_bias_add_runs_fused_and_matches_numpy(sess, shape):
    x = tf.placeholder(tf.float32, [None, *shape[1:]])
    b = rng.standard_normal(shape[-1]).astype(np.float32)
    y = tf.nn.relu(tf.nn.bias_add(x, b))
    value = rng.standard_normal(shape).astype(np.float32)
    value.flat[::7] = -b[0]  # exact zeros after the add
    assert "BiasAddRelu" in sess.compiled_plan(y, {x: value}).call_types
    got = sess.run(y, {x: value})
    np.testing.assert_array_equal(got, np.maximum(value + b, 0))
    nan = value.copy()
    nan[0, 0] = np.nan
    assert np.isnan(sess.run(y, {x: nan}).flat[0])  # as TF: relu(nan) is nan


def test_a_bias_add_read_elsewhere_is_not_fused(sess):
    x = tf.placeholder(tf.float32, [None, 3])
    pre = tf.nn.bias_add(x, [1.0, -2.0, 0.5])
    act = tf.nn.relu(pre)
    value = rng.standard_normal((4, 3)).astype(np.float32)
    types = sess.compiled_plan([act, pre], {x: value}).call_types
    assert "BiasAddRelu" not in types and {"BiasAdd", "Relu"} <= set(types)
    got_act, got_pre = sess.run([act, pre], {x: value})
    np.testing.assert_array_equal(got_pre, value + np.float32([1.0, -2.0, 0.5]))
    np.testing.assert_array_equal(got_act, np.maximum(got_pre, 0))


# --- Conv2DBiasAdd(Relu) -------------------------------------------------------------------
CONV_ROUTES = {
    # name: (input shape, filter shape, strides, padding)
    "one channel (tap columns)": ((3, 28, 28, 1), (5, 5, 1, 32), 1, "SAME"),
    "im2col, strided": ((2, 9, 8, 3), (3, 3, 3, 4), 2, "VALID"),
    "1x1": ((2, 5, 5, 6), (1, 1, 6, 3), 1, "VALID"),
    "fourier": ((2, 14, 12, 32), (5, 5, 32, 48), 1, "SAME"),
}


@pytest.mark.parametrize("route", sorted(CONV_ROUTES))
@pytest.mark.parametrize("relu", [False, True])
def test_a_convolution_layer_runs_as_one_kernel_and_matches_the_separate_ops(sess, route, relu):
    x_shape, f_shape, stride, padding = CONV_ROUTES[route]
    x = tf.placeholder(tf.float32, [None, *x_shape[1:]])
    f = tf.constant(rng.standard_normal(f_shape).astype(np.float32) * 0.2)
    b = tf.constant(rng.standard_normal(f_shape[-1]).astype(np.float32))
    conv = tf.nn.conv2d(x, f, [1, stride, stride, 1], padding)
    layer = tf.nn.bias_add(conv, b)
    if relu:
        layer = tf.nn.relu(layer)
    value = rng.standard_normal(x_shape).astype(np.float32)
    fused_type = "Conv2DBiasAddRelu" if relu else "Conv2DBiasAdd"
    types = sess.compiled_plan(layer, {x: value}).call_types
    assert fused_type in types and "Conv2D" not in types and "BiasAdd" not in types
    got = sess.run(layer, {x: value})
    # The same ops unfused: the convolution fetched too, so nothing fuses with it.
    conv_value, separate, magnitude = sess.run(
        [conv, layer, tf.nn.conv2d(tf.abs(x), tf.abs(f), [1, stride, stride, 1], padding)],
        {x: value},
    )
    bias = sess.run(b)
    want = conv_value + bias
    np.testing.assert_array_equal(separate, np.maximum(want, 0) if relu else want)  # same adds
    # The fused kernel sums the same K products and the bias in another order and blocking
    # (BLAS kernels differ between CPUs): each route is within gamma_(K+1) * sum|terms| of
    # the exact sum (Higham, "Accuracy and Stability of Numerical Algorithms", 3.1), so
    # they are within twice that of each other; relu only brings values closer.
    terms = f_shape[0] * f_shape[1] * f_shape[2] + 1
    u = np.finfo(np.float32).eps / 2
    bound = 2 * terms * u / (1 - terms * u) * (magnitude + np.abs(bias))
    assert np.all(np.abs(got - separate) <= bound), np.abs(got - separate).max()


def test_a_convolution_layer_in_nchw_and_mismatched_formats(sess):
    x = tf.placeholder(tf.float32, [None, 3, 6, 6])
    f = tf.constant(rng.standard_normal((3, 3, 3, 4)).astype(np.float32))
    b = tf.constant(np.float32([0.5, -0.5, 1.0, 0.0]))
    value = rng.standard_normal((2, 3, 6, 6)).astype(np.float32)
    # conv2d in NCHW on this CPU runs as NHWC views; the layer keeps NCHW throughout.
    conv = tf.nn.conv2d(x, f, [1, 1, 1, 1], "SAME", data_format="NCHW")
    same = tf.nn.relu(tf.nn.bias_add(conv, b, data_format="NCHW"))
    assert "Conv2DBiasAddRelu" in sess.compiled_plan(same, {x: value}).call_types
    conv_value = sess.run(conv, {x: value})
    np.testing.assert_allclose(
        sess.run(same, {x: value}),
        np.maximum(conv_value + b.eval(session=sess)[:, None, None], 0),
        rtol=1e-6,
        atol=1e-6,
    )
    # A bias added as NHWC to an NCHW convolution (channels 6 = W): legal, never fused.
    other = tf.nn.bias_add(
        tf.nn.conv2d(
            x,
            tf.constant(np.ones((3, 3, 3, 6), np.float32)),
            [1, 1, 1, 1],
            "SAME",
            data_format="NCHW",
        ),
        tf.constant(np.arange(6, dtype=np.float32)),
    )
    types = sess.compiled_plan(other, {x: value}).call_types
    assert "Conv2DBiasAdd" not in types and "BiasAdd" in types


def test_a_fused_convolution_layer_refuses_a_bias_of_the_wrong_size_at_run_time(sess):
    x = tf.placeholder(tf.float32, [None, 6, 6, 2])
    b = tf.placeholder(tf.float32, [None])
    f = tf.constant(np.ones((3, 3, 2, 4), np.float32))
    layer = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, f, [1, 1, 1, 1], "SAME"), b))
    value = np.ones((1, 6, 6, 2), np.float32)
    assert "Conv2DBiasAddRelu" in sess.compiled_plan(layer, {x: value, b: np.zeros(4)}).call_types
    with pytest.raises(tf.errors.InvalidArgumentError, match="as many biases"):
        sess.run(layer, {x: value, b: np.zeros(3, np.float32)})


# --- MaxPoolGradRelu ------------------------------------------------------------------------
def _block_gradient(sess, x_value, dy_value, ksize=2, stride=2, padding="SAME"):
    """d/dx of <max_pool(relu(x)), dy>, with the plan's op types."""
    x = tf.placeholder(tf.float32, [None, *x_value.shape[1:]])
    pooled = tf.nn.max_pool(tf.nn.relu(x), [1, ksize, ksize, 1], [1, stride, stride, 1], padding)
    (gx,) = tf.gradients(pooled, [x], grad_ys=tf.constant(dy_value))
    return sess.run(gx, {x: x_value}), sess.compiled_plan(gx, {x: x_value}).call_types


def _numpy_block_gradient(x, dy, k):
    """The first-maximum rule (TF's) for k x k windows with stride k, then the ReLU mask."""
    a = np.maximum(x, 0)
    n, h, w, c = a.shape
    dx = np.zeros_like(a)
    for i in range(h // k):
        for j in range(w // k):
            window = a[:, i * k : (i + 1) * k, j * k : (j + 1) * k, :].reshape(n, k * k, c)
            first = window.argmax(axis=1)  # argmax returns the first maximum
            rows, cols = np.divmod(first, k)
            for b in range(n):
                for ch in range(c):
                    r, s = i * k + rows[b, ch], j * k + cols[b, ch]
                    dx[b, r, s, ch] += dy[b, i, j, ch]
    with np.errstate(invalid="ignore"):  # an infinite gradient times 0: NaN, as in TF
        return dx * (a > 0)


@pytest.mark.parametrize("k", [2, 3])
def test_the_relu_gradient_of_a_pool_gradient_runs_fused(sess, k, pool_route):
    x = rng.standard_normal((3, 6 * k // 2 * 2, 4 * k, 5)).astype(np.float32)
    dy = rng.standard_normal((3, x.shape[1] // k, x.shape[2] // k, 5)).astype(np.float32)
    got, types = _block_gradient(sess, x, dy, k, k)
    assert "MaxPoolGradRelu" in types and "MaxPoolGrad" not in types
    np.testing.assert_array_equal(got, _numpy_block_gradient(x, dy, k))


@pytest.mark.parametrize(
    "case",
    ["integer ties", "all negative", "nan input", "inf input", "nan gradient", "inf gradient"],
)
def test_the_fused_pool_gradient_keeps_tfs_rules(sess, case, pool_route):
    x = rng.standard_normal((2, 8, 6, 3)).astype(np.float32)
    dy = rng.standard_normal((2, 4, 3, 3)).astype(np.float32)
    if case == "integer ties":  # positive windows with equal maxima: first one wins
        x = rng.integers(-1, 3, x.shape).astype(np.float32)
    elif case == "all negative":
        x = -np.abs(x) - 1
    elif case == "nan input":
        x[0, 1, 1, 0] = np.nan
    elif case == "inf input":
        x[1, 4, 3, 1] = np.inf
    elif case == "nan gradient":
        dy[1, 2, 0, 2] = np.nan
    else:
        dy[0, 0, 0, 0] = np.inf
    got, types = _block_gradient(sess, x, dy)
    assert "MaxPoolGradRelu" in types
    attrs = {**POOL_2X2, "data_format": "NHWC"}
    a = np.maximum(x, 0)
    y = _kernel("MaxPool", attrs)(a)
    with np.errstate(invalid="ignore"):  # inf * 0 is NaN here, as in TF's kernel
        unfused = _kernel("ReluGrad", {})(_kernel("MaxPoolGrad", attrs)(a, y, dy), a)
    np.testing.assert_array_equal(got, unfused)
    if case not in ("nan input", "inf input"):
        np.testing.assert_array_equal(got, _numpy_block_gradient(x, dy, 2))


@pytest.mark.parametrize("channels", [8, 16, 32])
def test_tied_maxima_in_2x2_windows_resolve_exactly_in_the_fused_kernel(sess, channels, pool_route):
    # A blank background: equal positive ReLU outputs, every window of them tied; and
    # small integers, ties of every pattern (two, three or four equal maxima).
    x = rng.integers(-1, 3, (3, 8, 10, channels)).astype(np.float32)
    x[0, :4, :6, :] = 0.75
    dy = rng.standard_normal((3, 4, 5, channels)).astype(np.float32)
    got, types = _block_gradient(sess, x, dy)
    assert "MaxPoolGradRelu" in types
    np.testing.assert_array_equal(got, _numpy_block_gradient(x, dy, 2))
    attrs = {**POOL_2X2, "data_format": "NHWC"}
    a = np.maximum(x, 0)
    y = _kernel("MaxPool", attrs)(a)
    fused = _kernel("MaxPoolGradRelu", attrs)
    for _ in range(2):  # the masks made for the first call serve the second
        np.testing.assert_array_equal(fused(a, y, dy, a), got)


@pytest.mark.parametrize(
    "ksize,stride,padding,shape",
    [(2, 2, "SAME", (2, 7, 5, 3)), (2, 2, "VALID", (2, 7, 5, 3)), (3, 2, "SAME", (2, 8, 8, 3))],
)
def test_windows_that_do_not_tile_take_the_unfused_path_with_the_same_values(
    sess, ksize, stride, padding, shape
):
    x = rng.standard_normal(shape).astype(np.float32)
    a = np.maximum(x, 0)
    attrs = {
        "ksize": [1, ksize, ksize, 1],
        "strides": [1, stride, stride, 1],
        "padding": padding,
        "data_format": "NHWC",
    }
    y = _kernel("MaxPool", attrs)(a)
    dy = rng.standard_normal(y.shape).astype(np.float32)
    got, types = _block_gradient(sess, x, dy, ksize, stride, padding)
    assert "MaxPoolGradRelu" in types
    unfused = _kernel("ReluGrad", {})(_kernel("MaxPoolGrad", attrs)(a, y, dy), a)
    np.testing.assert_array_equal(got, unfused)


def test_the_fused_kernel_with_other_features_applies_both_gradients_in_turn():
    attrs = {**POOL_2X2, "data_format": "NHWC"}
    x = np.abs(rng.standard_normal((2, 4, 4, 3))).astype(np.float32)
    features = rng.standard_normal(x.shape).astype(np.float32)
    y = _kernel("MaxPool", attrs)(x)
    dy = rng.standard_normal(y.shape).astype(np.float32)
    got = _kernel("MaxPoolGradRelu", attrs)(x, y, dy, features)
    want = _kernel("MaxPoolGrad", attrs)(x, y, dy) * (features > 0)
    np.testing.assert_array_equal(got, want)


def test_a_batch_unknown_cnn_gradient_has_no_sum_like_and_fuses_both_pairs(sess):
    x = tf.placeholder(tf.float32, [None, 12, 12, 1])
    h = tf.layers.conv2d(x, 4, 3, padding="same", activation=tf.nn.relu)
    h = tf.layers.max_pooling2d(h, 2, 2)
    loss = tf.reduce_sum(tf.square(tf.layers.dense(tf.layers.flatten(h), 2)))
    grads = tf.gradients(loss, tf.trainable_variables())
    sess.run(tf.global_variables_initializer())
    value = rng.standard_normal((5, 12, 12, 1)).astype(np.float32)
    types = sess.compiled_plan(grads, {x: value}).call_types
    assert {"Conv2DBiasAddRelu", "MaxPoolGradRelu", "BiasAddGrad"} <= set(types)
    # Only the dense layer's input gradient keeps one (a MatMul's rows are the batch's,
    # which the shape rules do not follow); the conv block's gradients need none.
    assert types.count("SumLike") == 1


# --- against TF1 ----------------------------------------------------------------------------
@pytest.mark.tf
@pytest.mark.parametrize("ties", [False, True])
def test_a_conv_bias_relu_pool_block_and_its_gradients_match_tf1(ties, pool_route):
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    from dataflow.testing.tf_parity import assert_parity_on_constants

    images = rng.random((6, 12, 12, 2), dtype=np.float32)
    if ties:  # equal inputs: equal positive conv outputs, tied maxima in the pools
        images = np.round(images * 2) / 2
    kernel = np.linspace(-0.3, 0.4, 3 * 3 * 2 * 4, dtype=np.float32).reshape(3, 3, 2, 4)
    bias = np.float32([0.1, -0.2, 0.0, 0.3])

    def program(lib, x, w, b):
        h = lib.nn.relu(lib.nn.bias_add(lib.nn.conv2d(x, w, [1, 1, 1, 1], "SAME"), b))
        pooled = lib.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
        dense = lib.nn.relu(lib.nn.bias_add(lib.reshape(pooled, [6, -1]), lib.ones([144]) * 0.01))
        loss = lib.reduce_sum(lib.square(dense - 0.1))
        if ties:
            # Which of tied maxima takes the gradient is the CPU kernel's choice (TF's
            # differs between CPUs: on an AMD EPYC it is not the first). What does not
            # depend on it: the values, and the bias gradient (a tied pair has the same
            # conv output, so moving the gradient between them keeps each channel's sum).
            return [pooled, loss, *lib.gradients(loss, [b])]
        return [pooled, loss, *lib.gradients(loss, [x, w, b])]

    assert_parity_on_constants(tf1, program, images, kernel, bias, rtol=1e-5, atol=1e-5)


def test_the_fused_types_are_not_graph_ops():
    from dataflow.ops.build import apply_op

    with tf.Graph().as_default():
        x = tf.constant(np.ones((1, 2, 2, 1), np.float32))
        for fused, inputs in [("BiasAddRelu", [x, [1.0]]), ("MaxPoolGradRelu", [x, x, x, x])]:
            with pytest.raises(TypeError, match="made by the plan compiler"):
                apply_op(fused, inputs)
