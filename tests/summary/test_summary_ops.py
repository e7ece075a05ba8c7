"""Summary ops and ``FileWriter``: tags, collections, bad input (with TF1's error
classes, checked against ``tensorflow.compat.v1``), and the writer's behaviour."""

from __future__ import annotations

import glob

import numpy as np
import pytest
from tensorboard.compat.proto import event_pb2, summary_pb2

import dataflow as tf


def _tf1():
    return pytest.importorskip("tensorflow.compat.v1")


def _summary(serialized) -> summary_pb2.Summary:
    return summary_pb2.Summary.FromString(serialized)


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default() as g:
        yield g


def test_scalar_returns_a_serialized_summary_and_joins_the_collection():
    s = tf.summary.scalar("loss", tf.constant(2.5))
    assert (s.dtype, s.shape.as_list(), s.op.type, s.op.name) == (
        tf.string,
        [],
        "ScalarSummary",
        "loss",
    )
    assert tf.get_collection(tf.GraphKeys.SUMMARIES) == [s]
    with tf.Session() as sess:
        (value,) = _summary(sess.run(s)).value
    assert (value.tag, value.simple_value) == ("loss", 2.5)


@pytest.mark.tf
@pytest.mark.parametrize(
    "name, family",
    [("loss", None), ("a b:c", None), ("/lead", None), ("x", "fam"), ("x", "fam ily")],
)
def test_tags_and_op_names_match_tf(name, family):
    tf1 = _tf1()

    def build(lib):
        with lib.Graph().as_default():
            with lib.name_scope("outer"):
                first = lib.summary.scalar(name, lib.constant(1.0), family=family)
                second = lib.summary.scalar(name, lib.constant(2.0), family=family)
            with lib.Session() as sess:
                tags = [_summary(b).value[0].tag for b in sess.run([first, second])]
            return tags, [first.op.name, second.op.name]

    assert build(tf) == build(tf1)


def test_collections_argument_and_merge_all_by_key():
    a = tf.summary.scalar("a", 1.0, collections=["mine"])
    b = tf.summary.histogram("b", [1.0, 2.0], collections=["mine", "other"])
    assert tf.summary.merge_all() is None
    assert tf.get_collection("other") == [b]
    merged = tf.summary.merge_all(key="mine")
    with tf.Session() as sess:
        tags = [v.tag for v in _summary(sess.run(merged)).value]
    assert tags == ["a", "b"] and a is not None


def test_merge_of_serialized_summaries_fed_in():
    fed = tf.placeholder(tf.string, [])
    merged = tf.summary.merge([fed, tf.summary.scalar("x", 3.0)])
    outside = summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag="y", simple_value=1)])
    with tf.Session() as sess:
        out = _summary(sess.run(merged, {fed: outside.SerializeToString()}))
    assert [(v.tag, v.simple_value) for v in out.value] == [("y", 1.0), ("x", 3.0)]


def test_merged_bytes_are_tf1s_for_canonical_and_reordered_inputs():
    """The merged summary is the inputs' values in order, serialized as TF1's kernel
    serializes them: byte for byte TF1's, also for an input whose fields come in
    another order than a serializer writes them (the merge writes it out anew)."""
    tf1 = _tf1()
    value = summary_pb2.Summary.Value(tag="y", simple_value=1.0).SerializeToString()
    # Field 2 (simple_value) before field 1 (tag): valid, not canonical.
    tag_field = value[: 2 + len("y")]
    reordered = b"\x0a" + bytes([len(value)]) + value[len(tag_field) :] + tag_field
    assert summary_pb2.Summary.FromString(reordered).value[0].tag == "y"
    canonical = summary_pb2.Summary(
        value=[summary_pb2.Summary.Value(tag="z", simple_value=2.0)]
    ).SerializeToString()

    def merged(lib):
        with lib.Graph().as_default():
            fed = [lib.placeholder(lib.string, []) for _ in range(2)]
            out = lib.summary.merge([fed[0], lib.summary.scalar("x", 3.0), fed[1]])
            with lib.Session() as sess:
                return sess.run(out, {fed[0]: reordered, fed[1]: canonical})

    ours = merged(tf)
    assert ours == merged(tf1)
    assert [v.tag for v in _summary(ours).value] == ["y", "x", "z"]


# --- bad input: the same error class as TF1, at the same time --------------------------------
def _error_class(lib, build, run):
    with lib.Graph().as_default():
        try:
            out = build(lib)
        except Exception as exc:  # build time
            return "build", type(exc).__name__
        try:
            with lib.Session() as sess:
                run(sess, out)
        except Exception as exc:
            return "run", type(exc).__name__
    return None


@pytest.mark.tf
@pytest.mark.parametrize(
    "case",
    [
        "histogram_nan",
        "histogram_inf",
        "duplicate_tags",
        "text_of_floats",
        "scalar_of_bool",
        "scalar_of_a_vector",
        "image_of_rank_three",
        "audio_of_rank_four",
    ],
)
def test_bad_input_raises_tf1s_error_class(case):
    tf1 = _tf1()
    nan = np.array([1.0, np.nan], np.float32)
    builds = {
        "histogram_nan": lambda lib: lib.summary.histogram("h", lib.constant(nan)),
        "histogram_inf": lambda lib: lib.summary.histogram("h", lib.constant([np.inf])),
        "duplicate_tags": lambda lib: lib.summary.merge([lib.summary.scalar("a", 1.0)] * 2),
        "text_of_floats": lambda lib: lib.summary.text("t", lib.constant(1.0)),
        "scalar_of_bool": lambda lib: lib.summary.scalar("s", lib.constant(True)),
        # Shapes are checked when the step runs, in TF1's kernels and in ours.
        "scalar_of_a_vector": lambda lib: lib.summary.scalar("s", lib.zeros([3])),
        "image_of_rank_three": lambda lib: lib.summary.image("i", lib.zeros([2, 3, 3])),
        "audio_of_rank_four": lambda lib: lib.summary.audio("a", lib.zeros([1, 4, 2, 2]), 8000),
    }
    run = lambda sess, out: sess.run(out)
    ours = _error_class(tf, builds[case], run)
    theirs = _error_class(tf1, builds[case], run)
    assert ours is not None and ours == theirs


def test_histogram_nan_error_names_the_tag_and_the_session_stays_usable():
    x = tf.placeholder(tf.float32, [None])
    h = tf.summary.histogram("weights", x)
    with tf.Session() as sess:
        with pytest.raises(
            tf.errors.InvalidArgumentError, match="Nan in summary histogram for: weights"
        ):
            sess.run(h, {x: [np.nan]})
        assert _summary(sess.run(h, {x: [1.0]})).value[0].histo.num == 1


def test_image_max_outputs_must_be_positive():
    with pytest.raises(ValueError, match="max_outputs"):
        tf.summary.image("i", tf.zeros([1, 2, 2, 1]), max_outputs=0)


# --- FileWriter --------------------------------------------------------------------------------
def _events(logdir) -> list[event_pb2.Event]:
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

    events = []
    for path in sorted(glob.glob(f"{logdir}/events.out.tfevents.*")):
        events.extend(EventFileLoader(path).Load())
    return events


def test_writer_takes_protos_and_bytes_and_strips_repeated_plugin_metadata(tmp_path):
    text = tf.summary.text("note", tf.constant("hi"))
    with tf.Session() as sess:
        serialized = sess.run(text)
    with tf.summary.FileWriter(str(tmp_path)) as writer:
        writer.add_summary(serialized, 1)
        writer.add_summary(_summary(serialized), 2)
        assert writer.get_logdir() == str(tmp_path)
    values = [e.summary.value[0] for e in _events(tmp_path) if e.HasField("summary")]
    assert [v.HasField("metadata") for v in values] == [True, False]
    assert [e.step for e in _events(tmp_path) if e.HasField("summary")] == [1, 2]


def test_writer_rejects_other_things(tmp_path):
    with tf.summary.FileWriter(str(tmp_path)) as writer:
        with pytest.raises(TypeError, match="Summary proto or serialized bytes"):
            writer.add_summary(3.0)
        with pytest.raises(TypeError, match="Graph or a GraphDef"):
            writer.add_graph("graph")


def test_run_metadata_from_a_traced_step_and_its_tag_once(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    y = tf.matmul(tf.ones([2, 2]), tf.ones([2, 2]), name="product")
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    metadata = tf.RunMetadata()
    with tf.Session() as sess:
        sess.run(y, options=options, run_metadata=metadata)
    with tf.summary.FileWriter(str(tmp_path)) as writer:
        writer.add_run_metadata(metadata, "step1", 1)
        with pytest.raises(ValueError, match="already used"):
            writer.add_run_metadata(metadata, "step1", 2)
    ea = EventAccumulator(str(tmp_path))
    ea.Reload()
    assert ea.Tags()["run_metadata"] == ["step1"]
    nodes = [
        n.node_name for d in ea.RunMetadata("step1").step_stats.dev_stats for n in d.node_stats
    ]
    assert "product" in nodes


def test_events_reach_the_file_without_flush_after_flush_secs(tmp_path):
    import time

    writer = tf.summary.FileWriter(str(tmp_path), flush_secs=0.1)
    writer.add_summary(
        summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag="a", simple_value=1)]), 5
    )
    deadline = time.monotonic() + 10
    while not any(e.step == 5 for e in _events(tmp_path)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert any(e.step == 5 for e in _events(tmp_path))
    writer.close()


def test_reopen_starts_a_new_file_and_a_closed_writer_drops_events_as_tf1(tmp_path, dataflow_log):
    writer = tf.summary.FileWriter(str(tmp_path), filename_suffix=".v1")
    writer.close()
    # TF1 warns and drops what a closed writer is given (a Supervisor's loop that
    # starts over writes to the writer its last session closed).
    writer.add_session_log(event_pb2.SessionLog(status=event_pb2.SessionLog.START))
    assert "closed FileWriter" in dataflow_log.text
    assert [e.file_version for e in _events(tmp_path)] == ["brain.Event:2"]
    writer.reopen()
    writer.add_session_log(event_pb2.SessionLog(status=event_pb2.SessionLog.START), 3)
    writer.close()
    assert len(glob.glob(f"{tmp_path}/events.out.tfevents.*.v1")) == 2


def test_writer_cache_shares_one_writer_per_directory(tmp_path):
    first = tf.summary.FileWriterCache.get(str(tmp_path))
    assert tf.summary.FileWriterCache.get(str(tmp_path)) is first
    tf.summary.FileWriterCache.clear()
    assert tf.summary.FileWriterCache.get(str(tmp_path)) is not first
    tf.summary.FileWriterCache.clear()
    assert any(e.HasField("graph_def") for e in _events(tmp_path))


def test_writer_on_an_fsspec_url():
    import fsspec

    with tf.summary.FileWriter("memory://runs/a") as writer:
        writer.add_session_log(event_pb2.SessionLog(status=event_pb2.SessionLog.START), 1)
    fs = fsspec.filesystem("memory")
    (path,) = fs.glob("/runs/a/events.out.tfevents.*")
    assert fs.size(path) > 0
