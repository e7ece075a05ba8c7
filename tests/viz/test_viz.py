"""Drawing graphs and exporting traces."""

from __future__ import annotations

import json
import shutil

import pytest

import dataflow as tf

needs_dot = pytest.mark.skipif(
    shutil.which("dot") is None, reason="the graphviz 'dot' binary is not installed"
)


def _small_graph():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    with tf.device("/cpu:0"):
        w = tf.Variable(tf.ones([3, 2]), name="w")
    y = tf.matmul(x, w, name="y")
    with tf.control_dependencies([y]):
        done = tf.no_op(name="done")
    return x, w, y, done


def test_to_dot_has_ops_data_and_control_edges():
    x, w, y, done = _small_graph()
    source = tf.viz.to_dot(tf.get_default_graph()).source
    assert '"x"' in source or "\tx " in source
    assert "MatMul" in source
    assert "style=dashed" in source  # the control edge y -> done
    assert "(?, 3)" in source  # a data edge labelled with its static shape


def test_to_dot_of_one_step_uses_placement():
    x, w, y, done = _small_graph()
    with tf.Session() as s:
        source = tf.viz.to_dot(s.graph, fetches=y, session=s).source
    assert "done" not in source  # pruned: not part of the step
    assert "/job:localhost/replica:0/task:0/device:CPU:0" in source


@needs_dot
def test_graph_repr_svg_and_visualize_to_file(tmp_path):
    _small_graph()
    graph = tf.get_default_graph()
    svg = graph._repr_svg_()
    assert svg.lstrip().startswith("<?xml") or "<svg" in svg
    out = graph.visualize(filename=str(tmp_path / "g"), format="svg")
    assert out.endswith(".svg")


def test_chrome_trace_export(tmp_path):
    x, w, y, done = _small_graph()
    meta = tf.RunMetadata()
    with tf.Session() as s:
        s.run(w.initializer)
        s.run(
            y,
            {x: [[1.0, 2.0, 3.0]]},
            options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
            run_metadata=meta,
        )
    path = tf.viz.write_chrome_trace(meta, str(tmp_path / "trace.json"))
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    names = {e["name"] for e in events if e["ph"] == "X"}
    assert "y" in names
    assert all(e["dur"] >= 0 for e in events if e["ph"] == "X")
