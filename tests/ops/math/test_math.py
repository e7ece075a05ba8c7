"""Elementwise math ops: their op-table rows (``tests/ops/specs_math.py``) swept over
shapes, then what a table cannot say.

Every elementwise row is checked over hypothesis-drawn broadcastable shapes: the forward value
against numpy / ``autograd.numpy`` (a reference nobody here wrote), and, for
differentiable rows, the gradient against ``autograd`` and finite differences, to
second order (``check_op``). The static shape rule is compared with the kernel's real
output, kernels are run in float32 (and float16 where it applies) under the debug
executor, which checks every output's dtype, and dtype mismatches must fail at build
time. Then the special cases: integer semantics, operator overloads, ``where``,
``cast``, ``clip_by_value``, names.
"""

from __future__ import annotations

import autograd.numpy as anp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, mutually_broadcastable_shapes

import dataflow as tf
from dataflow.testing.grad_check import check_forward, check_op
from dataflow.testing.op_spec import OpSpec, ids

from ..specs_math import BINARY, COMPARISONS, UNARY

# autograd says so for the second derivative of a linear op (it is zero); not a failure.
pytestmark = pytest.mark.filterwarnings("ignore:Output seems independent of input")

HYPOTHESIS = settings(
    max_examples=12,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


ALL = UNARY + BINARY + COMPARISONS


def _shapes_strategy(arity: int) -> st.SearchStrategy:
    if arity == 1:
        return array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=3).map(lambda s: (s,))
    return mutually_broadcastable_shapes(num_shapes=arity, max_dims=3, min_side=1, max_side=3).map(
        lambda b: b.input_shapes
    )


def _draw(spec: OpSpec, shapes: tuple, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [
        np.asarray(sampler(rng, shape))
        for sampler, shape in zip(spec.samplers, shapes, strict=True)
    ]


# --- forward and gradients over broadcastable shapes ----------------------------------------
@pytest.mark.parametrize("spec", UNARY + BINARY + COMPARISONS, ids=ids(ALL))
def test_forward_and_gradients(spec: OpSpec) -> None:
    @HYPOTHESIS
    @given(shapes=_shapes_strategy(len(spec.samplers)), seed=st.integers(0, 2**16))
    def run(shapes: tuple, seed: int) -> None:
        args = _draw(spec, shapes, seed)
        if spec.grad:
            check_op(spec.builder(tf), spec.reference, args, seed=seed)
        else:
            check_forward(spec.builder(tf), spec.reference, args)

    run()


@pytest.mark.parametrize(
    "spec",
    [s for s in UNARY + BINARY if not s.grad],
    ids=ids([s for s in UNARY + BINARY if not s.grad]),
)
def test_piecewise_constant_ops_have_no_gradient(spec: OpSpec) -> None:
    xs = [tf.placeholder(tf.float64, [3]) for _ in range(len(spec.samplers))]
    assert tf.gradients(spec.builder(tf)(*xs), xs) == [None] * len(spec.samplers)


def test_sign_gradient_is_zero_not_none(sess) -> None:
    x = tf.constant([-1.0, 2.0])
    (g,) = tf.gradients(tf.sign(x), x)
    np.testing.assert_array_equal(sess.run(g), [0.0, 0.0])


# --- static shapes: the rule against the kernel --------------------------------------------
def _broadcasts(a: tuple, b: tuple) -> bool:
    try:
        np.broadcast_shapes(a, b)
    except ValueError:
        return False
    return True


@settings(HYPOTHESIS, max_examples=60)
@given(
    a=array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=3),
    b=array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=3),
    spec_index=st.integers(0, len(BINARY) - 1),
    unknown=st.booleans(),
)
def test_shape_rule_matches_kernel(a: tuple, b: tuple, spec_index: int, unknown: bool) -> None:
    """Both raise or both succeed; a success has exactly numpy's shape."""
    spec = BINARY[spec_index]
    try:
        want = np.broadcast_shapes(a, b)
    except ValueError:
        want = None
    with tf.Graph().as_default():
        # Half the time the first dimension of x is unknown: still raises or matches.
        static_a = ((None,) + a[1:]) if unknown and a else a
        x = tf.placeholder(tf.float64, static_a)
        y = tf.placeholder(tf.float64, b)
        if want is None:
            if unknown and a and _broadcasts((1,) + a[1:], b):
                return  # the clash sits in the unknown dimension: caught at run time
            with pytest.raises(ValueError, match="broadcast"):
                spec.builder(tf)(x, y)
            return
        out = spec.builder(tf)(x, y)
        if not unknown:
            assert out.shape.as_tuple() == want
        args = _draw(spec, (a, b), 0)
        with tf.Session(config=tf.ConfigProto(debug=True)) as sess:
            value = sess.run(out, {x: args[0], y: args[1]})
        assert value.shape == want
        assert out.shape.is_compatible_with(value.shape)


def test_broadcast_clash_in_unknown_dimension_fails_at_run_time(sess) -> None:
    x = tf.placeholder(tf.float32, [None])
    out = x + tf.constant([1.0, 2.0])
    with pytest.raises(tf.errors.InvalidArgumentError):
        sess.run(out, {x: np.ones(3, np.float32)})


# --- dtypes ---------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_kernels_and_gradients_keep_the_dtype(dtype, sess) -> None:
    """Debug mode fails any kernel whose output dtype differs from its static dtype."""
    rng = np.random.default_rng(1)
    fetches, feeds = {}, {}
    for spec in ALL:
        shapes = [(2, 3), (3,)][: len(spec.samplers)]
        args = _draw(spec, shapes, 0)
        phs = [tf.placeholder(a.dtype if a.dtype == bool else dtype, a.shape) for a in args]
        feeds.update({p: a.astype(p.dtype.as_numpy_dtype) for p, a in zip(phs, args, strict=True)})
        out = spec.builder(tf)(*phs)
        fetches[spec.name] = out
        if spec.grad:
            grads = tf.gradients(
                out, phs, grad_ys=tf.constant(rng.standard_normal((2, 3)), dtype=out.dtype)
            )
            fetches[spec.name + "_grad"] = grads
    values = sess.run(fetches, feeds)
    for spec in ALL:
        want = np.bool_ if spec in COMPARISONS else dtype
        assert values[spec.name].dtype == want, spec.name
        for g in values.get(spec.name + "_grad", []):
            assert g.dtype == dtype, spec.name


@pytest.mark.parametrize("spec", [s for s in BINARY], ids=ids(BINARY))
def test_mixed_dtypes_fail_at_build_time(spec: OpSpec) -> None:
    x = tf.placeholder(tf.float32, [2])
    y = tf.placeholder(tf.float64, [2])
    with pytest.raises(TypeError, match="float64|float32"):
        spec.builder(tf)(x, y)


@pytest.mark.parametrize(
    "spec",
    [s for s in UNARY + BINARY if "float_only" in s.tags],
    ids=ids([s for s in UNARY + BINARY if "float_only" in s.tags]),
)
def test_float_only_ops_reject_integers(spec: OpSpec) -> None:
    xs = [tf.constant([1, 2], tf.int32) for _ in range(len(spec.samplers))]
    if spec.name in ("truediv", "divide"):  # integer truediv converts (tested below)
        return
    if spec.name == "div":  # Python 2 semantics: floor division for integers
        assert spec.builder(tf)(*xs).op.type == "FloorDiv"
        return
    with pytest.raises(TypeError):
        spec.builder(tf)(*xs)


def test_bool_and_logical_dtype_rules() -> None:
    f = tf.constant([1.0, 2.0])
    b = tf.constant([True, False])
    for fn in (tf.logical_and, tf.logical_or, tf.math.logical_xor):
        with pytest.raises(TypeError, match="bool"):
            fn(f, f)
    with pytest.raises(TypeError):
        tf.logical_not(f)
    with pytest.raises(TypeError):
        tf.add(b, b)
    with pytest.raises(TypeError):
        tf.less(b, b)
    assert tf.equal(b, b).dtype == tf.bool
    assert tf.equal(f, 1).dtype == tf.bool


def test_python_numbers_take_the_tensor_dtype() -> None:
    x = tf.placeholder(tf.float64, [2])
    assert (x * 2).dtype == tf.float64
    assert (2.5 + x).dtype == tf.float64
    assert tf.pow(x, 2).dtype == tf.float64
    i = tf.placeholder(tf.int64, [2])
    assert (i + 1).dtype == tf.int64
    with pytest.raises(TypeError):
        i + 2.5
    with pytest.raises(TypeError):
        tf.add(tf.constant([1.0]), tf.constant([1], tf.int32))


# --- integer semantics -----------------------------------------------------------------------
INT_CASES = [
    (tf.add, np.add),
    (tf.subtract, np.subtract),
    (tf.multiply, np.multiply),
    (tf.math.floordiv, np.floor_divide),
    (tf.math.floormod, np.mod),
    (tf.truncatediv, lambda x, y: np.trunc(x / y).astype(x.dtype)),
    (tf.truncatemod, np.fmod),
    (tf.maximum, np.maximum),
    (tf.minimum, np.minimum),
    (tf.math.squared_difference, lambda x, y: (x - y) ** 2),
]


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_integer_binary_ops(dtype, sess) -> None:
    x = np.array([[7, -7, 6, -6, 0, 5]], dtype)
    y = np.array([[2], [-2], [3]], dtype)
    for fn, ref in INT_CASES:
        out = sess.run(fn(tf.constant(x), tf.constant(y)))
        assert out.dtype == dtype
        np.testing.assert_array_equal(out, ref(x, y))
    p = sess.run(tf.pow(tf.constant(x), tf.constant(np.array([2], dtype))))
    np.testing.assert_array_equal(p, x**2)
    assert p.dtype == dtype


@pytest.mark.parametrize("dtype", [tf.int32, tf.int64, tf.uint8])
@pytest.mark.parametrize(
    "build",
    [
        tf.floordiv,
        tf.floormod,
        tf.truncatediv,
        tf.truncatemod,
        lambda x, y: x // y,
        lambda x, y: x % y,
    ],
    ids=["floordiv", "floormod", "truncatediv", "truncatemod", "//", "%"],
)
def test_integer_division_by_zero_fails_as_in_tf1(sess, dtype, build) -> None:
    x = tf.placeholder(dtype, [3], name="x")
    y = tf.placeholder(dtype, [3], name="y")
    z = build(x, y)
    with pytest.raises(
        tf.errors.InvalidArgumentError, match=rf"(?s)Integer division by zero.*node {z.op.name} "
    ):
        sess.run(z, {x: [7, 6, 5], y: [2, 0, 1]})
    assert sess.run(z, {x: [7, 6, 5], y: [2, 3, 1]}).dtype == dtype.as_numpy_dtype
    folded = build(tf.constant([3, 4], dtype), tf.constant(0, dtype))  # constant inputs
    with pytest.raises(tf.errors.InvalidArgumentError, match="Integer division by zero"):
        sess.run(folded)


def test_float_division_by_zero_keeps_ieee_values(sess) -> None:
    x = tf.constant([1.0, -1.0, 0.0])
    out = sess.run([tf.floordiv(x, 0.0), tf.floormod(x, 0.0), tf.truncatediv(x, 0.0)])
    assert np.isinf(out[0][:2]).all() and np.isnan(out[0][2])
    assert np.isnan(out[1]).all()
    assert np.isinf(out[2][:2]).all()


def test_truncate_semantics_match_c(sess) -> None:
    pairs = [(7, 2), (-7, 2), (7, -2), (-7, -2), (6, 3), (-6, 4)]
    xs = tf.constant([a for a, _ in pairs])
    ys = tf.constant([b for _, b in pairs])
    q, r = sess.run([tf.truncatediv(xs, ys), tf.truncatemod(xs, ys)])
    assert list(q) == [int(a / b) for a, b in pairs]
    assert list(r) == [a - int(a / b) * b for a, b in pairs]


def test_floor_semantics_match_python(sess) -> None:
    pairs = [(7, 2), (-7, 2), (7, -2), (-7, -2)]
    xs = tf.constant([a for a, _ in pairs])
    ys = tf.constant([b for _, b in pairs])
    q, r = sess.run([xs // ys, xs % ys])
    assert list(q) == [a // b for a, b in pairs]
    assert list(r) == [a % b for a, b in pairs]
    fr = sess.run(tf.constant([-7.5, 7.5]) % tf.constant([2.0, -2.0]))
    np.testing.assert_allclose(fr, [-7.5 % 2.0, 7.5 % -2.0])


@pytest.mark.parametrize(
    "dtype,want",
    [
        (tf.int32, np.float64),
        (tf.int64, np.float64),
        (tf.int16, np.float32),
        (tf.int8, np.float32),
        (tf.uint8, np.float32),
    ],
)
def test_integer_truediv_converts_like_tf(dtype, want, sess) -> None:
    x = tf.constant([7, 8, 9], dtype)
    y = tf.constant([2, 4, 3], dtype)
    for out in (x / y, tf.truediv(x, y), tf.divide(x, y)):
        assert out.dtype == tf.as_dtype(want)
        value = sess.run(out)
        assert value.dtype == want
        np.testing.assert_allclose(value, [3.5, 2.0, 3.0])


def test_div_uses_python2_semantics(sess) -> None:
    assert sess.run(tf.div(tf.constant(-7), tf.constant(2))) == -4
    assert sess.run(tf.div(tf.constant(-7.0), tf.constant(2.0))) == -3.5


def test_integer_unary_ops(sess) -> None:
    x = np.array([-3, 0, 2], np.int32)
    t = tf.constant(x)
    for fn, ref in [
        (tf.negative, np.negative),
        (tf.abs, np.abs),
        (tf.sign, np.sign),
        (tf.square, np.square),
        (tf.round, np.round),
    ]:
        out = sess.run(fn(t))
        assert out.dtype == np.int32
        np.testing.assert_array_equal(out, ref(x))


def test_round_is_half_to_even(sess) -> None:
    out = sess.run(tf.round(tf.constant([0.5, 1.5, 2.5, -0.5, -1.5, 0.4])))
    np.testing.assert_array_equal(out, [0.0, 2.0, 2.0, -0.0, -2.0, 0.0])


def test_div_no_nan_at_zero(sess) -> None:
    x = tf.constant([1.0, 0.0, 3.0, np.inf])
    y = tf.constant([0.0, 0.0, 2.0, 0.0])
    np.testing.assert_array_equal(sess.run(tf.math.divide_no_nan(x, y)), [0, 0, 1.5, 0])
    gx, gy = tf.gradients(tf.math.divide_no_nan(x, y), [x, y])
    gx, gy = sess.run([gx, gy])
    np.testing.assert_array_equal(gx, [0, 0, 0.5, 0])
    np.testing.assert_array_equal(gy, [0, 0, -0.75, 0])


def test_sigmoid_is_stable_at_extremes(sess) -> None:
    x = np.array([-1000.0, -40.0, 0.0, 40.0, 1000.0])
    out = sess.run(tf.sigmoid(tf.constant(x, tf.float64)))
    np.testing.assert_allclose(out, [0.0, np.exp(-40.0), 0.5, 1.0, 1.0], rtol=1e-12)


def test_is_nan_and_is_inf(sess) -> None:
    x = tf.constant([0.0, np.nan, np.inf, -np.inf])
    nan, inf, fin = sess.run([tf.math.is_nan(x), tf.math.is_inf(x), tf.math.is_finite(x)])
    assert list(nan) == [False, True, False, False]
    assert list(inf) == [False, False, True, True]
    assert list(fin) == [True, False, False, False]


def test_pow_gradient_at_nonpositive_base(sess) -> None:
    a = tf.constant([-2.0, 0.0, 2.0])
    b = tf.constant(2.0)
    ga, gb = sess.run(tf.gradients(tf.pow(a, b), [a, b]))
    np.testing.assert_allclose(ga, [-4.0, 0.0, 4.0])
    np.testing.assert_allclose(gb, 4.0 * np.log(2.0), rtol=1e-6)


def test_maximum_minimum_ties_go_to_x(sess) -> None:
    x = tf.constant([1.0, 3.0, 3.0])
    y = tf.constant(3.0)
    gx, gy = sess.run(tf.gradients(tf.maximum(x, y), [x, y]))
    np.testing.assert_array_equal(gx, [0.0, 1.0, 1.0])
    assert gy == 1.0
    gx, gy = sess.run(tf.gradients(tf.minimum(x, y), [x, y]))
    np.testing.assert_array_equal(gx, [1.0, 1.0, 1.0])
    assert gy == 0.0


# --- aliases -------------------------------------------------------------------------------
def test_scalar_mul_and_to_casts(sess) -> None:
    x = tf.constant([1.0, 2.0])
    np.testing.assert_array_equal(sess.run(tf.scalar_mul(3, x)), [3.0, 6.0])
    with pytest.raises(ValueError, match="scalar"):
        tf.scalar_mul([1.0, 2.0], x)
    i = tf.constant([1, 2])
    f = tf.to_float(i)
    assert f.dtype == tf.float32 and f.op.name == "ToFloat"
    assert tf.to_double(i).dtype == tf.float64
    assert tf.to_int64(i).dtype == tf.int64
    assert tf.to_int32(x).dtype == tf.int32
    assert tf.mod is tf.floormod
    assert tf.math.mod is tf.math.floormod


# --- operator overloads ------------------------------------------------------------------------
def test_operator_overloads(sess) -> None:
    a = np.array([[1.5, -2.0, 3.0]], np.float32)
    b = np.array([[2.0], [-0.5]], np.float32)
    x, y = tf.constant(a), tf.constant(b)
    cases = {
        "add": (x + y, a + b),
        "radd": (1 + x, 1 + a),
        "sub": (x - y, a - b),
        "rsub": (1 - x, 1 - a),
        "mul": (x * y, a * b),
        "rmul": (2 * x, 2 * a),
        "div": (x / y, a / b),
        "rdiv": (1 / x, 1 / a),
        "floordiv": (x // y, a // b),
        "rfloordiv": (7 // y, 7 // b),
        "mod": (x % y, a % b),
        "rmod": (5 % y, 5 % b),
        "pow": (y**2, b**2),
        "rpow": (2**x, 2**a),
        "neg": (-x, -a),
        "abs": (abs(x), np.abs(a)),
        "lt": (x < y, a < b),
        "le": (x <= 1.5, a <= 1.5),
        "gt": (x > y, a > b),
        "ge": (2 >= x, 2 >= a),
        "ndarray_add": (b + x, b + a),
    }
    values = sess.run({k: t for k, (t, _) in cases.items()})
    for k, (t, want) in cases.items():
        assert values[k].dtype == want.dtype, k
        np.testing.assert_allclose(values[k], want, rtol=1e-6, err_msg=k)
        assert t.shape.as_tuple() == want.shape, k
    assert (x + y).op.type == "AddV2" and (x + y).op.name.startswith("add")
    assert (-x).op.type == "Neg"


def test_logical_operators_on_bool_tensors(sess) -> None:
    p = np.array([True, True, False, False])
    q = np.array([True, False, True, False])
    tp, tq = tf.constant(p), tf.constant(q)
    out = sess.run([tp & tq, tp | tq, tp ^ tq, ~tp, tp & True])
    for got, want in zip(out, [p & q, p | q, p ^ q, ~p, p], strict=True):
        np.testing.assert_array_equal(got, want)
    f = tf.constant([1.0])
    with pytest.raises(TypeError):
        f & f
    with pytest.raises(TypeError):
        ~f  # noqa: B018


# --- where / select --------------------------------------------------------------------------
def test_where_broadcasts_and_differentiates() -> None:
    cond = np.array([[True], [False]])

    def build(x, y):
        return tf.where_v2(tf.constant(cond), x, y)

    def ref(x, y):  # autograd's own where fails to unbroadcast; the same function:
        return cond * x + (1 - cond) * y

    rng = np.random.default_rng(0)
    check_op(build, ref, [rng.standard_normal((1, 3)), rng.standard_normal((2, 1))])
    check_op(
        lambda x, y: tf.where(tf.constant(cond), x, y),
        lambda x, y: anp.where(cond, x, y),
        [rng.standard_normal((2, 3)), rng.standard_normal((2, 3))],
    )


def test_where_rank1_condition_selects_rows_like_tf1(sess) -> None:
    cond = tf.constant([True, False])
    x, y = tf.ones([2, 3]), tf.zeros([2, 3])
    out = tf.where(cond, x, y)
    assert out.shape.as_tuple() == (2, 3)
    np.testing.assert_array_equal(sess.run(out), [[1, 1, 1], [0, 0, 0]])
    with pytest.raises(ValueError):
        tf.where(tf.constant([True, False, True]), tf.ones([2, 3]), tf.zeros([2, 3]))
    (g,) = tf.gradients(tf.reduce_sum(out * tf.constant([[1.0, 2.0, 3.0]])), x)
    np.testing.assert_array_equal(sess.run(g), [[1, 2, 3], [0, 0, 0]])


def test_where_python_numbers_take_the_branch_dtype(sess) -> None:
    x = tf.constant([1.0, -2.0], tf.float64)
    out = tf.where(x > 0, x, 0.5)
    assert out.dtype == tf.float64
    np.testing.assert_array_equal(sess.run(out), [1.0, 0.5])
    with pytest.raises(TypeError):
        tf.where(x > 0, x, tf.constant([1, 2]))
    with pytest.raises(TypeError):
        tf.where(x, x, x)
    with pytest.raises(ValueError, match="both"):
        tf.where(x > 0, x)


@pytest.mark.parametrize("shape", [(5,), (2, 3), (2, 2, 2), ()])
def test_where_indices(shape, sess) -> None:
    rng = np.random.default_rng(3)
    c = rng.random(shape) < 0.5
    ph = tf.placeholder(tf.bool, shape)
    out = tf.where(ph)
    assert out.dtype == tf.int64
    assert out.shape.as_tuple() == (None, len(shape))
    value = sess.run(out, {ph: c})
    assert value.dtype == np.int64
    np.testing.assert_array_equal(value, np.argwhere(c))
    numeric = sess.run(tf.where(tf.constant([0.0, 2.0, 0.0, -1.0])))
    np.testing.assert_array_equal(numeric, [[1], [3]])
    assert tf.gradients(tf.cast(tf.where(ph), tf.float32), ph) == [None]


# --- cast -------------------------------------------------------------------------------------
def test_cast_values(sess) -> None:
    f = tf.constant([1.7, -1.7, 0.0, 2.5])
    ints, bools, back = sess.run(
        [tf.cast(f, tf.int32), tf.cast(f, tf.bool), tf.cast(tf.constant([True, False]), tf.float64)]
    )
    np.testing.assert_array_equal(ints, [1, -1, 0, 2])
    assert ints.dtype == np.int32
    np.testing.assert_array_equal(bools, [True, True, False, True])
    np.testing.assert_array_equal(back, [1.0, 0.0])
    assert back.dtype == np.float64
    z = tf.constant(np.array([1 + 2j, -3 + 0j], np.complex64))
    np.testing.assert_array_equal(sess.run(tf.cast(z, tf.float32)), [1.0, -3.0])
    assert tf.cast(f, tf.float32) is f
    listed = tf.cast([1, 2], tf.float32)
    assert listed.dtype == tf.float32
    c = tf.cast(f, "float64", name="wide")
    assert c.op.name == "wide" and c.op.type == "Cast"
    assert c.op.get_attr("DstT") == tf.float64


def test_cast_between_strings_and_numbers_is_unimplemented(sess) -> None:
    # As in TF1 (tf.strings.to_number parses): UnimplementedError when the step runs.
    y = tf.cast(tf.constant(["1"]), tf.float32, name="parse")
    with pytest.raises(
        tf.errors.UnimplementedError, match="(?s)Cast string to float32 is not supported.*'parse'"
    ):
        sess.run(y)
    with pytest.raises(tf.errors.UnimplementedError, match="Cast int32 to string"):
        sess.run(tf.cast(tf.constant([1]), tf.string))


def test_cast_gradient() -> None:
    check_op(
        lambda x: tf.cast(tf.cast(x, tf.float32), tf.float64) * x,
        lambda x: x * x,
        [np.array([0.5, -1.25, 2.0])],
        rtol=1e-6,
    )
    x = tf.placeholder(tf.float32, [2])
    assert tf.gradients(tf.cast(tf.cast(x, tf.int32), tf.float32), x) == [None]


# --- clip_by_value ------------------------------------------------------------------------------
def test_clip_by_value(sess) -> None:
    x = np.array([[-2.0, 0.0, 0.5, 1.0, 3.0]])
    check_op(
        lambda t: tf.clip_by_value(t, -0.5, 1.5),
        lambda t: anp.clip(t, -0.5, 1.5),
        [np.array([[-2.0, 0.25, 0.5, 1.25, 3.0]])],
    )
    t = tf.constant(x, tf.float32)
    out = tf.clip_by_value(t, 0.0, 1.0)
    assert out.op.name == "clip_by_value" and out.op.type == "Maximum"
    (g,) = tf.gradients(out, t)
    value, grad = sess.run([out, g])
    np.testing.assert_array_equal(value, np.clip(x, 0, 1))
    np.testing.assert_array_equal(grad, [[0, 1, 1, 1, 0]])  # ties keep the gradient
    lo = tf.constant([[0.0], [0.5]])
    with pytest.raises(ValueError, match="shape"):
        tf.clip_by_value(t, lo, 1.0)
    with pytest.raises(ValueError, match="shape"):
        tf.clip_by_value(t, 0.0, lo)


# --- names --------------------------------------------------------------------------------------
def test_op_types_and_default_names() -> None:
    x = tf.placeholder(tf.float32, [2], name="x")
    assert tf.add(x, x).op.name == "Add" and tf.add(x, x).op.type == "AddV2"
    assert tf.subtract(x, x).op.type == "Sub"
    assert tf.truediv(x, x).op.name == "truediv"
    assert tf.truediv(x, x).op.type == "RealDiv"
    assert tf.math.floordiv(x, x).op.name == "floordiv"
    assert tf.sigmoid(x, name="s").op.name == "s"
    assert (x * 2).op.name == "mul"
    assert tf.math.logical_xor(x > 0, x < 1).op.name == "LogicalXor"
    i = tf.constant([1, 2])
    div = i / i
    assert [t.op.type for t in div.op.inputs] == ["Cast", "Cast"]
    assert div.op.inputs[0].op.name.startswith("truediv")
