"""TF1's N-D convolution and pooling wrappers (``tf.nn.convolution``,
``conv_transpose``, ``conv1d_transpose``, ``atrous_conv2d_transpose``,
``with_space_to_batch``, ``pool``, ``max_pool1d``/``avg_pool1d``,
``max_pool_v2``/``avg_pool_v2``) and the native depthwise names
(``depthwise_conv2d_native`` and its backprops) against ``tensorflow.compat.v1``:
values, gradients, static shapes, build-time errors."""

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

rng = np.random.default_rng(11)


def _f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def _parity(program, *inputs, atol=1e-4):
    assert_parity_on_constants(tf1, program, *inputs, rtol=1e-4, atol=atol)


@pytest.mark.parametrize(
    "x_shape,f_shape,strides,dilation,padding",
    [
        ((2, 9, 3), (3, 3, 4), [2], None, "SAME"),
        ((2, 9, 3), (3, 3, 4), None, [2], "VALID"),
        ((2, 7, 8, 3), (3, 2, 3, 4), [2, 1], None, "SAME"),
        ((2, 7, 8, 3), (3, 2, 3, 4), None, [2, 3], "SAME"),
        ((1, 5, 6, 4, 2), (2, 3, 2, 2, 3), [1, 2, 2], None, "VALID"),
    ],
)
def test_convolution_by_rank(x_shape, f_shape, strides, dilation, padding):
    def program(tf, x, f):
        y = tf.nn.convolution(x, f, padding, strides=strides, dilation_rate=dilation)
        return [y, *tf.gradients(tf.reduce_sum(y * y), [x, f])]

    _parity(program, _f32(*x_shape), _f32(*f_shape), atol=1e-3)


def test_conv_transposes():
    def program(tf, v1, f1, v2, f2, v3, f3, va, fa):
        t1 = tf.nn.conv1d_transpose(v1, f1, [2, 9, 3], 2, "SAME")
        t1v = tf.nn.conv_transpose(v1, f1, [2, 11, 3], [2], "VALID")
        t2 = tf.nn.conv_transpose(v2, f2, [2, 7, 8, 3], [1, 2, 2, 1])
        t3 = tf.nn.conv_transpose(v3, f3, [1, 5, 6, 4, 2], 2, "SAME")
        ta = tf.nn.atrous_conv2d_transpose(va, fa, [2, 7, 8, 3], 2, "SAME")
        tav = tf.nn.atrous_conv2d_transpose(va, fa, [2, 9, 10, 3], 2, "VALID")
        outs = [t1, t1v, t2, t3, ta, tav]
        loss = tf.add_n([tf.reduce_sum(t * t) for t in outs])
        return outs + tf.gradients(loss, [v1, f1, v2, f2, v3, f3, va, fa])

    _parity(
        program,
        _f32(2, 5, 4),
        _f32(3, 3, 4),
        _f32(2, 4, 4, 5),
        _f32(3, 2, 3, 5),
        _f32(1, 3, 3, 2, 4),
        _f32(2, 2, 2, 2, 4),
        _f32(2, 7, 8, 4),
        _f32(2, 2, 3, 4),
        atol=1e-3,
    )


POOLS = [
    (2, 2, "VALID", None),
    (3, 2, "SAME", None),
    (3, 1, "VALID", 2),
    (2, 1, "VALID", 2),
]


@pytest.mark.parametrize("window,stride,padding,dilation", POOLS)
@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("kind", ["MAX", "AVG"])
def test_pool(kind, n, window, stride, padding, dilation):
    shape = [2, 7, 6, 5][: n + 1] + [3]

    def program(tf, x):
        y = tf.nn.pool(
            x,
            [window] * n,
            kind,
            padding,
            strides=[stride] * n,
            dilation_rate=None if dilation is None else [dilation] * n,
        )
        return [y, tf.gradients(tf.reduce_sum(y * y), x)[0]]

    _parity(program, _f32(*shape))


def test_pool_channels_first_matches_channels_last():
    x = _f32(2, 3, 7, 6)
    with dataflow.Graph().as_default():
        a = dataflow.nn.pool(x, [3, 2], "MAX", "VALID", dilation_rate=[2, 1], data_format="NCHW")
        b = dataflow.nn.pool(
            np.transpose(x, (0, 2, 3, 1)), [3, 2], "MAX", "VALID", dilation_rate=[2, 1]
        )
        # TF's CPU kernels take no channels-first pooling: compared with channels last
        c = dataflow.nn.max_pool1d(x[:, :, :, 0], 2, 1, "VALID", data_format="NCW")
        d = dataflow.nn.max_pool1d(np.transpose(x[:, :, :, 0], (0, 2, 1)), 2, 1, "VALID")
        with dataflow.Session() as sess:
            got_a, got_b, got_c, got_d = sess.run([a, b, c, d])
    np.testing.assert_allclose(got_a, np.transpose(got_b, (0, 3, 1, 2)))
    np.testing.assert_allclose(got_c, np.transpose(got_d, (0, 2, 1)))


def test_pool1d_and_v2():
    def program(tf, x1, x2, x3):
        outs = [
            tf.nn.max_pool1d(x1, 3, 2, "SAME"),
            tf.nn.avg_pool1d(x1, [1, 2, 1], [1, 2, 1], "VALID"),
            tf.nn.max_pool_v2(x1, 2, 2, "SAME"),
            tf.nn.avg_pool_v2(x2, [2, 3], [1, 2], "SAME"),
            tf.nn.max_pool_v2(x2, 2, 2, "VALID", data_format="NHWC"),
            tf.nn.avg_pool_v2(x3, 2, [1, 2, 1, 2, 1], "VALID"),
        ]
        loss = tf.add_n([tf.reduce_sum(t * t) for t in outs])
        return outs + tf.gradients(loss, [x1, x2, x3])

    _parity(program, _f32(2, 9, 3), _f32(2, 6, 7, 3), _f32(1, 4, 5, 6, 2))


def test_with_space_to_batch():
    def program(tf, x, f):
        def op(converted, num_spatial_dims, padding):
            assert num_spatial_dims == 2
            return tf.nn.conv2d(converted, f, [1, 1, 1, 1], padding)

        same = tf.nn.with_space_to_batch(x, [2, 3], "SAME", op, filter_shape=[3, 2])
        valid = tf.nn.with_space_to_batch(x, [2, 2], "VALID", op)
        plain = tf.nn.with_space_to_batch(x, [1, 1], "SAME", op)
        outs = [same, valid, plain]
        loss = tf.add_n([tf.reduce_sum(t * t) for t in outs])
        return outs + tf.gradients(loss, [x, f])

    _parity(program, _f32(2, 9, 8, 3), _f32(3, 2, 3, 2), atol=1e-3)


def test_depthwise_native_and_backprops():
    def program(tf, x, f, dy, dy2):
        y = tf.nn.depthwise_conv2d_native(x, f, [1, 2, 2, 1], "SAME")
        y2 = tf.nn.depthwise_conv2d_native(x, f, [1, 1, 1, 1], "VALID")
        bi = tf.nn.depthwise_conv2d_native_backprop_input([2, 7, 6, 3], f, dy, [1, 2, 2, 1], "SAME")
        bf = tf.nn.depthwise_conv2d_native_backprop_filter(
            x, [3, 2, 3, 2], dy, [1, 2, 2, 1], "SAME"
        )
        bi2 = tf.nn.depthwise_conv2d_backprop_input([2, 7, 6, 3], f, dy2, [1, 1, 1, 1], "VALID")
        bf2 = tf.nn.depthwise_conv2d_backprop_filter(x, [3, 2, 3, 2], dy2, [1, 1, 1, 1], "VALID")
        outs = [y, y2, bi, bf, bi2, bf2]
        loss = tf.add_n([tf.reduce_sum(t * t) for t in outs])
        return outs + tf.gradients(loss, [x, f])

    _parity(
        program, _f32(2, 7, 6, 3), _f32(3, 2, 3, 2), _f32(2, 4, 3, 6), _f32(2, 5, 5, 6), atol=1e-3
    )


def test_static_shapes_with_unknown_batch():
    def shapes(tf):
        with tf.Graph().as_default():
            x1 = tf.placeholder(tf.float32, [None, 9, 3])
            x2 = tf.placeholder(tf.float32, [None, 7, 8, 3])
            return [
                t.shape.as_list()
                for t in (
                    tf.nn.convolution(x1, tf.zeros([3, 3, 4]), "SAME", strides=[2]),
                    tf.nn.convolution(x2, tf.zeros([3, 2, 3, 4]), "VALID", dilation_rate=[2, 2]),
                    tf.nn.pool(x2, [3, 3], "AVG", "VALID", dilation_rate=[2, 2]),
                    tf.nn.max_pool1d(x1, 2, 2, "VALID"),
                    tf.nn.avg_pool_v2(x2, 2, 2, "SAME"),
                    tf.nn.depthwise_conv2d_native(x2, tf.zeros([2, 2, 3, 2]), [1, 2, 2, 1], "SAME"),
                )
            ]

    assert shapes(dataflow) == shapes(tf1)


@pytest.mark.parametrize(
    "build",
    [
        lambda tf: tf.nn.convolution(
            tf.zeros([1, 8, 8, 2]),
            tf.zeros([2, 2, 2, 1]),
            "SAME",
            strides=[2, 2],
            dilation_rate=[2, 2],
        ),
        lambda tf: tf.nn.pool(tf.zeros([1, 8, 8, 2]), [2, 2], "MIN", "SAME"),
        lambda tf: tf.nn.pool(tf.zeros([1, 8, 8, 2]), [2, 2], "MAX", "SAME", dilation_rate=[2, 1]),
        lambda tf: tf.nn.pool(
            tf.zeros([1, 8, 8, 2]), [2, 2], "MAX", "SAME", strides=[2, 2], dilation_rate=[2, 2]
        ),
        lambda tf: tf.nn.atrous_conv2d_transpose(
            tf.zeros([1, 4, 4, 2]), tf.zeros([2, 2, 3, 2]), [1, 4, 4, 3], 0, "SAME"
        ),
        lambda tf: tf.nn.atrous_conv2d_transpose(
            tf.zeros([1, 4, 4, 2]), tf.zeros([2, 2, 3, 5]), [1, 4, 4, 3], 2, "SAME"
        ),
        lambda tf: tf.nn.with_space_to_batch(
            tf.zeros([1, 4, 4, 2]), [2, 2], "SAME", lambda x, n, p: x
        ),
    ],
)
def test_build_time_errors_match_tf(build):
    with tf1.Graph().as_default(), pytest.raises(ValueError):
        build(tf1)
    with dataflow.Graph().as_default(), pytest.raises(ValueError):
        build(dataflow)
