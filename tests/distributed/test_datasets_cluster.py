"""``tf.data`` on a real cluster: the pipeline is built and run on the worker whose
iterator consumes it (a dataset joins its iterator's colocation group), the iterator is
a resource in that worker's store, and only elements travel. Uses the folder's shared
``LocalCluster(ps=1, worker=2)``."""

from __future__ import annotations

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
