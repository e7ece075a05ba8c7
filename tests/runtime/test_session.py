"""The embedded Session: fetch structures, feeds, pruning, plan cache, errors, threads."""

from __future__ import annotations

import collections
import threading

import numpy as np
import pytest

import dataflow as tf
from dataflow.runtime import session as session_module


def test_seed_demo_expression(sess):
    # From the seed course: d = b + c; e = c + 2; a = d * e.
    b = tf.constant(1.0)
    c = tf.constant(2.0)
    d = tf.add(b, c)
    e = tf.add(c, 2.0)
    a = tf.multiply(d, e)
    assert sess.run(a) == 12.0
    assert sess.run(d * e) == 12.0


def test_paper_relu_matmul_loop_with_feeds():
    # The OSDI paper's example: relu(matmul(W, x) + b), run repeatedly with feed_dict.
    rng = np.random.default_rng(0)
    b = tf.Variable(tf.zeros([100]))
    W = tf.Variable(tf.random_uniform([784, 100], -1, 1))
    x = tf.placeholder(name="x", dtype=tf.float32)
    relu = tf.nn.relu(tf.matmul(x, W) + b)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        w_value = s.run(W)
        for _ in range(3):
            batch = rng.random((2, 784), dtype=np.float32)
            out = s.run(relu, {x: batch})
            np.testing.assert_allclose(out, np.maximum(batch @ w_value, 0), rtol=1e-5, atol=1e-5)


def test_nested_fetch_structures(sess):
    Pair = collections.namedtuple("Pair", "left right")
    a = tf.constant(1.0, name="a")
    b = tf.constant([2.0, 3.0], name="b")
    noop = tf.no_op()
    out = sess.run({"x": [a, (b, "a:0")], "p": Pair(a, noop), "op": "a"})
    assert out["x"][0] == 1.0
    np.testing.assert_array_equal(out["x"][1][0], [2.0, 3.0])
    assert out["x"][1][1] == 1.0
    assert isinstance(out["x"][1], tuple)
    assert isinstance(out["p"], Pair) and out["p"].left == 1.0 and out["p"].right is None
    assert out["op"] is None
    assert sess.run([]) == []


def test_scalar_fetches_are_numpy_scalars_and_arrays_keep_dtype(sess):
    s = sess.run(tf.constant(2.5))
    assert isinstance(s, np.float32)
    v = sess.run(tf.constant([1, 2], dtype=tf.int64))
    assert v.dtype == np.int64


def test_feed_any_tensor_and_prune_cuts_at_feeds(sess):
    x = tf.placeholder(tf.float32, [2], name="x")
    y = x * 2.0
    z = y + 1.0
    # Feeding y means x is never needed (pruned away), so no feed for x is required.
    np.testing.assert_array_equal(sess.run(z, {y: [10.0, 20.0]}), [11.0, 21.0])
    np.testing.assert_array_equal(sess.run(z, {"x:0": [1.0, 2.0]}), [3.0, 5.0])


def test_unfed_placeholder_names_it(sess):
    x = tf.placeholder(tf.float32, [None, 3], name="inputs")
    with pytest.raises(
        tf.errors.InvalidArgumentError,
        match=r"You must feed a value for placeholder tensor 'inputs' with "
        r"dtype float32 and shape \[\?,3\]",
    ):
        sess.run(x * 2.0)


def test_wrong_feed_shape_is_value_error(sess):
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    with pytest.raises(
        ValueError,
        match=r"Cannot feed value of shape \(2, 2\) for Tensor "
        r"'x:0', which has shape '\(\?, 3\)'",
    ):
        sess.run(x, {x: np.zeros((2, 2))})
    with pytest.raises(TypeError, match="cannot be a tf.Tensor"):
        sess.run(x, {x: tf.constant(np.zeros((1, 3), np.float32))})


def test_uninitialized_variable_names_it(sess):
    v = tf.Variable([1.0, 2.0], name="weights")
    with pytest.raises(
        tf.errors.FailedPreconditionError, match="Attempting to use uninitialized value weights"
    ):
        sess.run(v)
    assert sess.run(tf.report_uninitialized_variables()).tolist() == [b"weights"]
    sess.run(v.initializer)
    assert sess.run(tf.report_uninitialized_variables()).tolist() == []


def test_check_numerics_raises_invalid_argument(sess):
    x = tf.placeholder(tf.float32, [2])
    y = tf.debugging.check_numerics(tf.log(x), "log went bad")
    np.testing.assert_allclose(sess.run(y, {x: [1.0, 2.0]}), np.log([1.0, 2.0]), rtol=1e-6)
    with pytest.raises(tf.errors.InvalidArgumentError, match="log went bad"):
        with np.errstate(divide="ignore", invalid="ignore"):
            sess.run(y, {x: [-1.0, 2.0]})


def test_failed_step_leaves_variables_as_before_the_failing_op(sess):
    v = tf.Variable([1.0, 2.0], name="v")
    w = tf.Variable([5.0], name="w")
    x = tf.placeholder(tf.float32, [2])
    update_v = v.assign_add(x)
    with tf.control_dependencies([update_v]):
        bad = tf.debugging.check_numerics(x * 0.0 + tf.log(x), "boom")
    with tf.control_dependencies([bad]):
        update_w = w.assign_add([1.0])
    sess.run(tf.global_variables_initializer())
    with pytest.raises(tf.errors.InvalidArgumentError, match="boom"):
        with np.errstate(divide="ignore", invalid="ignore"):
            sess.run(update_w, {x: [0.0, -1.0]})
    # v's update ran before the failing op (and is whole); w's never ran.
    np.testing.assert_array_equal(sess.run(v), [1.0, 1.0])
    np.testing.assert_array_equal(sess.run(w), [5.0])


def test_kernel_failure_names_op_type_and_build_site(sess):
    x = tf.placeholder(tf.float32, None)
    y = tf.reshape(x, [2, 2], name="reshape_me")
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        sess.run(y, {x: np.zeros(5)})
    assert "reshape_me" in str(info.value) and "test_session.py" in str(info.value)
    assert info.value.op == "reshape_me"


def test_plan_is_cached_per_signature(monkeypatch, sess):
    calls = []
    real = session_module.compile_plan
    monkeypatch.setattr(
        session_module, "compile_plan", lambda *a, **k: calls.append(1) or real(*a, **k)
    )
    x = tf.placeholder(tf.float32, [3])
    y = x * 2.0 + 1.0
    for i in range(5):
        sess.run(y, {x: [i, i, i]})
    assert len(calls) == 1
    # The same flat fetches in another nesting reuse the plan; other feed keys do not.
    assert sess.run([y], {x: [1, 2, 3]})[0].tolist() == [3.0, 5.0, 7.0]
    assert len(calls) == 1
    sess.run(y, {"Placeholder:0": [1, 2, 3]})
    sess.run([y, x], {x: [1, 2, 3]})
    assert len(calls) == 3


def test_eval_run_and_default_sessions():
    v = tf.Variable(3.0)
    y = v * 2.0
    with tf.Session() as s:
        v.initializer.run()
        assert y.eval() == 6.0
        assert v.eval() == 3.0
        v.load(5.0)
        assert y.eval(session=s) == 10.0
        assert tf.get_default_session() is s
    assert tf.get_default_session() is None
    with pytest.raises(ValueError, match="No default session"):
        y.eval()


def test_interactive_session_installs_itself():
    s = tf.InteractiveSession()
    try:
        c = tf.constant(4.0)
        assert c.eval() == 4.0
    finally:
        s.close()
    assert tf.get_default_session() is None


def test_interactive_session_leaves_the_graph_stack_as_tf1():
    # Issue 35: without a graph it never enters one, so reset works after close().
    x = tf.constant(1.0)
    sess = tf.InteractiveSession()
    assert x.eval() == 1.0
    sess.close()
    tf.reset_default_graph()
    assert x.graph is not tf.get_default_graph()
    # An explicit graph is the default graph until close(), even when closed out of order.
    g = tf.Graph()
    sess = tf.InteractiveSession(graph=g)
    assert tf.constant(2.0).graph is g
    other = tf.Graph().as_default()
    other.__enter__()
    sess.close()
    sess.close()  # a second close leaves nothing more
    assert tf.get_default_graph() is not g
    other.__exit__(None, None, None)
    tf.reset_default_graph()


def test_closed_session_refuses_to_run():
    s = tf.Session()
    c = tf.constant(1.0)
    s.close()
    with pytest.raises(RuntimeError, match="closed Session"):
        s.run(c)


def test_sessions_have_separate_state():
    v = tf.Variable(1.0)
    inc = v.assign_add(1.0)
    with tf.Session() as a, tf.Session() as b:
        a.run(v.initializer)
        b.run(v.initializer)
        a.run(inc)
        assert a.run(v) == 2.0 and b.run(v) == 1.0


def test_fetched_variable_value_is_a_private_copy(sess):
    v = tf.Variable(np.zeros(3, np.float32))
    sess.run(v.initializer)
    out = sess.run(v)
    out += 1.0
    np.testing.assert_array_equal(sess.run(v), np.zeros(3))


def test_concurrent_locked_assign_add_loses_nothing():
    counter = tf.Variable(0, dtype=tf.int64, name="counter")
    inc = tf.assign_add(counter, tf.constant(1, tf.int64), use_locking=True)
    with tf.Session() as s:
        s.run(counter.initializer)

        def work():
            for _ in range(250):
                s.run(inc)

        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert s.run(counter) == 1000


def test_control_dependencies_order_reads_after_updates(sess):
    v = tf.Variable(1.0)
    update = v.assign(10.0)
    with tf.control_dependencies([update]):
        read = v * 1.0
    sess.run(v.initializer)
    assert sess.run(read) == 10.0


def test_unknown_fetch_is_a_clear_error(sess):
    # TF1's classes: ValueError for an unknown name (not the graph's KeyError).
    with pytest.raises(ValueError, match="nope:0.*does not exist"):
        sess.run("nope:0")
    with pytest.raises(ValueError, match="nope.*not in the graph"):
        sess.run("nope")
    with pytest.raises(TypeError, match="None"):
        sess.run([None])
    other = tf.Graph()
    with other.as_default():
        t = tf.constant(1.0)
    with pytest.raises(ValueError, match="not an element of this graph"):
        sess.run(t)


def test_bad_feeds_and_sessions_raise_tf1_classes(sess):
    x = tf.placeholder(tf.int32, [], name="x")
    y = x + 1
    with pytest.raises(TypeError, match="2199023255552.*int32.*int64"):
        sess.run(y, {x: 2**41})
    with pytest.raises(TypeError, match="feed_dict must be a dictionary"):
        sess.run(y, [1])
    assert sess.run(y, {x: 2}) == 3
    assert sess.run(tf.constant(1.0), []) == 1.0  # an empty feed_dict of any kind: none
    with pytest.raises(TypeError, match="Cannot interpret feed_dict key.*nope:0"):
        sess.run(y, {"nope:0": 1})
    with pytest.raises(TypeError, match="graph must be a tf.Graph"):
        tf.Session(graph=3)
    with pytest.raises(TypeError, match="config must be a tf.ConfigProto"):
        tf.Session(config={"allow_soft_placement": True})
    with pytest.raises(ValueError, match="nope"):
        sess.compiled_plan("nope:0")


def test_trace_run_metadata(sess):
    x = tf.placeholder(tf.float32, [2])
    y = x * 3.0
    meta = tf.RunMetadata()
    sess.run(
        y,
        {x: [1.0, 2.0]},
        options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
        run_metadata=meta,
    )
    assert isinstance(meta, tf.RunMetadata) and meta.step_stats.dev_stats
    trace = tf.viz.chrome_trace(meta)
    assert any(e.get("ph") == "X" for e in trace["traceEvents"])


def test_traced_steps_reuse_their_binding_and_each_gets_its_own_events(sess):
    """A plan's timed binding is kept (kernels keep their state between traced steps),
    each traced step reports only its own kernels, and traced steps running at the
    same time from two threads do not mix their events."""
    x = tf.placeholder(tf.float32, [None])
    y = tf.reduce_sum(x * 3.0 + 1.0)
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)

    def traced(value):
        meta = tf.RunMetadata()
        assert sess.run(y, {x: value}, options=options, run_metadata=meta) == pytest.approx(
            float(np.sum(np.asarray(value) * 3.0 + 1.0))
        )
        return [e["name"] for e in tf.viz.step_events(meta)]

    first = traced([1.0, 2.0])
    assert first and traced([3.0]) == first  # the same kernels, not twice as many
    backend = sess._backend
    assert len(backend._traced) == 1  # one kept binding for the plan
    results = []
    threads = [
        threading.Thread(target=lambda: results.append(traced([1.0] * 1000))) for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [first] * 4
    assert len(backend._traced) == 1


def test_make_callable(sess):
    x = tf.placeholder(tf.float32, [])
    f = sess.make_callable(x * 2.0, [x])
    assert f(3.0) == 6.0


def test_constant_subexpressions_are_folded_into_the_plan(sess):
    x = tf.placeholder(tf.float32, [2])
    scale = tf.constant(2.0) * tf.constant(3.0) + 1.0  # all constant: folded
    y = x * scale
    np.testing.assert_allclose(sess.run(y, {x: [1.0, 2.0]}), [7.0, 14.0])
    source = sess._signature(y, {x: 0}).bound.stages[0].source
    assert source.count("= k") == 1  # only the multiply by x runs


def test_assign_add_writes_in_place_and_a_bad_shape_leaves_the_value(sess):
    v = tf.Variable(np.zeros((2, 3)), name="v")
    delta = tf.placeholder(tf.float64)
    inc, dec = tf.assign_add(v, delta), tf.assign_sub(v, delta)
    sess.run(v.initializer)
    store = sess.backend.resource_store()
    address = store.read("v").__array_interface__["data"][0]
    sess.run(inc.op, {delta: np.ones((2, 3))})
    sess.run(dec.op, {delta: np.full(3, 0.5)})  # broadcast along rows
    assert store.read("v").__array_interface__["data"][0] == address
    with pytest.raises(tf.errors.InvalidArgumentError, match="would change its shape"):
        sess.run(inc.op, {delta: np.ones((4, 2, 3))})
    np.testing.assert_array_equal(sess.run(v), np.full((2, 3), 0.5))
    assert not store.read("v").flags.writeable


@pytest.mark.tf
def test_a_control_edge_from_a_fed_placeholder_is_satisfied_by_the_feed():
    # TF's feed rewrite drops a fed Placeholder's control edges (tf.metrics.mean relies
    # on it).
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    results = []
    for lib in (tf, tf1):
        with lib.Graph().as_default():
            x = lib.placeholder(lib.float32, [])
            with lib.control_dependencies([x]):
                y = lib.identity(lib.constant(1.0))
            with lib.Session() as sess:
                results.append(float(sess.run(y, {x: 2.0})))
    assert results == [1.0, 1.0]
