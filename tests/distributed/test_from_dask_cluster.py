"""``Dataset.from_dask`` on a real cluster, with the task-graph and the resident step
paths: replicas on two workers share each epoch of a persisted collection (every row
exactly once, each replica reading the partitions in its own worker's memory), the
rows never pass through the client (Dask's transfer log), ``repeat`` re-reads without
recomputing, and a worker holding partitions that is lost mid-epoch costs no row and
duplicates none (Dask recomputes its partitions from lineage)."""

from __future__ import annotations

import asyncio
import os
import signal
import threading

import dask.array as da
import distributed
import numpy as np
import pytest

import dataflow as tf
from dataflow.testing.dask_transfers import sent_bytes

from .conftest import kill_worker, wait_until_back

pytestmark = pytest.mark.distributed

RESIDENT = pytest.mark.parametrize("resident", [False, True], ids=["graph", "resident"])


def _persist_on(cluster, name, start, stop, chunk, width=1, strict=True):
    """Rows ``i`` (``width`` copies of ``i``) for ``i`` in ``[start, stop)``, persisted
    on worker ``name`` only. ``strict=False`` lets Dask compute a partition elsewhere
    (tests that kill the worker: its partitions are recomputed from lineage, on a
    restarted worker of another address), which under load its work stealing does
    even while the worker lives: a fresh CI run found a partition of worker-0's span on
    worker-1, where tests of locality need each one where it was asked for."""
    x = da.arange(start, stop, chunks=chunk, dtype=np.float64).reshape(-1, 1)
    x = x * da.ones((1, width), chunks=(1, width))
    address = cluster.workers[name]
    x = cluster.client.persist(x, workers=[address], allow_other_workers=not strict)
    # Waited for, not gathered: a gather would send the rows to the client, and the
    # worker logs that send only once the client has acknowledged it, sometimes after
    # a test's first transfer count (a fresh CI run counted all 614,400 bytes of them).
    with cluster.client.as_current():
        distributed.wait(distributed.futures_of(x))
    return x


def _keys(x):
    """The keys of a persisted collection's partitions (what its reads move)."""
    return [future.key for future in distributed.futures_of(x)]


def _rows(cluster, *spans, width=1, strict=True):
    """One collection made of ``(worker, start, stop)`` spans, each persisted there."""
    return da.concatenate([_persist_on(cluster, w, a, b, 25, width, strict) for w, a, b in spans])


def _replicas(x, workers, shared_name, batch=10, **kwargs):
    """In-graph replication: one iterator per worker over the same collection."""
    iterators = []
    for task in workers:
        with tf.device(f"/job:worker/task:{task}"):
            dataset = tf.data.Dataset.from_dask(x, shared_name=shared_name, **kwargs)
            iterators.append(dataset.batch(batch).make_initializable_iterator())
    return iterators


def _epoch(sess, iterators, between=None, on_lost=None):
    """Steps the replicas in turn (as asynchronous replicas do) until each one's pass
    ends; returns the rows each one read. ``between(step, seen)`` runs after each step;
    ``on_lost(r)``, when given, handles replica ``r``'s step failing for a lost worker."""
    seen = [[] for _ in iterators]
    nexts = [it.get_next() for it in iterators]
    lost_errors = (tf.errors.UnavailableError, tf.errors.FailedPreconditionError)
    live = set(range(len(iterators)))
    step = 0
    while live:
        for r in sorted(live):
            try:
                seen[r].extend(sess.run(nexts[r]).ravel().tolist())
            except tf.errors.OutOfRangeError:
                live.discard(r)
            except lost_errors:
                if on_lost is None:
                    raise
                on_lost(r)
            step += 1
            if between is not None:
                between(step, seen)
    return seen


@RESIDENT
def test_replicas_share_each_epoch_and_read_their_own_partitions(clean_cluster, resident):
    client = clean_cluster.client
    x = _rows(clean_cluster, ("worker-0", 0, 200), ("worker-1", 200, 400))
    with tf.Graph().as_default():
        iterators = _replicas(x, [0, 1], f"own-{resident}")
        with tf.Session(clean_cluster, config=tf.ConfigProto(resident_steps=resident)) as sess:
            with distributed.get_task_stream(client=client) as tasks:
                before = sent_bytes(client, _keys(x))
                for _epoch_index in range(2):
                    sess.run([it.initializer for it in iterators])
                    seen = _epoch(sess, iterators)
                    assert sorted(seen[0] + seen[1]) == list(range(400))
                    # Each replica read exactly the rows in its worker's memory.
                    assert sorted(seen[0]) == list(range(200))
                    assert sorted(seen[1]) == list(range(200, 400))
                after = sent_bytes(client, _keys(x))
    # No worker sent another a partition: every read was local.
    assert after["to_workers"] == before["to_workers"]
    # The persisted blocks were read, never recomputed.
    assert not [t for t in tasks.data if "arange" in str(t["key"])]


@RESIDENT
def test_rows_do_not_pass_through_the_client(clean_cluster, resident):
    client = clean_cluster.client
    x = _rows(clean_cluster, ("worker-0", 0, 1000), ("ps-0", 1000, 1200), width=64)
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            w = tf.Variable(tf.zeros([64, 1], tf.float64))
        with tf.device("/job:worker/task:0"):
            rows = tf.data.Dataset.from_dask(x, shared_name=f"train-{resident}").repeat(2)
            batch = rows.batch(50).make_one_shot_iterator().get_next()
            loss = tf.reduce_mean(tf.square(tf.matmul(batch, w) - 2.0 * batch[:, :1]))
            train = tf.train.GradientDescentOptimizer(1e-7).minimize(loss)
        with tf.Session(clean_cluster, config=tf.ConfigProto(resident_steps=resident)) as sess:
            sess.run(w.initializer)
            before = sent_bytes(client, _keys(x))
            steps = 0
            while True:
                try:
                    sess.run(train)
                except tf.errors.OutOfRangeError:
                    break
                steps += 1
            after = sent_bytes(client, _keys(x))
    assert steps == 2 * 1200 // 50
    data_bytes = 2 * 1200 * 64 * 8
    # ps-0's partitions travel to worker-0, worker to worker (in the first epoch; the
    # second may find Dask's copy still on worker-0); the client gets none of the data,
    # only each step's small results.
    assert after["to_workers"] - before["to_workers"] >= 200 * 64 * 8
    assert after["to_clients"] - before["to_clients"] < data_bytes / 100


@RESIDENT
def test_between_graph_replicas_share_each_epoch(clean_cluster, resident):
    """Two clients' graphs (as two processes of between-graph replication would build
    them, same op names on different devices) reading one collection together."""
    x = _rows(clean_cluster, ("worker-0", 0, 150), ("worker-1", 150, 300), ("ps-0", 300, 400))
    seen: dict[int, list] = {}
    barrier = threading.Barrier(2)

    def replica(task):
        with tf.Graph().as_default():
            with tf.device(f"/job:worker/task:{task}"):
                rows = tf.data.Dataset.from_dask(x, shuffle=True, seed=7).batch(10)
                get_next = rows.make_one_shot_iterator().get_next()
            config = tf.ConfigProto(resident_steps=resident)
            with tf.Session(clean_cluster, config=config) as sess:
                barrier.wait()
                out = []
                while True:
                    try:
                        out.extend(sess.run(get_next).ravel().tolist())
                    except tf.errors.OutOfRangeError:
                        break
                seen[task] = out

    threads = [threading.Thread(target=replica, args=(t,)) for t in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert sorted(seen[0] + seen[1]) == list(range(400))
    assert seen[0] and seen[1]


@pytest.mark.slow
@RESIDENT
def test_a_lost_worker_costs_no_row_and_duplicates_none(fragile, resident):
    """ps-0 holds a third of the partitions and is killed mid-epoch, after the replicas
    have read some of them: Dask recomputes those not yet read from lineage, and the
    epoch still has every row once."""
    tf.Session.reset(fragile)
    spans = ("worker-0", 0, 200), ("worker-1", 200, 400), ("ps-0", 400, 600)
    x = _rows(fragile, *spans, strict=False)
    killed = {}

    def kill_mid_epoch(step, seen):
        if step == 20 and not killed:
            killed["old"] = kill_worker(fragile, "ps-0")

    with tf.Graph().as_default():
        iterators = _replicas(x, [0, 1], f"lost-{resident}", batch=25)
        with tf.Session(fragile, config=tf.ConfigProto(resident_steps=resident)) as sess:
            sess.run([it.initializer for it in iterators])
            seen = _epoch(sess, iterators, between=kill_mid_epoch)
            assert killed
            assert sorted(seen[0] + seen[1]) == list(range(600))
            wait_until_back(fragile, "ps-0", killed["old"])
            # The next epoch is whole too.
            sess.run([it.initializer for it in iterators])
            seen = _epoch(sess, iterators)
            assert sorted(seen[0] + seen[1]) == list(range(600))


@pytest.mark.slow
@RESIDENT
def test_a_replica_whose_worker_is_lost_loses_no_row_and_repeats_none(fragile, resident):
    """worker-1, running replica 1's iterator, is killed mid-epoch between two steps,
    with partitions of its pass half delivered (batches of 10 from partitions of 25)
    and one read ahead. Recovery is what a training loop does: replica 1's iterator is
    initialized again once its worker is back. The book hands the unfinished claims on
    (to replica 0, or to replica 1 rejoining its epoch) past the rows already
    delivered, so the rows the steps returned make every row exactly once."""
    tf.Session.reset(fragile)
    spans = ("worker-0", 0, 200), ("worker-1", 200, 400), ("ps-0", 400, 600)
    x = _rows(fragile, *spans, strict=False)
    with tf.Graph().as_default():
        iterators = _replicas(x, [0, 1], f"own-lost-{resident}", batch=10)
        with tf.Session(fragile, config=tf.ConfigProto(resident_steps=resident)) as sess:
            sess.run([it.initializer for it in iterators])
            killed, recovered = {}, []

            def kill_at_step_32(step, seen):
                if step == 32 and not killed:
                    killed["rows"] = len(seen[1])
                    killed["old"] = kill_worker(fragile, "worker-1")

            def recover(r):
                # The lost worker's iterator is gone: start it again, as a recovering
                # training loop runs the initializers.
                assert r == 1 and killed
                wait_until_back(fragile, "worker-1", killed["old"])
                sess.run(iterators[1].initializer)
                recovered.append(r)

            seen = _epoch(sess, iterators, between=kill_at_step_32, on_lost=recover)
            assert killed and recovered
            assert killed["rows"] % 25 == 10  # replica 1 was 10 rows into a partition
            assert sorted(seen[0] + seen[1]) == list(range(600))
            # The next epoch is whole too.
            sess.run([it.initializer for it in iterators])
            again = _epoch(sess, iterators)
            assert sorted(again[0] + again[1]) == list(range(600))


@pytest.mark.slow
def test_a_replica_killed_the_moment_its_step_returns_has_reported_its_rows(fragile):
    """worker-1 is SIGKILLed as soon as replica 1's step returns, with no round trip in
    between (its pid is taken before the epoch): the rows that step handed out were
    reported on the worker's progress line before ``get_next`` returned, so none is
    handed out again after recovery, and none is lost. Batches of 10 from partitions of
    25 span partitions, so some reports name two claims. (Reports sent on the worker's
    batched stream, up to 2 ms after the rows left, repeated the last batch here.)"""
    tf.Session.reset(fragile)
    spans = ("worker-0", 0, 200), ("worker-1", 200, 400), ("ps-0", 400, 600)
    x = _rows(fragile, *spans, strict=False)
    with tf.Graph().as_default():
        iterators = _replicas(x, [0, 1], "killed-at-once", batch=10)
        with tf.Session(fragile, config=tf.ConfigProto(resident_steps=True)) as sess:
            sess.run([it.initializer for it in iterators])
            address = fragile.workers["worker-1"]
            pid = fragile.client.run(os.getpid, workers=[address])[address]
            killed, recovered = {}, []

            def kill_at_step_24(step, seen):
                if step == 24 and not killed:  # replica 1 ran the last step
                    os.kill(pid, signal.SIGKILL)
                    killed["rows"] = len(seen[1])

            def recover(r):
                assert r == 1 and killed
                wait_until_back(fragile, "worker-1", address)
                sess.run(iterators[1].initializer)
                recovered.append(r)

            seen = _epoch(sess, iterators, between=kill_at_step_24, on_lost=recover)
            assert killed and recovered
            # Replica 1's 12th batch: 20 rows into its fifth partition, one read ahead.
            assert killed["rows"] == 120
            assert sorted(seen[0] + seen[1]) == list(range(600))


def test_a_reader_thread_that_left_the_pool_still_knows_its_worker(clean_cluster):
    """A resident stage runs in the worker's thread pool and leaves the pool's count when
    it waits for a remote partition (``secede``); the next pass of its dataset (after
    ``repeat``) must still read as that worker, not through the worker's client."""

    async def probe(dask_worker=None):
        def in_pool():
            # What a resident stage calls when it waits (a stage is not a Dask task).
            from distributed.threadpoolexecutor import secede

            from dataflow.ops.data.from_dask.source import this_worker

            before = this_worker() is dask_worker
            secede()
            return before, this_worker() is dask_worker

        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(dask_worker.executor, in_pool)

    results = clean_cluster.client.run(probe)
    assert all(r == (True, True) for r in results.values()), results
