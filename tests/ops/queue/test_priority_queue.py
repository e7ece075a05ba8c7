"""``tf.PriorityQueue`` against ``tensorflow.compat.v1``: ascending priority order (ties
compared as sets, since TF leaves their order open), ``dequeue_many``/``dequeue_up_to``,
blocking dequeues woken by a close from another thread, and the refusals.

One divergence, on purpose: TF's ``PriorityQueue`` answers a ``dequeue_up_to(n)`` on a
closed queue holding fewer than ``n`` elements with ``OutOfRangeError`` and drops those
elements (its size is 0 afterwards); here it returns them, as every other queue's
``dequeue_up_to`` does (TF1's documented contract)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import dataflow as tf
from dataflow.framework import errors

PRIORITIES = np.array([5, 1, 3, 1, 9, 3, 0, 5], dtype=np.int64)
VALUES = np.arange(8, dtype=np.float32) * 1.5
WORDS = np.array([b"a", b"b", b"c", b"d", b"e", b"f", b"g", b"h"], dtype=object)


def _order(module):
    """Everything the program dequeues: one, then many, then up_to after close."""
    graph = module.Graph()
    with graph.as_default():
        q = module.PriorityQueue(20, [module.float32, module.string], shapes=[[], []])
        one = q.dequeue()
        many = q.dequeue_many(3)
        up_to = q.dequeue_up_to(4)  # what is left (TF loses a short batch: see below)
        ops = (q.enqueue_many([PRIORITIES, VALUES, WORDS]), q.size(), q.close())
        with module.Session(graph=graph) as sess:
            sess.run(ops[0])
            size = sess.run(ops[1])
            first = sess.run(one)
            batch = sess.run(many)
            sess.run(ops[2])
            rest = sess.run(up_to)
            try:
                sess.run(one)
                drained = None
            except module.errors.OutOfRangeError as exc:
                drained = type(exc).__name__
    return size, first, batch, rest, drained


@pytest.fixture(scope="module")
def reference():
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    tf1.disable_eager_execution()
    return tf1, _order(tf1)


def _rows(first, batch, rest):
    rows = [tuple(np.asarray(c).item() for c in first)]
    for part in (batch, rest):
        rows += list(zip(*(np.asarray(c).tolist() for c in part)))
    return rows


def test_priority_order_and_ties_match_tf(reference):
    _, (size, first, batch, rest, drained) = reference
    got = _order(tf)
    assert got[0] == size == 8
    assert got[4] == drained == "OutOfRangeError"
    ours, theirs = _rows(*got[1:4]), _rows(first, batch, rest)
    # Priorities leave in the same ascending order; within a tie TF's order is open.
    assert [r[0] for r in ours] == [r[0] for r in theirs] == sorted(PRIORITIES.tolist())
    assert sorted(ours) == sorted(theirs)
    # Here ties leave in arrival order.
    assert [r[2] for r in ours] == [b"g", b"b", b"d", b"c", b"f", b"a", b"h", b"e"]
    assert np.asarray(got[2][0]).dtype == np.int64 and np.asarray(got[2][1]).dtype == np.float32


def test_static_shapes_and_dtypes_match_tf(reference):
    tf1, _ = reference
    shapes = []
    for module in (tf, tf1):
        with module.Graph().as_default():
            q = module.PriorityQueue(4, [module.int32], shapes=[[2]])
            outs = q.dequeue() + q.dequeue_many(3) + q.dequeue_up_to(3)
            shapes.append([(t.dtype.name, t.shape.as_list()) for t in outs])
            assert q.dtypes == [module.int64, module.int32]
    assert shapes[0] == shapes[1]


def test_blocking_dequeue_is_woken_by_a_close_from_another_thread():
    with tf.Graph().as_default():
        q = tf.PriorityQueue(4, [tf.int32], shapes=[[]])
        x = tf.placeholder(tf.int64, [])
        enqueue = q.enqueue([x, tf.cast(x, tf.int32) * 10])
        pair = q.dequeue_many(2)
        close = q.close()
        sess = tf.Session()
        got: dict = {}

        def consume():
            try:
                got["pair"] = sess.run(pair, options=tf.RunOptions(timeout_in_ms=20_000))
                sess.run(pair, options=tf.RunOptions(timeout_in_ms=20_000))
            except Exception as exc:
                got["error"] = exc

        thread = threading.Thread(target=consume, daemon=True)
        thread.start()
        sess.run(enqueue, {x: 7})
        sess.run(enqueue, {x: 2})
        sess.run(enqueue, {x: 4})
        sess.run(close)
        thread.join(30)
        assert not thread.is_alive()
        sess.close()
    # The first batch waited for two elements; the second had one left when closed.
    priorities, values = got["pair"]
    assert sorted(priorities.tolist()) == priorities.tolist()
    assert set(priorities.tolist()) <= {2, 4, 7} and (values == priorities * 10).all()
    assert isinstance(got["error"], errors.OutOfRangeError)


def test_enqueue_into_a_closed_queue_and_wrong_priorities_fail_as_tf():
    with tf.Graph().as_default():
        q = tf.queue.PriorityQueue(4, [tf.float32])  # no shapes: checked at run time
        bad = q.enqueue([tf.constant([1, 2], tf.int64), 1.0])
        good = q.enqueue([tf.constant(1, tf.int64), 1.0])
        with tf.Session() as sess:
            with pytest.raises(errors.InvalidArgumentError, match="priority"):
                sess.run(bad)
            sess.run(q.close())
            with pytest.raises(errors.CancelledError):
                sess.run(good)
        with pytest.raises(ValueError, match="int64"):  # TF1's class for a wrong dtype
            q.enqueue([tf.constant(1, tf.int32), 1.0])
    assert tf.io.PriorityQueue is tf.queue.PriorityQueue is tf.PriorityQueue


def test_dequeue_up_to_on_a_closed_queue_returns_what_is_left():
    with tf.Graph().as_default():
        q = tf.PriorityQueue(8, [tf.int32], shapes=[[]])
        fill = q.enqueue_many([np.array([4, 2], np.int64), np.array([40, 20], np.int32)])
        up_to, size = q.dequeue_up_to(3), q.size()
        with tf.Session() as sess:
            sess.run([fill, q.close()])
            priorities, values = sess.run(up_to)
            assert priorities.tolist() == [2, 4] and values.tolist() == [20, 40]
            assert sess.run(size) == 0
            with pytest.raises(errors.OutOfRangeError):
                sess.run(up_to)
