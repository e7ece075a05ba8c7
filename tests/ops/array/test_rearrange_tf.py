"""``roll``, ``meshgrid``, ``unravel_index``, ``space_to_depth``/``depth_to_space`` and
``dynamic_partition`` against ``tensorflow.compat.v1``: values, dtypes, static (partial)
shapes, gradients to second order, and the error classes of bad input.

Each program is written once against a module ``tf`` and run with ``dataflow`` and with
TensorFlow 1's graph mode. The ops only move elements, so forward values must agree
exactly; gradients in float64 sum at most 16 products per element (the terms of the loss
and, at second order, their products), so they agree to rtol 1e-12 and to 16 ulps of the
largest entry where they cancel.
"""

from __future__ import annotations

import numpy as np
import pytest

import dataflow

pytestmark = pytest.mark.tf

RNG = np.random.default_rng(32)
X = RNG.standard_normal((2, 3, 4)).astype(np.float32)
IMG = RNG.standard_normal((2, 4, 6, 8))


def _tf1():
    tf = pytest.importorskip("tensorflow")
    return tf.compat.v1


def _run(tf, program, feeds):
    graph = tf.Graph()
    # ours checks each kernel's output against its static dtype and shape
    config = tf.ConfigProto(debug=True) if tf is dataflow else None
    with graph.as_default():
        placeholders, fetches = program(tf)
        shapes = [None if t.shape.rank is None else t.shape.as_list() for t in fetches]
        dtypes = [t.dtype.name for t in fetches]
        with tf.Session(graph=graph, config=config) as sess:
            values = sess.run(fetches, dict(zip(placeholders, feeds, strict=True)))
    return shapes, dtypes, values


def _compare(program, feeds, rtol, sum_terms=0):
    ours = _run(dataflow, program, feeds)
    theirs = _run(_tf1(), program, feeds)
    assert ours[0] == theirs[0], "static shapes differ"
    assert ours[1] == theirs[1], "dtypes differ"
    for i, (a, b) in enumerate(zip(ours[2], theirs[2], strict=True)):
        assert np.shape(a) == np.shape(b), f"fetch {i}"
        # an element summing ``sum_terms`` products, in another order than TF's, may
        # cancel to a few ulps of the largest term instead of zero
        atol = sum_terms * np.finfo(np.float64).eps * float(np.max(np.abs(b), initial=0.0))
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=f"fetch {i}")


def forward_program(tf):
    x = tf.placeholder(tf.float32, [None, 3, 4])
    shift = tf.placeholder(tf.int32, [])
    img = tf.placeholder(tf.float64, [None, 4, 6, 8])
    i64 = tf.constant([0, 5, 23], tf.int64)
    return (x, shift, img), [
        tf.roll(x, 1, 1),
        tf.roll(x, -5, 2),
        tf.roll(x, [1, -2, 3], [2, 1, -1]),
        tf.roll(x, 1, 0),
        tf.roll(x, shift, 2),
        tf.roll(x, [shift, 2], [1, 2]),
        tf.roll(tf.range(7), 3, 0),
        *tf.meshgrid(tf.range(3), [1, 2], tf.range(4)),
        *tf.meshgrid(tf.range(3.0), [1.0, 2.0], [0.5] * 4),
        *tf.meshgrid(tf.range(3), tf.range(2), indexing="ij"),
        *tf.meshgrid(x[0, 0], x[0, :, 0]),
        tf.unravel_index([5, 7, 0, 23], [2, 3, 4]),
        tf.unravel_index(17, [2, 3, 4]),
        tf.unravel_index(i64, tf.constant([4, 6], tf.int64)),
        tf.space_to_depth(img, 2),
        tf.depth_to_space(img, 2),
        tf.depth_to_space(tf.space_to_depth(img, 2), 2),
        tf.space_to_depth(tf.reshape(tf.range(96), [2, 4, 4, 3]), 4),
        tf.depth_to_space(img[:, :, :, :4], 2),
        tf.space_to_depth(tf.placeholder_with_default(img, [None, None, None, 8]), 2),
        tf.depth_to_space(tf.placeholder_with_default(img, [None, None, None, 8]), 2),
        *tf.dynamic_partition(x, [[2, 0, 2], [1, 2, 0]], 4),
        *tf.dynamic_partition(x, [1, 0], 2),
        *tf.dynamic_partition(tf.range(5), 1, 2),
        *tf.dynamic_partition(x[:, :, 0], tf.reshape(tf.range(6) * shift % 3, [2, 3]), 3),
    ]


def test_forward_and_static_shapes_match_tf():
    _compare(forward_program, (X, -3, IMG), rtol=0)


def gradient_program(tf):
    img = tf.placeholder(tf.float64, [None, 4, 6, 8])
    shift = tf.placeholder(tf.int32, [])
    v = img[0, 0, :, 0]
    ys = [
        tf.roll(img, [1, -2], [1, 3]),
        tf.roll(img, shift, 2),
        tf.space_to_depth(img, 2),
        tf.depth_to_space(img, 2),
        *tf.meshgrid(v, img[0, :, 0, 1]),
        *tf.meshgrid(v[:3], v, v[1:], indexing="ij"),
        *tf.dynamic_partition(tf.reshape(img, [2, 4, 6, 8]), [1, 0], 2),
        *tf.dynamic_partition(img[0], [[0, 2, 2, 1, 0, 1]] * 4, 3),
    ]
    sizes = [int(np.prod(y.shape.as_list()[1:])) for y in ys]
    w = [tf.constant(np.linspace(-1.0, 1.0, n)) for n in sizes]
    terms = [tf.square(tf.reshape(y, [-1, n])) * wi for y, n, wi in zip(ys, sizes, w)]
    loss = tf.add_n([tf.reduce_sum(t) for t in terms])
    g = tf.gradients(loss, img)[0]
    h = tf.gradients(tf.reduce_sum(g * tf.sin(img)), img)[0]
    per_op = [tf.gradients(tf.reduce_sum(tf.sin(y) * (i + 1.0)), img)[0] for i, y in enumerate(ys)]
    return (img, shift), [loss, g, h, *per_op]


def test_gradients_match_tf():
    _compare(gradient_program, (IMG, 4), rtol=1e-12, sum_terms=16)


BAD = [
    ("s2d_block_1", lambda tf, x: tf.space_to_depth(x, 1)),
    ("s2d_not_divisible", lambda tf, x: tf.space_to_depth(x[:, :3], 2)),
    ("s2d_rank_3", lambda tf, x: tf.space_to_depth(x[0], 2)),
    ("d2s_block_1", lambda tf, x: tf.depth_to_space(x, 1)),
    ("d2s_depth_not_divisible", lambda tf, x: tf.depth_to_space(x, 3)),
    ("d2s_rank_5", lambda tf, x: tf.depth_to_space(x[None], 2)),
    ("roll_sizes_differ", lambda tf, x: tf.roll(x, [1, 2], [0])),
    ("roll_float_shift", lambda tf, x: tf.roll(x, 1.5, 0)),
    ("meshgrid_indexing", lambda tf, x: tf.meshgrid([1, 2], indexing="yx")),
    ("meshgrid_keyword", lambda tf, x: tf.meshgrid([1, 2], sparse=True)),
    ("meshgrid_dtypes", lambda tf, x: tf.meshgrid([1, 2], [1.0, 2.0])),
    ("unravel_float", lambda tf, x: tf.unravel_index(1.0, [2, 3])),
    ("partition_none", lambda tf, x: tf.dynamic_partition(x, [0, 1], 0)),
    ("partition_not_prefix", lambda tf, x: tf.dynamic_partition(x, [0, 1, 1], 2)),
    ("partition_int64", lambda tf, x: tf.dynamic_partition(x, tf.constant([0, 1], tf.int64), 2)),
]


def _build_error(tf, build):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 4, 6, 8])
        with pytest.raises(Exception) as info:
            build(tf, x)
    return info.value


@pytest.mark.parametrize("build", [b for _, b in BAD], ids=[n for n, _ in BAD])
def test_bad_input_raises_tf_error_class(build):
    theirs = _build_error(_tf1(), build)
    ours = _build_error(dataflow, build)
    assert issubclass(type(ours), (ValueError, TypeError))
    assert isinstance(ours, ValueError) == isinstance(theirs, ValueError), (ours, theirs)
    assert isinstance(ours, TypeError) == isinstance(theirs, TypeError), (ours, theirs)
    names = ("Roll", "SpaceToDepth", "DepthToSpace", "UnravelIndex", "meshgrid", "Partition")
    assert any(n in str(ours) for n in names) or "keyword" in str(ours), str(ours)


def test_run_time_errors_match_tf_class():
    """Axis out of range and indices out of bounds: TF finds them when the step runs;
    we find them at build time when the values are constants, with the same class."""
    tf1 = _tf1()
    for tf in (tf1, dataflow):
        with tf.Graph().as_default():
            with pytest.raises(tf.errors.InvalidArgumentError):
                with tf.Session() as sess:
                    sess.run(tf.roll(tf.zeros([2, 3]), 1, 2))
            with pytest.raises(tf.errors.InvalidArgumentError):
                with tf.Session() as sess:
                    sess.run(tf.unravel_index([1, 6], [2, 3]))
            with pytest.raises(tf.errors.InvalidArgumentError):
                with tf.Session() as sess:
                    sess.run(tf.unravel_index([[1, 2]], [2, 3]))
            ids = tf.placeholder(tf.int32, [3])
            parts = tf.dynamic_partition(tf.ones([3, 2]), ids, 2)
            with pytest.raises(tf.errors.InvalidArgumentError):
                with tf.Session() as sess:
                    sess.run(parts, {ids: [0, 2, 1]})
