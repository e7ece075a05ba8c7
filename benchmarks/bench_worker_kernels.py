"""A worker's kernels on the worker's threads: a CNN training step on a cluster worker,
dataflow against TF1's distributed runtime in one run on loopback.

Run: ``python benchmarks/bench_worker_kernels.py`` (``--quick`` for fewer repeats).

The step: a two-layer convolutional MNIST classifier (5x5x32 and 5x5x64 convolutions
with ReLU and 2x2 max pools, a 1024-unit dense layer, softmax cross entropy), its
variables on ``/job:ps/task:0`` by ``replica_device_setter``, the forward and backward
pass on ``/job:worker/task:0``, a batch of 64 fed from the client, plain gradient
descent.

Contenders, interleaved round by round:

* **TF1**: in-process ``tf.distribute.Server``s (1 ps, 1 worker) with TF's default
  ``ConfigProto`` (its pools one thread per core), the session on the worker;
* **dataflow, 2 threads**: ``dataflow.LocalCluster(ps=1, worker=1)`` (Dask's
  ``threads_per_worker=2``), the default ``tf.Session(cluster)``: a stage's kernels
  split their work over the worker's two threads (``runtime/dask/worker_state.py``);
* **dataflow, 1 thread**: the same on a cluster with ``threads_per_worker=1``, which is
  what every worker's kernels got before (Dask's nanny starts workers with
  ``OPENBLAS_NUM_THREADS=1``).

BLAS is pinned to one thread in this process (the workers pin their own). Reported:
medians and ratios; nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable

import numpy as np
from bench_distributed import interleaved  # (this directory is on sys.path)
from bench_layers import tutorial_cnn_loss
from threadpoolctl import threadpool_limits
from timing import cpu_name, free_ports

BATCH = 64


def cnn_step(tf):
    """The training step's ``(x, y, train_op)``, built with ``tf``'s TF1 API."""
    setter = tf.train.replica_device_setter(ps_tasks=1, worker_device="/job:worker/task:0")
    with tf.device(setter):
        x = tf.placeholder(tf.float32, [None, 28, 28, 1], name="x")
        y = tf.placeholder(tf.int64, [None], name="y")
        train = tf.train.GradientDescentOptimizer(0.01).minimize(tutorial_cnn_loss(tf, x, y))
    return x, y, train


def _batch() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return rng.random((BATCH, 28, 28, 1), np.float32), rng.integers(0, 10, BATCH)


def runner(tf, make_session: Callable) -> Callable[[], object]:
    graph = tf.Graph()
    with graph.as_default():
        x, y, train = cnn_step(tf)
        init = tf.global_variables_initializer()
    sess = make_session(graph)
    sess.run(init)
    xv, yv = _batch()
    return lambda: sess.run(train, {x: xv, y: yv})


def tf1_runner() -> Callable[[], object]:
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")  # (tf.layers)
    import tensorflow.compat.v1 as tf1

    tf1.disable_eager_execution()
    ps, worker = free_ports(2)
    spec = tf1.train.ClusterSpec({"ps": [f"localhost:{ps}"], "worker": [f"localhost:{worker}"]})
    servers = [tf1.distribute.Server(spec, job_name=j, task_index=0) for j in ("ps", "worker")]
    step = runner(tf1, lambda graph: tf1.Session(servers[1].target, graph=graph))
    step.servers = servers  # (kept alive with the step)
    return step


def main(quick: bool) -> None:
    import dataflow as tf

    rounds, per_round = (3, 5) if quick else (6, 10)
    print(
        f"CPU: {cpu_name()}; {os.cpu_count()} cores; OPENBLAS_CORETYPE="
        f"{os.environ.get('OPENBLAS_CORETYPE', '(unset)')}"
    )
    with (
        tf.LocalCluster(ps=1, worker=1, dashboard_address=None) as two,
        tf.LocalCluster(ps=1, worker=1, dashboard_address=None, threads_per_worker=1) as one,
    ):
        contenders = {
            "TF1": tf1_runner(),
            "dataflow, 2 threads": runner(tf, lambda g: tf.Session(two, graph=g)),
            "dataflow, 1 thread": runner(tf, lambda g: tf.Session(one, graph=g)),
        }
        medians = interleaved(contenders, rounds, per_round, warmup=3, settle=0.1)
    tf1 = medians["TF1"]
    print(f"\nCNN training step on a worker (batch {BATCH}), medians:")
    for name, seconds in medians.items():
        print(f"  {name:22s} {seconds * 1e3:8.1f} ms   {seconds / tf1:5.2f}x TF1")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    with threadpool_limits(1, user_api="blas"):
        main(args.quick)
