"""``SummarySaverHook``, ``StepCounterHook`` and ``MonitoredTrainingSession(summary_dir=)``
against ``tensorflow.compat.v1``: the same tags at the same steps with the same values."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow

accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")

DATA = np.random.default_rng(3).normal(size=(8, 2)).astype(np.float32)


def train_with_summaries(tf, logdir, steps=6, read=True, **session_kwargs):
    with tf.Graph().as_default():
        tf.train.get_or_create_global_step()
        w = tf.Variable([[0.5], [-0.25]], name="w")
        loss = tf.reduce_mean(tf.square(tf.matmul(tf.constant(DATA), w) - 1.0))
        tf.summary.scalar("loss", loss)
        tf.summary.histogram("w", w)
        train = tf.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=tf.train.get_global_step()
        )
        with tf.train.MonitoredTrainingSession(summary_dir=logdir, **session_kwargs) as sess:
            for _ in range(steps):
                sess.run(train)
    if not read:
        return None
    ea = accumulator.EventAccumulator(logdir)
    ea.Reload()
    return ea


@pytest.mark.tf
def test_monitored_training_session_writes_what_tf1_writes(tmp_path):
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    kwargs = dict(save_summaries_steps=2, log_step_count_steps=2)
    ours = train_with_summaries(dataflow, str(tmp_path / "ours"), **kwargs)
    theirs = train_with_summaries(tf1, str(tmp_path / "theirs"), **kwargs)
    assert sorted(ours.Tags()["scalars"]) == sorted(theirs.Tags()["scalars"])
    assert "global_step/sec" in ours.Tags()["scalars"]
    assert ours.Tags()["histograms"] == theirs.Tags()["histograms"] == ["w_1"]
    a, b = ours.Scalars("loss"), theirs.Scalars("loss")
    assert [e.step for e in a] == [e.step for e in b] == [1, 3, 5]
    np.testing.assert_allclose([e.value for e in a], [e.value for e in b], rtol=1e-5)
    speed_steps = [e.step for e in ours.Scalars("global_step/sec")]
    assert speed_steps == [e.step for e in theirs.Scalars("global_step/sec")]
    assert all(e.value > 0 for e in ours.Scalars("global_step/sec"))
    assert ours.Tags()["graph"]


def test_summaries_off_and_default_directory(tmp_path):
    import glob

    off = str(tmp_path / "off")
    train_with_summaries(dataflow, off, read=False, save_summaries_steps=0, log_step_count_steps=0)
    assert not glob.glob(f"{tmp_path}/off/events.*")
    # By default (every 100 steps) the first step is written all the same.
    ea = train_with_summaries(dataflow, str(tmp_path / "default"), steps=3)
    assert [e.step for e in ea.Scalars("loss")] == [1]


def test_summary_saver_hook_alone_with_a_writer_and_explicit_ops(tmp_path):
    tf = dataflow
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        count = tf.summary.scalar("count", tf.cast(step, tf.float32), collections=[])
        increment = tf.assign_add(step, 1)
        writer = tf.summary.FileWriter(str(tmp_path))
        hook = tf.train.SummarySaverHook(save_secs=3600, summary_writer=writer, summary_op=count)
        with tf.train.MonitoredSession(hooks=[hook]) as sess:
            for _ in range(3):
                sess.run(increment)
        writer.close()
    ea = accumulator.EventAccumulator(str(tmp_path))
    ea.Reload()
    # save_secs: the first step only, in an hour's window; the value is read before the
    # step's increment, at the step the increment made.
    assert [(e.step, e.value) for e in ea.Scalars("count")] == [(1, 0.0)]


def test_hooks_check_their_arguments():
    tf = dataflow
    with pytest.raises(ValueError, match="Exactly one of scaffold or summary_op"):
        tf.train.SummarySaverHook(save_steps=1)
    with pytest.raises(ValueError, match="every_secs or every_steps"):
        tf.train.SummarySaverHook(summary_op=tf.constant(""))
    with pytest.raises(ValueError, match="exactly one of every_n_steps"):
        tf.train.StepCounterHook(every_n_steps=None)
    with tf.Graph().as_default():
        hook = tf.train.StepCounterHook(output_dir=None)
        with pytest.raises(RuntimeError, match="Global step should be created"):
            hook.begin()


def test_second_or_step_timer_matches_tf1s_contract():
    timer = dataflow.train.SecondOrStepTimer(every_steps=3)
    assert timer.should_trigger_for_step(0)
    assert timer.update_last_triggered_step(0) == (None, None)
    assert not timer.should_trigger_for_step(0)
    assert not timer.should_trigger_for_step(2)
    assert timer.should_trigger_for_step(3)
    elapsed_secs, elapsed_steps = timer.update_last_triggered_step(4)
    assert elapsed_steps == 4 and elapsed_secs >= 0
    assert timer.last_triggered_step() == 4
