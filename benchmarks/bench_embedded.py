"""Embedded-session step latency against TF1 graph mode and hand-written numpy.

Run: ``python benchmarks/bench_embedded.py`` (add ``--quick`` for fewer repeats).

Cases (issue 2):
* a 20-op and a 200-op elementwise chain over a [10] float32 vector, fed each step,
  against numpy in a loop and numpy written out call by call ("unrolled");
* a 10,000-op chain: graph build time, first run (compile) and steady run.

All contenders run in this one process, interleaved round by round, with BLAS pinned
to one thread (threadpoolctl) so no contender is penalized by another's thread pool.
Reported: the median of each, and ratios. Nothing here is asserted; the figures go to
``docs/performance.md``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from threadpoolctl import threadpool_limits
from timing import tf1_session

CYCLE = ("add", "mul", "tanh", "sub")


def numpy_chain(n_ops: int):
    def run(x):
        for i in range(n_ops):
            kind = CYCLE[i % 4]
            if kind == "add":
                x = np.add(x, np.float32(0.5))
            elif kind == "mul":
                x = np.multiply(x, np.float32(0.9))
            elif kind == "tanh":
                x = np.tanh(x)
            else:
                x = np.subtract(x, np.float32(0.1))
        return x

    return run


def numpy_unrolled(n_ops: int):
    """The same calls written out one per line, as a person would by hand (no loop, no
    branching): the strictest numpy baseline."""
    body = {
        "add": "x = add(x, c05)",
        "mul": "x = multiply(x, c09)",
        "tanh": "x = tanh(x)",
        "sub": "x = subtract(x, c01)",
    }
    lines = ["def run(x):"] + [f"    {body[CYCLE[i % 4]]}" for i in range(n_ops)]
    lines.append("    return x")
    namespace = {
        "add": np.add,
        "multiply": np.multiply,
        "tanh": np.tanh,
        "subtract": np.subtract,
        "c05": np.float32(0.5),
        "c09": np.float32(0.9),
        "c01": np.float32(0.1),
    }
    exec("\n".join(lines), namespace)
    return namespace["run"]


def chain_op(tf, y, i: int):
    """Op ``i`` of the chain applied to ``y``: add, mul, tanh, sub in turn (``CYCLE``)."""
    kind = CYCLE[i % 4]
    if kind == "add":
        return tf.add(y, 0.5)
    if kind == "mul":
        return tf.multiply(y, 0.9)
    if kind == "tanh":
        return tf.tanh(y)
    return tf.subtract(y, 0.1)


def build_chain(tf, n_ops: int):
    x = tf.placeholder(tf.float32, [10], name="x")
    y = x
    for i in range(n_ops):
        y = chain_op(tf, y, i)
    return x, y


def dataflow_runner(n_ops: int):
    import dataflow as tf

    graph = tf.Graph()
    with graph.as_default():
        x, y = build_chain(tf, n_ops)
    sess = tf.Session(graph=graph)
    return lambda v: sess.run(y, {x: v})


def tf1_runner(n_ops: int):
    made = tf1_session(lambda tf1: build_chain(tf1, n_ops))
    if made is None:
        return None
    sess, (x, y) = made
    return lambda v: sess.run(y, {x: v})


def time_per_call(fn, arg, number: int) -> float:
    start = time.perf_counter()
    for _ in range(number):
        fn(arg)
    return (time.perf_counter() - start) / number


def latency_case(n_ops: int, rounds: int, number: int) -> dict[str, float]:
    x = np.linspace(-1, 1, 10, dtype=np.float32)
    runners = {
        "numpy": numpy_chain(n_ops),
        "numpy_unrolled": numpy_unrolled(n_ops),
        "dataflow": dataflow_runner(n_ops),
    }
    tf1 = tf1_runner(n_ops)
    if tf1 is not None:
        runners["tf1"] = tf1
    ref = runners["numpy"](x)
    for name, fn in runners.items():
        np.testing.assert_allclose(fn(x), ref, rtol=1e-5, atol=1e-6, err_msg=name)
        fn(x)  # warm up
    samples: dict[str, list[float]] = {k: [] for k in runners}
    for _ in range(rounds):
        for name, fn in runners.items():
            samples[name].append(time_per_call(fn, x, number))
    return {k: statistics.median(v) for k, v in samples.items()}


def big_graph_case(n_ops: int, steady_rounds: int) -> dict[str, dict[str, float]]:
    import dataflow as tf

    x0 = np.linspace(-1, 1, 10, dtype=np.float32)
    out: dict[str, dict[str, float]] = {}

    def measure(module, make_session):
        graph = module.Graph()
        start = time.perf_counter()
        with graph.as_default():
            x, y = build_chain(module, n_ops)
        build = time.perf_counter() - start
        sess = make_session(graph)
        start = time.perf_counter()
        sess.run(y, {x: x0})
        first = time.perf_counter() - start
        steady = statistics.median(
            time_per_call(lambda v: sess.run(y, {x: v}), x0, 5) for _ in range(steady_rounds)
        )
        sess.close()
        return {"build": build, "first": first, "steady": steady}

    out["dataflow"] = measure(tf, lambda g: tf.Session(graph=g))
    try:
        import tensorflow.compat.v1 as tf1

        tf1.disable_eager_execution()
        out["tf1"] = measure(tf1, lambda g: tf1.Session(graph=g))
    except ImportError:
        pass
    chain = numpy_chain(n_ops)
    out["numpy"] = {
        "steady": statistics.median(time_per_call(chain, x0, 5) for _ in range(steady_rounds))
    }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    rounds, number = (5, 200) if args.quick else (15, 500)
    with threadpool_limits(limits=1):
        print(
            f"{'case':<22}{'dataflow us':>12}{'numpy us':>10}{'unrolled us':>12}"
            f"{'tf1 us':>10}{'df/numpy':>10}{'df/unrolled':>12}{'df/tf1':>8}"
        )
        for n_ops in (20, 200):
            r = latency_case(n_ops, rounds, number if n_ops == 20 else number // 5)
            tf1 = r.get("tf1", float("nan"))
            print(
                f"{f'{n_ops}-op chain step':<22}{r['dataflow'] * 1e6:>12.1f}"
                f"{r['numpy'] * 1e6:>10.1f}{r['numpy_unrolled'] * 1e6:>12.1f}"
                f"{tf1 * 1e6:>10.1f}{r['dataflow'] / r['numpy']:>10.2f}"
                f"{r['dataflow'] / r['numpy_unrolled']:>12.2f}{r['dataflow'] / tf1:>8.2f}"
            )
        big = big_graph_case(10_000, 3 if args.quick else 7)
        df, tf1 = big["dataflow"], big.get("tf1", {})
        nan = float("nan")
        print(
            f"\n10,000-op graph{'dataflow':>17}{'tf1':>10}{'numpy':>10}{'df/tf1':>8}"
            f"{'df/numpy':>10}"
        )
        for key in ("build", "first", "steady"):
            unit, scale = ("ms", 1e3)
            npv = big["numpy"].get(key, nan)
            print(
                f"  {key + ' (' + unit + ')':<22}{df[key] * scale:>10.2f}"
                f"{tf1.get(key, nan) * scale:>10.2f}{npv * scale:>10.2f}"
                f"{df[key] / tf1.get(key, nan):>8.2f}{df[key] / npv:>10.2f}"
            )


if __name__ == "__main__":
    main()
