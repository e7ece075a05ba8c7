"""What summaries cost a training step: the step with ``merge_all`` fetched (and written
with ``FileWriter.add_summary``) every step, against the same step without, for
dataflow's embedded session and for TF1 (``tensorflow.compat.v1``) in this process.

Run: ``python benchmarks/bench_summaries.py`` (``--quick`` for fewer repeats).

The model is an MLP 784-256-10 (relu), batch 128 fed each step, softmax cross-entropy,
Adam; the summaries are what tutorials write: the loss and accuracy as scalars and a
histogram of each weight matrix and bias. Contenders run interleaved round by round with
one BLAS thread each (``threadpoolctl``; TF1's session gets one intra/inter-op thread).
Reported: medians per step for no summaries, the two scalars, and ``merge_all`` (the
scalars and the four histograms, 200k values each step), the ratios to the step without
summaries per library, and dataflow / TF1 per mode. Nothing is asserted;
the figures go to ``docs/performance.md``.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

import dataflow

SIZES, BATCH = (784, 256, 10), 128


MODES = ("none", "scalars", "merge_all")


def build(tf: Any, logdir: str) -> tuple[Callable[[str], None], Callable[[], None]]:
    """A step function ``step(mode)`` for library ``tf`` (``mode`` one of ``MODES``:
    no summaries, the two scalars merged, or ``merge_all`` with the four weight
    histograms), and a closer."""
    rng = np.random.default_rng(0)
    images = rng.standard_normal((BATCH, SIZES[0])).astype(np.float32)
    labels = rng.integers(0, SIZES[-1], BATCH)
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, SIZES[0]], name="x")
        y = tf.placeholder(tf.int64, [None], name="y")
        h = x
        for i, (n_in, n_out) in enumerate(zip(SIZES[:-1], SIZES[1:])):
            w = tf.Variable(rng.standard_normal((n_in, n_out)).astype(np.float32) * 0.05)
            b = tf.Variable(np.zeros(n_out, np.float32))
            h = tf.matmul(h, w) + b
            if i < len(SIZES) - 2:
                h = tf.nn.relu(h)
            tf.summary.histogram(f"weights_{i}", w)
            tf.summary.histogram(f"biases_{i}", b)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=h))
        accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(h, 1), y), tf.float32))
        scalars = tf.summary.merge(
            [tf.summary.scalar("loss", loss), tf.summary.scalar("accuracy", accuracy)]
        )
        train = tf.train.AdamOptimizer(1e-3).minimize(loss)
        merged = {"scalars": scalars, "merge_all": tf.summary.merge_all()}
        config = None
        if tf is not dataflow:
            config = tf.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=1)
        sess = tf.Session(graph=graph, config=config)
        sess.run(tf.global_variables_initializer())
        writer = tf.summary.FileWriter(logdir)
    feed = {x: images, y: labels}
    steps = [0]

    def step(mode: str) -> None:
        steps[0] += 1
        if mode == "none":
            sess.run(train, feed)
        else:
            summary, _ = sess.run([merged[mode], train], feed)
            writer.add_summary(summary, steps[0])

    def close() -> None:
        writer.close()
        sess.close()

    return step, close


def median_ms(fn: Callable[[], None], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    rounds, repeats = (3, 10) if args.quick else (7, 30)
    contenders: dict[str, Any] = {"dataflow": dataflow}
    try:
        import tensorflow.compat.v1 as tf1

        tf1.disable_eager_execution()
        contenders["tf1"] = tf1
    except ImportError:
        print("tensorflow not installed: dataflow only")
    results: dict[tuple[str, str], list[float]] = {}
    closers = []
    with threadpool_limits(1), tempfile.TemporaryDirectory() as logdir:
        steps = {}
        for name, lib in contenders.items():
            steps[name], close = build(lib, f"{logdir}/{name}")
            closers.append(close)
            for mode in MODES:
                steps[name](mode)  # warm-up: plan caches, first file writes
        for _ in range(rounds):
            for name in contenders:
                for mode in MODES:
                    ms = median_ms(lambda: steps[name](mode), repeats)  # noqa: B023
                    results.setdefault((name, mode), []).append(ms)
        for close in closers:
            close()
    print(f"MLP {SIZES} batch {BATCH}, 1 BLAS thread; median ms per step")
    medians = {key: statistics.median(times) for key, times in results.items()}
    for name in contenders:
        base = medians[(name, "none")]
        print(
            f"{name:9s} none {base:6.2f}  "
            + "  ".join(
                f"{mode} {medians[(name, mode)]:6.2f} ({medians[(name, mode)] / base:.2f}x)"
                for mode in MODES[1:]
            )
        )
    if "tf1" in contenders:
        for mode in MODES:
            ratio = medians[("dataflow", mode)] / medians[("tf1", mode)]
            print(f"{mode}: dataflow / tf1 {ratio:.2f}")


if __name__ == "__main__":
    main()
