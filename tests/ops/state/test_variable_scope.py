"""variable_scope / get_variable: naming, reuse, inheritance, errors, TF1 parity."""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest

import dataflow as tf


# --- naming -----------------------------------------------------------------------------------
def test_variable_and_op_names():
    with tf.variable_scope("foo") as foo:
        v = tf.get_variable("v", [2])
        c = tf.constant(1.0, name="c")
        with tf.variable_scope("bar"):
            w = tf.get_variable("w", [2, 3])
    assert v.name == "foo/v:0" and v.op.name == "foo/v"
    assert c.name == "foo/c:0"
    assert w.name == "foo/bar/w:0"
    assert foo.name == "foo" and foo.original_name_scope == "foo/"
    # Re-entering by name: ops get a fresh name scope, variables keep "foo/".
    with tf.variable_scope("foo", reuse=True):
        assert tf.get_variable("v", [2]) is v
        assert tf.constant(2.0).name == "foo_1/Const:0"
    with tf.variable_scope("foo"):
        assert tf.get_variable("u", [1]).name == "foo/u:0"


def test_reentering_scope_object():
    with tf.variable_scope("foo") as foo:
        v = tf.get_variable("v", [2])
    with tf.variable_scope("outer"):
        with tf.variable_scope(foo, reuse=True) as again:
            assert again.name == "foo" and again.original_name_scope == "foo/"
            assert tf.get_variable("v") is v
            assert tf.constant(0).name == "outer/foo/Const:0"
        with tf.variable_scope(foo):
            assert tf.get_variable("x", [1]).name == "foo/x:0"
    with tf.variable_scope(foo, auxiliary_name_scope=False):
        assert tf.constant(0).name == "Const:0"  # no new name scope


def test_default_names_are_unique():
    names = []
    for _ in range(3):
        with tf.variable_scope(None, default_name="layer") as s:
            names.append((s.name, tf.get_variable("k", [1]).name, tf.constant(0).name))
    assert names == [
        ("layer", "layer/k:0", "layer/Const:0"),
        ("layer_1", "layer_1/k:0", "layer_1/Const:0"),
        ("layer_2", "layer_2/k:0", "layer_2/Const:0"),
    ]
    with tf.variable_scope("a"):
        with tf.variable_scope(None, default_name="x") as s1:
            pass
        with tf.variable_scope(None, default_name="x") as s2:
            pass
    assert (s1.name, s2.name) == ("a/x", "a/x_1")
    # Closing "a" resets the counts of its sub-scopes (TF1).
    with tf.variable_scope("a"):
        with tf.variable_scope(None, default_name="x") as s3:
            assert (s3.name, s3.original_name_scope) == ("a/x", "a_1/x/")


def test_name_scope_does_not_prefix_variables():
    with tf.name_scope("ns"):
        v = tf.get_variable("v", [1])
        with tf.variable_scope("vs"):
            w = tf.get_variable("w", [1])
            c = tf.constant(0)
    assert v.name == "v:0" and w.name == "vs/w:0" and c.name == "ns/vs/Const:0"


def test_nested_string_scope_with_slash():
    with tf.variable_scope("a/b"):
        assert tf.get_variable("deep", [1]).name == "a/b/deep:0"


def test_values_select_the_graph():
    g = tf.Graph()
    with g.as_default():
        x = tf.constant(1.0)
    with tf.variable_scope("s", values=[x]):
        v = tf.get_variable("v", [1])
    assert v.graph is g and x.graph is g
    assert tf.get_default_graph() is not g


# --- reuse ------------------------------------------------------------------------------------
def test_create_twice_is_an_error():
    with tf.variable_scope("foo"):
        tf.get_variable("v", [2])
    with pytest.raises(ValueError) as info:
        with tf.variable_scope("foo"):
            tf.get_variable("v", [2])
    assert str(info.value).startswith(
        "Variable foo/v already exists, disallowed. Did you mean to set reuse=True or "
        "reuse=tf.AUTO_REUSE in VarScope?"
    )
    assert "test_variable_scope.py" in str(info.value)  # where it was first made


def test_reuse_missing_is_an_error():
    with pytest.raises(
        ValueError,
        match=r"^Variable foo/v does not exist, or was not created "
        r"with tf.get_variable\(\)",
    ):
        with tf.variable_scope("foo", reuse=True):
            tf.get_variable("v", [2])


def test_reuse_shape_and_dtype_mismatch():
    with tf.variable_scope("foo"):
        tf.get_variable("v", [2])
    with tf.variable_scope("foo", reuse=True):
        with pytest.raises(
            ValueError,
            match=r"Trying to share variable foo/v, but specified "
            r"shape \(3,\) and found shape \(2,\)",
        ):
            tf.get_variable("v", [3])
        with pytest.raises(ValueError, match="specified dtype int32 and found dtype float32"):
            tf.get_variable("v", [2], dtype=tf.int32)
        assert tf.get_variable("v").shape.as_list() == [2]  # no shape: any


def test_auto_reuse():
    with tf.variable_scope("auto", reuse=tf.AUTO_REUSE):
        a = tf.get_variable("z", [1])
        b = tf.get_variable("z", [1])
        with tf.variable_scope("inner"):
            assert tf.get_variable_scope().reuse is tf.AUTO_REUSE
            c = tf.get_variable("y", [1])
    assert a is b and a.name == "auto/z:0" and c.name == "auto/inner/y:0"

    def layer(x):
        with tf.variable_scope("dense", reuse=tf.AUTO_REUSE):
            return tf.get_variable("w", [3])

    assert layer(None) is layer(None)
    assert len(tf.global_variables()) == 3


def test_reuse_is_inherited_and_false_means_inherit():
    with tf.variable_scope("s"):
        v = tf.get_variable("v", [1])
    with tf.variable_scope("s", reuse=True):
        with tf.variable_scope("t", reuse=False) as t:
            assert t.reuse is True
        assert tf.get_variable("v") is v
    with pytest.raises(ValueError, match="reuse parameter must be True or False or None"):
        tf.variable_scope("x", reuse="yes")


def test_reuse_variables():
    with tf.variable_scope("layer") as scope:
        w = tf.get_variable("w", [2])
        scope.reuse_variables()
        assert tf.get_variable("w", [2]) is w
        assert scope.reuse is True


def test_scope_argument_errors():
    with pytest.raises(TypeError, match="If default_name is None then name_or_scope is required"):
        tf.variable_scope(None)
    with pytest.raises(ValueError, match="reuse=True cannot be used without a name_or_scope"):
        with tf.variable_scope(None, default_name="d", reuse=True):
            pass
    with pytest.raises(TypeError, match="must be a string or VariableScope"):
        with tf.variable_scope(3):
            pass
    # A failed entry leaves no scope behind.
    assert tf.get_variable_scope().name == ""
    assert tf.get_default_graph().get_name_scope() == ""


# --- initializers, dtypes, values -------------------------------------------------------------
def test_default_initializers(sess):
    w = tf.get_variable("w", [30, 20])
    i = tf.get_variable("i", [3], dtype=tf.int32)
    b = tf.get_variable("b", [2], dtype=tf.bool)
    sess.run(tf.global_variables_initializer())
    wv, iv, bv = sess.run([w, i, b])
    assert wv.dtype == np.float32 and np.all(np.abs(wv) <= math.sqrt(6 / 50))
    assert wv.std() > 0.1
    np.testing.assert_array_equal(iv, np.zeros(3, np.int32))
    np.testing.assert_array_equal(bv, [False, False])


def test_scope_initializer_and_dtype_are_inherited(sess):
    with tf.variable_scope("s", initializer=tf.constant_initializer(3.0), dtype=tf.float64):
        a = tf.get_variable("a", [2])
        with tf.variable_scope("t"):
            b = tf.get_variable("b", [2])
            c = tf.get_variable("c", [2], initializer=tf.ones_initializer())
        with tf.variable_scope("u", initializer=tf.zeros_initializer()):
            d = tf.get_variable("d", [1])
    e = tf.get_variable("e", [1])
    assert a.dtype == b.dtype == c.dtype == d.dtype == tf.float64 and e.dtype == tf.float32
    sess.run(tf.global_variables_initializer())
    av, bv, cv, dv = sess.run([a, b, c, d])
    np.testing.assert_array_equal(av, [3.0, 3.0])
    np.testing.assert_array_equal(bv, [3.0, 3.0])
    np.testing.assert_array_equal(cv, [1.0, 1.0])
    np.testing.assert_array_equal(dv, [0.0])


def test_set_initializer_on_scope(sess):
    with tf.variable_scope("s") as s:
        s.set_initializer(tf.constant_initializer(7.0))
        v = tf.get_variable("v", [1])
    sess.run(v.initializer)
    np.testing.assert_array_equal(sess.run(v), [7.0])


def test_value_initializers(sess):
    a = tf.get_variable("a", initializer=np.arange(6.0).reshape(2, 3))
    b = tf.get_variable("b", initializer=[1, 2, 3])
    c = tf.get_variable("c", initializer=tf.constant([4.0, 5.0]))
    d = tf.get_variable("d", initializer=tf.zeros_initializer, shape=[2])  # a class
    assert (a.dtype, a.shape.as_list()) == (tf.float64, [2, 3])
    assert (b.dtype, b.shape.as_list()) == (tf.int32, [3])
    assert (c.dtype, c.shape.as_list()) == (tf.float32, [2])
    sess.run(tf.global_variables_initializer())
    np.testing.assert_array_equal(sess.run(a), np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(sess.run(b), [1, 2, 3])
    np.testing.assert_array_equal(sess.run(c), [4.0, 5.0])
    np.testing.assert_array_equal(sess.run(d), [0.0, 0.0])
    with pytest.raises(ValueError, match="If initializer is a constant, do not specify shape"):
        tf.get_variable("e", [2], initializer=[1.0, 2.0])
    with pytest.raises(
        ValueError, match="Initializer type 'float32' and explicit dtype 'float64' don't match"
    ):
        tf.get_variable("f", initializer=[1.0, 2.0], dtype=tf.float64)
    with pytest.raises(ValueError, match="did not get an initializer"):
        tf.get_variable("g")
    with pytest.raises(ValueError, match="An initializer for variable h of complex64 is required"):
        tf.get_variable("h", [1], dtype=tf.complex64)


def test_no_shape_callable_initializer(sess):
    v = tf.get_variable("v", initializer=lambda: tf.constant([1.0, 2.0]))
    sess.run(v.initializer)
    np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])
    with pytest.raises(ValueError, match="The initializer passed is not valid"):
        tf.get_variable("w", initializer=tf.zeros_initializer())


def test_seeded_initializer_gives_same_values_in_two_graphs():
    values = []
    for _ in range(2):
        g = tf.Graph()
        with g.as_default():
            tf.set_random_seed(42)
            with tf.variable_scope("net"):
                w = tf.get_variable("w", [4, 4])
                b = tf.get_variable("b", [4], initializer=tf.random_normal_initializer())
            init = tf.global_variables_initializer()
        with tf.Session(graph=g) as s:
            s.run(init)
            values.append(s.run([w, b]))
    np.testing.assert_array_equal(values[0][0], values[1][0])
    np.testing.assert_array_equal(values[0][1], values[1][1])


def test_initializer_ignores_control_dependencies(sess):
    x = tf.placeholder(tf.float32, [])
    with tf.control_dependencies([tf.identity(x)]):
        v = tf.get_variable("v", [2], initializer=tf.ones_initializer())
    assert not v.initializer.control_inputs and not v.op.control_inputs
    sess.run(v.initializer)  # runs without feeding x


# --- collections, trainable, regularizers, getters --------------------------------------------
def test_collections_and_trainable():
    with tf.variable_scope("m") as m:
        a = tf.get_variable("a", [1])
        b = tf.get_variable("b", [1], trainable=False)
        c = tf.get_variable("c", [1], collections=["mine"])
        d = tf.get_local_variable("d", [1])
    assert tf.trainable_variables() == [a, c]
    assert tf.global_variables() == [a, b]
    assert tf.get_collection("mine") == [c]
    assert tf.local_variables() == [d] and not d.trainable
    assert m.global_variables() == [a, b] and m.trainable_variables() == [a, c]
    assert m.local_variables() == [d]


def test_regularizer(sess):
    with tf.variable_scope("r", regularizer=lambda v: tf.reduce_sum(v * v)):
        v = tf.get_variable("v", initializer=[1.0, 2.0])
        w = tf.get_variable("w", [1], regularizer=tf.no_regularizer)
    losses = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    assert len(losses) == 1 and losses[0].name.startswith("r/v/Regularizer/")
    sess.run([v.initializer, w.initializer])
    assert sess.run(losses[0]) == pytest.approx(5.0)


def test_custom_getters_nest():
    calls = []

    def outer(getter, name, *args, **kwargs):
        calls.append(("outer", name))
        return getter(name, *args, **kwargs)

    def inner(getter, name, *args, **kwargs):
        calls.append(("inner", name))
        kwargs["trainable"] = False
        return getter(name, *args, **kwargs)

    with tf.variable_scope("g", custom_getter=outer):
        with tf.variable_scope("h", custom_getter=inner):
            v = tf.get_variable("v", [1])
    assert calls == [("inner", "g/h/v"), ("outer", "g/h/v")]
    assert v.name == "g/h/v:0" and not v.trainable


def test_partitioner_makes_parts():
    # (tests/ops/state/test_partitioned_variables.py holds the rest, against TF1.)
    p = tf.get_variable("p", [5], partitioner=lambda shape, dtype: [2])
    assert [v.name for v in p] == ["p/part_0:0", "p/part_1:0"]
    assert [v.shape.as_list() for v in p] == [[3], [2]]


def test_gradients_and_training_through_get_variable(sess):
    with tf.variable_scope("lin"):
        w = tf.get_variable("w", initializer=[2.0, -1.0])
    loss = tf.reduce_sum(w * w)
    (grad,) = tf.gradients(loss, [w])
    sess.run(tf.global_variables_initializer())
    np.testing.assert_allclose(sess.run(grad), [4.0, -2.0])


def test_get_variable_in_cond_branches_lives_in_the_outer_graph(sess):
    pred = tf.placeholder(tf.bool, [])

    def branch(scale):
        def fn():
            with tf.variable_scope("branch", reuse=tf.AUTO_REUSE):
                v = tf.get_variable("v", [2], initializer=tf.ones_initializer())
            return v * scale

        return fn

    out = tf.cond(pred, branch(2.0), branch(3.0))
    (v,) = tf.global_variables()
    assert v.name == "branch/v:0" and v.graph is tf.get_default_graph()
    sess.run(tf.global_variables_initializer())
    np.testing.assert_array_equal(sess.run(out, {pred: True}), [2.0, 2.0])
    np.testing.assert_array_equal(sess.run(out, {pred: False}), [3.0, 3.0])


def test_scopes_are_per_thread():
    seen = {}
    graph = tf.get_default_graph()

    def worker():
        with graph.as_default():
            seen["name"] = tf.get_variable_scope().name

    with tf.variable_scope("main_thread_only"):
        t = threading.Thread(target=worker)
        t.start()
        t.join()
        assert tf.get_variable_scope().name == "main_thread_only"
    assert seen["name"] == ""


def test_improper_nesting_is_detected():
    outer = tf.variable_scope("o")
    inner = tf.variable_scope("i")
    outer.__enter__()
    inner.__enter__()
    with pytest.raises(RuntimeError, match="Improper nesting"):
        outer.__exit__(None, None, None)
    inner.__exit__(None, None, None)  # unwinds what is left (the graph stack)


# --- TF1 parity -------------------------------------------------------------------------------
def _naming_program(t):
    out = []
    with t.variable_scope("foo") as foo:
        out += [
            t.get_variable("v", [2]).name,
            t.constant(1.0, name="c").name,
            foo.name,
            foo.original_name_scope,
        ]
        with t.variable_scope("bar"):
            out += [t.get_variable("w", [2, 3]).name, t.constant(1.0).name]
    with t.variable_scope("foo", reuse=True):
        out += [t.get_variable("v", [2]).name, t.constant(2.0).name]
    with t.variable_scope(foo):
        out += [
            t.get_variable("v2", [2]).name,
            t.constant(2.0).name,
            t.get_variable_scope().original_name_scope,
        ]
    with t.variable_scope("outer"):
        with t.variable_scope(foo, reuse=True) as f2:
            out += [f2.name, f2.original_name_scope, t.constant(3.0).name, t.get_variable("v").name]
        with t.variable_scope("deeper", reuse=t.AUTO_REUSE):
            out += [t.get_variable("x", [1]).name, t.get_variable("x", [1]).name]
    for _ in range(3):
        with t.variable_scope(None, default_name="layer") as s:
            out += [
                s.name,
                s.original_name_scope,
                t.get_variable("k", [1]).name,
                t.constant(0).name,
            ]
    for _ in range(2):
        with t.variable_scope("a", reuse=t.AUTO_REUSE):  # "a/x" comes back on re-entry
            for _ in range(2):
                with t.variable_scope(None, default_name="x") as s:
                    out += [s.name, s.original_name_scope, t.get_variable("y", [1]).name]
    with t.name_scope("ns"):
        with t.variable_scope("vs"):
            out += [t.get_variable("q", [1]).name, t.constant(0).name]
        out.append(t.get_variable("r", [1]).name)
    with t.variable_scope(foo, auxiliary_name_scope=False) as s:
        out += [t.constant(5.0).name, s.original_name_scope]
    with t.variable_scope("a/b"):
        out.append(t.get_variable("deep", [1]).name)
    with t.variable_scope("m", default_name="ignored"):
        out.append(t.get_variable("n", [1]).name)
    out.append(t.get_variable("top", [1]).name)
    out.append(t.Variable(1.0, name="top").name)  # plain Variables uniquify
    out.append(t.get_local_variable("loc", [1]).name)
    out.append(sorted(v.name for v in t.global_variables()))
    out.append(sorted(v.name for v in t.trainable_variables()))
    out.append([v.name for v in foo.global_variables()])
    return out


@pytest.mark.tf
def test_naming_matches_tf1():
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    with tf1.Graph().as_default():
        want = _naming_program(tf1)
    assert _naming_program(tf) == want


def _error_program(t):
    out = []

    def catch(f):
        try:
            f()
        except Exception as e:
            return f"{type(e).__name__}: {str(e).splitlines()[0]}"
        return "no error"

    with t.variable_scope("foo"):
        t.get_variable("v", [2])

    def again():
        with t.variable_scope("foo"):
            t.get_variable("v", [2])

    def missing():
        with t.variable_scope("foo", reuse=True):
            t.get_variable("nope", [2])

    def shape():
        with t.variable_scope("foo", reuse=True):
            t.get_variable("v", [3])

    def dtype():
        with t.variable_scope("foo", reuse=True):
            t.get_variable("v", [2], dtype=t.int32)

    def reuse_default():
        with t.variable_scope(None, default_name="d", reuse=True):
            pass

    out.append(catch(again).split(" Originally")[0].strip())
    for f in (
        missing,
        shape,
        dtype,
        reuse_default,
        lambda: t.get_variable("x", [2], initializer=[1.0, 2.0]),
        lambda: t.get_variable("noshape"),
        lambda: t.variable_scope(None),
        lambda: t.variable_scope("a", reuse="yes"),
    ):
        out.append(catch(f))
    return out


@pytest.mark.tf
def test_errors_match_tf1():
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    with tf1.Graph().as_default():
        want = _error_program(tf1)
    assert _error_program(tf) == want


def _reentry_program(t):
    out = []
    layer = t.variable_scope(None, default_name="layer")
    with layer as s:
        out += [s.name, t.get_variable("w", [1]).name, t.constant(0).name]
    with layer as s:  # the same object again: same variable scope, new name scope
        out += [s.name, s.original_name_scope, t.constant(0).name]
    with t.variable_scope(None, default_name="layer") as s:
        out.append(s.name)
    foo = t.variable_scope("foo")
    for _ in range(2):
        with foo as s:
            out += [s.name, t.constant(0).name, t.get_variable_scope().original_name_scope]
    return out


@pytest.mark.tf
def test_reentering_one_variable_scope_object_matches_tf1():
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    with tf1.Graph().as_default():
        want = _reentry_program(tf1)
    got = _reentry_program(tf)
    assert got == want
    assert got[:4] == ["layer", "layer/w:0", "layer/Const:0", "layer"]
