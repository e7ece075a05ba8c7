"""conv2d, max_pool, avg_pool and their gradient ops, against ``autograd.numpy``
references written here as sums over kernel offsets (not im2col), finite differences,
and (in ``test_nn_tf.py``) TensorFlow 1.

Each case is checked to second order, and the gradient ops themselves (reached through
``tf.gradients``) are checked to second order too, so third derivatives of conv2d and
the MaxPoolGrad/MaxPoolGradGrad and AvgPoolGrad/AvgPool pairs are exercised.
"""

from __future__ import annotations

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dataflow as tf
from dataflow.ops.nn.conv import conv2d as nn_conv
from dataflow.ops.nn.conv import fourier as conv_fourier
from dataflow.ops.nn.conv import geometry as conv_geometry
from dataflow.testing.grad_check import check_forward, check_op
from dataflow.testing.tf_parity import assert_parity_on_constants

# Pools are piecewise linear: their exact second derivatives are zero, and autograd warns
# that its second derivative "seems independent of input" (it is, and so is ours).
pytestmark = pytest.mark.filterwarnings("ignore:Output seems independent of input")


# --- references ----------------------------------------------------------------------------
def _geom(size: int, k: int, s: int, d: int, padding: str) -> tuple[int, int, int]:
    keff = (k - 1) * d + 1
    if padding == "VALID":
        return (size - keff) // s + 1, 0, 0
    out = -(-size // s)
    total = max((out - 1) * s + keff - size, 0)
    return out, total // 2, total - total // 2


def _patches(x, kh, kw, s, d, padding, fill=0.0):
    """Yields (i, j, patch) with patch[n, oh, ow, c] = xpad[n, oh*s + i*d, ow*s + j*d, c]."""
    _, h, w, _ = x.shape
    ho, pt, pb = _geom(h, kh, s, d, padding)
    wo, pl, pr = _geom(w, kw, s, d, padding)
    xpad = anp.pad(x, ((0, 0), (pt, pb), (pl, pr), (0, 0)), mode="constant", constant_values=fill)
    for i in range(kh):
        for j in range(kw):
            rows = slice(i * d, i * d + s * (ho - 1) + 1, s)
            cols = slice(j * d, j * d + s * (wo - 1) + 1, s)
            yield i, j, xpad[:, rows, cols, :]


def ref_conv2d(x, w, s, padding, d=1):
    kh, kw = w.shape[:2]
    out = 0.0
    for i, j, patch in _patches(x, kh, kw, s, d, padding):
        out = out + anp.tensordot(patch, w[i, j], axes=([3], [0]))
    return out


def _hw(k):
    return (k, k) if isinstance(k, int) else tuple(k)


def ref_max_pool(x, k, s, padding):
    kh, kw = _hw(k)
    return anp.max(
        anp.stack([p for _, _, p in _patches(x, kh, kw, s, 1, padding, -np.inf)]), axis=0
    )


def ref_avg_pool(x, k, s, padding):
    kh, kw = _hw(k)
    total = sum(p for _, _, p in _patches(x, kh, kw, s, 1, padding))
    ones = np.ones(x.shape[:3] + (1,))
    counts = sum(p for _, _, p in _patches(ones, kh, kw, s, 1, padding))
    return total / counts


def _vjp(f, x_shape):
    """x -> the vjp of the linear-in-x map f at any point (autograd, nested-safe)."""
    return lambda *rest: autograd.grad(lambda x: anp.sum(f(x, *rest[:-1]) * rest[-1]))(
        np.zeros(x_shape)
    )


rng = np.random.default_rng(1)

# (height, width, kernel h, kernel w, stride, padding, dilation)
CONV_CASES = [
    (5, 6, 3, 3, 1, "SAME", 1),
    (5, 6, 3, 3, 1, "VALID", 1),
    (7, 5, 3, 2, 2, "SAME", 1),
    (7, 7, 3, 3, 2, "VALID", 1),
    (6, 6, 2, 2, 2, "SAME", 1),
    (5, 5, 1, 1, 1, "VALID", 1),
    (7, 6, 3, 3, 1, "SAME", 2),
    (8, 7, 2, 3, 1, "VALID", 2),
]


def _ids(cases):
    return ["x".join(map(str, c[:4])) + f"-s{c[4]}-{c[5]}-d{c[6]}" for c in cases]


@pytest.mark.parametrize("h,w,kh,kw,s,padding,d", CONV_CASES, ids=_ids(CONV_CASES))
def test_conv2d(h, w, kh, kw, s, padding, d):
    x = rng.standard_normal((2, h, w, 3))
    f = rng.standard_normal((kh, kw, 3, 2))
    check_op(
        lambda a, b: tf.nn.conv2d(
            a, b, strides=[1, s, s, 1], padding=padding, dilations=[1, d, d, 1]
        ),
        lambda a, b: ref_conv2d(a, b, s, padding, d),
        [x, f],
    )


@pytest.mark.parametrize("h,w,kh,kw,s,padding,d", CONV_CASES[:5], ids=_ids(CONV_CASES[:5]))
def test_conv2d_backprop_input(h, w, kh, kw, s, padding, d):
    """Conv2DBackpropInput (through tf.gradients) to second order in (filter, dy)."""
    x_shape = (2, h, w, 3)
    f = rng.standard_normal((kh, kw, 3, 2))
    ho, wo = _geom(h, kh, s, d, padding)[0], _geom(w, kw, s, d, padding)[0]
    dy = rng.standard_normal((2, ho, wo, 2))

    def build(b, g):
        x = tf.constant(np.zeros(x_shape))
        return tf.gradients(tf.nn.conv2d(x, b, strides=s, padding=padding), x, grad_ys=g)[0]

    ref = _vjp(lambda x, b: ref_conv2d(x, b, s, padding), x_shape)
    check_op(build, ref, [f, dy])


@pytest.mark.parametrize("h,w,kh,kw,s,padding,d", CONV_CASES[:5], ids=_ids(CONV_CASES[:5]))
def test_conv2d_backprop_filter(h, w, kh, kw, s, padding, d):
    """Conv2DBackpropFilter to second order in (input, dy)."""
    x = rng.standard_normal((2, h, w, 3))
    f_shape = (kh, kw, 3, 2)
    ho, wo = _geom(h, kh, s, d, padding)[0], _geom(w, kw, s, d, padding)[0]
    dy = rng.standard_normal((2, ho, wo, 2))

    def build(a, g):
        return nn_conv.conv2d_backprop_filter(a, list(f_shape), g, strides=s, padding=padding)

    def ref(a, g):
        return autograd.grad(lambda b: anp.sum(ref_conv2d(a, b, s, padding) * g))(np.zeros(f_shape))

    check_op(build, ref, [x, dy])


def test_conv2d_backprop_input_builder():
    f = rng.standard_normal((3, 3, 2, 4))
    dy = rng.standard_normal((1, 3, 3, 4))
    ref = _vjp(lambda x, b: ref_conv2d(x, b, 2, "SAME"), (1, 5, 5, 2))
    check_forward(
        lambda b, g: nn_conv.conv2d_backprop_input([1, 5, 5, 2], b, g, strides=2, padding="SAME"),
        ref,
        [f, dy],
    )


def test_conv2d_transpose():
    """conv2d_transpose(value, filter[h, w, out, in]) is the adjoint of conv2d."""
    f = rng.standard_normal((3, 3, 2, 4))
    dy = rng.standard_normal((2, 3, 4, 4))
    ref = _vjp(lambda x, b: ref_conv2d(x, b, 2, "SAME"), (2, 6, 7, 2))
    check_op(
        lambda g, b: tf.nn.conv2d_transpose(g, b, [2, 6, 7, 2], strides=[1, 2, 2, 1]),
        lambda g, b: ref(b, g),
        [dy, f],
    )
    with pytest.raises(ValueError, match="channels"):
        tf.nn.conv2d_transpose(
            tf.zeros([1, 3, 3, 5]), tf.zeros([3, 3, 2, 4]), [1, 6, 6, 2], strides=2
        )


@pytest.mark.parametrize("fmt", ["NWC", "NCW"])
def test_conv1d(fmt):
    x = rng.standard_normal((2, 9, 3))
    f = rng.standard_normal((3, 3, 4))

    def ref(a, b):
        return ref_conv2d(a[:, None], b[None], 2, "SAME", 1)[:, 0]

    if fmt == "NWC":
        check_op(lambda a, b: tf.nn.conv1d(a, b, stride=2, padding="SAME"), ref, [x, f])
    else:
        check_op(
            lambda a, b: tf.transpose(
                tf.nn.conv1d(
                    tf.transpose(a, [0, 2, 1]), b, stride=2, padding="SAME", data_format="NCW"
                ),
                [0, 2, 1],
            ),
            ref,
            [x, f],
        )


def test_conv2d_nchw_matches_nhwc():
    x = rng.standard_normal((2, 6, 5, 3))
    f = rng.standard_normal((3, 3, 3, 4))
    check_op(
        lambda a, b: tf.transpose(
            tf.nn.conv2d(
                tf.transpose(a, [0, 3, 1, 2]),
                b,
                strides=[1, 1, 2, 2],
                padding="SAME",
                data_format="NCHW",
            ),
            [0, 2, 3, 1],
        ),
        lambda a, b: ref_conv2d(a, b, 2, "SAME"),
        [x, f],
    )


def test_conv2d_explicit_padding():
    x = rng.standard_normal((1, 4, 5, 2))
    f = rng.standard_normal((3, 2, 2, 3))

    def ref(a, b):
        a = anp.pad(a, ((0, 0), (2, 0), (1, 3), (0, 0)), mode="constant")
        return ref_conv2d(a, b, 1, "VALID")

    check_op(
        lambda a, b: tf.nn.conv2d(a, b, strides=1, padding=[[0, 0], [2, 0], [1, 3], [0, 0]]),
        ref,
        [x, f],
    )


def test_conv2d_static_shapes_and_unknown_dims():
    x = tf.placeholder(tf.float32, [None, 7, None, 3])
    y = tf.nn.conv2d(x, tf.zeros([3, 3, 3, 8]), strides=[1, 2, 2, 1], padding="SAME")
    assert y.shape.as_list() == [None, 4, None, 8]
    y = tf.nn.conv2d(x, tf.zeros([3, 3, 3, 8]), strides=2, padding="VALID")
    assert y.shape.as_list() == [None, 3, None, 8]
    g = tf.gradients(tf.reduce_sum(y), x)[0]
    direct = nn_conv.conv2d_backprop_input(
        tf.shape(x), tf.zeros([3, 3, 3, 8]), y, strides=2, padding="VALID"
    )
    assert direct.shape.as_list() == [None, 7, None, 3]
    with tf.Session() as sess:
        out = sess.run(g, {x: np.ones((2, 7, 9, 3), np.float32)})
    assert out.shape == (2, 7, 9, 3)


def test_conv2d_errors():
    x = tf.zeros([1, 5, 5, 3])
    with pytest.raises(ValueError, match="depth"):
        tf.nn.conv2d(x, tf.zeros([3, 3, 4, 2]), strides=1, padding="SAME")
    with pytest.raises(ValueError, match="larger"):
        tf.nn.conv2d(x, tf.zeros([6, 6, 3, 2]), strides=1, padding="VALID")
    with pytest.raises(ValueError, match="padding"):
        tf.nn.conv2d(x, tf.zeros([3, 3, 3, 2]), strides=1, padding="FULL")
    with pytest.raises(ValueError, match="batch and depth"):
        tf.nn.conv2d(x, tf.zeros([3, 3, 3, 2]), strides=[2, 1, 1, 1], padding="SAME")
    with pytest.raises(ValueError, match="rank 4"):
        tf.nn.conv2d(tf.zeros([5, 5, 3]), tf.zeros([3, 3, 3, 2]), strides=1, padding="SAME")
    with pytest.raises(TypeError):
        tf.nn.conv2d(
            tf.zeros([1, 5, 5, 3], tf.int32),
            tf.zeros([3, 3, 3, 2], tf.int32),
            strides=1,
            padding="SAME",
        )


# (height, width, window, stride, padding)
POOL_CASES = [
    (5, 6, 2, 2, "SAME"),
    (5, 6, 2, 2, "VALID"),
    (5, 5, 3, 1, "SAME"),
    (6, 7, 3, 2, "SAME"),
    (7, 7, 3, 2, "VALID"),
    (4, 4, 1, 1, "VALID"),
]
POOL_IDS = [f"{h}x{w}-k{k}-s{s}-{p}" for h, w, k, s, p in POOL_CASES]


@pytest.mark.parametrize("h,w,k,s,padding", POOL_CASES, ids=POOL_IDS)
def test_max_pool(h, w, k, s, padding):
    x = rng.standard_normal((2, h, w, 3))
    check_op(
        lambda a: tf.nn.max_pool(a, [1, k, k, 1], [1, s, s, 1], padding),
        lambda a: ref_max_pool(a, k, s, padding),
        [x],
    )


@pytest.mark.parametrize("h,w,k,s,padding", POOL_CASES, ids=POOL_IDS)
def test_max_pool_grad_op(h, w, k, s, padding):
    """MaxPoolGrad to second order in the routed gradient (MaxPoolGradGrad, then
    MaxPoolGrad again). No gradient flows to the pooled input: the routing is piecewise
    constant in it."""
    x = rng.standard_normal((2, h, w, 3))
    ho, wo = _geom(h, k, s, 1, padding)[0], _geom(w, k, s, 1, padding)[0]
    dy = rng.standard_normal((2, ho, wo, 3))

    def build(a, g):
        return tf.gradients(tf.nn.max_pool(a, k, s, padding), a, grad_ys=g)[0]

    def ref(a, g):
        return autograd.grad(lambda z: anp.sum(ref_max_pool(z, k, s, padding) * g))(a)

    check_op(build, ref, [x, dy], wrt=[1])


@pytest.mark.parametrize("h,w,k,s,padding", POOL_CASES, ids=POOL_IDS)
def test_avg_pool(h, w, k, s, padding):
    x = rng.standard_normal((2, h, w, 3))
    check_op(
        lambda a: tf.nn.avg_pool(a, [1, k, k, 1], [1, s, s, 1], padding),
        lambda a: ref_avg_pool(a, k, s, padding),
        [x],
    )


@pytest.mark.parametrize("h,w,k,s,padding", POOL_CASES[:4], ids=POOL_IDS[:4])
def test_avg_pool_grad_op(h, w, k, s, padding):
    """AvgPoolGrad (and through it AvgPool again) to second order."""
    shape = (2, h, w, 3)
    ho, wo = _geom(h, k, s, 1, padding)[0], _geom(w, k, s, 1, padding)[0]
    dy = rng.standard_normal((2, ho, wo, 3))

    def build(g):
        x = tf.constant(np.zeros(shape))
        return tf.gradients(tf.nn.avg_pool(x, k, s, padding), x, grad_ys=g)[0]

    check_op(build, _vjp(lambda z: ref_avg_pool(z, k, s, padding), shape), [dy])


def test_pools_nchw_and_unequal_windows():
    x = rng.standard_normal((2, 7, 6, 3))
    for pool, ref in ((tf.nn.max_pool, ref_max_pool), (tf.nn.avg_pool, ref_avg_pool)):
        check_op(
            lambda a, pool=pool: tf.transpose(
                pool(
                    tf.transpose(a, [0, 3, 1, 2]),
                    [1, 1, 3, 3],
                    [1, 1, 2, 2],
                    "SAME",
                    data_format="NCHW",
                ),
                [0, 2, 3, 1],
            ),
            lambda a, ref=ref: ref(a, 3, 2, "SAME"),
            [x],
        )
    y = tf.nn.max_pool(tf.zeros([1, 6, 9, 2]), [1, 2, 3, 1], [1, 2, 3, 1], "VALID")
    assert y.shape.as_list() == [1, 3, 3, 2]
    y = tf.nn.max_pool2d(tf.zeros([1, 6, 9, 2]), 2, 2, "SAME")
    assert y.shape.as_list() == [1, 3, 5, 2]
    y = tf.nn.avg_pool2d(tf.zeros([1, 6, 9, 2]), [3, 3], [1, 2], "VALID")
    assert y.shape.as_list() == [1, 4, 4, 2]


def test_max_pool_ties_route_to_first_maximum(sess):
    """TF's rule: the gradient goes to the first maximal element of the window."""
    x = tf.constant(np.ones((1, 2, 2, 1), np.float32))
    g = tf.gradients(tf.nn.max_pool(x, 2, 2, "VALID"), x)[0]
    np.testing.assert_array_equal(sess.run(g)[0, :, :, 0], [[1, 0], [0, 0]])


def test_max_pool_grad_routes_nan_to_the_maximum_only(sess):
    """A non-finite upstream gradient reaches only the routed element (TF), in both
    MaxPoolGrad and MaxPoolGradGrad."""
    x = tf.constant(np.arange(16.0).reshape(1, 4, 4, 1))
    dy = tf.constant(np.array([np.nan, 1.0, 2.0, np.inf]).reshape(1, 2, 2, 1))
    g = tf.gradients(tf.nn.max_pool(x, 2, 2, "VALID"), x, grad_ys=dy)[0]
    want = np.zeros((4, 4))
    want[1, 1], want[1, 3], want[3, 1], want[3, 3] = np.nan, 1.0, 2.0, np.inf
    np.testing.assert_array_equal(sess.run(g)[0, :, :, 0], want)
    gg = tf.gradients(
        g, dy, grad_ys=tf.constant(np.where(np.isnan(want), np.nan, 1.0).reshape(1, 4, 4, 1))
    )[0]
    np.testing.assert_array_equal(sess.run(gg).ravel(), [np.nan, 1.0, 1.0, 1.0])


def test_max_pool_integer_input(sess):
    x = np.arange(-20, 16, dtype=np.int32).reshape(1, 6, 6, 1)
    y = sess.run(tf.nn.max_pool(tf.constant(x), 3, 2, "SAME"))
    assert y.dtype == np.int32
    np.testing.assert_array_equal(y, ref_max_pool(x.astype(float), 3, 2, "SAME"))


# --- hypothesis: geometry (static shape == kernel output == reference) ------------------------
geometries = st.tuples(
    st.integers(1, 8),
    st.integers(1, 8),
    st.integers(1, 4),
    st.integers(1, 4),
    st.integers(1, 3),
    st.integers(1, 2),
    st.sampled_from(["SAME", "VALID"]),
)


@settings(max_examples=30, deadline=None)
@given(geometries)
def test_conv2d_geometries(geometry):
    """Any sizes, windows, strides, dilations and paddings: a VALID window larger than
    the input fails at build time; everything else matches the reference, values and
    gradients of input and filter (the backprop ops), with exact static shapes."""
    h, w, kh, kw, s, d, padding = geometry
    x = rng.standard_normal((1, h, w, 2))
    f = rng.standard_normal((kh, kw, 2, 3))
    if padding == "VALID" and ((kh - 1) * d + 1 > h or (kw - 1) * d + 1 > w):
        with pytest.raises(ValueError, match="larger"):
            tf.nn.conv2d(tf.constant(x), f, strides=s, padding=padding, dilations=d)
        return
    check_op(
        lambda a, b: tf.nn.conv2d(a, b, strides=s, padding=padding, dilations=d),
        lambda a, b: ref_conv2d(a, b, s, padding, d),
        [x, f],
        order=1,
    )


@settings(max_examples=30, deadline=None)
@given(geometries)
def test_pool_geometries(geometry):
    h, w, kh, kw, s, _, padding = geometry
    x = rng.standard_normal((1, h, w, 2))
    if padding == "VALID" and (kh > h or kw > w):
        with pytest.raises(ValueError, match="larger"):
            tf.nn.max_pool(tf.constant(x), [kh, kw], s, padding)
        return

    check_op(
        lambda a: tf.nn.max_pool(a, [kh, kw], s, padding),
        lambda a: ref_max_pool(a, (kh, kw), s, padding),
        [x],
        order=1,
    )
    check_op(
        lambda a: tf.nn.avg_pool(a, [kh, kw], s, padding),
        lambda a: ref_avg_pool(a, (kh, kw), s, padding),
        [x],
        order=1,
    )


def test_small_cnn_trains():
    """conv2d + bias_add + relu + max_pool + dropout + dense + sparse softmax loss,
    trained with Adam on a task a CNN solves (which half of the image is brighter)."""
    data = np.random.default_rng(0)
    images = data.standard_normal((64, 8, 8, 1)).astype(np.float32)
    labels = images[:, :4].sum(axis=(1, 2, 3)) > images[:, 4:].sum(axis=(1, 2, 3))
    x = tf.placeholder(tf.float32, [None, 8, 8, 1])
    y = tf.placeholder(tf.int32, [None])
    w1 = tf.get_variable("w1", [3, 3, 1, 4], initializer=tf.glorot_uniform_initializer(seed=1))
    b1 = tf.Variable(tf.zeros([4]))
    h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, w1, 1, "SAME"), b1))
    h = tf.nn.dropout(tf.nn.max_pool(h, 2, 2, "SAME"), rate=0.1, seed=2)
    w2 = tf.get_variable("w2", [64, 2], initializer=tf.glorot_uniform_initializer(seed=3))
    logits = tf.matmul(tf.reshape(h, [-1, 64]), w2)
    loss = tf.losses.sparse_softmax_cross_entropy(y, logits) + 1e-4 * tf.nn.l2_loss(w1)
    train = tf.train.AdamOptimizer(0.05).minimize(loss)
    feed = {x: images, y: labels.astype(np.int32)}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(loss, feed)
        for _ in range(100):
            sess.run(train, feed)
        last = sess.run(loss, feed)
    assert last < 0.2 * first


# --- fast paths against TF1 ------------------------------------------------------------------
def _tf1():
    return pytest.importorskip("tensorflow.compat.v1")


def _takes_fourier_route(x_shape, f_shape, padding) -> bool:
    mode, explicit = conv_geometry.padding_attrs(padding, "NHWC")
    attrs = {
        "strides": [1, 1, 1, 1],
        "padding": mode,
        "explicit_paddings": explicit,
        "data_format": "NHWC",
        "dilations": [1, 1, 1, 1],
    }
    g = conv_geometry.geometry_cache(conv_geometry.params(attrs))(x_shape, *f_shape[:2])
    return conv_fourier.fourier_pays(g, *f_shape[2:])


def _conv_and_gradients(x, f, stride, padding):
    def program(tf, a, b, dy):
        y = tf.nn.conv2d(a, b, strides=[1, stride, stride, 1], padding=padding)
        return [y, *tf.gradients(y, [a, b], grad_ys=dy)]

    return program


@pytest.mark.tf
@pytest.mark.parametrize(
    "padding",
    ["SAME", "VALID", [[0, 0], [1, 3], [2, 0], [0, 0]]],
    ids=["same", "valid", "explicit"],
)
def test_fourier_route_matches_tf1(padding):
    """Conv2D and both backprop ops through the Fourier domain (the geometry is checked
    to take that route), float32, against TF1's kernels: within float32 rounding of sums
    of 800 products."""
    x = rng.standard_normal((2, 14, 12, 32)).astype(np.float32)
    f = rng.standard_normal((5, 5, 32, 48)).astype(np.float32)
    assert _takes_fourier_route(x.shape, f.shape, padding)
    y_shape = tf.nn.conv2d(tf.zeros(x.shape), f, strides=1, padding=padding).shape.as_list()
    dy = rng.standard_normal(y_shape).astype(np.float32)
    assert_parity_on_constants(
        _tf1(), _conv_and_gradients(x, f, 1, padding), x, f, dy, rtol=1e-4, atol=1e-3
    )


@pytest.mark.tf
@pytest.mark.parametrize("stride,padding", [(1, "SAME"), (2, "SAME"), (1, "VALID"), (2, "VALID")])
def test_one_channel_im2col_matches_tf1(stride, padding):
    """One input channel: the tap-major im2col of Conv2D and Conv2DBackpropFilter."""
    x = rng.standard_normal((3, 11, 9, 1)).astype(np.float32)
    f = rng.standard_normal((5, 5, 1, 6)).astype(np.float32)
    y_shape = tf.nn.conv2d(tf.zeros(x.shape), f, strides=stride, padding=padding).shape.as_list()
    dy = rng.standard_normal(y_shape).astype(np.float32)
    assert_parity_on_constants(
        _tf1(), _conv_and_gradients(x, f, stride, padding), x, f, dy, rtol=1e-4, atol=1e-4
    )


def test_the_compiled_2x2_max_pool_keeps_numpys_maximum_rule(monkeypatch):
    """NaNs, infinities and zeros of both signs in every position of a window: the
    compiled pass and the numpy path give the same values (``maximum`` over rows, then
    over columns: NaN wins). Which zero a tie of -0.0 and 0.0 gives is numpy's loop's
    choice (its SIMD and scalar loops differ), so zeros compare as equal values."""
    from dataflow.framework import registry
    from dataflow.ops.nn import compiled_pools

    if compiled_pools.MAX_2X2.compiled() is None:
        pytest.skip("numba is not installed")

    class Host:
        xp = np

    special = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0], np.float32)
    data = np.random.default_rng(5)
    x = special[data.integers(0, special.size, (3, 16, 16, 9))]
    attrs = {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1], "padding": "VALID"}
    attrs["data_format"] = "NHWC"
    outs = []
    for threshold in (0, 1 << 62):
        monkeypatch.setattr(compiled_pools, "COMPILED_FROM", threshold)
        outs.append(registry.lookup("MaxPool").kernel(Host, attrs)(x).copy())
    rows = [np.maximum(x[:, 0::2, j::2], x[:, 1::2, j::2]) for j in (0, 1)]
    want = np.maximum(rows[0], rows[1])
    for out in outs:
        np.testing.assert_array_equal(out, want)  # NaN where NaN, -0.0 equal to 0.0


@pytest.mark.tf
@pytest.mark.parametrize(
    "shape,k,padding",
    [
        ((2, 8, 6, 16), 2, "VALID"),
        ((2, 7, 9, 8), 2, "VALID"),
        ((2, 7, 9, 8), 2, "SAME"),
        ((1, 8, 7, 3), 3, "SAME"),
        ((1, 9, 6, 5), (3, 2), "VALID"),
    ],
)
def test_tiling_max_pool_matches_tf1_on_ties(shape, k, padding, pool_route):
    """ksize == strides (the tile path): values and MaxPoolGrad against TF1 on a ReLU'd
    input rounded to a few levels, so most windows hold ties (routed to the first)."""
    x = np.maximum(np.round(rng.standard_normal(shape)), 0).astype(np.float32)

    def program(tf, a):
        y = tf.nn.max_pool(a, k, k, padding)
        dy = tf.reshape(tf.range(1.0, 1.0 + tf.cast(tf.size(y), tf.float32)), tf.shape(y))
        return [y, tf.gradients(y, a, grad_ys=dy)[0]]

    assert_parity_on_constants(_tf1(), program, x, rtol=0, atol=0)


# --- Conv2DBackpropInputFilter: both gradients of a Fourier-route Conv2D as one op ----------
def _conv_grad_graph(static: bool, fmt: str, shape: tuple, f: np.ndarray):
    """x (a placeholder: static spatial dims or not), and the first and second
    derivatives of ``sum(conv2d(x, f) ** 2 / 2)``-like programs through tf.gradients."""
    spatial = (
        shape[1:]
        if static
        else ((None, None, shape[3]) if fmt == "NHWC" else (shape[1], None, None))
    )
    x = tf.placeholder(tf.float32, [None, *spatial])
    w = tf.constant(f)
    y = tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME", data_format=fmt)
    dy = tf.sin(y)  # an output gradient that depends on x and w
    gx, gw = tf.gradients(y, [x, w], grad_ys=dy)
    second = tf.gradients(tf.reduce_sum(gx * gx) + tf.reduce_sum(gw * gw), [x, w])
    return x, [gx, gw, *second]


@pytest.mark.parametrize("fmt", ["NHWC", "NCHW"])
def test_backprop_input_filter_op_equals_the_two_ops(fmt):
    """With static spatial shapes that take the Fourier route, Conv2D's gradient is one
    Conv2DBackpropInputFilter op; without them, TF1's two ops. First and second
    derivatives agree to float32 rounding (the input gradient bit for bit: the same
    transforms)."""
    data = np.random.default_rng(11)
    shape = (3, 14, 12, 32) if fmt == "NHWC" else (3, 32, 14, 12)
    xv = data.standard_normal(shape).astype(np.float32)
    fv = (0.1 * data.standard_normal((5, 5, 32, 48))).astype(np.float32)
    results, types = [], []
    for static in (True, False):
        with tf.Graph().as_default() as graph:
            x, fetches = _conv_grad_graph(static, fmt, shape, fv)
            types.append({op.type for op in graph.get_operations()})
            with tf.Session() as sess:
                results.append(sess.run(fetches, {x: xv}))
    assert "Conv2DBackpropInputFilter" in types[0]
    assert "Conv2DBackpropInputFilter" not in types[1] and "Conv2DBackpropFilter" in types[1]
    combined, separate = results
    # The input gradient: the same transforms and products on the same data, bit for bit.
    np.testing.assert_array_equal(combined[0], separate[0])
    # The filter gradient: conj(conj(X)^T @ DY) against X^T @ conj(DY), equal in exact
    # arithmetic but rounded differently where BLAS fuses multiply-adds (CPU-dependent);
    # like the second derivatives, within a few FFT roundings (log2(P*Q) ~ 9 levels of
    # float32's 1.2e-7) of the largest value, with a 10x margin.
    for a, b in zip(combined[1:], separate[1:]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5 * np.abs(b).max())


def test_backprop_input_filter_kernel_off_the_fourier_route():
    """The kernel runs the two ops' kernels for a shape that does not take the route
    (the cost count says no): their values, bit for bit."""
    from types import SimpleNamespace

    from dataflow.framework import registry

    data = np.random.default_rng(12)
    x = data.standard_normal((2, 6, 5, 3)).astype(np.float32)
    f = data.standard_normal((3, 3, 3, 4)).astype(np.float32)
    dy = data.standard_normal((2, 6, 5, 4)).astype(np.float32)
    attrs = {
        "strides": [1, 1, 1, 1],
        "padding": "SAME",
        "explicit_paddings": (),
        "dilations": [1, 1, 1, 1],
        "data_format": "NHWC",
    }
    assert not _takes_fourier_route(x.shape, f.shape, "SAME")
    ctx = SimpleNamespace(xp=np, op_name="")  # what these kernels read of a context

    def kernel(op_type):
        return registry.lookup(op_type).kernel(ctx, attrs)

    dx, df = kernel("Conv2DBackpropInputFilter")(x, f, dy)
    np.testing.assert_array_equal(dx, kernel("Conv2DBackpropInput")(x.shape, f, dy))
    np.testing.assert_array_equal(df, kernel("Conv2DBackpropFilter")(x, f.shape, dy))


@pytest.mark.tf
def test_fourier_route_separate_backprop_ops_match_tf1():
    """conv2d_backprop_input / conv2d_backprop_filter built directly (TF1's two ops),
    through the Fourier domain, against TF1's kernels."""
    x = rng.standard_normal((2, 14, 12, 32)).astype(np.float32)
    f = rng.standard_normal((5, 5, 32, 48)).astype(np.float32)
    dy = rng.standard_normal((2, 14, 12, 48)).astype(np.float32)
    assert _takes_fourier_route(x.shape, f.shape, "SAME")

    def program(tf, a, b, d):
        return [
            tf.nn.conv2d_backprop_input([2, 14, 12, 32], b, d, [1, 1, 1, 1], "SAME"),
            tf.nn.conv2d_backprop_filter(a, [5, 5, 32, 48], d, [1, 1, 1, 1], "SAME"),
        ]

    assert_parity_on_constants(_tf1(), program, x, f, dy, rtol=1e-4, atol=1e-3)


@pytest.mark.tf
def test_fourier_route_second_derivatives_match_tf1():
    """Second derivatives through Conv2DBackpropInputFilter's gradient, against TF1's."""
    x = rng.standard_normal((2, 14, 12, 32)).astype(np.float32)
    f = (0.1 * rng.standard_normal((5, 5, 32, 48))).astype(np.float32)

    def program(tf, a, b):
        y = tf.nn.conv2d(a, b, [1, 1, 1, 1], "SAME")
        gx, gw = tf.gradients(y, [a, b], grad_ys=tf.sin(y))
        return tf.gradients(tf.reduce_sum(gx * gx) + tf.reduce_sum(gw * gw), [a, b])

    # The results reach ~2e4 and are sums of large terms of both signs: atol is ~2.5e-5
    # of that scale (float32 rounding of both libraries' transforms and sums).
    assert_parity_on_constants(_tf1(), program, x, f, rtol=1e-4, atol=0.5)
