"""``FileWriter`` and ``RunMetadata`` as TF1 programs use them (issue 28, defect 9),
against ``tensorflow.compat.v1``, read back with TensorBoard's own readers: a writer
never closed keeps its events, a writer made with a graph also writes the MetaGraphDef
event, and a traced step fills TF's ``RunMetadata`` protobuf."""

from __future__ import annotations

import gc
import glob
import subprocess
import sys
import time

import numpy as np
import pytest

import dataflow as tf

loader = pytest.importorskip("tensorboard.backend.event_processing.event_file_loader")
accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
meta_graph_pb2 = pytest.importorskip("tensorboard.compat.proto.meta_graph_pb2")


def _tf1():
    tf1 = pytest.importorskip("tensorflow").compat.v1
    tf1.disable_eager_execution()
    return tf1


def _events(logdir) -> list:
    out = []
    for path in sorted(glob.glob(f"{logdir}/events.out.tfevents.*")):
        out.extend(loader.LegacyEventFileLoader(path).Load())  # events as written
    return out


def _scalars(logdir) -> list[tuple[int, str, float]]:
    return [
        (e.step, v.tag, round(v.simple_value, 6))
        for e in _events(logdir)
        if e.HasField("summary")
        for v in e.summary.value
    ]


# A training script that logs a few scalars and exits without closing its writers: the
# common one-off script. With the default max_queue (10) and flush_secs (120), nothing
# but the file header would be on disk when it ends, had the writer no exit flush.
UNCLOSED = """
import sys
import {lib} as tf

tf.disable_eager_execution()
logdir = sys.argv[1]
x = tf.placeholder(tf.float32, [])
loss = tf.summary.scalar("loss", x * 2.0)
writer = tf.summary.FileWriter(logdir + "/kept")
with tf.Session() as sess:
    for step in range(3):
        writer.add_summary(sess.run(loss, {{x: step + 0.5}}), step)
    tf.summary.FileWriterCache.get(logdir + "/cached").add_summary(sess.run(loss, {{x: 7.0}}), 9)
print("exiting without close")
"""


@pytest.mark.tf
def test_a_writer_never_closed_keeps_its_events_at_exit(tmp_path):
    _tf1()
    got = {}
    for lib in ("dataflow", "tensorflow.compat.v1"):
        script = tmp_path / f"log_{lib.replace('.', '_')}.py"
        script.write_text(UNCLOSED.format(lib=lib))
        logdir = tmp_path / lib
        done = subprocess.run(
            [sys.executable, str(script), str(logdir)], capture_output=True, text=True, timeout=180
        )
        assert done.returncode == 0, done.stderr[-3000:]
        got[lib] = (_scalars(logdir / "kept"), _scalars(logdir / "cached"))
    ours, theirs = got["dataflow"], got["tensorflow.compat.v1"]
    # Ours flush at exit. TF's writers keep their events, some of them or none
    # depending on how far their writer thread got before the interpreter ended (all,
    # none and the first only were seen in CI runs), so TF is no oracle for whether
    # they are kept; what it keeps is always the first of ours, in order.
    assert ours[0] == [(0, "loss", 1.0), (1, "loss", 3.0), (2, "loss", 5.0)]
    assert theirs[0] == ours[0][: len(theirs[0])]
    assert ours[1] == [(9, "loss", 14.0)]
    assert theirs[1] == ours[1][: len(theirs[1])]
    assert got["dataflow"][1] == [(9, "loss", 14.0)]


def test_a_dropped_writer_is_closed_although_its_flush_thread_runs(tmp_path):
    """The background flush holds the log weakly: dropping the writer closes it (all
    events on disk at once), as with no thread at all."""
    writer = tf.summary.FileWriter(str(tmp_path), flush_secs=3600)
    writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag="a", simple_value=2.0)]), 4)
    assert _scalars(tmp_path) == []  # pending in memory
    del writer
    gc.collect()
    assert _scalars(tmp_path) == [(4, "a", 2.0)]


def test_events_are_written_every_flush_secs(tmp_path):
    writer = tf.summary.FileWriter(str(tmp_path), flush_secs=0.2)
    try:
        for step in range(3):
            writer.add_summary(
                tf.Summary(value=[tf.Summary.Value(tag="a", simple_value=step)]), step
            )
        deadline = time.monotonic() + 10
        while len(_scalars(tmp_path)) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [s for s, _, _ in _scalars(tmp_path)] == [0, 1, 2]
    finally:
        writer.close()


def _graph(lib):
    graph = lib.Graph()
    with graph.as_default():
        x = lib.placeholder(lib.float32, [None, 2], name="x")
        lib.identity(x * 2.0, name="y")
    return graph


def _kinds(logdir) -> list[str]:
    return [e.WhichOneof("what") for e in _events(logdir)]


@pytest.mark.tf
def test_writer_with_a_graph_writes_the_meta_graph_event_as_tf1(tmp_path):
    """``FileWriter(logdir, graph)`` writes the graph and a MetaGraphDef of it (TF1's
    ``SummaryToEventTransformer``); ``add_graph`` alone writes the graph only, in TF1 too."""
    tf1 = _tf1()
    metas = {}
    for name, lib in (("ours", tf), ("tf1", tf1)):
        graph = _graph(lib)
        lib.summary.FileWriter(str(tmp_path / name / "init"), graph).close()
        later = lib.summary.FileWriter(str(tmp_path / name / "later"))
        later.add_graph(graph)
        later.close()
        assert _kinds(tmp_path / name / "init") == ["file_version", "graph_def", "meta_graph_def"]
        assert _kinds(tmp_path / name / "later") == ["file_version", "graph_def"]
        (event,) = [e for e in _events(tmp_path / name / "init") if e.HasField("meta_graph_def")]
        metas[name] = meta_graph_pb2.MetaGraphDef.FromString(event.meta_graph_def)
    ours, theirs = metas["ours"], metas["tf1"]
    assert [n.op for n in ours.graph_def.node] == [n.op for n in theirs.graph_def.node]
    # Node names, but for the constant ``x * 2.0`` makes (TF1 names it "mul/y").
    named = [[n.name for n in m.graph_def.node if n.op != "Const"] for m in (ours, theirs)]
    assert named[0] == named[1] == ["x", "mul", "y"]
    ops = [op.name for op in ours.meta_info_def.stripped_op_list.op]
    assert ops == [op.name for op in theirs.meta_info_def.stripped_op_list.op]
    # TensorBoard reads it back as the run's meta graph.
    acc = accumulator.EventAccumulator(str(tmp_path / "ours" / "init"))
    acc.Reload()
    assert acc.Tags()["meta_graph"] and acc.MetaGraph().graph_def.node


def test_add_meta_graph_refuses_anything_else(tmp_path):
    with tf.summary.FileWriter(str(tmp_path)) as writer:
        with pytest.raises(TypeError, match="MetaGraphDef"):
            writer.add_meta_graph(tf.get_default_graph().as_graph_def())


def _traced_step(lib):
    """A traced training-style step; returns the filled RunMetadata and the wall-clock
    window (microseconds since the epoch) it ran in."""
    graph = lib.Graph()
    with graph.as_default():
        x = lib.placeholder(lib.float32, [None, 3], name="x")
        w = lib.constant(np.ones((3, 2), np.float32), name="w")
        h = lib.matmul(x, w, name="mm")
        lib.nn.relu(h, name="act")
        meta = lib.RunMetadata()
        options = lib.RunOptions(trace_level=lib.RunOptions.FULL_TRACE)
        with lib.Session(graph=graph) as sess:
            feed = {x: np.ones((2, 3), np.float32)}
            sess.run("act:0", feed)
            start = time.time() * 1e6
            sess.run("act:0", feed, options=options, run_metadata=meta)
            end = time.time() * 1e6
    return meta, start, end


def _outputs(node) -> list:
    return [
        (o.slot, o.tensor_description.dtype, [d.size for d in o.tensor_description.shape.dim])
        for o in node.output
    ]


@pytest.mark.tf
def test_run_metadata_is_tfs_protobuf_filled_as_tf1_fills_it(tmp_path):
    tf1 = _tf1()
    nodes = {}
    for name, lib in (("ours", tf), ("tf1", tf1)):
        meta, start, end = _traced_step(lib)
        assert type(meta).__name__ == "RunMetadata" and meta.step_stats.dev_stats
        nodes[name] = {
            n.node_name: (d.device, n) for d in meta.step_stats.dev_stats for n in d.node_stats
        }
        for device, n in nodes[name].values():
            assert start - 1 <= n.all_start_micros <= n.all_start_micros + n.all_end_rel_micros
            assert n.all_start_micros + n.all_end_rel_micros <= end + 1, (device, n.node_name)
            assert n.op_end_rel_micros <= n.all_end_rel_micros
        if name == "ours":
            ours_meta = meta
    ours, theirs = nodes["ours"], nodes["tf1"]
    for op in ("mm", "act"):  # the ops the program named, run by both
        assert ours[op][0] == theirs[op][0] == "/job:localhost/replica:0/task:0/device:CPU:0"
    assert ours["act"][1].timeline_label == theirs["act"][1].timeline_label == "act = Relu(mm)"
    assert ours["mm"][1].timeline_label.startswith("mm = MatMul(x, ")
    for op in ("mm", "act"):  # each output's slot, dtype (1: DT_FLOAT) and run-time shape
        assert _outputs(ours[op][1]) == _outputs(theirs[op][1]) == [(0, 1, [2, 2])]
    # Written with add_run_metadata, TensorBoard reads the same proto back.
    with tf.summary.FileWriter(str(tmp_path / "runs")) as writer:
        writer.add_run_metadata(ours_meta, "step_7", 7)
    acc = accumulator.EventAccumulator(str(tmp_path / "runs"))
    acc.Reload()
    read = acc.RunMetadata("step_7")
    assert {n.node_name for d in read.step_stats.dev_stats for n in d.node_stats} == set(ours)


def test_a_traced_run_replaces_what_run_metadata_held():
    x = tf.placeholder(tf.float32, [None])
    y = tf.reduce_sum(x * 3.0, name="total")
    meta = tf.RunMetadata()
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    with tf.Session() as sess:
        for _ in range(2):
            sess.run(y, {x: [1.0, 2.0]}, options=options, run_metadata=meta)
    names = [e["name"] for e in tf.viz.step_events(meta)]
    assert names.count("total") == 1
    trace = tf.viz.chrome_trace(meta)
    assert {"total"} <= {e["name"] for e in trace["traceEvents"] if e["ph"] == "X"}
