"""TF1 parity: small linear-algebra programs run with ``tensorflow.compat.v1`` and with
``import dataflow as tf`` give the same values and gradients."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow
from dataflow.testing.tf_parity import assert_same_fetches, run_in_fresh_graph

pytestmark = pytest.mark.tf

RNG = np.random.default_rng(42)


@pytest.fixture(scope="module")
def tf1():
    tf = pytest.importorskip("tensorflow")
    return tf.compat.v1


def run_both(tf1, program, feeds):
    """Runs ``program(tf) -> (placeholders dict, fetches)`` in both libraries."""

    def build(tf):
        placeholders, fetches = program(tf)
        return fetches, {placeholders[k]: v for k, v in feeds.items()}

    return [run_in_fresh_graph(lib, build) for lib in (tf1, dataflow)]


def assert_same(ours, theirs, rtol):
    assert_same_fetches(ours, theirs, rtol=rtol, atol=rtol)


def test_dense_layer_float32(tf1):
    def program(tf):
        x = tf.placeholder(tf.float32, [None, 4])
        w = tf.constant(RNG_W, name="w")
        h = tf.matmul(x, w, transpose_b=True)
        y = h @ tf.constant(RNG_V)
        loss = tf.reduce_sum(y * y)
        return {"x": x}, [y, loss] + tf.gradients(loss, [x, w])

    theirs, ours = run_both(tf1, program, {"x": RNG.standard_normal((5, 4)).astype(np.float32)})
    assert_same(ours, theirs, 1e-5)


RNG_W = RNG.standard_normal((3, 4)).astype(np.float32)
RNG_V = RNG.standard_normal((3, 2)).astype(np.float32)


def test_batched_matmul_broadcast_and_adjoint(tf1):
    def program(tf):
        a = tf.placeholder(tf.float64, [2, 1, 4, 3])
        b = tf.placeholder(tf.float64, [3, 4, 5])
        c = tf.matmul(a, b, adjoint_a=True)
        d = tf.matmul(c, c, transpose_b=True)
        loss = tf.reduce_sum(tf.sin(d))
        return {"a": a, "b": b}, [c, d] + tf.gradients(loss, [a, b])

    theirs, ours = run_both(
        tf1, program, {"a": RNG.standard_normal((2, 1, 4, 3)), "b": RNG.standard_normal((3, 4, 5))}
    )
    assert_same(ours, theirs, 1e-10)


def test_einsum_and_tensordot(tf1):
    def program(tf):
        a = tf.placeholder(tf.float64, [2, 3, 4])
        b = tf.placeholder(tf.float64, [4, 5])
        e1 = tf.einsum("bij,jk->bik", a, b)
        e2 = tf.einsum("bij,bij->b", a, a)
        e3 = tf.einsum("...j,jk->...k", a, b)
        t1 = tf.tensordot(a, b, 1)
        t2 = tf.tensordot(a, a, [[0, 2], [0, 2]])
        loss = (
            tf.reduce_sum(e1 * e3)
            + tf.reduce_sum(e2)
            + tf.reduce_sum(tf.sin(t1))
            + tf.reduce_sum(t2)
        )
        return {"a": a, "b": b}, [e1, e2, e3, t1, t2] + tf.gradients(loss, [a, b])

    theirs, ours = run_both(
        tf1, program, {"a": RNG.standard_normal((2, 3, 4)), "b": RNG.standard_normal((4, 5))}
    )
    assert_same(ours, theirs, 1e-10)


def test_inverse_det_solve_cholesky_gradients(tf1):
    def program(tf):
        a = tf.placeholder(tf.float64, [2, 3, 3])
        rhs = tf.placeholder(tf.float64, [2, 3, 2])
        spd = tf.matmul(a, a, transpose_b=True) + 3.0 * tf.eye(3, dtype=tf.float64)
        inv = tf.linalg.inv(spd)
        det = tf.linalg.det(spd)
        sol = tf.linalg.solve(spd, rhs)
        sol_adj = tf.matrix_solve(a + 4.0 * tf.eye(3, dtype=tf.float64), rhs, adjoint=True)
        chol = tf.linalg.cholesky(spd)
        loss = (
            tf.reduce_sum(inv * inv)
            + tf.reduce_sum(tf.log(det))
            + tf.reduce_sum(sol)
            + tf.reduce_sum(sol_adj)
            + tf.reduce_sum(tf.sin(chol))
        )
        return {"a": a, "rhs": rhs}, [inv, det, sol, sol_adj, chol] + tf.gradients(loss, [a, rhs])

    theirs, ours = run_both(
        tf1, program, {"a": RNG.standard_normal((2, 3, 3)), "rhs": RNG.standard_normal((2, 3, 2))}
    )
    assert_same(ours, theirs, 1e-9)


def test_cholesky_gradient_of_lower_triangle_input(tf1):
    """Both read only the lower triangle; the gradients are TF's symmetric ones."""

    def program(tf):
        s = tf.placeholder(tf.float64, [4, 4])
        chol = tf.cholesky(s)
        loss = tf.reduce_sum(chol * tf.constant(np.arange(16.0).reshape(4, 4)))
        return {"s": s}, [chol] + tf.gradients(loss, [s])

    m = RNG.standard_normal((4, 4))
    theirs, ours = run_both(tf1, program, {"s": m @ m.T + 4 * np.eye(4)})
    assert_same(ours, theirs, 1e-10)


@pytest.mark.parametrize(
    "ord_, axis, keepdims",
    [
        ("euclidean", None, False),
        ("euclidean", None, True),
        ("fro", [0, 1], False),
        (1, 1, False),
        (2, 0, True),
        (np.inf, -1, False),
        (3, 1, False),
        (1, (0, 1), False),
        (np.inf, (1, 0), True),
    ],
)
def test_norm(tf1, ord_, axis, keepdims):
    def program(tf):
        x = tf.placeholder(tf.float64, [3, 4])
        n = tf.norm(x, ord=ord_, axis=axis, keepdims=keepdims)
        return {"x": x}, [n] + tf.gradients(tf.reduce_sum(n * n), [x])

    theirs, ours = run_both(tf1, program, {"x": RNG.standard_normal((3, 4))})
    assert_same(ours, theirs, 1e-10)


def test_trace_eye_diag_band_transpose(tf1):
    def program(tf):
        x = tf.placeholder(tf.float64, [2, 3, 4])
        out = [
            tf.trace(x),
            tf.linalg.trace(x[:, :, :3]),
            tf.eye(3, 2, batch_shape=[2]),
            tf.eye(2, dtype=tf.float64),
            tf.linalg.diag_part(x),
            tf.linalg.diag(tf.linalg.diag_part(x)),
            tf.linalg.band_part(x, 1, 0),
            tf.linalg.matrix_transpose(x),
            tf.linalg.set_diag(x, tf.ones([2, 3], tf.float64)),
            tf.linalg.matvec(x, tf.ones([4], tf.float64)),
        ]
        loss = (
            tf.reduce_sum(tf.sin(out[0]))
            + tf.reduce_sum(tf.sin(out[5]))
            + tf.reduce_sum(out[6] * out[6])
        )
        return {"x": x}, out + tf.gradients(loss, [x])

    theirs, ours = run_both(tf1, program, {"x": RNG.standard_normal((2, 3, 4))})
    assert_same(ours, theirs, 1e-12)


def test_triangular_and_cholesky_solve(tf1):
    def program(tf):
        a = tf.placeholder(tf.float64, [3, 3])
        b = tf.placeholder(tf.float64, [3, 2])
        lower = tf.linalg.triangular_solve(a, b)
        upper = tf.linalg.triangular_solve(a, b, lower=False, adjoint=True)
        chol = tf.linalg.cholesky(tf.matmul(a, a, transpose_b=True))
        cs = tf.linalg.cholesky_solve(chol, b)
        loss = tf.reduce_sum(lower) + tf.reduce_sum(upper * upper) + tf.reduce_sum(cs)
        return {"a": a, "b": b}, [lower, upper, cs] + tf.gradients(loss, [a, b])

    a = RNG.standard_normal((3, 3)) + 4 * np.eye(3)
    theirs, ours = run_both(tf1, program, {"a": a, "b": RNG.standard_normal((3, 2))})
    assert_same(ours, theirs, 1e-9)


def test_shape_errors_match(tf1):
    for lib in (tf1, dataflow):
        with lib.Graph().as_default():
            with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 4"):
                lib.matmul(
                    lib.placeholder(lib.float32, [2, 3]), lib.placeholder(lib.float32, [4, 5])
                )
            with pytest.raises(ValueError):
                lib.linalg.inv(lib.placeholder(lib.float32, [2, 3]))
