"""Control flow on the shared cluster (``tests/distributed/conftest.py``): loops and conds
on a worker reading a parameter-server variable (moved here from
``tests/ops/control/test_control_flow.py`` so that it reuses the folder's cluster instead
of starting one of its own)."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow as tf


@pytest.mark.distributed
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_control_flow_on_a_cluster_with_ps_variables(clean_cluster):
    """Loops and conds on a worker reading a parameter-server variable, with a py_func
    shipped inside the plan, give the embedded session's values and gradients."""

    def program():
        with tf.device(
            tf.train.replica_device_setter(ps_tasks=1, worker_device="/job:worker/task:0")
        ):
            w = tf.Variable(np.eye(3, dtype=np.float32) * 0.5, name="w")
            x = tf.placeholder(tf.float32, [3, 1])
            _, h = tf.while_loop(
                lambda i, h: i < 4,
                lambda i, h: (i + 1, tf.tanh(tf.matmul(w, h))),
                [tf.constant(0), x],
            )
            y = tf.cond(
                tf.reduce_sum(h) > 0.0,
                lambda: tf.py_func(lambda a: a * 2, [h], tf.float32),
                lambda: h,
            )
            g = tf.gradients(tf.reduce_sum(h), w)[0]
        return x, [y, g]

    xv = np.array([[1.0], [-0.5], [2.0]], np.float32)
    results = []
    for target in (clean_cluster, ""):
        graph = tf.Graph()
        with graph.as_default():
            x, fetches = program()
            config = tf.ConfigProto(debug=True, allow_soft_placement=not target)
            with tf.Session(target, graph=graph, config=config) as s:
                s.run(tf.global_variables_initializer())
                results.append(s.run(fetches, {x: xv}))
    for a, b in zip(*results, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6)
