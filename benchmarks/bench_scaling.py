"""How the cost of a distributed step grows with the number of workers: asynchronous and
synchronous data parallelism on 1 ps + 1, 2, 4 and 8 workers, with each step's time
split into client, network and ps and worker compute, beside TF1's distributed runtime.

Run: ``python benchmarks/bench_scaling.py`` (``--quick`` for fewer steps; about two
minutes in full on a 2-core machine). Prints markdown tables; nothing is asserted.

Models (``MODELS``), each step fed one batch per worker from the client:

* **ridge**: bench_distributed.py's ridge step (n=100, p=10), ``beta`` on the ps;
* **mlp**: a 64-256-1 ReLU network, batch 256, its 16,896 weights on the ps, so that
  the workers' compute and the bytes moved are visible.

Modes:

* **async**: between-graph replication, one client thread per worker, each with its
  own graph and session (its own ``distributed.Client``) running steps on the shared ps
  variables: a step reads the weights from the ps, computes the gradient on its worker
  and applies it on the ps. Reported: steps/s of all clients together.
* **sync**: in-graph replication, one client and one graph with a tower per worker;
  the gradients are averaged on the ps and applied once. A step uses N batches.

Clusters: ``dataflow.LocalCluster(ps=1, worker=N)`` with worker processes up to
``--max-processes`` workers (default 4) and threads of this process beyond; TF1:
``tf.distribute.Server``s of ``/job:ps`` and 8 ``/job:worker`` tasks, all in this
process (``tensorflow.compat.v1``, one intra-op thread each).

The split of a dataflow step (per step, in ms):

* **client**: wall time of ``Session.run`` in the calling thread less the time it spent
  blocked waiting for the workers' replies (``dask.stream_client._readable``, wrapped by this
  script, is where the client waits), i.e. feeding, lookup, serializing, reading
  replies; with several client threads it includes waiting for the GIL;
* **ps** and **worker**: the stages' run times the workers record
  (``step_metrics.RECORDER``, read with ``client.run`` before and after), on the step's
  critical path: for async every stage (ps read, worker gradient, ps update run one
  after the other); for sync the ps stages plus the slowest worker's stages;
* **network**: the rest of the wall time: messages on loopback, (de)serialization and
  dispatch on the workers, and waiting for a CPU or for the ps.

With worker processes three more columns: **ps CPU** and **worker CPU**, the CPU time
(``time.process_time``) the ps process and the worker processes spent per step (as for
the stages: per step for async, the busiest worker for sync), which counts their message
handling as well as their stages, and **ps busy**, the ps process's CPU over the wall
time (100% is one core). "batches/s vs 1 worker" counts a sync step as N batches.
"""

from __future__ import annotations

import argparse
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits
from timing import free_ports

WORKERS = (1, 2, 4, 8)
LR = 0.01
# model -> (features, hidden units or 0 for a linear model, batch rows)
MODELS = {"ridge": (10, 0, 100), "mlp": (64, 256, 256)}


# --- the models, written once for both libraries ---------------------------------------
def _params(tf: Any, model: str, tag: str) -> list[Any]:
    features, hidden, _ = MODELS[model]
    rng = np.random.default_rng(0)
    if not hidden:
        return [tf.Variable(np.zeros((features, 1), np.float32), name=f"{tag}_beta")]
    w1 = (rng.standard_normal((features, hidden)) / np.sqrt(features)).astype(np.float32)
    w2 = (rng.standard_normal((hidden, 1)) / np.sqrt(hidden)).astype(np.float32)
    return [
        tf.Variable(w1, name=f"{tag}_w1"),
        tf.Variable(np.zeros(hidden, np.float32), name=f"{tag}_b1"),
        tf.Variable(w2, name=f"{tag}_w2"),
    ]


def _loss(tf: Any, model: str, params: list[Any], x: Any, y: Any) -> Any:
    if len(params) == 1:
        return tf.reduce_mean(tf.square(y - tf.matmul(x, params[0])))
    w1, b1, w2 = params
    hidden = tf.nn.relu(tf.matmul(x, w1) + b1)
    return tf.reduce_mean(tf.square(y - tf.matmul(hidden, w2)))


def build(tf: Any, model: str, towers: list[int], tag: str) -> tuple[Any, list, Any]:
    """Variables on the ps, one tower per worker task in ``towers`` (its loss and
    gradients on that worker), the gradients averaged and applied on the ps.

    Returns (fetches, [(x, y) placeholders per tower], initializer)."""
    features = MODELS[model][0]
    with tf.device("/job:ps/task:0"):
        params = _params(tf, model, tag)
    losses, grads, inputs = [], [], []
    for task in towers:
        with tf.device(f"/job:worker/task:{task}"):
            x = tf.placeholder(tf.float32, [None, features], name=f"x{task}")
            y = tf.placeholder(tf.float32, [None, 1], name=f"y{task}")
            loss = _loss(tf, model, params, x, y)
            grads.append(tf.gradients(loss, params))
        losses.append(loss)
        inputs.append((x, y))
    with tf.device("/job:ps/task:0"):
        if len(towers) == 1:
            mean = grads[0]
        else:
            mean = [tf.add_n(list(g)) * (1.0 / len(towers)) for g in zip(*grads, strict=True)]
        update = tf.group(*[p.assign_sub(LR * g) for p, g in zip(params, mean, strict=True)])
    return [losses, update], inputs, tf.global_variables_initializer()


def batch(model: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
    features, _, rows = MODELS[model]
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, features)).astype(np.float32)
    return x, (x @ rng.standard_normal((features, 1))).astype(np.float32)


def make_step(tf: Any, session: Callable, model: str, towers: list[int], tag: str, init: bool):
    """A no-argument step of a new graph with ``towers`` on ``session(graph, tower)``."""
    graph = tf.Graph()
    with graph.as_default():
        fetches, inputs, init_op = build(tf, model, towers, tag)
    sess = session(graph, towers[0])
    if init:
        sess.run(init_op)
    feed = {}
    for task, (x, y) in zip(towers, inputs, strict=True):
        feed[x], feed[y] = batch(model, task)
    return lambda: sess.run(fetches, feed), sess


# --- where the client waits ---------------------------------------------------------------
_blocked = threading.local()


def _wrap_readable() -> None:
    """Counts, per thread, the time a step spends blocked on the workers' replies."""
    from dataflow.runtime.dask import stream_client as step_stream

    inner = step_stream._readable

    def readable(socks: list, wait: float) -> list:
        start = time.perf_counter()
        try:
            return inner(socks, wait)
        finally:
            _blocked.seconds = getattr(_blocked, "seconds", 0.0) + time.perf_counter() - start

    step_stream._readable = readable


def _reading(dask_worker: Any) -> tuple:
    """On a worker: (name, pid, process CPU seconds, {(plan key, stage): (device,
    total stage seconds)} from the recorder)."""
    from dataflow.runtime.dask.step_metrics import RECORDER

    stages = {
        (plan["key"], s["index"]): (s["device"], s["mean_s"] * s["runs"])
        for plan in RECORDER.report()
        for s in plan["stages"]
    }
    return str(dask_worker.name), os.getpid(), time.process_time(), stages


def read_workers(client: Any) -> tuple[dict, dict]:
    """Every worker's stage totals (threads of one process report the same ones) and
    worker name -> (pid, process CPU seconds)."""
    stages: dict = {}
    cpu: dict = {}
    for name, pid, seconds, totals in client.run(_reading).values():
        stages.update(totals)
        cpu[name] = (pid, seconds)
    return stages, cpu


def per_device(before: dict, after: dict) -> dict[str, float]:
    """Stage seconds per task (``/job:J/task:T``) between two readings."""
    out: dict[str, float] = {}
    for key, (device, total) in after.items():
        spent = total - before.get(key, (device, 0.0))[1]
        task = device.split("/device:")[0].replace("/replica:0", "")
        out[task] = out.get(task, 0.0) + max(spent, 0.0)
    return out


# --- measuring ------------------------------------------------------------------------
@dataclass
class Result:
    steps_per_s: float
    step_ms: float = float("nan")  # one step's latency as its client saw it
    client_ms: float = float("nan")
    ps_ms: float = float("nan")
    worker_ms: float = float("nan")
    ps_cpu_ms: float = float("nan")  # the ps process's CPU per step (processes only)
    worker_cpu_ms: float = float("nan")  # the workers' processes' CPU, as worker_ms
    ps_busy: float = float("nan")  # the ps process's CPU over the wall time
    processes: bool = True  # the cluster's workers were processes (else threads)

    @property
    def network_ms(self) -> float:
        return self.step_ms - self.client_ms - self.ps_ms - self.worker_ms


def concurrently(steps: list[Callable], count: int) -> tuple[float, float]:
    """Runs each step function ``count`` times on a thread of its own, all at once.

    Returns (wall seconds, mean client seconds per step: wall less blocked time)."""
    for step in steps:
        for _ in range(3):  # installs plans, opens connections
            step()
    barrier = threading.Barrier(len(steps) + 1)
    client = [0.0] * len(steps)

    def loop(i: int) -> None:
        barrier.wait()
        _blocked.seconds = 0.0
        start = time.perf_counter()
        for _ in range(count):
            steps[i]()
        client[i] = time.perf_counter() - start - _blocked.seconds

    threads = [threading.Thread(target=loop, args=(i,)) for i in range(len(steps))]
    for t in threads:
        t.start()
    barrier.wait()
    start = time.perf_counter()
    for t in threads:
        t.join()
    return time.perf_counter() - start, sum(client) / (count * len(steps))


def measure(
    mode: str, n: int, count: int, session: Callable, tf: Any, model: str, tag: str, client=None
) -> Result:
    """One mode at ``n`` workers; ``client`` (dataflow) also gives the split."""
    if mode == "async":
        made = [make_step(tf, session, model, [i], tag, init=i == 0) for i in range(n)]
        count = max(count // n, 10)
    else:
        made = [make_step(tf, session, model, list(range(n)), tag, init=True)]
    steps = [m[0] for m in made]
    for step in steps:
        step()
    before = read_workers(client) if client is not None else None
    wall, client_s = concurrently(steps, count)
    total = count * len(steps)
    result = Result(total / wall)
    if client is not None:
        after = read_workers(client)
        spent = per_device(before[0], after[0])
        ps = sum(s for task, s in spent.items() if task.startswith("/job:ps"))
        workers = [s for task, s in spent.items() if task.startswith("/job:worker")]
        # async: each step runs on one worker; sync: the towers run side by side.
        worker = sum(workers) / total if mode == "async" else max(workers, default=0) / count
        result.step_ms = wall / count * 1e3
        result.client_ms = client_s * 1e3
        result.ps_ms = ps / total * 1e3
        result.worker_ms = worker * 1e3
        cpu = {name: after[1][name][1] - before[1][name][1] for name in after[1]}
        if len({pid for pid, _ in after[1].values()}) == len(after[1]):  # processes
            ps_cpu = sum(c for name, c in cpu.items() if name.startswith("ps-"))
            worker_cpu = [c for name, c in cpu.items() if name.startswith("worker-")]
            result.ps_cpu_ms = ps_cpu / total * 1e3
            result.ps_busy = ps_cpu / wall
            result.worker_cpu_ms = (
                sum(worker_cpu) / total if mode == "async" else max(worker_cpu) / count
            ) * 1e3
    for _, sess in made:
        sess.close()
    return result


def tf1_results(count: int, workers: tuple[int, ...]) -> dict:
    """TF1's steps/s for every (model, mode, n), on in-process servers."""
    import tensorflow.compat.v1 as tf1

    tf1.disable_eager_execution()
    ports = free_ports(1 + max(workers))
    spec = tf1.train.ClusterSpec(
        {"ps": [f"localhost:{ports[0]}"], "worker": [f"localhost:{p}" for p in ports[1:]]}
    )
    config = tf1.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=2)
    servers = [tf1.distribute.Server(spec, "ps", 0, config=config)] + [
        tf1.distribute.Server(spec, "worker", i, config=config) for i in range(max(workers))
    ]

    def session(graph: Any, task: int) -> Any:
        return tf1.Session(servers[1 + task].target, graph=graph)

    out = {}
    for model in MODELS:
        for mode in ("async", "sync"):
            for n in workers:
                tag = f"tf1_{model}_{mode}_{n}"
                out[model, mode, n] = measure(mode, n, count, session, tf1, model, tag)
    return out


def dataflow_results(count: int, workers: tuple[int, ...], max_processes: int) -> dict:
    import distributed

    import dataflow as tf

    _wrap_readable()
    out = {}
    for n in workers:
        processes = n <= max_processes
        print(f"  dataflow: 1 ps + {n} workers ({'processes' if processes else 'threads'})")
        cluster = tf.LocalCluster(ps=1, worker=n, processes=processes, dashboard_address=None)
        clients: list = []

        def session(graph: Any, task: int, cluster: Any = cluster, clients: list = clients) -> Any:
            own = distributed.Client(cluster.target, set_as_default=False)
            clients.append(own)
            return tf.Session(own, graph=graph)

        try:
            for model in MODELS:
                for mode in ("async", "sync"):
                    tag = f"df_{model}_{mode}"
                    result = measure(mode, n, count, session, tf, model, tag, cluster.client)
                    result.processes = processes
                    out[model, mode, n] = result
        finally:
            for c in clients:
                c.close()
            cluster.close()
    return out


def table(model: str, mode: str, df: dict, tf1: dict, workers: tuple[int, ...]) -> list[str]:
    batches = 1 if mode == "async" else None
    base = df[model, mode, workers[0]]
    lines = [
        "| workers | dataflow steps/s | batches/s vs 1 worker | TF1 steps/s | dataflow / TF1 "
        "| step ms | client | network | ps | worker | ps CPU | worker CPU | ps busy |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for n in workers:
        r, t = df[model, mode, n], tf1.get((model, mode, n))
        per = batches or n
        scale = r.steps_per_s * per / (base.steps_per_s * (batches or workers[0]))
        kind = "processes" if r.processes else "threads"
        lines.append(
            f"| {n} ({kind}) | {r.steps_per_s:.0f} | {scale:.2f} | "
            + (f"{t.steps_per_s:.0f} | {r.steps_per_s / t.steps_per_s:.2f}" if t else "- | -")
            + f" | {r.step_ms:.1f} | {r.client_ms:.1f} | {r.network_ms:.1f} | {r.ps_ms:.2f} "
            f"| {r.worker_ms:.2f} | "
            + (
                f"{r.ps_cpu_ms:.1f} | {r.worker_cpu_ms:.1f} | {r.ps_busy:.0%} |"
                if r.processes
                else "- | - | - |"
            )
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer steps")
    parser.add_argument("--max-processes", type=int, default=4, help="threads beyond")
    parser.add_argument("--no-tf1", action="store_true")
    parser.add_argument("--workers", type=int, nargs="+", default=list(WORKERS))
    args = parser.parse_args()
    workers = tuple(args.workers)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # TF1's servers log every session
    threadpool_limits(1)
    count = 60 if args.quick else 240
    started = time.perf_counter()
    print("TF1 (in-process servers) ...")
    tf1 = {} if args.no_tf1 else tf1_results(count, workers)
    print("dataflow (resident steps, the default) ...")
    df = dataflow_results(count, workers, args.max_processes)
    for model in MODELS:
        features, hidden, rows = MODELS[model]
        for mode in ("async", "sync"):
            print()
            shape = f"{features}-{hidden}-1" if hidden else f"p={features}"
            print(f"{model} ({shape}, batch {rows}), {mode}; per-step split in ms")
            print("\n".join(table(model, mode, df, tf1, workers)))
    print(f"\n({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
