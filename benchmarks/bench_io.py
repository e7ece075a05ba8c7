"""Input pipelines and checkpoints: queue throughput between workers, and save/restore
of a 1 GB model, against plain Dask and numpy.

Run: ``python benchmarks/bench_io.py`` (``--quick`` for fewer repeats, ``--gb`` for the
model size, ``--skip-queues`` / ``--skip-checkpoints`` for one half).

Queues (issue 5), on a ``dataflow.LocalCluster(ps=1, worker=2)`` over loopback:

* **dataflow**: a ``FIFOQueue`` on ``/job:ps/task:0``; a producer step reads a batch
  held in a variable on ``/job:worker/task:0`` and enqueues it (``enqueue_many``: the
  batch crosses worker-0 -> ps-0), a consumer step dequeues a batch and reduces it on
  ``/job:worker/task:1`` (ps-0 -> worker-1). One client thread loops each; graph and
  resident paths.
* **plain Dask ``distributed.Queue``**: a producer task on worker-0 ``put``s the same
  batches, a consumer task on worker-1 ``get``s them (through the scheduler: two hops
  as well).
* **loopback copy rate**: a raw TCP socket between two processes, and a Dask
  worker-to-worker transfer (a 64 MB array on worker-0 read by a task on worker-1).

Checkpoints: eight float32 variables totalling ``--gb`` GB, saved with ``tf.train.Saver``
and restored, against ``numpy.save`` / ``numpy.load`` of the same arrays into the same
directory: in this process (embedded session), and on a ``LocalCluster(ps=2, worker=1)``
where each ps writes its own shard and numpy runs on the ps workers themselves (both ps
at once, through ``Client.run``). Contenders alternate round by round and files are
deleted as soon as each contender has written and read them back (so none pays for
reclaiming another's page cache), and ``os.sync()`` runs (untimed) before each timed
operation; writes are not fsynced by either side (they reach the page cache), and reads
come from the cache (the files were just written).

Reported: medians and ratios; nothing is asserted. Figures go to
``docs/fault_tolerance.md``.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import shutil
import socket
import statistics
import tempfile
import threading
import time
from collections.abc import Callable

import numpy as np
from threadpoolctl import threadpool_limits

MB = 1e6


# --- queues ---------------------------------------------------------------------------
def dataflow_queue(
    tf, cluster, element_bytes: int, batch: int, resident: bool, name: str
) -> Callable[[int], float]:
    """A runner: ``run(steps)`` moves ``steps`` batches producer -> consumer; seconds."""
    width = element_bytes // 4
    graph = tf.Graph()
    with graph.as_default():
        with tf.device("/job:worker/task:0"):
            src = tf.Variable(tf.random_uniform([batch, width], seed=1), name="src")
        with tf.device("/job:ps/task:0"):
            q = tf.FIFOQueue(4 * batch, tf.float32, shapes=[[width]], shared_name=name)
        enqueue = q.enqueue_many([src.read_value()])
        with tf.device("/job:worker/task:1"):
            consumed = tf.reduce_sum(q.dequeue_many(batch)[:, 0])
    config = tf.ConfigProto(resident_steps=resident)
    producer = tf.Session(cluster, graph=graph, config=config)
    consumer = tf.Session(cluster, graph=graph, config=config)
    producer.run(src.initializer)

    def run(steps: int) -> float:
        def produce():
            for _ in range(steps):
                producer.run(enqueue)

        thread = threading.Thread(target=produce)
        start = time.perf_counter()
        thread.start()
        for _ in range(steps):
            consumer.run(consumed)
        elapsed = time.perf_counter() - start
        thread.join()
        return elapsed

    run(2)  # compile and warm both paths
    run.close = lambda: (producer.close(), consumer.close())  # type: ignore[attr-defined]
    return run


def _dask_produce(name: str, steps: int, nbytes: int) -> int:
    from distributed import Queue

    q = Queue(name, maxsize=4)
    batch = np.ones(nbytes // 4, np.float32)
    for _ in range(steps):
        q.put(batch)
    return steps


def _dask_consume(name: str, steps: int) -> float:
    from distributed import Queue

    q = Queue(name, maxsize=4)
    total = 0.0
    for _ in range(steps):
        total += float(q.get()[0])
    return total


def dask_queue(cluster, nbytes: int) -> Callable[[int], float]:
    client = cluster.client
    workers = cluster.workers
    counter = iter(range(1_000_000))

    def run(steps: int) -> float:
        name = f"bench-q-{next(counter)}"
        start = time.perf_counter()
        consumer = client.submit(
            _dask_consume, name, steps, workers=[workers["worker-1"]], pure=False
        )
        producer = client.submit(
            _dask_produce, name, steps, nbytes, workers=[workers["worker-0"]], pure=False
        )
        consumer.result()
        elapsed = time.perf_counter() - start
        producer.result()
        return elapsed

    run(2)
    return run


def _receive(port: int, total: int, ready) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", port))
        server.listen(1)
        ready.set()
        conn, _ = server.accept()
        with conn:
            buf = bytearray(4 << 20)
            view = memoryview(buf)
            left = total
            while left:
                got = conn.recv_into(view, min(len(buf), left))
                if not got:
                    break
                left -= got
            conn.sendall(b"k")


def socket_rate(total: int = 512 << 20) -> float:
    """MB/s of one TCP connection over loopback between two processes."""
    ctx = multiprocessing.get_context("spawn")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ready = ctx.Event()
    proc = ctx.Process(target=_receive, args=(port, total, ready))
    proc.start()
    ready.wait(30)
    chunk = memoryview(np.ones(4 << 20, np.uint8))
    with socket.create_connection(("127.0.0.1", port)) as conn:
        start = time.perf_counter()
        left = total
        while left:
            n = min(len(chunk), left)
            conn.sendall(chunk[:n])
            left -= n
        conn.recv(1)
        elapsed = time.perf_counter() - start
    proc.join()
    return total / elapsed / MB


def _nbytes(a: np.ndarray) -> int:
    return a.nbytes


def _ones(n: int) -> np.ndarray:
    return np.ones(n, np.uint8)


def dask_transfer_rate(cluster, nbytes: int = 64 << 20, repeats: int = 6) -> float:
    """MB/s of one array moving worker-0 -> worker-1 (median of ``repeats``)."""
    client, workers = cluster.client, cluster.workers
    times = []
    for _ in range(repeats + 1):
        src = client.submit(_ones, nbytes, workers=[workers["worker-0"]], pure=False)
        src.result()
        start = time.perf_counter()
        client.submit(_nbytes, src, workers=[workers["worker-1"]], pure=False).result()
        times.append(time.perf_counter() - start)
        del src
    return nbytes / statistics.median(times[1:]) / MB


def queue_benchmarks(tf, quick: bool) -> None:
    print("starting a dataflow.LocalCluster(ps=1, worker=2) ...")
    cluster = tf.LocalCluster(ps=1, worker=2, dashboard_address=None)
    rounds = 2 if quick else 3
    cases = [
        ("1 KB", 1 << 10, 256, 20 if quick else 60),
        ("1 MB", 1 << 20, 4, 10 if quick else 30),
        ("16 MB", 16 << 20, 1, 6 if quick else 16),
    ]
    rows = []
    try:
        copy_socket = socket_rate()
        copy_dask = dask_transfer_rate(cluster)
        for label, nbytes, batch, steps in cases:
            runners = {
                "dataflow graph": dataflow_queue(tf, cluster, nbytes, batch, False, f"g{label}"),
                "dataflow resident": dataflow_queue(tf, cluster, nbytes, batch, True, f"r{label}"),
                "dask Queue": dask_queue(cluster, nbytes * batch),
            }
            times: dict[str, list[float]] = {k: [] for k in runners}
            for _ in range(rounds):
                for k, run in runners.items():
                    times[k].append(run(steps))
            for k, run in runners.items():
                if hasattr(run, "close"):
                    run.close()
                t = statistics.median(times[k])
                rows.append((label, batch, k, steps * batch / t, steps * batch * nbytes / t / MB))
            tf.Session.reset(cluster)
    finally:
        cluster.close()
    print()
    print(
        "Queue throughput, producer on worker-0 -> queue -> consumer on worker-1 "
        "(two loopback hops)"
    )
    print(
        f"{'element':>8s} {'batch':>6s}  {'contender':20s} {'elements/s':>11s} {'MB/s':>8s}  ratios"
    )
    by_case: dict[str, dict[str, float]] = {}
    for label, _, k, _, rate in rows:
        by_case.setdefault(label, {})[k] = rate
    for label, batch, k, elems, rate in rows:
        ratio = (
            f"{rate / by_case[label]['dask Queue']:.2f}x dask Queue" if k != "dask Queue" else ""
        )
        print(f"{label:>8s} {batch:6d}  {k:20s} {elems:11.0f} {rate:8.1f}  {ratio}")
    print()
    print(
        f"loopback copy rate: raw TCP socket {copy_socket:.0f} MB/s; Dask worker-to-worker "
        f"transfer of 64 MB (one task reading another's result) {copy_dask:.0f} MB/s"
    )
    best = max(rate for _, _, k, _, rate in rows if k.startswith("dataflow"))
    print(
        f"best dataflow queue rate {best:.0f} MB/s = {best / copy_dask:.2f}x one Dask "
        f"transfer, {best / copy_socket:.2f}x the raw socket (each element crosses "
        "twice)"
    )


# --- checkpoints ----------------------------------------------------------------------
N_VARS = 8


def _np_save(arrays: dict[str, np.ndarray], directory: str) -> None:
    os.makedirs(directory, exist_ok=True)
    for name, a in arrays.items():
        np.save(os.path.join(directory, name.replace("/", "_") + ".npy"), a)


def _np_load(names: list[str], directory: str) -> list[np.ndarray]:
    return [np.load(os.path.join(directory, n.replace("/", "_") + ".npy")) for n in names]


def _store_arrays() -> dict[str, np.ndarray]:
    from dataflow.runtime.dask.worker_state import RUNTIME

    out = {}
    for device, names in RUNTIME.variables().items():
        store = RUNTIME.store("", device)
        out.update({n: store.read(n) for n in names if n.startswith("v")})
    return out


def _worker_np_save(directory: str) -> float:
    start = time.perf_counter()
    _np_save(_store_arrays(), directory)
    return time.perf_counter() - start


def _worker_np_load(directory: str) -> float:
    start = time.perf_counter()
    _np_load(list(_store_arrays()), directory)
    return time.perf_counter() - start


def checkpoint_model(tf, ps_tasks: int, n: int):
    """Variables v0..v7 of ``n`` float32 each (on ``ps_tasks`` ps tasks, or here)."""
    graph = tf.Graph()
    with graph.as_default():
        setter = tf.train.replica_device_setter(ps_tasks=ps_tasks) if ps_tasks else None
        with tf.device(setter):
            variables = [
                tf.Variable(tf.random_uniform([n], seed=i), name=f"v{i}") for i in range(N_VARS)
            ]
        saver = tf.train.Saver(variables, max_to_keep=None)
        init = tf.variables_initializer(variables)
    return graph, variables, saver, init


def checkpoint_benchmarks(tf, quick: bool, gb: float, base: str) -> None:
    rounds = 2 if quick else 4
    n = int(gb * 2**30 / 4 / N_VARS)
    total = n * 4 * N_VARS
    results: dict[str, dict[str, float]] = {}

    def measure(setting: str, pairs: dict[str, tuple[Callable, Callable]]) -> None:
        """``pairs``: contender -> (write(directory), read(directory)). Each pair writes
        into a fresh directory, reads back, and deletes it (so no contender pays for
        reclaiming another's page cache); pair order alternates between rounds."""
        times: dict[str, list[float]] = {}
        for r in range(rounds):
            order = list(pairs.items())
            if r % 2:
                order.reverse()
            for label, (write, read) in order:
                directory = os.path.join(base, f"{setting}-{r}-{label}".replace(" ", "_"))
                os.makedirs(directory)
                for op, fn in ((f"{label} write", write), (f"{label} read", read)):
                    os.sync()  # no dirty pages waiting from an earlier operation
                    start = time.perf_counter()
                    fn(directory)
                    times.setdefault(op, []).append(time.perf_counter() - start)
                shutil.rmtree(directory)
        results[setting] = {k: statistics.median(v) for k, v in times.items()}

    # Embedded: the session's variables and the numpy arrays hold the same values.
    graph, variables, saver, init = checkpoint_model(tf, 0, n)
    with tf.Session(graph=graph) as sess:
        sess.run(init)
        names = [v.op.name for v in variables]
        arrays = dict(zip(names, sess.run(variables)))  # the same values, as numpy arrays
        measure(
            "embedded",
            {
                "numpy": (lambda d: _np_save(arrays, d), lambda d: _np_load(names, d)),
                "Saver": (
                    lambda d: saver.save(sess, os.path.join(d, "model")),
                    lambda d: saver.restore(sess, os.path.join(d, "model")),
                ),
            },
        )
    arrays.clear()

    print("starting a dataflow.LocalCluster(ps=2, worker=1) ...")
    cluster = tf.LocalCluster(ps=2, worker=1, dashboard_address=None)
    try:
        client = cluster.client
        ps = [cluster.workers["ps-0"], cluster.workers["ps-1"]]
        graph, variables, saver, init = checkpoint_model(tf, 2, n)
        with tf.Session(cluster, graph=graph) as sess:
            sess.run(init)
            measure(
                "LocalCluster, 2 ps",
                {
                    "numpy": (
                        lambda d: client.run(_worker_np_save, d, workers=ps),
                        lambda d: client.run(_worker_np_load, d, workers=ps),
                    ),
                    "Saver": (
                        lambda d: saver.save(sess, os.path.join(d, "model")),
                        lambda d: saver.restore(sess, os.path.join(d, "model")),
                    ),
                },
            )
    finally:
        cluster.close()

    print()
    print(
        f"Checkpoint of {N_VARS} float32 variables, {total / 2**30:.2f} GiB in all "
        f"(median of {rounds})"
    )
    print(f"{'setting':20s} {'operation':15s} {'seconds':>8s} {'GB/s':>6s}  ratio")
    names = {
        "numpy write": "numpy.save",
        "Saver write": "Saver.save",
        "numpy read": "numpy.load",
        "Saver read": "Saver.restore",
    }
    for setting, r in results.items():
        for k in ("numpy write", "Saver write", "numpy read", "Saver read"):
            ratio = ""
            if k.startswith("Saver"):
                base_op = k.replace("Saver", "numpy")
                ratio = f"{r[k] / r[base_op]:.2f}x {names[base_op]}"
            print(f"{setting:20s} {names[k]:15s} {r[k]:8.3f} {total / r[k] / 1e9:6.2f}  {ratio}")


def main(
    quick: bool = False,
    gb: float = 1.0,
    queues: bool = True,
    checkpoints: bool = True,
    directory: str | None = None,
) -> None:
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    import dataflow as tf

    threadpool_limits(1)
    if queues:
        queue_benchmarks(tf, quick)
    if checkpoints:
        base = tempfile.mkdtemp(prefix="bench_io-", dir=directory)
        try:
            checkpoint_benchmarks(tf, quick, gb, base)
        finally:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--gb", type=float, default=1.0)
    parser.add_argument("--skip-queues", action="store_true")
    parser.add_argument("--skip-checkpoints", action="store_true")
    parser.add_argument(
        "--dir",
        default=None,
        help="where checkpoints are written (default: the system temporary directory)",
    )
    args = parser.parse_args()
    main(args.quick, args.gb, not args.skip_queues, not args.skip_checkpoints, args.dir)
