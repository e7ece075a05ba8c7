"""An embedding training step on a large and a small table, and against TF1.

Run: ``python benchmarks/bench_embedding.py`` (``--quick`` for fewer repeats).

Issue 14's case for ``IndexedSlices``: ``embedding_lookup`` of 1,000 ids (repeats
included) from a 64-wide table, a reduction, and ``GradientDescentOptimizer.minimize``.
The gradient is an ``IndexedSlices`` of the 1,000 rows and the update a scatter into
them, so a step should cost about the same on a 1,000,000-row table as on a 1,000-row
one (target: within 2x), where a dense gradient would build and apply a 256 MB one.
One BLAS thread each (``threadpoolctl``; TF1's session one intra/inter-op thread),
interleaved round by round; the median step of each. Nothing is asserted; the figures
go to ``docs/performance.md``.
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

IDS, DIM = 1_000, 64
SIZES = {"large": 1_000_000, "small": 1_000}


def embedding_step(tf: Any, rows: int) -> Callable[[], None]:
    rng = np.random.default_rng(0)
    ids = rng.integers(0, min(rows, 1_000), IDS)  # the same ids on both tables
    graph = tf.Graph()
    with graph.as_default():
        table = tf.Variable(tf.random_uniform([rows, DIM], -0.1, 0.1, seed=1), name="table")
        ids_t = tf.placeholder(tf.int64, [IDS], name="ids")
        loss = tf.reduce_sum(tf.square(tf.nn.embedding_lookup(table, ids_t)))
        train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
        config = None
        if tf is not dataflow:
            config = tf.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=1)
        sess = tf.Session(graph=graph, config=config)
        sess.run(tf.global_variables_initializer())
    feed = {ids_t: ids}
    return lambda: sess.run(train, feed)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    rounds, repeats = (3, 10) if args.quick else (7, 30)
    libraries: dict[str, Any] = {"dataflow": dataflow}
    try:
        import tensorflow.compat.v1 as tf1

        tf1.disable_eager_execution()
        libraries["tf1"] = tf1
    except ImportError:
        print("tensorflow not installed: dataflow only")
    times: dict[str, list[float]] = {}
    with threadpool_limits(1):
        steps = {
            f"{name} {size}": embedding_step(lib, rows)
            for name, lib in libraries.items()
            for size, rows in SIZES.items()
        }
        for step in steps.values():
            step()  # warm-up
        for _ in range(rounds):
            for name, step in steps.items():
                times.setdefault(name, []).append(median_seconds(step, repeats))
    median = {name: statistics.median(t) for name, t in times.items()}
    print(
        f"embedding step: {IDS} ids x {DIM}, tables of {SIZES['large']} and {SIZES['small']} rows"
    )
    for name in steps:
        print(f"{name:16s} step {median[name] * 1e3:8.3f} ms")
    for name in libraries:
        ratio = median[f"{name} large"] / median[f"{name} small"]
        print(f"{name}: large / small table: {ratio:.2f}")
    if "tf1" in libraries:
        for size in SIZES:
            ratio = median[f"dataflow {size}"] / median[f"tf1 {size}"]
            print(f"dataflow / tf1, {size} table: {ratio:.2f}")


if __name__ == "__main__":
    main()
