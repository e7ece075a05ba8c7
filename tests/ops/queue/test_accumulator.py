"""``tf.ConditionalAccumulator`` and its state: the mean of fresh gradients, stale ones
dropped, against ``tensorflow.compat.v1`` in one session and alone (no Dask)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import dataflow as tf
from dataflow.framework import errors
from dataflow.ops.queue.accumulator_state import AccumulatorState


def _program(lib):
    acc = lib.ConditionalAccumulator(lib.float32, shape=[2], shared_name="acc")
    g = lib.placeholder(lib.float32, [2])
    step = lib.placeholder(lib.int64, [])
    apply = acc.apply_grad(g, local_step=step)
    take = acc.take_grad(2)
    count = acc.num_accumulated()
    set_step = acc.set_global_step(3)
    out = []
    with lib.Session() as sess:
        sess.run(apply, {g: [1.0, 2.0], step: 0})
        sess.run(apply, {g: [3.0, 6.0], step: 5})
        out.append(sess.run(count))
        out.append(sess.run(take))  # mean of both; the accumulator's step becomes 1
        sess.run(apply, {g: [9.0, 9.0], step: 0})  # stale: dropped
        out.append(sess.run(count))
        sess.run(set_step)
        sess.run(apply, {g: [1.0, 1.0], step: 2})  # stale against step 3
        sess.run(apply, {g: [2.0, 4.0], step: 3})
        sess.run(apply, {g: [4.0, 8.0], step: 4})
        out.append(sess.run(count))
        out.append(sess.run(take))
    return out


@pytest.mark.tf
def test_matches_tf():
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    with tf.Graph().as_default():
        ours = _program(tf)
    with tf1.Graph().as_default():
        theirs = _program(tf1)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b)


def test_state_sums_with_sum_reduction_and_checks_shapes():
    state = AccumulatorState("acc", (2,), "SUM")
    assert state.apply_grad(np.array([1.0, 2.0]), 0)
    assert state.apply_grad(np.array([1.0, 2.0]), 0)
    np.testing.assert_array_equal(state.take_grad(2), [2.0, 4.0])
    assert state.global_step == 1
    assert not state.apply_grad(np.array([5.0, 5.0]), 0)
    with pytest.raises(errors.InvalidArgumentError, match="Shape mismatch"):
        state.apply_grad(np.zeros(3), 1)
    with pytest.raises(errors.InvalidArgumentError, match="num_required must be positive"):
        state.take_grad(0)


def test_take_grad_waits_for_enough_gradients_and_is_cancelled_on_clear():
    state = AccumulatorState("acc", None, "MEAN")
    got = []
    taker = threading.Thread(target=lambda: got.append(state.take_grad(2)))
    taker.start()
    state.apply_grad(np.array(1.0), 0)
    taker.join(0.2)
    assert taker.is_alive()  # one gradient is not enough
    state.apply_grad(np.array(3.0), 0)
    taker.join(5)
    assert got == [2.0]
    failed = []

    def take() -> None:
        try:
            state.take_grad(1)
        except errors.CancelledError as exc:
            failed.append(exc)

    waiter = threading.Thread(target=take)
    waiter.start()
    state.cancel_all()
    waiter.join(5)
    assert len(failed) == 1


def test_build_time_errors_name_the_problem():
    acc = tf.ConditionalAccumulator(tf.float32, shape=[2])
    with pytest.raises(ValueError, match="incompatible"):
        acc.apply_grad(tf.zeros([3]))
    with pytest.raises(ValueError, match="reduction_type"):
        tf.ConditionalAccumulator(tf.float32, reduction_type="MAX")


def test_interrupting_fails_only_the_takes_waiting_now():
    state = AccumulatorState("acc", None, "MEAN")
    failed = []

    def take() -> None:
        try:
            state.take_grad(1)
        except errors.CancelledError as exc:
            failed.append(exc)

    waiter = threading.Thread(target=take)
    waiter.start()
    deadline = threading.Event()
    deadline.wait(0.1)
    state.interrupt_takes()
    waiter.join(5)
    assert len(failed) == 1
    state.apply_grad(np.array(2.0), 0)
    assert state.take_grad(1) == 2.0  # the accumulator itself still works
