"""Ridge regression trained data-parallel on a parameter-server cluster.

    cost(beta) = mean((y - X @ beta) ** 2) + lambda * ||beta||^2

A ``dataflow.LocalCluster(ps=1, worker=2)`` runs three Dask workers, ``ps-0``,
``worker-0`` and ``worker-1``. ``beta`` lives on ``/job:ps/task:0``; the gradient work
runs on the two ``/job:worker`` tasks. Two classic TF1 set-ups:

* **In-graph replication** (one client, synchronous): one graph with two towers, tower
  ``i`` on ``/job:worker/task:i`` computing the gradient of its half of each batch; the
  ps averages the two gradients and applies ``beta.assign_sub(lr * mean_grad)``.
  Every step is one Dask graph of a few tasks (read beta on the ps, one gradient per
  worker, the update on the ps), whatever the number of ops.
* **Between-graph replication** (one client per worker, asynchronous): each replica
  builds the same graph under ``tf.train.replica_device_setter``, connects its own
  ``distributed.Client`` and runs its own steps on its half of the data with
  ``GradientDescentOptimizer``. The variable is shared by name on the ps, as in TF1:
  replica 0 (the chief) initializes it, the other waits until it is.

Both end near the closed-form solution. The script prints the dashboard link (open it
to watch the task stream: keys read ``gradients/...@worker:0``, ``AssignSub...@ps:0``)
and the losses.

Run it with ``python -m dataflow.examples.parameter_server``, or call ``main(...)``,
which returns the figures.
"""

from __future__ import annotations

import argparse
import threading
import time
from typing import Any

import numpy as np

import dataflow as tf
from dataflow.examples.ridge import closed_form, make_data


def _cost(x: Any, y: Any, beta: Any, lam: float) -> Any:
    return tf.reduce_mean(tf.square(y - tf.matmul(x, beta))) + lam * tf.reduce_sum(tf.square(beta))


def in_graph(
    cluster: Any,
    x: np.ndarray,
    y: np.ndarray,
    lam: float,
    learning_rate: float,
    steps: int,
    init: np.ndarray,
    verbose: bool = True,
    resident: bool = False,
) -> dict[str, Any]:
    """Synchronous data parallelism: two towers in one graph, averaged gradients."""
    p = x.shape[1]
    graph = tf.Graph()
    with graph.as_default():
        with tf.device("/job:ps/task:0"):
            beta = tf.Variable(init, name="beta")
        feeds, grads, costs = [], [], []
        for i in range(2):
            with tf.device(f"/job:worker/task:{i}"), tf.name_scope(f"tower_{i}"):
                xi = tf.placeholder(tf.float32, [None, p], name="X")
                yi = tf.placeholder(tf.float32, [None, 1], name="y")
                cost = _cost(xi, yi, beta, lam)
                grads.append(tf.gradients(cost, [beta])[0])
                costs.append(cost)
                feeds.append((xi, yi))
        with tf.device("/job:ps/task:0"):
            mean_grad = tf.add_n(grads) / 2.0
            train = beta.assign_sub(learning_rate * mean_grad)
            mean_cost = tf.add_n(costs) / 2.0
        init_op = tf.global_variables_initializer()
    half = len(x) // 2
    feed = {
        feeds[0][0]: x[:half],
        feeds[0][1]: y[:half],
        feeds[1][0]: x[half:],
        feeds[1][1]: y[half:],
    }
    config = tf.ConfigProto(resident_steps=resident)
    with tf.Session(cluster, graph=graph, config=config) as sess:
        sess.run(init_op)
        stages = len(sess.compiled_plan([mean_cost, train], feed).stages)
        start = time.perf_counter()
        every = max(1, steps // 5)
        for step in range(steps):
            cost, _ = sess.run([mean_cost, train], feed)
            if verbose and (step % every == 0 or step == steps - 1):
                print(f"  in-graph  step {step:4d}  cost {cost:.6f}")
        seconds = time.perf_counter() - start
        beta_value = sess.run(beta)
    return {"beta": beta_value, "cost": float(cost), "seconds": seconds, "tasks_per_step": stages}


def _replica(
    target: str,
    index: int,
    x: np.ndarray,
    y: np.ndarray,
    lam: float,
    learning_rate: float,
    steps: int,
    init: np.ndarray,
    spec: Any,
    out: dict[int, Any],
    resident: bool,
) -> None:
    """One between-graph replica: its own graph, client and session."""
    import distributed

    p = x.shape[1]
    graph = tf.Graph()
    with graph.as_default():
        setter = tf.train.replica_device_setter(
            cluster=spec, worker_device=f"/job:worker/task:{index}"
        )
        with tf.device(setter):
            beta = tf.Variable(init, name="beta")
            xi = tf.placeholder(tf.float32, [None, p], name="X")
            yi = tf.placeholder(tf.float32, [None, 1], name="y")
            cost = _cost(xi, yi, beta, lam)
            train = tf.train.GradientDescentOptimizer(learning_rate).minimize(cost)
        init_op = tf.global_variables_initializer()
        ready = tf.is_variable_initialized(beta)
    client = distributed.Client(target, set_as_default=False)
    try:
        config = tf.ConfigProto(resident_steps=resident)
        with tf.Session(client, graph=graph, config=config) as sess:
            if index == 0:
                sess.run(init_op)  # the chief initializes the shared variable
            while not sess.run(ready):
                time.sleep(0.01)
            start = time.perf_counter()
            feed = {xi: x, yi: y}
            for _ in range(steps):
                c, _ = sess.run([cost, train], feed)
            out[index] = {"cost": float(c), "seconds": time.perf_counter() - start, "steps": steps}
    except BaseException as exc:
        out[index] = {"error": exc}
    finally:
        client.close()


def between_graph(
    cluster: Any,
    x: np.ndarray,
    y: np.ndarray,
    lam: float,
    learning_rate: float,
    steps: int,
    init: np.ndarray,
    resident: bool = False,
) -> dict[str, Any]:
    """Asynchronous data parallelism: one client per worker, the variable shared."""
    tf.Session.reset(cluster)  # start from a clean ps (variables outlive sessions)
    half = len(x) // 2
    shards = [(x[:half], y[:half]), (x[half:], y[half:])]
    out: dict[int, Any] = {}
    threads = [
        threading.Thread(
            target=_replica,
            args=(
                cluster.target,
                i,
                shards[i][0],
                shards[i][1],
                lam,
                learning_rate,
                steps,
                init,
                cluster.cluster_spec,
                out,
                resident,
            ),
        )
        for i in range(2)
    ]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - start
    for i in range(2):
        if "error" in out[i]:
            raise out[i]["error"]
    # Read the shared result from a third client, as a TF1 evaluator would.
    graph = tf.Graph()
    with graph.as_default(), tf.device("/job:ps/task:0"):
        beta = tf.Variable(init, name="beta")
    with tf.Session(cluster, graph=graph) as sess:
        beta_value = sess.run(beta)
    return {
        "beta": beta_value,
        "replicas": out,
        "seconds": seconds,
        "steps_per_second": 2 * steps / seconds,
    }


def main(
    steps: int = 100,
    verbose: bool = True,
    n: int = 1000,
    p: int = 10,
    lam: float = 0.01,
    seed: int = 0,
    cluster: Any = None,
    resident: bool = False,
) -> dict[str, Any]:
    """Runs both set-ups on ``cluster`` (a new ``LocalCluster(ps=1, worker=2)`` when
    omitted) and returns their figures."""
    x, y, _ = make_data(n, p, seed)
    target = closed_form(x, y, lam)
    curvature = 2 * (np.linalg.eigvalsh(x.astype(np.float64).T @ x / n).max() + lam)
    learning_rate = float(1.0 / curvature)
    init = np.zeros((p, 1), np.float32)

    own = cluster is None
    if own:
        cluster = tf.LocalCluster(ps=1, worker=2)
    try:
        if verbose:
            print(f"cluster: {cluster}")
            print(f"dashboard: {cluster.dashboard_link}")
            print("in-graph replication (2 towers, averaged gradients, synchronous):")
        tf.Session.reset(cluster)
        sync = in_graph(cluster, x, y, lam, learning_rate, steps, init, verbose, resident)
        sync["distance"] = float(np.linalg.norm(sync["beta"] - target) / np.linalg.norm(target))
        if verbose:
            print(
                f"  {steps} steps in {sync['seconds']:.2f} s, {sync['tasks_per_step']} "
                f"Dask tasks per step; distance to closed form {sync['distance']:.2e}"
            )
            print("between-graph replication (one client per worker, asynchronous):")
        asyn = between_graph(cluster, x, y, lam, learning_rate, steps, init, resident)
        asyn["distance"] = float(np.linalg.norm(asyn["beta"] - target) / np.linalg.norm(target))
        if verbose:
            for i, r in sorted(asyn["replicas"].items()):
                print(f"  replica {i}: final cost on its shard {r['cost']:.6f}")
            print(
                f"  {2 * steps} steps in {asyn['seconds']:.2f} s "
                f"({asyn['steps_per_second']:.0f} steps/s together); distance to "
                f"closed form {asyn['distance']:.2e}"
            )
        return {"in_graph": sync, "between_graph": asyn, "target": target}
    finally:
        if own:
            cluster.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument(
        "--resident",
        action="store_true",
        help="run steps on the resident path (no scheduler round trip)",
    )
    args = parser.parse_args()
    main(steps=args.steps, resident=args.resident)
