"""The task-graph path's task-group anchors on a real cluster (issue 29, item 7).

Each session holds one tiny key per stage task group (``DaskBackend._keep_groups``) so
that every step of a stage joins one group. The anchors are computed tasks, not
scattered data: a lost worker that held some is quietly recomputed by the scheduler,
with no ERROR naming internal keys, and the groups stay as many as before. These tests
kill workers, so they run on a cluster of their own (``fragile``).
"""

from __future__ import annotations

import numpy as np
import pytest

import dataflow as tf

from .conftest import kill_worker, wait_until_back

pytestmark = pytest.mark.distributed


def _task_groups(dask_scheduler):
    return len(dask_scheduler.task_groups)


def test_losing_every_worker_logs_no_lost_scattered_data_and_keeps_the_groups(fragile):
    tf.Session.reset(fragile)
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            w = tf.Variable(tf.ones([3, 1]), name="w")
        with tf.device("/job:worker/task:0"):
            x = tf.placeholder(tf.float32, [None, 3])
            loss = tf.reduce_sum(tf.square(tf.matmul(x, w)))
            train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
        feed = {x: np.ones((4, 3), np.float32)}
        config = tf.ConfigProto(resident_steps=False)
        with tf.Session(fragile, config=config) as sess:
            sess.run(w.initializer)
            for _ in range(5):
                sess.run([loss, train], feed)
            groups = fragile.client.run_on_scheduler(_task_groups)
            # Wherever the anchors were computed, one of these workers holds them.
            for name in ("ps-0", "worker-0", "worker-1"):
                wait_until_back(fragile, name, kill_worker(fragile, name))
            # The session goes on (its ps came back empty: initialize again) in the
            # same groups: the scheduler recomputed the anchors it lost.
            for _ in range(20):
                try:
                    sess.run(w.initializer)
                    break
                except tf.errors.UnavailableError:  # the scheduler still sees one gone
                    continue
            for _ in range(5):
                sess.run([loss, train], feed)
            assert fragile.client.run_on_scheduler(_task_groups) == groups
    logs = [message for _level, message in fragile.client.get_scheduler_logs(n=10000)]
    assert not [m for m in logs if "scattered data" in m], logs
