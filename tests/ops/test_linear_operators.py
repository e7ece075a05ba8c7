"""``tf.linalg.LinearOperator*`` against ``tensorflow.compat.v1``'s.

One builder makes the same operators from either library; each operator's methods
(``to_dense``, ``matmul`` with and without ``adjoint``, ``solve``, ``determinant``,
``log_abs_determinant``, ``diag_part``, ``trace``, ...) are evaluated in one TF1 graph
and session per library (module-scoped), and compared value by value, with the static
shapes, dtypes, names and hints. Gradients through ``matmul`` and ``solve`` are compared
with TF's; a user subclass implementing ``_shape``/``_shape_tensor``/``_matmul`` gets
the dense fallbacks; errors raised at graph-build time match TF's classes.
"""

from __future__ import annotations

import numpy as np
import pytest

import dataflow

tf1 = pytest.importorskip("tensorflow.compat.v1")
tf1.disable_eager_execution()

RNG = np.random.default_rng(7)


def _well_conditioned(*shape: int) -> np.ndarray:
    a = RNG.normal(size=shape) * 0.3
    return a + 2.0 * np.eye(shape[-1])


A3 = _well_conditioned(3, 3)
A2 = _well_conditioned(2, 2)
AB = _well_conditioned(2, 3, 3)
B32 = RNG.normal(size=(3, 2))
D3 = np.array([1.5, -2.0, 0.7])
SPD = A3 @ A3.T + np.eye(3)
U = RNG.normal(size=(3, 2))
V = RNG.normal(size=(3, 2))
SPEC_C = (RNG.normal(size=4) + 1j * RNG.normal(size=4) + 3.0).astype(np.complex128)


def build(lib):
    """The same operators from ``lib`` (``dataflow`` or ``tensorflow.compat.v1``)."""
    L = lib.linalg
    c = lib.constant
    full = L.LinearOperatorFullMatrix(c(A3))
    diag = L.LinearOperatorDiag(c(D3))
    return {
        "full": full,
        "full_batch": L.LinearOperatorFullMatrix(c(AB)),
        "full_f32": L.LinearOperatorFullMatrix(c(A3.astype(np.float32))),
        "spd": L.LinearOperatorFullMatrix(c(SPD), is_self_adjoint=True, is_positive_definite=True),
        "diag": diag,
        "diag_c": L.LinearOperatorDiag(c(D3 + 1j * np.array([0.5, -1.0, 2.0]))),
        "householder_c": L.LinearOperatorHouseholder(c(np.array([1.0 + 1j, -2.0, 0.5j]))),
        "identity": L.LinearOperatorIdentity(3, batch_shape=[2], dtype=lib.float64),
        "scaled": L.LinearOperatorScaledIdentity(3, c(np.array([2.0, -0.5]))),
        "zeros": L.LinearOperatorZeros(3, dtype=lib.float64),
        "tril": L.LinearOperatorLowerTriangular(c(A3)),
        "householder": L.LinearOperatorHouseholder(c(np.array([1.0, -2.0, 0.5]))),
        "perm": L.LinearOperatorPermutation(
            c(np.array([2, 0, 1], dtype=np.int32)), dtype=lib.float64
        ),
        "toeplitz": L.LinearOperatorToeplitz(
            c(np.array([3.0, 1.0, 0.5])), c(np.array([9.0, -1.0, 0.25]))
        ),
        "tridiag": L.LinearOperatorTridiag(
            c(np.array([[1.0, 0.5, 9.0], [4.0, 5.0, 6.0], [9.0, -1.0, 2.0]]))
        ),
        "circulant": L.LinearOperatorCirculant(
            c(np.array([3.0, 1.0, 1.0])), input_output_dtype=lib.float64
        ),
        "circulant_c": L.LinearOperatorCirculant(c(SPEC_C), input_output_dtype=lib.complex128),
        "circulant2d": L.LinearOperatorCirculant2D(
            c(np.array([[4.0, 1.0, 1.0], [2.0, 0.5, 0.5]])), input_output_dtype=lib.float64
        ),
        "circulant3d": L.LinearOperatorCirculant3D(
            c(np.arange(1.0, 9.0).reshape(2, 2, 2)), input_output_dtype=lib.float64
        ),
        "adjoint": L.LinearOperatorAdjoint(full),
        "inversion": L.LinearOperatorInversion(full),
        "composition": L.LinearOperatorComposition([full, diag]),
        "block_diag": L.LinearOperatorBlockDiag(
            [L.LinearOperatorFullMatrix(c(A2)), L.LinearOperatorFullMatrix(c(AB))]
        ),
        "block_lower": L.LinearOperatorBlockLowerTriangular(
            [
                [L.LinearOperatorFullMatrix(c(A2))],
                [L.LinearOperatorFullMatrix(c(B32)), L.LinearOperatorFullMatrix(c(A3))],
            ]
        ),
        "kronecker": L.LinearOperatorKronecker(
            [L.LinearOperatorFullMatrix(c(A2)), L.LinearOperatorFullMatrix(c(AB))]
        ),
        "low_rank_spd": L.LinearOperatorLowRankUpdate(
            L.LinearOperatorDiag(c(np.abs(D3) + 0.5), is_positive_definite=True),
            c(U),
            diag_update=c(np.array([0.5, 2.0])),
            is_diag_update_positive=True,
        ),
        "low_rank": L.LinearOperatorLowRankUpdate(full, c(U), v=c(V)),
    }


SINGULAR = {"zeros"}
CORE = ("to_dense", "matmul", "diag_part", "trace", "determinant", "log_abs_determinant", "solve")
XS: dict = {}


def methods(op, lib, key, extras):
    """Tensors of ``op``'s methods, keyed by method: the core ones (compared with TF's),
    and with ``extras`` the variants checked against TF's dense matrix in numpy."""
    np_dtype = op.dtype.as_numpy_dtype
    n = op.domain_dimension.value
    x = RNG.normal(size=(n, 2)).astype(np_dtype)
    XS[key] = x
    out = {
        "to_dense": op.to_dense(),
        "matmul": op.matmul(lib.constant(x)),
        "diag_part": op.diag_part(),
        "trace": op.trace(),
        "determinant": op.determinant(),
        "log_abs_determinant": op.log_abs_determinant(),
    }
    if key not in SINGULAR:
        out["solve"] = op.solve(lib.constant(x))
    if extras:
        out["matmul_adjoint"] = op.matmul(lib.constant(x), adjoint=True)
        out["matmul_adjoint_arg"] = op.matmul(lib.constant(x.T.copy()), adjoint_arg=True)
        out["matvec"] = op.matvec(lib.constant(x[:, 0].copy()))
        out["shape_tensor"] = op.shape_tensor()
        if key not in SINGULAR:
            out["solve_adjoint"] = op.solve(lib.constant(x), adjoint=True)
            out["solvevec"] = op.solvevec(lib.constant(x[:, 0].copy()))
    return out


def _evaluate(lib, session_cls, graph, extras):
    with graph.as_default():
        global RNG
        RNG = np.random.default_rng(11)
        ops = build(lib)
        tensors = {k: methods(op, lib, k, extras) for k, op in ops.items()}
        statics = {
            k: (
                op.shape.as_list(),
                op.dtype.name,
                op.name,
                op.is_non_singular,
                op.is_self_adjoint,
                op.is_positive_definite,
                op.is_square,
            )
            for k, op in ops.items()
        }
        with session_cls(graph=graph) as sess:
            values = sess.run(tensors)
    return values, statics


@pytest.fixture(scope="module")
def results():
    ours = _evaluate(dataflow, dataflow.Session, dataflow.Graph(), extras=True)
    theirs = _evaluate(tf1, tf1.Session, tf1.Graph(), extras=False)
    return ours, theirs


def _close(a, b, what):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, what
    assert a.dtype == b.dtype, what
    tol = 2e-4 if a.dtype in (np.float32, np.complex64) else 1e-9
    scale = max(1.0, float(np.max(np.abs(b), initial=0.0)))
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol * scale, err_msg=what)


OPERATORS = [
    "full",
    "full_batch",
    "full_f32",
    "spd",
    "diag",
    "diag_c",
    "householder_c",
    "identity",
    "scaled",
    "zeros",
    "tril",
    "householder",
    "perm",
    "toeplitz",
    "tridiag",
    "circulant",
    "circulant_c",
    "circulant2d",
    "circulant3d",
    "adjoint",
    "inversion",
    "composition",
    "block_diag",
    "block_lower",
    "kronecker",
    "low_rank_spd",
    "low_rank",
]


@pytest.mark.parametrize("key", OPERATORS)
def test_methods_match_tf(results, key):
    (ours, _), (theirs, _) = results
    assert set(theirs[key]) == {m for m in CORE if m != "solve" or key not in SINGULAR}
    for method, value in theirs[key].items():
        _close(ours[key][method], value, f"{key}.{method}")


def _h(m):
    return np.conj(np.swapaxes(m, -1, -2))


@pytest.mark.parametrize("key", OPERATORS)
def test_method_variants_match_tf_dense_matrix(results, key):
    (ours, _), (theirs, statics) = results
    dense, x, got = theirs[key]["to_dense"], XS[key], ours[key]
    _close(got["matmul_adjoint"], _h(dense) @ x, f"{key}.matmul(adjoint=True)")
    _close(got["matmul_adjoint_arg"], dense @ np.conj(x), f"{key}.matmul(adjoint_arg=True)")
    _close(got["matvec"], (dense @ x[:, :1])[..., 0], f"{key}.matvec")
    np.testing.assert_array_equal(got["shape_tensor"], statics[key][0])
    if key not in SINGULAR:
        x_b = np.broadcast_to(x, dense.shape[:-2] + x.shape)
        _close(got["solve_adjoint"], np.linalg.solve(_h(dense), x_b), f"{key}.solve(adjoint=True)")
        _close(got["solvevec"], np.linalg.solve(dense, x_b[..., :1])[..., 0], f"{key}.solvevec")


@pytest.mark.parametrize("key", OPERATORS)
def test_static_facts_match_tf(results, key):
    (_, ours), (_, theirs) = results
    assert ours[key] == theirs[key]


def _gradients(lib, session_cls, graph):
    """Gradients to the operators' parameters through ``matmul`` and ``solve``."""
    L = lib.linalg
    with graph.as_default():
        a = lib.constant(A3)
        a2 = lib.constant(A2)
        u = lib.constant(U)
        spec = lib.constant(np.array([3.0, 1.0, 1.0]))
        tri = lib.constant(np.array([[1.0, 0.5, 9.0], [4.0, 5.0, 6.0], [9.0, -1.0, 2.0]]))
        x3 = lib.constant(np.linspace(-1.0, 1.0, 6).reshape(3, 2))
        x6 = lib.constant(np.linspace(-1.0, 2.0, 12).reshape(2, 6, 1))
        w3 = lib.constant(np.arange(6.0).reshape(3, 2))
        kron = L.LinearOperatorKronecker(
            [L.LinearOperatorFullMatrix(a2), L.LinearOperatorFullMatrix(a)]
        )
        low = L.LinearOperatorLowRankUpdate(L.LinearOperatorFullMatrix(a), u)
        circ = L.LinearOperatorCirculant(spec, input_output_dtype=lib.float64)
        tridiag = L.LinearOperatorTridiag(tri)
        losses = {
            "full_matmul": lib.reduce_sum(w3 * L.LinearOperatorFullMatrix(a).matmul(x3)),
            "full_solve": lib.reduce_sum(
                w3 * L.LinearOperatorFullMatrix(a).solve(x3, adjoint=True)
            ),
            "kron_matmul": lib.reduce_sum(kron.matmul(x6) ** 2),
            "kron_solve": lib.reduce_sum(kron.solve(x6)),
            "low_rank_solve": lib.reduce_sum(w3 * low.solve(x3)),
            "low_rank_logdet": low.log_abs_determinant(),
            "circulant_matmul": lib.reduce_sum(w3 * circ.matmul(x3)),
            "tridiag_solve": lib.reduce_sum(w3 * tridiag.solve(x3)),
        }
        params = {
            "full_matmul": [a],
            "full_solve": [a],
            "kron_matmul": [a2, a],
            "kron_solve": [a2, a],
            "low_rank_solve": [a, u],
            "low_rank_logdet": [a, u],
            "circulant_matmul": [spec],
            "tridiag_solve": [tri],
        }
        grads = {k: lib.gradients(losses[k], params[k]) for k in losses}
        with session_cls(graph=graph) as sess:
            return sess.run(grads)


def test_gradients_through_matmul_and_solve_match_tf():
    ours = _gradients(dataflow, dataflow.Session, dataflow.Graph())
    theirs = _gradients(tf1, tf1.Session, tf1.Graph())
    assert set(ours) == set(theirs)
    for key, values in theirs.items():
        for i, value in enumerate(values):
            _close(ours[key][i], value, f"d {key} / param {i}")


def test_user_subclass_gets_the_dense_fallbacks():
    L = dataflow.linalg

    class Doubled(L.LinearOperator):
        """``2 M`` for a matrix ``M``, from ``_shape``/``_shape_tensor``/``_matmul``."""

        def __init__(self, matrix):
            self._m = dataflow.convert_to_tensor(matrix)
            super().__init__(dtype=self._m.dtype, is_square=True, name="Doubled")

        def _shape(self):
            return self._m.shape

        def _shape_tensor(self):
            return dataflow.shape(self._m)

        def _matmul(self, x, adjoint=False, adjoint_arg=False):
            return 2.0 * dataflow.matmul(self._m, x, adjoint_a=adjoint, adjoint_b=adjoint_arg)

    with dataflow.Graph().as_default():
        op = Doubled(AB)
        rhs = np.linspace(0.5, 2.0, 6).reshape(3, 2)
        fetch = {
            "dense": op.to_dense(),
            "det": op.determinant(),
            "lad": op.log_abs_determinant(),
            "solve": op.solve(rhs),
            "diag": op.diag_part(),
            "trace": op.trace(),
            "at": op @ rhs,
            "adjoint": op.adjoint().to_dense(),
            "inverse": op.inverse().matmul(rhs),
        }
        assert op.shape.as_list() == [2, 3, 3] and op.batch_shape.as_list() == [2]
        assert op.domain_dimension.value == 3 and op.tensor_rank == 3
        with dataflow.Session() as sess:
            got = sess.run(fetch)
    m = 2.0 * AB
    _close(got["dense"], m, "to_dense")
    _close(got["det"], np.linalg.det(m), "determinant")
    _close(got["lad"], np.linalg.slogdet(m)[1], "log_abs_determinant")
    _close(got["solve"], np.linalg.solve(m, np.broadcast_to(rhs, (2, 3, 2))), "solve")
    _close(got["diag"], np.diagonal(m, axis1=-2, axis2=-1), "diag_part")
    _close(got["trace"], np.trace(m, axis1=-2, axis2=-1), "trace")
    _close(got["at"], m @ rhs, "@")
    _close(got["adjoint"], _h(m), "adjoint")
    _close(got["inverse"], np.linalg.solve(m, np.broadcast_to(rhs, (2, 3, 2))), "inverse")


ERRORS = [
    (
        "real diag not self-adjoint",
        ValueError,
        lambda L, c: L.LinearOperatorDiag(c([1.0, 2.0]), is_self_adjoint=False),
    ),
    ("identity not square", ValueError, lambda L, c: L.LinearOperatorIdentity(3, is_square=False)),
    ("negative num_rows", ValueError, lambda L, c: L.LinearOperatorIdentity(-1)),
    (
        "pd but singular",
        ValueError,
        lambda L, c: L.LinearOperatorFullMatrix(
            c(A3), is_positive_definite=True, is_non_singular=False
        ),
    ),
    ("matrix of rank 1", ValueError, lambda L, c: L.LinearOperatorFullMatrix(c([1.0, 2.0]))),
    ("integer matrix", TypeError, lambda L, c: L.LinearOperatorFullMatrix(c([[1, 2], [3, 4]]))),
    (
        "matmul dims",
        ValueError,
        lambda L, c: L.LinearOperatorFullMatrix(c(A3)).matmul(c(np.ones((2, 1)))),
    ),
    (
        "matmul dtype",
        TypeError,
        lambda L, c: L.LinearOperatorFullMatrix(c(A3)).matmul(c(np.ones((3, 1), np.float32))),
    ),
    (
        "zeros solve",
        NotImplementedError,
        lambda L, c: L.LinearOperatorZeros(3).solve(c(np.ones((3, 1), np.float32))),
    ),
    ("zeros inverse", ValueError, lambda L, c: L.LinearOperatorZeros(3).inverse()),
    (
        "cholesky without hints",
        ValueError,
        lambda L, c: L.LinearOperatorFullMatrix(c(A3)).cholesky(),
    ),
    (
        "householder pd",
        ValueError,
        lambda L, c: L.LinearOperatorHouseholder(c([1.0, 2.0]), is_positive_definite=True),
    ),
    (
        "composition dtypes",
        TypeError,
        lambda L, c: L.LinearOperatorComposition(
            [L.LinearOperatorDiag(c([1.0])), L.LinearOperatorDiag(c(np.ones(1)))]
        ),
    ),
    (
        "real circulant not self-adjoint",
        ValueError,
        lambda L, c: L.LinearOperatorCirculant(c([1.0, 2.0]), is_self_adjoint=False),
    ),
    ("permutation float perm", TypeError, lambda L, c: L.LinearOperatorPermutation(c([1.0, 0.0]))),
]


@pytest.mark.parametrize("what,error,make", ERRORS, ids=[e[0] for e in ERRORS])
def test_build_time_errors_match_tf(what, error, make):
    for lib in (dataflow, tf1):
        with lib.Graph().as_default(), pytest.raises(error):
            make(lib.linalg, lib.constant)


def test_structured_results_of_operator_algebra():
    L = dataflow.linalg
    with dataflow.Graph().as_default():
        c = dataflow.constant
        diag = L.LinearOperatorDiag(c(D3))
        full = L.LinearOperatorFullMatrix(c(A3))
        eye = L.LinearOperatorIdentity(3, dtype=dataflow.float64)
        assert type(diag.inverse()) is L.LinearOperatorDiag
        assert type(diag.matmul(diag)) is L.LinearOperatorDiag
        assert diag.adjoint() is diag and eye.inverse() is eye
        assert eye.matmul(full) is full and full.matmul(eye) is full
        assert (
            type(full.adjoint()) is L.LinearOperatorAdjoint
            and full.H.name == "LinearOperatorFullMatrix_adjoint"
        )
        assert full.adjoint().adjoint() is full
        assert type(full @ diag) is L.LinearOperatorComposition
        spd = L.LinearOperatorFullMatrix(c(SPD), is_self_adjoint=True, is_positive_definite=True)
        chol = spd.cholesky()
        assert type(chol) is L.LinearOperatorLowerTriangular
        with dataflow.Session() as sess:
            got = sess.run([chol.to_dense(), (full @ diag).to_dense(), full.inverse().to_dense()])
    _close(got[0], np.linalg.cholesky(SPD), "cholesky")
    _close(got[1], A3 @ np.diag(D3), "composition")
    _close(got[2], np.linalg.inv(A3), "inverse")


def _dynamic_family(L, a, d, n):
    lib = dataflow
    return {
        "full": L.LinearOperatorFullMatrix(a),
        "diag": L.LinearOperatorDiag(d),
        "identity": L.LinearOperatorIdentity(n, dtype=lib.float64),
        "kronecker": L.LinearOperatorKronecker(
            [L.LinearOperatorFullMatrix(a), L.LinearOperatorDiag(d)]
        ),
        "block_diag": L.LinearOperatorBlockDiag(
            [L.LinearOperatorFullMatrix(a), L.LinearOperatorDiag(d)]
        ),
        "toeplitz": L.LinearOperatorToeplitz(d, d[::-1]),
        "circulant": L.LinearOperatorCirculant(
            lib.cast(d, lib.complex128), input_output_dtype=lib.complex128
        ),
    }


def test_unknown_static_shapes_give_the_values_of_known_ones():
    L = dataflow.linalg
    with dataflow.Graph().as_default():
        a_ph = dataflow.placeholder(dataflow.float64, [None, None, None])
        d_ph = dataflow.placeholder(dataflow.float64, [None])
        n_ph = dataflow.placeholder(dataflow.int32, [])
        unknown = _dynamic_family(L, a_ph, d_ph, n_ph)
        known = _dynamic_family(L, dataflow.constant(AB), dataflow.constant(D3), 3)
        assert unknown["full"].shape.as_list() == [None, None, None]

        def fetch(op):
            x = dataflow.cast(dataflow.ones(op.shape_tensor()[-1:]), op.dtype)
            return [op.shape_tensor(), op.to_dense(), op.determinant(), op.trace(), op.matvec(x)]

        with dataflow.Session() as sess:
            got = sess.run(
                (
                    {k: fetch(op) for k, op in unknown.items()},
                    {k: fetch(op) for k, op in known.items()},
                ),
                {a_ph: AB, d_ph: D3, n_ph: 3},
            )
    for key in unknown:
        for i, (u, k) in enumerate(zip(*[g[key] for g in got])):
            _close(u, k, f"{key} output {i}")


def test_add_to_tensor_eigvals_cond_and_run_time_checks():
    L = dataflow.linalg
    c = dataflow.constant
    m = np.arange(9.0).reshape(3, 3)
    with dataflow.Graph().as_default():
        ops = {
            "diag": L.LinearOperatorDiag(c(D3)),
            "identity": L.LinearOperatorIdentity(3, dtype=dataflow.float64),
            "scaled": L.LinearOperatorScaledIdentity(3, c(2.5, dtype=dataflow.float64)),
            "full": L.LinearOperatorFullMatrix(c(A3)),
        }
        spd = L.LinearOperatorFullMatrix(c(SPD), is_self_adjoint=True, is_positive_definite=True)
        added = {k: op.add_to_tensor(c(m)) for k, op in ops.items()}
        singular = L.LinearOperatorDiag(c(np.array([1.0, 0.0])))
        not_symmetric = L.LinearOperatorFullMatrix(c(A3))
        checks_ok = [ops["diag"].assert_non_singular(), spd.assert_positive_definite()]
        checks_ok += [ops["full"].assert_non_singular(), spd.assert_self_adjoint()]
        with dataflow.Session() as sess:
            got = sess.run(
                {
                    "added": added,
                    "eigvals": spd.eigvals(),
                    "cond": ops["full"].cond(),
                    "dense": {k: op.to_dense() for k, op in ops.items()},
                }
            )
            sess.run(checks_ok)
            # Known values fail when the check is built (as TF's), others when it runs.
            for bad in (singular.assert_non_singular, not_symmetric.assert_self_adjoint):
                with pytest.raises(dataflow.errors.InvalidArgumentError):
                    sess.run(bad())
    for key, dense in got["dense"].items():
        _close(got["added"][key], dense + m, f"{key}.add_to_tensor")
    _close(got["eigvals"], np.linalg.eigvalsh(SPD), "eigvals")
    _close(got["cond"], np.linalg.cond(A3), "cond")


def test_batched_arguments_broadcast_against_the_operators_batch():
    with dataflow.Graph().as_default():
        ops = build(dataflow)
        xs = {
            k: np.random.default_rng(3).normal(size=(2, 1, op.domain_dimension.value, 2))
            for k, op in ops.items()
        }
        xs = {k: x.astype(ops[k].dtype.as_numpy_dtype) for k, x in xs.items()}
        fetch = {
            k: {
                "dense": op.to_dense(),
                "matmul": op.matmul(dataflow.constant(xs[k])),
                **({} if k in SINGULAR else {"solve": op.solve(dataflow.constant(xs[k]))}),
            }
            for k, op in ops.items()
        }
        with dataflow.Session() as sess:
            got = sess.run(fetch)
    for key, values in got.items():
        dense, x = values["dense"], xs[key]
        batch = np.broadcast_shapes(dense.shape[:-2], x.shape[:-2])
        _close(values["matmul"], dense @ x, f"{key}.matmul of a batch")
        if "solve" in values:
            full = np.broadcast_to(dense, batch + dense.shape[-2:])
            _close(
                values["solve"],
                np.linalg.solve(full, np.broadcast_to(x, batch + x.shape[-2:])),
                f"{key}.solve of a batch",
            )
