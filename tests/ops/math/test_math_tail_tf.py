"""TF1 parity for issue 32's long tail of ``tf.math`` beyond the op table's rows: the
composites (``polyval``, ``lbeta``, ``log_sigmoid``, ``cumulative_logsumexp``, ...) with
their gradients, the guarded ops at their guards (``xlogy(0, 0)``, ``multiply_no_nan(inf,
0)``), ``igamma``'s gradient in ``a`` against TF's and finite differences, the
namespaces' aliases, and errors at build time."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sp

import dataflow
from dataflow.testing.tf_parity import assert_parity_on_constants

pytestmark = pytest.mark.tf
tf1 = pytest.importorskip("tensorflow.compat.v1")

rng = np.random.default_rng(11)


def _grads(tf, outs, xs):
    total = tf.add_n([tf.reduce_sum(o * (1.0 + 0.1 * k)) for k, o in enumerate(outs)])
    return [g for g in tf.gradients(total, xs) if g is not None]


def test_composites_with_gradients_as_tf():
    x = rng.standard_normal((3, 4)).astype(np.float32)
    p = rng.uniform(0.5, 3.0, (3, 4)).astype(np.float32)

    def program(tf, x, p):
        outs = [
            tf.math.polyval([x, 2.0 * x, tf.ones_like(x)], p),
            tf.math.polyval([3.0], x),
            tf.math.lbeta(p),
            tf.lbeta(p),
            tf.math.log_sigmoid(x * 30.0),
            tf.math.cumulative_logsumexp(x, axis=1),
            tf.math.cumulative_logsumexp(x * 50.0, axis=0, reverse=True),
            tf.math.reduce_euclidean_norm(x, axis=1),
            tf.math.reduce_euclidean_norm(x, keepdims=True),
            tf.math.reciprocal_no_nan(x),
            tf.math.erfcinv(p / 3.1),
            tf.math.accumulate_n([x, p, x]),
            tf.math.softplus(x),
            tf.math.log_softmax(x),
            tf.math.l2_normalize(x, axis=1),
        ]
        return outs + _grads(tf, outs, [x, p])

    assert_parity_on_constants(tf1, program, x, p, rtol=2e-5, atol=2e-5)


def test_non_differentiable_composites_as_tf():
    def program(tf):
        x = tf.constant([[1.0, 0.0, 3.0], [0.0, 0.0, 2.0]])
        return [
            tf.math.is_non_decreasing([1, 2, 2, 5]),
            tf.math.is_non_decreasing(x),
            tf.math.is_strictly_increasing([1.0, 2.0, 2.0]),
            tf.math.is_strictly_increasing([[1, 2], [3, 4]]),
            tf.math.is_strictly_increasing([7]),
            tf.math.zero_fraction(x),
            tf.math.reduce_euclidean_norm(tf.constant([[3, 4], [5, 12]]), axis=1),
            tf.math.cumulative_logsumexp(x, axis=1, exclusive=True),
            tf.math.approx_max_k(x, 2)[0],
            tf.math.approx_max_k(x, 1)[1],
            tf.math.invert_permutation([2, 0, 1]),
            tf.math.unsorted_segment_sum(x, [1, 0], 3),
            tf.math.segment_prod(x, [0, 0]),
            tf.math.nextafter(x, tf.ones_like(x) * 5.0),
        ]

    assert_parity_on_constants(tf1, lambda tf: program(tf), rtol=1e-6, atol=1e-7)


def test_guards_as_tf():
    def program(tf):
        zero = tf.constant([0.0, 0.0, 0.0, 2.0])
        y = tf.constant([0.0, np.inf, np.nan, 3.0])
        inf = tf.constant([np.inf, np.nan, 1.0, 2.0])
        return [
            tf.math.xlogy(zero, y),
            tf.math.xdivy(zero, y),
            tf.math.xlog1py(zero, y - 1.0),
            tf.math.multiply_no_nan(inf, tf.constant([0.0, 0.0, 0.0, 2.0])),
            tf.math.reciprocal_no_nan(zero),
        ]

    assert_parity_on_constants(tf1, lambda tf: program(tf), rtol=1e-6, atol=0)


def test_special_functions_float32_with_gradients_as_tf():
    a = rng.uniform(0.5, 3.0, (2, 3)).astype(np.float32)
    x = rng.uniform(0.2, 3.0, (2, 3)).astype(np.float32)
    u = rng.uniform(0.1, 0.9, (2, 3)).astype(np.float32)

    def program(tf, a, x, u):
        outs = [
            tf.math.igamma(a, x),
            tf.igammac(a, x),
            tf.betainc(a, x, u),
            tf.zeta(a + 1.5, x),
            tf.math.erfinv(u - 0.5),
            tf.math.ndtri(u),
            tf.math.bessel_i0(x),
            tf.math.bessel_i1e(x),
            tf.math.special.bessel_k1(x),
            tf.math.special.bessel_y0(x),
            tf.math.special.dawsn(x),
            tf.math.special.expint(x),
            tf.math.special.fresnel_cos(x),
            tf.math.special.spence(x),
            tf.math.xlogy(a, x),
        ]
        return outs + _grads(tf, outs, [a, x, u])

    assert_parity_on_constants(tf1, program, a, x, u, rtol=2e-4, atol=2e-5)


def test_igamma_gradient_in_a_matches_finite_differences():
    a = rng.uniform(0.3, 6.0, (4, 5))
    x = rng.uniform(0.1, 8.0, (4, 5))
    graph = dataflow.Graph()
    with graph.as_default():
        pa, px = dataflow.placeholder(dataflow.float64), dataflow.placeholder(dataflow.float64)
        grad = dataflow.gradients(dataflow.math.igammac(pa, px), pa)[0]
        with dataflow.Session(graph=graph) as sess:
            got = sess.run(grad, {pa: a, px: x})
    step = 1e-6
    numeric = (sp.gammaincc(a + step, x) - sp.gammaincc(a - step, x)) / (2 * step)
    np.testing.assert_allclose(got, numeric, rtol=1e-6, atol=1e-9)


def test_approx_top_k_on_any_axis_is_exact():
    # TF's CPU kernel takes only the last axis and only max_k: compared with numpy.
    x = rng.standard_normal((4, 6))
    with dataflow.Graph().as_default():
        outs = [
            dataflow.math.approx_max_k(x, 2, reduction_dimension=0),
            dataflow.math.approx_min_k(x, 3),
        ]
        with dataflow.Session() as sess:
            (max_v, max_i), (min_v, min_i) = sess.run(outs)
    np.testing.assert_array_equal(max_i, np.argsort(-x, axis=0)[:2])
    np.testing.assert_array_equal(max_v, -np.sort(-x, axis=0)[:2])
    np.testing.assert_array_equal(min_i, np.argsort(x, axis=1)[:, :3])
    np.testing.assert_array_equal(min_v, np.sort(x, axis=1)[:, :3])


@pytest.mark.parametrize(
    "build, error",
    [
        (lambda tf: tf.math.polyval(tf.constant([1.0, 2.0]), 1.0), ValueError),
        (lambda tf: tf.math.igamma(tf.constant([1, 2]), tf.constant([1, 2])), TypeError),
        (lambda tf: tf.math.bessel_i0(tf.constant([1, 2])), TypeError),
        (lambda tf: tf.math.xlogy(tf.constant([1.0]), tf.constant([1.0], tf.float64)), TypeError),
        (lambda tf: tf.math.accumulate_n([]), ValueError),
        (lambda tf: tf.math.is_non_decreasing(tf.constant(["a", "b"])), TypeError),
    ],
)
def test_build_time_errors_as_tf(build, error):
    for lib in (dataflow, tf1):
        with lib.Graph().as_default():
            with pytest.raises(error):
                build(lib)
