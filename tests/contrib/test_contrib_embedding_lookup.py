"""``tf.contrib.layers.safe_embedding_lookup_sparse`` against TF 1.15's
``tf.nn.safe_embedding_lookup_sparse`` (the same function in core, in
``tensorflow.compat.v1``): combiners, weights, invalid ids, empty rows, default ids,
partitioned tables, ``max_norm``, rank-3 ids, and the gradient into the table."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow

pytestmark = [
    pytest.mark.tf,
    pytest.mark.filterwarnings("ignore:.*is deprecated:UserWarning"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]

tf1 = pytest.importorskip("tensorflow").compat.v1

TABLE = np.random.default_rng(5).normal(size=(7, 3)).astype(np.float32)
# rows: 0 two ids, 1 empty, 2 an invalid id only, 3 one id of weight 0, 4 three ids
INDICES = np.array([[0, 0], [0, 1], [2, 0], [3, 0], [4, 0], [4, 1], [4, 2]], np.int64)
IDS = np.array([1, 6, -1, 2, 0, 3, 3], np.int64)
WEIGHTS = np.array([0.5, 2.0, 1.0, 0.0, 1.0, -1.0, 3.0], np.float32)
SHAPE = np.array([6, 3], np.int64)  # row 5 empty too
# the same entries as rank-3 ids [2, 3, 3]
INDICES3 = np.concatenate([INDICES[:, :1] // 3, INDICES[:, :1] % 3, INDICES[:, 1:]], 1)
SHAPE3 = np.array([2, 3, 3], np.int64)


def lookup(tf, fn, combiner, default_id, weighted, partitions, max_norm, rank3):
    if partitions == 1:
        table = tf.Variable(TABLE)
        tables = [table]
    else:
        tables = [tf.Variable(TABLE[:4]), tf.Variable(TABLE[4:])]
        table = tables
    indices, shape = (INDICES3, SHAPE3) if rank3 else (INDICES, SHAPE)
    ids = tf.SparseTensor(indices, IDS, shape)
    weights = tf.SparseTensor(indices, WEIGHTS, shape) if weighted else None
    out = fn(table, ids, weights, combiner=combiner, default_id=default_id, max_norm=max_norm)
    grads = tf.gradients(tf.reduce_sum(tf.square(out)), tables)
    grads = [tf.convert_to_tensor(g) for g in grads]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return out.shape.as_list(), sess.run([out] + grads)


@pytest.mark.parametrize("combiner", ["sum", "mean", "sqrtn"])
@pytest.mark.parametrize(
    "default_id, weighted, partitions, max_norm, rank3",
    [
        (None, False, 1, None, False),
        (None, True, 1, None, False),
        (5, True, 1, None, False),
        (4, True, 2, None, True),
        (None, True, 2, 1.0, False),
    ],
)
def test_safe_embedding_lookup_sparse(combiner, default_id, weighted, partitions, max_norm, rank3):
    args = (combiner, default_id, weighted, partitions, max_norm, rank3)
    with dataflow.Graph().as_default():
        ours = lookup(dataflow, dataflow.contrib.layers.safe_embedding_lookup_sparse, *args)
    with tf1.Graph().as_default():
        theirs = lookup(tf1, tf1.nn.safe_embedding_lookup_sparse, *args)
    assert ours[0] == theirs[0]
    for a, b in zip(ours[1], theirs[1], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_refuses_an_unknown_combiner():
    tf = dataflow
    with tf.Graph().as_default():
        ids = tf.SparseTensor(INDICES, IDS, SHAPE)
        with pytest.raises(ValueError, match="combiner"):
            tf.contrib.layers.safe_embedding_lookup_sparse(tf.constant(TABLE), ids, combiner="max")
