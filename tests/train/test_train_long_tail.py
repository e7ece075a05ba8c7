"""``tf.train``'s long tail (issue 32): ``AdagradDAOptimizer``, ``SessionManager``,
``ProfilerHook``, ``warm_start`` with ``VocabInfo``, each against
``tensorflow.compat.v1`` running the same TF1 program."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import dataflow as tf

tf1 = pytest.importorskip("tensorflow").compat.v1


# --- AdagradDAOptimizer -----------------------------------------------------------------
def _adagrad_da(lib, l1, sparse):
    graph = lib.Graph()
    with graph.as_default():
        step = lib.train.get_or_create_global_step()
        init = np.array([[1.0, -2.0], [0.5, 3.0], [0.1, 0.2]], np.float32)
        w = lib.get_variable("w", initializer=init, use_resource=True)
        if sparse:  # rows 0 (twice) and 2: an IndexedSlices gradient with a repeat
            loss = lib.reduce_sum(lib.square(lib.gather(w, [0, 2, 0])) * [[1.0, 2.0]])
        else:
            loss = lib.reduce_sum(lib.square(w - 0.3) * [[1.0, 2.0]])
        opt = lib.train.AdagradDAOptimizer(
            0.1, step, l1_regularization_strength=l1, l2_regularization_strength=0.05
        )
        train = opt.minimize(loss, global_step=step)
        slots = [opt.get_slot(w, n) for n in opt.get_slot_names()]
        names = sorted(v.op.name for v in opt.variables())
        with lib.Session() as sess:
            sess.run(lib.global_variables_initializer())
            for _ in range(4):
                sess.run(train)
            return sess.run([w, *slots]), names


@pytest.mark.parametrize("l1", [0.0, 0.02])
@pytest.mark.parametrize("sparse", [False, True])
def test_adagrad_da_matches_tf(l1, sparse):
    (want, want_names), (got, got_names) = _adagrad_da(tf1, l1, sparse), _adagrad_da(tf, l1, sparse)
    assert got_names == want_names == ["w/AdagradDA", "w/AdagradDA_1"]
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_adagrad_da_refuses_a_non_positive_accumulator():
    step = tf.Variable(0, dtype=tf.int64)
    with pytest.raises(ValueError, match="initial_gradient_squared_accumulator_value"):
        tf.train.AdagradDAOptimizer(0.1, step, initial_gradient_squared_accumulator_value=0.0)


# --- SessionManager -----------------------------------------------------------------------
def _session_manager(lib, folder):
    """prepare_session twice (initialized, then restored) and recover/wait on the
    restored model: the values and flags each step reports."""
    out = {}
    graph = lib.Graph()
    with graph.as_default():
        v = lib.Variable([1.0, 2.0], name="v")
        local = lib.Variable(0.0, name="local", collections=[lib.GraphKeys.LOCAL_VARIABLES])
        bump = v.assign_add([10.0, 10.0])
        saver = lib.train.Saver([v])
        manager = lib.train.SessionManager(
            local_init_op=local.initializer,
            ready_op=lib.report_uninitialized_variables(),
            ready_for_local_init_op=lib.report_uninitialized_variables([v]),
            graph=graph,
            recovery_wait_secs=0.05,
        )
        sess = manager.prepare_session(
            "", init_op=v.initializer, saver=saver, checkpoint_dir=folder
        )
        out["initialized"] = sess.run(v)
        sess.run(bump)
        saver.save(sess, os.path.join(folder, "model.ckpt"), global_step=1)
        sess.close()
        sess = manager.prepare_session(
            "", init_op=v.initializer, saver=saver, checkpoint_dir=folder
        )
        out["restored"] = sess.run([v, local])
        sess.close()
        sess, loaded = manager.recover_session("", saver=saver, checkpoint_dir=folder)
        out["recovered"] = (loaded, sess.run(v))
        sess.close()
        sess, loaded = manager.recover_session("", saver=saver, checkpoint_dir=folder + "-none")
        out["nothing to recover"] = loaded
        sess.close()
        with pytest.raises(RuntimeError, match="not initialized and no init_op"):
            manager_without_local = lib.train.SessionManager(graph=graph)
            manager_without_local.prepare_session("", saver=saver, checkpoint_dir=folder + "-none")
        with pytest.raises(lib.errors.DeadlineExceededError):
            manager.wait_for_session("", max_wait_secs=0.2)  # nobody initializes v
    return out


def test_session_manager_matches_tf(tmp_path):
    want = _session_manager(tf1, str(tmp_path / "tf"))
    got = _session_manager(tf, str(tmp_path / "df"))
    np.testing.assert_array_equal(got["initialized"], want["initialized"])
    np.testing.assert_array_equal(got["restored"][0], want["restored"][0])
    assert got["restored"][1] == want["restored"][1] == 0.0
    assert got["recovered"][0] is want["recovered"][0] is True
    np.testing.assert_array_equal(got["recovered"][1], want["recovered"][1])
    assert got["nothing to recover"] is want["nothing to recover"] is False


def test_session_manager_refuses_a_ready_for_local_init_op_alone():
    with pytest.raises(ValueError, match="must also pass a local_init_op"):
        tf.train.SessionManager(ready_for_local_init_op=tf.report_uninitialized_variables())


# --- ProfilerHook -------------------------------------------------------------------------
def _profile(lib, folder, steps=6):
    graph = lib.Graph()
    with graph.as_default():
        step = lib.train.get_or_create_global_step()
        w = lib.Variable(1.0)
        train = lib.train.GradientDescentOptimizer(0.1).minimize(lib.square(w), global_step=step)
        hook = lib.train.ProfilerHook(save_steps=2, output_dir=folder)
        with lib.train.MonitoredSession(hooks=[hook]) as sess:
            for _ in range(steps):
                sess.run(train)
    return sorted(f for f in os.listdir(folder) if f.startswith("timeline"))


def test_profiler_hook_writes_the_steps_tf_writes(tmp_path):
    want = _profile(tf1, str(tmp_path / "tf"))
    got = _profile(tf, str(tmp_path / "df"))
    assert got == want == ["timeline-2.json", "timeline-4.json", "timeline-6.json"]
    with open(tmp_path / "df" / got[0]) as f:
        trace = json.load(f)
    kernels = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert kernels and all(e["dur"] >= 0 for e in kernels)
    assert any(f.startswith("events.out.tfevents") for f in os.listdir(tmp_path / "df"))


def test_profiler_hook_needs_one_period_and_a_global_step():
    with pytest.raises(ValueError, match="exactly one"):
        tf.train.ProfilerHook(save_steps=2, save_secs=1.0)
    with tf.Graph().as_default():
        with pytest.raises(RuntimeError, match="Global step"):
            tf.train.ProfilerHook(save_steps=2).begin()


# --- warm_start and VocabInfo -------------------------------------------------------------
OLD_VOCAB = ["apple", "banana", "cherry", "date"]
NEW_VOCAB = ["cherry", "fig", "apple", "grape", "banana"]


def _write_old_model(lib, folder):
    """A checkpoint of an embedding over OLD_VOCAB, an output layer whose columns are
    OLD_VOCAB, a bias, and a dense layer saved under another name."""
    rng = np.random.RandomState(0)
    values = {
        "emb": rng.randn(4, 3).astype(np.float32),
        "out": rng.randn(2, 4).astype(np.float32),
        "bias": rng.randn(2).astype(np.float32),
        "old_dense": rng.randn(3, 3).astype(np.float32),
    }
    graph = lib.Graph()
    with graph.as_default():
        variables = [lib.Variable(v, name=k) for k, v in values.items()]
        with lib.Session() as sess:
            sess.run(lib.global_variables_initializer())
            return lib.train.Saver(variables).save(sess, os.path.join(folder, "old.ckpt"))


def _warm_started(lib, prefix, vocab_dir):
    graph = lib.Graph()
    with graph.as_default():
        emb = lib.get_variable("emb", [len(NEW_VOCAB) + 2, 3], initializer=lib.ones_initializer())
        out = lib.get_variable("out", [2, len(NEW_VOCAB)], initializer=lib.ones_initializer())
        bias = lib.get_variable("bias", [2], initializer=lib.zeros_initializer())
        dense = lib.get_variable("dense", [3, 3], initializer=lib.zeros_initializer())
        untouched = lib.get_variable("untouched", [2], initializer=lib.ones_initializer())
        new, old = os.path.join(vocab_dir, "new.txt"), os.path.join(vocab_dir, "old.txt")
        lib.train.warm_start(
            prefix,
            vars_to_warm_start=["emb", "out", "bias", "dense"],
            var_name_to_vocab_info={
                "emb": lib.train.VocabInfo(
                    new, len(NEW_VOCAB), 2, old, backup_initializer=lib.ones_initializer()
                ),
                "out": lib.train.VocabInfo(new, len(NEW_VOCAB), 0, old, old_vocab_size=3, axis=1),
            },
            var_name_to_prev_var_name={"dense": "old_dense"},
        )
        with lib.Session() as sess:
            sess.run(lib.global_variables_initializer())
            return sess.run([emb, out, bias, dense, untouched])


def test_warm_start_with_vocabularies_matches_tf(tmp_path):
    for name, tokens in (("old.txt", OLD_VOCAB), ("new.txt", NEW_VOCAB)):
        (tmp_path / name).write_text("\n".join(tokens) + "\n")
    (tmp_path / "tf").mkdir()
    (tmp_path / "df").mkdir()
    want = _warm_started(tf1, _write_old_model(tf1, str(tmp_path / "tf")), str(tmp_path))
    got = _warm_started(tf, _write_old_model(tf, str(tmp_path / "df")), str(tmp_path))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-6)
    # The remap itself, spelled out: "fig" and "grape" and the two OOV rows are new.
    emb = got[0]
    assert (emb[[1, 3, 5, 6]] == 1.0).all()
    assert (got[1][:, [1, 3]] == 0).all()  # "date" is past old_vocab_size: so is "fig"


def test_warm_start_names_unused_settings(tmp_path):
    with tf.Graph().as_default():
        a = tf.get_variable("a", [2])
        with tf.Session() as sess:
            sess.run(a.initializer)
            prefix = tf.train.Saver([a]).save(sess, str(tmp_path / "a.ckpt"))
        with pytest.raises(ValueError, match="were not used"):
            tf.train.warm_start(prefix, var_name_to_prev_var_name={"b": "c"})


def test_vocab_info_refuses_other_axes():
    with pytest.raises(ValueError, match="axis"):
        tf.train.VocabInfo("new", 3, 0, "old", axis=2)
