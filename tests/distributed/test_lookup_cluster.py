"""Lookup tables on a real cluster: a table is a resource on its device, like a queue.
Its initializer and lookups run where it lives (the ps here), workers' embedding steps
read ids from it, a vocabulary file is shared by name across sessions, and a worker
running ``tables_initializer`` again (each replica's ``local_init_op`` does) changes
nothing. Results are compared with the same program in an embedded session and with
``tensorflow.compat.v1``.

All tests use the folder's shared ``LocalCluster(ps=1, worker=2)``, reset before each.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

import dataflow as tf
from dataflow.framework import errors

pytestmark = pytest.mark.distributed

VOCAB = ["a", "b", "c", "d"]


def _tables_by_worker(cluster):
    def tables():
        from dataflow.runtime.dask.worker_state import RUNTIME

        return sorted(
            k
            for store in RUNTIME._stores.values()
            for k in store.objects()
            if k.startswith("table:")
        )

    names = {address: name for name, address in cluster.workers.items()}
    return {names[a]: t for a, t in cluster.client.run(tables).items() if t}


def _nowhere(device):
    return contextlib.nullcontext()


def _program(lib, vocab_file, place):
    with place("/job:ps/task:0"):
        table = lib.contrib.lookup.index_table_from_file(vocab_file, num_oov_buckets=2)
        emb = lib.get_variable(
            "emb", initializer=np.arange(24, dtype=np.float32).reshape(6, 4) / 10.0
        )
    tokens = lib.placeholder(lib.string, [None])
    with place("/job:worker/task:1"):
        ids = table.lookup(tokens)
        loss = lib.reduce_sum(lib.square(lib.nn.embedding_lookup(emb, ids)))
        step = lib.train.GradientDescentOptimizer(0.1).minimize(loss)
    return table, tokens, ids, loss, step, emb


def _run(sess, lib, parts):
    table, tokens, ids, loss, step, emb = parts
    feed = {tokens: ["c", "zz", "a", "c", "qq"]}
    sess.run([lib.global_variables_initializer(), lib.tables_initializer()])
    out = [sess.run(ids, feed)]
    for _ in range(2):
        out.append(sess.run([loss, step], feed)[0])
    out += [sess.run(emb), sess.run(table.size())]
    return out


def test_table_lives_on_its_device_and_trains_as_embedded_and_tf1(clean_cluster, tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(VOCAB) + "\n")
    parts = _program(tf, str(vocab), tf.device)
    with tf.Session(clean_cluster, config=tf.ConfigProto(debug=True)) as sess:
        placement = sess.placement([parts[2]])
        assert placement[parts[2].op.name].startswith("/job:worker/replica:0/task:1")
        find = [
            op for op in tf.get_default_graph().get_operations() if op.type == "LookupTableFindV2"
        ]
        assert sess.placement(find)[find[0].name].startswith("/job:ps/")  # where the table is
        got = _run(sess, tf, parts)
        assert _tables_by_worker(clean_cluster) == {"ps-0": [f"table:hash_table_{vocab}_-2_-1"]}
    with tf.Graph().as_default():
        with tf.Session() as sess:  # one device: the placement scopes left out
            embedded = _run(sess, tf, _program(tf, str(vocab), _nowhere))
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    from tensorflow.python.ops import lookup_ops

    class _Contrib:  # TF 1.15's tf.contrib.lookup functions live in lookup_ops
        lookup = lookup_ops

    with tf1.Graph().as_default():
        tf1.contrib = _Contrib  # type: ignore[attr-defined]
        try:
            with tf1.Session() as sess:
                want = _run(sess, tf1, _program(tf1, str(vocab), _nowhere))
        finally:
            del tf1.contrib
    for a, b, c in zip(got, embedded, want, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6)
        np.testing.assert_allclose(a, c, rtol=1e-6)


def test_a_second_session_shares_the_file_table_and_reinitializing_is_harmless(
    clean_cluster, tmp_path
):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(VOCAB) + "\n")
    with tf.device("/job:worker/task:0"):
        table = tf.contrib.lookup.index_table_from_file(str(vocab))
        ids = table.lookup(tf.constant(["d", "x", "b"]))
    init = tf.tables_initializer()
    with tf.Session(clean_cluster) as first:
        with pytest.raises(errors.FailedPreconditionError, match="Table not initialized"):
            first.run(ids)
        first.run(init)
        assert first.run(ids).tolist() == [3, -1, 1]
    # Another client's session (a second replica) finds the table by its shared name,
    # and its own local_init_op running the initializer again changes nothing.
    with tf.Session(clean_cluster, config=tf.ConfigProto(resident_steps=True)) as second:
        assert second.run(ids).tolist() == [3, -1, 1]
        second.run(init)
        assert second.run(table.size()) == 4


def test_a_table_without_a_shared_name_is_each_sessions_own(clean_cluster):
    # TF1: a table made without a shared name is private to the session running it.
    keys = tf.placeholder(tf.string, [None])
    with tf.device("/job:ps/task:0"):
        table = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(keys, tf.constant([1, 2], tf.int64)), -1
        )
        found = table.lookup(tf.constant(["b", "c"]))
    with tf.Session(clean_cluster) as first:
        first.run(table.initializer, {keys: ["a", "b"]})
        with tf.Session(clean_cluster, config=tf.ConfigProto(resident_steps=True)) as second:
            with pytest.raises(errors.FailedPreconditionError, match="Table not initialized"):
                second.run(found)
            second.run(table.initializer, {keys: ["c", "b"]})  # other data: its own table
            assert second.run(found).tolist() == [2, 1]
        assert first.run(found).tolist() == [2, -1]


def test_monitored_session_on_the_cluster_initializes_tables(clean_cluster):
    with tf.device("/job:ps/task:0"):
        table = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(["x", "y"], tf.constant([10, 20], tf.int64)),
            -1,
        )
    with tf.device("/job:worker/task:0"):
        ids = table.lookup(tf.constant(["y", "z", "x"])) + 1
    with tf.train.MonitoredTrainingSession(master=clean_cluster) as sess:
        assert sess.run(ids).tolist() == [21, 0, 11]
