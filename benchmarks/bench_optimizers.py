"""The dense update of each TF1 optimizer alone: ``apply_gradients`` of a constant
gradient on float32 variables, dataflow's embedded session against TF1
(``tensorflow.compat.v1``) in this process, one intra-op thread each.

Run: ``python benchmarks/bench_optimizers.py`` (``--quick`` for fewer rounds).

The variables are those of ``bench_adam.py`` (a dense layer's 1024 x 1300 kernel and its
bias: 1.33M parameters); the gradients are constants, so the step is the update and
nothing else. Optimizers: gradient descent, momentum, Adagrad, RMSProp (with momentum)
and Adam. Contenders, interleaved round by round: dataflow as installed (with numba,
the ``fast`` extra, each update is one compiled loop: ``train/optimizers/fused_updates``),
**ufunc**: the same dataflow session with those loops switched off (the ufunc kernels,
and for Adam the BLAS blocks of ``adam_blas``), and TF1. The figure is the median of the
rounds' median steps, printed with the CPU and BLAS libraries it ran on. Nothing is
asserted; the figures go to ``docs/performance.md``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import numpy as np
from bench_adam import SHAPES, cpu_and_blas, gradient_pairs, without_compiled_loop
from timing import interleaved_ms, tf1_session

import dataflow
from dataflow.ops import compiled

OPTIMIZERS = {
    "gradient descent": ("GradientDescentOptimizer", {"learning_rate": 0.01}),
    "momentum": ("MomentumOptimizer", {"learning_rate": 0.01, "momentum": 0.9}),
    "Adagrad": ("AdagradOptimizer", {"learning_rate": 0.01}),
    "RMSProp": ("RMSPropOptimizer", {"learning_rate": 0.01, "momentum": 0.9}),
    "Adam": ("AdamOptimizer", {"learning_rate": 0.001}),
}


def _update(tf: Any, name: str) -> Any:
    cls, hyper = OPTIMIZERS[name]
    return getattr(tf.train, cls)(**hyper).apply_gradients(gradient_pairs(tf))


def dataflow_step(name: str) -> Callable[[], Any]:
    tf = dataflow
    graph = tf.Graph()
    with graph.as_default():
        update = _update(tf, name)
        init = tf.global_variables_initializer()
    sess = tf.Session(graph=graph, config=tf.ConfigProto(intra_op_parallelism_threads=1))
    sess.run(init)
    return lambda: sess.run(update)


def tf1_step(name: str) -> Callable[[], Any] | None:
    config = {"intra_op_parallelism_threads": 1, "inter_op_parallelism_threads": 1}
    made = tf1_session(lambda tf1: _update(tf1, name), config, initialize=True)
    if made is None:
        return None
    sess, update = made
    return lambda: sess.run(update)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    rounds, per_round = (3, 10) if args.quick else (7, 15)
    numba = compiled.numba_module()
    print(f"{sum(int(np.prod(s)) for s in SHAPES):,} float32 parameters, one thread; ms per update")
    for name in OPTIMIZERS:
        runs = {"dataflow": dataflow_step(name)}
        if numba is not None:
            runs["ufunc"] = without_compiled_loop(dataflow_step(name))
        tf1 = tf1_step(name)
        if tf1 is not None:
            runs["tf1"] = tf1
        got = interleaved_ms(runs, rounds, per_round)
        line = "  ".join(f"{k} {ms:6.2f}" for k, ms in got.items())
        if "tf1" in got:
            line += "  " + "  ".join(
                f"{k}/TF1 {got[k] / got['tf1']:.2f}x" for k in got if k != "tf1"
            )
        print(f"{name:16s} {line}", flush=True)
    print(f"numba: {numba.__version__ if numba else 'not installed (ufunc kernels)'}")
    print(cpu_and_blas())


if __name__ == "__main__":
    main()
