"""3-D convolution and pooling (``tf.nn.conv3d``, ``conv3d_transpose``,
``conv3d_backprop_filter(_v2)``, ``max_pool3d``, ``avg_pool3d``) against
``tensorflow.compat.v1``: values, gradients (first and second order), static shapes and
build-time errors; gradients also against finite differences in float64."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow
from dataflow.testing.tf_parity import assert_parity_on_constants

pytestmark = [
    pytest.mark.tf,
    pytest.mark.filterwarnings("ignore::UserWarning"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]
tf1 = pytest.importorskip("tensorflow.compat.v1")

rng = np.random.default_rng(7)


def _f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


CONV = [
    ((2, 5, 6, 4, 3), (3, 2, 3, 3, 4), [1, 1, 1, 1, 1], "SAME"),
    ((2, 5, 6, 4, 3), (3, 2, 3, 3, 4), [1, 2, 1, 2, 1], "SAME"),
    ((1, 6, 5, 5, 2), (2, 3, 2, 2, 3), [1, 2, 2, 1, 1], "VALID"),
    ((2, 4, 4, 4, 2), (1, 1, 1, 2, 5), [1, 3, 1, 2, 1], "VALID"),
]


@pytest.mark.parametrize("x_shape,f_shape,strides,padding", CONV)
def test_conv3d_values_and_gradients(x_shape, f_shape, strides, padding):
    def program(tf, x, f):
        y = tf.nn.conv3d(x, f, strides=strides, padding=padding)
        loss = tf.reduce_sum(y * y)
        gx, gf = tf.gradients(loss, [x, f])
        # second order: the gradient of a function of the first gradients
        gg = tf.gradients(tf.reduce_sum(gx * gx) + tf.reduce_sum(gf * gf), [x, f])
        return [y, gx, gf, *gg]

    # float64: second order values reach 1e6 and cancel
    x, f = (rng.standard_normal(s) for s in (x_shape, f_shape))
    assert_parity_on_constants(tf1, program, x, f, rtol=1e-9, atol=1e-8)


def test_conv3d_ncdhw_and_dilations_against_the_ndhwc_reference():
    # TF's CPU kernels take neither NCDHW nor dilations: the reference is NDHWC over a
    # filter with the holes written out as zeros.
    x, f = _f32(2, 7, 6, 7, 2), _f32(2, 2, 3, 2, 3)
    dil = np.zeros((3, 3, 5, 2, 3), np.float32)
    dil[::2, ::2, ::2] = f
    with tf1.Graph().as_default():
        ref = tf1.nn.conv3d(x, dil, [1, 1, 2, 1, 1], "SAME")
        gref = tf1.gradients(tf1.reduce_sum(ref * ref), [ref.op.inputs[0]])
        with tf1.Session() as sess:
            want, gwant = sess.run([ref, gref[0]])
    with dataflow.Graph().as_default():
        xc = dataflow.constant(np.transpose(x, (0, 4, 1, 2, 3)))
        y = dataflow.nn.conv3d(
            xc, f, [1, 1, 1, 2, 1], "SAME", data_format="NCDHW", dilations=[1, 1, 2, 2, 2]
        )
        assert y.shape.as_list() == [2, 3, 7, 3, 7]
        gx = dataflow.gradients(dataflow.reduce_sum(y * y), [xc])[0]
        with dataflow.Session() as sess:
            got, ggot = sess.run([y, gx])
    np.testing.assert_allclose(got, np.transpose(want, (0, 4, 1, 2, 3)), atol=1e-4)
    np.testing.assert_allclose(ggot, np.transpose(gwant, (0, 4, 1, 2, 3)), atol=1e-3)


def test_conv3d_transpose_and_backprop_filter():
    def program(tf, v, f, x, dy):
        t = tf.nn.conv3d_transpose(v, f, [2, 5, 6, 4, 3], strides=[1, 2, 2, 2, 1])
        fs = [2, 3, 2, 3, 4]
        bf = tf.nn.conv3d_backprop_filter(x, fs, dy, [1, 2, 1, 2, 1], "VALID")
        bf2 = tf.nn.conv3d_backprop_filter_v2(x, fs, dy, [1, 2, 1, 2, 1], "VALID")
        loss = tf.reduce_sum(t * t) + tf.reduce_sum(bf * bf2)
        return [t, bf, bf2, *tf.gradients(loss, [v, f, x, dy])]

    assert_parity_on_constants(
        tf1,
        program,
        _f32(2, 3, 3, 2, 4),
        _f32(3, 3, 3, 3, 4),
        _f32(2, 5, 6, 4, 3),
        _f32(2, 2, 4, 2, 4),
        rtol=1e-4,
        atol=1e-3,
    )


POOL = [
    ([1, 2, 2, 2, 1], [1, 2, 2, 2, 1], "VALID"),
    ([1, 2, 3, 2, 1], [1, 2, 2, 1, 1], "SAME"),
    ([1, 3, 3, 3, 1], [1, 1, 1, 1, 1], "SAME"),
    ([1, 1, 3, 2, 1], [1, 1, 2, 3, 1], "VALID"),
]


@pytest.mark.parametrize("ksize,strides,padding", POOL)
def test_pool3d_values_and_gradients(ksize, strides, padding):
    def program(tf, x, w):
        mp = tf.nn.max_pool3d(x, ksize, strides, padding)
        ap = tf.nn.avg_pool3d(x, ksize, strides, padding)
        loss = tf.reduce_sum(mp * mp * w) + tf.reduce_sum(ap * ap * w)
        gx = tf.gradients(loss, x)[0]
        return [mp, ap, gx, tf.gradients(tf.reduce_sum(gx * gx), x)[0]]

    x = _f32(2, 5, 6, 4, 3)
    with tf1.Graph().as_default():
        shape = tf1.nn.max_pool3d(x, ksize, strides, padding).shape.as_list()
    assert_parity_on_constants(tf1, program, x, _f32(*shape), rtol=1e-5, atol=1e-4)


def test_max_pool3d_gradient_goes_to_every_tied_maximum():
    def program(tf, x):
        y = tf.nn.max_pool3d(x, [1, 2, 1, 1, 1], [1, 1, 1, 1, 1], "VALID")
        return [y, tf.gradients(y, x)[0]]

    x = np.array([1, 3, 3, 2, 3], np.float32).reshape(1, 5, 1, 1, 1)
    assert_parity_on_constants(tf1, program, x)


def test_pool3d_ncdhw_matches_ndhwc():
    x = _f32(2, 3, 5, 4, 6)  # NCDHW
    with dataflow.Graph().as_default():
        xc = dataflow.constant(x)
        xl = dataflow.transpose(xc, [0, 2, 3, 4, 1])
        outs = []
        for pool in (dataflow.nn.max_pool3d, dataflow.nn.avg_pool3d):
            a = pool(xc, [1, 1, 2, 3, 2], [1, 1, 2, 2, 2], "SAME", data_format="NCDHW")
            b = pool(xl, [1, 2, 3, 2, 1], [1, 2, 2, 2, 1], "SAME")
            assert a.shape.as_list() == [2, 3, 3, 2, 3]
            ga = dataflow.gradients(dataflow.reduce_sum(a * a), xc)[0]
            gb = dataflow.gradients(dataflow.reduce_sum(b * b), xc)[0]
            outs += [a, dataflow.transpose(b, [0, 4, 1, 2, 3]), ga, gb]
        with dataflow.Session() as sess:
            got = sess.run(outs)
    for i in range(0, len(got), 2):
        np.testing.assert_allclose(got[i], got[i + 1], rtol=1e-6, atol=1e-6)


def _numeric_grad(f, x, eps=1e-6):
    g = np.zeros_like(x)
    flat, gflat = x.reshape(-1), g.reshape(-1)
    for i in range(flat.size):
        old = flat[i]
        flat[i] = old + eps
        up = f(x)
        flat[i] = old - eps
        down = f(x)
        flat[i] = old
        gflat[i] = (up - down) / (2 * eps)
    return g


def test_gradients_against_finite_differences_float64():
    x0, f0 = rng.standard_normal((1, 3, 4, 3, 2)), rng.standard_normal((2, 2, 2, 2, 2))
    with dataflow.Graph().as_default():
        x = dataflow.placeholder(dataflow.float64, x0.shape)
        f = dataflow.placeholder(dataflow.float64, f0.shape)
        y = dataflow.nn.conv3d(x, f, [1, 2, 1, 1, 1], "SAME")
        p = (
            dataflow.nn.avg_pool3d(y, 2, 1, "SAME")
            + dataflow.nn.max_pool3d(y, 2, 1, "VALID")[:, :1, :1, :1]
        )
        loss = dataflow.reduce_sum(dataflow.sin(p))
        gx, gf = dataflow.gradients(loss, [x, f])
        with dataflow.Session() as sess:

            def value(xv, fv):
                return sess.run(loss, {x: xv, f: fv})

            got_x, got_f = sess.run([gx, gf], {x: x0, f: f0})
            want_x = _numeric_grad(lambda v: value(v, f0), x0.copy())
            want_f = _numeric_grad(lambda v: value(x0, v), f0.copy())
    np.testing.assert_allclose(got_x, want_x, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(got_f, want_f, rtol=1e-6, atol=1e-7)


def test_static_shapes_with_unknown_batch():
    for tf in (tf1, dataflow):
        with tf.Graph().as_default():
            x = tf.placeholder(tf.float32, [None, 5, 6, 4, 3])
            f = tf.zeros([3, 2, 3, 3, 4])
            shapes = [
                tf.nn.conv3d(x, f, [1, 2, 1, 2, 1], "SAME").shape.as_list(),
                tf.nn.conv3d(x, f, [1, 1, 2, 1, 1], "VALID").shape.as_list(),
                tf.nn.max_pool3d(x, [1, 2, 2, 2, 1], [1, 2, 2, 2, 1], "VALID").shape.as_list(),
                tf.nn.avg_pool3d(x, [1, 3, 1, 2, 1], [1, 2, 3, 1, 1], "SAME").shape.as_list(),
            ]
        if tf is tf1:
            want = shapes
        else:
            assert shapes == want


@pytest.mark.parametrize(
    "build",
    [
        lambda tf: tf.nn.conv3d(
            tf.zeros([1, 4, 4, 4, 2]), tf.zeros([2, 2, 2, 3, 1]), [1] * 5, "SAME"
        ),
        lambda tf: tf.nn.conv3d(tf.zeros([1, 4, 4, 4, 2]), tf.zeros([2, 2, 2, 1]), [1] * 5, "SAME"),
        lambda tf: tf.nn.conv3d(tf.zeros([1, 4, 4, 2]), tf.zeros([2, 2, 2, 2, 1]), [1] * 5, "SAME"),
        lambda tf: tf.nn.conv3d(
            tf.zeros([1, 2, 4, 4, 2]), tf.zeros([3, 2, 2, 2, 1]), [1] * 5, "VALID"
        ),
        lambda tf: tf.nn.max_pool3d(tf.zeros([1, 4, 4, 2]), [1, 2, 2, 2, 1], [1] * 5, "SAME"),
    ],
)
def test_build_time_errors_match_tf(build):
    with tf1.Graph().as_default(), pytest.raises(ValueError):
        build(tf1)
    with dataflow.Graph().as_default(), pytest.raises(ValueError):
        build(dataflow)


def test_integer_input_is_a_type_error():
    with dataflow.Graph().as_default():
        with pytest.raises(TypeError):
            dataflow.nn.conv3d(
                dataflow.zeros([1, 2, 2, 2, 1], dataflow.int32),
                dataflow.zeros([1, 1, 1, 1, 1], dataflow.int32),
                [1] * 5,
                "SAME",
            )
        with pytest.raises(TypeError):
            dataflow.nn.avg_pool3d(dataflow.zeros([1, 2, 2, 2, 1], dataflow.int32), 1, 1, "SAME")


def test_pooling_over_the_batch_is_refused_at_build_time():
    # TF refuses it when the kernel runs; here it is known while building.
    with dataflow.Graph().as_default(), pytest.raises(ValueError, match="batch"):
        dataflow.nn.max_pool3d(
            dataflow.zeros([1, 4, 4, 4, 2]), [1, 2, 2, 2, 1], [2, 2, 2, 2, 1], "SAME"
        )
