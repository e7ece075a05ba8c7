"""Sparse optimizer updates from ``IndexedSlices`` gradients (embeddings), against
``tensorflow.compat.v1``: the same embedding model, initial tables and id batches
(repeated ids included, one table or a list of shards by ``'mod'`` and ``'div'``) give
the same losses and tables over several steps with every optimizer; rows no id touched
stay the same bit for bit; the updates are ``ResourceSparseApply*`` ops on the
variable's device."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow

VOCAB, DIM = 12, 3
# Repeated ids within and across examples: the repeats' gradients must add up.
BATCHES = [
    np.array([[1, 4], [4, 4], [7, 1]]),
    np.array([[0, 0], [9, 4], [1, 11]]),
    np.array([[4, 4], [4, 4], [6, 2]]),
]
TOUCHED = sorted({int(i) for b in BATCHES for i in b.ravel()})

OPTIMIZERS = {
    "gd": lambda tf: tf.train.GradientDescentOptimizer(0.3),
    "momentum": lambda tf: tf.train.MomentumOptimizer(0.1, 0.9),
    "nesterov": lambda tf: tf.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True),
    "adagrad": lambda tf: tf.train.AdagradOptimizer(0.3),
    "adam": lambda tf: tf.train.AdamOptimizer(0.05),
    "rmsprop": lambda tf: tf.train.RMSPropOptimizer(0.05, momentum=0.5),
    "rmsprop_centered": lambda tf: tf.train.RMSPropOptimizer(0.05, centered=True),
    "adadelta": lambda tf: tf.train.AdadeltaOptimizer(1.0),
    "ftrl": lambda tf: tf.train.FtrlOptimizer(0.3, l1_regularization_strength=0.01),
    "ftrl_shrinkage": lambda tf: tf.train.FtrlOptimizer(
        0.3, learning_rate_power=-0.6, l2_shrinkage_regularization_strength=0.1
    ),
    "proximal_gd": lambda tf: tf.train.ProximalGradientDescentOptimizer(
        0.3, l1_regularization_strength=0.01
    ),
    "proximal_adagrad": lambda tf: tf.train.ProximalAdagradOptimizer(
        0.3, l2_regularization_strength=0.01
    ),
}
# Adam's sparse update decays its moments everywhere (TF1's _apply_sparse_shared), so
# every row moves once the first step has made m non-zero.
ROW_LOCAL = sorted(set(OPTIMIZERS) - {"adam"})


def _tables(shards: int, strategy: str) -> tuple[np.ndarray, list[np.ndarray]]:
    full = np.random.default_rng(0).uniform(-1, 1, (VOCAB, DIM)).astype(np.float32)
    if shards == 1:
        return full, [full]
    if strategy == "mod":
        return full, [full[p::shards] for p in range(shards)]
    sizes = [VOCAB // shards + (p < VOCAB % shards) for p in range(shards)]
    starts = np.cumsum([0] + sizes)
    return full, [full[starts[p] : starts[p + 1]] for p in range(shards)]


def _train(tf, make_optimizer, shards, strategy, steps=len(BATCHES)):
    """Losses per step, the final shards, the update op types and the gradients'
    types (``compute_gradients``)."""
    _, values = _tables(shards, strategy)
    with tf.Graph().as_default() as graph:
        tables = [tf.Variable(v, name=f"table_{p}") for p, v in enumerate(values)]
        ids = tf.placeholder(tf.int64, [3, 2], name="ids")
        params = tables if shards > 1 else tables[0]
        emb = tf.nn.embedding_lookup(params, ids, partition_strategy=strategy)
        target = tf.constant(np.linspace(-1, 1, 3 * 2 * DIM).reshape(3, 2, DIM), tf.float32)
        loss = tf.reduce_sum(tf.square(emb - target)) + tf.reduce_sum(tf.sin(emb))
        optimizer = make_optimizer(tf)
        grads_and_vars = optimizer.compute_gradients(loss, tables)
        kinds = [type(g).__name__ for g, _ in grads_and_vars]
        train = optimizer.apply_gradients(grads_and_vars)
        op_types = sorted({op.type for op in graph.get_operations() if "Apply" in op.type})
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            losses = [sess.run([loss, train], {ids: BATCHES[i % 3]})[0] for i in range(steps)]
            final = sess.run([t.read_value() if hasattr(t, "read_value") else t for t in tables])
    return np.array(losses), final, op_types, kinds


@pytest.fixture(scope="module")
def tf1():
    tf = pytest.importorskip("tensorflow")
    tf.compat.v1.disable_eager_execution()
    return tf.compat.v1


@pytest.mark.tf
@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
@pytest.mark.parametrize("shards,strategy", [(1, "mod"), (3, "mod"), (5, "div")])
def test_training_matches_tf1(tf1, name, shards, strategy) -> None:
    ours = _train(dataflow, OPTIMIZERS[name], shards, strategy)
    theirs = _train(tf1, OPTIMIZERS[name], shards, strategy)
    assert ours[3] == theirs[3] == ["IndexedSlices"] * shards
    np.testing.assert_allclose(ours[0], theirs[0], rtol=2e-5)
    for a, b in zip(ours[1], theirs[1], strict=True):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_sparse_update_ops(name) -> None:
    _, _, op_types, kinds = _train(dataflow, OPTIMIZERS[name], 1, "mod", steps=1)
    assert kinds == ["IndexedSlices"]
    if name == "gd":  # TF1's: a scatter of -lr * grad, repeated rows one by one
        assert op_types == []
    else:
        assert len(op_types) == 1 and op_types[0].startswith("ResourceSparseApply")


@pytest.mark.parametrize("name", ROW_LOCAL)
@pytest.mark.parametrize("shards,strategy", [(1, "mod"), (3, "div")])
def test_rows_not_gathered_are_untouched(name, shards, strategy) -> None:
    full, values = _tables(shards, strategy)
    _, final, _, _ = _train(dataflow, OPTIMIZERS[name], shards, strategy)
    if shards == 1:
        after = final[0]
    else:
        starts = np.cumsum([0] + [len(v) for v in values])
        after = np.concatenate(final)
        assert starts[-1] == VOCAB
    untouched = [r for r in range(VOCAB) if r not in TOUCHED]
    assert untouched
    # Bit for bit: compare the bytes, not the values.
    assert after[untouched].tobytes() == full[untouched].tobytes()
    assert not np.array_equal(after[TOUCHED], full[TOUCHED])


def test_slots_change_only_at_the_rows() -> None:
    tf = dataflow
    with tf.Graph().as_default():
        table = tf.Variable(np.ones((6, 2), np.float32))
        loss = tf.reduce_sum(tf.nn.embedding_lookup(table, [2, 2, 5]))
        opt = tf.train.AdagradOptimizer(0.1)
        train = opt.minimize(loss)
        accum = opt.get_slot(table, "accumulator")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train)
            acc = sess.run(accum.read_value())
    # Row 2 appeared twice: its gradients were summed before squaring (TF's dedup).
    np.testing.assert_allclose(acc[:, 0], [0.1, 0.1, 4.1, 0.1, 0.1, 1.1], rtol=1e-6)


def test_gradient_descent_on_a_held_table_copies_and_keeps_the_old_value() -> None:
    """A table value fetched earlier is not changed by a later in-place row update."""
    tf = dataflow
    with tf.Graph().as_default():
        table = tf.Variable(np.zeros((4, 2), np.float32))
        train = tf.train.GradientDescentOptimizer(1.0).minimize(
            tf.reduce_sum(tf.nn.embedding_lookup(table, [1, 1]))
        )
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            before = sess.run(table.read_value())
            sess.run(train)
            after = sess.run(table.read_value())
    np.testing.assert_array_equal(before, np.zeros((4, 2)))
    np.testing.assert_array_equal(after[1], [-2.0, -2.0])


def test_custom_optimizer_without_sparse_update_gets_the_dense_gradient() -> None:
    tf = dataflow

    class Halving(tf.train.Optimizer):
        def __init__(self):
            super().__init__(False, "Halving")

        def _resource_apply_dense(self, grad, var):
            return var.assign_sub(0.5 * grad).op

    with tf.Graph().as_default():
        table = tf.Variable(np.zeros((3, 1), np.float32))
        train = Halving().minimize(tf.reduce_sum(tf.nn.embedding_lookup(table, [0, 0, 2])))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train)
            np.testing.assert_array_equal(sess.run(table.read_value()).ravel(), [-1, 0, -0.5])


@pytest.mark.parametrize("gate", [0, 1, 2])
def test_clipping_and_gating_keep_indexed_slices(gate) -> None:
    tf = dataflow
    with tf.Graph().as_default():
        table = tf.Variable(np.ones((5, 2), np.float32))
        dense = tf.Variable(np.ones((2,), np.float32))
        loss = tf.reduce_sum(tf.nn.embedding_lookup(table, [1, 3, 3]) * dense)
        opt = tf.train.GradientDescentOptimizer(0.1)
        gv = opt.compute_gradients(loss, gate_gradients=gate)
        assert isinstance(gv[0][0], tf.IndexedSlices)
        clipped, norm = tf.clip_by_global_norm([g for g, _ in gv], 1.0)
        assert isinstance(clipped[0], tf.IndexedSlices)
        train = opt.apply_gradients(list(zip(clipped, [v for _, v in gv], strict=True)))
        summary = tf.summary.histogram("grad", tf.convert_to_tensor(gv[0][0]))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            n, _ = sess.run([norm, summary])
            sess.run(train)
            out = sess.run(table.read_value())
    # gradient rows: 1 -> [1, 1], 3 -> [2, 2] (twice); dense: [3, 3]
    want_norm = np.sqrt(2 * 1 + 2 * 1 + 2 * 1 + 9 * 2)
    np.testing.assert_allclose(n, want_norm, rtol=1e-6)
    np.testing.assert_allclose(out[:, 0], [1, 1 - 0.1 / want_norm, 1, 1 - 0.2 / want_norm, 1])
