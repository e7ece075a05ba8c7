"""Checkpoints on real clusters: each worker writes its own shard; a checkpoint restores
across cluster shapes (2 ps, 1 ps, embedded); damaged files are clear errors that change
no variable on any worker; a worker killed during a save leaves the previous checkpoint
restorable.

A ``LocalCluster(ps=2, worker=1)`` of this module's own (its last test kills a worker)
plus the folder's shared ``LocalCluster(ps=1, worker=2)``.
"""

from __future__ import annotations

import os
import threading
import time

import distributed
import numpy as np
import pytest

import dataflow as tf
from dataflow.ops.state.checkpoint.tf_bundle import read_index

from .conftest import kill_worker as _kill
from .conftest import started_cluster
from .conftest import wait_until_back as _wait_back

pytestmark = pytest.mark.distributed

SHAPES = {
    "a": ((3, 4), np.float32),
    "b": ((5,), np.float64),
    "c": ((), np.int32),
    "d": ((2, 2), np.float32),
    "e": ((6,), np.int64),
}


@pytest.fixture(scope="module")
def two_ps():
    with started_cluster(ps=2, worker=1) as c:
        yield c


def _values(seed):
    rng = np.random.default_rng(seed)
    return {
        k: (rng.standard_normal(shape) * 10).astype(dtype) for k, (shape, dtype) in SHAPES.items()
    }


def _model(ps_tasks):
    """The same variables; on ``ps_tasks`` ps tasks (round robin), or embedded (0)."""
    tf.reset_default_graph()
    setter = tf.train.replica_device_setter(ps_tasks=ps_tasks) if ps_tasks else None
    with tf.device(setter):
        variables = {
            k: tf.Variable(np.zeros(shape, dtype), name=k) for k, (shape, dtype) in SHAPES.items()
        }
    feeds = {k: tf.placeholder(v.dtype, v.shape) for k, v in variables.items()}
    assign = tf.group(*[v.assign(feeds[k]) for k, v in variables.items()])
    return variables, feeds, assign, tf.train.Saver(max_to_keep=10)


def _session(target):
    return tf.Session(target) if target else tf.Session()


def _set(sess, model, values):
    variables, feeds, assign, _ = model
    sess.run(assign, {feeds[k]: values[k] for k in variables})


def _check(sess, model, values):
    got = sess.run(model[0])
    for k, want in values.items():
        np.testing.assert_array_equal(got[k], want, err_msg=k)
        assert got[k].dtype == want.dtype


def _names(cluster):
    return {address: name for name, address in cluster.workers.items()}


def test_each_ps_writes_its_own_shard(two_ps, tmp_path):
    tf.Session.reset(two_ps)
    model = _model(2)
    variables, _, _, saver = model
    values = _values(0)
    # The task-graph path, whose stages show in Dask's task stream.
    with tf.Session(two_ps, config=tf.ConfigProto(resident_steps=False)) as sess:
        sess.run(tf.global_variables_initializer())
        _set(sess, model, values)
        placement = sess.placement(saver._save_ops)
        session = sess.backend.session_id
        with distributed.get_task_stream(client=two_ps.client) as ts:
            path = saver.save(sess, str(tmp_path / "model"), global_step=1)
    # The save step ran one task per ps, on that ps, and nothing anywhere else.
    names = _names(two_ps)
    # A key's group is "<countdown>.<main op>@<device>-<plan signature>" (lowering), then
    # the session (the stream also shows other sessions' resident steps) and the step
    # (0 for the anchors that keep the session's task groups).
    ran = sorted(
        (t["key"][0].split("@")[0].split(".", 1)[1], names[t["worker"]])
        for t in ts.data
        if t["key"][1] == session and t["key"][2] > 0
    )
    assert ran == [("save/save_shard_0", "ps-0"), ("save/save_shard_1", "ps-1")]
    assert placement["save/save_shard_0"].startswith("/job:ps/replica:0/task:0")
    assert placement["save/save_shard_1"].startswith("/job:ps/replica:0/task:1")
    # Each shard holds exactly the variables of its ps.
    entries = read_index(path)["entries"]  # either format
    for key, v in variables.items():
        task = int(placement[v.op.name].split("/task:")[1].split("/")[0])
        assert entries[key]["shard"] == task, key
    assert sorted(os.listdir(tmp_path)) == sorted(
        [
            "checkpoint",
            "model-1.index",
            "model-1.data-00000-of-00002",
            "model-1.data-00001-of-00002",
            "model-1.meta",  # written by the client, as TF1's Saver.save writes it
        ]
    )
    for key, want in values.items():
        np.testing.assert_array_equal(tf.train.load_variable(path, key), want)


def test_restore_across_cluster_shapes(two_ps, cluster, tmp_path):
    """embedded -> 2 ps -> 1 ps -> embedded -> 1 ps -> 2 ps, each hop through a
    checkpoint written by the previous shape."""
    shapes = [
        ("embedded", None, 0),
        ("2 ps", two_ps, 2),
        ("1 ps", cluster, 1),
        ("embedded", None, 0),
        ("1 ps", cluster, 1),
        ("2 ps", two_ps, 2),
    ]
    previous_path, previous_values = None, None
    for hop, (label, target, ps_tasks) in enumerate(shapes):
        if target is not None:
            tf.Session.reset(target)
        model = _model(ps_tasks)
        with _session(target) as sess:
            if previous_path is not None:
                model[3].restore(sess, previous_path)  # no initializer: restore is enough
                _check(sess, model, previous_values)
            else:
                sess.run(tf.global_variables_initializer())
            previous_values = _values(hop + 1)
            _set(sess, model, previous_values)
            previous_path = model[3].save(sess, str(tmp_path / f"hop{hop}"))
        assert read_index(previous_path)["num_shards"] == max(ps_tasks, 1), label


@pytest.mark.parametrize("damage", ["truncate", "flip", "index", "missing"])
def test_damaged_checkpoint_is_a_clear_error_and_changes_no_worker(two_ps, tmp_path, damage):
    tf.Session.reset(two_ps)
    model = _model(2)
    saved, current = _values(10), _values(11)
    with _session(two_ps) as sess:
        sess.run(tf.global_variables_initializer())
        _set(sess, model, saved)
        path = model[3].save(sess, str(tmp_path / "m"))
        shard = path + ".data-00001-of-00002"  # ps-1's
        if damage == "truncate":
            with open(shard, "r+b") as f:
                f.truncate(os.path.getsize(shard) - 7)
        elif damage == "flip":
            entry = read_index(path)["entries"]["b"]
            with open(shard, "r+b") as f:
                f.seek(entry["offset"] + 3)
                byte = f.read(1)
                f.seek(entry["offset"] + 3)
                f.write(bytes([byte[0] ^ 0x20]))
        elif damage == "index":
            with open(path + ".index", "w") as f:
                f.write('{"format": "dataflow-checkpoint-v1", "entr')
        else:
            os.remove(shard)
        _set(sess, model, current)
        with pytest.raises(tf.errors.DataLossError, match=r"corrupted|truncated|missing") as info:
            model[3].restore(sess, path)
        if damage != "index":
            assert "data-00001-of-00002" in str(info.value)
        # All or nothing: ps-0's shard was fine, yet none of its variables changed.
        _check(sess, model, current)


def test_worker_killed_during_save_leaves_the_previous_checkpoint(two_ps, tmp_path):
    """Kills ps-1 while it writes its shard (a 96 MB variable): the save fails, the
    directory still names the previous checkpoint, and it restores once ps-1 is back."""
    tf.Session.reset(two_ps)
    tf.reset_default_graph()
    n = 24 * 2**20
    with tf.device("/job:ps/task:1"):
        big = tf.Variable(tf.zeros([n]), name="big")
    with tf.device("/job:ps/task:0"):
        step = tf.Variable(0, name="step")
    x = tf.placeholder(tf.int32, [])
    update = tf.group(big.assign(tf.fill([n], tf.cast(x, tf.float32))), step.assign(x))
    saver = tf.train.Saver()
    prefix = str(tmp_path / "model")
    with _session(two_ps) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(update, {x: 1})
        first = saver.save(sess, prefix, global_step=1)
        sess.run(update, {x: 2})
        outcome = {}

        def save():
            try:
                outcome["path"] = saver.save(sess, prefix, global_step=2)
            except Exception as exc:
                outcome["error"] = exc

        thread = threading.Thread(target=save)
        thread.start()
        deadline = time.monotonic() + 30
        while not any(".tmp-" in f and "model-2" in f for f in os.listdir(tmp_path)):
            assert time.monotonic() < deadline, "the second save never started writing"
            time.sleep(0.001)
        old = _kill(two_ps, "ps-1")  # mid-write of its shard
        thread.join(30)
        assert not thread.is_alive(), "the save hung after its worker died"
        assert isinstance(outcome.get("error"), tf.errors.UnavailableError), outcome
    assert tf.train.latest_checkpoint(str(tmp_path)) == first
    assert not tf.train.checkpoint_exists(prefix + "-2")
    _wait_back(two_ps, "ps-1", old)
    with _session(two_ps) as sess:
        # ps-1 restarted empty; the previous checkpoint brings its variable back.
        with pytest.raises(tf.errors.FailedPreconditionError):
            sess.run(big)
        saver.restore(sess, tf.train.latest_checkpoint(str(tmp_path)))
        assert sess.run(step) == 1
        values = sess.run(big)
        assert values.min() == values.max() == 1.0
        # Saving into the same directory works again (the stale temporary is ignored).
        sess.run(update, {x: 3})
        third = saver.save(sess, prefix, global_step=3)
        assert tf.train.latest_checkpoint(str(tmp_path)) == third
