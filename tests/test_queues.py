"""Queues, queue runners and the coordinator, in the embedded session."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import dataflow as tf


def _run_later(fn, delay=0.2):
    t = threading.Timer(delay, fn)
    t.start()
    return t


def test_fifo_order_capacity_and_size(sess):
    q = tf.FIFOQueue(3, tf.int32, shapes=[[]])
    x = tf.placeholder(tf.int32, [])
    enq, deq, size = q.enqueue([x]), q.dequeue(), q.size()
    for i in range(3):
        sess.run(enq, {x: i})
    assert sess.run(size) == 3
    # Full: a fourth enqueue blocks until a dequeue makes room.
    done = threading.Event()
    worker = threading.Thread(target=lambda: (sess.run(enq, {x: 3}), done.set()))
    worker.start()
    assert not done.wait(0.3)
    assert sess.run(deq) == 0
    assert done.wait(5)
    worker.join()
    assert [sess.run(deq) for _ in range(3)] == [1, 2, 3]


def test_dequeue_blocks_until_enqueue(sess):
    q = tf.FIFOQueue(2, tf.float32, shapes=[[2]])
    enq = q.enqueue([[1.0, 2.0]])
    timer = _run_later(lambda: sess.run(enq))
    start = time.monotonic()
    np.testing.assert_array_equal(sess.run(q.dequeue()), [1.0, 2.0])
    assert time.monotonic() - start >= 0.1
    timer.join()


def test_multiple_components_names_and_many(sess):
    q = tf.FIFOQueue(10, [tf.int32, tf.float32], shapes=[[], [2]])
    sess.run(q.enqueue_many([[1, 2, 3], np.arange(6, dtype=np.float32).reshape(3, 2)]))
    ints, floats = sess.run(q.dequeue_many(2))
    assert ints.tolist() == [1, 2] and floats.shape == (2, 2)
    named = tf.FIFOQueue(5, [tf.int32, tf.int32], shapes=[[], []], names=["a", "b"])
    sess.run(named.enqueue({"a": 1, "b": 2}))
    assert sess.run(named.dequeue()) == {"a": 1, "b": 2}


def test_close_semantics(sess):
    q = tf.FIFOQueue(10, tf.int32, shapes=[[]])
    sess.run(q.enqueue_many([[1, 2, 3]]))
    sess.run(q.close())
    assert sess.run(q.is_closed())
    with pytest.raises(tf.errors.CancelledError, match="closed"):
        sess.run(q.enqueue([4]))
    with pytest.raises(tf.errors.OutOfRangeError):
        sess.run(q.dequeue_many(5))   # not enough: elements stay queued
    assert sess.run(q.dequeue_up_to(5)).tolist() == [1, 2, 3]
    with pytest.raises(tf.errors.OutOfRangeError, match="closed"):
        sess.run(q.dequeue())


def test_close_wakes_blocked_dequeue_with_out_of_range(sess):
    q = tf.FIFOQueue(2, tf.int32, shapes=[[]])
    close = q.close()
    timer = _run_later(lambda: sess.run(close))
    with pytest.raises(tf.errors.OutOfRangeError):
        sess.run(q.dequeue())
    timer.join()


def test_close_cancel_pending_enqueues(sess):
    q = tf.FIFOQueue(1, tf.int32, shapes=[[]])
    enq = q.enqueue([1])
    sess.run(enq)
    timer = _run_later(lambda: sess.run(q.close(cancel_pending_enqueues=True)))
    with pytest.raises(tf.errors.CancelledError):
        sess.run(enq)
    timer.join()


def test_session_close_cancels_blocked_steps():
    q = tf.FIFOQueue(2, tf.int32, shapes=[[]])
    deq = q.dequeue()
    s = tf.Session()
    errors = []

    def consume():
        try:
            s.run(deq)
        except tf.errors.CancelledError as exc:
            errors.append(exc)

    worker = threading.Thread(target=consume)
    worker.start()
    time.sleep(0.2)
    s.close()
    worker.join(5)
    assert not worker.is_alive()
    assert len(errors) == 1


def test_random_shuffle_queue_keeps_min_after_dequeue_and_is_seeded():
    def drain(seed):
        tf.reset_default_graph()
        tf.set_random_seed(7)
        q = tf.RandomShuffleQueue(50, 5, tf.int32, shapes=[[]], seed=seed)
        with tf.Session() as s:
            s.run(q.enqueue_many([list(range(20))]))
            first = [s.run(q.dequeue()) for _ in range(15)]
            # 5 left = min_after_dequeue: the next dequeue would block until close.
            s.run(q.close())
            rest = s.run(q.dequeue_up_to(10)).tolist()
            return first + rest

    a, b = drain(3), drain(3)
    assert a == b
    assert sorted(a) == list(range(20))
    assert a != list(range(20))


def test_padding_fifo_queue_pads_batches(sess):
    q = tf.PaddingFIFOQueue(5, tf.int32, shapes=[[None]])
    x = tf.placeholder(tf.int32, [None])
    enq = q.enqueue([x])
    sess.run(enq, {x: [1]})
    sess.run(enq, {x: [1, 2, 3]})
    np.testing.assert_array_equal(sess.run(q.dequeue_many(2)), [[1, 0, 0], [1, 2, 3]])


def test_bad_components_fail_at_build_time():
    q = tf.FIFOQueue(3, [tf.int32, tf.float32], shapes=[[], [2]])
    with pytest.raises(ValueError, match="takes 2 components"):
        q.enqueue([1])
    with pytest.raises(ValueError, match="shape"):
        q.enqueue([1, [1.0, 2.0, 3.0]])
    with pytest.raises(ValueError, match="min_after_dequeue"):
        tf.RandomShuffleQueue(3, 3, tf.int32)


def test_many_producers_and_consumers_lose_and_duplicate_nothing():
    q = tf.FIFOQueue(8, tf.int64, shapes=[[]])
    x = tf.placeholder(tf.int64, [])
    enq, deq = q.enqueue([x]), q.dequeue()
    produced = [list(range(p * 1000, p * 1000 + 200)) for p in range(3)]
    consumed: list[int] = []
    lock = threading.Lock()
    with tf.Session() as s:
        def produce(values):
            for v in values:
                s.run(enq, {x: v})

        def consume(n):
            got = [int(s.run(deq)) for _ in range(n)]
            with lock:
                consumed.extend(got)

        threads = [threading.Thread(target=produce, args=(p,)) for p in produced]
        threads += [threading.Thread(target=consume, args=(150,)) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
    expected = sorted(v for p in produced for v in p)
    assert sorted(consumed) == expected
    assert sum(consumed) == sum(expected)


def test_queue_runner_with_coordinator_end_of_input():
    # A producer queue closed upstream ends the runner, which then closes its queue.
    source = tf.FIFOQueue(100, tf.int32, shapes=[[]])
    sink = tf.FIFOQueue(4, tf.int32, shapes=[[]])
    move = sink.enqueue([source.dequeue() * 10])
    tf.train.add_queue_runner(tf.train.QueueRunner(sink, [move, move]))
    with tf.Session() as s:
        s.run(source.enqueue_many([list(range(30))]))
        s.run(source.close())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(s, coord)
        out = []
        try:
            while True:
                out.append(int(s.run(sink.dequeue())))
        except tf.errors.OutOfRangeError:
            pass
        coord.request_stop()
        coord.join(threads)
    assert sorted(out) == [10 * i for i in range(30)]


def test_coordinator_reraises_thread_errors():
    coord = tf.train.Coordinator()

    def work():
        with coord.stop_on_exception():
            raise ValueError("producer failed")

    t = threading.Thread(target=work)
    t.start()
    assert coord.wait_for_stop(5)
    with pytest.raises(ValueError, match="producer failed"):
        coord.join([t])
    clean = tf.train.Coordinator()
    clean.request_stop(tf.errors.OutOfRangeError(None, None, "done"))
    clean.join([])


def test_queue_runner_errors_reach_the_coordinator():
    q = tf.FIFOQueue(4, tf.float32, shapes=[[]])
    x = tf.placeholder(tf.float32, [])   # never fed: the enqueue fails every time
    tf.train.add_queue_runner(tf.train.QueueRunner(q, [q.enqueue([x])]))
    with tf.Session() as s:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(s, coord)
        assert coord.wait_for_stop(5)
        with pytest.raises(tf.errors.InvalidArgumentError, match="must feed"):
            coord.join(threads)
