"""An input pipeline feeding training: ``tf.data`` against ``feed_dict``, and against
TF1's own ``tf.data`` (``tensorflow.compat.v1``) in this process.

Run: ``python benchmarks/bench_data.py`` (``--quick`` for fewer repeats).

The pipeline is the one tutorials write: ``from_tensor_slices((images, labels)) ->
map(scale to [-1, 1]) -> shuffle(1000) -> batch(128) -> prefetch(1)`` over 10000
MNIST-sized examples, feeding an MLP 784-256-10 (relu, softmax cross-entropy, Adam).
Contenders, one epoch (79 steps) each, interleaved round by round, one BLAS thread each
(``threadpoolctl``; TF1's session one intra/inter-op thread):

* ``dataflow tf.data``: the step reads ``iterator.get_next()``;
* ``dataflow feed_dict``: the same batches, scaled and shuffled beforehand (not timed),
  fed through placeholders;
* ``tf1 tf.data`` and ``tf1 feed_dict``: the same two programs on TensorFlow.

Reported: median seconds per epoch and the ratios the issue names. Nothing is asserted;
the figures go to ``docs/performance.md``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

import dataflow

N, SIZES, BATCH, BUFFER = 10000, (784, 256, 10), 128, 1000


def data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return rng.random((N, SIZES[0]), dtype=np.float32), rng.integers(0, 10, N)


def model(tf: Any, x: Any, y: Any) -> Any:
    rng = np.random.default_rng(1)
    h = x
    for i, (n_in, n_out) in enumerate(zip(SIZES[:-1], SIZES[1:])):
        w = tf.Variable(rng.standard_normal((n_in, n_out)).astype(np.float32) * 0.05)
        h = tf.matmul(h, w) + tf.Variable(np.zeros(n_out, np.float32))
        if i < len(SIZES) - 2:
            h = tf.nn.relu(h)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=h))
    return tf.train.AdamOptimizer(1e-3).minimize(loss)


def _session(tf: Any, graph: Any) -> Any:
    config = None
    if tf is not dataflow:
        config = tf.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=1)
    return tf.Session(graph=graph, config=config)


def with_dataset(tf: Any, images: np.ndarray, labels: np.ndarray) -> Callable[[], int]:
    graph = tf.Graph()
    with graph.as_default():
        dataset = (
            tf.data.Dataset.from_tensor_slices((images, labels))
            .map(lambda x, y: (x * 2.0 - 1.0, y))
            .shuffle(BUFFER, seed=0)
            .batch(BATCH)
            .prefetch(1)
        )
        iterator = dataset.make_initializable_iterator()
        x, y = iterator.get_next()
        train = model(tf, x, y)
        sess = _session(tf, graph)
        sess.run(tf.global_variables_initializer())

    def epoch() -> int:
        sess.run(iterator.initializer)
        steps = 0
        while True:
            try:
                sess.run(train)
            except tf.errors.OutOfRangeError:
                return steps
            steps += 1

    return epoch


def with_feed(tf: Any, images: np.ndarray, labels: np.ndarray) -> Callable[[], int]:
    order = np.random.default_rng(0).permutation(N)
    scaled = images[order] * 2.0 - 1.0
    batches = [(scaled[i : i + BATCH], labels[order][i : i + BATCH]) for i in range(0, N, BATCH)]
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, SIZES[0]])
        y = tf.placeholder(tf.int64, [None])
        train = model(tf, x, y)
        sess = _session(tf, graph)
        sess.run(tf.global_variables_initializer())

    def epoch() -> int:
        for bx, by in batches:
            sess.run(train, {x: bx, y: by})
        return len(batches)

    return epoch


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    rounds, repeats = (2, 2) if args.quick else (5, 3)
    libraries: dict[str, Any] = {"dataflow": dataflow}
    try:
        import tensorflow.compat.v1 as tf1

        tf1.disable_eager_execution()
        libraries["tf1"] = tf1
    except ImportError:
        print("tensorflow not installed: dataflow only")
    images, labels = data()
    times: dict[str, list[float]] = {}
    with threadpool_limits(1):
        epochs = {}
        for name, lib in libraries.items():
            epochs[f"{name} tf.data"] = with_dataset(lib, images, labels)
            epochs[f"{name} feed_dict"] = with_feed(lib, images, labels)
        for epoch in epochs.values():
            epoch()  # warm-up: plans, caches
        for _ in range(rounds):
            for name, epoch in epochs.items():
                for _ in range(repeats):
                    start = time.perf_counter()
                    steps = epoch()
                    times.setdefault(name, []).append(time.perf_counter() - start)
    print(f"{N} examples, batch {BATCH}, {steps} steps per epoch, MLP {SIZES}, 1 BLAS thread")
    medians = {name: statistics.median(t) for name, t in times.items()}
    for name, seconds in medians.items():
        print(f"{name:20s} {seconds * 1e3:8.1f} ms per epoch")
    for lib in libraries:
        ratio = medians[f"{lib} tf.data"] / medians[f"{lib} feed_dict"]
        print(f"{lib}: tf.data / feed_dict {ratio:.2f}")
    if "tf1" in libraries:
        ratio = medians["dataflow tf.data"] / medians["tf1 tf.data"]
        print(f"tf.data: dataflow / tf1 {ratio:.2f}")


if __name__ == "__main__":
    main()
