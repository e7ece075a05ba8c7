"""TF1's top-level graph and framework names of issue 32 (``tf.AggregationMethod``,
``tf.UnconnectedGradients``, ``tf.no_gradient``, ``tf.hessians``, ``tf.init_scope``,
``tf.op_scope``, ``tf.make_tensor_proto``/``tf.make_ndarray``, ``tf.is_symbolic_tensor``,
``tf.VariableSynchronization``/``tf.VariableAggregation``, TF's protobuf classes), each
program run on dataflow and on ``tensorflow.compat.v1``."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import dataflow

pytestmark = pytest.mark.tf


@pytest.fixture(scope="module")
def tf1() -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tf1 = pytest.importorskip("tensorflow.compat.v1")
    tf1.disable_eager_execution()
    return tf1


def both(tf1: Any, program: Callable[[Any], Any]) -> tuple[Any, Any]:
    """``program(tf)`` in a fresh graph of each library; its fetches run in a session.

    A program returning ``(initializer, *fetches)`` has the initializer run first, in a
    run of its own: within one run TF does not order an initializer before the reads."""
    out = []
    for tf in (dataflow, tf1):
        with tf.Graph().as_default():
            fetches = program(tf)
            with tf.Session() as sess:
                if isinstance(fetches, tuple) and isinstance(fetches[0], tf.Operation):
                    sess.run(fetches[0])
                out.append(sess.run(fetches))
    return out[0], out[1]


def test_hessians_match_tf(tf1: Any) -> None:
    x0 = np.array([[0.5, -1.2], [2.0, 0.3]])
    v0 = np.array([1.5, -0.7, 0.4])

    def program(tf: Any) -> Any:
        x = tf.constant(x0)
        v = tf.Variable(v0)
        y = tf.reduce_sum(tf.sin(x) * x**2) + x[0, 0] * x[1, 1] * tf.reduce_sum(v**3)
        hx, hv = tf.hessians(y, [x, v])
        assert hx.shape.as_list() == [2, 2, 2, 2] and hv.shape.as_list() == [3, 3]
        return tf.global_variables_initializer(), hx, hv

    (_, hx, hv), (_, want_x, want_v) = both(tf1, program)
    np.testing.assert_allclose(hx, want_x, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(hv, want_v, rtol=1e-12, atol=1e-12)


def test_hessian_against_finite_differences() -> None:
    tf = dataflow
    x0 = np.array([0.3, -0.8, 1.1])

    def grad(x: np.ndarray) -> np.ndarray:  # the gradient of sum(x**4) + x0*x1*x2
        return 4 * x**3 + np.array([x[1] * x[2], x[0] * x[2], x[0] * x[1]])

    eps = 1e-6
    fd = np.stack([(grad(x0 + eps * e) - grad(x0 - eps * e)) / (2 * eps) for e in np.eye(3)])
    with tf.Graph().as_default():
        x = tf.constant(x0)
        (h,) = tf.hessians(tf.reduce_sum(x**4) + x[0] * x[1] * x[2], x)
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(h), fd, rtol=1e-7, atol=1e-7)


def test_hessians_refuse_what_has_none() -> None:
    tf = dataflow
    with tf.Graph().as_default():
        x = tf.constant([1.0, 2.0])
        with pytest.raises(ValueError, match="do not depend"):
            tf.hessians(tf.reduce_sum(x), tf.constant(3.0))
        p = tf.placeholder(tf.float32, [None])
        with pytest.raises(ValueError, match="static size"):
            tf.hessians(tf.reduce_sum(p**2), p)


def test_gradient_options_match_tf(tf1: Any) -> None:
    assert [m.value for m in dataflow.UnconnectedGradients] == [
        m.value for m in tf1.UnconnectedGradients
    ]
    for name in ("ADD_N", "DEFAULT", "EXPERIMENTAL_TREE", "EXPERIMENTAL_ACCUMULATE_N"):
        assert getattr(dataflow.AggregationMethod, name) == getattr(tf1.AggregationMethod, name)

    def program(tf: Any) -> Any:
        x = tf.constant([1.0, 2.0])
        other = tf.constant(5.0)
        y = tf.reduce_sum(x * x) + tf.reduce_sum(x**3)
        grads = tf.gradients(
            y,
            [x, other],
            aggregation_method=tf.AggregationMethod.EXPERIMENTAL_TREE,
            unconnected_gradients=tf.UnconnectedGradients.ZERO,
        )
        none = tf.gradients(y, other, unconnected_gradients=tf.UnconnectedGradients.NONE)
        assert none == [None]
        return grads

    got, want = both(tf1, program)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w)
    for tf in (dataflow, tf1):
        with tf.Graph().as_default():
            x = tf.constant(1.0)
            with pytest.raises(ValueError, match="aggregation_method"):
                tf.gradients(x * 2.0, x, aggregation_method=7)
            with pytest.raises(ValueError, match="Unknown value for unconnected_gradients"):
                tf.gradients(x * 2.0, x, unconnected_gradients="zz")


def test_no_gradient_stops_the_op_type(tf1: Any) -> None:
    tf = dataflow
    for lib in (tf, tf1):
        assert lib.NoGradient is lib.no_gradient and lib.NotDifferentiable is lib.no_gradient
        with pytest.raises(TypeError, match="must be a string"):
            lib.no_gradient(3)
        with pytest.raises(KeyError, match="Registering two gradient"):
            lib.NotDifferentiable("Shape")  # already not differentiable
        with pytest.raises(KeyError, match="Registering two gradient"):
            lib.no_gradient("Sin")  # has a gradient
    tf.no_gradient("FrameworkNamesTestStop")
    with pytest.raises(KeyError, match="Registering two gradient"):
        tf.no_gradient("FrameworkNamesTestStop")
    with tf.Graph().as_default() as graph:
        x = tf.constant([1.0, 2.0])
        # An op type filed as not differentiable passes nothing, as a gradient override
        # onto that name shows.
        with graph.gradient_override_map({"Square": "FrameworkNamesTestStop"}):
            sq = tf.square(x)
        y = tf.reduce_sum(sq + 3.0 * x)
        (g,) = tf.gradients(y, x)
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(g), [3.0, 3.0])


def test_init_scope_and_op_scope_match_tf(tf1: Any) -> None:
    names = []
    for tf in (dataflow, tf1):
        with tf.Graph().as_default() as graph:
            a = tf.constant(1.0, name="a")
            with tf.name_scope("outer"), tf.control_dependencies([a]):
                inside = tf.constant(2.0, name="inside")
                with tf.init_scope():
                    lifted = tf.constant(3.0, name="lifted")
            with tf.op_scope([a], "ops", "default") as scope:
                b = tf.identity(a, name="b")
            with tf.op_scope([a], None, "default") as default:
                pass
            assert [op.name for op in inside.op.control_inputs] == ["a"]
            assert list(lifted.op.control_inputs) == []
            assert graph is tf.get_default_graph()
            names.append((inside.name, lifted.name, scope, b.name, default))
    assert names[0] == names[1]


def test_init_scope_leaves_a_cond_branch(tf1: Any) -> None:
    def program(tf: Any) -> Any:
        p = tf.constant(True)
        made = []

        def branch() -> Any:
            with tf.init_scope():
                made.append(tf.constant(4.0, name="once"))
            return made[0] * 2.0

        out = tf.cond(p, branch, lambda: tf.constant(0.0))
        assert made[0].graph is tf.get_default_graph()
        return out, made[0]

    got, want = both(tf1, program)
    assert got == want == (8.0, 4.0)


@pytest.mark.parametrize(
    "values, kwargs",
    [
        ([[1.0, 2.0], [3.0, 4.0]], {}),
        ([1, 2, 3], {"dtype": "float64"}),
        (3, {"shape": [2, 2]}),
        ([7], {"shape": [2, 3], "allow_broadcast": True}),
        (np.arange(6, dtype=np.int64).reshape(2, 3), {}),
        (np.array([1.5, -2.0], np.float16), {}),
        ([b"a", b"bc"], {}),
        (True, {}),
        (np.array([1 + 2j, 3j], np.complex64), {}),
    ],
)
def test_tensor_proto_round_trip_matches_tf(tf1: Any, values: Any, kwargs: dict) -> None:
    tf = dataflow
    kw = dict(kwargs)
    if "dtype" in kw:
        ours, theirs = tf.as_dtype(kw["dtype"]), tf1.as_dtype(kw["dtype"])
    proto = tf.make_tensor_proto(values, **({**kw, "dtype": ours} if "dtype" in kw else kw))
    want = tf1.make_tensor_proto(values, **({**kw, "dtype": theirs} if "dtype" in kw else kw))
    # The same dtype, shape and values (float16 may sit in ``half_val`` or in
    # ``tensor_content``: both are TF's encodings), each library reading the other's.
    assert proto.dtype == want.dtype
    shape = proto.tensor_shape.SerializeToString()
    assert shape == want.tensor_shape.SerializeToString()
    expected = tf1.make_ndarray(want)
    for got in (tf.make_ndarray(proto), tf1.make_ndarray(proto), tf.make_ndarray(want)):
        assert got.dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_array_equal(got, expected)


def test_tensor_proto_errors_match_tf(tf1: Any) -> None:
    for tf in (dataflow, tf1):
        with pytest.raises(TypeError, match="Expected Tensor's shape"):
            tf.make_tensor_proto([1, 2], shape=[3, 2], allow_broadcast=True)
        with pytest.raises(TypeError):
            tf.make_tensor_proto([1.0, 2.0], shape=[3], verify_shape=True)
        with pytest.raises(ValueError, match="not both allowed"):
            tf.make_tensor_proto(1, shape=[1], verify_shape=True, allow_broadcast=True)


def test_tensor_proto_is_a_graph_constant(tf1: Any) -> None:
    """A proto made by either library is a constant dataflow reads back."""
    tf = dataflow
    proto = tf1.make_tensor_proto(np.arange(4.0).reshape(2, 2), dtype=tf1.float64)
    with tf.Graph().as_default():
        c = tf.constant(tf.make_ndarray(proto))
        assert c.dtype == tf.float64 and c.shape.as_list() == [2, 2]
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(c), [[0, 1], [2, 3]])


def test_is_symbolic_tensor_matches_tf(tf1: Any) -> None:
    results = []
    for tf in (dataflow, tf1):
        with tf.Graph().as_default():
            x = tf.constant([1.0])
            things = [
                x,
                tf.Variable(1.0),
                np.ones(2),
                3.0,
                tf.SparseTensor([[0]], [1.0], [2]),
                tf.IndexedSlices(x, tf.constant([0])),
            ]
            results.append([tf.is_symbolic_tensor(t) for t in things])
    assert results[0] == results[1] == [True, False, False, False, False, False]


def test_variable_sync_and_aggregation_match_tf(tf1: Any) -> None:
    for name in ("AUTO", "NONE", "ON_WRITE", "ON_READ"):
        assert (
            dataflow.VariableSynchronization[name].value == tf1.VariableSynchronization[name].value
        )
    for name in ("NONE", "SUM", "MEAN", "ONLY_FIRST_REPLICA", "ONLY_FIRST_TOWER"):
        assert dataflow.VariableAggregation[name].value == tf1.VariableAggregation[name].value
    seen = []
    for tf in (dataflow, tf1):
        with tf.Graph().as_default():
            on_read = tf.get_variable(
                "r",
                [2],
                synchronization=tf.VariableSynchronization.ON_READ,
                aggregation=tf.VariableAggregation.SUM,
            )
            summed = tf.Variable(
                1.0,
                synchronization=tf.VariableSynchronization.ON_WRITE,
                aggregation=tf.VariableAggregation.MEAN,
            )
            plain = tf.Variable(2.0)
            seen.append(
                (
                    on_read.trainable,
                    [v.name for v in tf.trainable_variables()],
                    summed.synchronization.name,
                    summed.aggregation.name,
                    plain.synchronization.name,
                    plain.aggregation.name,
                )
            )
            with pytest.raises(ValueError, match="Invalid variable synchronization mode"):
                tf.get_variable("bad", [1], synchronization="x")
            with pytest.raises(ValueError, match="Invalid variable aggregation mode"):
                tf.get_variable("bad2", [1], aggregation="x")
            with pytest.raises(ValueError, match="Invalid variable synchronization mode"):
                tf.Variable(1.0, synchronization="x")
    assert seen[0] == seen[1]


def test_protobuf_classes_are_tfs(tf1: Any) -> None:
    tf = dataflow
    for name in (
        "AttrValue",
        "NameAttrList",
        "GraphOptions",
        "OptimizerOptions",
        "LogMessage",
        "MetaGraphDef",
        "TensorInfo",
    ):
        ours, theirs = getattr(tf, name), getattr(tf1, name)
        # TensorBoard's copy of TF's .proto (package ``tensorboard``): same fields.
        assert ours.DESCRIPTOR.name == theirs.DESCRIPTOR.name
        assert [(f.name, f.number) for f in ours.DESCRIPTOR.fields] == [
            (f.name, f.number) for f in theirs.DESCRIPTOR.fields
        ]
    opts = tf.GraphOptions(
        optimizer_options=tf.OptimizerOptions(opt_level=tf.OptimizerOptions.L1),
        build_cost_model=2,
    )
    again = tf1.GraphOptions.FromString(opts.SerializeToString())
    assert again.optimizer_options.opt_level == tf1.OptimizerOptions.L1
    assert again.build_cost_model == 2
    info = tf.TensorInfo(name="x:0", dtype=1)
    assert tf1.TensorInfo.FromString(info.SerializeToString()).name == "x:0"
    attr = tf.AttrValue(func=tf.NameAttrList(name="f"))
    assert tf1.AttrValue.FromString(attr.SerializeToString()).func.name == "f"
    with tf.Graph().as_default():
        config = tf.ConfigProto(graph_options=opts)
        assert config.graph_options is opts
        with tf.Session(config=config) as sess:
            assert sess.run(tf.constant(2.0) * 3.0) == 6.0


def test_grad_pass_through_matches_tf(tf1: Any) -> None:
    def program(tf: Any) -> Any:
        x = tf.constant([0.4, 1.6, -2.3], tf.float64)
        v = tf.Variable([1.0, 2.0, 3.0], dtype=tf.float64)
        y = tf.grad_pass_through(tf.round)(x)  # round's value, the identity's gradient
        z = tf.grad_pass_through(v.assign)(x * 2.0)
        loss = tf.reduce_sum(y * x) + tf.reduce_sum(z * z)
        return tf.global_variables_initializer(), y, tf.gradients(loss, [x])

    (_, y, g), (_, want_y, want_g) = both(tf1, program)
    np.testing.assert_array_equal(y, want_y)
    # d loss / dx = round(x) + x (the identity's gradient through ``y``) + 2 z * 2 with
    # z = 2x, the assigned value. TF's graph gives reading ``z``'s value for its
    # gradient no order against the assign: TF sometimes reads the variable's old
    # value (1, 2, 3) there; dataflow reads the value assigned.
    x = np.array([0.4, 1.6, -2.3])
    np.testing.assert_allclose(g[0], np.round(x) + x + 8 * x, rtol=1e-12)
    before_assign = np.round(x) + x + 4 * np.array([1.0, 2.0, 3.0])
    assert np.allclose(want_g[0], g[0], rtol=1e-12, atol=0) or np.allclose(
        want_g[0], before_assign, rtol=1e-12, atol=0
    )


def test_recompute_grad_matches_tf(tf1: Any) -> None:
    x0 = np.array([0.4, 1.6, -2.3])

    def program(tf: Any) -> Any:
        x = tf.constant(x0)
        w = tf.get_variable("w", initializer=np.array([1.0, -2.0, 0.5]), use_resource=True)

        def block(t: Any) -> Any:
            return tf.sin(t * w) * t

        y = tf.recompute_grad(block)(x)
        loss = tf.reduce_sum(y * y)
        return tf.global_variables_initializer(), y, tf.gradients(loss, [x, w])

    (_, y, grads), (_, want_y, want) = both(tf1, program)
    np.testing.assert_allclose(y, want_y, rtol=1e-12)
    for g, w in zip(grads, want):
        np.testing.assert_allclose(g, w, rtol=1e-10)
    # The gradient differentiates a second copy of the block, built for it.
    tf = dataflow
    with tf.Graph().as_default() as graph:
        x = tf.constant(x0)
        y = tf.recompute_grad(lambda t: tf.sin(t) * t)(x)
        before = sum(op.type == "Sin" for op in graph.get_operations())
        (g,) = tf.gradients(tf.reduce_sum(y), x)
        assert sum(op.type == "Sin" for op in graph.get_operations()) == before + 1
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(g), np.cos(x0) * x0 + np.sin(x0), rtol=1e-12)
