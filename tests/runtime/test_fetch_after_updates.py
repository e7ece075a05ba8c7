"""The compiler's ordering of fetched ref-variable reads (``runtime/prune.after_updates``):
a fetched read follows the step's other uses of its variable, never its own consumers,
and reads that would wait on each other fall back to their data order."""

from __future__ import annotations

import dataflow as tf
from dataflow.runtime.compile.prune import after_updates, prune


def test_fetched_read_follows_the_updates_of_its_own_variable_only():
    w, v = tf.Variable(1.0, name="w"), tf.Variable(5.0, name="v")
    bump_w, bump_v = w.assign_add(1.0), v.assign_add(1.0)
    read_w = tf.get_default_graph().as_graph_element(w)
    ops = prune([read_w], [bump_w.op, bump_v.op], set())
    extra = after_updates(ops, [read_w])
    assert [op.name for op in extra[read_w.op]] == [bump_w.op.name]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run([bump_w, bump_v, w, v]) == [2.0, 6.0, 2.0, 6.0]


def test_a_read_that_feeds_the_update_is_not_moved_after_it():
    w = tf.Variable(1.0, name="w")
    read_w = tf.get_default_graph().as_graph_element(w)
    double = w.assign(read_w * 2.0)  # consumes the fetched read itself
    ops = prune([read_w], [double.op], set())
    assert after_updates(ops, [read_w]) == {}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run([double, read_w]) == [2.0, 1.0]


def test_reads_feeding_each_others_updates_fall_back_to_data_order():
    a, b = tf.Variable(1.0, name="a"), tf.Variable(2.0, name="b")
    graph = tf.get_default_graph()
    read_a, read_b = graph.as_graph_element(a), graph.as_graph_element(b)
    swap = [a.assign(read_b), b.assign(read_a)]  # each read must precede the other's write
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run([*swap, read_a, read_b]) == [2.0, 1.0, 1.0, 2.0]
        assert sess.run([a, b]) == [2.0, 1.0]
