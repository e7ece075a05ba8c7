"""A CNN written with ``tf.layers``, and graph building, against TF1 in this process.

Run: ``python benchmarks/bench_layers.py`` (``--quick`` for fewer repeats).

* Training step: MNIST-sized images (batch 128, 28x28x1), two ``conv2d(5x5, same,
  relu) + max_pooling2d(2)`` blocks (32 and 64 filters), ``flatten``, ``dense(1024,
  relu)``, ``dense(10)``, softmax cross-entropy, Adam: the TF1 tutorial's model. One
  BLAS thread each (``threadpoolctl``; TF1's session one intra/inter-op thread),
  interleaved round by round; the median step of each.
* Graph building: 10,000 ops (a chain of ``x = x * 1.0001 + 0.5`` with names under
  scopes, as model code builds them), in a fresh graph each time, after a
  ``gc.collect()``. Without it a full collection (0.15 s to walk this process's
  objects with TF loaded, 0.2-0.3 s when it also frees the graphs earlier builds left)
  falls in whichever build's window the allocation counts reach it in, the same
  library's round after round, whatever each library allocated. Each library's own
  young-generation collections stay in its time.

Reported: medians and ratios dataflow / TF1; nothing is asserted, the figures go to
``docs/performance.md``.
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Callable
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits
from timing import median_seconds

import dataflow

BATCH = 128


def tutorial_cnn_loss(tf: Any, x: Any, y: Any) -> Any:
    """The tutorial CNN's mean cross entropy on images ``x`` ``[N, H, W, 1]`` and labels
    ``y``: two 5x5 convolutions (32, 64) with ReLU and 2x2 max pools, a 1024-unit ReLU
    layer, 10 logits (the benchmarks' shared model)."""
    h = tf.layers.conv2d(x, 32, 5, padding="same", activation=tf.nn.relu)
    h = tf.layers.max_pooling2d(h, 2, 2)
    h = tf.layers.conv2d(h, 64, 5, padding="same", activation=tf.nn.relu)
    h = tf.layers.max_pooling2d(h, 2, 2)
    h = tf.layers.dense(tf.layers.flatten(h), 1024, activation=tf.nn.relu)
    logits = tf.layers.dense(h, 10)
    return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))


def cnn_step(tf: Any) -> Callable[[], None]:
    rng = np.random.default_rng(0)
    images = rng.random((BATCH, 28, 28, 1), dtype=np.float32)
    labels = rng.integers(0, 10, BATCH)
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(0)
        x = tf.placeholder(tf.float32, [None, 28, 28, 1])
        y = tf.placeholder(tf.int64, [None])
        loss = tutorial_cnn_loss(tf, x, y)
        train = tf.train.AdamOptimizer(1e-4).minimize(loss)
        config = None
        if tf is not dataflow:
            config = tf.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=1)
        sess = tf.Session(graph=graph, config=config)
        sess.run(tf.global_variables_initializer())
    feed = {x: images, y: labels}
    return lambda: sess.run(train, feed)


def build_graph(tf: Any, n_ops: int = 10_000) -> None:
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 8], name="x")
        for block in range(n_ops // 100):
            with tf.name_scope(f"block{block}"):
                for _ in range(25):  # 4 ops each: two constants, a multiply, an add
                    x = x * 1.0001 + 0.5


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    rounds, repeats = (2, 3) if args.quick else (5, 5)
    libraries: dict[str, Any] = {"dataflow": dataflow}
    try:
        import os

        os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
        import tensorflow.compat.v1 as tf1

        tf1.disable_eager_execution()
        libraries["tf1"] = tf1
    except ImportError:
        print("tensorflow not installed: dataflow only")
    steps, builds = {}, {}
    with threadpool_limits(1):
        fns = {name: cnn_step(lib) for name, lib in libraries.items()}
        for fn in fns.values():
            fn()  # warm-up
        for _ in range(rounds):
            for name, fn in fns.items():
                steps.setdefault(name, []).append(median_seconds(fn, repeats))
                builds.setdefault(name, []).append(
                    median_seconds(lambda lib=libraries[name]: build_graph(lib), 1, collect=True)
                )
    print(f"CNN with tf.layers, batch {BATCH}, Adam, 1 BLAS thread")
    for name in libraries:
        print(
            f"{name:9s} step {statistics.median(steps[name]) * 1e3:8.1f} ms   "
            f"build 10k ops {statistics.median(builds[name]) * 1e3:8.1f} ms"
        )
    if "tf1" in libraries:
        step_ratio = statistics.median(steps["dataflow"]) / statistics.median(steps["tf1"])
        build_ratio = statistics.median(builds["dataflow"]) / statistics.median(builds["tf1"])
        print(f"dataflow / tf1: step {step_ratio:.2f}, graph build {build_ratio:.2f}")


if __name__ == "__main__":
    main()
