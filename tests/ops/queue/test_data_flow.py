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
        sess.run(q.dequeue_many(5))  # not enough: elements stay queued
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


# --- deadlines (issue 11): RunOptions(timeout_in_ms) and operation_timeout_in_ms ----------
def test_dequeue_past_the_deadline_fails_and_loses_nothing(sess):
    q = tf.FIFOQueue(2, tf.float32, shapes=[[]], name="q")
    deq, size = q.dequeue(), q.size()
    start = time.monotonic()
    with pytest.raises(tf.errors.DeadlineExceededError, match="(?s)Timed out.*'q'.*dequeue"):
        sess.run(deq, options=tf.RunOptions(timeout_in_ms=300))
    assert 0.25 <= time.monotonic() - start < 5
    # The session and the queue are intact: an element enqueued now is the one dequeued.
    sess.run(q.enqueue([7.0]))
    assert sess.run(size) == 1
    assert sess.run(deq, options=tf.RunOptions(timeout_in_ms=300)) == 7.0


def test_enqueue_into_a_full_queue_past_the_deadline_adds_nothing(sess):
    q = tf.FIFOQueue(1, tf.int32, shapes=[[]])
    x = tf.placeholder(tf.int32, [])
    enq = q.enqueue([x])
    sess.run(enq, {x: 1})
    with pytest.raises(tf.errors.DeadlineExceededError, match="full"):
        sess.run(enq, {x: 2}, options=tf.RunOptions(timeout_in_ms=200))
    assert sess.run(q.size()) == 1
    assert sess.run(q.dequeue()) == 1


def test_dequeue_many_past_the_deadline_keeps_the_elements_there(sess):
    q = tf.FIFOQueue(5, tf.int32, shapes=[[]])
    sess.run(q.enqueue_many([[1, 2]]))
    with pytest.raises(tf.errors.DeadlineExceededError):
        sess.run(q.dequeue_many(3), options=tf.RunOptions(timeout_in_ms=200))
    assert sess.run(q.dequeue_many(2)).tolist() == [1, 2]


def test_config_operation_timeout_is_the_default_deadline():
    q = tf.FIFOQueue(2, tf.int32, shapes=[[]])
    deq = q.dequeue()
    with tf.Session(config=tf.ConfigProto(operation_timeout_in_ms=200)) as s:
        start = time.monotonic()
        with pytest.raises(tf.errors.DeadlineExceededError):
            s.run(deq)
        assert time.monotonic() - start < 5
        # RunOptions overrides it: this one waits for the element enqueued meanwhile.
        timer = _run_later(lambda: s.run(q.enqueue([3])), delay=0.4)
        assert s.run(deq, options=tf.RunOptions(timeout_in_ms=5000)) == 3
        timer.join()


def test_deadline_applies_to_a_traced_step(sess):
    q = tf.FIFOQueue(2, tf.int32, shapes=[[]])
    meta = tf.RunMetadata()
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE, timeout_in_ms=200)
    with pytest.raises(tf.errors.DeadlineExceededError):
        sess.run(q.dequeue(), options=options, run_metadata=meta)


def test_a_deadline_ends_with_its_step():
    # A step without a deadline, after one with, still blocks until an element arrives.
    q = tf.FIFOQueue(2, tf.int32, shapes=[[]])
    deq = q.dequeue()
    with tf.Session() as s:
        with pytest.raises(tf.errors.DeadlineExceededError):
            s.run(deq, options=tf.RunOptions(timeout_in_ms=100))
        timer = _run_later(lambda: s.run(q.enqueue([5])), delay=0.4)
        assert s.run(deq) == 5
        timer.join()


# --- shapes and dtypes are the queue's (issue 11) -------------------------------------------
def test_fed_components_of_another_shape_are_refused_at_run_time(sess):
    q = tf.FIFOQueue(4, tf.float32, shapes=[[3]], name="q")
    x = tf.placeholder(tf.float32, None)
    with pytest.raises(
        tf.errors.InvalidArgumentError,
        match=r"component 0.*Expected \[3\], "
        r"got \[4\]",
    ):
        sess.run(q.enqueue([x]), {x: np.zeros(4, np.float32)})
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Expected \[2,3\], got \[2,4\]"):
        sess.run(q.enqueue_many([x]), {x: np.zeros((2, 4), np.float32)})
    with pytest.raises(tf.errors.InvalidArgumentError, match="rank >= 1"):
        sess.run(q.enqueue_many([x]), {x: np.float32(1.0)})
    assert sess.run(q.size()) == 0
    sess.run(q.enqueue([x]), {x: np.ones(3, np.float32)})
    np.testing.assert_array_equal(sess.run(q.dequeue()), [1.0, 1.0, 1.0])


def test_padding_queue_refuses_fixed_dimensions_that_differ(sess):
    q = tf.PaddingFIFOQueue(4, tf.int32, shapes=[[None, 2]])
    x = tf.placeholder(tf.int32, None)
    sess.run(q.enqueue([x]), {x: np.ones((3, 2), np.int32)})
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Expected \[\?,2\], got \[3\]"):
        sess.run(q.enqueue([x]), {x: np.ones(3, np.int32)})
    with pytest.raises(ValueError, match="shape"):
        q.enqueue([np.ones((2, 3), np.int32)])


def test_static_shapes_and_dtypes_are_refused_at_build_time():
    q = tf.FIFOQueue(2, tf.float32, shapes=[[3]], name="q")
    with pytest.raises(ValueError, match=r"\(4,\).*\(3,\)"):
        q.enqueue([tf.zeros([4])])
    with pytest.raises(ValueError, match="(?s)'q'.*component 0.*int32"):
        q.enqueue([tf.constant([1, 2, 3])])
    ints = tf.FIFOQueue(2, tf.int32, shapes=[[]])
    with pytest.raises(TypeError, match="1.5"):
        ints.enqueue([1.5])
    with pytest.raises(ValueError, match="fully defined"):
        tf.FIFOQueue(2, tf.float32, shapes=[[None]])
    with pytest.raises(ValueError, match="same length"):
        tf.FIFOQueue(2, tf.float32, shapes=[[2], [3]])
    with pytest.raises(ValueError, match="must be >= 0"):
        q.dequeue_many(-1)


def test_dequeue_many_needs_shapes_and_zero_is_an_empty_batch(sess):
    shapeless = tf.FIFOQueue(4, tf.float32)
    sess.run(shapeless.enqueue([1.0]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="specified shapes"):
        sess.run(shapeless.dequeue_many(1))
    assert sess.run(shapeless.dequeue()) == 1.0  # the element is still there
    q = tf.FIFOQueue(4, tf.int64, shapes=[[2]])
    empty = sess.run(q.dequeue_many(0))
    assert empty.shape == (0, 2) and empty.dtype == np.int64


@pytest.mark.parametrize("dtype", [tf.int64, tf.int32, tf.float64, tf.bool, tf.uint8])
def test_dequeued_values_keep_the_queue_dtype(sess, dtype):
    q = tf.FIFOQueue(8, dtype, shapes=[[]])
    x = tf.placeholder(dtype, [None])
    sess.run(q.enqueue([1]))
    sess.run(q.enqueue_many([x]), {x: np.array([1, 0, 1])})
    one, many = sess.run(q.dequeue()), sess.run(q.dequeue_many(2))
    sess.run(q.close())
    rest = sess.run(q.dequeue_up_to(5))
    want = dtype.as_numpy_dtype
    assert np.asarray(one).dtype == want and many.dtype == want and rest.dtype == want
    assert q.dequeue().dtype == dtype


def test_a_shared_queue_redeclared_differently_is_refused(sess):
    a = tf.FIFOQueue(2, tf.float32, shapes=[[3]], shared_name="box", name="a")
    same = tf.FIFOQueue(2, tf.float32, shapes=[[3]], shared_name="box", name="same")
    sess.run(a.enqueue([[1.0, 2.0, 3.0]]))
    assert sess.run(same.size()) == 1  # the same declaration shares the queue
    others = [
        tf.FIFOQueue(2, tf.int32, shapes=[[3]], shared_name="box", name="dtype"),
        tf.FIFOQueue(2, tf.float32, shapes=[[4]], shared_name="box", name="shape"),
        tf.FIFOQueue(5, tf.float32, shapes=[[3]], shared_name="box", name="capacity"),
        tf.RandomShuffleQueue(2, 1, tf.float32, shapes=[[3]], shared_name="box", name="kind"),
    ]
    for other in others:
        with pytest.raises(
            tf.errors.InvalidArgumentError,
            match=r"(?s)'queue:box'.*FIFOQueue with component types "
            rf"\[float32\].*requested.*{other.name}",
        ):
            sess.run(other.size())
    assert sess.run(a.size()) == 1  # the queue is untouched


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
    x = tf.placeholder(tf.float32, [])  # never fed: the enqueue fails every time
    tf.train.add_queue_runner(tf.train.QueueRunner(q, [q.enqueue([x])]))
    with tf.Session() as s:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(s, coord)
        assert coord.wait_for_stop(5)
        with pytest.raises(tf.errors.InvalidArgumentError, match="must feed"):
            coord.join(threads)
