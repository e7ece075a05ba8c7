"""A variable fetched beside its update on a cluster (issue 28, defect 2).

TF1 reads a fetched ref variable when the step's outputs are gathered, after the step's
updates; a resource variable's fetch is its snapshot read, taken before them. The
variables live on the ps and the gradient is computed on a worker, so the late read and
the updates it follows sit in a stage of their own on the ps, after the worker's stage:
the compiler's ordering edges must survive partitioning and reach both Dask paths.
"""

from __future__ import annotations

import numpy as np
import pytest

import dataflow as tf

pytestmark = pytest.mark.distributed


def _model(use_resource):
    with tf.device(tf.train.replica_device_setter(ps_tasks=1, worker_device="/job:worker/task:1")):
        global_step = tf.train.get_or_create_global_step()
        with tf.variable_scope("model", use_resource=use_resource):
            w = tf.get_variable("w", initializer=1.0)
        loss = 0.1 * tf.square(w)
        train_op = tf.train.GradientDescentOptimizer(1.0).minimize(loss, global_step=global_step)
    return global_step, w, train_op


def _steps(sess, global_step, w, train_op):
    sess.run(tf.global_variables_initializer())
    logged = [sess.run([train_op, global_step, w])[1:] for _ in range(3)]
    _, step = sess.run([train_op, global_step])
    return [int(s) for s, _ in logged] + [int(step)], [float(v) for _, v in logged]


@pytest.mark.parametrize("path", ["csess", "gsess"], ids=["resident", "task-graph"])
def test_ref_variables_are_read_after_the_update_on_a_cluster(request, path):
    sess = request.getfixturevalue(path)
    global_step, w, train_op = _model(use_resource=None)  # TF1's default: ref variables
    placement = sess.placement([train_op, global_step, w])
    assert placement[w.op.name].startswith("/job:ps")
    assert placement[global_step.op.name].startswith("/job:ps")
    assert any(device.startswith("/job:worker") for device in placement.values())
    steps, weights = _steps(sess, global_step, w, train_op)
    assert steps == [1, 2, 3, 4]
    # w_k = 0.8 ** k, three float32 multiplications.
    np.testing.assert_allclose(weights, [0.8, 0.64, 0.512], rtol=1e-6)
    # The same graph in an embedded session (its one device) reads the same values.
    with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as local:
        assert _steps(local, global_step, w, train_op) == (steps, weights)


@pytest.mark.parametrize("path", ["csess", "gsess"], ids=["resident", "task-graph"])
def test_resource_variable_is_read_before_the_update_on_a_cluster(request, path):
    sess = request.getfixturevalue(path)
    global_step, w, train_op = _model(use_resource=True)
    _, weights = _steps(sess, global_step, w, train_op)
    np.testing.assert_allclose(weights, [1.0, 0.8, 0.64], rtol=1e-6)
