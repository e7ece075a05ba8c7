"""An LSTM language-model training step against TF1 in this process.

Run: ``python benchmarks/bench_rnn.py`` (``--quick`` for fewer repeats).

Issue 14's case: ``dynamic_rnn`` over a ``MultiRNNCell`` of two ``BasicLSTMCell(256)``
(also with the cells run step by step instead of as one ``LSTMSequence`` op each),
35 time steps, batch 32, word embeddings of 256 over a 10,000-word vocabulary, and
``sampled_softmax_loss`` with 64 sampled classes, minimized with gradient descent. One
BLAS thread each (``threadpoolctl``; TF1's session one intra/inter-op thread),
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

VOCABULARY, UNITS, STEPS, BATCH, SAMPLED = 10_000, 256, 35, 32, 64


def lm_step(tf: Any, time_known: bool = True, fused: bool = True) -> Callable[[], None]:
    rng = np.random.default_rng(0)
    words = rng.integers(0, VOCABULARY, (BATCH, STEPS + 1))
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(0)
        # With the time steps unknown at build time dynamic_rnn runs its while_loop;
        # with them known (35) it unrolls the loop (layers/rnn.py says why).
        inputs = tf.placeholder(tf.int32, [BATCH, STEPS if time_known else None])
        targets = tf.placeholder(tf.int64, [BATCH, STEPS if time_known else None])
        embedding = tf.get_variable("embedding", [VOCABULARY, UNITS])
        lstm = tf.nn.rnn_cell.BasicLSTMCell
        if not fused:
            # A subclass may change ``call``, so dynamic_rnn runs it step by step: the
            # per-step ops that the fused LSTMSequence replaces, for comparison.
            lstm = type("PerStepLSTMCell", (lstm,), {})
        cell = tf.nn.rnn_cell.MultiRNNCell([lstm(UNITS) for _ in range(2)])
        outputs, _ = tf.nn.dynamic_rnn(
            cell, tf.nn.embedding_lookup(embedding, inputs), dtype=tf.float32
        )
        softmax_w = tf.get_variable("softmax_w", [VOCABULARY, UNITS])
        softmax_b = tf.get_variable("softmax_b", [VOCABULARY], initializer=tf.zeros_initializer())
        loss = tf.reduce_mean(
            tf.nn.sampled_softmax_loss(
                softmax_w,
                softmax_b,
                tf.reshape(targets, [-1, 1]),
                tf.reshape(outputs, [-1, UNITS]),
                SAMPLED,
                VOCABULARY,
            )
        )
        train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
        config = None
        if tf is not dataflow:
            config = tf.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=1)
        sess = tf.Session(graph=graph, config=config)
        sess.run(tf.global_variables_initializer())
    feed = {inputs: words[:, :-1], targets: words[:, 1:]}
    return lambda: sess.run(train, feed)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    rounds, repeats = (2, 3) if args.quick else (5, 5)
    libraries: dict[str, Any] = {"dataflow": dataflow}
    try:
        import os

        os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")  # tf.nn.rnn_cell needs Keras 2
        import tensorflow.compat.v1 as tf1

        tf1.disable_eager_execution()
        libraries["tf1"] = tf1
    except ImportError:
        print("tensorflow not installed: dataflow only")
    times: dict[str, list[float]] = {}
    with threadpool_limits(1):
        steps = {name: lm_step(lib) for name, lib in libraries.items()}
        steps["dataflow, per-step ops"] = lm_step(dataflow, fused=False)
        steps["dataflow, time unknown"] = lm_step(dataflow, time_known=False)
        for step in steps.values():
            step()  # warm-up
        for _ in range(rounds):
            for name, step in steps.items():
                times.setdefault(name, []).append(median_seconds(step, repeats))
    print(f"LSTM LM: 2 x {UNITS} units, {STEPS} steps, batch {BATCH}, sampled softmax {SAMPLED}")
    for name in steps:
        print(f"{name:22s} step {statistics.median(times[name]) * 1e3:8.1f} ms")
    if "tf1" in libraries:
        for name in steps:
            if name != "tf1":
                ratio = statistics.median(times[name]) / statistics.median(times["tf1"])
                print(f"{name} / tf1: {ratio:.2f}")


if __name__ == "__main__":
    main()
