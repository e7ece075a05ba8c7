"""Reductions (``reduce_*``, ``argmax``/``argmin``, ``cumsum``, ``count_nonzero``).

One spec table, checked over hypothesis-drawn shapes and every form of ``axis``
(``None``, an int, a negative int, a list or tuple, an empty list, a constant tensor,
and a tensor whose value is unknown while building) with and without ``keepdims``:
forward against ``autograd.numpy``, gradients against ``autograd`` and finite
differences to second order, the static shape against the value. Then dtypes, the
zero-aware ``reduce_prod`` gradient, ties in ``reduce_max``, aliases and errors.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import autograd.numpy as anp
import numpy as np
import pytest
from autograd.scipy.special import logsumexp as ag_logsumexp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes

import dataflow as tf
from dataflow.testing.grad_check import check_forward, check_op

pytestmark = pytest.mark.filterwarnings("ignore:Output seems independent of input")

HYPOTHESIS = settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


@dataclass(frozen=True)
class Reduction:
    name: str
    build: Callable  # build(x, axis=..., keepdims=...)
    ref: Callable  # ref(x, axis: tuple | None, keepdims: bool)
    low: float = -2.0
    high: float = 2.0
    min_side: int = 1
    empty_axis_ok: bool = True


def _signed(rng, shape, low, high):
    if low > 0:  # |x| in [low, high], random sign
        return rng.uniform(low, high, shape) * rng.choice([-1.0, 1.0], shape)
    return rng.uniform(low, high, shape)


REDUCTIONS = [
    Reduction("reduce_sum", tf.reduce_sum, lambda x, a, k: anp.sum(x, axis=a, keepdims=k)),
    Reduction("reduce_mean", tf.reduce_mean, lambda x, a, k: anp.mean(x, axis=a, keepdims=k)),
    Reduction("reduce_max", tf.reduce_max, lambda x, a, k: anp.max(x, axis=a, keepdims=k)),
    Reduction("reduce_min", tf.reduce_min, lambda x, a, k: anp.min(x, axis=a, keepdims=k)),
    Reduction(
        "reduce_prod",
        tf.reduce_prod,
        lambda x, a, k: anp.prod(x, axis=a, keepdims=k),
        low=0.5,
        high=1.5,
    ),
    Reduction(
        "reduce_logsumexp",
        tf.reduce_logsumexp,
        lambda x, a, k: ag_logsumexp(x, axis=a, keepdims=k),
        low=-3.0,
        high=3.0,
    ),
    Reduction(
        "reduce_variance", tf.math.reduce_variance, lambda x, a, k: anp.var(x, axis=a, keepdims=k)
    ),
    Reduction(
        "reduce_std",
        tf.math.reduce_std,
        lambda x, a, k: anp.std(x, axis=a, keepdims=k),
        min_side=2,
        empty_axis_ok=False,
    ),
]

AXIS_FORMS = ["python", "tuple", "constant", "unknown"]


@st.composite
def reduction_cases(draw, spec: Reduction):
    shape = draw(array_shapes(min_dims=1, max_dims=3, min_side=spec.min_side, max_side=3))
    rank = len(shape)
    kind = draw(st.sampled_from(["none", "int", "list"]))
    if kind == "none":
        axis = None
    elif kind == "int":
        axis = draw(st.integers(-rank, rank - 1))
    else:
        dims = draw(
            st.lists(
                st.integers(0, rank - 1),
                unique=True,
                min_size=0 if spec.empty_axis_ok else 1,
                max_size=rank,
            )
        )
        axis = [d - rank if draw(st.booleans()) else d for d in dims]  # some negative
    form = draw(st.sampled_from(AXIS_FORMS))
    return shape, axis, form, draw(st.booleans()), draw(st.integers(0, 2**16))


def _axis_arg(axis, form: str):
    """``axis`` in one of the forms a user may pass it."""
    if axis is None or form == "python":
        return axis
    if form == "tuple":
        return tuple(axis) if isinstance(axis, list) else axis
    value = tf.constant(axis, dtype=tf.int32)
    if form == "constant":
        return value
    # A tensor whose value is only known when the step runs.
    return tf.placeholder_with_default(value, shape=None)


def _np_axis(axis):
    return tuple(axis) if isinstance(axis, list) else axis


@pytest.mark.parametrize("spec", REDUCTIONS, ids=[s.name for s in REDUCTIONS])
def test_reduction_forward_and_gradients(spec: Reduction) -> None:
    @HYPOTHESIS
    @given(case=reduction_cases(spec))
    def run(case) -> None:
        shape, axis, form, keepdims, seed = case
        x = _signed(np.random.default_rng(seed), shape, spec.low, spec.high)
        want_shape = np.shape(spec.ref(x, _np_axis(axis), keepdims))

        def build(t):
            out = spec.build(t, axis=_axis_arg(axis, form), keepdims=keepdims)
            if form == "unknown" and axis is not None:
                if keepdims and spec.name in ("reduce_sum", "reduce_max"):
                    assert out.shape.as_tuple() == (None,) * len(shape)
                elif not keepdims and spec.name == "reduce_sum":
                    assert out.shape.rank is None
            elif form != "unknown":
                assert out.shape.as_tuple() == want_shape, (out.shape, want_shape)
            return out

        check_op(build, lambda t: spec.ref(t, _np_axis(axis), keepdims), [x], seed=seed)

    run()


@pytest.mark.parametrize("name", ["reduce_all", "reduce_any"])
def test_boolean_reductions(name: str) -> None:
    fn, ref = getattr(tf, name), getattr(np, name.split("_")[1])
    rng = np.random.default_rng(0)
    x = rng.random((3, 4, 2)) < 0.6
    for axis in [None, 0, -1, [0, 2], [], (1,)]:
        for keepdims in (False, True):
            check_forward(
                lambda t, a=axis, k=keepdims: fn(t, axis=a, keepdims=k),
                lambda t, a=axis, k=keepdims: ref(t, axis=_np_axis(a), keepdims=k),
                [x],
            )
    with pytest.raises(TypeError, match="bool"):
        fn(tf.constant([1.0]))


# --- dtypes ----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float16])
def test_reductions_keep_the_dtype(dtype, sess) -> None:
    x = np.array([[3, -7, 2], [5, 1, -4]], dtype)
    t = tf.constant(x)
    fns = {
        "sum": (tf.reduce_sum, np.sum),
        "prod": (tf.reduce_prod, np.prod),
        "max": (tf.reduce_max, np.max),
        "min": (tf.reduce_min, np.min),
    }
    for axis in (None, 0, [1]):
        outs = sess.run({k: fn(t, axis) for k, (fn, _) in fns.items()})
        for k, (_, ref) in fns.items():
            assert outs[k].dtype == dtype, k
            np.testing.assert_array_equal(outs[k], ref(x, axis=_np_axis(axis)).astype(dtype))
    mean = sess.run(tf.reduce_mean(t, 1))
    assert mean.dtype == dtype


def test_integer_mean_truncates_toward_zero(sess) -> None:
    t = tf.constant([[-3, 1, 0], [3, 1, 0], [-4, 1, 0]])
    np.testing.assert_array_equal(sess.run(tf.reduce_mean(t, 1)), [0, 1, -1])
    assert sess.run(tf.reduce_mean(tf.constant([-3, 1, 0]))) == 0


def test_float32_gradients_keep_the_dtype(sess) -> None:
    x = tf.placeholder(tf.float32, [None, 3])
    fns = [
        tf.reduce_sum,
        tf.reduce_mean,
        tf.reduce_max,
        tf.reduce_prod,
        tf.reduce_logsumexp,
        tf.math.reduce_std,
    ]
    grads = tf.gradients([fn(x, 1) for fn in fns], x)
    value = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 4.0]], np.float32)
    (g,) = sess.run(grads, {x: value})
    assert g.dtype == np.float32


# --- gradients: special cases ---------------------------------------------------------------
def _prod_of_others(x: np.ndarray, axis: int) -> np.ndarray:
    out = np.empty_like(x)
    for index in np.ndindex(x.shape):
        line = list(index)
        line[axis] = slice(None)
        others = np.delete(x[tuple(line)], index[axis])
        out[index] = np.prod(others)
    return out


def test_prod_gradient_with_zeros(sess) -> None:
    x = np.array([[0.0, 2.0, 3.0], [0.0, 0.0, 5.0], [1.5, 2.0, -1.0]])
    t = tf.constant(x)
    for axis in (1, 0):
        (g,) = tf.gradients(tf.reduce_prod(t, axis), t)
        np.testing.assert_allclose(sess.run(g), _prod_of_others(x, axis))
    (g,) = tf.gradients(tf.reduce_prod(t), t)
    np.testing.assert_array_equal(sess.run(g), np.zeros_like(x))  # three zeros
    v = tf.constant([0.0, 2.0, 3.0])
    (g,) = tf.gradients(tf.reduce_prod(v), v)
    np.testing.assert_array_equal(sess.run(g), [6.0, 0.0, 0.0])


def test_max_and_min_share_the_gradient_between_ties(sess) -> None:
    z = tf.constant([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    g_max = tf.gradients(tf.reduce_max(z, 1), z)[0]
    g_min = tf.gradients(tf.reduce_min(z), z)[0]
    g_all = tf.gradients(tf.reduce_max(z, keepdims=True), z)[0]
    a, b, c = sess.run([g_max, g_min, g_all])
    np.testing.assert_allclose(a, [[0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]])
    np.testing.assert_allclose(b, [[1, 0, 0], [0, 0, 0]])
    np.testing.assert_allclose(c, [[0, 0.5, 0.5], [0, 0, 0]])


def test_gradients_with_unknown_input_shape(sess) -> None:
    """The runtime path: shapes and counts computed by ops while the step runs."""
    x = tf.placeholder(tf.float64, [None, 3])
    value = np.arange(12.0).reshape(4, 3) / 7
    fns = {
        "sum": tf.reduce_sum,
        "mean": tf.reduce_mean,
        "max": tf.reduce_max,
        "prod": tf.reduce_prod,
    }
    for keepdims in (False, True):
        for name, fn in fns.items():
            (g,) = tf.gradients(fn(x, 0, keepdims=keepdims), x)
            got = sess.run(g, {x: value})
            want = {
                "sum": np.ones_like(value),
                "mean": np.full_like(value, 1 / 4),
                "max": (value == value.max(0)).astype(float),
                "prod": _prod_of_others(value, 0),
            }[name]
            np.testing.assert_allclose(got, want, err_msg=name)
    y = tf.placeholder(tf.float64, None)  # unknown rank
    (g,) = tf.gradients(tf.reduce_mean(y), y)
    np.testing.assert_allclose(sess.run(g, {y: value}), np.full_like(value, 1 / 12))


def test_logsumexp_is_stable(sess) -> None:
    x = tf.constant([[1000.0, 1000.0], [-1000.0, -1000.0]], tf.float64)
    out, g = sess.run([tf.reduce_logsumexp(x, 1), tf.gradients(tf.reduce_logsumexp(x), x)[0]])
    np.testing.assert_allclose(out, [1000 + np.log(2), -1000 + np.log(2)])
    np.testing.assert_allclose(g, [[0.5, 0.5], [0.0, 0.0]])
    inf = tf.constant([[-np.inf, 0.0]], tf.float64)
    np.testing.assert_allclose(sess.run(tf.reduce_logsumexp(inf, 1)), [0.0])


# --- static shapes, aliases, errors ---------------------------------------------------------
def test_static_shapes_of_reductions() -> None:
    x = tf.placeholder(tf.float32, [None, 3, 4])
    assert tf.reduce_sum(x).shape.as_tuple() == ()
    assert tf.reduce_sum(x, 0).shape.as_tuple() == (3, 4)
    assert tf.reduce_sum(x, -1).shape.as_tuple() == (None, 3)
    assert tf.reduce_sum(x, [0, 2], keepdims=True).shape.as_tuple() == (1, 3, 1)
    assert tf.reduce_sum(x, 1, keep_dims=True).shape.as_tuple() == (None, 1, 4)
    assert tf.reduce_sum(x, reduction_indices=[1]).shape.as_tuple() == (None, 4)
    assert tf.reduce_sum(x, []).shape.as_tuple() == (None, 3, 4)
    axis = tf.placeholder(tf.int32, [1])
    assert tf.reduce_mean(x, axis).shape.rank is None
    assert tf.reduce_mean(x, axis, keepdims=True).shape.as_tuple() == (None, None, None)
    assert tf.reduce_max(tf.placeholder(tf.float32, None), 0).shape.rank is None
    assert tf.reduce_sum(x, tf.constant(np.array([1], np.int64))).shape.as_tuple() == (None, 4)
    folded = tf.maximum(tf.constant([3]) - 2, 0)  # known while building: folded
    assert tf.reduce_sum(x, folded).shape.as_tuple() == (None, 4)


def test_reduction_argument_errors() -> None:
    x = tf.placeholder(tf.float32, [2, 3])
    with pytest.raises(ValueError, match="Invalid reduction dimension"):
        tf.reduce_sum(x, 2)
    with pytest.raises(ValueError, match="Invalid reduction dimension"):
        tf.reduce_mean(x, [-3])
    with pytest.raises(ValueError, match="both"):
        tf.reduce_sum(x, axis=0, reduction_indices=0)
    with pytest.raises(ValueError, match="both"):
        tf.reduce_sum(x, 0, keepdims=True, keep_dims=True)
    with pytest.raises(TypeError):
        tf.reduce_sum(x, tf.constant(0.0))
    with pytest.raises(TypeError):
        tf.reduce_sum(tf.constant([True]))
    with pytest.raises(ValueError):
        tf.reduce_sum(x, tf.constant([[0]]))


@pytest.mark.parametrize(
    "name",
    [
        "reduce_sum",
        "reduce_mean",
        "reduce_max",
        "reduce_min",
        "reduce_prod",
        "reduce_logsumexp",
        "reduce_std",
    ],
)
@pytest.mark.parametrize(("shape", "axis"), [((3,), 1), ((2, 3), 2), ((2, 3), [0, -3])])
def test_an_axis_out_of_range_fails_at_run_time_when_the_rank_is_unknown(
    sess, name: str, shape: tuple, axis: object
) -> None:
    # Never wrapped around (a 1-D input summed over axis 1 used to give the total).
    x = tf.placeholder(tf.float32, None)
    y = getattr(tf.math, name)(x, axis=axis)
    with pytest.raises(
        tf.errors.InvalidArgumentError,
        match=r"(?s)Invalid reduction dimension -?\d for input with "
        rf"{len(shape)} dimensions.*\[\[node ",
    ):
        sess.run(y, {x: np.ones(shape, np.float32)})
    assert sess.run(tf.reduce_sum(x, axis=-1), {x: np.ones(shape, np.float32)}).shape == shape[:-1]


def test_boolean_and_fused_reductions_refuse_an_axis_out_of_range(sess) -> None:
    b = tf.placeholder(tf.bool, None)
    x = tf.placeholder(tf.float32, None)
    for y, feed in (
        (tf.reduce_all(b, 1), {b: [True]}),
        (tf.reduce_any(b, 1), {b: [True]}),
        (tf.reduce_sum(tf.square(x), 1), {x: [1.0, 2.0]}),
    ):
        with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid reduction"):
            sess.run(y, feed)


def test_reduce_names_and_types() -> None:
    x = tf.placeholder(tf.float32, [2, 3])
    s = tf.reduce_sum(x, 1)
    assert s.op.type == "Sum" and s.op.name == "Sum"
    assert [t.op.type for t in s.op.inputs] == ["Placeholder", "Const"]
    assert s.op.get_attr("keep_dims") is False
    assert tf.reduce_mean(x, name="m").op.name == "m"
    lse = tf.reduce_logsumexp(x, 1)
    assert lse.op.name == "ReduceLogSumExp"
    assert tf.math.reduce_sum is tf.reduce_sum


# --- argmax / argmin ------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_argmax_argmin(name: str, sess) -> None:
    fn, ref = getattr(tf, name), getattr(np, name)
    rng = np.random.default_rng(0)
    x = rng.integers(-3, 3, (3, 4, 2)).astype(np.float32)  # many ties: first index wins
    for axis in [None, 0, 1, -1, tf.constant(2)]:
        out = fn(x, axis)
        assert out.dtype == tf.int64
        want = ref(x, axis=0 if axis is None else (axis if isinstance(axis, int) else 2))
        assert out.shape.as_tuple() == want.shape
        value = sess.run(out)
        assert value.dtype == np.int64
        np.testing.assert_array_equal(value, want)
    out32 = fn(x, dimension=1, output_type=tf.int32)
    value = sess.run(out32)
    assert value.dtype == np.int32
    np.testing.assert_array_equal(value, ref(x, axis=1))
    assert fn(x, tf.placeholder(tf.int32, [])).shape.as_tuple() == (None, None)
    ints = sess.run(fn(tf.constant([[1, 5], [7, 2]]), 1))
    np.testing.assert_array_equal(ints, ref(np.array([[1, 5], [7, 2]]), axis=1))
    with pytest.raises(ValueError):
        fn(x, 3)
    with pytest.raises(ValueError, match="both"):
        fn(x, axis=0, dimension=0)
    with pytest.raises(TypeError):
        fn(x, 0, output_type=tf.float32)
    assert tf.gradients(tf.cast(fn(tf.constant(x), 0), tf.float32), []) == []


# --- cumsum, count_nonzero ------------------------------------------------------------------
@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumsum(exclusive: bool, reverse: bool) -> None:
    def flip(x, axis):  # autograd has no VJP for flip; slicing has one
        return x[(slice(None),) * (axis % x.ndim) + (slice(None, None, -1),)]

    def ref(x, axis):
        y = flip(x, axis) if reverse else x
        c = anp.cumsum(y, axis=axis)
        if exclusive:
            c = c - y
        return flip(c, axis) if reverse else c

    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4))
    for axis in (0, 1, -1):
        check_op(
            lambda t, a=axis: tf.cumsum(t, a, exclusive=exclusive, reverse=reverse),
            lambda t, a=axis: ref(t, a),
            [x],
        )
    check_forward(
        lambda t: tf.cumsum(t, 1, exclusive=exclusive, reverse=reverse),
        lambda t: ref(t, 1).astype(np.int32),
        [np.arange(6, dtype=np.int32).reshape(2, 3)],
    )


def test_count_nonzero(sess) -> None:
    x = np.array([[0.0, 1.5, 0.0], [2.0, -1.0, 0.0]])
    t = tf.constant(x)
    total, per_row, kept, as32 = sess.run(
        [
            tf.count_nonzero(t),
            tf.count_nonzero(t, 1),
            tf.count_nonzero(t, 0, keepdims=True),
            tf.count_nonzero(t, dtype=tf.int32),
        ]
    )
    assert total == 3 and total.dtype == np.int64
    np.testing.assert_array_equal(per_row, [1, 2])
    np.testing.assert_array_equal(kept, [[1, 2, 0]])
    assert as32.dtype == np.int32
    assert sess.run(tf.math.count_nonzero(tf.constant([True, False, True]))) == 2
