"""Training-step time: embedded dataflow vs TF1 graph mode vs hand-written numpy.

Run: ``python benchmarks/bench_training.py`` (``--quick`` for fewer repeats,
``--profile`` for a cProfile of the dataflow steps and a per-op-type kernel breakdown,
``--threads N`` for N BLAS threads).

Cases (issue 3):

* ridge regression on ``X [10000, 100]`` float32 fed each step: cost
  ``mean((y - X beta)^2) + lambda ||beta||^2``, ``tf.gradients``, ``assign_sub``; the
  step fetches the cost and runs the update (as ``examples/ridge.py`` does);
* an MLP 784-256-256-10 (relu), batch 128 fed each step, softmax cross-entropy, Adam
  via ``minimize``; the step fetches the loss and runs the train op.

The numpy contender is what a person would write by hand: the forward pass, the
backward pass derived on paper, and the update, in place. Every contender is first
checked to compute the same numbers, then all run in this one process, interleaved
round by round, with the same thread budget: ``threadpoolctl`` limits the BLAS pool
(numpy and dataflow) and TF1's session gets ``intra_op``/``inter_op`` of the same size.
Reported: medians, ratios, and what the plan cache saves (first run vs steady run).
Nothing here is asserted; the figures go to ``docs/performance.md``. Where OpenBLAS does
not recognise the CPU (it then runs its Haswell kernels, as on this project's VM), set
``OPENBLAS_CORETYPE`` (e.g. ``SkylakeX``) to compare against TF1's AVX-512 matmuls.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

RIDGE_N, RIDGE_P, RIDGE_LAM, RIDGE_LR = 10000, 100, 0.1, 0.05
MLP_SIZES, MLP_BATCH, ADAM = (784, 256, 256, 10), 128, (0.001, 0.9, 0.999, 1e-8)


# --- data ---------------------------------------------------------------------------------
def ridge_data(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((RIDGE_N, RIDGE_P)).astype(np.float32)
    y = x @ rng.standard_normal((RIDGE_P, 1)) + rng.standard_normal((RIDGE_N, 1))
    return {
        "x": x,
        "y": y.astype(np.float32),
        "beta": rng.uniform(-1, 1, (RIDGE_P, 1)).astype(np.float32),
    }


def mlp_data(seed: int = 0, batches: int = 8) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    weights = []
    for fan_in, fan_out in zip(MLP_SIZES[:-1], MLP_SIZES[1:], strict=True):
        limit = np.sqrt(6.0 / (fan_in + fan_out))
        weights.append(rng.uniform(-limit, limit, (fan_in, fan_out)).astype(np.float32))
        weights.append(np.zeros(fan_out, np.float32))
    xs = [rng.uniform(0, 1, (MLP_BATCH, MLP_SIZES[0])).astype(np.float32) for _ in range(batches)]
    ys = [
        np.eye(MLP_SIZES[-1], dtype=np.float32)[rng.integers(0, MLP_SIZES[-1], MLP_BATCH)]
        for _ in range(batches)
    ]
    return {"weights": weights, "xs": xs, "ys": ys}


# --- graph builders (dataflow and TF1 share them) -------------------------------------------
def build_ridge(tf: Any, data: dict) -> tuple[Any, Any, Any, Any]:
    X = tf.placeholder(tf.float32, [None, RIDGE_P], name="X")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    beta = tf.Variable(data["beta"], name="beta")
    cost = tf.reduce_mean(tf.square(y - tf.matmul(X, beta))) + RIDGE_LAM * tf.reduce_sum(
        tf.square(beta)
    )
    grad = tf.gradients(cost, [beta])[0]
    update = beta.assign_sub(RIDGE_LR * grad)
    return X, y, cost, update.op


def build_mlp(tf: Any, data: dict) -> tuple[Any, Any, Any, Any]:
    x = tf.placeholder(tf.float32, [None, MLP_SIZES[0]], name="x")
    y = tf.placeholder(tf.float32, [None, MLP_SIZES[-1]], name="y")
    h = x
    weights = data["weights"]
    for i in range(0, len(weights), 2):
        w = tf.Variable(weights[i], name=f"w{i // 2}")
        b = tf.Variable(weights[i + 1], name=f"b{i // 2}")
        h = tf.nn.bias_add(tf.matmul(h, w), b)
        if i + 2 < len(weights):
            h = tf.nn.relu(h)
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y, logits=h))
    train = tf.train.AdamOptimizer(*ADAM).minimize(loss)
    return x, y, loss, train


# --- contenders: each returns step(feed_x, feed_y) -> loss -----------------------------------
class GraphContender:
    """dataflow or TF1: one session, one graph; ``step`` runs [loss, train]."""

    def __init__(self, tf: Any, builder: Callable, data: dict, config: Any = None):
        self.graph = tf.Graph()
        with self.graph.as_default():
            self.x, self.y, self.loss, self.train = builder(tf, data)
            init = tf.global_variables_initializer()
        self.sess = tf.Session(graph=self.graph, config=config)
        self.sess.run(init)
        self.fetches = [self.loss, self.train]

    def step(self, x: np.ndarray, y: np.ndarray) -> float:
        return self.sess.run(self.fetches, {self.x: x, self.y: y})[0]


def numpy_ridge(data: dict) -> Callable:
    beta = data["beta"].copy()
    two_over_n = np.float32(2.0 / RIDGE_N)
    lam, lr = np.float32(RIDGE_LAM), np.float32(RIDGE_LR)

    def step(x: np.ndarray, y: np.ndarray) -> float:
        r = x @ beta
        r -= y
        cost = np.dot(r[:, 0], r[:, 0]) / np.float32(RIDGE_N) + lam * np.dot(beta[:, 0], beta[:, 0])
        grad = x.T @ r
        grad *= two_over_n
        grad += (2 * lam) * beta
        grad *= lr
        beta[...] -= grad
        return cost

    return step


def numpy_mlp(data: dict) -> Callable:
    params = [w.copy() for w in data["weights"]]
    ms = [np.zeros_like(p) for p in params]
    vs = [np.zeros_like(p) for p in params]
    lr, b1, b2, eps = (np.float32(v) for v in ADAM)
    powers = [np.float32(b1), np.float32(b2)]

    def step(x: np.ndarray, y: np.ndarray) -> float:
        w1, c1, w2, c2, w3, c3 = params
        h1 = x @ w1
        h1 += c1
        a1 = np.maximum(h1, 0)
        h2 = a1 @ w2
        h2 += c2
        a2 = np.maximum(h2, 0)
        logits = a2 @ w3
        logits += c3
        logits -= logits.max(axis=1, keepdims=True)
        e = np.exp(logits)
        s = e.sum(axis=1, keepdims=True)
        loss = np.mean(np.log(s)[:, 0] - (y * logits).sum(axis=1))
        d3 = e / s
        d3 -= y
        d3 /= np.float32(x.shape[0])
        da2 = d3 @ w3.T
        da2 *= h2 > 0
        da1 = da2 @ w2.T
        da1 *= h1 > 0
        grads = [x.T @ da1, da1.sum(0), a1.T @ da2, da2.sum(0), a2.T @ d3, d3.sum(0)]
        alpha = lr * np.sqrt(1 - powers[1]) / (1 - powers[0])
        for p, m, v, g in zip(params, ms, vs, grads, strict=True):
            m += (g - m) * (1 - b1)
            g *= g
            g -= v
            g *= 1 - b2
            v += g
            denom = np.sqrt(v)
            denom += eps
            step_ = m * alpha
            step_ /= denom
            p -= step_
        powers[0] *= b1
        powers[1] *= b2
        return loss

    return step


# --- measuring ----------------------------------------------------------------------------
def time_steps(
    step: Callable, feeds: list, number: int, clock: Callable[[], float] = time.perf_counter
) -> float:
    start = clock()
    for i in range(number):
        x, y = feeds[i % len(feeds)]
        step(x, y)
    return (clock() - start) / number


def make_contenders(case: str, data: dict, threads: int) -> dict[str, Callable]:
    import dataflow as tf

    builder = build_ridge if case == "ridge" else build_mlp
    hand = numpy_ridge(data) if case == "ridge" else numpy_mlp(data)
    out = {"numpy": hand, "dataflow": GraphContender(tf, builder, data).step}
    try:
        import tensorflow.compat.v1 as tf1
    except ImportError:
        return out
    tf1.disable_eager_execution()
    config = tf1.ConfigProto(
        intra_op_parallelism_threads=threads, inter_op_parallelism_threads=threads
    )
    out["tf1"] = GraphContender(tf1, builder, data, config).step
    return out


def feeds_for(case: str, data: dict) -> list:
    if case == "ridge":
        return [(data["x"], data["y"])]
    return list(zip(data["xs"], data["ys"], strict=True))


def check_same_numbers(case: str, data: dict, threads: int) -> None:
    """Fresh contenders, a few steps each: the losses agree."""
    feeds = feeds_for(case, data)
    curves = {
        name: [float(step(*feeds[i % len(feeds)])) for i in range(5)]
        for name, step in make_contenders(case, data, threads).items()
    }
    for name, curve in curves.items():
        np.testing.assert_allclose(curve, curves["numpy"], rtol=2e-4, err_msg=name)


def steady_case(
    case: str, data: dict, threads: int, rounds: int, number: int
) -> dict[str, dict[str, list[float]]]:
    """Per clock and contender, the mean step time of each round (rounds interleaved).

    Clocks: ``wall`` (``perf_counter``) and ``cpu``, the CPU time of the calling thread
    (``thread_time``): robust to other processes on the machine, and complete for numpy
    and dataflow, which compute on the calling thread with one BLAS thread; TF1 computes
    on its own threads, so it gets no ``cpu`` figure.
    """
    contenders = make_contenders(case, data, threads)
    feeds = feeds_for(case, data)
    for step in contenders.values():
        time_steps(step, feeds, 3)  # warm up (and compile)
    samples: dict[str, dict[str, list[float]]] = {"wall": {}, "cpu": {}}
    for _ in range(rounds):
        for name, step in contenders.items():
            samples["wall"].setdefault(name, []).append(time_steps(step, feeds, number))
            if name != "tf1" or threads == 0:
                samples["cpu"].setdefault(name, []).append(
                    time_steps(step, feeds, number, time.thread_time)
                )
    return samples


def plan_cache_case(case: str, data: dict, repeats: int) -> dict[str, float]:
    """First run of a new session (prune, place, partition, generate code, then run)
    against a steady run; median over fresh sessions."""
    import dataflow as tf

    builder = build_ridge if case == "ridge" else build_mlp
    feeds = feeds_for(case, data)
    firsts, steadies = [], []
    for _ in range(repeats):
        contender = GraphContender(tf, builder, data)
        start = time.perf_counter()
        contender.step(*feeds[0])
        firsts.append(time.perf_counter() - start)
        steadies.append(time_steps(contender.step, feeds, 20))
        contender.sess.close()
    return {"first": statistics.median(firsts), "steady": statistics.median(steadies)}


def profile_case(case: str, data: dict, steps: int, top: int) -> None:
    import dataflow as tf

    builder = build_ridge if case == "ridge" else build_mlp
    contender = GraphContender(tf, builder, data)
    feeds = feeds_for(case, data)
    time_steps(contender.step, feeds, 3)
    profiler = cProfile.Profile()
    profiler.enable()
    time_steps(contender.step, feeds, steps)
    profiler.disable()
    text = io.StringIO()
    pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(top)
    print(f"\n--- cProfile of {steps} dataflow steps, {case} (tottime) ---")
    print("\n".join(text.getvalue().splitlines()[4:]))
    # Per op type, from traced runs (RunMetadata FULL_TRACE): the median over 20 steps
    # of each type's summed kernel time in a step.
    per_step: list[dict[str, float]] = []
    for i in range(20):
        meta = tf.RunMetadata()
        x, y = feeds[i % len(feeds)]
        contender.sess.run(
            contender.fetches,
            {contender.x: x, contender.y: y},
            options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
            run_metadata=meta,
        )
        times: dict[str, float] = {}
        for event in tf.viz.step_events(meta):
            times[event["type"]] = (
                times.get(event["type"], 0.0) + event["end_us"] - event["start_us"]
            )
        per_step.append(times)
    calls = len(tf.viz.step_events(meta))
    per_type = {k: statistics.median(t.get(k, 0.0) for t in per_step) for k in per_step[0]}
    total = sum(per_type.values())
    print(
        f"--- kernel time per step by op type, {case}: {calls} kernel calls, "
        f"{total:.0f} us in kernels (medians) ---"
    )
    for op_type, us in sorted(per_type.items(), key=lambda kv: -kv[1])[:14]:
        print(f"  {op_type:<34}{us:9.1f} us {100 * us / total:5.1f}%")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    rounds, number = (5, 20) if args.quick else (15, 50)
    datasets = {"ridge": ridge_data(), "mlp": mlp_data()}
    with threadpool_limits(limits=args.threads):
        for case, data in datasets.items():
            check_same_numbers(case, data, args.threads)
        print(f"BLAS threads: {args.threads}; {rounds} interleaved rounds x {number} steps")
        labels = {
            "ridge": "ridge [10000,100] f32, cost+update",
            "mlp": "MLP 784-256-256-10 b128 Adam",
        }
        results = {
            case: steady_case(case, data, args.threads, rounds, number)
            for case, data in datasets.items()
        }
        # Wall-clock medians are the headline; the best round shows the cost without
        # other processes in the way, and the calling thread's CPU time is what the
        # step costs this process (on a shared machine the three differ).
        tables = (
            ("wall median", "wall", statistics.median),
            ("wall best round", "wall", min),
            ("cpu median (calling thread)", "cpu", statistics.median),
        )
        for title, clock, stat in tables:
            print(
                f"\n{title:<34}{'dataflow us':>12}{'numpy us':>10}{'tf1 us':>10}"
                f"{'df/numpy':>10}{'df/tf1':>8}"
            )
            for case, samples in results.items():
                t = {k: stat(v) for k, v in samples[clock].items()}
                tf1 = t.get("tf1", float("nan"))
                print(
                    f"{labels[case]:<34}{t['dataflow'] * 1e6:12.1f}"
                    f"{t['numpy'] * 1e6:10.1f}{tf1 * 1e6:10.1f}"
                    f"{t['dataflow'] / t['numpy']:10.2f}{t['dataflow'] / tf1:8.2f}"
                )
        print(f"\n{'plan cache (dataflow)':<34}{'first ms':>12}{'steady ms':>10}{'saved ms':>10}")
        for case, data in datasets.items():
            c = plan_cache_case(case, data, 3 if args.quick else 7)
            print(
                f"{labels[case]:<34}{c['first'] * 1e3:12.2f}{c['steady'] * 1e3:10.3f}"
                f"{(c['first'] - c['steady']) * 1e3:10.2f}"
            )
        if args.profile:
            for case, data in datasets.items():
                profile_case(case, data, 200, 25)


if __name__ == "__main__":
    main()
