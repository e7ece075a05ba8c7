"""Parity with ``tensorflow.compat.v1``: the same array programs, run by both.

Each program is written once against a module ``tf`` and run with ``dataflow`` and
with TensorFlow 1's graph mode; values, dtypes and the static (partial) shapes TF infers
must agree.
"""

from __future__ import annotations

import numpy as np
import pytest

import dataflow

pytestmark = pytest.mark.tf

RNG = np.random.default_rng(3)
X34 = RNG.standard_normal((2, 3, 4)).astype(np.float32)
X43 = RNG.standard_normal((4, 3))


def _tf1():
    tf = pytest.importorskip("tensorflow")
    return tf.compat.v1


def _run(tf, program, value):
    graph = tf.Graph()
    with graph.as_default():
        x, fetches = program(tf)
        shapes = [None if t.shape.rank is None else t.shape.as_list() for t in fetches]
        dtypes = [t.dtype.name for t in fetches]
        with tf.Session(graph=graph) as sess:
            values = sess.run(fetches, {x: value})
    return shapes, dtypes, values


def _compare(program, value, rtol):
    ours = _run(dataflow, program, value)
    theirs = _run(_tf1(), program, value)
    assert ours[0] == theirs[0], "static shapes differ"
    assert ours[1] == theirs[1], "dtypes differ"
    for i, (a, b) in enumerate(zip(ours[2], theirs[2], strict=True)):
        assert np.shape(a) == np.shape(b), f"fetch {i}"
        np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol, err_msg=f"fetch {i}")


def forward_program(tf):
    x = tf.placeholder(tf.float32, [None, 3, 4])
    return x, [
        tf.reshape(x, [-1, 12]),
        tf.reshape(x, [-1, 2, 6]),
        tf.transpose(x, [2, 0, 1]),
        tf.transpose(x),
        tf.concat([x, x[:, :1]], 1),
        tf.stack([x, x], 1),
        x[1:, ::-1, 2],
        x[..., tf.newaxis, 1:3],
        x[:, 0],
        x[-1, -2:, ::-3],
        tf.slice(x, [0, 1, 0], [-1, 2, 3]),
        tf.split(x, 2, axis=2)[1],
        tf.split(x, [1, -1], axis=1)[1],
        tf.unstack(x, axis=1)[2],
        tf.expand_dims(x, -1),
        tf.squeeze(tf.expand_dims(x, 0), [0]),
        tf.tile(x, [1, 2, 1]),
        tf.pad(x, [[0, 0], [1, 1], [2, 0]]),
        tf.pad(x, [[0, 0], [1, 2], [2, 3]], "REFLECT"),
        tf.pad(x, [[1, 1], [3, 2], [0, 4]], "SYMMETRIC"),
        tf.pad(x, [[0, 1], [0, 0], [1, 0]], constant_values=-2.0),
        tf.reverse(x, [1, -1]),
        tf.gather(x, [2, 0, 2], axis=1),
        tf.gather(x, [[1], [0]]),
        tf.gather_nd(x, [[0, 1], [1, 2]]),
        tf.boolean_mask(x, x[:, :, 0] > 0),
        tf.boolean_mask(x, [True, False, True], axis=1),
        tf.shape(x),
        tf.size(x),
        tf.rank(x),
        tf.zeros_like(x),
        tf.ones(tf.shape(x)[1:]),
        tf.fill([2, 3], 2.5),
        tf.zeros([2, 2], tf.int64),
        tf.range(1, 10, 3),
        tf.range(2.0, 4.0, 0.5),
        tf.range(5, dtype=tf.float64),
        tf.one_hot([0, 2, -1], 3, axis=0),
        tf.one_hot([[1, 0]], 2, on_value=3, off_value=1),
        tf.strided_slice(x, [0, 1], [0, 3], [1, 1], begin_mask=1, end_mask=1, new_axis_mask=0),
        tf.scatter_nd([[1], [0], [1]], [1.0, 2.0, 3.0], [3]),
        tf.unsorted_segment_sum(x, [1, 0], 3),
        tf.invert_permutation([2, 0, 1]),
    ]


def test_forward_and_static_shapes_match_tf():
    _compare(forward_program, X34, rtol=1e-6)


def gradient_program(tf):
    x = tf.placeholder(tf.float64, [None, 3])
    ys = [
        tf.gather(x, [0, 2, 0]),
        tf.gather(x, [[1, 1]], axis=1),
        tf.tile(x, [2, 1]),
        tf.pad(x, [[1, 0], [0, 2]], "REFLECT"),
        tf.pad(x, [[2, 1], [1, 3]], "SYMMETRIC"),
        tf.pad(x, [[1, 1], [0, 1]]),
        x[::-1, 1:],
        x[2, None],
        tf.concat([x, x * 2], 1),
        tf.boolean_mask(x, x > 0),
        tf.reshape(tf.transpose(x), [-1]),
        tf.slice(x, [1, 0], [-1, 2]),
        tf.gather_nd(x, [[1, 1], [0, 2], [1, 1]]),
        tf.stack(tf.unstack(x, axis=1)[::-1]),
        tf.reverse(x, [0]),
        tf.split(x, [2, 1], axis=1)[0],
        tf.expand_dims(x, 1),
        tf.broadcast_to(x[:1], [2, 3]),
    ]
    loss = tf.add_n([tf.reduce_sum(tf.square(y) * (i + 1.0)) for i, y in enumerate(ys)])
    g = tf.convert_to_tensor(tf.gradients(loss, x)[0])
    w = tf.constant(np.linspace(-1.0, 1.0, 12).reshape(4, 3))
    h = tf.convert_to_tensor(tf.gradients(tf.reduce_sum(g * w), x)[0])
    per_op = [tf.convert_to_tensor(tf.gradients(tf.reduce_sum(tf.sin(y)), x)[0]) for y in ys]
    return x, [loss, g, h] + per_op


def test_gradients_match_tf():
    _compare(gradient_program, X43, rtol=1e-10)
