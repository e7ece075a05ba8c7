"""graphviz export, the one-line message without ``dot``, and trace export."""

from __future__ import annotations

import json
import pathlib
import shutil

import pytest

import dataflow as tf

from .models import mlp


def _small_graph():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    with tf.device("/cpu:0"):
        w = tf.Variable(tf.ones([3, 2]), name="w")
    y = tf.matmul(x, w, name="y")
    with tf.control_dependencies([y]):
        done = tf.no_op(name="done")
    return x, w, y, done


def test_to_dot_has_scopes_as_clusters_data_and_control_edges():
    _small_graph()
    source = tf.viz.to_dot(tf.get_default_graph()).source
    assert "subgraph cluster_" in source and "label=w" in source  # the variable's scope
    assert "MatMul" in source
    assert "style=dashed" in source  # the control edge y -> done
    assert "?\u00d73" in source  # a data edge labelled with its static shape


def test_to_dot_of_one_step_uses_placement():
    x, w, y, done = _small_graph()
    with tf.Session() as s:
        source = tf.viz.to_dot(s.graph, fetches=y, session=s).source
    assert "done" not in source  # pruned: not part of the step
    assert "/job:localhost/replica:0/task:0/device:CPU:0" in source


def test_to_dot_marks_send_recv_edges():
    graph, _ = mlp()
    source = tf.viz.to_dot(graph).source
    assert tf.viz.svg.SEND_RECV in source


@pytest.mark.skipif(
    shutil.which("dot") is None, reason="graphviz's dot is not installed (.ci/run installs it)"
)
def test_visualize_png_with_dot(tmp_path):
    _small_graph()
    out = tf.get_default_graph().visualize(filename=str(tmp_path / "g"), format="png")
    assert out.endswith(".png")
    with open(out, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"


def test_without_dot_svg_still_draws_and_other_formats_say_why(tmp_path, monkeypatch):
    _small_graph()
    graph = tf.get_default_graph()
    monkeypatch.setenv("PATH", str(tmp_path))  # no dot on this PATH
    svg_path = graph.visualize(filename=str(tmp_path / "g"))
    assert pathlib.Path(svg_path).read_text().startswith("<svg")
    with pytest.raises(RuntimeError) as info:
        graph.visualize(filename=str(tmp_path / "g"), format="png")
    message = str(info.value)
    assert "'dot' program is not installed" in message and "\n" not in message


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
