"""Random ops: statistics, seeds and streams, shapes, errors."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow as tf
from dataflow.framework import registry
from dataflow.ops.random import random_ops

N = 100_000


def _debug_session(graph=None):
    return tf.Session(graph=graph, config=tf.ConfigProto(debug=True))


# --- statistics --------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [tf.float16, tf.float32, tf.float64])
def test_random_normal_statistics(sess, dtype):
    x = tf.random_normal([N], mean=3.0, stddev=2.0, dtype=dtype, seed=1)
    assert x.dtype == dtype and x.shape.as_list() == [N]
    v = sess.run(x)
    assert v.dtype == dtype.as_numpy_dtype
    assert abs(v.astype(np.float64).mean() - 3.0) < 0.03
    assert abs(v.astype(np.float64).std() - 2.0) < 0.03


def test_random_normal_defaults_and_name(sess):
    x = tf.random_normal([N // 10, 10])
    assert x.name == "random_normal:0"
    assert x.op.type == "RandomNormal"
    v = sess.run(x)
    assert v.shape == (N // 10, 10) and v.dtype == np.float32
    assert abs(v.mean()) < 0.02 and abs(v.std() - 1.0) < 0.02


def test_random_normal_tensor_parameters(sess):
    mean = tf.placeholder(tf.float32, [])
    x = tf.random_normal([N], mean=mean, stddev=tf.constant(0.5))
    v = sess.run(x, {mean: -4.0})
    assert abs(v.mean() + 4.0) < 0.01 and abs(v.std() - 0.5) < 0.01


@pytest.mark.parametrize("dtype", [tf.float16, tf.float32, tf.float64])
def test_truncated_normal_bounds_and_spread(sess, dtype):
    x = tf.truncated_normal([N], mean=1.0, stddev=3.0, dtype=dtype, seed=2)
    v = sess.run(x).astype(np.float64)
    assert x.dtype == dtype
    assert np.all(np.abs(v - 1.0) <= 6.0)
    assert abs(v.mean() - 1.0) < 0.03
    # A unit normal truncated to (-2, 2) has standard deviation 0.87962566...
    assert abs(v.std() - 3.0 * 0.87962566) < 0.03
    # Resampling, not clipping: the bounds are not over-represented.
    assert np.mean(np.abs(v - 1.0) > 5.9) < 0.005


@pytest.mark.parametrize("dtype", [tf.float16, tf.float32, tf.float64])
def test_random_uniform_float(sess, dtype):
    x = tf.random_uniform([N], minval=-2.0, maxval=3.0, dtype=dtype, seed=3)
    v = sess.run(x)
    assert v.dtype == dtype.as_numpy_dtype
    assert v.min() >= -2.0 and v.max() < 3.0
    assert abs(v.astype(np.float64).mean() - 0.5) < 0.03
    assert abs(v.astype(np.float64).std() - 5 / np.sqrt(12)) < 0.03


def test_random_uniform_default_range_and_float16_never_one(sess):
    v = sess.run(tf.random_uniform([N], dtype=tf.float16))
    assert v.min() >= 0 and v.max() < 1
    w = sess.run(tf.random_uniform([N]))
    assert w.dtype == np.float32 and w.min() >= 0 and w.max() < 1


@pytest.mark.parametrize("dtype", [tf.int32, tf.int64])
def test_random_uniform_int_range(sess, dtype):
    x = tf.random_uniform([N], minval=-3, maxval=7, dtype=dtype, seed=4)
    assert x.op.type == "RandomUniformInt" and x.dtype == dtype
    v = sess.run(x)
    assert v.dtype == dtype.as_numpy_dtype
    assert v.min() == -3 and v.max() == 6
    counts = np.bincount(v + 3)
    assert len(counts) == 10 and np.all(np.abs(counts / N - 0.1) < 0.01)


def test_random_uniform_int64_wide_range(sess):
    lo, hi = -(2**40), 2**40
    v = sess.run(tf.random_uniform([1000], minval=lo, maxval=hi, dtype=tf.int64))
    assert v.min() >= lo and v.max() < hi and v.max() > 2**38


def test_random_uniform_int_errors(sess):
    with pytest.raises(ValueError, match="Must specify maxval for integer dtype"):
        tf.random_uniform([2], dtype=tf.int32)
    with pytest.raises(ValueError, match="invalid value"):
        tf.random_uniform([2], maxval=3, dtype=tf.bool)
    x = tf.random_uniform([2], minval=5, maxval=5, dtype=tf.int32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Need minval < maxval"):
        sess.run(x)


def test_float_only_ops_refuse_ints():
    # TF1's class: a TypeError (its float mean and stddev do not convert to ints).
    with pytest.raises(TypeError, match="floating point"):
        tf.random_normal([2], dtype=tf.int32)
    with pytest.raises(TypeError, match="floating point"):
        tf.truncated_normal([2], dtype=tf.int64)
    with pytest.raises(TypeError, match="floating point"):
        tf.get_variable("w", [2], dtype=tf.int32, initializer=tf.random_normal_initializer())


# --- shapes --------------------------------------------------------------------------------------
def test_shape_forms(sess):
    shapes = [
        (2, 3),
        [2, 3],
        tf.TensorShape([2, 3]),
        np.array([2, 3]),
        tf.constant([2, 3]),
        tf.constant([2, 3], dtype=tf.int64),
    ]
    for shape in shapes:
        x = tf.random_normal(shape)
        assert x.shape.as_list() == [2, 3]
        assert sess.run(x).shape == (2, 3)
    assert sess.run(tf.random_uniform([])).shape == ()


def test_shape_from_fed_tensor(sess):
    shape = tf.placeholder(tf.int32, [2])
    x = tf.random_uniform(shape, maxval=10, dtype=tf.int32)
    assert x.shape.rank == 2 and x.shape.as_tuple() == (None, None)
    assert sess.run(x, {shape: [4, 5]}).shape == (4, 5)
    unknown = tf.placeholder(tf.int32)
    assert tf.random_normal(unknown).shape.rank is None


def test_bad_shapes():
    with pytest.raises(ValueError, match="negative"):
        tf.random_normal([2, -1])
    with pytest.raises(TypeError, match="integer"):
        tf.random_normal(tf.constant([2.0, 3.0]))
    with pytest.raises(ValueError, match="fully defined"):
        tf.random_normal(tf.TensorShape([None, 2]))


def test_broadcast_parameters(sess):
    mean = tf.constant([0.0, 10.0, 20.0])
    x = tf.random_normal([1000, 3], mean=mean, stddev=0.1)
    v = sess.run(x)
    np.testing.assert_allclose(v.mean(axis=0), [0, 10, 20], atol=0.05)


# --- shuffle and multinomial ------------------------------------------------------------------
def test_random_shuffle_permutes_rows(sess):
    value = np.arange(200).reshape(100, 2)
    x = tf.random_shuffle(tf.constant(value), seed=5)
    assert x.shape.as_list() == [100, 2] and x.dtype == tf.int64
    a, b = sess.run(x), sess.run(x)
    for v in (a, b):
        assert v.dtype == np.int64
        np.testing.assert_array_equal(v[:, 1] - v[:, 0], 1)  # rows stay intact
        np.testing.assert_array_equal(np.sort(v[:, 0]), value[:, 0])
        assert not np.array_equal(v, value)
    assert not np.array_equal(a, b)


def test_random_shuffle_small_inputs_and_no_aliasing(sess):
    assert sess.run(tf.random_shuffle(tf.constant(3.0))) == 3.0
    np.testing.assert_array_equal(sess.run(tf.random_shuffle(tf.constant([7]))), [7])
    feed = np.arange(10.0)
    ph = tf.placeholder(tf.float64, [10])
    out = sess.run(tf.random_shuffle(ph), {ph: feed})
    out[0] = -1.0
    np.testing.assert_array_equal(feed, np.arange(10.0))


@pytest.mark.parametrize("fn", ["multinomial", "categorical"])
def test_multinomial_frequencies(sess, fn):
    probs = np.array([[0.1, 0.2, 0.7, 0.0], [0.25, 0.25, 0.25, 0.25]])
    with np.errstate(divide="ignore"):
        logits = tf.constant(np.log(probs), dtype=tf.float32)
    draw = tf.multinomial if fn == "multinomial" else tf.random.categorical
    x = draw(logits, 50_000, seed=6)
    assert x.dtype == tf.int64 and x.shape.as_list() == [2, 50_000]
    v = sess.run(x)
    assert v.dtype == np.int64 and v.min() >= 0 and v.max() <= 3
    assert not np.any(v[0] == 3)  # zero probability is never drawn
    for row, p in zip(v, probs, strict=True):
        np.testing.assert_allclose(np.bincount(row, minlength=4) / row.size, p, atol=0.01)


def test_multinomial_dtypes_and_errors(sess):
    x = tf.random.categorical([[0.0, 0.0]], tf.constant(3), dtype=tf.int32)
    assert x.dtype == tf.int32 and x.shape.as_list() == [1, 3]
    assert sess.run(x).dtype == np.int32
    with pytest.raises(ValueError, match="invalid value"):
        tf.random.categorical([[0.0]], 1, dtype=tf.float32)
    with pytest.raises(ValueError, match="2-D"):
        tf.multinomial([0.0, 1.0], 2)
    assert sess.run(tf.multinomial(tf.zeros_like(tf.constant([[0.0, 1.0]])), 0)).shape == (1, 0)


# --- seeds and streams ------------------------------------------------------------------------
def _program():
    return [
        tf.random_normal([5]),
        tf.random_uniform([5]),
        tf.truncated_normal([5]),
        tf.random_uniform([5], maxval=100, dtype=tf.int32),
        tf.random_shuffle(tf.constant(np.arange(20))),
        tf.multinomial([[0.0, 1.0, 2.0]], 10),
    ]


def _run_twice(graph, fetches):
    with _debug_session(graph) as s:
        return [s.run(fetches), s.run(fetches)]


def test_graph_seed_makes_program_repeatable():
    runs = []
    for _ in range(2):
        g = tf.Graph()
        with g.as_default():
            tf.set_random_seed(1234)
            fetches = _program()
        runs.append(_run_twice(g, fetches))
    first, second = runs
    for a, b in zip(first[0], second[0], strict=True):
        np.testing.assert_array_equal(a, b)  # same seeds, another session/graph
    for a, b in zip(first[1], second[1], strict=True):
        np.testing.assert_array_equal(a, b)  # the stream continues identically
    for a, b in zip(first[0][:4], first[1][:4], strict=True):
        assert not np.array_equal(a, b)  # successive runs draw new values


def test_same_graph_two_sessions_same_values():
    g = tf.Graph()
    with g.as_default():
        x = tf.random_normal([4], seed=9)  # op seed only: DEFAULT_GRAPH_SEED
    a, b = _run_twice(g, x), _run_twice(g, x)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert not np.array_equal(a[0], a[1])


def test_no_seed_is_nondeterministic():
    g = tf.Graph()
    with g.as_default():
        x = tf.random_normal([8])
    assert x.op.attrs["seed"] is None
    a, b = _run_twice(g, x), _run_twice(g, x)
    assert not np.array_equal(a[0], b[0])


def test_graph_seed_changes_values():
    values = []
    for seed in (1, 2):
        g = tf.Graph()
        with g.as_default():
            tf.set_random_seed(seed)
            x = tf.random_normal([6], seed=3)
        values.append(_run_twice(g, x)[0])
    assert not np.array_equal(*values)


def test_op_seed_counter():
    g = tf.Graph()
    with g.as_default():
        assert random_ops.get_seed(None) == (None, None)
        assert random_ops.get_seed(5) == (random_ops.DEFAULT_GRAPH_SEED, 5)
        tf.set_random_seed(10)
        s1, s2 = random_ops.get_seed(None), random_ops.get_seed(None)
        assert s1[0] == s2[0] == 10 and s1[1] != s2[1]
        assert random_ops.get_seed(7) == (10, 7)
        x, y = tf.random_normal([3]), tf.random_normal([3])
        assert x.op.attrs["seed"] == y.op.attrs["seed"] == 10
        assert x.op.attrs["seed2"] != y.op.attrs["seed2"]
        tf.set_random_seed(0)
        assert random_ops.get_seed(0) == (0, 2**31 - 1)  # TF's (0, 0) mapping
        tf.set_random_seed(None)
        assert random_ops.get_seed(None) == (None, None)
    # The counter is per graph: a rebuilt program gets the same op seeds.
    seeds = []
    for _ in range(2):
        with tf.Graph().as_default():
            tf.set_random_seed(3)
            seeds.append([tf.random_normal([1]).op.attrs["seed2"] for _ in range(3)])
    assert seeds[0] == seeds[1] and len(set(seeds[0])) == 3


def test_equal_seeds_equal_streams_different_seeds_differ(sess):
    a = tf.random_normal([6], seed=1)
    b = tf.random_normal([6], seed=1)
    c = tf.random_normal([6], seed=2)
    va, vb, vc = sess.run([a, b, c])
    np.testing.assert_array_equal(va, vb)
    assert not np.array_equal(va, vc)


def test_stream_shared_across_fetch_signatures(sess):
    x = tf.random_normal([3], seed=11)
    y = x + 0.0
    first = sess.run(x)
    second = sess.run([x, y])[0]  # a different plan, the same stream
    assert not np.array_equal(first, second)
    g = tf.Graph()
    with g.as_default():
        x2 = tf.random_normal([3], seed=11)
        y2 = x2 + 0.0
    with _debug_session(g) as s:
        np.testing.assert_array_equal(s.run(x2), first)
        np.testing.assert_array_equal(s.run([x2, y2])[0], second)


# --- registration -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "op_type",
    [
        "RandomNormal",
        "TruncatedNormal",
        "RandomUniform",
        "RandomUniformInt",
        "RandomShuffle",
        "Multinomial",
    ],
)
def test_ops_are_stateful_and_not_differentiable(op_type):
    opdef = registry.lookup(op_type)
    assert opdef.stateful and not opdef.foldable
    assert opdef.grad is registry.NOT_DIFFERENTIABLE


def test_namespace():
    assert tf.random.normal is tf.random_normal
    assert tf.random.uniform is tf.random_uniform
    assert tf.random.truncated_normal is tf.truncated_normal
    assert tf.random.shuffle is tf.random_shuffle
    assert tf.random.set_random_seed is tf.set_random_seed
    assert tf.random.multinomial is tf.multinomial


@pytest.mark.tf
def test_op_names_match_tf():
    tf1 = pytest.importorskip("tensorflow.compat.v1")

    def build(t):
        return [
            t.random_normal([2]).name,
            t.random_uniform([2]).name,
            t.truncated_normal([2]).name,
            t.random_normal([2], name="noise").name,
            t.random_uniform([2], maxval=3, dtype=t.int32).name,
            t.random_shuffle(t.constant([1, 2])).name,
        ]

    with tf1.Graph().as_default():
        want = build(tf1)
    assert build(tf) == want


# --- inside control-flow bodies -----------------------------------------------------------------
def test_random_op_in_while_loop_draws_each_iteration():
    g = tf.Graph()
    with g.as_default():
        outer = tf.random_uniform([2], maxval=1000, dtype=tf.int64, seed=1)
        _, total = tf.while_loop(
            lambda i, acc: i < 3,
            lambda i, acc: (
                i + 1,
                acc + tf.random_uniform([2], maxval=1000, dtype=tf.int64, seed=1),
            ),
            [tf.constant(0), tf.zeros([2], dtype=tf.int64)],
        )
    with _debug_session(g) as s:
        draws = [s.run(outer) for _ in range(3)]
    with _debug_session(g) as s:
        # The body's op has the outer op's name and seeds but a stream of its own: its
        # three iterations draw what the outer op draws in three runs.
        first, looped = s.run([outer, total])
        np.testing.assert_array_equal(first, draws[0])
        np.testing.assert_array_equal(looped, np.sum(draws, axis=0))
        assert not np.array_equal(s.run(total), looped)  # the next run continues
