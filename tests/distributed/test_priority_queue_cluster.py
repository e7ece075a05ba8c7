"""``tf.PriorityQueue`` on a real cluster: the queue lives on the ps; a worker's
computed elements and the client's fed ones leave in priority order, and a consumer
blocked on the empty queue in one session is woken by a close from another."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import dataflow as tf
from dataflow.framework import errors

pytestmark = pytest.mark.distributed


def test_priority_queue_on_the_ps_orders_elements_from_workers_and_the_client(clean_cluster):
    with tf.device("/job:ps/task:0"):
        q = tf.PriorityQueue(10, [tf.float32], shapes=[[2]], shared_name="pq_cluster")
    x = tf.placeholder(tf.float32, [None, 2])
    p = tf.placeholder(tf.int64, [None])
    with tf.device("/job:worker/task:1"):
        doubled = x * 2.0
    enqueue = q.enqueue_many([p, doubled])
    priorities, values = q.dequeue_many(4)
    with tf.device("/job:worker/task:0"):
        total = tf.reduce_sum(values, axis=1)
    with tf.Session(clean_cluster, config=tf.ConfigProto(debug=True)) as sess:
        assert sess.placement([enqueue])[enqueue.name].startswith("/job:ps/")
        sess.run(enqueue, {p: [9, 3], x: [[1, 1], [2, 2]]})
        sess.run(enqueue, {p: [1, 5], x: [[3, 3], [4, 4]]})
        got_p, got_t = sess.run([priorities, total])
    np.testing.assert_array_equal(got_p, [1, 3, 5, 9])
    np.testing.assert_allclose(got_t, [12.0, 8.0, 16.0, 4.0])


def test_blocked_dequeue_is_woken_by_a_close_from_another_session(clean_cluster):
    with tf.device("/job:ps/task:0"):
        q = tf.PriorityQueue(4, [tf.int32], shapes=[[]], shared_name="pq_close")
    one = q.dequeue()
    close = q.close()
    got: dict = {}
    consumer = tf.Session(clean_cluster)
    producer = tf.Session(clean_cluster)

    def consume():
        try:
            consumer.run(one, options=tf.RunOptions(timeout_in_ms=60_000))
        except Exception as exc:
            got["error"] = exc

    thread = threading.Thread(target=consume, daemon=True)
    thread.start()
    thread.join(1.0)  # most likely blocked by now; either order must end the same
    producer.run(close)
    thread.join(60)
    assert not thread.is_alive()
    consumer.close()
    producer.close()
    assert isinstance(got.get("error"), errors.OutOfRangeError), got
