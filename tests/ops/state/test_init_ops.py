"""Initializers: shapes, dtypes, statistics, fans, errors, namespaces."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dataflow as tf
from dataflow.ops.state import initializers as init_ops

BIG = [400, 250]  # 100k samples


# --- constant initializers ---------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [tf.float32, tf.float64, tf.int32, tf.int64, tf.bool])
def test_zeros_and_ones(sess, dtype):
    z = tf.zeros_initializer()([2, 3], dtype=dtype)
    o = tf.ones_initializer(dtype=dtype)(tf.TensorShape([4]))
    assert z.dtype == dtype and z.shape.as_list() == [2, 3]
    assert o.dtype == dtype and o.shape.as_list() == [4]
    zv, ov = sess.run([z, o])
    np.testing.assert_array_equal(zv, np.zeros([2, 3], dtype.as_numpy_dtype))
    np.testing.assert_array_equal(ov, np.ones([4], dtype.as_numpy_dtype))
    assert zv.dtype == dtype.as_numpy_dtype and ov.dtype == dtype.as_numpy_dtype


def test_large_fill_is_not_an_embedded_array(sess):
    z = tf.zeros_initializer()([1000, 1000])
    consts = [op for op in tf.get_default_graph().get_operations() if op.type == "Const"]
    assert all(op.attrs["value"].size <= 2 for op in consts)
    assert sess.run(z).shape == (1000, 1000)


def test_zeros_string(sess):
    z = tf.zeros_initializer()([2], dtype=tf.string)
    assert z.dtype == tf.string
    assert list(sess.run(z)) == [b"", b""]


def test_constant_initializer(sess):
    scalar = tf.constant_initializer(2.5)([2, 2])
    padded = tf.constant_initializer([1, 2])([4])
    exact = tf.constant_initializer(np.arange(6), dtype=tf.int32)([2, 3])
    as_float = tf.constant_initializer([[1, 2], [3, 4]])([4], dtype=tf.float64)
    s, p, e, f = sess.run([scalar, padded, exact, as_float])
    np.testing.assert_array_equal(s, np.full([2, 2], 2.5, np.float32))
    np.testing.assert_array_equal(p, np.array([1, 2, 2, 2], np.float32))  # TF1 pads
    np.testing.assert_array_equal(e, np.arange(6, dtype=np.int32).reshape(2, 3))
    np.testing.assert_array_equal(f, np.arange(1, 5, dtype=np.float64))
    with pytest.raises(ValueError, match="Too many elements provided"):
        tf.constant_initializer([1, 2, 3])([2])
    with pytest.raises(TypeError, match="Expected Tensor's shape"):
        tf.constant_initializer([1, 2, 3, 4], verify_shape=True)([2, 2])
    with pytest.raises(TypeError, match="Invalid type for initial value"):
        tf.constant_initializer({"a": 1})


def test_identity_initializer(sess):
    v = sess.run(tf.initializers.identity(gain=2.0)([3, 4]))
    np.testing.assert_array_equal(v, 2.0 * np.eye(3, 4, dtype=np.float32))
    with pytest.raises(ValueError, match="two-dimensional"):
        tf.initializers.identity()([3])


# --- random initializers -------------------------------------------------------------------------
def test_random_normal_initializer(sess):
    x = tf.random_normal_initializer(mean=1.0, stddev=0.5, seed=1)(BIG)
    assert x.dtype == tf.float32 and x.shape.as_list() == BIG
    v = sess.run(x)
    assert abs(v.mean() - 1.0) < 0.01 and abs(v.std() - 0.5) < 0.01


def test_random_uniform_initializer(sess):
    f = sess.run(tf.random_uniform_initializer(-1.0, 2.0, seed=2)(BIG, dtype=tf.float64))
    assert f.dtype == np.float64 and f.min() >= -1 and f.max() < 2
    assert abs(f.mean() - 0.5) < 0.02
    i = sess.run(tf.random_uniform_initializer(0, 5, dtype=tf.int32)([1000]))
    assert i.dtype == np.int32 and set(np.unique(i)) == {0, 1, 2, 3, 4}


def test_truncated_normal_initializer(sess):
    v = sess.run(tf.truncated_normal_initializer(stddev=0.1, seed=3)(BIG))
    assert np.all(np.abs(v) <= 0.2) and abs(v.std() - 0.1 * 0.87962566) < 0.002


@pytest.mark.parametrize("shape", [[300, 200], [3, 3, 16, 32], [5000]])
def test_glorot_uniform_limits(sess, shape):
    fan_in, fan_out = init_ops._compute_fans(shape)
    limit = math.sqrt(6.0 / (fan_in + fan_out))
    v = sess.run(tf.glorot_uniform_initializer(seed=4)(shape))
    assert v.dtype == np.float32 and list(v.shape) == shape
    assert np.all(np.abs(v) <= limit)
    assert np.abs(v).max() > 0.98 * limit
    assert abs(v.std() - limit / math.sqrt(3)) < 0.05 * limit


def test_glorot_normal_spread(sess):
    shape = [3, 3, 64, 64]
    fan_in, fan_out = 9 * 64, 9 * 64
    want_std = math.sqrt(2.0 / (fan_in + fan_out))
    v = sess.run(tf.glorot_normal_initializer(seed=5)(shape))
    # The truncated distribution is scaled so that its own stddev is the target.
    assert abs(v.std() - want_std) < 0.02 * want_std
    assert np.all(np.abs(v) <= 2 * want_std / 0.87962566 + 1e-6)


def test_compute_fans():
    assert init_ops._compute_fans([]) == (1, 1)
    assert init_ops._compute_fans([7]) == (7, 7)
    assert init_ops._compute_fans([3, 5]) == (3, 5)
    assert init_ops._compute_fans([5, 5, 3, 8]) == (75, 200)
    assert init_ops._compute_fans([2, 3, 4, 5, 6]) == (120, 144)


@pytest.mark.parametrize("mode, n", [("fan_in", 100), ("fan_out", 400), ("fan_avg", 250)])
@pytest.mark.parametrize(
    "distribution", ["truncated_normal", "untruncated_normal", "uniform", "normal"]
)
def test_variance_scaling(sess, mode, n, distribution):
    init = tf.variance_scaling_initializer(scale=2.0, mode=mode, distribution=distribution, seed=6)
    v = sess.run(init([100, 400], dtype=tf.float64))
    assert v.dtype == np.float64
    want_std = math.sqrt(2.0 / n)
    assert abs(v.std() - want_std) < 0.03 * want_std
    if distribution == "uniform":
        assert np.all(np.abs(v) <= math.sqrt(3.0) * want_std)
    elif distribution != "untruncated_normal":
        assert np.all(np.abs(v) <= 2 * want_std / 0.87962566)


def test_he_and_lecun(sess):
    shape = [200, 500]
    for fn, scale in [
        (tf.initializers.he_uniform, 2.0),
        (tf.initializers.lecun_uniform, 1.0),
        (tf.initializers.he_normal, 2.0),
        (tf.initializers.lecun_normal, 1.0),
    ]:
        v = sess.run(fn(seed=1)(shape))
        want = math.sqrt(scale / 200)
        assert abs(v.std() - want) < 0.03 * want, fn.__name__


def test_uniform_unit_scaling(sess):
    v = sess.run(tf.uniform_unit_scaling_initializer(factor=2.0)([100, 30]))
    limit = 2.0 * math.sqrt(3 / 100)
    assert np.all(np.abs(v) <= limit) and np.abs(v).max() > 0.95 * limit


@pytest.mark.parametrize("shape", [[6, 4], [4, 6], [3, 3, 4, 8]])
def test_orthogonal(sess, shape):
    v = sess.run(tf.orthogonal_initializer(gain=3.0, seed=7)(shape)).astype(np.float64)
    assert v.dtype == np.float64 and list(v.shape) == shape
    m = v.reshape(-1, shape[-1]) / 3.0
    small = min(m.shape)
    gram = m.T @ m if m.shape[0] >= m.shape[1] else m @ m.T
    np.testing.assert_allclose(gram, np.eye(small), atol=1e-5)
    with pytest.raises(ValueError, match="two-dimensional"):
        tf.orthogonal_initializer()([5])


def test_seeded_initializers_repeat_across_sessions():
    values = []
    for _ in range(2):
        g = tf.Graph()
        with g.as_default():
            ts = [
                tf.glorot_uniform_initializer(seed=1)([3, 3]),
                tf.random_normal_initializer(seed=2)([4]),
                tf.orthogonal_initializer(seed=3)([3, 3]),
            ]
        with tf.Session(graph=g) as s:
            values.append(s.run(ts))
    for a, b in zip(*values, strict=True):
        np.testing.assert_array_equal(a, b)


def test_argument_errors():
    with pytest.raises(ValueError, match="scale"):
        tf.variance_scaling_initializer(scale=0.0)
    with pytest.raises(ValueError, match="mode"):
        tf.variance_scaling_initializer(mode="fan")
    with pytest.raises(ValueError, match="distribution"):
        tf.variance_scaling_initializer(distribution="cauchy")
    with pytest.raises(ValueError, match="floating point"):
        tf.random_normal_initializer(dtype=tf.int32)
    with pytest.raises(ValueError, match="floating point"):
        tf.glorot_uniform_initializer(dtype=tf.int32)
    with pytest.raises(ValueError, match="fully defined"):
        tf.zeros_initializer()(tf.TensorShape([None, 2]))


def test_get_config_round_trip():
    for init in [
        tf.zeros_initializer(dtype=tf.int32),
        tf.constant_initializer(3.0),
        tf.random_uniform_initializer(-1.0, 1.0, seed=3),
        tf.random_normal_initializer(0.5, 2.0),
        tf.truncated_normal_initializer(),
        tf.variance_scaling_initializer(2.0, "fan_out", "uniform"),
        tf.glorot_uniform_initializer(seed=1),
        tf.orthogonal_initializer(2.0),
    ]:
        again = type(init).from_config(init.get_config())
        assert again.get_config() == init.get_config()


def test_initializers_namespace():
    ns = tf.initializers
    assert ns.zeros is tf.zeros_initializer and ns.ones is tf.ones_initializer
    assert ns.constant is tf.constant_initializer
    assert ns.random_normal is tf.random_normal_initializer
    assert ns.random_uniform is tf.random_uniform_initializer
    assert ns.truncated_normal is tf.truncated_normal_initializer
    assert ns.glorot_uniform is tf.glorot_uniform_initializer
    assert ns.glorot_normal is tf.glorot_normal_initializer
    assert ns.variance_scaling is tf.variance_scaling_initializer
    assert ns.orthogonal is tf.orthogonal_initializer
    assert ns.global_variables is tf.global_variables_initializer
    assert ns.local_variables is tf.local_variables_initializer
    assert ns.variables is tf.variables_initializer


@pytest.mark.tf
def test_fans_and_scales_match_tf():
    pytest.importorskip("tensorflow")
    from tensorflow.python.ops import init_ops as tf_init_ops

    for shape in ([], [7], [3, 5], [5, 5, 3, 8], [2, 3, 4, 5, 6]):
        assert init_ops._compute_fans(shape) == tf_init_ops._compute_fans(shape)
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    for name in (
        "zeros",
        "ones",
        "constant",
        "random_normal",
        "random_uniform",
        "truncated_normal",
        "glorot_uniform",
        "glorot_normal",
        "variance_scaling",
        "orthogonal",
        "identity",
        "he_normal",
        "he_uniform",
        "lecun_normal",
        "lecun_uniform",
        "uniform_unit_scaling",
        "global_variables",
        "local_variables",
        "variables",
    ):
        assert hasattr(tf1.initializers, name) and hasattr(tf.initializers, name), name
    # Same construction: variance scaling's configs agree with TF's.
    ours = tf.variance_scaling_initializer(2.0, "fan_avg", "uniform", seed=3).get_config()
    theirs = tf1.variance_scaling_initializer(2.0, "fan_avg", "uniform", seed=3).get_config()
    assert ours == theirs
