"""The task-graph path keeps the cluster's per-key state flat (issue 29, item 7).

A task-graph step's keys carry a reused key slot, not the step number
(``runtime/dask/graph_path.py``), so that the structures Dask's processes keep per key
name stop growing with steps: above all ``key_split``'s cache (up to 100,000 keys in the
scheduler's and every worker's process), which grew by one entry per stage per step
while each step's keys were new. Counted here on a real ``LocalCluster(processes=True)``
rather than read off resident memory, which the other jobs on a machine make noisy. The
reuse must never hand a step another step's result: concurrent steps, a failed step and
the steps after it are checked value by value.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import dataflow as tf

pytestmark = pytest.mark.distributed


def _scheduler_state(dask_scheduler):
    from dask.utils import key_split

    spans = dask_scheduler.extensions["spans"]
    return {
        "key_split": key_split.cache_info().currsize,
        "tasks": len(dask_scheduler.tasks),
        "task_groups": len(dask_scheduler.task_groups),
        "task_prefixes": len(dask_scheduler.task_prefixes),
        "span_groups": sum(len(span.groups) for span in spans.spans.values()),
    }


def _worker_state(dask_worker):
    from dask.utils import key_split

    return {
        "key_split": key_split.cache_info().currsize,
        "tasks": len(dask_worker.state.tasks),
        "data": len(dask_worker.data),
    }


def _step_tasks(session, dask_worker):
    """Tasks of ``session``'s steps (not its slot-0 task-group anchors) still known to
    a worker or (``run_on_scheduler`` passes it as ``dask_worker`` too) the scheduler."""
    state = getattr(dask_worker, "state", None)  # a worker's; the scheduler has none
    tasks = state.tasks if state is not None else dask_worker.tasks
    return sum(
        1 for key in list(tasks) if isinstance(key, tuple) and key[1] == session and key[2] != 0
    )


def _sizes(client, session):
    """The sizes once the last step's release has reached every process (it travels on
    the client's batched stream, after ``run`` has returned)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        held = client.run_on_scheduler(_step_tasks, session) + sum(
            client.run(_step_tasks, session).values()
        )
        if not held:
            break
        time.sleep(0.05)
    sizes = {"scheduler": client.run_on_scheduler(_scheduler_state)}
    sizes.update(client.run(_worker_state))
    return sizes


def _ridge():
    setter = tf.train.replica_device_setter(ps_tasks=1, worker_device="/job:worker/task:0")
    with tf.device(setter):
        beta = tf.Variable(np.zeros((3, 1), np.float32), name="beta")
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        y = tf.placeholder(tf.float32, [None, 1], name="y")
        cost = tf.reduce_mean(tf.square(y - tf.matmul(x, beta)))
        grad = tf.gradients(cost, [beta])[0]
    with tf.device("/job:ps/task:0"):
        update = beta.assign_sub(0.01 * grad)
    return beta, x, y, cost, update


def _graph_session(cluster):
    return tf.Session(cluster, config=tf.ConfigProto(resident_steps=False))


def test_steps_do_not_grow_the_per_key_state(clean_cluster):
    client = clean_cluster.client
    rng = np.random.default_rng(0)
    feed_x = rng.standard_normal((8, 3)).astype(np.float32)
    feed_y = rng.standard_normal((8, 1)).astype(np.float32)
    with tf.Graph().as_default():
        beta, x, y, cost, update = _ridge()
        feed = {x: feed_x, y: feed_y}
        with _graph_session(clean_cluster) as sess:
            sess.run(beta.initializer)
            for _ in range(30):
                sess.run([cost, update], feed)
            session = sess.backend.session_id
            before = _sizes(client, session)
            steps = 300
            for _ in range(steps):
                sess.run([cost, update], feed)
            after = _sizes(client, session)
            slots = sess.backend._key_slots.made
    # Three stages a step: new keys each step grew every busy process's key_split
    # cache by two or three entries a step (900 on the scheduler over these steps).
    for process, sizes in before.items():
        grown = after[process]["key_split"] - sizes["key_split"]
        assert grown < steps // 10, (process, sizes, after[process])
        for structure in sizes:
            if structure != "key_split":
                assert after[process][structure] == sizes[structure], (process, structure)
    assert slots == 1  # one thread: one key slot, for ever


def test_concurrent_steps_with_reused_keys_get_their_own_values(clean_cluster):
    """Threads share the session's slots: each step's fetched value is its own feed's."""
    with tf.Graph().as_default():
        with tf.device("/job:worker/task:0"):
            x = tf.placeholder(tf.float32, [4], name="x")
            doubled = x * 2.0
        with tf.device("/job:ps/task:0"):
            total = tf.reduce_sum(doubled)
        with _graph_session(clean_cluster) as sess:
            wrong: list = []

            def run(thread: int) -> None:
                for i in range(40):
                    value = np.full(4, thread * 1000 + i, np.float32)
                    got_doubled, got_total = sess.run([doubled, total], {x: value})
                    if not (np.array_equal(got_doubled, value * 2) and got_total == 8 * value[0]):
                        wrong.append((thread, i, got_doubled, got_total))

            threads = [threading.Thread(target=run, args=(t,)) for t in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert not wrong
            # No more slots than steps at once (a slot whose release is still on its
            # way is skipped, so a few spare ones may appear).
            assert 1 <= sess.backend._key_slots.made <= 8


def test_a_failed_step_retires_its_keys_and_later_steps_are_exact(clean_cluster):
    with tf.Graph().as_default():
        with tf.device("/job:worker/task:0"):
            x = tf.placeholder(tf.float32, [None], name="x")
            checked = tf.debugging.check_numerics(x, "x is not finite")
        with tf.device("/job:ps/task:0"):
            total = tf.reduce_sum(checked)
        with _graph_session(clean_cluster) as sess:
            assert sess.run(total, {x: [1.0, 2.0]}) == 3.0
            with pytest.raises(tf.errors.InvalidArgumentError, match="x is not finite"):
                sess.run(total, {x: [1.0, np.nan]})
            # The failed step's slot is not used again: the next step takes a new one.
            for i in range(5):
                assert sess.run(total, {x: [float(i), 1.0]}) == i + 1.0
            assert sess.backend._key_slots.made == 2
