"""dataflow against TF1 on a quiet and on a loaded machine: does other work on the cores
cost dataflow more than it costs TF1?

Run: ``python benchmarks/bench_under_load.py`` (about two minutes; ``--quick`` for a
smoke run with tiny sizes).

* Cases: the TF1 tutorial's CNN training step (``tf.layers``: two ``conv2d(5x5, same,
  relu) + max_pooling2d(2)`` blocks, 32 and 64 filters, ``dense(1024, relu)``,
  ``dense(10)``, softmax cross-entropy, Adam; batch 128 of 28x28x1) and the MLP
  784-256-256-10 Adam step of ``bench_training.py`` (batch 128).
* Both libraries run with their *default* sessions (``ConfigProto()``: TF1's intra-op
  pool one thread per core, dataflow's BLAS threads per ``runtime/execute/
  blas_threads.py``), as users run them; ``--threads N`` sets
  ``intra_op_parallelism_threads=N`` for both instead.
* Conditions: quiet (nothing of ours beside them), then ``N`` CPU hogs beside them for
  ``N`` = cores and 2x cores (``os.sched_getaffinity``): subprocesses spinning in pure
  Python, started before the condition's rounds and ended (by their ids) after them.
* In each condition the two libraries alternate round by round; the figure is the
  median of the rounds' median steps. Reported: dataflow / TF1 per case and condition,
  and loaded / quiet of that ratio (issue 33's goal: at most 1.2x).

Nothing is asserted; the figures go to ``docs/performance.md`` with the CPU (``lscpu``'s
model name) and BLAS (``threadpoolctl``) printed here.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
from bench_training import GraphContender, build_mlp, mlp_data
from threadpoolctl import threadpool_info
from timing import cpu_name, interleaved_ms

import dataflow

HOG = "while True:\n    pass\n"


def blas_description() -> str:
    libs = [lib for lib in threadpool_info() if lib["user_api"] == "blas"]
    return "; ".join(
        f"{lib['internal_api']} {lib.get('version')} {lib.get('architecture')} "
        f"({lib['num_threads']} threads, {os.path.basename(lib['filepath'])})"
        for lib in libs
    )


def cnn_step(tf: Any, batch: int, size: int, config: Any) -> Callable[[], Any]:
    """The tutorial CNN's training step on ``batch`` images of ``size`` x ``size``."""
    rng = np.random.default_rng(0)
    images = rng.random((batch, size, size, 1), dtype=np.float32)
    labels = rng.integers(0, 10, batch)
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(0)
        x = tf.placeholder(tf.float32, [None, size, size, 1])
        y = tf.placeholder(tf.int64, [None])
        h = tf.layers.conv2d(x, 32, 5, padding="same", activation=tf.nn.relu)
        h = tf.layers.max_pooling2d(h, 2, 2)
        h = tf.layers.conv2d(h, 64, 5, padding="same", activation=tf.nn.relu)
        h = tf.layers.max_pooling2d(h, 2, 2)
        h = tf.layers.dense(tf.layers.flatten(h), 1024, activation=tf.nn.relu)
        logits = tf.layers.dense(h, 10)
        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits)
        )
        train = tf.train.AdamOptimizer(1e-4).minimize(loss)
        sess = tf.Session(graph=graph, config=config)
        sess.run(tf.global_variables_initializer())
    feed = {x: images, y: labels}
    return lambda: sess.run(train, feed)


def mlp_step(tf: Any, batch: int, config: Any) -> Callable[[], Any]:
    data = mlp_data(batches=2)
    data["xs"] = [x[:batch] for x in data["xs"]]
    data["ys"] = [y[:batch] for y in data["ys"]]
    contender = GraphContender(tf, build_mlp, data, config)
    x, y = data["xs"][0], data["ys"][0]
    return lambda: contender.step(x, y)


def start_hogs(n: int) -> list[subprocess.Popen]:
    return [subprocess.Popen([sys.executable, "-c", HOG]) for _ in range(n)]


def stop_hogs(hogs: list[subprocess.Popen]) -> None:
    for hog in hogs:
        hog.kill()
    for hog in hogs:
        hog.wait()


def measure(fns: dict[str, Callable[[], Any]], rounds: int, repeats: int) -> dict[str, float]:
    """Median over ``rounds`` of each contender's median step in seconds, contenders
    interleaved, after one warm-up call each (under this condition's load)."""
    got = interleaved_ms(fns, rounds, repeats, warm=1)
    return {name: ms / 1e3 for name, ms in got.items()}


def main(argv: list[str] | None = None) -> dict[str, dict[str, dict[str, float]]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes, one hog count")
    parser.add_argument("--threads", type=int, default=0, help="intra-op threads (0: default)")
    parser.add_argument("--rounds", type=int, default=0)
    args = parser.parse_args(argv)
    cores = len(os.sched_getaffinity(0))
    if args.quick:
        batch, size, mlp_batch, rounds, repeats, hog_counts = 4, 12, 8, 1, 1, [1]
    else:
        batch, size, mlp_batch, rounds, repeats, hog_counts = 128, 28, 128, 5, 3, [cores, 2 * cores]
    rounds = args.rounds or rounds
    libraries: dict[str, tuple[Any, Any]] = {
        "dataflow": (
            dataflow,
            dataflow.ConfigProto(
                intra_op_parallelism_threads=args.threads,
                inter_op_parallelism_threads=args.threads,
            ),
        )
    }
    try:
        os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
        import tensorflow.compat.v1 as tf1

        tf1.disable_eager_execution()
        libraries["tf1"] = (
            tf1,
            tf1.ConfigProto(
                intra_op_parallelism_threads=args.threads,
                inter_op_parallelism_threads=args.threads,
            ),
        )
    except ImportError:
        print("tensorflow not installed: dataflow only")
    cases = {
        "cnn": {n: cnn_step(lib, batch, size, cfg) for n, (lib, cfg) in libraries.items()},
        "mlp": {n: mlp_step(lib, mlp_batch, cfg) for n, (lib, cfg) in libraries.items()},
    }
    print(f"CPU: {cpu_name()}, {cores} cores available")
    print(f"BLAS: {blas_description()}")
    print(f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}")
    print(f"intra/inter-op threads: {args.threads or 'default'}")
    results: dict[str, dict[str, dict[str, float]]] = {}
    for hogs_n in [0, *hog_counts]:
        condition = "quiet" if hogs_n == 0 else f"{hogs_n} hogs"
        hogs = start_hogs(hogs_n)
        try:
            results[condition] = {
                case: measure(fns, rounds, repeats) for case, fns in cases.items()
            }
        finally:
            stop_hogs(hogs)
        load = os.getloadavg()[0]
        for case, got in results[condition].items():
            line = f"{condition:8s} {case}: " + "  ".join(
                f"{name} {seconds * 1e3:8.2f} ms" for name, seconds in got.items()
            )
            if "tf1" in got:
                ratio = got["dataflow"] / got["tf1"]
                line += f"  dataflow/TF1 {ratio:.2f}x"
                if hogs_n:
                    quiet = results["quiet"][case]
                    line += f"  loaded/quiet {ratio / (quiet['dataflow'] / quiet['tf1']):.2f}x"
            print(line + f"  (load {load:.1f})")
    return results


if __name__ == "__main__":
    main()
