"""Plan-time producer-consumer fusion (``runtime/compile/fusion.py``) and the gradient pass's
shape roots, which keep fusible outputs single-use and drop no-op ``SumLike`` ops."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow as tf
from dataflow.runtime.compile.compiler import compile_plan

DEV0 = "/job:localhost/replica:0/task:0/device:CPU:0"
DEV1 = "/job:localhost/replica:0/task:0/device:CPU:1"


@pytest.fixture
def sess():
    with tf.Graph().as_default(), tf.Session() as session:
        yield session


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(10000, 1), (3, 4, 5), (70000,)])
def test_reductions_of_squares_fuse_and_match_numpy(sess, dtype, shape):
    value = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    x = tf.placeholder(tf.as_dtype(dtype), [None] * len(shape))
    mean, total = tf.reduce_mean(tf.square(x)), tf.reduce_sum(tf.square(x))
    got_mean, got_total = sess.run([mean, total], {x: value})
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got_mean, np.mean(value.astype(np.float64) ** 2), rtol=rtol)
    np.testing.assert_allclose(got_total, np.sum(value.astype(np.float64) ** 2), rtol=rtol)
    assert got_mean.dtype == dtype and np.shape(got_mean) == ()
    types = sess.compiled_plan([mean, total], {x: value}).call_types
    assert "Square" not in types
    assert {"MeanOfSquares", "SumOfSquares"} <= set(types)


def test_other_reductions_of_squares_run_unfused_arithmetic(sess):
    x = tf.placeholder(tf.float64, [None, 3])
    i = tf.placeholder(tf.int32, [2])
    value = np.arange(6.0).reshape(2, 3)
    outs = [
        tf.reduce_sum(tf.square(x), axis=1),
        tf.reduce_mean(tf.square(x), axis=0),
        tf.reduce_sum(tf.square(x), keepdims=True),
        tf.reduce_mean(tf.square(i)),
        tf.reduce_sum(tf.square(x[:, :2])),
    ]  # a strided view: not contiguous
    got = sess.run(outs, {x: value, i: [3, -4]})
    np.testing.assert_allclose(got[0], (value**2).sum(1))
    np.testing.assert_allclose(got[1], (value**2).mean(0))
    np.testing.assert_allclose(got[2], [[55.0]])
    assert got[3] == 12 and got[3].dtype == np.int32  # integer mean truncates
    np.testing.assert_allclose(got[4], (value[:, :2] ** 2).sum())


def test_a_square_read_elsewhere_is_not_fused(sess):
    x = tf.placeholder(tf.float32, [None])
    sq = tf.square(x)
    total = tf.reduce_sum(sq)
    with tf.control_dependencies([sq.op]):
        after = tf.identity(x)
    cases = {
        "fetched": [total, sq],
        "read twice": [total, sq + 1.0],
        "control input": [total, after],
    }
    for why, fetches in cases.items():
        types = sess.compiled_plan(fetches, {x: np.ones(3, np.float32)}).call_types
        assert "Square" in types and "SumOfSquares" not in types, why
    assert "SumOfSquares" in sess.compiled_plan(total, {x: np.ones(3, np.float32)}).call_types


def test_a_pair_split_across_devices_is_not_fused():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None])
        with tf.device(DEV0):
            sq = tf.square(x)
        with tf.device(DEV1):
            total = tf.reduce_sum(sq)
        split = compile_plan([total], [x], [DEV0, DEV1], DEV0)
        together = compile_plan([tf.reduce_sum(tf.square(x))], [x], [DEV0, DEV1], DEV0)
    assert "SumOfSquares" not in split.call_types
    fused = [c for s in together.stages for c in s.calls if c.op_type == "SumOfSquares"]
    assert len(fused) == 1 and fused[0].op_name.startswith("Sum")  # named as the consumer


def test_fused_pairs_in_loop_bodies_and_their_gradients(sess):
    x = tf.placeholder(tf.float64, [None, 1])
    w = tf.Variable(np.array([[0.5], [-1.0]]))
    _, acc = tf.while_loop(
        lambda i, a: i < 3,
        lambda i, a: (i + 1, a + tf.reduce_sum(tf.square(w))),
        [tf.constant(0), tf.constant(0.0, tf.float64)],
    )
    loss = tf.reduce_mean(tf.square(x - tf.reduce_sum(w))) + acc
    grads = tf.gradients(loss, [x, w])
    sess.run(tf.global_variables_initializer())
    xv = np.array([[1.0], [2.0], [4.0]])
    got_loss, (gx, gw) = sess.run([loss, grads], {x: xv})
    r = xv - (-0.5)
    np.testing.assert_allclose(got_loss, np.mean(r**2) + 3 * 1.25)
    np.testing.assert_allclose(gx, 2 * r / 3)
    np.testing.assert_allclose(gw, -np.sum(2 * r / 3) + 3 * 2 * np.array([[0.5], [-1.0]]))


def test_gradients_skip_sum_like_only_where_shapes_provably_agree(sess):
    x = tf.placeholder(tf.float64, [None, 1])
    y = tf.placeholder(tf.float64, [1, None])
    same = tf.reduce_mean(tf.square(x * 2.0))
    broadcast = tf.reduce_sum(tf.square(x * y))  # [n, 1] * [1, m]: broadcasting
    g_same = tf.gradients(same, [x])[0]
    g_x, g_y = tf.gradients(broadcast, [x, y])
    xv, yv = np.array([[1.0], [-2.0], [3.0]]), np.array([[0.5, 2.0]])
    assert "SumLike" not in sess.compiled_plan(g_same, {x: xv}).call_types
    assert "SumLike" in sess.compiled_plan([g_x, g_y], {x: xv, y: yv}).call_types
    got_same, got_x, got_y = sess.run([g_same, g_x, g_y], {x: xv, y: yv})
    np.testing.assert_allclose(got_same, 8 * xv / 3)
    np.testing.assert_allclose(got_x, (2 * xv * yv * yv).sum(1, keepdims=True))
    np.testing.assert_allclose(got_y, (2 * xv * yv * xv).sum(0, keepdims=True))


def test_fused_types_are_not_graph_ops():
    from dataflow.ops.build import apply_op

    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="made by the plan compiler"):
            apply_op("SumOfSquares", [tf.constant([1.0])])
