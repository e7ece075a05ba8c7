"""Queue attempts are served in arrival order, as TF's are.

Several producer threads ``enqueue_many`` blocks into a small queue: each block goes in
whole and in order (TF1 dequeues rows 0-99 of one producer, never a mixture), and a
``dequeue_many`` larger than the capacity takes elements as they arrive.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import dataflow as tf
from dataflow.framework import errors
from dataflow.ops.queue.queue_state import QueueState


def _blocks(module, capacity: int, producers: int, blocks: int) -> list[tuple[set, bool]]:
    graph = module.Graph()
    with graph.as_default():
        q = module.FIFOQueue(capacity, [module.int32, module.int32], shapes=[[], []])
        who = module.placeholder(module.int32, [100])
        row = module.placeholder(module.int32, [100])
        enqueue = q.enqueue_many([who, row])
        dequeue = q.dequeue_many(100)
        sess = module.Session(graph=graph)

    def produce(k: int) -> None:
        for _ in range(blocks):
            sess.run(enqueue, {who: np.full(100, k), row: np.arange(100)})

    threads = [threading.Thread(target=produce, args=(k,)) for k in range(producers)]
    for t in threads:
        t.start()
    out = []
    for _ in range(producers * blocks):
        w, r = sess.run(dequeue)
        out.append((set(w.tolist()), bool((r == np.arange(100)).all())))
    for t in threads:
        t.join()
    sess.close()
    return out


@pytest.mark.parametrize("capacity", [10, 150])
def test_enqueue_many_blocks_from_several_threads_stay_whole(capacity: int) -> None:
    got = _blocks(tf, capacity, producers=4, blocks=3)
    assert all(len(who) == 1 and in_order for who, in_order in got), got
    assert sorted(next(iter(who)) for who, _ in got) == sorted(list(range(4)) * 3)


@pytest.mark.tf
def test_tf1_keeps_blocks_whole_too() -> None:
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    tf1.disable_eager_execution()
    got = _blocks(tf1, 10, producers=4, blocks=2)
    assert all(len(who) == 1 and in_order for who, in_order in got), got


def _in_thread(fn):
    box: dict = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except Exception as exc:  # handed to the test
            box["error"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, box


def test_a_waiting_enqueue_many_keeps_its_place_in_line() -> None:
    q = QueueState("q", 2, 1)
    a, _ = _in_thread(lambda: q.enqueue_many((np.array([1, 2, 3]),)))
    while q.size() < 2:
        pass
    b, _ = _in_thread(lambda: q.enqueue_many((np.array([7, 8]),)))
    taken, box = _in_thread(lambda: q.dequeue_many(5))
    for t in (a, b, taken):
        t.join(5)
    assert [int(e[0]) for e in box["value"]] == [1, 2, 3, 7, 8]


def test_a_dequeue_that_gives_up_puts_its_elements_back_in_front() -> None:
    q = QueueState("q", 10, 1)
    q.enqueue_many((np.array([1, 2]),))
    q.close()
    with pytest.raises(errors.OutOfRangeError):
        q.dequeue_many(3)
    assert [int(e[0]) for e in q.dequeue_many(2)] == [1, 2]


def test_an_attempt_leaving_before_its_turn_is_skipped() -> None:
    q = QueueState("q", 1, 1)
    q.enqueue((np.array(0),))

    class Cancelled:
        flag = False

        def will_block(self) -> None:
            pass

        def cancelled(self) -> bool:
            return self.flag

    waiter = Cancelled()
    first, _ = _in_thread(lambda: q.enqueue((np.array(1),)))
    time.sleep(0.05)  # each joins the line before the next starts
    second, box = _in_thread(lambda: q.enqueue((np.array(2),), waiter))
    time.sleep(0.05)
    third, _ = _in_thread(lambda: q.enqueue((np.array(3),)))
    time.sleep(0.05)
    waiter.flag = True
    q.wake()
    second.join(5)
    assert isinstance(box.get("error"), errors.CancelledError)
    got = [int(q.dequeue_many(1)[0][0]) for _ in range(3)]
    first.join(5)
    third.join(5)
    assert got == [0, 1, 3]


@pytest.mark.parametrize("capacity", [3, 64])
def test_many_producers_and_consumers_lose_and_reorder_nothing(capacity: int) -> None:
    """Waiting enqueues are put in by other threads in their turn: every element
    arrives once, and each producer's elements keep their order (FIFO)."""
    q = QueueState("q", capacity, 1)
    producers, per = 4, 400

    def produce(k: int) -> None:
        for i in range(per):
            if i % 7 == 0:
                q.enqueue_many((np.array([k * 10_000 + i]),))
            else:
                q.enqueue((np.array(k * 10_000 + i),))

    got: list[list[int]] = [[], []]

    def consume(c: int) -> None:
        for _ in range(producers * per // 50 // 2):
            got[c] += [int(e[0]) for e in q.dequeue_many(50)]

    threads = [threading.Thread(target=produce, args=(k,)) for k in range(producers)]
    threads += [threading.Thread(target=consume, args=(c,)) for c in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not any(t.is_alive() for t in threads)
    everything = got[0] + got[1]
    assert sorted(everything) == sorted(
        k * 10_000 + i for k in range(producers) for i in range(per)
    )
    for c in range(2):
        for k in range(producers):
            mine = [v for v in got[c] if v // 10_000 == k]
            assert mine == sorted(mine)
