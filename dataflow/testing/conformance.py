"""One suite of session behaviours that every executor must show, unchanged.

``SessionConformance`` is a test mixin (in the manner of dask's
``GetFunctionTestMixin``): a test module subclasses it and provides a ``session``
fixture, a ``tf.Session`` on the default graph of the test, and the same tests then run
on that executor. ``tests/runtime/test_conformance.py`` runs it on the embedded
session; ``tests/distributed/test_conformance_cluster.py`` on a ``LocalCluster``, on
both the per-step graph path and resident steps. What it checks is what a TF1 program
relies on whatever runs it: fetch structures, feeds, variables and their updates,
control dependencies, gradients, control flow, queues, deadlines, strings, and the
error classes of a bad step, after which the session still works.

Every expected value comes from numpy or arithmetic written in the test, not from
another executor.
"""

from __future__ import annotations

import collections
from typing import Any

import numpy as np
import pytest

import dataflow as tf


class SessionConformance:
    """Subclass in a test module and define the ``session`` fixture."""

    @pytest.fixture
    def session(self) -> Any:  # pragma: no cover - always overridden
        raise NotImplementedError("a conformance test module provides the session fixture")

    # --- fetches ------------------------------------------------------------------------
    def test_fetch_structures(self, session: Any) -> None:
        a = tf.constant(1.0)
        b = tf.constant([2, 3])
        pair = collections.namedtuple("pair", "x y")
        out = session.run({"a": a, "nested": [b, (a, pair(a, b))]})
        assert out["a"] == 1.0
        np.testing.assert_array_equal(out["nested"][0], [2, 3])
        assert isinstance(out["nested"][1], tuple)
        assert isinstance(out["nested"][1][1], pair) and out["nested"][1][1].x == 1.0

    def test_fetch_an_op_gives_none_and_a_tensor_twice(self, session: Any) -> None:
        a = tf.constant([1.0, 2.0])
        out = session.run([tf.no_op(), a, a])
        assert out[0] is None
        np.testing.assert_array_equal(out[1], out[2])

    def test_fetch_by_name(self, session: Any) -> None:
        tf.constant(5, name="five")
        assert session.run("five:0") == 5

    # --- feeds --------------------------------------------------------------------------
    def test_feed_placeholders(self, session: Any) -> None:
        x = tf.placeholder(tf.float32, [None, 2])
        y = tf.reduce_sum(x * 2.0, axis=1)
        value = np.arange(6, dtype=np.float32).reshape(3, 2)
        np.testing.assert_allclose(session.run(y, {x: value}), (value * 2).sum(1))
        np.testing.assert_allclose(session.run(y, {"Placeholder:0": value[:1]}), [2.0])

    def test_feed_replaces_a_computed_tensor(self, session: Any) -> None:
        a = tf.constant(3.0)
        b = a * 2.0
        c = b + 1.0
        assert session.run(c) == 7.0
        assert session.run(c, {b: 10.0}) == 11.0

    def test_unfed_placeholder_is_invalid_argument(self, session: Any) -> None:
        x = tf.placeholder(tf.float32, [2], name="needed")
        with pytest.raises(tf.errors.InvalidArgumentError, match="needed"):
            session.run(x + 1.0)
        np.testing.assert_allclose(session.run(x + 1.0, {x: [1.0, 2.0]}), [2.0, 3.0])

    def test_feed_of_the_wrong_shape_is_refused(self, session: Any) -> None:
        x = tf.placeholder(tf.float32, [2])
        with pytest.raises(ValueError, match="shape"):
            session.run(x + 1.0, {x: np.zeros(3, np.float32)})

    # --- variables ----------------------------------------------------------------------
    def test_variables_keep_their_values_between_steps(self, session: Any) -> None:
        v = tf.Variable([1.0, 2.0], name="kept")
        session.run(v.initializer)
        session.run(v.assign_add([1.0, 1.0]))
        session.run(v.assign_sub([0.5, 0.5]))
        np.testing.assert_allclose(session.run(v), [1.5, 2.5])
        session.run(v.assign([0.0, 0.0]))
        np.testing.assert_allclose(session.run(v), [0.0, 0.0])

    def test_uninitialized_read_fails_and_changes_nothing(self, session: Any) -> None:
        v = tf.Variable(3.0, name="late")
        with pytest.raises(tf.errors.FailedPreconditionError, match="late"):
            session.run(v)
        session.run(tf.global_variables_initializer())
        assert session.run(v) == 3.0
        assert session.run(tf.report_uninitialized_variables()).size == 0

    def test_control_dependencies_order_a_read_after_an_update(self, session: Any) -> None:
        v = tf.Variable(0.0)
        session.run(v.initializer)
        update = v.assign_add(1.0)
        with tf.control_dependencies([update]):
            after = v.read_value() + 0.0
        assert session.run(after) == 1.0
        assert session.run(after) == 2.0

    def test_string_variables(self, session: Any) -> None:
        s = tf.Variable(tf.constant(["a", "bc"]), name="words")
        session.run(s.initializer)
        session.run(s.assign(tf.constant(["xyz", ""])))
        assert list(session.run(s)) == [b"xyz", b""]

    # --- gradients and training -----------------------------------------------------------
    def test_gradient_descent_step(self, session: Any) -> None:
        w = tf.Variable([1.0, -2.0])
        x = tf.constant([3.0, 4.0])
        loss = tf.reduce_sum(w * x) ** 2  # d/dw = 2 (w.x) x
        step = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
        session.run(w.initializer)
        session.run(step)
        wx = 1.0 * 3.0 - 2.0 * 4.0
        want = np.array([1.0, -2.0]) - 0.01 * 2 * wx * np.array([3.0, 4.0])
        np.testing.assert_allclose(session.run(w), want, rtol=1e-6)

    def test_gradients_of_a_fed_graph(self, session: Any) -> None:
        x = tf.placeholder(tf.float64, [3])
        (g,) = tf.gradients(tf.reduce_sum(tf.sin(x) * x), [x])
        v = np.array([0.1, 0.5, 2.0])
        np.testing.assert_allclose(session.run(g, {x: v}), np.cos(v) * v + np.sin(v))

    # --- control flow -------------------------------------------------------------------
    def test_cond_and_while_loop(self, session: Any) -> None:
        p = tf.placeholder(tf.bool, [])
        out = tf.cond(p, lambda: tf.constant(1.0), lambda: tf.constant(-1.0))
        assert session.run(out, {p: True}) == 1.0
        assert session.run(out, {p: False}) == -1.0
        i, total = tf.while_loop(
            lambda i, t: i < 5, lambda i, t: (i + 1, t + tf.cast(i, tf.float32)), [0, 0.0]
        )
        assert session.run([i, total]) == [5, 10.0]

    # --- queues and deadlines -------------------------------------------------------------
    def test_fifo_queue_round_trip(self, session: Any) -> None:
        q = tf.FIFOQueue(4, [tf.int32, tf.float32], shapes=[[], [2]])
        n = tf.placeholder(tf.int32, [])
        enqueue = q.enqueue([n, tf.fill([2], tf.cast(n, tf.float32))])
        for k in range(3):
            session.run(enqueue, {n: k})
        assert session.run(q.size()) == 3
        first, vec = session.run(q.dequeue())
        assert first == 0 and list(vec) == [0.0, 0.0]
        ints, vecs = session.run(q.dequeue_many(2))
        assert list(ints) == [1, 2] and vecs.shape == (2, 2)

    def test_a_blocked_dequeue_meets_its_deadline(self, session: Any) -> None:
        q = tf.FIFOQueue(2, [tf.float32], shapes=[[]])
        options = tf.RunOptions(timeout_in_ms=300)
        with pytest.raises(tf.errors.DeadlineExceededError):
            session.run(q.dequeue(), options=options)
        session.run(q.enqueue([1.0]))
        assert session.run(q.dequeue(), options=options) == 1.0

    def test_closed_empty_queue_is_out_of_range(self, session: Any) -> None:
        q = tf.FIFOQueue(2, [tf.float32], shapes=[[]])
        session.run(q.enqueue([1.0]))
        session.run(q.close())
        assert session.run(q.dequeue()) == 1.0
        with pytest.raises(tf.errors.OutOfRangeError):
            session.run(q.dequeue())

    # --- a failing step -------------------------------------------------------------------
    def test_a_kernel_error_names_the_op_and_leaves_state_alone(self, session: Any) -> None:
        v = tf.Variable([1.0, 2.0])
        session.run(v.initializer)
        shape = tf.placeholder(tf.int32, [1])
        bad = tf.reshape(v.read_value(), shape, name="bad_reshape")
        with tf.control_dependencies([bad]):
            update = v.assign_add([1.0, 1.0])
        with pytest.raises(tf.errors.InvalidArgumentError, match="bad_reshape"):
            session.run(update, {shape: [3]})
        np.testing.assert_allclose(session.run(v), [1.0, 2.0])
        session.run(update, {shape: [2]})
        np.testing.assert_allclose(session.run(v), [2.0, 3.0])

    def test_integer_division_by_zero_is_invalid_argument(self, session: Any) -> None:
        d = tf.placeholder(tf.int32, [])
        with pytest.raises(tf.errors.InvalidArgumentError):
            session.run(tf.constant(7) // d, {d: 0})
        assert session.run(tf.constant(7) // d, {d: 2}) == 3

    def test_fetching_an_unknown_name_is_a_value_error(self, session: Any) -> None:
        with pytest.raises(ValueError, match="no_such_tensor"):
            session.run("no_such_tensor:0")
        assert session.run(tf.constant(1)) == 1
