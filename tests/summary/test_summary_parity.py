"""Event files from ``tf.summary`` + ``FileWriter``, read back by TensorBoard's own reader
(``EventAccumulator``), against the files TensorFlow writes for the same TF1 program."""

from __future__ import annotations

import io
import wave

import numpy as np
import pytest

import dataflow

pytestmark = pytest.mark.tf

accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
loader = pytest.importorskip("tensorboard.backend.event_processing.event_file_loader")

RNG = np.random.default_rng(7)
# A few float32 roundings of the SGD-updated weights (sums of 8 of them for histograms).
FLOAT32_RTOL = 1e-6
BATCHES = [RNG.normal(size=(3, 4)).astype(np.float32) for _ in range(3)]
GRAY = RNG.integers(0, 256, size=(2, 5, 4, 1)).astype(np.uint8)
SOUND = np.clip(RNG.normal(scale=0.4, size=(2, 50, 2)), -1, 1).astype(np.float32)


def training_program(tf, logdir):
    """A small TF1 training script that writes every kind of summary."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 4], name="x")
        w = tf.Variable(np.linspace(-1, 1, 8).reshape(4, 2).astype(np.float32), name="w")
        y = tf.matmul(x, w)
        loss = tf.reduce_mean(tf.square(y))
        step = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        with tf.name_scope("train"):
            tf.summary.scalar("loss", loss)
            tf.summary.scalar("loss", loss * 2)  # a second scope: tag train/loss_1
        tf.summary.scalar("lr", tf.constant(0.1), family="optimizer")
        tf.summary.histogram("weights", w)
        tf.summary.histogram("activations", y)
        tf.summary.histogram("int_counts", tf.constant([0, 1, 1, 5, -3], tf.int32))
        tf.summary.image("signed", tf.reshape(x, [-1, 2, 2, 1]), max_outputs=2)
        tf.summary.image("positive", tf.reshape(tf.abs(x), [-1, 1, 4, 1]), max_outputs=1)
        tf.summary.image("gray", tf.constant(GRAY), max_outputs=3)
        tf.summary.audio("sound", tf.constant(SOUND), sample_rate=8000, max_outputs=2)
        tf.summary.text("note", tf.constant("loss *falls*"))
        tf.summary.tensor_summary("matrix", w)
        extra = tf.summary.scalar("extra", loss, collections=["custom"])
        merged = tf.summary.merge_all()
        custom = tf.summary.merge_all(key="custom")
        assert custom is not None and extra is not None
        assert tf.summary.merge_all(key="empty") is None
        writer = tf.summary.FileWriter(logdir, graph)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            writer.add_session_log(tf.SessionLog(status=tf.SessionLog.START), 0)
            for i, batch in enumerate(BATCHES):
                # Read and update of w in one step have no order in TF1: two steps.
                summary, more = sess.run([merged, custom], {x: batch})
                sess.run(step, {x: batch})
                writer.add_summary(summary, i)
                writer.add_summary(more, i)
        writer.add_session_log(tf.SessionLog(status=tf.SessionLog.STOP), len(BATCHES))
        writer.close()
        return writer.get_logdir()


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    ours = training_program(dataflow, str(tmp_path_factory.mktemp("ours")))
    theirs = training_program(tf1, str(tmp_path_factory.mktemp("theirs")))
    read = []
    for logdir in (ours, theirs):
        ea = accumulator.EventAccumulator(
            logdir, size_guidance={"tensors": 0, "images": 0, "histograms": 0, "audio": 0}
        )
        ea.Reload()
        read.append(ea)
    return read


def test_same_tags_of_every_kind(both):
    ours, theirs = (ea.Tags() for ea in both)
    for kind in ("scalars", "histograms", "images", "audio", "tensors"):
        assert sorted(ours[kind]) == sorted(theirs[kind]), kind
    assert "train/loss_1" in ours["scalars"] and "optimizer/optimizer/lr" in ours["scalars"]
    assert ours["graph"] and theirs["graph"]


def test_same_scalar_steps_and_values(both):
    ours, theirs = both
    for tag in theirs.Tags()["scalars"]:
        a, b = ours.Scalars(tag), theirs.Scalars(tag)
        assert [e.step for e in a] == [e.step for e in b], tag
        np.testing.assert_allclose([e.value for e in a], [e.value for e in b], rtol=1e-6)


def test_same_histograms(both):
    ours, theirs = both
    for tag in theirs.Tags()["histograms"]:
        for a, b in zip(ours.Histograms(tag), theirs.Histograms(tag), strict=True):
            assert a.step == b.step
            ha, hb = a.histogram_value, b.histogram_value
            # The weights after SGD steps are float32 results of matmuls whose rounding
            # depends on the CPU's kernels (ours: numpy's BLAS; TF's: oneDNN): equal to
            # float32's precision, not bit for bit.
            assert ha.num == hb.num, tag
            np.testing.assert_allclose(
                [ha.min, ha.max, ha.sum, ha.sum_squares],
                [hb.min, hb.max, hb.sum, hb.sum_squares],
                rtol=FLOAT32_RTOL,
                err_msg=tag,
            )
            assert list(ha.bucket_limit) == list(hb.bucket_limit), tag
            assert list(ha.bucket) == list(hb.bucket), tag


def _pixels(encoded):
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(encoded)))


def test_same_images(both):
    ours, theirs = both
    for tag in theirs.Tags()["images"]:
        for a, b in zip(ours.Images(tag), theirs.Images(tag), strict=True):
            assert (a.step, a.width, a.height) == (b.step, b.width, b.height), tag
            np.testing.assert_array_equal(
                _pixels(a.encoded_image_string), _pixels(b.encoded_image_string), err_msg=tag
            )


def _samples(encoded):
    with wave.open(io.BytesIO(encoded)) as clip:
        frames = np.frombuffer(clip.readframes(clip.getnframes()), "<i2")
        return clip.getframerate(), clip.getnchannels(), frames.reshape(-1, clip.getnchannels())


def test_same_audio(both):
    ours, theirs = both
    for tag in theirs.Tags()["audio"]:
        for a, b in zip(ours.Audio(tag), theirs.Audio(tag), strict=True):
            assert (a.step, a.content_type, a.length_frames) == (
                b.step,
                b.content_type,
                b.length_frames,
            )
            rate_a, channels_a, samples_a = _samples(a.encoded_audio_string)
            rate_b, channels_b, samples_b = _samples(b.encoded_audio_string)
            assert (rate_a, channels_a) == (rate_b, channels_b)
            # TF rounds to 16 bits its own way: at most one step apart.
            assert np.abs(samples_a.astype(int) - samples_b).max() <= 1


def test_same_tensors_and_text_metadata(both):
    from tensorboard.util import tensor_util

    ours, theirs = both
    for tag in theirs.Tags()["tensors"]:
        for a, b in zip(ours.Tensors(tag), theirs.Tensors(tag), strict=True):
            assert a.step == b.step
            value_a = tensor_util.make_ndarray(a.tensor_proto)
            value_b = tensor_util.make_ndarray(b.tensor_proto)
            if value_b.dtype.kind == "f":  # the trained weights: see test_same_histograms
                np.testing.assert_allclose(value_a, value_b, rtol=FLOAT32_RTOL, err_msg=tag)
            else:
                np.testing.assert_array_equal(value_a, value_b, err_msg=tag)
        meta_a = ours.SummaryMetadata(tag)
        meta_b = theirs.SummaryMetadata(tag)
        assert meta_a.plugin_data.plugin_name == meta_b.plugin_data.plugin_name, tag


def _raw_events(logdir):
    import glob

    (path,) = glob.glob(f"{logdir}/events.out.tfevents.*")
    return list(loader.EventFileLoader(path).Load())


def test_same_session_logs_and_file_version(tmp_path):
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    logs = []
    for lib, where in ((dataflow, tmp_path / "ours"), (tf1, tmp_path / "theirs")):
        training_program(lib, str(where))
        events = _raw_events(where)
        assert events[0].file_version == "brain.Event:2"
        logs.append([(e.step, e.session_log.status) for e in events if e.HasField("session_log")])
    assert logs[0] == logs[1] == [(0, 1), (3, 2)]
