"""``tf.train``'s housekeeping names (issue 32), written the way TF1 programs use them and
compared with ``tensorflow.compat.v1`` where TF can read the same files: checkpoint
management (mtimes, removal, the state proto, ``load_checkpoint``, waiting for new
checkpoints), ``summary_iterator``, the small hooks, ``basic_train_loop``,
``SessionCreator``, the cluster protobufs and ``assert_global_step``."""

from __future__ import annotations

import os
import threading
import time

import numpy as np
import pytest

import dataflow as tf

pytestmark = pytest.mark.tf
tf1 = pytest.importorskip("tensorflow").compat.v1
tf1.disable_eager_execution()


def _save_three(directory: str) -> list[str]:
    with tf.Graph().as_default():
        v = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3), name="v")
        bump = v.assign_add(tf.ones_like(v))
        saver = tf.train.Saver()
        prefixes = []
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for step in range(3):
                sess.run(bump)
                prefixes.append(saver.save(sess, os.path.join(directory, "model"), step))
                time.sleep(0.01)  # distinct mtimes on coarse file systems
    return prefixes


def test_mtimes_and_removal_agree_with_tf(tmp_path) -> None:
    prefixes = _save_three(str(tmp_path))
    ours = tf.train.get_checkpoint_mtimes(prefixes + [str(tmp_path / "absent")])
    # TF's file layer may round to whole seconds; ours keeps the file system's precision.
    np.testing.assert_allclose(ours, tf1.train.get_checkpoint_mtimes(prefixes), atol=1.0)
    assert len(ours) == 3 and ours == sorted(ours)
    tf.train.remove_checkpoint(prefixes[0])
    assert not tf1.train.checkpoint_exists(prefixes[0])
    assert not any(name.startswith("model-0.") for name in os.listdir(tmp_path))
    tf1.train.remove_checkpoint(prefixes[1])  # TF removes our files too
    assert not tf.train.checkpoint_exists(prefixes[1])
    assert tf.train.checkpoint_exists(prefixes[2])
    tf.train.remove_checkpoint(prefixes[0])  # already gone: not an error
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.train.remove_checkpoint(prefixes[2], checkpoint_format_version=3)


def test_remove_checkpoint_takes_shards_a_damaged_index_no_longer_names(tmp_path) -> None:
    prefix = _save_three(str(tmp_path))[-1]
    with open(f"{prefix}.index", "wb") as f:
        f.write(b"not a table")
    tf.train.remove_checkpoint(prefix)
    assert not [n for n in os.listdir(tmp_path) if n.startswith("model-2.")]


def test_load_checkpoint_reads_what_tf_reads(tmp_path) -> None:
    prefixes = _save_three(str(tmp_path))
    ours = tf.train.load_checkpoint(str(tmp_path))  # a directory: its latest
    theirs = tf1.train.load_checkpoint(str(tmp_path))
    np.testing.assert_array_equal(ours.get_tensor("v"), theirs.get_tensor("v"))
    np.testing.assert_array_equal(
        tf.train.load_checkpoint(prefixes[0]).get_tensor("v"),
        np.arange(6, dtype=np.float32).reshape(2, 3) + 1,
    )
    with pytest.raises(tf.errors.NotFoundError):
        tf.train.load_checkpoint(
            str(tmp_path / "empty_dir_is_made")
            if os.mkdir(tmp_path / "empty_dir_is_made") is None
            else ""
        )


@pytest.mark.parametrize("save_dir", ["relative", "absolute"])
def test_generate_checkpoint_state_proto_matches_tf(tmp_path, monkeypatch, save_dir) -> None:
    monkeypatch.chdir(tmp_path)
    directory = "ckpts" if save_dir == "relative" else str(tmp_path / "ckpts")
    root = str(tmp_path / "ckpts")
    latest = os.path.join(root, "model-3")
    older = [os.path.join(root, "model-1"), os.path.join(root, "model-2")]
    for args in [
        (directory, latest),
        (directory, latest, older),
        (directory, latest, [*older, latest]),
    ]:
        ours = tf.train.generate_checkpoint_state_proto(*args)
        theirs = tf1.train.generate_checkpoint_state_proto(*args)
        assert ours.model_checkpoint_path == theirs.model_checkpoint_path
        assert list(ours.all_model_checkpoint_paths) == list(theirs.all_model_checkpoint_paths)


def test_checkpoints_iterator_yields_each_new_checkpoint_then_times_out(tmp_path) -> None:
    seen: list[str] = []
    calls = []

    def timeout_fn() -> bool:
        calls.append(1)
        return len(calls) >= 2  # wait once more, then stop

    writer = threading.Thread(target=_save_three, args=(str(tmp_path),))
    writer.start()
    for path in tf.train.checkpoints_iterator(str(tmp_path), timeout=1.5, timeout_fn=timeout_fn):
        seen.append(os.path.basename(path))
    writer.join()
    assert seen and seen[-1] == "model-2" and len(set(seen)) == len(seen)
    assert seen == sorted(seen) and len(calls) == 2


def test_checkpoints_iterator_ends_at_its_timeout_without_timeout_fn(tmp_path) -> None:
    start = time.monotonic()
    assert list(tf.train.checkpoints_iterator(str(tmp_path), timeout=0.3)) == []
    assert time.monotonic() - start < 5


def test_summary_iterator_reads_the_events_tf_reads(tmp_path) -> None:
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [])
        merged = tf.summary.merge(
            [tf.summary.scalar("x", x), tf.summary.histogram("h", x * [1.0, 2.0])]
        )
        writer = tf.summary.FileWriter(str(tmp_path))
        with tf.Session() as sess:
            for step in range(3):
                writer.add_summary(sess.run(merged, {x: float(step)}), step)
        writer.close()
    (path,) = [str(p) for p in tmp_path.iterdir()]
    ours = [e.SerializeToString() for e in tf.train.summary_iterator(path)]
    theirs = [e.SerializeToString() for e in tf1.train.summary_iterator(path)]
    assert ours == theirs and len(ours) == 4  # the file version event, then 3 steps
    steps = [(e.step, [v.tag for v in e.summary.value]) for e in tf.train.summary_iterator(path)][
        1:
    ]
    assert steps == [(0, ["x", "h"]), (1, ["x", "h"]), (2, ["x", "h"])]


def test_summary_iterator_refuses_damage_with_data_loss(tmp_path) -> None:
    path = str(tmp_path / "events.out")
    with tf.python_io.TFRecordWriter(path) as w:
        w.write(b"\xff\xff not an event")
    with pytest.raises(tf.errors.DataLossError, match="not an Event"):
        list(tf.train.summary_iterator(path))
    data = (tmp_path / "events.out").read_bytes()
    (tmp_path / "events.out").write_bytes(data[:-3])
    with pytest.raises(tf.errors.DataLossError):
        list(tf.train.summary_iterator(path))
    with pytest.raises(tf.errors.NotFoundError):
        list(tf.train.summary_iterator(str(tmp_path / "absent")))


def _hooked_run(lib, make_hooks):
    graph = lib.Graph()
    with graph.as_default():
        step = lib.train.get_or_create_global_step()
        x = lib.placeholder(lib.float32, [])
        total = lib.Variable(0.0, name="total")
        add = lib.group(total.assign_add(x), step.assign_add(1))
        hooks = make_hooks(lib, x, total)
        with lib.train.MonitoredSession(hooks=hooks) as sess:
            for _ in range(4):
                sess.run(add)
    return hooks


def test_feed_fn_and_final_ops_hooks_match_tf() -> None:
    def make(lib, x, total):
        feeds = iter([1.0, 2.0, 3.0, 4.0])
        return [
            lib.train.FeedFnHook(lambda: {x: next(feeds)}),
            lib.train.FinalOpsHook({"total": total * 2.0}),
        ]

    ours = _hooked_run(tf, make)[1].final_ops_values
    theirs = _hooked_run(tf1, make)[1].final_ops_values
    assert ours == theirs == {"total": 20.0}
    assert tf.train.FinalOpsHook(None).final_ops_values is None


def test_global_step_waiter_holds_the_first_run_until_the_step() -> None:
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        bump = step.assign_add(1)
        hook = tf.train.GlobalStepWaiterHook(wait_until_step=5, poll_secs=0.01)
        hook.begin()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())

            def chief() -> None:
                for _ in range(5):
                    time.sleep(0.02)
                    sess.run(bump)

            thread = threading.Thread(target=chief)
            thread.start()
            hook.before_run(tf.train.SessionRunContext(tf.train.SessionRunArgs(None), sess))
            assert sess.run(step) >= 5
            thread.join()
            start = time.monotonic()
            hook.before_run(tf.train.SessionRunContext(tf.train.SessionRunArgs(None), sess))
            assert time.monotonic() - start < 0.5  # started: no more waiting
    with tf.Graph().as_default(), pytest.raises(RuntimeError, match="Global step"):
        tf.train.GlobalStepWaiterHook(1).begin()


def test_basic_train_loop_runs_until_stop_and_starts_over_after_an_abort(tmp_path) -> None:
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        bump = step.assign_add(1)
        sv = tf.train.Supervisor(logdir=str(tmp_path), save_model_secs=0, save_summaries_secs=0)
        calls = []

        def train_step(sess, scale, *, stop_at):
            calls.append(scale)
            if len(calls) == 2:
                raise tf.errors.AbortedError(None, None, "a worker was lost")
            if sess.run(bump) >= stop_at:
                sv.request_stop()

        tf.train.basic_train_loop(sv, train_step, args=[7], kwargs={"stop_at": 3})
    assert calls[0] == 7 and len(calls) >= 4


def test_custom_session_creators_subclass_session_creator() -> None:
    assert issubclass(tf.train.ChiefSessionCreator, tf.train.SessionCreator)
    assert issubclass(tf.train.WorkerSessionCreator, tf.train.SessionCreator)

    class Plain(tf.train.SessionCreator):
        def create_session(self):
            sess = tf.Session()
            sess.run(tf.global_variables_initializer())
            return sess

    with tf.Graph().as_default():
        v = tf.Variable(3.0)
        with tf.train.MonitoredSession(session_creator=Plain()) as sess:
            assert sess.run(v) == 3.0
    with pytest.raises(NotImplementedError):
        tf.train.SessionCreator().create_session()


def test_cluster_defs_go_both_ways_with_tf() -> None:
    spec = {"ps": ["localhost:2222"], "worker": {0: "localhost:2223", 3: "localhost:2226"}}
    ours = tf.train.ClusterSpec(spec).as_cluster_def()
    theirs = tf1.train.ClusterSpec(spec).as_cluster_def()
    assert ours.SerializeToString(deterministic=True) == theirs.SerializeToString(
        deterministic=True
    )
    parsed = tf.train.ClusterDef.FromString(theirs.SerializeToString())
    assert tf.train.ClusterSpec(parsed) == tf.train.ClusterSpec(spec)
    job = tf.train.JobDef(name="chief", tasks={0: "localhost:2000"})
    assert (
        tf.train.ClusterSpec(tf.train.ClusterDef(job=[job])).task_address("chief", 0)
        == "localhost:2000"
    )
    server_def = tf.train.ServerDef(cluster=ours, job_name="worker", task_index=3)
    assert server_def.cluster.task_address("worker", 3) == "localhost:2226"
    saver_def = tf.train.SaverDef(filename_tensor_name="save/Const:0", version=tf.train.SaverDef.V2)
    assert tf1.train.SaverDef.FromString(saver_def.SerializeToString()).version == 2


def test_assert_global_step_refuses_what_tf_refuses() -> None:
    for lib in (tf, tf1):
        with lib.Graph().as_default():
            lib.train.assert_global_step(lib.train.get_or_create_global_step())
            for bad in (lib.Variable(0.0), lib.Variable([1, 2]), 3):
                with pytest.raises(TypeError):
                    lib.train.assert_global_step(bad)


def test_queue_runner_module_holds_the_queue_runner_names() -> None:
    assert tf.train.queue_runner.QueueRunner is tf.train.QueueRunner
    assert tf.train.queue_runner.add_queue_runner is tf.train.add_queue_runner
    assert tf.train.queue_runner.start_queue_runners is tf.train.start_queue_runners
