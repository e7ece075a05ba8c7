"""Training on a persisted dask array with ``Dataset.from_dask`` (issue 17's Speed).

Run: ``python benchmarks/bench_dask_collections.py`` (``--quick``: fewer steps, a
smaller array).

On ``dataflow.LocalCluster(ps=1, worker=2)`` a 2,000,000 x 100 float32 ``dask.array``
(800 MB, chunks of 50,000 rows) is persisted across the three workers. A linear
regression (weights on ``/job:ps/task:0``, everything else on ``/job:worker/task:0``)
trains on batches of 1,000 rows, with resident steps, three ways, in one run:

* ``from_dask``: ``Dataset.from_dask(x).batch(1000).repeat()``; worker-0 reads the
  partitions in its memory, then the others worker to worker;
* ``numpy in worker memory``: ``from_tensor_slices`` over a 200,000-row numpy array
  put on worker-0 once (by feeding the iterator's initializer, not timed), batched
  the same way: the reference the issue names, with no Dask collection involved;
* ``client compute + feed``: each step computes its 1,000-row slice of the dask array
  on the client (``x[i:i + 1000].compute()``) and feeds it through a placeholder;
* ``dask slice fed``: each step feeds the dask slice itself (``{batch: x[i:i + 1000]}``),
  which the session computes on worker-0, where the placeholder is read
  (``runtime/dask/feeds.py``): no bytes through the client, but a Dask computation
  per step.

Then the same comparison with a replica on each worker (in-graph replication: one tower
per worker, the mean loss minimized on the ps), as the issue words it ("numpy batches
already in each worker's memory"): two ``from_dask`` iterators sharing each epoch (each
reading its own worker's partitions first) against two ``from_tensor_slices`` over a
numpy array put on each worker.

With ``--scoring`` (only where TensorFlow is importable): a TF1 MLP frozen by
``tensorflow.compat.v1`` scored over a persisted 400,000 x 64 float32 dask array (40
blocks) on ``LocalCluster(ps=0, worker=2)``, each pass reduced to one number on the
workers (nothing gathered), three ways, interleaved:

* ``dataflow``: ``dataflow.saved_model.map_blocks`` (the model scattered once, one
  import per worker, no TensorFlow on the workers);
* ``TF per block``: the hand-written pattern, ``x.map_blocks(score, graph_bytes)`` with
  TensorFlow imported on every worker and each task importing the ``GraphDef`` and
  opening a session (the bytes in every task);
* ``TF cached per worker``: the same with a worker-side cache of the session (the careful
  hand-written version).

Reported: seconds per pass (median), the ratios, and each task graph's pickled size.

Reported: steps per second of each (after a warm-up), and the ratios the issue names
(from_dask / numpy at least 0.8, from_dask / client feed at least 5); Dask's transfer
log gives the bytes the workers sent to clients during the from_dask run. Nothing is
asserted; the figures go to ``docs/performance.md``.
"""

from __future__ import annotations

import argparse
import contextlib
import time
from collections.abc import Iterator
from typing import Any

import dask.array as da
import distributed
import numpy as np

import dataflow as tf
from dataflow.testing.dask_transfers import sent_bytes

FEATURES, BATCH, CHUNK = 100, 1000, 50_000


def _model(batch: Any) -> tuple[Any, Any]:
    with tf.device("/job:ps/task:0"):
        w = tf.Variable(tf.zeros([FEATURES - 1, 1]))
    with tf.device("/job:worker/task:0"):
        x, y = batch[:, 1:], batch[:, :1]
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
        train = tf.train.GradientDescentOptimizer(1e-3).minimize(loss)
    return train, w


def _steps_per_second(sess: Any, step: Any, steps: int, warmup: int) -> float:
    for _ in range(warmup):
        step()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    return steps / (time.perf_counter() - start)


def bench_from_dask(cluster: Any, x: Any, steps: int) -> tuple[float, dict]:
    with tf.Graph().as_default():
        with tf.device("/job:worker/task:0"):
            rows = tf.data.Dataset.from_dask(x, shared_name="bench").batch(BATCH).repeat()
            batch = rows.make_one_shot_iterator().get_next()
        train, w = _model(batch)
        with tf.Session(cluster, config=tf.ConfigProto(resident_steps=True)) as sess:
            sess.run(w.initializer)
            before = sent_bytes(cluster.client)
            rate = _steps_per_second(sess, lambda: sess.run(train), steps, 20)
            after = sent_bytes(cluster.client)
    return rate, {k: after[k] - before[k] for k in after}


def _towers_model(batches: list[Any]) -> tuple[Any, Any]:
    """In-graph replication: one tower per worker (its loss and gradient computed
    there, colocated with its batch), the mean loss minimized on the ps's weights."""
    with tf.device("/job:ps/task:0"):
        w = tf.Variable(tf.zeros([FEATURES - 1, 1]))
    losses = []
    for task, batch in enumerate(batches):
        with tf.device(f"/job:worker/task:{task}"):
            x, y = batch[:, 1:], batch[:, :1]
            losses.append(tf.reduce_mean(tf.square(tf.matmul(x, w) - y)))
    train = tf.train.GradientDescentOptimizer(1e-3).minimize(
        tf.add_n(losses) / len(losses), colocate_gradients_with_ops=True
    )
    return train, w


def bench_from_dask_towers(cluster: Any, x: Any, steps: int) -> float:
    """Two replicas share each epoch of ``x``, each reading the partitions in its own
    worker's memory first (and its share of the ps's)."""
    with tf.Graph().as_default():
        batches = []
        for task in range(2):
            with tf.device(f"/job:worker/task:{task}"):
                rows = tf.data.Dataset.from_dask(x, shared_name="bench-towers")
                iterator = rows.batch(BATCH).repeat().make_one_shot_iterator()
                batches.append(iterator.get_next())
        train, w = _towers_model(batches)
        with tf.Session(cluster) as sess:
            sess.run(w.initializer)
            return _steps_per_second(sess, lambda: sess.run(train), steps, 20)


def bench_numpy_towers(cluster: Any, host: np.ndarray, steps: int) -> float:
    """The same two towers, each fed from numpy rows already in its worker's memory."""
    with tf.Graph().as_default():
        batches, inits, feeds = [], [], {}
        for task in range(2):
            with tf.device(f"/job:worker/task:{task}"):
                data = tf.placeholder(tf.float32, [None, FEATURES])
                rows = tf.data.Dataset.from_tensor_slices(data).batch(BATCH).repeat()
                iterator = rows.make_initializable_iterator()
                batches.append(iterator.get_next())
                inits.append(iterator.initializer)
                feeds[data] = host
        train, w = _towers_model(batches)
        with tf.Session(cluster) as sess:
            sess.run([w.initializer, *inits], feeds)
            return _steps_per_second(sess, lambda: sess.run(train), steps, 20)


def bench_numpy(cluster: Any, host: np.ndarray, steps: int) -> float:
    with tf.Graph().as_default():
        with tf.device("/job:worker/task:0"):
            data = tf.placeholder(tf.float32, [None, FEATURES])
            rows = tf.data.Dataset.from_tensor_slices(data).batch(BATCH).repeat()
            iterator = rows.make_initializable_iterator()
            batch = iterator.get_next()
        train, w = _model(batch)
        with tf.Session(cluster, config=tf.ConfigProto(resident_steps=True)) as sess:
            sess.run([w.initializer, iterator.initializer], {data: host})
            return _steps_per_second(sess, lambda: sess.run(train), steps, 20)


@contextlib.contextmanager
def _fed_model(cluster: Any) -> Iterator[tuple[Any, Any, Any, Iterator[int]]]:
    """The model on a placeholder batch on worker-0, its session (weights initialized)
    and an endless run of batch offsets: what the two fed inputs share."""
    with tf.Graph().as_default():
        with tf.device("/job:worker/task:0"):
            batch = tf.placeholder(tf.float32, [None, FEATURES])
        train, w = _model(batch)
        with tf.Session(cluster, config=tf.ConfigProto(resident_steps=True)) as sess:
            sess.run(w.initializer)
            yield sess, batch, train, iter(range(0, 10**12, BATCH))


def bench_client_feed(cluster: Any, x: Any, steps: int) -> float:
    with _fed_model(cluster) as (sess, batch, train, offsets):

        def step() -> None:
            i = next(offsets) % (x.shape[0] - BATCH)
            with cluster.client.as_current():
                value = x[i : i + BATCH].compute()
            sess.run(train, {batch: value})

        return _steps_per_second(sess, step, max(20, steps // 10), 5)


def bench_dask_feed(cluster: Any, x: Any, steps: int) -> tuple[float, dict]:
    with _fed_model(cluster) as (sess, batch, train, offsets):

        def step() -> None:
            i = next(offsets) % (x.shape[0] - BATCH)
            sess.run(train, {batch: x[i : i + BATCH]})

        before = sent_bytes(cluster.client)
        rate = _steps_per_second(sess, step, max(20, steps // 10), 5)
        after = sent_bytes(cluster.client)
    return rate, {k: after[k] - before[k] for k in after}


def _frozen_mlp(tf1: Any) -> Any:
    """A 64 -> 256 -> 256 -> 10 MLP frozen by TF (about 350 kB of constants)."""
    graph = tf1.Graph()
    with graph.as_default():
        x = tf1.placeholder(tf1.float32, [None, 64], name="x")
        h = x
        for i, width in enumerate((256, 256)):
            w = tf1.get_variable(f"w{i}", [h.shape[1], width])
            h = tf1.nn.relu(tf1.matmul(h, w))
        tf1.nn.softmax(tf1.matmul(h, tf1.get_variable("out", [256, 10])), name="probs")
        with tf1.Session(graph=graph) as sess:
            sess.run(tf1.global_variables_initializer())
            return tf1.graph_util.convert_variables_to_constants(
                sess, graph.as_graph_def(), ["probs"]
            )


def _tf_score_per_block(block: np.ndarray, graph_bytes: bytes) -> np.ndarray:
    import tensorflow

    tf1 = tensorflow.compat.v1
    graph = tf1.Graph()
    with graph.as_default():
        tf1.import_graph_def(tf1.GraphDef.FromString(graph_bytes), name="")
    config = tf1.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=1)
    with tf1.Session(graph=graph, config=config) as sess:
        return sess.run("probs:0", {"x:0": block})


_TF_SESSIONS: dict[int, Any] = {}


def _tf_score_cached(block: np.ndarray, graph_bytes: bytes) -> np.ndarray:
    import tensorflow

    tf1 = tensorflow.compat.v1
    key = hash(graph_bytes)
    if key not in _TF_SESSIONS:
        graph = tf1.Graph()
        with graph.as_default():
            tf1.import_graph_def(tf1.GraphDef.FromString(graph_bytes), name="")
        config = tf1.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=1)
        _TF_SESSIONS[key] = tf1.Session(graph=graph, config=config)
    return _TF_SESSIONS[key].run("probs:0", {"x:0": block})


def bench_scoring(quick: bool) -> None:
    import importlib.util
    import pickle
    import statistics

    if importlib.util.find_spec("tensorflow") is None:
        print("--scoring compares with TensorFlow, which is not installed here")
        return
    import tensorflow

    tf1 = tensorflow.compat.v1
    tf1.disable_eager_execution()
    frozen = _frozen_mlp(tf1)
    graph_bytes = frozen.SerializeToString()
    model = tf.saved_model.LegacyModel.from_frozen_graph(frozen, ["x"], ["probs"])
    rows, rounds = (100_000, 3) if quick else (400_000, 5)
    with tf.LocalCluster(ps=0, worker=2, dashboard_address=None) as cluster:
        client = cluster.client
        x = da.random.default_rng(0).random((rows, 64), dtype=np.float32, chunks=rows // 40)
        x = client.persist(x)
        with client.as_current():
            distributed.wait(x)
        contenders = {
            "dataflow": tf.saved_model.map_blocks(model, x, client=cluster),
            "TF per block": x.map_blocks(
                _tf_score_per_block,
                graph_bytes,
                chunks=(x.chunks[0], (10,)),
                meta=np.empty((0, 0), np.float32),
            ),
            "TF cached per worker": x.map_blocks(
                _tf_score_cached,
                graph_bytes,
                chunks=(x.chunks[0], (10,)),
                meta=np.empty((0, 0), np.float32),
            ),
        }
        sizes = {
            name: len(pickle.dumps(dict(c.__dask_graph__()), protocol=5))
            for name, c in contenders.items()
        }
        times: dict[str, list[float]] = {name: [] for name in contenders}
        for round_ in range(rounds + 1):  # round 0 warms up: TF imported, sessions cached
            for name, scored in contenders.items():
                start = time.perf_counter()
                client.compute(scored.sum()).result()
                if round_:
                    times[name].append(time.perf_counter() - start)
    median = {name: statistics.median(t) for name, t in times.items()}
    print(f"{rows} x 64 float32 in 40 blocks, {len(graph_bytes) / 1e3:.0f} kB GraphDef")
    for name, seconds in median.items():
        print(f"{name:22s} {seconds:7.3f} s per pass, task graph {sizes[name] / 1e3:8.1f} kB")
    for name in ("TF per block", "TF cached per worker"):
        print(f"{name} / dataflow: {median[name] / median['dataflow']:.2f}x time")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--scoring", action="store_true", help="a TF1 model over a dask array")
    args = parser.parse_args()
    if args.scoring:
        bench_scoring(args.quick)
        return
    rows = 200_000 if args.quick else 2_000_000
    steps = 200 if args.quick else 1000
    with tf.LocalCluster(ps=1, worker=2, dashboard_address=None) as cluster:
        client = cluster.client
        x = da.random.default_rng(0).random((rows, FEATURES), dtype=np.float32, chunks=CHUNK)
        x = client.persist(x)
        with client.as_current():
            distributed.wait(x)
        held = {a: len(k) for a, k in client.has_what().items()}
        host = np.random.default_rng(1).random((200_000, FEATURES), dtype=np.float32)
        print(f"{rows} x {FEATURES} float32 persisted, partitions per worker: {held}")
        numpy_rate = bench_numpy(cluster, host, steps)
        dask_rate, sent = bench_from_dask(cluster, x, steps)
        feed_rate = bench_client_feed(cluster, x, steps)
        dask_feed_rate, fed = bench_dask_feed(cluster, x, steps)
        numpy_towers = bench_numpy_towers(cluster, host, steps)
        dask_towers = bench_from_dask_towers(cluster, x, steps)
    print(f"numpy in worker memory:   {numpy_rate:8.1f} steps/s")
    print(f"from_dask:                {dask_rate:8.1f} steps/s")
    print(f"client compute + feed:    {feed_rate:8.1f} steps/s")
    print(f"dask slice fed:           {dask_feed_rate:8.1f} steps/s")
    print(f"from_dask / numpy:        {dask_rate / numpy_rate:8.2f}x (issue: >= 0.8)")
    print(f"from_dask / client feed:  {dask_rate / feed_rate:8.2f}x (issue: >= 5)")
    print(f"two towers, numpy in each worker's memory: {numpy_towers:8.1f} steps/s")
    print(f"two towers, from_dask (shared epochs):     {dask_towers:8.1f} steps/s")
    print(f"two towers, from_dask / numpy:             {dask_towers / numpy_towers:8.2f}x")
    print(
        f"bytes during the from_dask run: {sent['to_workers'] / 1e6:.1f} MB worker to "
        f"worker, {sent['to_clients'] / 1e3:.1f} kB to clients "
        f"(of {steps + 20} x {BATCH * FEATURES * 4 / 1e6:.1f} MB batches read)"
    )
    print(
        f"bytes during the dask-slice feed run: {fed['to_workers'] / 1e6:.1f} MB worker to "
        f"worker, {fed['to_clients'] / 1e3:.1f} kB to clients"
    )


if __name__ == "__main__":
    main()
