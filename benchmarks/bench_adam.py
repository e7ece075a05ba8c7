"""Adam's update alone: ``AdamOptimizer.apply_gradients`` of a constant gradient on
float32 variables, dataflow's embedded session against TF1 (``tensorflow.compat.v1``)
in this process (issue 33: at most 1.0x TF1).

Run: ``python benchmarks/bench_adam.py`` (``--quick`` for fewer rounds).

The variables are a dense layer's kernel and bias shaped like the tutorial MLP's
(1024 x 1300 and 1300: 1.33M parameters); the gradients are constants, so the step is
the update and nothing else. Two thread settings: one intra-op thread each (TF1's
``intra_op_parallelism_threads=1``, dataflow's the same: one BLAS thread), and each
library's default session. Where numba is installed (the ``fast`` extra), dataflow's
update is one compiled loop (``fused_updates``); the column "no numba" is the same
session with that loop switched off (the BLAS blocks of ``adam_blas``). The contenders
run interleaved round by round; the figure is the median of the rounds' median steps.
Printed with the CPU (``lscpu``'s model) and the BLAS libraries (``threadpoolctl``) it
ran on. Nothing is asserted; the figures go to ``docs/performance.md``.
"""

from __future__ import annotations

import argparse
import platform
import subprocess
from collections.abc import Callable
from typing import Any

import numpy as np
from threadpoolctl import threadpool_info
from timing import interleaved_ms, tf1_session

import dataflow
from dataflow.ops import compiled
from dataflow.train.optimizers import fused_updates

SHAPES = ((1024, 1300), (1300,))


def gradient_pairs(tf: Any) -> list[tuple[Any, Any]]:
    """``SHAPES``' float32 variables in library ``tf``, each with a constant gradient."""
    rng = np.random.default_rng(0)
    pairs = []
    for i, shape in enumerate(SHAPES):
        var = tf.Variable(rng.standard_normal(shape).astype(np.float32), name=f"v{i}")
        grad = tf.constant(rng.standard_normal(shape).astype(np.float32) * 0.01)
        pairs.append((grad, var))
    return pairs


def _variables_and_grads(tf: Any) -> Any:
    return tf.train.AdamOptimizer(1e-3).apply_gradients(gradient_pairs(tf))


def dataflow_step(threads: int) -> Callable[[], Any]:
    tf = dataflow
    graph = tf.Graph()
    with graph.as_default():
        update = _variables_and_grads(tf)
        init = tf.global_variables_initializer()
    config = tf.ConfigProto(intra_op_parallelism_threads=threads)
    sess = tf.Session(graph=graph, config=config)
    sess.run(init)
    return lambda: sess.run(update)


def tf1_step(threads: int) -> Callable[[], Any] | None:
    config = {"intra_op_parallelism_threads": threads}
    if threads:
        config["inter_op_parallelism_threads"] = threads
    made = tf1_session(_variables_and_grads, config, initialize=True)
    if made is None:
        return None
    sess, update = made
    return lambda: sess.run(update)


def without_compiled_loop(step: Callable[[], Any]) -> Callable[[], Any]:
    """``step`` with Adam's compiled loop switched off: the BLAS route."""

    def run() -> Any:
        takes = fused_updates.applies_to
        fused_updates.applies_to = lambda arrays: False
        try:
            return step()
        finally:
            fused_updates.applies_to = takes

    return run


def cpu_and_blas() -> str:
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        model = next(
            (line.split(":", 1)[1].strip() for line in lscpu.splitlines() if "Model name" in line),
            platform.processor(),
        )
    except OSError:
        model = platform.processor()
    libs = "; ".join(
        f"{i['internal_api']} {i['version']} {i.get('architecture', '')}"
        for i in threadpool_info()
        if i["user_api"] == "blas"
    )
    return f"CPU: {model}\nBLAS: {libs}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    rounds, per_round = (3, 10) if args.quick else (9, 20)
    for threads in (1, 0):
        contenders = {"dataflow": dataflow_step(threads), "tf1": tf1_step(threads)}
        if compiled.numba_module() is not None:
            contenders["no numba"] = without_compiled_loop(dataflow_step(threads))
        runs = {name: fn for name, fn in contenders.items() if fn is not None}
        got = interleaved_ms(runs, rounds, per_round)
        label = "1 thread" if threads else "default"
        line = "  ".join(f"{name} {ms:7.2f} ms" for name, ms in got.items())
        ratio = f"  dataflow/TF1 {got['dataflow'] / got['tf1']:.2f}x" if "tf1" in got else ""
        print(f"Adam, {sum(np.prod(s) for s in SHAPES):,} params, {label:8s}: {line}{ratio}")
    numba = compiled.numba_module()
    print(f"numba: {numba.__version__ if numba else 'not installed (BLAS route)'}")
    print(cpu_and_blas())  # after the sessions: the first update loads scipy's BLAS


if __name__ == "__main__":
    main()
