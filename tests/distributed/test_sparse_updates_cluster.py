"""Sparse embedding updates on a real ``LocalCluster(ps=1, worker=2, processes=True)``:
the table lives on the ps, the lookup and loss run on a worker, and the row update
(``ResourceSparseApply*``, or gradient descent's ``ResourceScatterAdd``) runs on the ps
next to the table; the numbers equal the embedded session's, rows not looked up stay
as they were."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow as tf

pytestmark = pytest.mark.distributed

PS = "/job:ps/replica:0/task:0/device:CPU:0"
IDS = [np.array([3, 7, 3, 0]), np.array([7, 7, 1, 3])]


def _model(make_optimizer):
    with tf.device(tf.train.replica_device_setter(ps_tasks=1, worker_device="/job:worker/task:1")):
        table = tf.Variable(
            np.random.default_rng(0).standard_normal((10, 4)).astype(np.float32), name="emb"
        )
        ids = tf.placeholder(tf.int32, [4], name="ids")
        loss = tf.reduce_sum(tf.square(tf.nn.embedding_lookup(table, ids) - 1.0))
        train = make_optimizer().minimize(loss)
    return table, ids, loss, train


def _run(sess, table, ids, loss, train):
    sess.run(tf.global_variables_initializer())
    losses = [sess.run([loss, train], {ids: batch})[0] for batch in IDS]
    return losses, sess.run(table.read_value())


@pytest.mark.parametrize(
    "make_optimizer,update_type",
    [
        (lambda: tf.train.AdagradOptimizer(0.5), "ResourceSparseApplyAdagrad"),
        (lambda: tf.train.GradientDescentOptimizer(0.5), "ResourceScatterAdd"),
    ],
)
def test_sparse_update_runs_on_the_ps(csess, make_optimizer, update_type) -> None:
    table, ids, loss, train = _model(make_optimizer)
    graph = tf.get_default_graph()
    updates = [op.name for op in graph.get_operations() if op.type == update_type]
    assert len(updates) == 1
    placement = csess.placement([loss, train], {ids: IDS[0]})
    assert placement[updates[0]] == PS
    assert placement[table.op.name] == PS
    losses, final = _run(csess, table, ids, loss, train)
    with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as local:
        want_losses, want = _run(local, table, ids, loss, train)
    np.testing.assert_allclose(losses, want_losses, rtol=1e-6)
    np.testing.assert_array_equal(final, want)
    initial = np.random.default_rng(0).standard_normal((10, 4)).astype(np.float32)
    untouched = [r for r in range(10) if r not in (0, 1, 3, 7)]
    assert final[untouched].tobytes() == initial[untouched].tobytes()
