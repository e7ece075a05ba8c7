"""MonitoredTrainingSession and its hooks, in the embedded session."""

from __future__ import annotations

import io

import numpy as np
import pytest

import dataflow as tf


def _quadratic_model():
    step = tf.train.get_or_create_global_step()
    w = tf.Variable(5.0, name="w")
    loss = tf.square(w - 2.0)
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
    return step, w, loss, train


def test_stop_at_step_and_checkpoints_every_n_steps(tmp_path):
    step, w, loss, train = _quadratic_model()
    saver_hook_dir = str(tmp_path)
    with tf.train.MonitoredTrainingSession(
        checkpoint_dir=saver_hook_dir,
        save_checkpoint_steps=4,
        hooks=[tf.train.StopAtStepHook(last_step=10)],
    ) as sess:
        n = 0
        while not sess.should_stop():
            sess.run(train)
            n += 1
    assert n == 10
    latest = tf.train.latest_checkpoint(saver_hook_dir)
    assert latest.endswith("-10")
    steps = sorted(
        int(p.rsplit("-", 1)[1])
        for p in tf.train.get_checkpoint_state(saver_hook_dir).all_model_checkpoint_paths
    )
    assert steps == [0, 4, 8, 10][-5:]


def test_restart_continues_from_the_latest_checkpoint(tmp_path):
    step, w, loss, train = _quadratic_model()
    with tf.train.MonitoredTrainingSession(
        checkpoint_dir=str(tmp_path),
        save_checkpoint_steps=1,
        hooks=[tf.train.StopAtStepHook(last_step=5)],
    ) as sess:
        while not sess.should_stop():
            sess.run(train)
        w_after_5 = sess.run(w)
    tf.reset_default_graph()
    step, w, loss, train = _quadratic_model()
    with tf.train.MonitoredTrainingSession(
        checkpoint_dir=str(tmp_path),
        save_checkpoint_steps=1,
        hooks=[tf.train.StopAtStepHook(num_steps=3)],
    ) as sess:
        assert sess.run(w) == pytest.approx(w_after_5)
        assert sess.run(step) == 5
        while not sess.should_stop():
            sess.run(train)
        assert sess.run(step) == 8
    # Plain gradient descent on (w-2)^2 from 5: w_k = 2 + 3 * 0.8^k.
    assert w_after_5 == pytest.approx(2 + 3 * 0.8**5, rel=1e-5)


def test_logging_and_progress_bar_hooks():
    step, w, loss, train = _quadratic_model()
    log_stream, bar_stream = io.StringIO(), io.StringIO()
    logging_hook = tf.train.LoggingTensorHook(
        {"loss": loss, "step": step}, every_n_iter=2, stream=log_stream
    )
    bar = tf.train.ProgressBarHook(last_step=6, postfix={"loss": loss}, file=bar_stream)
    with tf.train.MonitoredTrainingSession(
        hooks=[tf.train.StopAtStepHook(last_step=6), logging_hook, bar]
    ) as sess:
        while not sess.should_stop():
            sess.run(train)
    # The global step is a ref variable (TF1's default): fetched beside the train op, it
    # is read after the step's increment, as TF 1.15 logs it.
    assert [int(v["step"]) for v in logging_hook.logged] == [1, 3, 5]
    assert "loss = " in log_stream.getvalue()
    assert bar.bar.n == 6
    assert "6/6" in bar_stream.getvalue()


def test_hooks_see_requested_fetches_and_can_stop():
    step, w, loss, train = _quadratic_model()

    class StopWhenSmall(tf.train.SessionRunHook):
        def __init__(self):
            self.losses = []

        def before_run(self, run_context):
            return tf.train.SessionRunArgs(loss)

        def after_run(self, run_context, run_values):
            self.losses.append(float(run_values.results))
            if run_values.results < 0.1:
                run_context.request_stop()

    hook = StopWhenSmall()
    with tf.train.MonitoredTrainingSession(hooks=[hook]) as sess:
        while not sess.should_stop():
            sess.run(train)
    assert hook.losses[-1] < 0.1 and all(v >= 0.1 for v in hook.losses[:-1])


def test_end_of_input_ends_the_with_block_quietly():
    # A dequeue past the end raises OutOfRangeError inside the block, which ends it.
    q = tf.FIFOQueue(10, tf.float32, shapes=[[]])
    deq = q.dequeue()
    fill = q.enqueue_many([[1.0, 2.0, 3.0]])
    close = q.close()
    got = []
    with tf.train.MonitoredTrainingSession() as sess:
        sess.run(fill)
        sess.run(close)
        while not sess.should_stop():
            got.append(float(sess.run(deq)))
    assert got == [1.0, 2.0, 3.0]


def test_recovers_from_unavailable_error_by_restoring_the_checkpoint(tmp_path):
    step, w, loss, train = _quadratic_model()
    failures = {"left": 1}

    def flaky(x):
        # Stands in for a lost worker at global step 6 (once). The real thing, a killed
        # Dask worker process, is tested in tests/distributed.
        if int(x) == 6 and failures["left"]:
            failures["left"] -= 1
            raise tf.errors.UnavailableError(None, None, "worker ps-0 lost")
        return x

    guarded = tf.py_func(flaky, [step], tf.int64)
    with tf.control_dependencies([guarded]):
        train_guarded = tf.group(train)
    with tf.train.MonitoredTrainingSession(
        checkpoint_dir=str(tmp_path),
        save_checkpoint_steps=4,
        hooks=[tf.train.StopAtStepHook(last_step=10)],
    ) as sess:
        while not sess.should_stop():
            sess.run(train_guarded)
        assert sess.recoveries == 1
        assert sess.run(step) == 10
        final_w = sess.run(w)
    # The session rolled back to the step-4 checkpoint and redid steps 5..6: same result
    # as an uninterrupted run of 10 steps.
    np.testing.assert_allclose(final_w, 2 + 3 * 0.8**10, rtol=1e-5)


def test_a_second_monitored_session_on_the_same_graph_reuses_its_ops(tmp_path):
    """TF1 keeps the scaffold's default ops in graph collections; a second session on
    the (now finalized) graph finds them instead of building new ones."""
    step, w, loss, train = _quadratic_model()
    tf.summary.scalar("loss", loss)
    with tf.train.MonitoredTrainingSession(
        checkpoint_dir=str(tmp_path), save_summaries_steps=1, save_checkpoint_steps=1
    ) as sess:
        for _ in range(3):
            sess.run(train)
    graph = tf.get_default_graph()
    assert graph.finalized
    ops_after_first = len(graph.get_operations())
    for key in ("init_op", "ready_op", "ready_for_local_init_op", "local_init_op", "summary_op"):
        assert len(graph.get_collection(key)) == 1, key
    with tf.train.MonitoredTrainingSession(
        checkpoint_dir=str(tmp_path), save_summaries_steps=1, save_checkpoint_steps=1
    ) as sess:
        assert sess.run(step) == 3  # restored from the first session's checkpoint
        sess.run(train)
    assert len(graph.get_operations()) == ops_after_first


def test_a_scaffold_copies_another_and_refuses_ambiguous_collections():
    step, w, loss, train = _quadratic_model()
    first = tf.train.Scaffold(init_op=tf.group(w.initializer, step.initializer))
    copy = tf.train.Scaffold(copy_from_scaffold=first)
    assert copy.init_op is first.init_op
    with pytest.raises(TypeError, match="Scaffold"):
        tf.train.Scaffold(copy_from_scaffold=object())
    tf.add_to_collection("ready_op", tf.constant([], tf.string))
    tf.add_to_collection("ready_op", tf.constant([], tf.string))
    with pytest.raises(RuntimeError, match="More than one item in collection ready_op"):
        tf.train.Scaffold().finalize()
