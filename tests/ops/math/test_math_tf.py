"""TF1 parity for the math family: the same programs, run with ``import dataflow as tf``
and with ``tensorflow.compat.v1``, give the same values, dtypes, shapes and gradients
(float32 within 1e-5, as API.md promises)."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow
from dataflow.testing.tf_parity import assert_parity_on_constants

pytestmark = pytest.mark.tf
tf1 = pytest.importorskip("tensorflow.compat.v1")

rng = np.random.default_rng(7)


def _assert_parity(program, *inputs, rtol=1e-5, atol=1e-6):
    assert_parity_on_constants(tf1, program, *inputs, rtol=rtol, atol=atol)


def _f32(*shape, low=-2.0, high=2.0):
    return rng.uniform(low, high, shape).astype(np.float32)


def test_elementwise_values_and_gradients():
    def program(tf, x, y, p):
        outs = [
            x + y,
            x - y,
            x * y,
            x / y,
            x // y,
            x % y,
            -x,
            abs(x),
            x**2.0,
            p**y,
            tf.sign(x),
            tf.square(x),
            tf.sqrt(p),
            tf.rsqrt(p),
            tf.exp(x),
            tf.log(p),
            tf.log1p(p),
            tf.sin(x),
            tf.cos(x),
            tf.tan(x * 0.5),
            tf.tanh(x),
            tf.sigmoid(x),
            tf.erf(x),
            tf.floor(x),
            tf.ceil(x),
            tf.round(x * 3.0),
            tf.reciprocal(y),
            tf.maximum(x, y),
            tf.minimum(x, y),
            tf.squared_difference(x, y),
            tf.div_no_nan(x, y - y),
            tf.clip_by_value(x, -0.5, 0.7),
            tf.math.expm1(x),
        ]
        loss = tf.add_n(
            [
                tf.reduce_sum(o)
                for o in outs
                if o.dtype == tf.float32 and o.op.type not in ("Floor", "Ceil", "Round", "FloorDiv")
            ]
        )
        return outs + tf.gradients(loss, [x, y, p])

    _assert_parity(
        program,
        _f32(3, 4),
        _f32(4, low=0.5, high=2.0),
        _f32(3, 4, low=0.5, high=2.0),
        rtol=2e-5,
        atol=1e-5,
    )


def test_comparisons_logical_where_cast():
    def program(tf, x, y):
        b1, b2 = x > 0, y < 0.5
        return [
            x < y,
            x <= y,
            x > y,
            x >= y,
            tf.equal(x, x),
            tf.not_equal(x, y),
            b1 & b2,
            b1 | b2,
            b1 ^ b2,
            ~b1,
            tf.logical_xor(b1, b2),
            tf.where(b1),
            tf.where(b1, x, y + 0.0 * x),
            tf.where(b1[:, 0], x, -x),
            tf.cast(x * 3.0, tf.int32),
            tf.cast(b1, tf.float64),
            tf.to_int64(x),
            tf.is_finite(x),
            tf.is_nan(x),
        ]

    _assert_parity(program, _f32(4, 3), _f32(3))


def test_integer_arithmetic():
    def program(tf, a, b):
        return [
            a // b,
            a % b,
            a / b,
            tf.div(a, b),
            tf.truediv(a, b),
            a * b - a,
            -a,
            tf.abs(a),
            tf.maximum(a, b),
            tf.reduce_mean(a, 1),
            tf.reduce_sum(a, 0),
            tf.reduce_prod(b),
            tf.argmax(a, 1),
            tf.argmin(a, 0, output_type=tf.int32),
            tf.cast(a, tf.float32) / 3.0,
            tf.count_nonzero(a, 1),
        ]

    a = np.array([[7, -7, 0, 5], [-3, 3, 9, -9]], np.int32)
    b = np.array([2, -2, 3, -4], np.int32)
    _assert_parity(program, a, b)


@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions_values_and_gradients(keepdims):
    def program(tf, x):
        outs = []
        for axis in [None, 0, -1, [0, 2], [1, -1], []]:
            outs += [
                tf.reduce_sum(x, axis, keepdims=keepdims),
                tf.reduce_mean(x, axis, keepdims=keepdims),
                tf.reduce_max(x, axis, keepdims=keepdims),
                tf.reduce_min(x, axis, keepdims=keepdims),
                tf.reduce_prod(x, axis, keepdims=keepdims),
                tf.reduce_logsumexp(x, axis, keepdims=keepdims),
                tf.reduce_all(x > -1.5, axis, keepdims=keepdims),
                tf.reduce_any(x > 1.5, axis, keepdims=keepdims),
            ]
        loss = tf.add_n([tf.reduce_sum(o * o) for o in outs if o.dtype == tf.float32])
        return outs + tf.gradients(loss, x) + [tf.argmax(x, 2), tf.argmin(x, -1)]

    _assert_parity(program, _f32(2, 3, 4, low=0.5, high=1.5), rtol=3e-5, atol=1e-5)


def test_reduction_gradients_with_ties_and_zeros():
    def program(tf, x):
        return [
            tf.gradients(tf.reduce_max(x, 1), x)[0],
            tf.gradients(tf.reduce_min(x), x)[0],
            tf.gradients(tf.reduce_prod(x, 1), x)[0],
            tf.gradients(tf.reduce_prod(x, 0), x)[0],
        ]

    x = np.array([[1.0, 3.0, 3.0], [0.0, 2.0, 2.0], [0.0, 0.0, -1.0]], np.float32)
    _assert_parity(program, x)


def test_logistic_regression_step():
    def program(tf, x, labels, w):
        logits = tf.reduce_sum(x * w, 1)
        p = tf.sigmoid(logits)
        loss = -tf.reduce_mean(labels * tf.log(p) + (1.0 - labels) * tf.log(1.0 - p))
        (gw,) = tf.gradients(loss, w)
        return [
            loss,
            gw,
            w - 0.1 * gw,
            tf.reduce_mean(tf.cast(tf.equal(tf.cast(p > 0.5, tf.float32), labels), tf.float32)),
        ]

    x = _f32(16, 5)
    labels = (rng.random(16) < 0.5).astype(np.float32)
    _assert_parity(program, x, labels, _f32(5, low=-0.5, high=0.5))


def test_static_shapes_match_tf():
    def shapes(tf):
        x = tf.placeholder(tf.float32, [None, 3, 4])
        axis = tf.placeholder(tf.int32, [1])
        ts = [
            tf.reduce_sum(x, 1),
            tf.reduce_mean(x, [0, 2], keepdims=True),
            tf.reduce_max(x, axis),
            tf.reduce_max(x, axis, keepdims=True),
            tf.argmax(x, 1),
            tf.where(x > 0),
            x + tf.ones([4]),
            tf.where(x > 0, x, tf.zeros_like(x)),
            tf.reduce_logsumexp(x, -1),
            tf.cast(x, tf.int64),
        ]
        return [
            (
                t.dtype.name,
                None
                if t.shape.rank is None
                else tuple(
                    d if isinstance(d, int) or d is None else d.value for d in t.shape.as_list()
                ),
            )
            for t in ts
        ]

    ours = shapes(dataflow)
    with tf1.Graph().as_default():
        theirs = shapes(tf1)
    assert ours == theirs
