"""Memory creep of the per-step task-graph path: what the scheduler and the workers keep
per step, dataflow against plain Dask in the same run.

Run: ``python benchmarks/bench_memory.py`` (``--steps 3000`` by default; ``--quick`` for
1000).

One ``dataflow.LocalCluster(ps=1, worker=2)`` (worker processes); two phases, each
after a warm-up of ``--warmup`` steps (Dask's bounded logs fill during it: the
transition log keeps 1,000 entries, the computations deque 100):

* **plain Dask**: a hand-built ridge step, three tasks with keys unique per step
  (``("read", i)``, ``("grad", i)``, ``("apply", i)``), pinned by the same
  ``dataflow-<worker>`` resources, submitted with ``client.get``: what
  ``bench_distributed.py`` times;
* **dataflow**: the same ridge step as a graph (``beta`` on the ps, the gradient on
  worker 0), on the task-graph path (``ConfigProto(resident_steps=False)``: one task
  per stage per step; ``--path resident`` for the default resident path).

After every ``--every`` steps, each process is measured after ``gc.collect()`` and
``malloc_trim``: its resident memory, its number of live Python objects and, on the
scheduler, the sizes of the structures that can grow with steps (task groups, task
prefixes, spans and the task groups they hold, computations, events, the transition
log, Dask's ``key_split`` cache; on the workers their task and log sizes and that
cache). The figure is the slope, MB (and objects) per 1,000 steps, fitted over the
phase. With ``--growers`` the types whose live counts grew the most are listed.
Nothing is asserted.
"""

from __future__ import annotations

import argparse
import collections
import ctypes
import gc
import itertools
import os
import sys
import time
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_distributed import _apply, _data, _read_beta, _ridge_grad, ridge

MB = 1 << 20


def _trimmed_rss() -> int:
    import psutil

    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
    return psutil.Process().memory_info().rss


def _type_counts() -> collections.Counter:
    return collections.Counter(type(o).__name__ for o in gc.get_objects())


def _key_split_cache() -> int:
    """Entries in Dask's ``key_split`` cache (one per key name this process has split)."""
    from dask.utils import key_split

    return key_split.cache_info().currsize


def scheduler_probe(dask_scheduler: Any, growers: bool) -> dict:
    s = dask_scheduler
    rss = _trimmed_rss()
    spans = s.extensions.get("spans")
    out = {
        "rss": rss,
        "objects": len(gc.get_objects()),
        "tasks": len(s.tasks),
        "task_groups": len(s.task_groups),
        "task_prefixes": len(s.task_prefixes),
        "spans": len(spans.spans) if spans else 0,
        "span_groups": sum(len(x.groups) for x in spans.spans.values()) if spans else 0,
        "computations": len(s.computations),
        "topics": len(s._broker._topics),
        "events": sum(len(t.events) for t in s._broker._topics.values()),
        "transition_log": len(s.transition_log),
        "key_split": _key_split_cache(),
    }
    if growers:
        counts = _type_counts()
        out["types"] = dict(counts)
    return out


def worker_probe(dask_worker: Any, growers: bool) -> dict:
    w = dask_worker
    rss = _trimmed_rss()
    out = {
        "rss": rss,
        "objects": len(gc.get_objects()),
        "tasks": len(w.state.tasks),
        "log": len(w.state.log),
        "stimulus_log": len(w.state.stimulus_log),
        "key_split": _key_split_cache(),
    }
    if growers:
        out["types"] = dict(_type_counts())
    return out


def measure(client: Any, growers: bool) -> dict:
    sched = client.run_on_scheduler(scheduler_probe, growers=growers)
    names = {a: str(w["name"]) for a, w in client.scheduler_info(n_workers=-1)["workers"].items()}
    workers = client.run(worker_probe, growers=growers)
    return {"scheduler": sched, **{names[a]: v for a, v in workers.items()}}


def plain_step_fn(client: Any) -> Any:
    from dask._task_spec import Task, TaskRef
    from dask.highlevelgraph import HighLevelGraph, MaterializedLayer

    pinned = {name: {"resources": {f"dataflow-{name}": 1}} for name in ("ps-0", "worker-0")}
    count = itertools.count()
    xv, yv = _data()

    def step() -> None:
        i = next(count)
        tasks = [
            (("read", i), "ps-0", _read_beta),
            (("grad", i), "worker-0", _ridge_grad, TaskRef(("read", i)), xv, yv),
            (("apply", i), "ps-0", _apply, TaskRef(("grad", i))),
        ]
        layers, deps = {}, {}
        for key, worker, func, *args in tasks:
            name = f"{key[0]}-{key[1]}"
            layers[name] = MaterializedLayer(
                {key: Task(key, func, *args)}, annotations=pinned[worker]
            )
            deps[name] = {f"{a.key[0]}-{a.key[1]}" for a in args if isinstance(a, TaskRef)}
        client.get(HighLevelGraph(layers, deps), [("grad", i), ("apply", i)])

    return step


def dataflow_step_fn(tf: Any, cluster: Any, resident: bool = False) -> tuple[Any, Any]:
    beta, x, y, cost, update = ridge(tf)
    sess = tf.Session(cluster, config=tf.ConfigProto(resident_steps=resident))
    sess.run(beta.initializer)
    xv, yv = _data()
    feed = {x: xv, y: yv}

    def step() -> None:
        sess.run([cost, update], feed)

    return step, sess


def slope(points: list[tuple[int, float]]) -> float:
    """Least-squares growth per 1,000 steps."""
    steps = np.array([p[0] for p in points], float)
    values = np.array([p[1] for p in points], float)
    return float(np.polyfit(steps, values, 1)[0] * 1000)


def run_phase(
    name: str, step: Any, client: Any, steps: int, every: int, warmup: int, growers: bool
) -> dict:
    for _ in range(warmup):
        step()
    samples = [(0, measure(client, growers))]
    start = time.perf_counter()
    for i in range(1, steps + 1):
        step()
        if i % every == 0:
            samples.append((i, measure(client, growers)))
    elapsed = time.perf_counter() - start
    print(
        f"\n== {name}: {steps} steps after {warmup} warm-up steps "
        f"({1000 * elapsed / steps:.1f} ms/step)"
    )
    procs = [p for p in samples[0][1]]
    print(f"{'process':<10} {'MB/1000 steps':>14} {'objects/1000 steps':>19}")
    result = {}
    for proc in procs:
        rss = slope([(i, m[proc]["rss"] / MB) for i, m in samples])
        objects = slope([(i, m[proc]["objects"]) for i, m in samples])
        result[proc] = (rss, objects)
        print(f"{proc:<10} {rss:>14.2f} {objects:>19.0f}")
    print(
        "MB at each sample: "
        + "; ".join(
            f"{i}: " + " ".join(f"{p} {m[p]['rss'] / MB:.1f}" for p in procs) for i, m in samples
        )
    )
    first, last = samples[0][1]["scheduler"], samples[-1][1]["scheduler"]
    sizes = {k: (first[k], last[k]) for k in first if k not in ("rss", "objects", "types")}
    print(
        "scheduler structures (start -> end): "
        + ", ".join(f"{k} {a} -> {b}" for k, (a, b) in sizes.items())
    )
    for proc in procs[1:]:
        first, last = samples[0][1][proc], samples[-1][1][proc]
        print(
            f"{proc} structures (start -> end): "
            + ", ".join(
                f"{k} {first[k]} -> {last[k]}"
                for k in first
                if k not in ("rss", "objects", "types")
            )
        )
    if growers:
        for proc in procs:
            before = collections.Counter(samples[0][1][proc]["types"])
            after = collections.Counter(samples[-1][1][proc]["types"])
            after.subtract(before)
            top = [(t, n) for t, n in after.most_common(8) if n > 0]
            print(f"  {proc} grew: " + ", ".join(f"{t} +{n}" for t, n in top))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--every", type=int, default=250)
    parser.add_argument("--warmup", type=int, default=1000)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--growers", action="store_true", help="list growing object types")
    parser.add_argument("--only", choices=["plain", "dataflow"], default=None)
    parser.add_argument(
        "--path", choices=["graph", "resident"], default="graph", help="dataflow's step path"
    )
    args = parser.parse_args()
    if args.quick:
        args.steps, args.warmup = 1000, 300

    from threadpoolctl import threadpool_limits

    import dataflow as tf

    with threadpool_limits(1), tf.LocalCluster(ps=1, worker=2, dashboard_address=None) as cluster:
        client = cluster.client
        if args.only in (None, "plain"):
            run_phase(
                "plain Dask (3 pinned tasks per step)",
                plain_step_fn(client),
                client,
                args.steps,
                args.every,
                args.warmup,
                args.growers,
            )
        if args.only in (None, "dataflow"):
            step, sess = dataflow_step_fn(tf, cluster, args.path == "resident")
            try:
                run_phase(
                    f"dataflow, {args.path} path (ridge step, 1 ps + 1 worker stage)",
                    step,
                    client,
                    args.steps,
                    args.every,
                    args.warmup,
                    args.growers,
                )
            finally:
                sess.close()


if __name__ == "__main__":
    main()
