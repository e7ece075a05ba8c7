"""The long tail of TF1's top-level array names against ``tensorflow.compat.v1``:
``space_to_batch(_nd)``/``batch_to_space(_nd)``, ``required_space_to_batch_paddings``,
``dynamic_stitch``, ``setdiff1d``, ``searchsorted``, ``repeat``, ``batch_gather``,
``broadcast_dynamic_shape``/``broadcast_static_shape``, ``ensure_shape``, ``bitcast``,
``saturate_cast``: values, dtypes, static shapes, gradients, and error classes.

Each program is written once against a module ``tf`` and run with ``dataflow`` (kernels
checked against their static shapes and dtypes) and with TF1's graph mode. The ops only
move elements, so values agree exactly; gradients (float64) sum a handful of products,
hence rtol 1e-12.
"""

from __future__ import annotations

import numpy as np
import pytest

import dataflow

pytestmark = pytest.mark.tf

RNG = np.random.default_rng(3201)
IMG = RNG.standard_normal((2, 4, 6, 3))
SEQ = np.sort(RNG.integers(0, 9, (3, 7)), axis=1).astype(np.float32)
VALS = RNG.integers(-1, 10, (3, 5)).astype(np.float32)


def _tf1():
    return pytest.importorskip("tensorflow.compat.v1")


def _run(tf, program, feeds):
    config = tf.ConfigProto(debug=True) if tf is dataflow else None
    with tf.Graph().as_default() as graph:
        placeholders, fetches = program(tf)
        shapes = [None if t.shape.rank is None else t.shape.as_list() for t in fetches]
        dtypes = [t.dtype.name for t in fetches]
        with tf.Session(graph=graph, config=config) as sess:
            values = sess.run(fetches, dict(zip(placeholders, feeds, strict=True)))
    return shapes, dtypes, values


def _compare(program, feeds, rtol=0.0):
    ours, theirs = _run(dataflow, program, feeds), _run(_tf1(), program, feeds)
    assert ours[0] == theirs[0], "static shapes differ"
    assert ours[1] == theirs[1], "dtypes differ"
    for i, (a, b) in enumerate(zip(ours[2], theirs[2], strict=True)):
        assert np.shape(a) == np.shape(b), f"fetch {i}"
        np.testing.assert_allclose(a, b, rtol=rtol, err_msg=f"fetch {i}")


def _space_program(tf):
    img = tf.placeholder(tf.float64, [None, 4, 6, 3])
    crops = tf.placeholder(tf.int32, [2, 2])
    s2b = tf.space_to_batch_nd(img, [2, 3], [[1, 1], [0, 3]])
    outs = [
        s2b,
        tf.batch_to_space_nd(s2b, [2, 3], [[1, 1], [0, 3]]),
        tf.batch_to_space_nd(s2b, [2, 3], crops),
        tf.space_to_batch(img, [[0, 0], [1, 1]], 2),
        tf.batch_to_space(tf.space_to_batch(img, [[2, 0], [0, 2]], 2), [[1, 1], [1, 1]], 2),
        tf.manip.space_to_batch_nd(img[:, :, :, 0], [4], [[0, 0]]),
        tf.manip.batch_to_space_nd(tf.reshape(img, [4, 2, 6, 3]), [2], [[1, 0]]),
        *tf.required_space_to_batch_paddings([5, 7], [2, 3]),
        *tf.required_space_to_batch_paddings([5, 7], [2, 3], [[1, 0], [2, 2]]),
    ]
    loss = tf.reduce_sum(outs[0] * outs[0]) + tf.reduce_sum(tf.sin(outs[2]) * outs[4])
    (grad,) = tf.gradients(loss, [img])
    (grad2,) = tf.gradients(tf.reduce_sum(grad * grad), [img])
    return (img, crops), [*outs, grad, grad2]


def test_space_to_batch_matches_tf():
    _compare(_space_program, [IMG, np.array([[0, 2], [2, 1]], np.int32)], rtol=1e-12)


def _stitch_program(tf):
    a = tf.placeholder(tf.float64, [2, 3])
    b = tf.placeholder(tf.float64, [None, 2, 3])
    idx = tf.placeholder(tf.int32, [None, 2])
    outs = [
        tf.dynamic_stitch([[4, 0], [[1, 3], [2, 5]]], [a, b[:2]]),
        tf.dynamic_stitch([[0, 1, 2], [1]], [tf.constant([1, 2, 3]), tf.constant([9])]),
        tf.dynamic_stitch([[2, 0], idx], [a, b]),
        tf.repeat(a, [2, 0, 3], axis=1),
        tf.repeat(a, 2),
        tf.repeat(b, tf.constant([1, 2]), axis=1),
        tf.batch_gather(b, idx % 2),
        tf.batch_gather(a, [[2, 0], [1, 1]]),
    ]
    loss = (
        tf.reduce_sum(outs[0] * outs[2])
        + tf.reduce_sum(tf.sin(outs[3]) * 2.0)
        + tf.reduce_sum(outs[5] * outs[5] * outs[5])
        + tf.reduce_sum(outs[6] * outs[6])
    )
    grads = tf.gradients(loss, [a, b])
    grads2 = tf.gradients(tf.reduce_sum(grads[0] * grads[0]) + tf.reduce_sum(grads[1]), [a, b])
    return (a, b, idx), [*outs, *grads, *grads2]


def test_stitch_repeat_batch_gather_match_tf():
    feeds = [
        RNG.standard_normal((2, 3)),
        RNG.standard_normal((3, 2, 3)),
        np.array([[1, 3], [4, 3], [5, 1]], np.int32),
    ]
    _compare(_stitch_program, feeds, rtol=1e-12)


def _search_program(tf):
    seq = tf.placeholder(tf.float32, [3, None])
    vals = tf.placeholder(tf.float32, [None, 5])
    outs = [
        tf.searchsorted(seq, vals),
        tf.searchsorted(seq, vals, side="right", out_type=tf.int64),
        tf.searchsorted([1, 3, 3, 5], [0, 3, 4, 9]),
        tf.searchsorted([[1, 3, 3, 5]], [[3, 5, 6]], side="right"),
        *tf.setdiff1d([4, 1, 2, 4, 7, 1], [1, 9]),
        *tf.setdiff1d(tf.constant([3.5, 1.0]), tf.constant([2.0]), index_dtype=tf.int64),
        *tf.setdiff1d(tf.constant([], tf.int32), [1]),
        tf.broadcast_dynamic_shape([2, 1, 3], [4, 1]),
        tf.broadcast_dynamic_shape(tf.constant([5], tf.int64), tf.constant([3, 1], tf.int64)),
        tf.broadcast_dynamic_shape(tf.shape(seq)[:1], [1, 1]),
    ]
    return (seq, vals), outs


def test_searchsorted_setdiff_broadcast_shape_match_tf():
    _compare(_search_program, [SEQ, VALS])


def _cast_program(tf):
    x = tf.placeholder(tf.float64, [None, 3])
    ints = tf.constant([[-70000, 5, 300], [1, 2, 70000]], tf.int32)
    outs = [
        tf.saturate_cast(x * 200.0, tf.uint8),
        tf.saturate_cast(ints, tf.int16),
        tf.saturate_cast(ints, tf.uint8),
        tf.saturate_cast(x * 1e40, tf.float32),
        tf.bitcast(tf.constant([1.0, -2.5], tf.float32), tf.uint8),
        tf.bitcast(tf.constant([[0, 0, 128, 63], [1, 2, 3, 4]], tf.uint8), tf.float32),
        tf.bitcast(tf.constant([1, -1], tf.int32), tf.float32),
        tf.bitcast(tf.constant([7, 9], tf.int64), tf.int32),
        tf.ensure_shape(x, [None, 3]) * 2.0,
        tf.ensure_shape(x, [2, None]),
    ]
    (grad,) = tf.gradients(
        tf.reduce_sum(tf.cast(tf.saturate_cast(x * 3.0, tf.float32), tf.float64) * outs[8]), [x]
    )
    return (x,), [*outs, grad]


def test_casts_and_ensure_shape_match_tf():
    _compare(_cast_program, [RNG.standard_normal((2, 3))], rtol=1e-12)


def test_static_shapes_and_build_time_errors_match_tf():
    tf1 = _tf1()
    for tf in (dataflow, tf1):
        assert tf.broadcast_static_shape(
            tf.TensorShape([None, 1, 3]), tf.TensorShape([4, 1])
        ).as_list() == [None, 4, 3]
        with pytest.raises(ValueError):
            tf.broadcast_static_shape(tf.TensorShape([2]), tf.TensorShape([3]))
        with tf.Graph().as_default():
            with pytest.raises(ValueError):
                tf.space_to_batch_nd(tf.zeros([1, 5, 4, 1]), [2, 2], [[0, 0], [0, 0]])
            with pytest.raises(ValueError):
                tf.batch_to_space_nd(tf.zeros([3, 2, 2, 1]), [2, 2], [[0, 0], [0, 0]])
            with pytest.raises(ValueError):
                tf.ensure_shape(tf.zeros([2, 3]), [3, 3])
            with pytest.raises(ValueError):
                tf.setdiff1d(tf.zeros([2, 2]), [1.0])
            with pytest.raises(ValueError):
                tf.bitcast(tf.zeros([3], tf.uint8), tf.float32)
            with pytest.raises((TypeError, ValueError)):
                tf.dynamic_stitch([tf.constant([0.0])], [tf.constant([1.0])])
            assert tf.is_tensor(tf.zeros([1])) and not tf.is_tensor(np.zeros(1))


def test_run_time_errors_match_tf():
    tf1 = _tf1()
    for tf in (dataflow, tf1):
        with tf.Graph().as_default():
            x = tf.placeholder(tf.float32, [None, 3])
            checked = tf.ensure_shape(x, [2, 3])
            shape = tf.broadcast_dynamic_shape(tf.shape(x), [4])
            with tf.Session() as sess:
                with pytest.raises(tf.errors.InvalidArgumentError):
                    sess.run(checked, {x: np.zeros((3, 3))})
                with pytest.raises(tf.errors.InvalidArgumentError):
                    sess.run(shape, {x: np.zeros((3, 3))})


def _bins_program(tf):
    v = tf.placeholder(tf.float32, [None])
    w = tf.placeholder(tf.float64, [2, None])
    return (v, w), [
        tf.histogram_fixed_width_bins(v, [0.0, 5.0], nbins=5),
        tf.histogram_fixed_width_bins(v, [-2.0, 3.0], nbins=tf.constant(7)),
        tf.histogram_fixed_width_bins(w, np.array([1.0, 2.0]), nbins=3, dtype=tf.int64),
    ]


def test_histogram_fixed_width_bins_matches_tf():
    values = np.array([-1.0, 0.0, 1.5, 2.0, 5.0, 15.0, 4.99, 0.9999], np.float32)
    _compare(_bins_program, [values, RNG.uniform(0.5, 2.5, (2, 6))])
    for tf in (dataflow, _tf1()):
        with tf.Graph().as_default():
            with pytest.raises(TypeError):
                tf.histogram_fixed_width_bins(tf.constant([1, 2]), tf.constant([0, 3]))


def _switch_program(tf):
    i = tf.placeholder(tf.int32, [])
    x = tf.placeholder(tf.float64, [3])
    branches = [lambda: x * 2.0, lambda: tf.sin(x), lambda: x * x]
    outs = [
        tf.switch_case(i, branches),
        tf.switch_case(i, {0: lambda: x + 1.0, 1: lambda: x - 1.0}, default=lambda: -x),
        tf.switch_case(i, [(1, lambda: x), (0, lambda: 3.0 * x)]),
    ]
    (grad,) = tf.gradients(tf.add_n([tf.reduce_sum(o * o) for o in outs]), [x])
    return (i, x), [*outs, grad]


@pytest.mark.parametrize("index", [0, 1, 2, 7, -1])
def test_switch_case_matches_tf(index):
    _compare(_switch_program, [np.int32(index), RNG.standard_normal(3)], rtol=1e-12)
