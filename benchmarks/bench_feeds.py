"""Feeds and fetches by size on the default distributed path (issue 34): dataflow on a
``LocalCluster(ps=1, worker=1)`` against TF1's in-process gRPC servers and plain Dask,
in one run on loopback.

Run: ``python benchmarks/bench_feeds.py`` (``--quick`` for fewer repeats, ``--plot
PATH`` to draw the curve with matplotlib, ``--sizes 100,1000`` to choose rows N,
``--memory-only`` to measure memory alone).

The step is issue 34's ridge step with ``beta [100, 1]`` on the ps: X ``[N, 100]``
float32, N = 100, 1,000, 10,000 and 100,000 (40 KB to 40 MB a step).

* **feed**: X and y are fed from the client each step (``sess.run([cost, update],
  {x: X, y: y})``), the gradient computed on the worker;
* **fetch**: X lives on the worker (a variable filled once), the step computes the
  same update and fetches ``X * 2`` back (``sess.run([cost, update, x2])``).

Contenders, interleaved round by round: **TF1** (``tensorflow.compat.v1``: 1 ps + 2
workers as in-process ``tf.distribute.Server``s, the session on worker 0; TF1's servers
have no TLS), **plain Dask** (``client.submit`` of the gradient pinned to the worker,
with X as its argument, or returning X * 2 from the worker) and **dataflow** on a TCP
and on a TLS cluster (``Security.temporary()``), the default ``tf.Session(target)``.
TF1's master and worker 0 live in this process and TF1 calls them directly (its
``LocalMaster`` and the local worker in its worker cache), so X never crosses a socket
in TF1's step, only ``beta`` and its gradient do; dataflow's workers are processes.

Each dataflow cluster is started, timed and closed in a pass of its own, interleaved
with TF1 (the TCP pass with plain Dask and the floor too), and its ratio is taken
against the TF1 steps of its own pass: a user runs one cluster, and each idle
``LocalCluster`` spends about 8% of a core on Dask's ticks and heartbeats, which a
cluster timed beside two idle others paid for them. ``--together`` keeps the three alive
and interleaved at once, as this benchmark did before.

On one host dataflow moves its step streams to the workers' Unix sockets
(``runtime/dask/local_sockets.py``) and parts of 1 MB or more through shared memory
(``runtime/dask/shared_memory/``: fetched parts of 8 MB or more the client reads from
the worker's memory, or maps where an elementwise op computed them into a slab, from
256 KiB, as the fetch step's ``X * 2``); **dataflow socket** is a third TCP cluster whose
workers were started with ``DATAFLOW_SHM=0`` and ``DATAFLOW_UNIX_SOCKETS=0``, so its
steps stay on the TCP connections, as across hosts.

A further column is the floor: the same bytes sent over a loopback TCP socket to a thread of
this process that receives them into new memory (``np.empty``) and answers one byte.

Then memory: peak traced allocations (``tracemalloc``, which sees numpy's and Python's
buffers) on the client and on the worker over one 40 MB feed step and one 40 MB fetch
step, as a multiple of the 40 MB, and what is still allocated after the step. BLAS is
pinned to one thread in this process. Reported: medians and ratios; nothing asserted.
"""

from __future__ import annotations

import argparse
import gc
import os
import queue
import socket
import threading
import time
import tracemalloc
import warnings
from collections.abc import Callable

import numpy as np
from bench_distributed import TF1Cluster, interleaved  # (this directory is on sys.path)
from threadpoolctl import threadpool_limits
from timing import cpu_name

P, LR = 100, 1e-4
SIZES = (100, 1_000, 10_000, 100_000)
# Seconds of rest before each contender's round: plain Dask's task on the TCP cluster
# leaves its scheduler and worker busy with bookkeeping for a while after it returns.
SETTLE = 0.1


def _data(n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(n)
    x = rng.standard_normal((n, P)).astype(np.float32)
    y = (x @ rng.standard_normal((P, 1))).astype(np.float32)
    return x, y


def feed_step(tf):
    """Issue 34's ridge step: beta on the ps, X and y fed, the gradient on the worker."""
    setter = tf.train.replica_device_setter(ps_tasks=1, worker_device="/job:worker/task:0")
    with tf.device(setter):
        beta = tf.Variable(np.zeros((P, 1), np.float32), name="beta")
        x = tf.placeholder(tf.float32, [None, P], name="x")
        y = tf.placeholder(tf.float32, [None, 1], name="y")
        cost = tf.reduce_mean(tf.square(y - tf.matmul(x, beta)))
        grad = tf.gradients(cost, [beta])[0]
    with tf.device("/job:ps/task:0"):
        update = beta.assign_sub(LR * grad)
    return x, y, cost, update


def fetch_step(tf, n: int):
    """The same step on data that lives on the worker; it fetches ``X * 2`` back."""
    setter = tf.train.replica_device_setter(ps_tasks=1, worker_device="/job:worker/task:0")
    with tf.device(setter):
        beta = tf.Variable(np.zeros((P, 1), np.float32), name="beta")
    with tf.device("/job:worker/task:0"):
        data = tf.Variable(tf.random_normal([n, P], seed=1), trainable=False, name="data")
        cost = tf.reduce_mean(tf.square(1.0 - tf.matmul(data, beta)))
        grad = tf.gradients(cost, [beta])[0]
        doubled = data * 2.0
    with tf.device("/job:ps/task:0"):
        update = beta.assign_sub(LR * grad)
    return cost, update, doubled


def session_runner(tf, sess, n: int, kind: str) -> Callable[[], object]:
    """``sess`` over a new graph of ``kind`` (feed or fetch), initialized; one step."""
    graph = tf.Graph()
    with graph.as_default():
        if kind == "feed":
            x, y, cost, update = feed_step(tf)
        else:
            fetches = fetch_step(tf, n)
        init = tf.global_variables_initializer()
    session = sess(graph)
    session.run(init)
    if kind == "feed":
        xv, yv = _data(n)
        return lambda: session.run([cost, update], {x: xv, y: yv})
    return lambda: session.run(list(fetches))


# Plain Dask: what the workers run (this file runs as __main__: they travel by value).
def _grad(x, y):
    from distributed import get_worker

    worker = get_worker()
    beta = getattr(worker, "bench_beta", None)
    if beta is None:
        beta = np.zeros((P, 1), np.float32)
    residual = x @ beta - y
    worker.bench_beta = beta - LR * (2.0 / len(x)) * (x.T @ residual)
    return np.float32(np.mean(residual**2))


def _doubled(n):
    from distributed import get_worker

    worker = get_worker()
    data = getattr(worker, "bench_data", None)
    if data is None or len(data) != n:
        data = worker.bench_data = _data(n)[0]
    _grad(data, np.ones((n, 1), np.float32))
    return data * 2.0


def dask_runner(client, worker: str, n: int, kind: str) -> Callable[[], object]:
    if kind == "feed":
        xv, yv = _data(n)
        return lambda: client.submit(_grad, xv, yv, workers=[worker], pure=False).result()
    return lambda: client.submit(_doubled, n, workers=[worker], pure=False).result()


class Loopback:
    """The floor: X's bytes sent with ``sendall`` over loopback TCP to a thread here
    that receives them into new memory and acknowledges with one byte."""

    def __init__(self) -> None:
        with socket.create_server(("127.0.0.1", 0)) as server:
            self.sock = socket.create_connection(server.getsockname())
            peer, _ = server.accept()
        self.sizes: queue.Queue[int] = queue.Queue()
        threading.Thread(target=self._receive, args=(peer,), daemon=True).start()

    def _receive(self, peer: socket.socket) -> None:
        while True:
            n = self.sizes.get()
            view, got = memoryview(np.empty(n, np.uint8)), 0
            while got < n:
                got += peer.recv_into(view[got:])
            peer.sendall(b"k")

    def runner(self, n: int) -> Callable[[], object]:
        data = _data(n)[0]

        def step() -> bytes:
            self.sizes.put(data.nbytes)
            self.sock.sendall(data)
            return self.sock.recv(1)

        return step


# --- memory -----------------------------------------------------------------------------
def _trace_start() -> None:
    tracemalloc.start()
    tracemalloc.reset_peak()


def _trace_read() -> tuple[int, int]:
    import gc

    gc.collect()
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return current, peak


def peak_memory(step: Callable[[], object], client, worker: str) -> dict[str, tuple[int, int]]:
    """(retained, peak) bytes allocated over one ``step`` beyond what was allocated
    before it, on this process (the client) and on ``worker``."""
    step()  # warm: plans and connections made before measuring
    client.run(_trace_start, workers=[worker])
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    result = step()
    del result
    gc.collect()
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    time.sleep(0.5)  # the worker lets go of the step's values after its reply
    w_current, w_peak = client.run(_trace_read, workers=[worker])[worker]
    return {"client": (current - base, peak - base), "worker": (w_current, w_peak)}


CLUSTERS = ("dataflow TCP", "dataflow TLS", "dataflow socket")


def start_cluster(tf, name: str):
    """The ``LocalCluster(ps=1, worker=1)`` behind the column ``name``."""
    from distributed.security import Security

    if name == "dataflow TLS":
        return tf.LocalCluster(
            ps=1, worker=1, dashboard_address=None, security=Security.temporary()
        )
    if name == "dataflow socket":
        # Its processes refuse shared memory and Unix sockets: the path between hosts.
        os.environ["DATAFLOW_SHM"] = os.environ["DATAFLOW_UNIX_SOCKETS"] = "0"
        try:
            return tf.LocalCluster(ps=1, worker=1, dashboard_address=None)
        finally:
            del os.environ["DATAFLOW_SHM"], os.environ["DATAFLOW_UNIX_SOCKETS"]
    return tf.LocalCluster(ps=1, worker=1, dashboard_address=None)


def sweep(
    tf, tfc, clusters: dict, client, floor, kinds, sizes, rounds: int, per_round: int
) -> dict[tuple[str, int], dict[str, float]]:
    """Median seconds a step of each contender, TF1 and ``clusters`` interleaved round by
    round for each kind and size; plain Dask and the floor join where ``client`` is given."""
    results: dict[tuple[str, int], dict[str, float]] = {}
    for kind in kinds:
        for n in sizes:
            contenders = {"TF1": session_runner(tfc.tf, tfc.session, n, kind)}
            if client is not None:
                worker = clusters["dataflow TCP"].workers["worker-0"]
                contenders["plain Dask"] = dask_runner(client, worker, n, kind)
                contenders["loopback"] = floor.runner(n)
            for name, cluster in clusters.items():
                contenders[name] = session_runner(
                    tf, lambda g, c=cluster: tf.Session(c, graph=g), n, kind
                )
            scale = max(1, n // 10_000)  # fewer calls of the slow large steps
            row = results[kind, n] = interleaved(
                contenders, rounds, max(2, per_round // scale), warmup=2, settle=SETTLE
            )
            print(
                f"{kind:5s} {n * P * 4 / 1e6:7.2f} MB  "
                + "  ".join(f"{k} {v * 1e3:8.2f} ms" for k, v in row.items()),
                flush=True,
            )
            for cluster in clusters.values():
                tf.Session.reset(cluster)
    return results


def main(
    quick: bool,
    plot: str | None,
    sizes: tuple[int, ...],
    timing: bool = True,
    together: bool = False,
) -> None:
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    import distributed

    import dataflow as tf

    threadpool_limits(1)
    warnings.filterwarnings("ignore", message=".*[Ll]arge graph.*")
    rounds, per_round = (3, 3) if quick else (5, 6)
    kinds = ("feed", "fetch") if timing else ()
    # One pass per cluster (the module's docstring says why); ``together``: one for all.
    passes = [CLUSTERS] if together else [(name,) for name in CLUSTERS]
    if not timing:
        passes = [("dataflow TCP",)]  # (memory is measured on the TCP cluster alone)
    print("starting TF1's servers; then each dataflow.LocalCluster(ps=1, worker=1) ...")
    tfc = TF1Cluster()
    floor = Loopback()
    results: dict[tuple[str, int], dict[str, float]] = {}
    memory = {}
    for names in passes:
        clusters = {name: start_cluster(tf, name) for name in names}
        tcp = clusters.get("dataflow TCP")
        client = None if tcp is None else distributed.Client(tcp.target, set_as_default=False)
        try:
            timed = sweep(tf, tfc, clusters, client, floor, kinds, sizes, rounds, per_round)
            for key, row in timed.items():
                merged = results.setdefault(key, {})
                for name, seconds in row.items():
                    if name == "TF1":
                        for own in names:
                            merged[f"TF1 beside {own}"] = seconds
                    else:
                        merged[name] = seconds
            if tcp is not None:
                worker = tcp.workers["worker-0"]
                n = max(sizes)
                for kind in ("feed", "fetch"):
                    memory[kind] = peak_memory(
                        session_runner(tf, lambda g, c=tcp: tf.Session(c, graph=g), n, kind),
                        client,
                        worker,
                    )
                    tf.Session.reset(tcp)
        finally:
            if client is not None:
                client.close()
            for cluster in clusters.values():
                cluster.close()
    print()
    print(
        f"{'step':6s} {'bytes':>9s} {'TF1 ms':>8s} {'Dask ms':>8s} {'TCP ms':>8s} "
        f"{'TLS ms':>8s} {'sock ms':>8s} {'floor ms':>8s} {'TCP/TF1':>8s} {'TLS/TF1':>8s} "
        f"{'sock/TF1':>8s} {'TCP/Dask':>8s} {'TCP/floor':>9s}"
    )
    for (kind, n), row in results.items():
        tf1 = row["TF1 beside dataflow TCP"]
        tcp_t, tls_t, sock = (row[name] for name in CLUSTERS)
        ratios = (row[name] / row[f"TF1 beside {name}"] for name in CLUSTERS)
        dask_, low = row["plain Dask"], row["loopback"]
        print(
            f"{kind:6s} {_bytes(n * P * 4):>9s} {tf1 * 1e3:8.2f} {dask_ * 1e3:8.2f} "
            f"{tcp_t * 1e3:8.2f} {tls_t * 1e3:8.2f} {sock * 1e3:8.2f} {low * 1e3:8.2f} "
            + " ".join(f"{r:7.2f}x" for r in ratios)
            + f" {tcp_t / dask_:7.2f}x {tcp_t / low:8.2f}x"
        )
    if not together and results:
        print("(each dataflow column timed alone beside TF1, its ratio against those TF1 steps)")
    moved = max(sizes) * P * 4
    print()
    print(f"memory over one {_bytes(moved)} step on the TCP cluster (x the bytes moved):")
    for kind, sides in memory.items():
        for side, (kept, peak) in sides.items():
            print(f"  {kind:5s} {side:6s} peak {peak / moved:5.2f}x  kept {kept / moved:5.2f}x")
    if plot and results:
        _plot(results, sizes, plot)


def _bytes(n: int) -> str:
    return f"{n / 1e6:g} MB" if n >= 1e6 else f"{n / 1e3:g} KB"


def _plot(results: dict, sizes: tuple[int, ...], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4.6), sharey=True)
    mb = [n * P * 4 / 1e6 for n in sizes]
    target = [0.7 if n * P * 4 >= 40e6 else 0.5 for n in sizes]
    for ax, kind in zip(axes, ("feed", "fetch"), strict=True):
        verb = "fed" if kind == "feed" else "fetched"
        for name, style, label in (
            ("TF1 beside dataflow TCP", "k-o", "TF1"),
            ("plain Dask", "g-^", "plain Dask"),
            ("dataflow TCP", "b-s", "dataflow TCP"),
            ("dataflow TLS", "b--d", "dataflow TLS"),
            ("dataflow socket", "c:v", "dataflow socket"),
            ("loopback", "0.6", "loopback floor"),
        ):
            ax.plot(mb, [results[kind, n][name] * 1e3 for n in sizes], style, label=label)
        tf1 = [results[kind, n]["TF1 beside dataflow TCP"] * 1e3 for n in sizes]
        ax.plot(
            mb, [t * r for t, r in zip(tf1, target)], "r:", label="goal: 0.5x TF1, 0.7x at 40 MB"
        )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(f"MB {verb} per step")
        ax.set_title(f"ridge step, X {verb}")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("median step time (ms)")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=9)  # (below both)
    fig.suptitle(f"{cpu_name()}, {len(os.sched_getaffinity(0))} cores, one run", fontsize=9)
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    fig.savefig(path, dpi=100)
    print(f"plot written to {path}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--plot", default=None, help="PNG path for the curve")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--memory-only", action="store_true", help="skip the timings")
    parser.add_argument(
        "--together", action="store_true", help="the three dataflow clusters alive at once"
    )
    args = parser.parse_args()
    sizes = tuple(int(s) for s in args.sizes.split(","))
    main(args.quick, args.plot, sizes, timing=not args.memory_only, together=args.together)
