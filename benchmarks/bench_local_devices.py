"""Inter-op parallelism of the embedded session: two local CPU devices against one.

Run: ``python benchmarks/bench_local_devices.py`` (add ``--quick`` for fewer rounds).

The step: two independent chains of ``--length`` 2000x2000 float64 matmuls, one built
under ``tf.device("/cpu:0")`` and one under ``tf.device("/cpu:1")``, each reduced to a
scalar that is fetched. Contenders, all in this process, interleaved round by round:

* **2 devices**: ``ConfigProto(device_count={"CPU": 2})``: the chains run at the same
  time, each stage with one BLAS thread (the session holds BLAS to one thread while a
  concurrent step runs);
* **1 device, 1 BLAS thread**: the same graph in a one-device session (soft placement
  puts everything on ``/cpu:0``): the chains run one after the other;
* **1 device, 2 BLAS threads**: the same, with BLAS itself using both cores inside
  each matmul: what a single device can get from this machine's two cores;
* **numpy, 2 threads**: the two chains by hand on two Python threads, 1 BLAS thread
  each (the floor for this machine);
* **TF1, 2 devices**: ``tensorflow.compat.v1`` with the same ``device_count``, one
  intra-op and two inter-op threads.

Reported: the median seconds per step, and each contender's ratio to "1 device, 1 BLAS
thread". Then the price of the threads on a step too small to gain from them: two
chains of 10 elementwise ops over a fed ``[10]`` vector, one per device, run
concurrently, one stage at a time (``inter_op_parallelism_threads=1``), and on one
device. Nothing is asserted; the figures go to ``docs/performance.md``.
"""

from __future__ import annotations

import argparse
import threading

import numpy as np
from threadpoolctl import threadpool_limits
from timing import median_seconds, tf1_session

SIZE = 2000


def build(tf, length: int) -> list:
    """The two chains; returns the fetches (one scalar per chain). The matrices are
    variables, so that no one folds the chains at compile time (TF1's Grappler would
    fold constants)."""
    rng = np.random.default_rng(0)
    outs = []
    for device in ("/cpu:0", "/cpu:1"):
        with tf.device(device):
            a = tf.Variable(rng.standard_normal((SIZE, SIZE)) / np.sqrt(SIZE))
            y = a
            for _ in range(length):
                y = tf.matmul(y, a)
            outs.append(tf.reduce_sum(y))
    return outs


def dataflow_runner(config_kw: dict, length: int):
    import dataflow as tf

    graph = tf.Graph()
    with graph.as_default():
        fetches = build(tf, length)
        init = tf.global_variables_initializer()
    sess = tf.Session(graph=graph, config=tf.ConfigProto(**config_kw))
    sess.run(init)
    return lambda: sess.run(fetches)


def tf1_runner(length: int):
    config = {
        "device_count": {"CPU": 2},
        "intra_op_parallelism_threads": 1,
        "inter_op_parallelism_threads": 2,
    }
    made = tf1_session(lambda tf1: build(tf1, length), config, initialize=True)
    if made is None:
        return None
    sess, fetches = made
    return lambda: sess.run(fetches)


def numpy_threads_runner(length: int):
    rng = np.random.default_rng(0)
    mats = [rng.standard_normal((SIZE, SIZE)) / np.sqrt(SIZE) for _ in range(2)]
    out = [0.0, 0.0]

    def chain(i: int) -> None:
        y = mats[i]
        for _ in range(length):
            y = y @ mats[i]
        out[i] = float(y.sum())

    def run() -> list[float]:
        other = threading.Thread(target=chain, args=(1,))
        other.start()
        chain(0)
        other.join()
        return out

    return run


def small_runner(config_kw: dict):
    """Two independent 10-op elementwise chains over a fed [10] vector, one per device."""
    import dataflow as tf

    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [10])
        outs = []
        for device in ("/cpu:0", "/cpu:1"):
            with tf.device(device):
                y = x
                for _ in range(5):
                    y = tf.tanh(y * 0.9 + 0.1)
                outs.append(y)
    sess = tf.Session(graph=graph, config=tf.ConfigProto(**config_kw))
    value = np.linspace(-1, 1, 10, dtype=np.float32)
    return lambda: sess.run(outs, {x: value})


def small_case(rounds: int) -> dict[str, float]:
    contenders = {
        "2 devices, concurrent": small_runner({"device_count": {"CPU": 2}}),
        "2 devices, 1 inter-op thread": small_runner(
            {"device_count": {"CPU": 2}, "inter_op_parallelism_threads": 1}
        ),
        "1 device": small_runner({"allow_soft_placement": True}),
    }
    for run in contenders.values():
        run()
    samples: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, run in contenders.items():
            samples[name].append(median_seconds(run, 200))
    return {name: float(np.median(v)) for name, v in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--length", type=int, default=2, help="matmuls per chain")
    args = parser.parse_args()
    rounds = 3 if args.quick else 7
    # (name, runner, BLAS threads outside the session's own choice)
    contenders = [
        ("2 devices", dataflow_runner({"device_count": {"CPU": 2}}, args.length), 1),
        (
            "1 device, 1 BLAS thread",
            dataflow_runner({"allow_soft_placement": True}, args.length),
            1,
        ),
        (
            "1 device, 2 BLAS threads",
            dataflow_runner({"allow_soft_placement": True}, args.length),
            2,
        ),
        ("numpy, 2 threads", numpy_threads_runner(args.length), 1),
    ]
    tf1 = tf1_runner(args.length)
    if tf1 is not None:
        contenders.append(("TF1, 2 devices", tf1, 1))
    reference = None
    for name, run, threads in contenders:
        with threadpool_limits(limits=threads, user_api="blas"):
            got = np.array(run(), dtype=np.float64)  # warm up (compiles the plan)
        if reference is None:
            reference = got
        np.testing.assert_allclose(got, reference, rtol=1e-6, err_msg=name)
    samples: dict[str, list[float]] = {name: [] for name, _, _ in contenders}
    for _ in range(rounds):
        for name, run, threads in contenders:
            with threadpool_limits(limits=threads, user_api="blas"):
                samples[name].append(median_seconds(run, 1))
    medians = {name: float(np.median(v)) for name, v in samples.items()}
    base = medians["1 device, 1 BLAS thread"]
    print(f"two chains of {args.length} {SIZE}x{SIZE} float64 matmuls; {rounds} rounds")
    print(f"{'contender':<28}{'s/step':>10}{'vs 1 device, 1 thread':>24}")
    for name, seconds in medians.items():
        print(f"{name:<28}{seconds:>10.3f}{seconds / base:>24.2f}")
    with threadpool_limits(limits=1, user_api="blas"):
        small = small_case(rounds * 3)
    print("\nsmall step: two 10-op chains over a fed [10] vector, one per device")
    print(f"{'contender':<32}{'us/step':>10}{'vs 1 device':>14}")
    for name, seconds in small.items():
        print(f"{name:<32}{seconds * 1e6:>10.1f}{seconds / small['1 device']:>14.2f}")


if __name__ == "__main__":
    main()
