"""dataflow against TF1 on a quiet and on a loaded machine: does other work on the cores
cost dataflow more than it costs TF1?

Run: ``python benchmarks/bench_under_load.py`` (about two minutes; ``--quick`` for a
smoke run with tiny sizes).

* Cases: the TF1 tutorial's CNN training step (``tf.layers``: two ``conv2d(5x5, same,
  relu) + max_pooling2d(2)`` blocks, 32 and 64 filters, ``dense(1024, relu)``,
  ``dense(10)``, softmax cross-entropy, Adam; batch 128 of 28x28x1) and the MLP
  784-256-256-10 Adam step of ``bench_training.py`` (batch 128).
* Both libraries run with their *default* sessions (``ConfigProto()``: TF1's intra-op
  pool one thread per core, dataflow's intra-op threads for its kernels per
  ``runtime/execute/blas_threads.py``, BLAS on one thread during steps), as users run
  them; ``--threads N`` sets
  ``intra_op_parallelism_threads=N`` for both instead.
* Conditions: quiet (nothing of ours beside them), then ``N`` CPU hogs beside them for
  ``N`` = cores and 2x cores (``os.sched_getaffinity``): subprocesses spinning in pure
  Python, started before the condition's rounds and ended (by their ids) after them.
* Each library runs in a process of its own (``Contender``: this script with
  ``--serve``, driven over a pipe), as users run it. In each condition the two
  alternate round by round, each round after a 50 ms rest (``SETTLE``); the figure is
  the median of the rounds' median steps.
  Reported: dataflow / TF1 per case and condition, and loaded / quiet of that ratio
  (issue 33's goal: at most 1.2x).

Nothing is asserted; the figures go to ``docs/performance.md`` with the CPU (``lscpu``'s
model name) and BLAS (``threadpoolctl``) printed here.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from bench_layers import tutorial_cnn_loss
from bench_training import GraphContender, build_mlp, mlp_data
from threadpoolctl import threadpool_info
from timing import cpu_name, median_seconds

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
        loss = tutorial_cnn_loss(tf, x, y)
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


# Seconds of rest before each library's round: TF1's intra-op pool spins on for a while
# after its step, which is not the next round's cost.
SETTLE = 0.05
# Lines of a library's process that answer the driver (anything else it prints is not).
ANSWER = "@@ "


def sizes(quick: bool) -> tuple[int, int, int]:
    """(CNN batch, CNN image size, MLP batch)."""
    return (4, 12, 8) if quick else (128, 28, 128)


def library(name: str, threads: int) -> tuple[Any, Any]:
    """The module of library ``name`` (``dataflow`` or ``tf1``) and its session config."""
    if name == "dataflow":
        tf: Any = dataflow
    else:
        os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
        import tensorflow.compat.v1 as tf

        tf.disable_eager_execution()
    config = tf.ConfigProto(
        intra_op_parallelism_threads=threads, inter_op_parallelism_threads=threads
    )
    return tf, config


def serve(name: str, threads: int, quick: bool) -> None:
    """A library's process: builds both cases' steps, then answers each line ``case
    repeats`` on stdin with the median seconds of ``repeats`` steps of that case."""
    tf, config = library(name, threads)
    batch, size, mlp_batch = sizes(quick)
    steps = {"cnn": cnn_step(tf, batch, size, config), "mlp": mlp_step(tf, mlp_batch, config)}
    for step in steps.values():
        step()  # plans, buffers, the BLAS libraries a step loads
    print(f"{ANSWER}{blas_description()}", flush=True)
    for line in sys.stdin:
        case, repeats = line.split()
        print(f"{ANSWER}{median_seconds(steps[case], int(repeats))!r}", flush=True)


class Contender:
    """One library's steps in a process of its own (``serve``), driven over a pipe.

    Each library runs alone in its process, as users run it: no library's thread pools,
    BLAS settings or allocator share the other's process (docs/performance.md, "Each
    library in its own process")."""

    def __init__(self, name: str, threads: int, quick: bool) -> None:
        self.name = name
        here = os.path.dirname(os.path.abspath(__file__))
        command = [sys.executable, os.path.join(here, "bench_under_load.py"), "--serve", name]
        command += ["--threads", str(threads)] + (["--quick"] if quick else [])
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=here
        )
        self.blas = self._answer()

    def _answer(self) -> str:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.startswith(ANSWER):
                return line[len(ANSWER) :].strip()
        raise RuntimeError(f"the {self.name} process ended (exit {self.process.wait()})")

    def seconds(self, case: str, repeats: int) -> float:
        """The median seconds of ``repeats`` steps of ``case`` in this library's process."""
        assert self.process.stdin is not None
        self.process.stdin.write(f"{case} {repeats}\n")
        self.process.stdin.flush()
        return float(self._answer())

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()  # (its serve loop ends)
        try:
            self.process.wait(60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()


def measure(contenders: list[Contender], case: str, rounds: int, repeats: int) -> dict[str, float]:
    """Median over ``rounds`` of each library's median step of ``case`` in seconds,
    libraries interleaved with a rest before each round, after one warm-up step each
    (under this condition's load)."""
    for contender in contenders:
        contender.seconds(case, 1)
    medians: dict[str, list[float]] = {c.name: [] for c in contenders}
    for _ in range(rounds):
        for contender in contenders:
            time.sleep(SETTLE)
            medians[contender.name].append(contender.seconds(case, repeats))
    return {name: statistics.median(m) for name, m in medians.items()}


def main(argv: list[str] | None = None) -> dict[str, dict[str, dict[str, float]]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes, one hog count")
    parser.add_argument("--threads", type=int, default=0, help="intra-op threads (0: default)")
    parser.add_argument("--rounds", type=int, default=0)
    parser.add_argument("--serve", default=None, help=argparse.SUPPRESS)  # (a library's process)
    args = parser.parse_args(argv)
    if args.serve:
        serve(args.serve, args.threads, args.quick)
        return {}
    cores = len(os.sched_getaffinity(0))
    rounds, repeats, hog_counts = (1, 1, [1]) if args.quick else (5, 3, [cores, 2 * cores])
    rounds = args.rounds or rounds
    names = ["dataflow"]
    if importlib.util.find_spec("tensorflow") is not None:
        names.append("tf1")
    else:
        print("tensorflow not installed: dataflow only")
    contenders = [Contender(name, args.threads, args.quick) for name in names]
    print(f"CPU: {cpu_name()}, {cores} cores available")
    print(f"BLAS: {contenders[0].blas}")
    print(f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}")
    print(f"intra/inter-op threads: {args.threads or 'default'}; each library in its own process")
    results: dict[str, dict[str, dict[str, float]]] = {}
    try:
        for hogs_n in [0, *hog_counts]:
            condition = "quiet" if hogs_n == 0 else f"{hogs_n} hogs"
            hogs = start_hogs(hogs_n)
            try:
                results[condition] = {
                    case: measure(contenders, case, rounds, repeats) for case in ("cnn", "mlp")
                }
            finally:
                stop_hogs(hogs)
            report(results, condition, hogs_n)
    finally:
        for contender in contenders:
            contender.close()
    return results


def report(results: dict[str, dict[str, dict[str, float]]], condition: str, hogs: int) -> None:
    load = os.getloadavg()[0]
    for case, got in results[condition].items():
        line = f"{condition:8s} {case}: " + "  ".join(
            f"{name} {seconds * 1e3:8.2f} ms" for name, seconds in got.items()
        )
        if "tf1" in got:
            ratio = got["dataflow"] / got["tf1"]
            line += f"  dataflow/TF1 {ratio:.2f}x"
            if hogs:
                quiet = results["quiet"][case]
                line += f"  loaded/quiet {ratio / (quiet['dataflow'] / quiet['tf1']):.2f}x"
        print(line + f"  (load {load:.1f})")


if __name__ == "__main__":
    main()
