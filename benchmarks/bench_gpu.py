"""dataflow on a GPU against PyTorch (eager and ``torch.compile``), CuPy by hand and
dataflow on the CPU, on the same machine.

Run on a CUDA machine (CuPy and PyTorch installed): ``python benchmarks/bench_gpu.py``
(``--quick`` for smaller sizes and fewer repeats). Where CuPy sees no CUDA device it
prints ``skipped: no CUDA device`` and exits 0; ``--cpu-only`` runs the CPU contenders
alone (dataflow with ``device_count={"GPU": 0}``, the same models by hand on numpy, and
PyTorch on the CPU where it is installed), as a smoke test anywhere.

Models (the same in every contender):

* ``mlp-128``, ``mlp-4096``: a 784-256-256-10 ReLU MLP, sparse softmax cross-entropy,
  Adam (1e-3), at batch 128 and 4096: one training step.
* ``cnn-128``: ``bench_layers.py``'s CNN (two ``conv 5x5 same + relu + max-pool 2``
  blocks of 32 and 64 filters, dense 1024, dense 10, Adam 1e-4) at batch 128: one
  training step. No hand-written CuPy version (a convolution by hand is no baseline).
* ``matmul-chain``: ``x @ w1 @ w2 ... @ w8`` with 4096 x 4096 float32 matrices (on the
  device already; only the 4-byte sum of the result comes back).

Each contender runs ``warmup`` steps, then ``repeats`` timed windows of ``steps``
steps; a window ends with the device synchronised (every contender's last step's
result is read back), and the median window divided by ``steps`` is reported, in ms.
Inputs live where each contender keeps them between steps: dataflow and PyTorch eager
get the same host batch every step (dataflow copies its feeds to the GPU; PyTorch's
batch is copied to the GPU once per step with ``.to(device)``), as a training loop
feeding numpy batches does.

Writes the table to ``benchmarks/results/bench_gpu-<time>.json`` and ``.md`` (with the
GPU, driver, CuPy and PyTorch versions), and prints it. Goals (issue 19): within 1.5x
of PyTorch eager per step, and at least 10x faster than dataflow on the CPU at batch
4096; the table says which are met. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from bench_layers import tutorial_cnn_loss  # (this directory is on sys.path)

import dataflow as tf

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
MLP_WIDTHS = (784, 256, 256, 10)
Step = Callable[[], Any]  # one step; returns something to synchronise on (or None)


# --- dataflow ----------------------------------------------------------------------------
def _dataflow_session(build: Callable[[], tuple[Any, dict]], gpu: bool) -> Step:
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(0)
        fetch, feed = build()
        config = tf.ConfigProto() if gpu else tf.ConfigProto(device_count={"GPU": 0})
        sess = tf.Session(graph=graph, config=config)
        sess.run(tf.global_variables_initializer())
        if gpu:  # the point of the contender: its ops must be on the GPU
            placed = set(sess.placement(fetch, feed).values())
            if not any("/device:GPU:" in d for d in placed):
                raise RuntimeError(f"dataflow placed nothing on a GPU: {placed}")
    return lambda: sess.run(fetch, feed)


def dataflow_mlp(batch: int, gpu: bool) -> Step:
    rng = np.random.default_rng(0)
    images = rng.random((batch, MLP_WIDTHS[0]), dtype=np.float32)
    labels = rng.integers(0, 10, batch)

    def build() -> tuple[Any, dict]:
        x = tf.placeholder(tf.float32, [None, MLP_WIDTHS[0]])
        y = tf.placeholder(tf.int64, [None])
        h = x
        for i, (n_in, n_out) in enumerate(zip(MLP_WIDTHS, MLP_WIDTHS[1:])):
            w = tf.Variable(tf.random_normal([n_in, n_out], stddev=0.05))
            h = tf.matmul(h, w) + tf.Variable(tf.zeros([n_out]))
            if i < len(MLP_WIDTHS) - 2:
                h = tf.nn.relu(h)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=h))
        train = tf.train.AdamOptimizer(1e-3).minimize(loss)
        return [loss, train], {x: images, y: labels}

    return _dataflow_session(build, gpu)


def dataflow_cnn(batch: int, gpu: bool) -> Step:
    rng = np.random.default_rng(0)
    images = rng.random((batch, 28, 28, 1), dtype=np.float32)
    labels = rng.integers(0, 10, batch)

    def build() -> tuple[Any, dict]:
        x = tf.placeholder(tf.float32, [None, 28, 28, 1])
        y = tf.placeholder(tf.int64, [None])
        loss = tutorial_cnn_loss(tf, x, y)
        train = tf.train.AdamOptimizer(1e-4).minimize(loss)
        return [loss, train], {x: images, y: labels}

    return _dataflow_session(build, gpu)


def dataflow_chain(size: int, length: int, gpu: bool) -> Step:
    def build() -> tuple[Any, dict]:
        h = tf.Variable(tf.random_normal([size, size], stddev=1.0 / np.sqrt(size)))
        out = h.read_value()
        for _ in range(length):
            w = tf.Variable(tf.random_normal([size, size], stddev=1.0 / np.sqrt(size)))
            out = tf.matmul(out, w)
        return tf.reduce_sum(out), {}

    return _dataflow_session(build, gpu)


# --- by hand, on numpy or cupy -----------------------------------------------------------
def hand_mlp(xp: Any, batch: int) -> Step:
    """The MLP's training step written by hand against ``xp``: forward, backward, Adam
    updating the parameters in place. The batch is copied to the device every step."""
    rng = np.random.default_rng(0)
    images = rng.random((batch, MLP_WIDTHS[0]), dtype=np.float32)
    labels = rng.integers(0, 10, batch)
    params = []
    for n_in, n_out in zip(MLP_WIDTHS, MLP_WIDTHS[1:]):
        params.append(xp.asarray(rng.standard_normal((n_in, n_out), np.float32) * 0.05))
        params.append(xp.zeros(n_out, np.float32))
    moments = [(xp.zeros_like(p), xp.zeros_like(p)) for p in params]
    lr, b1, b2, eps = 1e-3, 0.9, 0.999, 1e-8
    t = [0]

    def step() -> Any:
        x, y = xp.asarray(images), xp.asarray(labels)
        acts = [x]
        h = x
        for i in range(0, len(params), 2):
            h = h @ params[i] + params[i + 1]
            if i < len(params) - 2:
                h = xp.maximum(h, 0)
            acts.append(h)
        shifted = h - h.max(axis=1, keepdims=True)
        probs = xp.exp(shifted)
        probs /= probs.sum(axis=1, keepdims=True)
        rows = xp.arange(batch)
        loss = -xp.log(probs[rows, y]).mean()
        grad = probs
        grad[rows, y] -= 1.0
        grad /= batch
        grads: list[Any] = [None] * len(params)
        for i in range(len(params) - 2, -1, -2):
            grads[i] = acts[i // 2].T @ grad
            grads[i + 1] = grad.sum(axis=0)
            if i:
                grad = (grad @ params[i].T) * (acts[i // 2] > 0)
        t[0] += 1
        scale = float(lr * np.sqrt(1 - b2 ** t[0]) / (1 - b1 ** t[0]))  # a Python float
        for p, g, (m, v) in zip(params, grads, moments):
            m *= b1
            m += (1 - b1) * g
            v *= b2
            v += (1 - b2) * g * g
            p -= scale * m / (xp.sqrt(v) + eps)
        return loss

    return step


def hand_chain(xp: Any, size: int, length: int) -> Step:
    rng = np.random.default_rng(0)
    mats = [
        xp.asarray(rng.standard_normal((size, size), np.float32) / np.sqrt(size))
        for _ in range(length + 1)
    ]

    def step() -> Any:
        out = mats[0]
        for w in mats[1:]:
            out = out @ w
        return out.sum()

    return step


# --- PyTorch ---------------------------------------------------------------------------------
def torch_mlp(torch: Any, device: str, batch: int, compiled: bool) -> Step:
    nn = torch.nn
    layers: list[Any] = []
    for i, (n_in, n_out) in enumerate(zip(MLP_WIDTHS, MLP_WIDTHS[1:])):
        layers.append(nn.Linear(n_in, n_out))
        if i < len(MLP_WIDTHS) - 2:
            layers.append(nn.ReLU())
    return _torch_training(torch, nn.Sequential(*layers), device, batch, (784,), 1e-3, compiled)


def torch_cnn(torch: Any, device: str, batch: int, compiled: bool) -> Step:
    nn = torch.nn
    model = nn.Sequential(
        nn.Conv2d(1, 32, 5, padding=2),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 5, padding=2),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(7 * 7 * 64, 1024),
        nn.ReLU(),
        nn.Linear(1024, 10),
    )
    return _torch_training(torch, model, device, batch, (1, 28, 28), 1e-4, compiled)


def _torch_training(
    torch: Any, model: Any, device: str, batch: int, shape: tuple, lr: float, compiled: bool
) -> Step:
    rng = np.random.default_rng(0)
    images = torch.from_numpy(rng.random((batch, *shape), dtype=np.float32))
    labels = torch.from_numpy(rng.integers(0, 10, batch))
    model = model.to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = torch.nn.CrossEntropyLoss()

    def train(x: Any, y: Any) -> Any:
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    run = torch.compile(train) if compiled else train
    return lambda: run(images.to(device), labels.to(device))


def torch_chain(torch: Any, device: str, size: int, length: int, compiled: bool) -> Step:
    gen = torch.Generator().manual_seed(0)
    mats = [
        (torch.randn(size, size, generator=gen) / size**0.5).to(device) for _ in range(length + 1)
    ]

    def chain(first: Any, *rest: Any) -> Any:
        out = first
        for w in rest:
            out = out @ w
        return out.sum()

    run = torch.compile(chain) if compiled else chain
    return lambda: run(*mats)


# --- timing and the table ---------------------------------------------------------------------
def _sync(result: Any) -> None:
    """Waits for the step's device work: reads its result back to the host."""
    if isinstance(result, (list, tuple)):
        result = result[0]
    if result is None:
        return
    item = getattr(result, "item", None)
    if item is not None:
        item()  # cupy / torch: a device-to-host copy, which waits for the queue
    else:
        float(np.asarray(result))


def time_step(step: Step, warmup: int, steps: int, repeats: int) -> float:
    """The median, over ``repeats`` windows of ``steps`` steps, of the time per step (s)."""
    for _ in range(warmup):
        _sync(step())
    windows = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(steps - 1):
            step()
        _sync(step())
        windows.append((time.perf_counter() - start) / steps)
    return statistics.median(windows)


def contenders(args: argparse.Namespace, cupy: Any, torch: Any) -> list[tuple[str, str, Step]]:
    """(case, contender, step) for every pair that runs here; a step factory runs only
    when it is timed (``_lazy``)."""
    size, length = (512, 4) if args.quick else (4096, 8)
    small, large = (128, 512) if args.quick else (128, 4096)
    gpu = not args.cpu_only
    cases: list[tuple[str, str, Callable[[], Step]]] = []

    def add(case: str, name: str, factory: Callable[[], Step]) -> None:
        cases.append((case, name, factory))

    for batch in (small, large):
        case = f"mlp-{batch}"
        if gpu:
            add(case, "dataflow GPU", lambda b=batch: dataflow_mlp(b, True))
        add(case, "dataflow CPU", lambda b=batch: dataflow_mlp(b, False))
        add(case, "numpy by hand", lambda b=batch: hand_mlp(np, b))
        if gpu:
            add(case, "CuPy by hand", lambda b=batch: hand_mlp(cupy, b))
    if gpu:
        add("cnn-128", "dataflow GPU", lambda: dataflow_cnn(128, True))
    add("cnn-128", "dataflow CPU", lambda: dataflow_cnn(128, False))
    case = f"matmul-chain-{size}"
    if gpu:
        add(case, "dataflow GPU", lambda: dataflow_chain(size, length, True))
    add(case, "dataflow CPU", lambda: dataflow_chain(size, length, False))
    add(case, "numpy by hand", lambda: hand_chain(np, size, length))
    if gpu:
        add(case, "CuPy by hand", lambda: hand_chain(cupy, size, length))
    if torch is not None:
        device = "cpu" if args.cpu_only else "cuda"
        label = "PyTorch CPU" if args.cpu_only else "PyTorch eager"
        modes = [(label, False)] + ([] if args.cpu_only else [("torch.compile", True)])
        for name, compiled in modes:
            for batch in (small, large):
                add(
                    f"mlp-{batch}",
                    name,
                    lambda b=batch, c=compiled: torch_mlp(torch, device, b, c),
                )
            add("cnn-128", name, lambda c=compiled: torch_cnn(torch, device, 128, c))
            add(case, name, lambda c=compiled: torch_chain(torch, device, size, length, c))
    return [(c, n, _lazy(f)) for c, n, f in cases]


def _lazy(factory: Callable[[], Step]) -> Step:
    made: list[Step] = []

    def step() -> Any:
        if not made:
            made.append(factory())
        return made[0]()

    return step


def environment(cupy: Any, torch: Any) -> dict[str, Any]:
    env: dict[str, Any] = {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "host": platform.node(),
        "cpus": os.cpu_count(),
    }
    if cupy is not None:
        props = cupy.cuda.runtime.getDeviceProperties(0)
        env["gpu"] = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
        env["cupy"] = cupy.__version__
        env["cuda_driver"] = cupy.cuda.runtime.driverGetVersion()
        env["cuda_runtime"] = cupy.cuda.runtime.runtimeGetVersion()
    if torch is not None:
        env["torch"] = torch.__version__
    return env


def table(rows: list[dict[str, Any]]) -> str:
    """Markdown: per case, each contender's ms/step and its ratio to PyTorch eager
    (or PyTorch CPU) and to dataflow on the CPU."""
    lines = [
        "| case | contender | ms/step | / PyTorch | CPU dataflow / this |",
        "|---|---|---:|---:|---:|",
    ]
    for case in dict.fromkeys(r["case"] for r in rows):
        mine = {r["contender"]: r["ms"] for r in rows if r["case"] == case}
        torch_ms = mine.get("PyTorch eager") or mine.get("PyTorch CPU")
        cpu_ms = mine.get("dataflow CPU")
        for name, ms in mine.items():
            vs_torch = f"{ms / torch_ms:.2f}x" if torch_ms else "-"
            speedup = f"{cpu_ms / ms:.1f}x" if cpu_ms else "-"
            lines.append(f"| {case} | {name} | {ms:.3f} | {vs_torch} | {speedup} |")
    return "\n".join(lines)


def goals(rows: list[dict[str, Any]]) -> list[str]:
    """Issue 19's goals, met or not, for the dataflow GPU rows."""
    out = []
    by = {(r["case"], r["contender"]): r["ms"] for r in rows}
    for case in dict.fromkeys(r["case"] for r in rows):
        gpu, torch_ms = by.get((case, "dataflow GPU")), by.get((case, "PyTorch eager"))
        if gpu and torch_ms:
            ratio = gpu / torch_ms
            met = "met" if ratio <= 1.5 else "NOT met"
            out.append(f"{case}: dataflow GPU / PyTorch eager = {ratio:.2f} (goal <= 1.5: {met})")
        cpu = by.get((case, "dataflow CPU"))
        if gpu and cpu and case.startswith("mlp-4096"):
            speedup = cpu / gpu
            met = "met" if speedup >= 10 else "NOT met"
            out.append(f"{case}: dataflow CPU / GPU = {speedup:.1f}x (goal >= 10x: {met})")
    return out


def _import_cupy() -> Any:
    try:
        import cupy

        return cupy if cupy.cuda.runtime.getDeviceCount() > 0 else None
    except Exception:
        return None


def _import_torch(need_cuda: bool) -> Any:
    try:
        import torch
    except ImportError:
        return None
    if need_cuda and not torch.cuda.is_available():
        return None
    return torch


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, few repeats")
    parser.add_argument(
        "--cpu-only", action="store_true", help="only the CPU contenders (a smoke test)"
    )
    parser.add_argument("--repeats", type=int, default=None, help="timed windows per contender")
    parser.add_argument("--only", default="", help="run the cases whose name contains this")
    parser.add_argument(
        "--out", default=RESULTS, help="folder for the JSON and markdown results ('' for none)"
    )
    args = parser.parse_args(argv)
    cupy = None if args.cpu_only else _import_cupy()
    if cupy is None and not args.cpu_only:
        print("skipped: no CUDA device (CuPy is missing or sees no GPU); --cpu-only runs the CPU")
        return 0
    torch = _import_torch(need_cuda=not args.cpu_only)
    if torch is None:
        print("note: PyTorch (with CUDA, on a GPU run) is not installed: its rows are left out")
    warmup, steps = (1, 2) if args.quick else (3, 5)
    repeats = args.repeats or (2 if args.quick else 5)
    rows = []
    for case, name, step in contenders(args, cupy, torch):
        if args.only not in case:
            continue
        seconds = time_step(step, warmup, steps, repeats)
        rows.append({"case": case, "contender": name, "ms": seconds * 1e3})
        print(f"{case:>20}  {name:<15} {seconds * 1e3:10.3f} ms/step", flush=True)
    text = table(rows)
    met = goals(rows)
    print()
    print(text)
    for line in met:
        print(line)
    if args.out:
        _write(args, rows, text, met, environment(cupy, torch))
    return 0


def _write(
    args: argparse.Namespace, rows: list, text: str, met: list[str], env: dict[str, Any]
) -> None:
    os.makedirs(args.out, exist_ok=True)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    kind = "cpu-only" if args.cpu_only else "gpu"
    base = os.path.join(args.out, f"bench_gpu-{kind}-{stamp}")
    record = {"mode": kind, "quick": args.quick, "environment": env, "rows": rows, "goals": met}
    with open(base + ".json", "w") as f:
        json.dump(record, f, indent=2)
    with open(base + ".md", "w") as f:
        f.write(f"# bench_gpu ({kind}{', quick' if args.quick else ''}), {stamp}\n\n")
        f.write("".join(f"- {k}: {v}\n" for k, v in env.items()) + "\n")
        f.write(text + "\n\n" + "".join(f"- {line}\n" for line in met))
    print(f"wrote {base}.json and .md")


if __name__ == "__main__":
    sys.exit(main())
