"""A dask array in ``feed_dict`` on a real cluster, on the task-graph and resident step
paths: the array is computed on the worker that consumes the placeholder (or copied
there worker to worker), its bytes never reach the client (Dask's transfer log), the
values equal numpy's, and what cannot be fed fails with TF1's error classes."""

from __future__ import annotations

import dask.array as da
import dask.dataframe as dd
import distributed
import numpy as np
import pandas as pd
import pytest

import dataflow as tf
from dataflow.testing.dask_transfers import sent_bytes

pytestmark = pytest.mark.distributed

RESIDENT = pytest.mark.parametrize("resident", [False, True], ids=["graph", "resident"])
ROWS, WIDTH = 2000, 64


def _reference():
    return np.arange(ROWS * WIDTH, dtype=np.float64).reshape(ROWS, WIDTH) / 1000.0


def _persisted_on(cluster, name):
    """The reference, as a dask array persisted on worker ``name`` only (waited for,
    not gathered: see ``dask_transfers``)."""
    x = da.from_array(_reference(), chunks=(250, WIDTH))
    x = cluster.client.persist(x, workers=[cluster.workers[name]])
    with cluster.client.as_current():
        distributed.wait(distributed.futures_of(x))
    return x


def _session(cluster, resident):
    return tf.Session(cluster, config=tf.ConfigProto(debug=True, resident_steps=resident))


@RESIDENT
def test_a_persisted_array_is_read_on_the_consuming_worker(clean_cluster, resident):
    """Persisted on ps-0, consumed on worker-0: ps-0 sends the blocks to worker-0, the
    client gets only the fetched sums."""
    client = clean_cluster.client
    x = _persisted_on(clean_cluster, "ps-0")
    with tf.Graph().as_default():
        with tf.device("/job:worker/task:0"):
            p = tf.placeholder(tf.float64, [None, WIDTH])
            total = tf.reduce_sum(p, axis=0)
        with _session(clean_cluster, resident) as sess:
            before = sent_bytes(client)
            for _ in range(3):
                np.testing.assert_allclose(sess.run(total, {p: x}), _reference().sum(axis=0))
            after = sent_bytes(client)
    data = 3 * ROWS * WIDTH * 8
    # ps-0 sends the blocks to worker-0 once (later steps find Dask's copy there).
    assert after["to_workers"] - before["to_workers"] >= ROWS * WIDTH * 8
    assert after["to_clients"] - before["to_clients"] < data / 100


@RESIDENT
def test_a_lazy_array_is_computed_on_the_consuming_worker(clean_cluster, resident):
    """Not persisted: every chunk is computed on worker-1, where the consumer runs; a
    float32 placeholder gets the float64 array cast there."""
    client = clean_cluster.client
    x = da.arange(ROWS * WIDTH, chunks=20_000, dtype=np.float64).reshape(ROWS, WIDTH) / 1000.0
    with tf.Graph().as_default():
        with tf.device("/job:worker/task:1"):
            p = tf.placeholder(tf.float32, [ROWS, WIDTH])
            total = tf.reduce_sum(p, axis=1)
        with _session(clean_cluster, resident) as sess:
            with distributed.get_task_stream(client=client) as tasks:
                before = sent_bytes(client)
                got = sess.run(total, {p: x})
                after = sent_bytes(client)
    np.testing.assert_allclose(got, _reference().astype(np.float32).sum(axis=1), rtol=1e-5)
    assert got.dtype == np.float32
    computed = [t for t in tasks.data if "arange" in str(t["key"])]
    assert computed
    assert {t["worker"] for t in computed} == {clean_cluster.workers["worker-1"]}
    assert after["to_clients"] - before["to_clients"] < ROWS * WIDTH * 8 / 100


@RESIDENT
def test_a_feed_read_on_two_workers_is_copied_worker_to_worker(clean_cluster, resident):
    client = clean_cluster.client
    x = _persisted_on(clean_cluster, "ps-0")
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float64, [None, WIDTH])
        with tf.device("/job:worker/task:0"):
            first = tf.reduce_sum(p[: ROWS // 2])
        with tf.device("/job:worker/task:1"):
            second = tf.reduce_max(p)
        with _session(clean_cluster, resident) as sess:
            before = sent_bytes(client)
            got = sess.run([first, second], {p: x})
            after = sent_bytes(client)
    np.testing.assert_allclose(got, [_reference()[: ROWS // 2].sum(), _reference().max()])
    assert after["to_clients"] - before["to_clients"] < ROWS * WIDTH * 8 / 100


def test_each_consumer_holds_the_only_copy_of_its_key(clean_cluster):
    """Dask's active memory manager keeps one replica of a key held on several workers
    and drops the others: a key that a second consumer's copy was made from, held on
    both, could lose its first consumer's replica before the step read it there (the
    step's kernel then got the handle: "'ClusterFeed' object is not subscriptable").
    Each consumer's key lives on that consumer only, and a pass of the manager leaves
    every key where the step reads it."""
    from dataflow.runtime.dask import feeds

    client = clean_cluster.client
    x = _persisted_on(clean_cluster, "ps-0")
    consumers = [clean_cluster.workers["worker-0"], clean_cluster.workers["worker-1"]]
    feed = feeds._compute_on(client, x, consumers, "p:0")
    for _ in range(3):
        who_has = client.who_has()
        assert {address: set(who_has[key]) for address, key in feed.keys.items()} == {
            address: {address} for address in consumers
        }
        client.amm.run_once()
    for address, key in feed.keys.items():
        held = client.run(lambda key, dask_worker: key in dask_worker.data, key, workers=[address])
        assert held == {address: True}


def test_unknown_chunks_are_checked_once_computed(clean_cluster):
    x = da.from_array(_reference(), chunks=(500, WIDTH))
    unknown = x[x[:, 0] >= 0]  # every row kept, but the row count is unknown until computed
    assert np.isnan(unknown.shape[0])
    with tf.Graph().as_default():
        with tf.device("/job:worker/task:0"):
            p = tf.placeholder(tf.float64, [None, WIDTH])
            q = tf.placeholder(tf.float64, [100, WIDTH])
            rows = tf.shape(p)[0]
            other = tf.reduce_sum(q)
        with _session(clean_cluster, True) as sess:
            assert sess.run(rows, {p: unknown}) == ROWS
            with pytest.raises(ValueError, match=r"Cannot feed value of shape \(2000, 64\)"):
                sess.run(other, {q: unknown})


@RESIDENT
def test_what_cannot_be_fed_fails_with_tf1_errors(clean_cluster, resident):
    with tf.Graph().as_default():
        with tf.device("/job:worker/task:0"):
            p = tf.placeholder(tf.float64, [None, WIDTH])
            total = tf.reduce_sum(p)
        with _session(clean_cluster, resident) as sess:
            frame = dd.from_pandas(pd.DataFrame({"c": [1.0, 2.0]}), npartitions=1)
            with pytest.raises(TypeError, match="Cannot feed a DataFrame for Tensor 'Placeholder"):
                sess.run(total, {p: frame})
            with pytest.raises(ValueError, match=r"shape \(3, 3\) for Tensor 'Placeholder:0'"):
                sess.run(total, {p: da.ones((3, 3), chunks=1)})

            def broken(block):
                raise ZeroDivisionError("a broken chunk")

            bad = da.ones((4, WIDTH), chunks=2).map_blocks(broken, dtype=np.float64)
            with pytest.raises(tf.errors.InvalidArgumentError, match="a broken chunk"):
                sess.run(total, {p: bad})
            # The session is still usable.
            assert sess.run(total, {p: da.ones((2, WIDTH), chunks=1)}) == 2 * WIDTH


def test_the_fed_tensor_itself_can_be_fetched(clean_cluster):
    x = _persisted_on(clean_cluster, "worker-1")
    with tf.Graph().as_default():
        with tf.device("/job:worker/task:0"):
            p = tf.placeholder(tf.float64, [None, WIDTH])
            total = tf.reduce_sum(p)
        with _session(clean_cluster, True) as sess:
            value, s = sess.run([p, total], {p: x})
    np.testing.assert_array_equal(value, _reference())
    np.testing.assert_allclose(s, _reference().sum())
