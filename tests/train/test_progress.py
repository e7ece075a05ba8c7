"""Hooks and a progress bar around a plain Session.run loop; hooks log, never print."""

from __future__ import annotations

import io
import logging

import numpy as np

import dataflow as tf


def _model(with_global_step: bool):
    x = tf.placeholder(tf.float32, [None], name="x")
    w = tf.Variable(5.0, name="w")
    loss = tf.reduce_mean(tf.square(w * x - 2.0 * x))
    step = tf.train.get_or_create_global_step() if with_global_step else None
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
    return x, w, loss, train


def test_progress_bar_in_a_plain_run_loop_without_global_step():
    x, w, loss, train = _model(with_global_step=False)
    stream = io.StringIO()
    bar = tf.train.ProgressBarHook(last_step=30, postfix={"loss": loss}, file=stream)
    feed = {x: np.array([1.0, 2.0], np.float32)}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with tf.train.HookedSession(sess, [bar]) as hooked:
            for _ in range(30):
                hooked.run(train, feed)
        assert bar.bar.n == 30
        # The hook's extra fetch (the loss) ran in the same steps: w converged to 2.
        assert abs(sess.run(w) - 2.0) < 1e-3
        assert not sess._closed  # the caller's session stays open
    text = stream.getvalue()
    assert "30/30" in text and "loss=" in text


def test_progress_bar_follows_the_global_step_and_hooks_can_stop_the_loop():
    x, w, loss, train = _model(with_global_step=True)
    stream = io.StringIO()
    bar = tf.train.ProgressBarHook(last_step=8, file=stream)
    stop = tf.train.StopAtStepHook(last_step=8)
    feed = {x: np.array([1.0], np.float32)}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        hooked = tf.train.HookedSession(sess, [stop, bar])
        steps = 0
        while not hooked.should_stop():
            hooked.run(train, feed)
            steps += 1
        hooked.close()
        assert steps == 8 and bar.bar.n == 8
        assert sess.run(tf.train.get_global_step()) == 8


def test_progress_bar_counts_to_a_stop_at_step_hooks_num_steps():
    """TF1's usual pair, ``StopAtStepHook(num_steps=)`` beside the bar: the bar shows the
    total the stop hook works out once the session exists (global step 3 + 5 steps)."""
    x, w, loss, train = _model(with_global_step=True)
    stream = io.StringIO()
    bar = tf.train.ProgressBarHook(file=stream)
    feed = {x: np.array([1.0], np.float32)}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(tf.assign(tf.train.get_global_step(), 3))
        hooked = tf.train.HookedSession(sess, [bar, tf.train.StopAtStepHook(num_steps=5)])
        steps = 0
        while not hooked.should_stop():
            hooked.run(train, feed)
            steps += 1
        hooked.close()
    assert steps == 5 and bar.last_step == 8 and bar.bar.total == 8 and bar.bar.n == 8
    assert "8/8" in stream.getvalue()


def test_logging_tensor_hook_logs_through_logging_and_keeps_a_bounded_history(dataflow_log):
    x, w, loss, train = _model(with_global_step=False)
    hook = tf.train.LoggingTensorHook({"loss": loss}, every_n_iter=1)
    feed = {x: np.array([1.0], np.float32)}
    steps = tf.train.LoggingTensorHook.HISTORY + 20
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with tf.train.HookedSession(sess, [hook]) as hooked:
            for _ in range(steps):
                hooked.run(train, feed)
    records = [r for r in dataflow_log.records if r.getMessage().startswith("loss = ")]
    assert len(records) == steps and records[0].levelno == logging.INFO
    assert len(hook.logged) == tf.train.LoggingTensorHook.HISTORY
    assert float(hook.logged[-1]["loss"]) < float(hook.logged[0]["loss"])


def test_hooks_and_warnings_never_print():
    """No print() call in the hooks, the runtime's warnings or the viz helpers: they
    go through logging (tf.logging), which a notebook or a server can route."""
    import ast
    import pathlib

    import dataflow

    root = pathlib.Path(dataflow.__file__).parent
    offenders = []
    for path in [*root.glob("train/*.py"), *root.glob("viz/*.py"), root / "logging.py"]:
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "print"
            ):
                offenders.append(f"{path.relative_to(root)}:{node.lineno}")
    assert offenders == []
