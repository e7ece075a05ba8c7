"""``tf.layers`` 3-D convolutions and pooling and ``SeparableConv1D`` against
``tensorflow.compat.v1.layers``: the same programs make variables of the same names and
shapes; given TF's initial values, they compute the same outputs and the same training
steps, and refuse the same bad inputs; ``InputSpec`` holds what TF's holds."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow

pytestmark = [
    pytest.mark.tf,
    pytest.mark.filterwarnings("ignore::UserWarning"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]

tf1 = pytest.importorskip("tensorflow.compat.v1")
if not hasattr(tf1, "layers") or not hasattr(tf1.layers, "dense"):
    pytest.skip("tensorflow.compat.v1.layers needs tf-keras", allow_module_level=True)

RNG = np.random.default_rng(3)
VOLUMES = RNG.normal(size=(2, 6, 5, 6, 2)).astype(np.float32)
SEQUENCES = RNG.normal(size=(3, 9, 4)).astype(np.float32)


def volumes(tf):
    x = tf.placeholder(tf.float32, [None, 6, 5, 6, 2], name="x")
    h = tf.layers.conv3d(x, 3, 3, padding="same", activation=tf.nn.relu)
    h = tf.layers.max_pooling3d(h, 2, 2, padding="same")
    h = tf.layers.Conv3D(4, [2, 1, 2], strides=(1, 2, 1), name="second")(h)
    h = tf.layers.average_pooling3d(h, [2, 1, 2], 1)
    up = tf.layers.conv3d_transpose(h, 2, [2, 3, 2], strides=2, padding="same")
    up_valid = tf.layers.Conv3DTranspose(1, 2, strides=(1, 2, 1), padding="valid")(h)
    pooled = tf.layers.MaxPooling3D(2, 1)(up) + tf.layers.AveragePooling3D(2, 1)(up)
    loss = tf.reduce_mean(tf.square(pooled)) + tf.reduce_mean(up_valid)
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    return {x: VOLUMES}, [h, up, up_valid, loss], [train]


def separable_1d(tf):
    x = tf.placeholder(tf.float32, [None, 9, 4], name="x")
    h = tf.layers.separable_conv1d(x, 3, 3, padding="same", depth_multiplier=2)
    h = tf.layers.SeparableConv1D(2, 2, strides=2, activation=tf.tanh, name="sep")(h)
    h = tf.layers.separable_conv1d(h, 2, 2, dilation_rate=2, padding="same", use_bias=False)
    loss = tf.reduce_sum(tf.square(h))
    train = tf.train.GradientDescentOptimizer(0.05).minimize(loss)
    return {x: SEQUENCES}, [h, loss], [train]


PROGRAMS = {"volumes": volumes, "separable_1d": separable_1d}


def run(tf, program, initial=None, steps=2):
    with tf.Graph().as_default():
        feed_values, fetches, trains = program(tf)
        variables = {v.name: v for v in tf.global_variables()}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            if initial is not None:
                for name, value in initial.items():
                    variables[name].load(value, sess)
            start = {name: sess.run(v) for name, v in variables.items()}
            before = sess.run(fetches, feed_values)
            static = [t.shape.as_list() for t in fetches]
            for _ in range(steps):
                sess.run(trains, feed_values)
            after = {name: sess.run(v) for name, v in variables.items()}
        shapes = {name: tuple(v.shape.as_list()) for name, v in variables.items()}
    return shapes, start, before, static, after


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_matches_tf(name):
    program = PROGRAMS[name]
    their_shapes, initial, their_before, their_static, their_after = run(tf1, program)
    our_shapes, _, our_before, our_static, our_after = run(dataflow, program, initial)
    assert our_shapes == their_shapes
    assert our_static == their_static
    for ours, theirs in zip(our_before, their_before, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-5)
    for key in their_after:
        np.testing.assert_allclose(
            our_after[key], their_after[key], rtol=1e-4, atol=1e-5, err_msg=key
        )


def _error_class(tf, build):
    with tf.Graph().as_default():
        try:
            build(tf)
        except Exception as exc:
            return type(exc).__name__
    return None


@pytest.mark.parametrize(
    "build",
    [
        lambda tf: tf.layers.conv3d(tf.zeros([2, 5, 5, 3]), 2, 3),
        lambda tf: tf.layers.conv3d(tf.zeros([2, 5, 5, 5, 3]), 2, [3, 3]),
        lambda tf: tf.layers.separable_conv1d(tf.zeros([2, 5, 5, 3]), 2, 3),
        lambda tf: tf.layers.conv3d(tf.placeholder(tf.float32, [2, 5, 5, 5, None]), 2, 3),
        lambda tf: [tf.layers.conv3d(tf.zeros([1, 3, 3, 3, 1]), 1, 1, name="c") for _ in "ab"],
    ],
    ids=["conv3d_rank", "kernel_size_length", "separable_rank", "unknown_channels", "twice"],
)
def test_bad_input_raises_tf1s_error_class(build):
    ours = _error_class(dataflow, build)
    assert ours is not None and ours == _error_class(tf1, build)


def test_input_spec():
    for tf in (tf1, dataflow):
        spec = tf.layers.InputSpec(dtype="float32", shape=[None, 3, 4], axes={-1: 4})
        assert (spec.ndim, spec.shape, spec.axes, spec.dtype) == (
            3,
            (None, 3, 4),
            {-1: 4},
            "float32",
        )
        loose = tf.layers.InputSpec(min_ndim=2, max_ndim=4)
        assert (loose.ndim, loose.min_ndim, loose.max_ndim) == (None, 2, 4)
        with pytest.raises(ValueError):
            tf.layers.InputSpec(ndim=2, axes={3: 1})
