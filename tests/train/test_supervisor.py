"""``tf.train.Supervisor``: sessions, checkpoints, summaries, queue runners and stopping,
against ``tensorflow.compat.v1`` where the values are deterministic."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import dataflow as tf


def _model(lib):
    step = lib.train.get_or_create_global_step()
    w = lib.Variable(5.0, name="w")
    loss = lib.square(w - 2.0)
    lib.summary.scalar("loss", loss)
    train = lib.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
    return step, w, train


def _train(lib, logdir, steps):
    with lib.Graph().as_default():
        step, w, train = _model(lib)
        # No checkpoint thread: TF's first timed save runs while the steps do, and a fresh
        # run saw it finish after the save below (TF then restored step 3, not 7).
        sv = lib.train.Supervisor(logdir=logdir, save_model_secs=0, save_summaries_secs=3600)
        with sv.managed_session() as sess:
            for _ in range(steps):
                sess.run(train)
            values = sess.run([step, w])
            sv.saver.save(sess, sv.save_path, global_step=step)
    with lib.Graph().as_default():
        step, w, _ = _model(lib)
        restored = lib.train.Supervisor(logdir=logdir, save_model_secs=0)
        with restored.managed_session() as sess:
            values += sess.run([step, w])
    return values


@pytest.mark.tf
def test_trains_checkpoints_and_restores_as_tf(tmp_path):
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    tf1.disable_eager_execution()  # TF's supervisor threads would run eagerly otherwise
    ours = _train(tf, str(tmp_path / "ours"), 7)
    theirs = _train(tf1, str(tmp_path / "theirs"), 7)
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)
    assert ours[0] == ours[2] == 7  # the second supervisor restored the checkpoint


def test_services_write_summaries_step_rates_and_checkpoints(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    step, w, train = _model(tf)
    sv = tf.train.Supervisor(logdir=str(tmp_path), save_model_secs=0.1, save_summaries_secs=0.1)
    with sv.managed_session() as sess:
        for _ in range(30):
            sess.run(train)
            time.sleep(0.01)
    events = EventAccumulator(str(tmp_path))
    events.Reload()
    tags = events.Tags()["scalars"]
    assert "loss" in tags and "global_step/sec" in tags
    assert events.Graph() is not None
    assert tf.train.latest_checkpoint(str(tmp_path)) is not None
    # A second supervisor on the same, now finalized, graph reuses its ops.
    again = tf.train.Supervisor(logdir=str(tmp_path), save_model_secs=0, save_summaries_secs=0)
    with again.managed_session() as sess:
        assert sess.run(step) >= 1


def test_the_end_of_input_ends_the_block_and_other_errors_are_raised():
    q = tf.FIFOQueue(10, tf.float32, shapes=[[]])
    fill = q.enqueue_many([[1.0, 2.0, 3.0]])
    total = tf.Variable(0.0)
    add = total.assign_add(q.dequeue())
    close = q.close()
    sv = tf.train.Supervisor(logdir=None)
    with sv.managed_session() as sess:
        sess.run([fill, close])
        while not sv.should_stop():
            sess.run(add)  # the fourth dequeue raises OutOfRangeError: a normal end
    assert sv.should_stop()
    with pytest.raises(ValueError, match="boom"):
        with sv.managed_session():
            raise ValueError("boom")


def test_loop_and_summary_computed(tmp_path):
    step, w, train = _model(tf)
    sv = tf.train.Supervisor(logdir=str(tmp_path), save_model_secs=0, save_summaries_secs=0)
    calls = []
    with sv.managed_session() as sess:
        sv.loop(0.01, lambda: calls.append(1))
        time.sleep(0.2)
        sv.summary_computed(sess, sess.run(sv.summary_op))
    assert len(calls) >= 2
    quiet = tf.train.Supervisor(graph=tf.Graph(), logdir=None, summary_op=None, saver=None)
    with pytest.raises(RuntimeError, match="summary writer"):
        quiet.summary_computed(None, b"")


@pytest.mark.distributed
def test_a_non_chief_waits_for_the_chiefs_initialization(monkeypatch):
    monkeypatch.setenv("DATAFLOW_DASHBOARD_ADDRESS", ":0")
    server = tf.train.Server.create_local_server()
    try:
        graphs = []
        for _ in range(2):
            with tf.Graph().as_default() as g:
                v = tf.Variable([1.0, 2.0], name="v")
                graphs.append((g, v))
        got = {}

        def worker():
            g, v = graphs[1]
            sv = tf.train.Supervisor(graph=g, is_chief=False, logdir=None, recovery_wait_secs=0.05)
            sess = sv.prepare_or_wait_for_session(server.target)
            got["v"] = sess.run(v)
            got["when"] = time.monotonic()
            sess.close()

        waiting = threading.Thread(target=worker)
        waiting.start()
        time.sleep(0.5)
        started = time.monotonic()
        g, v = graphs[0]
        chief = tf.train.Supervisor(graph=g, logdir=None)
        sess = chief.prepare_or_wait_for_session(server.target)
        waiting.join(60)
        sess.close()
        np.testing.assert_array_equal(got["v"], [1.0, 2.0])
        assert got["when"] >= started
    finally:
        tf.Session.reset(server.target)
        server.stop()
