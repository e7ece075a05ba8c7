"""Synchronous data parallelism with ``SyncReplicasOptimizer``: 2 workers, 1 ps, here and
in TF1, on the same cluster shape, each task a process of its own (the TF1 way).

Run: ``python benchmarks/bench_sync_replicas.py`` (``--steps N``).

For each contender three processes start with one ``ClusterSpec`` of loopback addresses
and differ only in their task, as a TF1 between-graph script's processes do (dataflow:
``tf.train.Server``s, Dask workers of one scheduler the ps task starts; TF1: gRPC
``tf.train.Server``s): the ps serves (``server.join()``), and each worker builds its own
graph (between-graph replication) and trains it with ``MonitoredTrainingSession(
master=server.target)``: a softmax regression of 784 features to 10 classes, batch 128
per replica, gradient descent through ``SyncReplicasOptimizer(replicas_to_aggregate=2)``,
variables on the ps by ``replica_device_setter(cluster=...)`` and compute on each
replica's worker. Measured: global steps per second over ``--steps`` steps after a
warm-up (the slower replica's figure), on the default path (``dataflow``), the opt-in
task-graph path (``graph``) and TF1. Nothing is asserted; the figures go to
``docs/performance.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from typing import Any

import numpy as np
from timing import free_ports

FEATURES, CLASSES, BATCH = 784, 10, 128


WARM_UP = 10
CONTENDERS = ("dataflow", "graph", "tf1")


def _library(name: str) -> Any:
    if name == "tf1":
        import tensorflow.compat.v1 as tf1

        tf1.disable_eager_execution()
        return tf1
    import dataflow

    return dataflow


def _train(tf: Any, name: str, cluster: Any, server: Any, task: int, steps: int) -> float:
    """One replica's training; returns the global steps per second it saw."""
    rng = np.random.default_rng(task)
    images = rng.random((BATCH, FEATURES), dtype=np.float32)
    labels = rng.integers(0, CLASSES, BATCH)
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
            tf.train.GradientDescentOptimizer(0.1), replicas_to_aggregate=2, total_num_replicas=2
        )
        train = opt.minimize(loss, global_step=step)
    config = tf.ConfigProto(resident_steps=False) if name == "graph" else None
    with tf.train.MonitoredTrainingSession(
        master=server.target,
        is_chief=task == 0,
        hooks=[opt.make_session_run_hook(task == 0)],
        config=config,
        stop_grace_period_secs=1,
    ) as sess:
        # The synchronous train op returns the global step its update made: both
        # replicas stop after the same update (one that stopped earlier would leave the
        # other waiting for its gradient, in TF1 too).
        done = 0
        while done < WARM_UP:
            done = int(sess.run(train))
        start, first = time.perf_counter(), done
        while done < WARM_UP + steps:
            done = int(sess.run(train))
        return (done - first) / (time.perf_counter() - start)


def task_main(name: str, job: str, task: int, hosts: dict, steps: int) -> None:
    """One task's process: the ps serves; a worker trains and prints its rate."""
    os.environ.setdefault("DATAFLOW_DASHBOARD_ADDRESS", ":0")
    tf = _library(name)
    cluster = tf.train.ClusterSpec(hosts)
    server = tf.train.Server(cluster, job_name=job, task_index=task)
    if job == "ps":
        server.join()
        return
    rate = _train(tf, name, cluster, server, task, steps)
    print(json.dumps({"rate": rate}), flush=True)
    # The chief's aggregation thread may still wait for the next step's gradients.
    os._exit(0)


def measure(name: str, steps: int) -> float | None:
    """Starts the three processes of one contender; the slower replica's steps/s."""
    ps, *workers = free_ports(3)
    hosts = {"ps": [f"localhost:{ps}"], "worker": [f"localhost:{port}" for port in workers]}

    def start(job: str, task: int) -> subprocess.Popen:
        command = [sys.executable, __file__, "--contender", name, "--steps", str(steps)]
        command += ["--job", job, "--task", str(task), "--hosts", json.dumps(hosts)]
        return subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
        )

    ps = start("ps", 0)
    workers = [start("worker", 0), start("worker", 1)]
    try:
        rates = []
        for worker in workers:
            out, _ = worker.communicate(timeout=600)
            lines = [line for line in out.splitlines() if line.startswith("{")]
            if lines:
                rates.append(json.loads(lines[-1])["rate"])
        return min(rates) if len(rates) == 2 else None
    finally:
        for proc in [*workers, ps]:
            proc.kill()
            proc.wait()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--contender", choices=CONTENDERS)
    parser.add_argument("--job")
    parser.add_argument("--task", type=int)
    parser.add_argument("--hosts")
    args = parser.parse_args()
    if args.job:
        task_main(args.contender, args.job, args.task, json.loads(args.hosts), args.steps)
        return
    results = {}
    for name in CONTENDERS if args.contender is None else (args.contender,):
        results[name] = measure(name, args.steps)
    print(
        "SyncReplicasOptimizer, 2 workers + 1 ps (a process each), "
        f"softmax {FEATURES}x{CLASSES}, batch {BATCH}"
    )
    for name, rate in results.items():
        print(f"{name:9s} " + (f"{rate:8.1f} global steps/s" if rate else "no result"))
    if results.get("tf1"):
        for name in ("dataflow", "graph"):
            if results.get(name):
                print(f"{name} / tf1 steps/s: {results[name] / results['tf1']:.2f}")


if __name__ == "__main__":
    main()
