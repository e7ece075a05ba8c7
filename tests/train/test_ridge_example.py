"""``python -m dataflow.examples.ridge``: gradient descent reaches the closed form."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

import dataflow as tf
from dataflow.examples import ridge


def test_ridge_reaches_the_closed_form_solution():
    out = ridge.main(verbose=False)
    assert out["distance"] < 1e-4
    costs = out["costs"]
    assert costs[0] > 5 * costs[-1]
    assert all(b <= a * (1 + 1e-6) for a, b in zip(costs, costs[1:], strict=False))


def test_ridge_gradient_matches_the_formula():
    x, y, _ = ridge.make_data(50, 4, seed=3)
    init = np.arange(4, dtype=np.float32).reshape(4, 1)
    g = ridge.build(4, 0.3, 0.1, init)
    with tf.Session(config=tf.ConfigProto(debug=True)) as sess:
        sess.run(tf.global_variables_initializer())
        grad = sess.run(g["grad"], {g["X"]: x, g["y"]: y})
    x64, y64, b = x.astype(np.float64), y.astype(np.float64), init.astype(np.float64)
    want = -2 / 50 * x64.T @ (y64 - x64 @ b) + 2 * 0.3 * b
    np.testing.assert_allclose(grad, want, rtol=1e-5, atol=1e-5)


def test_ridge_runs_as_a_module():
    proc = subprocess.run(
        [sys.executable, "-m", "dataflow.examples.ridge", "--steps", "200"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    last = proc.stdout.strip().splitlines()[-1]
    assert "relative distance to the closed-form solution" in last
    assert float(last.split("solution ")[1].split()[0]) < 1e-4
