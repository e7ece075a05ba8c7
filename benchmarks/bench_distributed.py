"""Distributed step latency and throughput: dataflow on Dask against TF1's distributed
runtime and plain Dask, all in one run on loopback with 1 ps + 2 workers.

Run: ``python benchmarks/bench_distributed.py`` (``--quick`` for fewer repeats).

Contenders (issue 4):

* **TF1**: three in-process ``tf.distribute.Server``s (``/job:ps/task:0``,
  ``/job:worker/task:0..1``) from ``tensorflow.compat.v1``; sessions target worker 0
  (and worker 1 for the asynchronous case).
* **plain Dask**: the same ``dataflow.LocalCluster`` (workers ``ps-0``, ``worker-0``,
  ``worker-1``, separate processes) driven by hand: one ``client.get`` of a trivial
  task, a 3-task chain pinned to the 3 workers, a hand-built ridge step (read beta on
  the ps, gradient on worker 0, update on the ps: 3 pinned tasks), an actor call.
* **dataflow, default** (``tf.Session(cluster)`` with no config: the resident path, the
  placed plan kept on the workers and each step sent as direct messages over Dask's own
  connections), also on a TLS cluster (``Security.temporary()``) for the ridge step, and
  **dataflow, task-graph path** (opt-in ``ConfigProto(resident_steps=False)``: one Dask
  task per stage per step).

Cases: a 20-op elementwise chain split 10/10 across ``/job:ps`` and ``/job:worker``
(fed a [10] vector); a ridge regression step (n=100, p=10) with ``beta`` on the ps,
updated by its ``assign_sub`` and, as TF1 programs usually write it, by the op
``GradientDescentOptimizer.minimize`` returns (TF1 and dataflow default only); two
asynchronous ridge replicas (one client each, between-graph) giving aggregate
steps/s; and Dask tasks per step for chains of 10 to 10,000 ops.

Contenders are interleaved round by round; BLAS is pinned to one thread in this process
(Dask workers pin their own). Reported: medians and ratios; nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import threading
import time
from collections.abc import Callable

import numpy as np
from bench_embedded import chain_op  # the same chain (this directory is on sys.path)
from threadpoolctl import threadpool_limits
from timing import free_ports

N, P, LR = 100, 10, 0.01


def _data(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((N, P)).astype(np.float32)
    y = (x @ rng.standard_normal((P, 1))).astype(np.float32)
    return x, y


# --- graphs, written once for both libraries ------------------------------------------
def split_chain(tf, n_ops: int = 20):
    """``n_ops`` elementwise ops, the first half on the ps, the rest on worker 0."""
    with tf.device("/job:ps/task:0"):
        x = tf.placeholder(tf.float32, [10], name="x")
    y = x
    for i in range(n_ops):
        device = "/job:ps/task:0" if i < n_ops // 2 else "/job:worker/task:0"
        with tf.device(device):
            y = chain_op(tf, y, i)
    return x, y


def ridge(tf, worker: int = 0, minimize: bool = False):
    """One ridge step: beta on the ps, cost and gradient on a worker, update on the ps.
    With ``minimize``, the step as TF1 programs usually write it: the op
    ``GradientDescentOptimizer.minimize`` returns (a ``NoOp`` on the worker's device
    grouping the ps's update) instead of the ps's ``assign_sub`` itself."""
    setter = tf.train.replica_device_setter(ps_tasks=1, worker_device=f"/job:worker/task:{worker}")
    with tf.device(setter):
        beta = tf.Variable(np.zeros((P, 1), np.float32), name="beta")
        x = tf.placeholder(tf.float32, [None, P], name="x")
        y = tf.placeholder(tf.float32, [None, 1], name="y")
        cost = tf.reduce_mean(tf.square(y - tf.matmul(x, beta)))
        if minimize:
            return beta, x, y, cost, tf.train.GradientDescentOptimizer(LR).minimize(cost)
        grad = tf.gradients(cost, [beta])[0]
    with tf.device("/job:ps/task:0"):
        update = beta.assign_sub(LR * grad)
    return beta, x, y, cost, update


# --- contenders ----------------------------------------------------------------------
class TF1Cluster:
    """1 ps + 2 workers as in-process ``tf.distribute.Server``s."""

    def __init__(self) -> None:
        import tensorflow.compat.v1 as tf1

        tf1.disable_eager_execution()
        self.tf = tf1
        ps, w0, w1 = free_ports(3)
        spec = tf1.train.ClusterSpec(
            {"ps": [f"localhost:{ps}"], "worker": [f"localhost:{w0}", f"localhost:{w1}"]}
        )
        config = tf1.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=2)
        self.servers = [
            tf1.distribute.Server(spec, job_name=j, task_index=t, config=config)
            for j, t in (("ps", 0), ("worker", 0), ("worker", 1))
        ]

    def session(self, graph, worker: int = 0):
        return self.tf.Session(self.servers[1 + worker].target, graph=graph)


def tf1_split(tfc: TF1Cluster) -> Callable[[], object]:
    graph = tfc.tf.Graph()
    with graph.as_default():
        x, y = split_chain(tfc.tf)
    sess = tfc.session(graph)
    v = np.ones(10, np.float32)
    return lambda: sess.run(y, {x: v})


def tf1_ridge(tfc: TF1Cluster, worker: int = 0, init: bool = True, minimize: bool = False):
    graph = tfc.tf.Graph()
    with graph.as_default():
        beta, x, y, cost, update = ridge(tfc.tf, worker, minimize)
        init_op = tfc.tf.global_variables_initializer()
    sess = tfc.session(graph, worker)
    if init:
        sess.run(init_op)
    xv, yv = _data(worker)
    return lambda: sess.run([cost, update], {x: xv, y: yv})


def _config(tf, resident: bool | None):
    """``None``: the default session, no config at all."""
    return None if resident is None else tf.ConfigProto(resident_steps=resident)


def df_split(tf, cluster, resident: bool | None):
    graph = tf.Graph()
    with graph.as_default():
        x, y = split_chain(tf)
    sess = tf.Session(cluster, graph=graph, config=_config(tf, resident))
    v = np.ones(10, np.float32)
    return lambda: sess.run(y, {x: v})


def df_ridge(
    tf, target, resident: bool | None, worker: int = 0, init: bool = True, minimize: bool = False
):
    graph = tf.Graph()
    with graph.as_default():
        beta, x, y, cost, update = ridge(tf, worker, minimize)
        init_op = tf.global_variables_initializer()
    sess = tf.Session(target, graph=graph, config=_config(tf, resident))
    if init:
        sess.run(init_op)
    xv, yv = _data(worker)
    return lambda: sess.run([cost, update], {x: xv, y: yv})


# Plain Dask: functions the workers run. This file runs as __main__, so they travel by
# value; the ps keeps beta on its Worker object, which all of its tasks share.
def _inc(x):
    return x + 1


def _read_beta():
    from distributed import get_worker

    worker = get_worker()
    if not hasattr(worker, "bench_beta"):
        worker.bench_beta = np.zeros((P, 1), np.float32)
    return worker.bench_beta


def _ridge_grad(beta, x, y):
    residual = x @ beta - y
    return np.float32(np.mean(residual**2)), (2.0 / len(x)) * (x.T @ residual)


def _apply(cost_grad):
    from distributed import get_worker

    worker = get_worker()
    worker.bench_beta = worker.bench_beta - LR * cost_grad[1]


class Pinger:
    def ping(self):
        return 1


def dask_contenders(cluster):
    from dask._task_spec import Task, TaskRef
    from dask.highlevelgraph import HighLevelGraph, MaterializedLayer
    from distributed import Client

    client = Client(cluster.target)  # the default client (actors need one)
    count = iter(range(10**9))
    pinned = {
        name: {"resources": {f"dataflow-{name}": 1}} for name in ("ps-0", "worker-0", "worker-1")
    }

    def graph(tasks):  # [(key, worker, func, *args)] -> HighLevelGraph, one layer per task
        layers, deps = {}, {}
        for key, worker, func, *args in tasks:
            name = f"{key[0]}-{key[1]}"
            layers[name] = MaterializedLayer(
                {key: Task(key, func, *args)}, annotations=pinned[worker]
            )
            deps[name] = {f"{a.key[0]}-{a.key[1]}" for a in args if isinstance(a, TaskRef)}
        return HighLevelGraph(layers, deps)

    def get():
        k = ("inc", next(count))
        client.get({k: Task(k, _inc, 1)}, k)

    def chain():
        i = next(count)
        a, b, c = ("s0", i), ("s1", i), ("s2", i)
        client.get(
            graph(
                [
                    (a, "ps-0", _inc, 1),
                    (b, "worker-0", _inc, TaskRef(a)),
                    (c, "worker-1", _inc, TaskRef(b)),
                ]
            ),
            c,
        )

    xv, yv = _data()

    def ridge_step():
        i = next(count)
        a, b, c = ("read", i), ("grad", i), ("apply", i)
        client.get(
            graph(
                [
                    (a, "ps-0", _read_beta),
                    (b, "worker-0", _ridge_grad, TaskRef(a), xv, yv),
                    (c, "ps-0", _apply, TaskRef(b)),
                ]
            ),
            [b, c],
        )

    actor = client.submit(Pinger, actor=True, workers=[cluster.workers["ps-0"]]).result()

    def actor_call():
        actor.ping().result()

    return client, {"get": get, "chain": chain, "ridge": ridge_step, "actor": actor_call}


# --- measuring ------------------------------------------------------------------------
def interleaved(
    contenders: dict[str, Callable],
    rounds: int,
    per_round: int,
    warmup: int = 3,
    settle: float = 0.0,
) -> dict[str, float]:
    """Median seconds per call of each contender, calls interleaved round by round;
    ``settle``: seconds of rest before each contender's round (untimed), so that what
    the previous contender left running (a thread pool spinning down, a cluster's
    bookkeeping messages) is not timed as this one's."""
    for fn in contenders.values():
        for _ in range(warmup):
            fn()
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, fn in contenders.items():
            time.sleep(settle)
            for _ in range(per_round):
                start = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def aggregate_rate(make_steps: Callable[[int], Callable], steps: int) -> float:
    """Steps per second of two replicas stepping concurrently (one thread each)."""
    runners = [make_steps(i) for i in range(2)]
    for r in runners:
        r()
    barrier = threading.Barrier(3)

    def loop(r):
        barrier.wait()
        for _ in range(steps):
            r()

    threads = [threading.Thread(target=loop, args=(r,)) for r in runners]
    for t in threads:
        t.start()
    barrier.wait()
    start = time.perf_counter()
    for t in threads:
        t.join()
    return 2 * steps / (time.perf_counter() - start)


def tasks_per_step(tf, cluster, n_ops: int) -> tuple[int, int]:
    """(ops in the step, Dask tasks one step submits) for an ``n_ops`` split chain."""
    graph = tf.Graph()
    with graph.as_default():
        x, y = split_chain(tf, n_ops)
    with tf.Session(cluster, graph=graph) as sess:
        feed = {x: np.ones(10, np.float32)}
        return sess.compiled_plan(y, feed).num_calls, len(dict(sess.to_dask(y, feed)))


def main(quick: bool = False) -> None:
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    import dataflow as tf

    rounds, per_round, steps = (3, 5, 40) if quick else (7, 10, 150)
    threadpool_limits(1)
    print("starting TF1 servers and a dataflow.LocalCluster(ps=1, worker=2) ...")
    tfc = TF1Cluster()
    from distributed.security import Security

    cluster = tf.LocalCluster(ps=1, worker=2, dashboard_address=None)
    tls = tf.LocalCluster(ps=1, worker=1, dashboard_address=None, security=Security.temporary())
    client, plain = dask_contenders(cluster)
    try:
        rows = []
        split = interleaved(
            {
                "TF1": tf1_split(tfc),
                "dask get": plain["get"],
                "dask chain": plain["chain"],
                "task-graph": df_split(tf, cluster, False),
                "default": df_split(tf, cluster, None),
                "actor": plain["actor"],
            },
            rounds,
            per_round,
        )
        tf.Session.reset(cluster)
        ridge_t = interleaved(
            {
                "TF1": tf1_ridge(tfc),
                "dask ridge": plain["ridge"],
                "task-graph": df_ridge(tf, cluster, False),
                "default": df_ridge(tf, cluster, None),
                "default, TLS": df_ridge(tf, tls, None),
                "TF1 minimize": tf1_ridge(tfc, minimize=True),
                "default minimize": df_ridge(tf, cluster, None, minimize=True),
            },
            rounds,
            per_round,
        )
        tf.Session.reset(cluster)
        tf1_rate = aggregate_rate(lambda i: tf1_ridge(tfc, i, init=i == 0), steps)

        def replica(resident):
            def make(i):
                from distributed import Client

                own = Client(cluster.target, set_as_default=False)
                return df_ridge(tf, own, resident, i, init=i == 0)

            return make

        graph_rate = aggregate_rate(replica(False), steps)
        resident_rate = aggregate_rate(replica(None), steps)
        flat = [tasks_per_step(tf, cluster, n) for n in (10, 100, 1000, 10000)]

        ms = 1e3
        get = split["dask get"]
        rows.append(("split 20-op step, TF1", split["TF1"] * ms, ""))
        rows.append(("split 20-op step, plain Dask client.get (1 task)", get * ms, ""))
        rows.append(
            ("split 20-op step, plain Dask 3-task pinned chain", split["dask chain"] * ms, "")
        )
        for path in ("task-graph", "default"):
            rows.append(
                (
                    f"split 20-op step, dataflow {path}",
                    split[path] * ms,
                    f"{split[path] / get:.2f}x get, {split[path] / split['TF1']:.2f}x TF1",
                )
            )
        rows.append(("actor call (plain Dask)", split["actor"] * ms, ""))
        rows.append(("ridge step, TF1", ridge_t["TF1"] * ms, ""))
        rows.append(("ridge step, plain Dask (3 pinned tasks)", ridge_t["dask ridge"] * ms, ""))
        for path in ("task-graph", "default", "default, TLS"):
            rows.append(
                (
                    f"ridge step, dataflow {path}",
                    ridge_t[path] * ms,
                    f"{ridge_t[path] / ridge_t['TF1']:.2f}x TF1, "
                    f"{ridge_t[path] / ridge_t['dask ridge']:.2f}x plain Dask",
                )
            )
        rows.append(("ridge step as minimize(cost), TF1", ridge_t["TF1 minimize"] * ms, ""))
        rows.append(
            (
                "ridge step as minimize(cost), dataflow default",
                ridge_t["default minimize"] * ms,
                f"{ridge_t['default minimize'] / ridge_t['TF1 minimize']:.2f}x TF1",
            )
        )
        print()
        print(f"{'case':58s} {'median ms':>10s}  ratios")
        for name, value, ratio in rows:
            print(f"{name:58s} {value:10.2f}  {ratio}")
        print()
        print(f"{'async ridge, 1 ps + 2 workers, 2 clients':58s} {'steps/s':>10s}")
        print(f"{'  TF1':58s} {tf1_rate:10.0f}")
        print(f"{'  dataflow task-graph':58s} {graph_rate:10.0f}  {graph_rate / tf1_rate:.2f}x TF1")
        print(
            f"{'  dataflow default':58s} {resident_rate:10.0f}  {resident_rate / tf1_rate:.2f}x TF1"
        )
        print()
        print(
            "Dask tasks per step (split chain):",
            ", ".join(f"{ops} ops -> {tasks}" for ops, tasks in flat),
        )
    finally:
        client.close()
        cluster.close()
        tls.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    main(parser.parse_args().quick)
