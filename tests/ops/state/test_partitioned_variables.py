"""Partitioned variables (``get_variable(..., partitioner=...)``) against
``tensorflow.compat.v1``: the partitioners' part counts, the parts' names and shapes,
their values (a value initializer is sliced; the whole is their concatenation), sharded
lookups, training with a sparse and a dense optimizer, reuse, and TF1's errors."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow as tf

tf1 = pytest.importorskip("tensorflow").compat.v1
tf1.disable_eager_execution()
pytestmark = pytest.mark.tf

TABLE = np.random.default_rng(3).normal(size=(10, 4)).astype(np.float32)
IDS = np.array([0, 3, 9, 5, 3], np.int32)


@pytest.mark.parametrize(
    "make, shape, dtype",
    [
        (lambda m: m.fixed_size_partitioner(3), [10, 4], "float32"),
        (lambda m: m.fixed_size_partitioner(5, axis=1), [2, 3], "float32"),
        (lambda m: m.min_max_variable_partitioner(4, min_slice_size=64), [100, 3], "float32"),
        (lambda m: m.min_max_variable_partitioner(8, axis=1), [3, 7], "float64"),
        (lambda m: m.variable_axis_size_partitioner(100), [50, 3], "float64"),
        (lambda m: m.variable_axis_size_partitioner(50, axis=1, max_shards=3), [2, 40], "int32"),
        (lambda m: m.variable_axis_size_partitioner(64), [9, 2], "string"),
    ],
)
def test_partitioners_give_tf1s_part_counts(make, shape, dtype):
    ours = make(tf)(shape=tf.TensorShape(shape), dtype=tf.as_dtype(dtype))
    theirs = make(tf1)(shape=tf1.TensorShape(shape), dtype=tf1.as_dtype(dtype))
    assert list(ours) == list(theirs)


def test_variable_axis_size_partitioner_checks_its_arguments():
    for kwargs in ({"bytes_per_string_element": 0}, {"max_shards": -1}):
        with pytest.raises(ValueError):
            tf1.variable_axis_size_partitioner(8, **kwargs)
        with pytest.raises(ValueError):
            tf.variable_axis_size_partitioner(8, **kwargs)


def _program(m):
    with m.variable_scope("emb", partitioner=m.fixed_size_partitioner(3)):
        table = m.get_variable("table", initializer=m.constant(TABLE))
    ids = m.placeholder(m.int32, [None], name="ids")
    by_mod = m.nn.embedding_lookup(table, ids)
    by_div = m.nn.embedding_lookup(table, ids, partition_strategy="div")
    loss = m.reduce_sum(m.square(by_mod)) + m.reduce_sum(by_div * m.convert_to_tensor(table)[:5])
    sparse = m.train.AdagradOptimizer(0.1).minimize(loss)
    dense = m.train.GradientDescentOptimizer(0.05).minimize(
        m.reduce_sum(m.convert_to_tensor(table))
    )
    return table, ids, [by_mod, by_div, loss], [sparse, dense]


def _run(m):
    graph = m.Graph()
    with graph.as_default():
        table, ids, fetches, train = _program(m)
        names = [(v.name, v.shape.as_list()) for v in table]
        with m.Session(graph=graph) as sess:
            sess.run(m.global_variables_initializer())
            before = sess.run(fetches, {ids: IDS})
            for step in train * 2:
                sess.run(step, {ids: IDS})
            after = sess.run([m.convert_to_tensor(table)] + fetches, {ids: IDS})
    return names, before, after


def test_parts_values_lookups_and_training_match_tf1():
    names, before, after = _run(tf)
    their_names, their_before, their_after = _run(tf1)
    assert (
        names
        == their_names
        == [
            ("emb/table/part_0:0", [4, 4]),
            ("emb/table/part_1:0", [3, 4]),
            ("emb/table/part_2:0", [3, 4]),
        ]
    )
    # "div" looks rows up in the whole table; "mod" in part id % 3 (TF1's meaning).
    np.testing.assert_array_equal(before[1], TABLE[IDS])
    for ours, theirs in zip(before + after, their_before + their_after):
        # float32 sums of a few tens of terms, over four update steps
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)


def test_reuse_returns_the_same_parts_and_checks_them():
    with tf.variable_scope("s", partitioner=tf.fixed_size_partitioner(2)):
        first = tf.get_variable("v", [4, 2])
    with tf.variable_scope("s", reuse=True, partitioner=tf.fixed_size_partitioner(2)):
        assert tf.get_variable("v", [4, 2]) is first
    with tf.variable_scope("s", reuse=True, partitioner=tf.fixed_size_partitioner(4)):
        with pytest.raises(ValueError, match="partitions"):
            tf.get_variable("v", [4, 2])
    with tf.variable_scope("s", partitioner=tf.fixed_size_partitioner(2)):
        with pytest.raises(ValueError, match="already exists"):
            tf.get_variable("v", [4, 2])
    with tf.variable_scope("s", reuse=True, partitioner=tf.fixed_size_partitioner(2)):
        with pytest.raises(ValueError, match="does not exist"):
            tf.get_variable("missing", [4, 2])


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"partitioner": 3, "shape": [4]}, "must be callable"),
        ({"partitioner": lambda shape, dtype: [2, 1], "shape": [4]}, "rank"),
        ({"partitioner": lambda shape, dtype: [2, 2], "shape": [4, 4]}, "one dimension"),
        ({"partitioner": lambda shape, dtype: [2], "shape": [None]}, "fully defined"),
    ],
)
def test_bad_partitions_fail_as_in_tf1(kwargs, message):
    with pytest.raises(ValueError, match=message):
        tf.get_variable("bad", **kwargs)
    with tf1.Graph().as_default(), pytest.raises(ValueError):
        tf1.get_variable("bad", **kwargs)


def test_an_unpartitioned_part_name_is_refused():
    tf.get_variable("t/part_0", [2])
    with pytest.raises(ValueError, match="unpartitioned"):
        tf.get_variable("t", [4], partitioner=tf.fixed_size_partitioner(2))
