"""The linear-algebra ops beyond their op-table rows (``tests/ops/specs_linalg.py``):
the gradient graphs of linear ops, dtypes, operators, unknown and broadcast shapes,
build-time errors, and gradients of gradient rules to third order.

Matrices to invert or factor are made well conditioned (``A A^T + n I``); Cholesky
cases symmetrize their input inside the tested function, since the op reads only the
lower triangle while ``autograd``'s rule assumes symmetry.
"""

from __future__ import annotations

import autograd.numpy as anp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

import dataflow as tf
from dataflow.testing.grad_check import check_forward, check_op

from .. import specs_linalg

RNG = np.random.default_rng(1234)


def rand(*shape):
    return RNG.standard_normal(shape)


def spd(*shape):
    """Well-conditioned symmetric positive-definite matrices of shape [..., n, n]."""
    a = RNG.standard_normal(shape)
    n = shape[-1]
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def well_conditioned(*shape):
    n = shape[-1]
    return RNG.standard_normal(shape) + 2 * n * np.eye(n)


def sym(x):
    return 0.5 * (x + anp.swapaxes(x, -1, -2))


def tf_sym(x):
    return 0.5 * (x + tf.linalg.matrix_transpose(x))


def ref_matmul(ta=False, tb=False):
    def f(a, b):
        a = anp.swapaxes(a, -1, -2) if ta else a
        b = anp.swapaxes(b, -1, -2) if tb else b
        return anp.matmul(a, b)

    return f


def diagonal(x):
    """Main diagonals of the last two axes (autograd differentiates few diagonal forms)."""
    k = min(x.shape[-2:])
    return anp.sum(x[..., :k, :k] * anp.eye(k), axis=-1)


# --- the gradient ops of linear ops ---------------------------------------------------------
# The table's rows checked to first order only (tests/ops/specs_linalg.py) are linear in
# their single input.
LINEAR = [row for row in specs_linalg.ROWS if row.grad == 1]


@pytest.mark.parametrize("row", LINEAR, ids=[r.name for r in LINEAR])
def test_gradient_graph_of_linear_ops(row):
    """The gradient ops of linear ops, as functions of the upstream gradient ``u``, are
    themselves differentiable (their gradients are checked against autograd's VJP)."""
    import autograd

    build, reference = row.builder(tf), row.reference
    x, *rest = row.args

    def ours(u):
        xt = tf.constant(x)
        return tf.gradients(build(xt, *[tf.constant(r) for r in rest]), xt, grad_ys=u)[0]

    def theirs(u):
        return autograd.make_vjp(lambda z: reference(z, *rest))(x)[0](u)

    check_op(ours, theirs, [rand(*np.shape(reference(x, *rest)))], order=1)


# --- dtypes and op types ------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.int64])
def test_matmul_dtypes(dtype):
    a = (RNG.standard_normal((3, 4)) * 3).astype(dtype)
    b = (RNG.standard_normal((4, 2)) * 3).astype(dtype)
    got = check_forward(
        lambda x, y: tf.matmul(x, y),
        lambda x, y: x @ y,
        [a, b],
        rtol=1e-2 if dtype == np.float16 else 1e-6,
    )
    assert got.dtype == dtype


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_lapack_ops_keep_dtype(dtype):
    a = spd(3, 3).astype(dtype)
    b = RNG.standard_normal((3, 2)).astype(dtype)
    tol = 1e-2 if dtype == np.float16 else 1e-4

    def build(x, y):
        return [tf.linalg.inv(x), tf.linalg.det(x), tf.linalg.solve(x, y), tf.linalg.cholesky(x)]

    def ref(x, y):
        x64, y64 = x.astype(np.float64), y.astype(np.float64)
        return [
            np.linalg.inv(x64).astype(dtype),
            np.asarray(np.linalg.det(x64), dtype),
            np.linalg.solve(x64, y64).astype(dtype),
            np.linalg.cholesky(x64).astype(dtype),
        ]

    got = check_forward(build, ref, [a, b], rtol=tol, atol=tol)
    assert all(g.dtype == dtype for g in got)


def test_complex_matmul_adjoint():
    a = rand(2, 3, 4) + 1j * rand(2, 3, 4)
    b = rand(2, 3, 5) + 1j * rand(2, 3, 5)
    check_forward(
        lambda x, y: tf.matmul(x, y, adjoint_a=True),
        lambda x, y: np.conj(np.swapaxes(x, -1, -2)) @ y,
        [a, b],
    )
    a2, b2 = a[0], b[0]
    check_forward(
        lambda x, y: tf.matmul(x, y, adjoint_a=True), lambda x, y: np.conj(x.T) @ y, [a2, b2]
    )
    check_forward(lambda x, y: tf.matmul(x, y, transpose_a=True), lambda x, y: x.T @ y, [a2, b2])


def test_op_types():
    a = tf.placeholder(tf.float32, [3, 4])
    b = tf.placeholder(tf.float32, [4, 5])
    assert tf.matmul(a, b).op.type == "MatMul"
    assert (a @ b).op.type == "MatMul"
    c = tf.placeholder(tf.float32, [2, 4, 5])
    assert tf.matmul(a, c).op.type == "BatchMatMulV2"
    assert tf.matmul(a, tf.placeholder(tf.float32)).op.type == "BatchMatMulV2"
    y = tf.matmul(a, b, transpose_a=False, transpose_b=False)
    ga, gb = tf.gradients(y, [a, b])
    assert ga.op.type == "MatMul" and gb.op.type == "MatMul"
    assert ga.op.get_attr("transpose_b") and gb.op.get_attr("transpose_a")


def test_matmul_operator_with_arrays(sess):
    a = tf.placeholder(tf.float64, [2, 3])
    b = np.arange(6.0).reshape(3, 2)
    left = np.arange(4.0).reshape(2, 2)
    out = sess.run([a @ b, left @ a], {a: np.ones((2, 3))})
    np.testing.assert_allclose(out[0], np.ones((2, 3)) @ b)
    np.testing.assert_allclose(out[1], left @ np.ones((2, 3)))


def test_matmul_operator_with_variables(sess):
    v = tf.Variable(np.arange(6.0).reshape(2, 3))
    x = tf.constant(np.ones((3, 2)))
    left, right = v @ x, tf.ones([2, 2], tf.float64) @ v
    grad = tf.gradients(tf.reduce_sum(left) + tf.reduce_sum(right), v)[0]
    sess.run(tf.global_variables_initializer())
    out = sess.run([left, right, grad])
    np.testing.assert_allclose(out[0], np.arange(6.0).reshape(2, 3) @ np.ones((3, 2)))
    np.testing.assert_allclose(out[1], np.ones((2, 2)) @ np.arange(6.0).reshape(2, 3))
    np.testing.assert_allclose(out[2], np.full((2, 3), 4.0))


def test_unknown_shapes_run_and_differentiate(sess):
    a = tf.placeholder(tf.float64)
    b = tf.placeholder(tf.float64, [None, None, 2])
    y = tf.matmul(a, b)
    assert y.shape.rank is None
    ga, gb = tf.gradients(tf.reduce_sum(y), [a, b])
    av, bv = rand(3, 4), rand(5, 4, 2)
    out = sess.run([y, ga, gb], {a: av, b: bv})
    np.testing.assert_allclose(out[0], av @ bv)
    np.testing.assert_allclose(out[1], (np.ones((5, 3, 2)) @ np.swapaxes(bv, -1, -2)).sum(axis=0))
    np.testing.assert_allclose(
        out[2], np.swapaxes(np.broadcast_to(av, (5, 3, 4)), -1, -2) @ np.ones((5, 3, 2))
    )


def test_static_shapes():
    a = tf.placeholder(tf.float32, [None, 3, 4])
    b = tf.placeholder(tf.float32, [7, 1, 4, 5])
    assert tf.matmul(a, b).shape.as_list() == [7, None, 3, 5]
    assert tf.einsum("...ij,...jk->...ik", a, b).shape.as_list() == [7, None, 3, 5]
    assert tf.einsum("bij->j", a).shape.as_list() == [4]
    assert tf.tensordot(a, b, [[2], [2]]).shape.as_list() == [None, 3, 7, 1, 5]
    assert tf.linalg.det(tf.placeholder(tf.float32, [2, None, 3])).shape.as_list() == [2]
    assert tf.linalg.inv(tf.placeholder(tf.float32, [None, 3])).shape.as_list() == [3, 3]
    assert tf.linalg.diag_part(tf.placeholder(tf.float32, [2, 5, 3])).shape.as_list() == [2, 3]
    assert tf.linalg.diag(tf.placeholder(tf.float32, [2, 5])).shape.as_list() == [2, 5, 5]
    assert tf.linalg.trace(tf.placeholder(tf.float32, [2, 5, 5])).shape.as_list() == [2]
    assert tf.norm(tf.placeholder(tf.float32, [2, 5]), axis=1).shape.as_list() == [2]
    assert tf.norm(tf.placeholder(tf.float32, [2, 5])).shape.as_list() == []


# --- build-time shape and argument errors ---------------------------------------------------
def _ph(*shape, dtype=tf.float32):
    return tf.placeholder(dtype, shape)


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda: tf.matmul(_ph(2, 3), _ph(4, 5)), "Dimensions must be equal, but are 3 and 4"),
        (lambda: _ph(2, 3) @ _ph(4, 5), "Dimensions must be equal, but are 3 and 4"),
        (
            lambda: tf.matmul(_ph(2, 3), _ph(2, 5), transpose_a=False),
            "Dimensions must be equal, but are 3 and 2",
        ),
        (
            lambda: tf.matmul(_ph(2, 3), _ph(5, 3), transpose_b=True, transpose_a=True),
            "Dimensions must be equal, but are 2 and 3",
        ),
        (
            lambda: tf.matmul(_ph(6, 2, 3), _ph(6, 4, 5)),
            "Dimensions must be equal, but are 3 and 4",
        ),
        (lambda: tf.matmul(_ph(2, 2, 3), _ph(3, 3, 5)), "batch dimensions"),
        (lambda: tf.matmul(_ph(3), _ph(3, 5)), "rank"),
        (lambda: tf.matmul(_ph(2, 3), _ph(3, 5, dtype=tf.float64)), "float64"),
        (
            lambda: tf.matmul(_ph(2, 3), _ph(3, 2), transpose_a=True, adjoint_a=True),
            "Only one of transpose_a and adjoint_a",
        ),
        (
            lambda: tf.einsum("ij,jk->ik", _ph(2, 3), _ph(4, 5)),
            "Dimensions must be equal, but are 3 and 4",
        ),
        (lambda: tf.einsum("ij,jk->ik", _ph(2, 3)), "names 2 inputs"),
        (lambda: tf.einsum("ij->ik", _ph(2, 3)), "does not appear"),
        (lambda: tf.einsum("ij->ii", _ph(2, 2)), "repeat"),
        (lambda: tf.einsum("ijk->i", _ph(2, 3)), "rank"),
        (lambda: tf.einsum("i1->i", _ph(2, 3)), "Invalid subscripts"),
        (lambda: tf.einsum("...i,...i->...", _ph(2, 3), _ph(4, 3)), "broadcast"),
        (lambda: tf.einsum("...ij->ij", _ph(2, 3, 4)), "no ellipsis"),
        (
            lambda: tf.tensordot(_ph(2, 3), _ph(4, 5), 1),
            "Dimensions must be equal, but are 3 and 4",
        ),
        (lambda: tf.tensordot(_ph(2, 3), _ph(3, 5), [[1, 0], [0]]), "Different number"),
        (lambda: tf.tensordot(_ph(2, 3), _ph(3, 5), 3), "'axes'"),
        (lambda: tf.linalg.inv(_ph(2, 3)), "Dimensions must be equal, but are 2 and 3"),
        (lambda: tf.linalg.inv(_ph(3, 3, dtype=tf.int32)), "float"),
        (lambda: tf.linalg.det(_ph(3)), "rank"),
        (
            lambda: tf.linalg.solve(_ph(3, 3), _ph(4, 2)),
            "Dimensions must be equal, but are 3 and 4",
        ),
        (lambda: tf.linalg.cholesky(_ph(3, 4)), "Dimensions must be equal"),
        (lambda: tf.linalg.set_diag(_ph(3, 4), _ph(4)), "diagonal must have shape"),
        (lambda: tf.norm(_ph(3, 4), ord="nuc"), "'ord' must be a supported vector norm"),
        (lambda: tf.norm(_ph(3, 4), ord=1.5, axis=(0, 1)), "supported matrix norm"),
        (lambda: tf.norm(_ph(3, 4), ord="fro"), "'ord' must be a supported vector norm"),
        (lambda: tf.norm(_ph(3, 4), axis=[1]), "'axis' must be None"),
        (lambda: tf.norm(_ph(3, 4), ord=-1), "'ord'"),
        (lambda: tf.norm(_ph(3, 4), axis=(0, 0)), "distinct"),
    ],
)
def test_build_time_errors(build, message):
    with pytest.raises((ValueError, TypeError), match=message):
        build()


def test_matrix_two_norm_is_not_implemented():
    with pytest.raises(NotImplementedError, match="2-norm"):
        tf.norm(_ph(3, 4), ord=2, axis=(0, 1))


def test_error_names_op_and_shapes():
    with pytest.raises(ValueError) as info:
        tf.matmul(_ph(2, 3), _ph(4, 5), name="dense")
    assert "'dense'" in str(info.value) and "(2, 3)" in str(info.value)


# --- run-time errors ---------------------------------------------------------------------
def test_singular_and_not_positive_definite(sess):
    x = tf.placeholder(tf.float64, [2, 2])
    with pytest.raises(tf.errors.InvalidArgumentError, match="MatrixInverse"):
        sess.run(tf.linalg.inv(x), {x: np.ones((2, 2))})
    with pytest.raises(tf.errors.InvalidArgumentError, match="Cholesky"):
        sess.run(tf.linalg.cholesky(x), {x: -np.eye(2)})


# --- eye --------------------------------------------------------------------------------
def test_eye_static(sess):
    e = tf.eye(3)
    assert e.dtype == tf.float32 and e.shape.as_list() == [3, 3]
    np.testing.assert_array_equal(sess.run(e), np.eye(3))
    r = tf.eye(2, num_columns=4, batch_shape=[3], dtype=tf.float64)
    assert r.shape.as_list() == [3, 2, 4]
    np.testing.assert_array_equal(sess.run(r), np.broadcast_to(np.eye(2, 4), (3, 2, 4)))
    assert tf.get_static_value(e) is not None


def test_eye_dynamic(sess):
    n = tf.placeholder(tf.int32, [])
    batch = tf.placeholder(tf.int32, [2])
    e = tf.eye(n, batch_shape=batch, dtype=tf.float64)
    assert e.shape.as_list() == [None, None, None, None]
    out = sess.run(e, {n: 3, batch: [2, 1]})
    np.testing.assert_array_equal(out, np.broadcast_to(np.eye(3), (2, 1, 3, 3)))
    assert sess.run(tf.eye(n, 2), {n: 3}).shape == (3, 2)


# --- gradients to third order for the fused rules ---------------------------------------------
@pytest.mark.parametrize(
    "build, reference, args",
    [
        (lambda a: tf.linalg.inv(a), anp.linalg.inv, [well_conditioned(3, 3)]),
        (lambda a: tf.linalg.det(a), anp.linalg.det, [well_conditioned(3, 3)]),
        (
            lambda a: tf.linalg.cholesky(tf_sym(a)),
            lambda a: anp.linalg.cholesky(sym(a)),
            [spd(3, 3)],
        ),
        (
            lambda a: tf.einsum("iij,jk->ik", a * a, a[0] * a[0]),
            lambda a: anp.einsum("ji,jk->ik", diagonal(anp.moveaxis(a * a, 2, 0)), a[0] * a[0]),
            [rand(2, 2, 2)],
        ),
    ],
    ids=["inv", "det", "cholesky", "einsum_diag"],
)
def test_gradient_of_gradient_rules(build, reference, args):
    """Checks the gradient graphs themselves (as functions of the input) to 2nd order."""
    import autograd

    u = np.random.default_rng(7).standard_normal(np.shape(reference(*args)))

    def tf_grad(x):
        y = build(x)
        return tf.gradients(y, x, grad_ys=tf.constant(u))[0]

    def ag_grad(x):
        return autograd.grad(lambda z: anp.sum(reference(z) * u))(x)

    check_op(tf_grad, ag_grad, args, rtol=1e-5, atol=1e-7)


# --- hypothesis: broadcasting batch shapes ------------------------------------------------
@st.composite
def batched_matmul_shapes(draw):
    batch = draw(mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=2, max_side=3))
    m, k, n = (draw(st.integers(1, 3)) for _ in range(3))
    ta, tb = draw(st.booleans()), draw(st.booleans())
    sa = batch.input_shapes[0] + ((k, m) if ta else (m, k))
    sb = batch.input_shapes[1] + ((n, k) if tb else (k, n))
    return sa, sb, ta, tb


@settings(max_examples=25, deadline=None)
@given(batched_matmul_shapes())
def test_matmul_broadcasting_hypothesis(shapes):
    sa, sb, ta, tb = shapes
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    check_op(
        lambda x, y: tf.matmul(x, y, transpose_a=ta, transpose_b=tb),
        ref_matmul(ta, tb),
        [a, b],
        order=1,
    )


@settings(max_examples=25, deadline=None)
@given(
    mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3),
    st.sampled_from(
        [
            "...ij,...jk->...ik",
            "...ij,jk->...ik",
            "...ij,...kj->...",
            "i...j,i...j->...i",
            "...i,...i->...",
        ]
    ),
)
def test_einsum_broadcasting_hypothesis(batch, equation):
    rng = np.random.default_rng(1)
    a = rng.standard_normal(_place(equation.split(",")[0], batch.input_shapes[0]))
    b = rng.standard_normal(_place(equation.split(",")[1].split("-")[0], batch.input_shapes[1]))
    check_op(
        lambda x, y: tf.einsum(equation, x, y),
        lambda x, y: anp.einsum(equation, x, y),
        [a, b],
        order=1,
    )


def _place(spec, ellipsis_shape):
    sizes = {"i": 2, "j": 3, "k": 2}
    if "..." not in spec:
        return tuple(sizes[c] for c in spec)
    head, tail = spec.split("...")
    return tuple(sizes[c] for c in head) + tuple(ellipsis_shape) + tuple(sizes[c] for c in tail)


@settings(max_examples=25, deadline=None)
@given(mutually_broadcastable_shapes(num_shapes=2, min_dims=2, max_dims=4, max_side=4))
def test_shape_rule_matches_kernel(shapes):
    """The static rule and the kernel agree: both raise, or the shapes match."""
    sa, sb = shapes.input_shapes
    a = np.ones(sa, np.float32)
    b = np.ones(sb, np.float32)
    try:
        want = np.matmul(a, b).shape
    except ValueError:
        want = None
    graph = tf.Graph()
    with graph.as_default():
        pa, pb = tf.placeholder(tf.float32, sa), tf.placeholder(tf.float32, sb)
        try:
            out = tf.matmul(pa, pb)
        except ValueError:
            assert want is None
            return
        assert want is not None and tuple(out.shape.as_list()) == want
        with tf.Session(config=tf.ConfigProto(debug=True)) as s:
            assert s.run(out, {pa: a, pb: b}).shape == want
