"""Ridge regression by gradient descent: the seed course's demo, in TF1 graph mode.

    cost(beta) = mean((y - X @ beta) ** 2) + lambda * ||beta||^2

``X`` and ``y`` are placeholders fed every step, ``beta`` a variable; ``tf.gradients``
derives the gradient of the cost and ``beta.assign_sub(learning_rate * grad)`` is the
update. The closed-form solution, ``(X^T X / n + lambda I)^-1 X^T y / n``, is what
gradient descent must reach: the script prints the cost falling and the relative
distance ``||beta - beta*|| / ||beta*||``, which ends far below 1e-4.

Run it with ``python -m dataflow.examples.ridge``, or call ``main(steps=...,
verbose=False)``, which returns the final figures.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

import dataflow as tf


def make_data(n: int, p: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Features, targets (float32) and the coefficients they were drawn with."""
    rng = np.random.default_rng(seed)
    # Features on scales from 1 down to 0.3 make the problem mildly ill-conditioned, so
    # gradient descent takes a few hundred steps (as in the course's demo).
    scales = np.logspace(0, np.log10(0.3), p)
    x = (rng.standard_normal((n, p)) * scales).astype(np.float32)
    true_beta = rng.standard_normal((p, 1))
    y = (x @ true_beta + 0.5 * rng.standard_normal((n, 1))).astype(np.float32)
    return x, y, true_beta


def closed_form(x: np.ndarray, y: np.ndarray, lam: float) -> np.ndarray:
    """The ridge solution, in float64: ``(X^T X / n + lam I)^-1 X^T y / n``."""
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    n, p = x64.shape
    return np.linalg.solve(x64.T @ x64 / n + lam * np.eye(p), x64.T @ y64 / n)


def build(p: int, lam: float, learning_rate: float, init: np.ndarray) -> dict[str, Any]:
    """The graph of the demo, in the default graph: placeholders, variable, cost, update."""
    X = tf.placeholder(tf.float32, [None, p], name="X")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    beta = tf.Variable(init, name="beta")
    lam_t = tf.constant(lam, tf.float32, name="lambda")
    y_pred = tf.matmul(X, beta)
    cost = tf.reduce_mean(tf.square(y - y_pred)) + lam_t * tf.reduce_sum(tf.square(beta))
    grad = tf.gradients(cost, [beta])[0]
    assert grad is not None  # the cost depends on beta
    update = beta.assign_sub(learning_rate * grad)
    return {"X": X, "y": y, "beta": beta, "cost": cost, "grad": grad, "update": update}


def main(
    steps: int = 300,
    verbose: bool = True,
    n: int = 2000,
    p: int = 20,
    lam: float = 0.01,
    seed: int = 0,
) -> dict[str, Any]:
    """Fits ridge regression by gradient descent and compares with the closed form.

    Returns:
        ``{"cost": final cost, "distance": relative distance to the closed form,
        "costs": cost per step, "beta": fitted coefficients, "seconds": wall time}``.
    """
    x, y, _ = make_data(n, p, seed)
    target = closed_form(x, y, lam)
    # The step size 1/L, L the largest curvature of the cost: 2 (lambda_max(X^T X/n) + lam).
    curvature = 2 * (np.linalg.eigvalsh(x.astype(np.float64).T @ x / n).max() + lam)
    learning_rate = float(1.0 / curvature)
    init = np.random.default_rng(seed + 1).uniform(-1, 1, (p, 1)).astype(np.float32)

    graph = tf.Graph()
    with graph.as_default():
        g = build(p, lam, learning_rate, init)
        init_op = tf.global_variables_initializer()
    costs: list[float] = []
    start = time.perf_counter()
    with tf.Session(graph=graph) as sess:
        sess.run(init_op)
        feed = {g["X"]: x, g["y"]: y}
        every = max(1, steps // 10)
        for step in range(steps):
            cost, _ = sess.run([g["cost"], g["update"]], feed)
            costs.append(float(cost))
            if verbose and (step % every == 0 or step == steps - 1):
                beta = sess.run(g["beta"])
                distance = float(np.linalg.norm(beta - target) / np.linalg.norm(target))
                print(f"step {step:4d}  cost {cost:.6f}  distance to closed form {distance:.2e}")
        beta = sess.run(g["beta"])
        final_cost = float(sess.run(g["cost"], feed))
    seconds = time.perf_counter() - start
    distance = float(np.linalg.norm(beta - target) / np.linalg.norm(target))
    if verbose:
        print(
            f"final cost {final_cost:.6f}, relative distance to the closed-form "
            f"solution {distance:.2e} ({steps} steps, {seconds:.2f} s)"
        )
    return {
        "cost": final_cost,
        "distance": distance,
        "costs": costs,
        "beta": beta,
        "seconds": seconds,
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--lam", type=float, default=0.01)
    args = parser.parse_args()
    main(steps=args.steps, lam=args.lam)
