"""The scatter updates of variables (``tf.scatter_sub``/``mul``/``div``/``max``/``min``,
``tf.scatter_nd_update``/``add``/``sub``) and ``tf.tensor_scatter_nd_*`` against
``tensorflow.compat.v1``: values with repeated indices, integer division, static shapes,
and the error classes of bad input."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow

pytestmark = pytest.mark.tf

tf1 = pytest.importorskip("tensorflow.compat.v1")

INITIAL = np.arange(1.0, 13.0).reshape(4, 3)
ROWS = [1, 3, 1]  # row 1 twice: both updates apply, one after the other
ROW_UPDATES = np.array([[9.0, -1.0, 5.0], [2.0, 2.0, 20.0], [0.5, 4.0, -3.0]])
SLICES = [[1, 2], [3, 0], [1, 2]]
SLICE_UPDATES = np.array([7.0, 8.0, -2.0])


def run_updates(tf, build):
    """Runs each update of ``build(tf, variable)`` in its own step from INITIAL; returns
    the results, the variable's value after them, and their static shapes."""
    with tf.Graph().as_default():
        v = tf.Variable(INITIAL)
        updates = build(tf, v)
        with tf.Session() as sess:
            results = []
            for u in updates:
                sess.run(v.initializer)
                results.append(sess.run(u))
            return results, sess.run(v), [u.shape.as_list() for u in updates]


def row_scatters(tf, v):
    return [
        getattr(tf, name)(v, ROWS, ROW_UPDATES)
        for name in ("scatter_sub", "scatter_mul", "scatter_div", "scatter_max", "scatter_min")
    ]


def slice_scatters(tf, v):
    return [
        tf.scatter_nd_add(v, SLICES, SLICE_UPDATES),
        tf.scatter_nd_sub(v, SLICES, SLICE_UPDATES),
        tf.scatter_nd_update(v, [[1, 2], [3, 0]], SLICE_UPDATES[:2]),
        tf.scatter_nd_add(v, [[2], [0], [2]], ROW_UPDATES),  # whole rows
    ]


@pytest.mark.parametrize("build", [row_scatters, slice_scatters])
def test_variable_scatters_match_tf1(build) -> None:
    ours, theirs = run_updates(dataflow, build), run_updates(tf1, build)
    for mine, ref in zip(ours[0], theirs[0]):
        # one multiply/divide per element and update: a few float64 roundings
        np.testing.assert_allclose(mine, ref, rtol=1e-15)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-15)
    assert ours[2] == theirs[2]


def test_integer_scatter_div_truncates_toward_zero_as_tf1() -> None:
    def build(tf):
        with tf.Graph().as_default():
            v = tf.Variable(np.array([7, -7, 9, -9, 100], np.int32))
            out = tf.scatter_div(v, [0, 1, 2, 3, 4, 4], [2, 2, -2, -2, 3, -7])
            with tf.Session() as sess:
                sess.run(v.initializer)
                return sess.run(out)

    ours, theirs = build(dataflow), build(tf1)
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(ours, theirs)


def test_scatter_errors_have_tf1_classes() -> None:
    for tf in (dataflow, tf1):
        with tf.Graph().as_default():
            v = tf.Variable(INITIAL)
            with pytest.raises(ValueError):
                tf.scatter_sub(v, [0, 1], ROW_UPDATES)  # 3 rows of updates for 2 indices
            bad_row = tf.scatter_max(v, [4], ROW_UPDATES[:1])
            bad_slice = tf.scatter_nd_add(v, [[0, 3]], [1.0])
            with tf.Session() as sess:
                sess.run(v.initializer)
                for bad in (bad_row, bad_slice):
                    with pytest.raises(tf.errors.InvalidArgumentError):
                        sess.run(bad)
                np.testing.assert_array_equal(sess.run(v), INITIAL)  # nothing written
    with dataflow.Graph().as_default():
        with pytest.raises(ValueError, match="must be <= the variable's rank"):
            # TF1 builds it and fails when it runs; dataflow knows at build time
            dataflow.scatter_nd_update(dataflow.Variable(INITIAL), [[0, 0, 0]], [1.0])
        with pytest.raises(TypeError, match="scatter_mul needs a tf.Variable"):
            dataflow.scatter_mul(dataflow.constant(INITIAL), [0], ROW_UPDATES[:1])
        with pytest.raises(TypeError, match="ResourceScatterMin"):
            dataflow.scatter_min(dataflow.Variable(INITIAL), [0.0], ROW_UPDATES[:1])


def tensor_scatters(tf):
    t = tf.constant(INITIAL)
    index = tf.placeholder(tf.int32, [None, 2])
    names = ("update", "add", "sub", "max", "min")
    return [
        getattr(tf, f"tensor_scatter_nd_{name}")(t, SLICES, SLICE_UPDATES) for name in names
    ] + [
        tf.tensor_scatter_update(t, [[2]], ROW_UPDATES[:1]),
        tf.tensor_scatter_add(t, [[2], [2]], ROW_UPDATES[:2]),
        tf.tensor_scatter_sub(t, index, tf.placeholder(tf.float64, [None])),
    ]


def test_tensor_scatters_match_tf1() -> None:
    results = {}
    for tf in (dataflow, tf1):
        with tf.Graph().as_default():
            outs = tensor_scatters(tf)
            *known, fed = outs
            index, values = fed.op.inputs[1].op, fed.op.inputs[2].op
            feeds = {index.outputs[0]: [[0, 1], [0, 1]], values.outputs[0]: [1.5, 2.0]}
            with tf.Session() as sess:
                results[tf] = (sess.run(outs, feeds), [o.shape.as_list() for o in outs])
    (ours, our_shapes), (theirs, their_shapes) = results[dataflow], results[tf1]
    assert our_shapes == their_shapes
    # the update with a repeated index keeps the last write in both (TF's CPU kernel)
    for mine, ref in zip(ours, theirs):
        np.testing.assert_allclose(mine, ref, rtol=1e-15)


def test_tensor_scatter_errors_have_tf1_classes() -> None:
    for tf in (dataflow, tf1):
        with tf.Graph().as_default():
            t = tf.constant(INITIAL)
            with pytest.raises(ValueError):
                tf.tensor_scatter_nd_add(t, [[0], [1]], ROW_UPDATES)
            with pytest.raises(TypeError):
                tf.tensor_scatter_nd_max(t, [[0.0]], ROW_UPDATES[:1])
            index = tf.placeholder(tf.int32, [1, 1])
            out = tf.tensor_scatter_nd_min(t, index, ROW_UPDATES[:1])
            with tf.Session() as sess:
                for bad in ([[4]], [[-1]]):
                    with pytest.raises(tf.errors.InvalidArgumentError):
                        sess.run(out, {index: bad})


def test_batch_scatter_update_matches_tf1() -> None:
    def build(tf):
        with tf.Graph().as_default():
            v = tf.Variable(np.arange(24.0).reshape(2, 3, 4))
            out = tf.batch_scatter_update(v, [[2, 0], [1, 1]], -np.arange(16.0).reshape(2, 2, 4))
            with tf.Session() as sess:
                sess.run(v.initializer)
                return sess.run(out)

    np.testing.assert_array_equal(build(dataflow), build(tf1))
