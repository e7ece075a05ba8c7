"""``tf.SparseConditionalAccumulator`` against ``tensorflow.compat.v1``: per-row means
and sums, stale gradients dropped (after a take, and after ``set_global_step``), the
dense shape it reports, ``IndexedSlices`` in and out, its checks, and the shared base
class."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import dataflow as tf
from dataflow.framework import errors

ROWS = np.arange(12, dtype=np.float32).reshape(6, 2) - 4.5


def _program(module):
    """Runs one TF1-style program; returns every fetched value and error class name."""
    out: list = []
    with module.Graph().as_default():
        acc = module.SparseConditionalAccumulator(module.float32, shape=[6, 2])
        summed = module.sparse.SparseConditionalAccumulator(
            module.float32, shape=[None, 2], reduction_type="SUM"
        )
        grad = module.IndexedSlices(
            module.constant(ROWS[3:5]), module.constant([2, 5], module.int64), [6, 2]
        )
        steps = [
            acc.apply_grad([0, 2], ROWS[:2], grad_shape=[6, 2], local_step=0),
            acc.apply_indexed_slices_grad(grad, local_step=0),
            acc.apply_grad(module.constant([1, 2, 4]), ROWS[1:4], local_step=0),
            acc.num_accumulated(),
            acc.take_grad(3),
            acc.apply_grad([3], ROWS[5:6], local_step=0),  # stale now: dropped
            acc.apply_grad([1], ROWS[2:3], local_step=1),
            acc.num_accumulated(),
            acc.take_indexed_slices_grad(1),
            acc.set_global_step(7),
            acc.apply_grad([0], ROWS[:1], local_step=6),  # stale
            acc.apply_grad([5, 0], ROWS[1:3], local_step=9),
            acc.take_grad(1),
            summed.apply_grad([1, 4], ROWS[:2]),
            summed.apply_grad([1], 2 * ROWS[:1]),
            summed.take_grad(2),
        ]
        errors_to_check = [
            acc.apply_grad([6], ROWS[:1], local_step=8),  # beyond the first dimension
            acc.apply_grad([1], ROWS[:1, :1], local_step=8),  # rows of the wrong width
            acc.apply_grad([1], ROWS[:1], grad_shape=[6, 3], local_step=8),  # contradicts
            acc.apply_grad([1, 2], ROWS[:1], local_step=8),  # one row for two indices
            acc.apply_grad([1, 2], ROWS[:1], local_step=0),  # as bad, but stale: dropped
        ]
        with module.Session() as sess:
            for step in steps:
                got = sess.run(step)
                if hasattr(got, "dense_shape"):  # an IndexedSlicesValue
                    got = (got.indices, got.values, got.dense_shape)
                elif isinstance(got, tuple):  # take_grad's (indices, values, shape)
                    got = tuple(got)
                out.append(got)
            for op in errors_to_check:
                try:
                    sess.run(op)
                    out.append(None)
                except module.errors.OpError as exc:
                    out.append(type(exc).__name__)
        base = (
            isinstance(acc, module.ConditionalAccumulatorBase),
            isinstance(
                module.ConditionalAccumulator(module.float32), module.ConditionalAccumulatorBase
            ),
        )
    return out, base


@pytest.fixture(scope="module")
def reference():
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    tf1.disable_eager_execution()
    return _program(tf1)


def test_means_sums_and_stale_drops_match_tf(reference):
    theirs, their_base = reference
    ours, our_base = _program(tf)
    assert our_base == their_base == (True, True)
    assert len(ours) == len(theirs)
    for got, want in zip(ours, theirs):
        if want is None or isinstance(want, (str, np.ndarray, np.integer, int)):
            assert np.array_equal(got, want) if want is not None else got is None
            continue
        for g, w in zip(got, want):
            assert np.asarray(g).dtype == np.asarray(w).dtype
            np.testing.assert_allclose(g, w, rtol=1e-6)


def test_static_shapes_are_compatible_with_tf(reference):
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    with tf.Graph().as_default():
        indices, values, shape = tf.SparseConditionalAccumulator(tf.float64, [None, 3]).take_grad(1)
    assert indices.shape.as_list() == [None] and shape.shape.as_list() == [None]
    assert values.shape.as_list() == [None, 3] and values.dtype == tf.float64
    with tf1.Graph().as_default():
        theirs = tf1.SparseConditionalAccumulator(tf1.float64, [None, 3]).take_grad(1)
    for ours, want in zip((indices, values, shape), theirs):
        assert ours.dtype.name == want.dtype.name
        assert want.shape.is_compatible_with(ours.shape.as_list())


def test_take_grad_waits_for_another_thread_and_refuses_zero():
    with tf.Graph().as_default():
        acc = tf.SparseConditionalAccumulator(tf.float32, shape=[4])
        apply = acc.apply_grad([3], [2.0])
        take = acc.take_grad(2)
        with tf.Session() as sess:
            sess.run(apply)
            got: dict = {}

            def consume():
                try:
                    got["value"] = sess.run(take, options=tf.RunOptions(timeout_in_ms=20_000))
                except Exception as exc:
                    got["error"] = exc

            thread = threading.Thread(target=consume, daemon=True)
            thread.start()
            thread.join(0.3)
            sess.run(acc.apply_grad([3, 1], [4.0, 1.0]))
            thread.join(30)
            assert not thread.is_alive() and "error" not in got, got
            indices, values, shape = got["value"]
            assert indices.tolist() == [1, 3] and values.tolist() == [1.0, 3.0]
            assert shape.tolist() == [4]
            with pytest.raises(errors.InvalidArgumentError, match="num_required"):
                sess.run(acc.take_grad(0))
            with pytest.raises(errors.DeadlineExceededError):
                sess.run(take, options=tf.RunOptions(timeout_in_ms=200))
