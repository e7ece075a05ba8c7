"""``tf.data`` on a real cluster: the pipeline is built and run on the worker whose
iterator consumes it (a dataset joins its iterator's colocation group), the iterator is
a resource in that worker's store, and only elements travel. Uses the folder's shared
``LocalCluster(ps=1, worker=2)``."""

from __future__ import annotations

import time

import numpy as np
import pytest

import dataflow as tf

pytestmark = pytest.mark.distributed


def _job_task(device):
    parts = dict(p.split(":", 1) for p in device.strip("/").split("/"))
    return parts["job"], parts["task"]


@pytest.mark.parametrize("resident", [False, True], ids=["graph", "resident"])
def test_pipeline_runs_on_the_consuming_worker_and_trains(clean_cluster, resident):
    rng = np.random.default_rng(0)
    xs = rng.normal(size=(40, 3)).astype(np.float32)
    ys = xs @ np.array([[1.0], [-1.0], [2.0]], np.float32)
    with tf.Graph().as_default():
        features = tf.placeholder(tf.float32, [None, 3])
        labels = tf.placeholder(tf.float32, [None, 1])
        with tf.device("/job:ps/task:0"):
            w = tf.Variable(tf.zeros([3, 1]))
        with tf.device("/job:worker/task:1"):
            dataset = (
                tf.data.Dataset.from_tensor_slices((features, labels))
                .map(lambda x, y: (x * 1.0, y))
                .batch(10)
            )
            iterator = dataset.make_initializable_iterator()
            x, y = iterator.get_next()
            loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
            train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        config = tf.ConfigProto(resident_steps=resident)
        with tf.Session(clean_cluster, config=config) as sess:
            placement = sess.placement([train, iterator.initializer], {features: xs, labels: ys})
            data_ops = [n for n in placement if "Dataset" in n or "Iterator" in n]
            assert data_ops and {_job_task(placement[n]) for n in data_ops} == {("worker", "1")}
            sess.run(tf.global_variables_initializer())
            losses = []
            for _epoch in range(3):
                sess.run(iterator.initializer, {features: xs, labels: ys})
                while True:
                    try:
                        losses.append(sess.run([loss, train])[0])
                    except tf.errors.OutOfRangeError:
                        break
    assert len(losses) == 12
    assert losses[-1] < losses[0] / 4


# --- an iterator's state belongs to its session (issue 29, item 3) ----------------------
def _batches_of_range(shared_name=None, one_shot=True):
    """TF1's way: ``range(10).batch(3)`` on worker 1, as a one-shot iterator, or an
    initializable one (``shared_name`` as given); returns ``(graph, next, init)``."""
    graph = tf.Graph()
    with graph.as_default(), tf.device("/job:worker/task:1"):
        dataset = tf.data.Dataset.range(10).batch(3)
        if one_shot:
            iterator = dataset.make_one_shot_iterator()
            return graph, iterator.get_next(), None
        iterator = dataset.make_initializable_iterator(shared_name=shared_name)
        return graph, iterator.get_next(), iterator.initializer


def _private_iterators(cluster):
    """Worker address -> names of the session-private objects in worker 1's CPU store."""

    def held():
        from dataflow.framework.kernel_context import PRIVATE_MARK
        from dataflow.runtime.dask.worker_state import RUNTIME

        store = RUNTIME.store("", "/job:worker/replica:0/task:1/device:CPU:0")
        return sorted(name for name in store.objects() if PRIVATE_MARK in name)

    return cluster.client.run(held)


@pytest.mark.parametrize("resident", [False, True], ids=["graph", "resident"])
def test_one_shot_iterator_starts_over_in_each_session(clean_cluster, resident):
    config = tf.ConfigProto(resident_steps=resident)
    graph, batch, _ = _batches_of_range()
    for _ in range(2):  # the same graph, a new session each time: TF1 reads [0,1,2] each
        with tf.Session(clean_cluster, graph=graph, config=config) as sess:
            np.testing.assert_array_equal(sess.run(batch), [0, 1, 2])
            np.testing.assert_array_equal(sess.run(batch), [3, 4, 5])
    # The same code in another client (a client of its own, by the scheduler's address).
    other_graph, other_batch, _ = _batches_of_range()
    with tf.Session(clean_cluster.target, graph=other_graph, config=config) as sess:
        np.testing.assert_array_equal(sess.run(other_batch), [0, 1, 2])
    # Two sessions open at once walk their own passes, interleaved.
    with (
        tf.Session(clean_cluster, graph=graph, config=config) as first,
        tf.Session(clean_cluster, graph=graph, config=config) as second,
    ):
        np.testing.assert_array_equal(first.run(batch), [0, 1, 2])
        np.testing.assert_array_equal(second.run(batch), [0, 1, 2])
        np.testing.assert_array_equal(first.run(batch), [3, 4, 5])
        assert any(_private_iterators(clean_cluster).values())
    # Closed sessions release their private iterators on the workers (fire and forget:
    # the release reaches the workers shortly after close returns).
    deadline = time.monotonic() + 30
    while any(_private_iterators(clean_cluster).values()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_private_iterators(clean_cluster).values())


@pytest.mark.parametrize("resident", [False, True], ids=["graph", "resident"])
def test_initializable_iterator_is_private_unless_shared_by_name(clean_cluster, resident):
    config = tf.ConfigProto(resident_steps=resident)
    graph, batch, init = _batches_of_range(one_shot=False)
    with tf.Session(clean_cluster, graph=graph, config=config) as first:
        first.run(init)
        np.testing.assert_array_equal(first.run(batch), [0, 1, 2])
        with tf.Session(clean_cluster, graph=graph, config=config) as second:
            # Its own iterator, not initialized in this session (TF1's error).
            with pytest.raises(tf.errors.FailedPreconditionError):
                second.run(batch)
    # With a shared_name, every session of the cluster walks one iterator, as in TF1.
    graph, batch, init = _batches_of_range(shared_name="shared_batches", one_shot=False)
    with tf.Session(clean_cluster, graph=graph, config=config) as first:
        first.run(init)
        np.testing.assert_array_equal(first.run(batch), [0, 1, 2])
    with tf.Session(clean_cluster, graph=graph, config=config) as second:
        np.testing.assert_array_equal(second.run(batch), [3, 4, 5])


def test_recovered_session_starts_its_own_pass_after_a_ps_loss(fragile, tmp_path):
    """A one-shot iterator on worker 0 feeds training while ps-0 (the global step) is
    SIGKILLed: ``MonitoredTrainingSession`` recovers with a new session, whose iterator
    starts a new pass as TF1's does (the iterator was not checkpointed), instead of
    continuing the broken session's pass past the element its failed step took."""
    from .conftest import kill_worker, wait_until_back

    tf.Session.reset(fragile)
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            step = tf.train.get_or_create_global_step()
        with tf.device("/job:worker/task:0"):
            element = tf.data.Dataset.range(1000).make_one_shot_iterator().get_next()
            train = tf.group(tf.assign_add(step, 1), tf.identity(element))
        seen, killed_at, recovered_in = [], None, None
        with tf.train.MonitoredTrainingSession(
            master=fragile,
            checkpoint_dir=str(tmp_path),
            save_checkpoint_steps=1000,
            hooks=[tf.train.StopAtStepHook(last_step=30)],
            recovery_wait_secs=60,
        ) as sess:
            while not sess.should_stop():
                seen.append(int(sess.run([element, train])[0]))
                if len(seen) == 10:
                    killed_at = time.monotonic()
                    wait_until_back(fragile, "ps-0", kill_worker(fragile, "ps-0"))
                elif killed_at is not None and recovered_in is None:
                    recovered_in = time.monotonic() - killed_at
            recoveries = sess.recoveries
    assert recoveries == 1
    # Ten elements, then (the global step restored from the step-0 checkpoint) a new
    # pass of 30: the recovered session reads from 0, losing and skipping nothing.
    assert seen == list(range(10)) + list(range(30)), seen
    print(f"recovered in {recovered_in:.1f} s")
