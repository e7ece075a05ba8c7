"""Summaries on a real cluster: each summary op runs on the device of its input (the
variable's ps, the worker's loss), and only the serialized protos come back to the
client's ``FileWriter``. Uses the folder's shared ``LocalCluster(ps=1, worker=2)``."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow as tf

pytestmark = pytest.mark.distributed

accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")


@pytest.mark.parametrize("resident", [False, True], ids=["graph", "resident"])
def test_summaries_run_where_their_inputs_live_and_reach_the_writer(
    clean_cluster, tmp_path, resident
):
    data = np.random.default_rng(0).normal(size=(16, 3)).astype(np.float32)
    with tf.Graph().as_default() as graph:
        with tf.device("/job:ps/task:0"):
            w = tf.Variable(tf.ones([3, 1]), name="w")
        with tf.device("/job:worker/task:1"):
            loss = tf.reduce_mean(tf.square(tf.matmul(tf.constant(data), w)))
            train = tf.train.GradientDescentOptimizer(0.05).minimize(loss)
        # No device asked for: each summary follows its input.
        weights = tf.summary.histogram("weights", w)
        tf.summary.scalar("loss", loss)
        merged = tf.summary.merge_all()
        config = tf.ConfigProto(resident_steps=resident)
        with (
            tf.Session(clean_cluster, config=config) as sess,
            tf.summary.FileWriter(str(tmp_path), graph) as writer,
        ):
            placement = sess.placement(merged)
            assert _job_task(placement[weights.op.name]) == ("ps", "0")
            assert _job_task(placement["loss"]) == ("worker", "1")
            sess.run(tf.global_variables_initializer())
            expected = []
            for step in range(3):
                summary, value = sess.run([merged, loss])
                writer.add_summary(summary, step)
                expected.append(value)
                sess.run(train)
    ea = accumulator.EventAccumulator(str(tmp_path), size_guidance={"histograms": 0})
    ea.Reload()
    assert [e.step for e in ea.Scalars("loss")] == [0, 1, 2]
    np.testing.assert_allclose([e.value for e in ea.Scalars("loss")], expected, rtol=1e-6)
    assert [h.histogram_value.num for h in ea.Histograms("weights")] == [3, 3, 3]
    devices = {n.name: n.device for n in ea.Graph().node}
    assert _job_task(devices["w"]) == ("ps", "0")


def _job_task(device):
    parts = dict(p.split(":", 1) for p in device.strip("/").split("/"))
    return parts["job"], parts["task"]
