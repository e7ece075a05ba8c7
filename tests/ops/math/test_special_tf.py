"""TF1 parity for ``ops/math/special.py`` beyond the op table's rows: float32 programs with
first and second derivatives, ``rint`` on halves, ``lgamma``/``digamma`` left of zero,
``polygamma``'s order getting no gradient, and integer inputs refused at build time."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow
from dataflow.testing.tf_parity import assert_parity_on_constants

pytestmark = pytest.mark.tf
tf1 = pytest.importorskip("tensorflow.compat.v1")

rng = np.random.default_rng(32)


def _f32(low, high, *shape):
    return rng.uniform(low, high, shape).astype(np.float32)


def test_float32_values_and_gradients_to_second_order():
    # float32 kernels on both sides: within a few ulps of values of order 1..100.
    def program(tf, u, w, p, q):
        outs = [
            tf.asin(u),
            tf.math.acos(u),
            tf.atan(w),
            tf.atan2(u, p),
            tf.sinh(w),
            tf.cosh(w),
            tf.asinh(w),
            tf.acosh(q),
            tf.atanh(u),
            tf.lgamma(p),
            tf.digamma(p),
            tf.math.erfc(w),
            tf.math.polygamma(tf.ones_like(p) * 2.0, p),
        ]
        total = tf.add_n([tf.reduce_sum(o) for o in outs])
        first = tf.gradients(total, [u, w, p, q])
        second = [tf.gradients(g, x)[0] for g, x in zip(first, [u, w, p, q])]
        return outs + first + second

    u, w = _f32(-0.8, 0.8, 2, 3), _f32(-2, 2, 2, 3)
    p, q = _f32(0.5, 4, 2, 3), _f32(1.2, 3, 2, 3)
    assert_parity_on_constants(tf1, program, u, w, p, q, rtol=2e-5, atol=1e-5)


def test_rint_rounds_halves_to_even_as_tf():
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.7, -3.2], np.float32)
    assert_parity_on_constants(tf1, lambda tf, x: [tf.rint(x), tf.math.rint(x)], x, rtol=0)


def test_lgamma_and_digamma_left_of_zero_as_tf():
    x = np.array([-2.5, -1.3, -0.7, 0.2, 7.5], np.float64)

    def program(tf, x):
        return [tf.lgamma(x), tf.digamma(x), tf.gradients(tf.lgamma(x), x)[0]]

    assert_parity_on_constants(tf1, program, x, rtol=1e-10, atol=1e-12)


def test_polygamma_order_and_rint_get_no_gradient():
    for lib in (dataflow, tf1):
        with lib.Graph().as_default():
            n = lib.constant([1.0, 2.0])
            x = lib.constant([0.5, 1.5])
            assert lib.gradients(lib.math.polygamma(n, x), n) == [None]
            assert lib.gradients(lib.math.polygamma(n, x), x)[0] is not None
            assert lib.gradients(lib.rint(x), x) == [None]


@pytest.mark.parametrize("name", ["asin", "acosh", "lgamma", "digamma", "erfc", "rint"])
def test_integer_input_is_a_type_error_naming_the_op(name):
    with dataflow.Graph().as_default():
        with pytest.raises(TypeError, match=f"'{name.capitalize()}'.*floating-point"):
            getattr(dataflow.math, name)(dataflow.constant([1, 2]))


def test_atan2_dtype_mismatch_is_a_type_error():
    with dataflow.Graph().as_default():
        with pytest.raises(TypeError):
            dataflow.atan2(dataflow.constant([1.0]), dataflow.constant([1.0], dataflow.float64))
