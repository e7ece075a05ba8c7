"""Synchronous data parallelism with ``SyncReplicasOptimizer``: 2 workers, 1 ps, here and
in TF1, on the same cluster shape.

Run: ``python benchmarks/bench_sync_replicas.py`` (``--steps N``).

Each library gets a cluster of three tasks served from this process (dataflow: three
``tf.train.Server``s, Dask workers of one scheduler; TF1: three gRPC
``tf.train.Server``s) and two replica threads, each with its own graph (between-graph
replication) and ``MonitoredTrainingSession``: a softmax regression of 784 features to
10 classes, batch 128 per replica, gradient descent through ``SyncReplicasOptimizer
(replicas_to_aggregate=2)``, variables on the ps by ``replica_device_setter(cluster=...)``
and compute on each replica's worker. Measured: global steps per second over ``--steps``
steps after a warm-up, on the default path (``dataflow``), the opt-in task-graph path
(``graph``) and TF1. Nothing is asserted; the figures go to ``docs/performance.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import threading
import time
from typing import Any

import numpy as np

import dataflow

FEATURES, CLASSES, BATCH = 784, 10, 128


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


WARM_UP = 10


def _replica(
    tf: Any, task: int, cluster: Any, target: str, steps: int, timings: dict, config: Any
) -> None:
    rng = np.random.default_rng(task)
    images = rng.random((BATCH, FEATURES), dtype=np.float32)
    labels = rng.integers(0, CLASSES, BATCH)
    with tf.Graph().as_default():
        # Variables, accumulators and the token queue on the ps, compute on the replica's
        # own worker (without ``cluster`` the setter places nothing, and each replica's
        # session would keep its own variables on its own task, as TF1 does).
        setter = tf.train.replica_device_setter(
            worker_device=f"/job:worker/task:{task}", cluster=cluster
        )
        with tf.device(setter):
            step = tf.train.get_or_create_global_step()
            w = tf.get_variable("w", [FEATURES, CLASSES], initializer=tf.zeros_initializer())
            b = tf.get_variable("b", [CLASSES], initializer=tf.zeros_initializer())
            logits = tf.matmul(tf.constant(images), w) + b
            loss = tf.reduce_mean(
                tf.nn.sparse_softmax_cross_entropy_with_logits(
                    labels=tf.constant(labels), logits=logits
                )
            )
            opt = tf.train.SyncReplicasOptimizer(
                tf.train.GradientDescentOptimizer(0.1),
                replicas_to_aggregate=2,
                total_num_replicas=2,
            )
            train = opt.minimize(loss, global_step=step)
        hook = opt.make_session_run_hook(task == 0)
        with tf.train.MonitoredTrainingSession(
            master=target,
            is_chief=task == 0,
            hooks=[hook],
            config=config,
            stop_grace_period_secs=1,
        ) as sess:
            # Both replicas stop at the same global step: one that stopped earlier would
            # leave the other waiting for its gradient (as in TF1).
            done = 0
            while done < WARM_UP:
                done = int(sess.run(train))
            start, first = time.perf_counter(), done
            while done < WARM_UP + steps:
                done = int(sess.run(train))
            timings[task] = (done - first) / (time.perf_counter() - start)


def _run(tf: Any, cluster: Any, targets: list[str], steps: int, config: Any = None) -> float:
    """Global steps per second as the slower replica saw them. The replica threads are
    not joined: once one replica stops, the other may wait forever for its gradient (in
    TF1 too), so each measurement runs in a process of its own that exits after it."""
    timings: dict[int, float] = {}
    for task in range(2):
        threading.Thread(
            target=_replica,
            args=(tf, task, cluster, targets[task], steps, timings, config),
            daemon=True,
        ).start()
    deadline = time.monotonic() + 600
    while len(timings) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    return min(timings.values())


def _dataflow_cluster() -> tuple[Any, list[str]]:
    tf = dataflow
    spec = tf.train.ClusterSpec(
        {
            "ps": [f"127.0.0.1:{_free_port()}"],
            "worker": [f"127.0.0.1:{_free_port()}", f"127.0.0.1:{_free_port()}"],
        }
    )
    servers: list = [None, None, None]

    def start(i: int, job: str, task: int) -> None:
        servers[i] = tf.train.Server(spec, job_name=job, task_index=task)

    starters = [
        threading.Thread(target=start, args=args)
        for args in ((0, "ps", 0), (1, "worker", 0), (2, "worker", 1))
    ]
    for t in starters:
        t.start()
    for t in starters:
        t.join()
    return spec, [servers[1].target, servers[2].target]


def _tf1_cluster(tf1: Any) -> tuple[Any, list[str]]:
    spec = tf1.train.ClusterSpec(
        {
            "ps": [f"localhost:{_free_port()}"],
            "worker": [f"localhost:{_free_port()}", f"localhost:{_free_port()}"],
        }
    )
    servers = [
        tf1.train.Server(spec, job_name=job, task_index=task)
        for job, task in (("ps", 0), ("worker", 0), ("worker", 1))
    ]
    return spec, [servers[1].target, servers[2].target]


def measure(name: str, steps: int) -> float:
    """One measurement, in this process (``name``: dataflow, graph or tf1)."""
    os.environ.setdefault("DATAFLOW_DASHBOARD_ADDRESS", ":0")
    if name == "tf1":
        import tensorflow.compat.v1 as tf1

        tf1.disable_eager_execution()
        return _run(tf1, *_tf1_cluster(tf1), steps)
    config = dataflow.ConfigProto(resident_steps=False) if name == "graph" else None
    return _run(dataflow, *_dataflow_cluster(), steps, config)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--only", choices=["dataflow", "graph", "tf1"])
    args = parser.parse_args()
    if args.only:
        print(json.dumps({args.only: measure(args.only, args.steps)}), flush=True)
        os._exit(0)  # replica threads may still wait for each other (see _run)
    results: dict[str, float] = {}
    for name in ("dataflow", "graph", "tf1"):
        done = subprocess.run(
            [sys.executable, __file__, "--only", name, "--steps", str(args.steps)],
            capture_output=True,
            text=True,
            timeout=900,
        )
        lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
        if not lines:
            print(f"{name}: no result ({done.stderr.strip().splitlines()[-1:]})")
            continue
        results.update(json.loads(lines[-1]))
    print(f"SyncReplicasOptimizer, 2 workers + 1 ps, softmax {FEATURES}x{CLASSES}, batch {BATCH}")
    for name, rate in results.items():
        print(f"{name:9s} {rate:8.1f} global steps/s")
    if "tf1" in results:
        for name in ("dataflow", "graph"):
            if name in results:
                print(f"{name} / tf1 steps/s: {results[name] / results['tf1']:.2f}")


if __name__ == "__main__":
    main()
