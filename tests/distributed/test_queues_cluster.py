"""Queues on a real cluster: the queue lives in the store of its op's worker; producers
and consumers on other workers and on the client share it.

All tests use the folder's shared ``LocalCluster(ps=1, worker=2)`` (two threads per
worker), reset before each test.
"""

from __future__ import annotations

import threading
import time
import zlib

import numpy as np
import pytest

import dataflow as tf

pytestmark = pytest.mark.distributed

MODES = [pytest.param(False, id="graph"), pytest.param(True, id="resident")]


def _session(cluster, resident=False):
    return tf.Session(cluster, config=tf.ConfigProto(debug=True, resident_steps=resident))


class _Background:
    """Runs ``fn`` in a thread, keeping its result or error and when it ended."""

    def __init__(self, fn):
        self.result = self.error = self.ended = None
        self.thread = threading.Thread(target=self._run, args=(fn,), daemon=True)
        self.thread.start()

    def _run(self, fn):
        try:
            self.result = fn()
        except Exception as exc:
            self.error = exc
        self.ended = time.monotonic()

    def done(self, timeout=0.0):
        self.thread.join(timeout)
        return not self.thread.is_alive()


def _queues_by_worker(cluster):
    """Worker name -> names of the queues in its stores."""

    def queues():
        from dataflow.runtime.dask.worker_state import RUNTIME

        return sorted(
            k
            for store in RUNTIME._stores.values()
            for k in store.objects()
            if k.startswith("queue:")
        )

    by_address = cluster.client.run(queues)
    names = {address: name for name, address in cluster.workers.items()}
    return {names[a]: q for a, q in by_address.items() if q}


def test_queue_lives_on_its_device_and_serves_other_workers_and_the_client(clean_cluster):
    with tf.device("/job:ps/task:0"):
        q = tf.FIFOQueue(10, [tf.float32, tf.int32], shapes=[[3], []], name="shared_q")
    x = tf.placeholder(tf.float32, [None, 3])
    with tf.device("/job:worker/task:1"):
        produced = x * 2.0 + 1.0  # computed on worker-1, enqueued on the ps
        ids = tf.range(tf.shape(x)[0])
    enqueue = q.enqueue_many([produced, ids])
    deq_x, deq_id = q.dequeue_many(2)
    with tf.device("/job:worker/task:0"):
        consumed = tf.reduce_sum(deq_x, axis=1)  # consumed on worker-0
    with _session(clean_cluster) as sess:
        placement = sess.placement([enqueue, consumed])
        assert placement[enqueue.name].startswith("/job:ps/")
        assert placement[deq_x.op.name].startswith("/job:ps/")
        assert placement[produced.op.name].startswith("/job:worker/replica:0/task:1")
        assert placement[consumed.op.name].startswith("/job:worker/replica:0/task:0")
        data = np.arange(12, dtype=np.float32).reshape(4, 3)
        sess.run(enqueue, {x: data})
        assert sess.run(q.size()) == 4
        assert _queues_by_worker(clean_cluster) == {"ps-0": ["queue:shared_q"]}
        np.testing.assert_allclose(sess.run(consumed), (data[:2] * 2 + 1).sum(axis=1))
        # The client dequeues too (the values cross from the ps to the client).
        got_x, got_id = sess.run([deq_x, deq_id])
        np.testing.assert_allclose(got_x, data[2:] * 2 + 1)
        assert got_id.tolist() == [2, 3]


def test_queue_outlives_a_session_and_is_shared_by_name(clean_cluster):
    with tf.device("/job:worker/task:1"):
        q = tf.FIFOQueue(5, tf.int32, shapes=[[]], shared_name="mailbox")
        enq = q.enqueue_many([[7, 8, 9]])
        deq = q.dequeue()
    with _session(clean_cluster) as a:
        a.run(enq)
    # Another session (say another client process) finds the queue by its name.
    with _session(clean_cluster, resident=True) as b:
        assert [b.run(deq) for _ in range(3)] == [7, 8, 9]


@pytest.mark.parametrize("resident", MODES)
def test_blocking_and_capacity_across_workers(clean_cluster, resident):
    with tf.device("/job:worker/task:0"):
        q = tf.FIFOQueue(2, tf.int32, shapes=[[]], name="small")
    v = tf.placeholder(tf.int32, [])
    with tf.device("/job:worker/task:1"):
        enq = q.enqueue(v + 0)  # the element comes from worker-1
    deq = q.dequeue()
    with tf.device("/job:ps/task:0"):
        taken = deq * 10  # and goes to the ps
    with _session(clean_cluster, resident) as sess:
        sess.run(enq, {v: 1})
        sess.run(enq, {v: 2})
        blocked = _Background(lambda: sess.run(enq, {v: 3}))
        assert not blocked.done(0.5), "an enqueue into a full queue did not block"
        assert sess.run(taken) == 10
        assert blocked.done(10) and blocked.error is None
        assert sess.run(q.size()) == 2
        assert [sess.run(taken), sess.run(taken)] == [20, 30]
        # Empty: a dequeue blocks until an enqueue arrives.
        waiting = _Background(lambda: sess.run(taken))
        assert not waiting.done(0.5), "a dequeue from an empty queue did not block"
        sess.run(enq, {v: 4})
        assert waiting.done(10) and waiting.error is None and waiting.result == 40


@pytest.mark.parametrize("resident", MODES)
def test_blocked_steps_hold_no_worker_thread(clean_cluster, resident):
    # Workers run two threads: three dequeues blocked on the queue's worker must not
    # starve the enqueue that wakes them (it runs on the same worker).
    with tf.device("/job:worker/task:0"):
        q = tf.FIFOQueue(10, tf.int32, shapes=[[]], name="starve")
        deq = q.dequeue()
        enq = q.enqueue_many([[1, 2, 3]])
    with _session(clean_cluster, resident) as sess:
        sess.run(q.size())  # creates the queue
        waiting = [_Background(lambda: sess.run(deq)) for _ in range(3)]
        time.sleep(0.5)
        assert not any(w.done() for w in waiting)
        sess.run(enq, options=tf.RunOptions(timeout_in_ms=20000))
        for w in waiting:
            assert w.done(20), "a blocked dequeue was not woken"
            assert w.error is None, w.error
        assert sorted(w.result for w in waiting) == [1, 2, 3]


def test_close_semantics_across_workers(clean_cluster):
    with tf.device("/job:ps/task:0"):
        q = tf.FIFOQueue(10, tf.int32, shapes=[[]], name="closing")
    with tf.device("/job:worker/task:0"):
        enq = q.enqueue_many([[1, 2, 3]])
        one = q.enqueue([4])
    with tf.device("/job:worker/task:1"):
        close = q.close()
    deq, many, up_to = q.dequeue(), q.dequeue_many(5), q.dequeue_up_to(5)
    with _session(clean_cluster) as sess, _session(clean_cluster, resident=True) as other:
        sess.run(enq)
        other.run(close)
        assert sess.run(q.is_closed())
        with pytest.raises(tf.errors.CancelledError, match="closed"):
            sess.run(one)
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(many)  # not enough: the three stay queued
        assert other.run(up_to).tolist() == [1, 2, 3]
        with pytest.raises(tf.errors.OutOfRangeError, match="closed"):
            sess.run(deq)

    # A dequeue blocked on one worker is woken by a close from another session.
    with tf.device("/job:ps/task:0"):
        q2 = tf.FIFOQueue(10, tf.int32, shapes=[[]], name="closing2")
    with _session(clean_cluster) as sess, _session(clean_cluster, resident=True) as other:
        sess.run(q2.size())
        waiting = _Background(lambda: sess.run(q2.dequeue()))
        assert not waiting.done(0.5)
        other.run(q2.close())
        assert waiting.done(10)
        assert isinstance(waiting.error, tf.errors.OutOfRangeError), waiting.error

    # close(cancel_pending_enqueues=True) fails an enqueue blocked on a full queue.
    with tf.device("/job:ps/task:0"):
        q3 = tf.FIFOQueue(1, tf.int32, shapes=[[]], name="closing3")
    with _session(clean_cluster) as sess:
        sess.run(q3.enqueue([1]))
        pending = _Background(lambda: sess.run(q3.enqueue([2])))
        assert not pending.done(0.5)
        sess.run(q3.close(cancel_pending_enqueues=True))
        assert pending.done(10)
        assert isinstance(pending.error, tf.errors.CancelledError), pending.error
        assert sess.run(q3.dequeue_up_to(5)).tolist() == [1]


@pytest.mark.parametrize("resident", MODES)
def test_closing_the_session_cancels_its_blocked_steps(clean_cluster, resident):
    with tf.device("/job:worker/task:1"):
        empty = tf.FIFOQueue(4, tf.float32, shapes=[[]], name="empty_q")
        full = tf.FIFOQueue(1, tf.float32, shapes=[[]], name="full_q")
    with tf.device("/job:worker/task:0"):
        got = empty.dequeue() + 1.0  # the step spans two workers
    push = full.enqueue([5.0])
    sess = _session(clean_cluster, resident)
    sess.run(push)
    reader = _Background(lambda: sess.run(got))
    writer = _Background(lambda: sess.run(push))
    time.sleep(0.7)
    assert not reader.done() and not writer.done()
    closed_at = time.monotonic()
    sess.close()
    assert reader.done(10) and writer.done(10), "closing the session left a step hanging"
    for blocked in (reader, writer):
        assert isinstance(blocked.error, tf.errors.CancelledError), blocked.error
        assert blocked.ended - closed_at < 5.0
    # Only that session's steps were cancelled: the queues live on for other sessions,
    # and the cancelled enqueue added nothing.
    with _session(clean_cluster) as other:
        assert other.run(full.size()) == 1
        assert other.run(full.dequeue()) == 5.0
        other.run(empty.enqueue([1.5]))
        assert other.run(got) == 2.5


def test_a_step_past_its_deadline_takes_no_element_later(clean_cluster):
    with tf.device("/job:worker/task:0"):
        q = tf.FIFOQueue(4, tf.int32, shapes=[[]], name="deadline_q")
    with _session(clean_cluster) as sess:
        sess.run(q.size())
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(q.dequeue(), options=tf.RunOptions(timeout_in_ms=400))
        time.sleep(0.3)
        sess.run(q.enqueue([42]))
        time.sleep(0.3)
        # The abandoned dequeue was cancelled on the worker: the element is still here.
        assert sess.run(q.size()) == 1
        assert sess.run(q.dequeue()) == 42


def _payload(ids):
    """A deterministic float vector per element id (so checksums catch corruption)."""
    return np.asarray(ids, np.float32)[:, None] * 0.5 + np.arange(8, dtype=np.float32)[None, :]


def test_many_producers_and_consumers_lose_and_duplicate_nothing(clean_cluster):
    producers, batches, batch = 4, 12, 10
    with tf.device("/job:ps/task:0"):
        q = tf.FIFOQueue(25, [tf.int64, tf.float32], shapes=[[], [8]], name="mpmc")
    ids = tf.placeholder(tf.int64, [None])
    enqueues = []
    for k in range(2):
        with tf.device(f"/job:worker/task:{k}"):  # producers compute on both workers
            payload = tf.cast(ids, tf.float32)[:, None] * 0.5 + tf.range(8.0)[None, :]
            enqueues.append(q.enqueue_many([ids + 0, payload]))
    got_ids, got_payload = q.dequeue_up_to(7)
    consumers = []
    for k in range(2):
        with tf.device(f"/job:worker/task:{k}"):  # consumers read on both workers
            consumers.append((tf.identity(got_ids), got_payload * 1.0))
    close = q.close()

    produce_sess = _session(clean_cluster, resident=True)
    consume_sess = _session(clean_cluster)
    received: list[tuple[np.ndarray, np.ndarray]] = []
    lock = threading.Lock()

    def produce(p):
        for b in range(batches):
            start = (p * batches + b) * batch
            produce_sess.run(enqueues[(p + b) % 2], {ids: np.arange(start, start + batch)})

    def consume(c):
        while True:
            try:
                values = consume_sess.run(consumers[c % 2])
            except tf.errors.OutOfRangeError:
                return
            with lock:
                received.append(values)

    try:
        produce_sess.run(q.size())
        threads = [_Background(lambda p=p: produce(p)) for p in range(producers)]
        threads += [_Background(lambda c=c: consume(c)) for c in range(3)]
        for t in threads[:producers]:
            assert t.done(120), "a producer hung"
            assert t.error is None, t.error
        consume_sess.run(close)
        for t in threads[producers:]:
            assert t.done(60), "a consumer hung"
            assert t.error is None, t.error
    finally:
        produce_sess.close()
        consume_sess.close()
    all_ids = np.concatenate([r[0] for r in received])
    all_payload = np.concatenate([r[1] for r in received])
    total = producers * batches * batch
    assert len(all_ids) == total  # count
    assert len(np.unique(all_ids)) == total  # no duplicates
    assert set(all_ids.tolist()) == set(range(total))  # nothing lost
    order = np.argsort(all_ids)
    np.testing.assert_array_equal(all_payload[order], _payload(np.arange(total)))
    checksum = zlib.adler32(np.ascontiguousarray(all_payload[order]).tobytes())
    assert checksum == zlib.adler32(_payload(np.arange(total)).tobytes())


def test_random_shuffle_and_padding_queues_on_a_worker(clean_cluster):
    tf.set_random_seed(7)
    with tf.device("/job:worker/task:1"):
        rq = tf.RandomShuffleQueue(50, 5, tf.int32, shapes=[[]], seed=3, name="shuffled")
        pq = tf.PaddingFIFOQueue(10, tf.int32, shapes=[[None]], name="padded")
    v = tf.placeholder(tf.int32, [None])
    with _session(clean_cluster) as sess:
        sess.run(rq.enqueue_many([np.arange(20)]))
        # min_after_dequeue: 15 of 20 may leave while the queue is open.
        first = sess.run(rq.dequeue_many(15))
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(rq.dequeue(), options=tf.RunOptions(timeout_in_ms=300))
        sess.run(rq.close())
        rest = sess.run(rq.dequeue_up_to(10))
        assert sorted(first.tolist() + rest.tolist()) == list(range(20))
        assert first.tolist() != list(range(15))
        for row in ([1], [2, 3, 4], [5, 6]):
            sess.run(pq.enqueue([v]), {v: row})
        batch = sess.run(pq.dequeue_many(3))
        np.testing.assert_array_equal(batch, [[1, 0, 0], [2, 3, 4], [5, 6, 0]])


@pytest.mark.parametrize("resident", MODES)
def test_a_shared_queue_redeclared_differently_is_refused(clean_cluster, resident):
    """A second graph declaring the shared queue ``jobs`` with another dtype finds the
    first one on the worker and is refused, naming both declarations; the queue and its
    element stay as they were."""
    with tf.device("/job:worker/task:1"):
        q = tf.FIFOQueue(4, [tf.int64], shapes=[[2]], shared_name="jobs")
        put = q.enqueue(tf.constant([7, 8], tf.int64))
        size = q.size()
        get = q.dequeue()
    with _session(clean_cluster, resident) as sess:
        sess.run(put)
    other = tf.Graph()
    with other.as_default(), tf.device("/job:worker/task:1"):
        q2 = tf.FIFOQueue(4, [tf.float32], shapes=[[2]], shared_name="jobs")
        size2 = q2.size()
    config = tf.ConfigProto(resident_steps=resident)
    with tf.Session(clean_cluster, graph=other, config=config) as sess2:
        with pytest.raises(tf.errors.InvalidArgumentError, match="jobs") as info:
            sess2.run(size2)
        assert "int64" in str(info.value) and "float32" in str(info.value)
    with _session(clean_cluster, resident) as sess:
        assert sess.run(size) == 1
        got = sess.run(get)
        assert got.dtype == np.int64 and got.tolist() == [7, 8]
