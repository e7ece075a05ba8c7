"""TF's checkpoint format on a real cluster (``LocalCluster(ps=2, worker=1)``): each ps
task writes its own shard of TF's format and the client the index; TF
(``tensorflow.compat.v1``) reads the result, and a checkpoint TF wrote restores onto the
two ps tasks, each reading its variables' entries where TF put them.
"""

from __future__ import annotations

import numpy as np
import pytest

import dataflow as tf
from dataflow.ops.state.checkpoint.tf_bundle import read_index

from .conftest import started_cluster

tf1 = pytest.importorskip("tensorflow").compat.v1
tf1.disable_eager_execution()

pytestmark = [pytest.mark.distributed, pytest.mark.tf]

RNG = np.random.default_rng(3)
VALUES = {
    "dense/kernel": RNG.standard_normal((4, 3)).astype(np.float32),
    "dense/bias": RNG.standard_normal(3).astype(np.float32),
    "step": np.int64(41),
    "vocab": np.array([b"the", b"", b"\xc3\xa9t\xc3\xa9"], dtype=object),
    "mask": np.array([True, False, True]),
    "half": np.arange(5, dtype=np.float16),
}


@pytest.fixture(scope="module")
def two_ps():
    with started_cluster(ps=2, worker=1) as c:
        yield c


def _model():
    tf.reset_default_graph()
    with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
        return {
            k: tf.Variable(
                tf.constant(
                    np.full(np.shape(v), b"", object)
                    if np.asarray(v).dtype == object
                    else np.zeros_like(v)
                ),
                name=k,
            )
            for k, v in VALUES.items()
        }


def _equal(got, want):
    got = np.array(got, dtype=object) if isinstance(got, bytes) else np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape
    if want.dtype == object:
        assert got.tolist() == want.tolist()
    else:
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes()


def test_two_ps_save_tf_format_tf_reads(two_ps, tmp_path):
    tf.Session.reset(two_ps)
    variables = _model()
    saver = tf.train.Saver()
    with tf.Session(two_ps) as sess:
        sess.run([v.assign(VALUES[k]) for k, v in variables.items()])
        path = saver.save(sess, str(tmp_path / "model.ckpt"), global_step=7)
    index = read_index(path)
    assert index["format"] == "tf-bundle-v2" and index["num_shards"] == 2
    assert {e["shard"] for e in index["entries"].values()} == {0, 1}  # one per ps
    reader = tf1.train.NewCheckpointReader(path)
    for key, want in VALUES.items():
        _equal(reader.get_tensor(key), want)
    with tf1.Graph().as_default(), tf1.Session() as sess:
        theirs = {
            k: tf1.Variable(np.zeros_like(v), name=k)
            for k, v in VALUES.items()
            if np.asarray(v).dtype != object
        }
        tf1.train.Saver(theirs).restore(sess, tf1.train.latest_checkpoint(str(tmp_path)))
        for key, value in zip(theirs, sess.run(list(theirs.values()))):
            _equal(value, VALUES[key])


def test_a_checkpoint_tf_wrote_restores_on_two_ps(two_ps, tmp_path):
    with tf1.Graph().as_default(), tf1.Session() as sess:
        theirs = [
            tf1.Variable(v, name=k)
            if np.asarray(v).dtype != object
            else tf1.Variable(tf1.constant(v), name=k)
            for k, v in VALUES.items()
        ]
        sess.run(tf1.global_variables_initializer())
        path = tf1.train.Saver(theirs).save(sess, str(tmp_path / "tf.ckpt"))
    tf.Session.reset(two_ps)
    variables = _model()
    with tf.Session(two_ps) as sess:
        tf.train.Saver().restore(sess, path)
        for key, value in zip(variables, sess.run(list(variables.values()))):
            _equal(value, VALUES[key])


def test_a_variable_partitioned_over_two_ps_saves_as_tf_slices(two_ps, tmp_path):
    """Each ps writes its part as TF's slice of ``emb``; TF reads ``emb`` whole, and the
    parts restore from a checkpoint TF wrote with another split."""
    from dataflow.ops.state.checkpoint.tf_bundle import SaveSliceInfo

    full = np.arange(40, dtype=np.float32).reshape(20, 2)

    def parts(rows, value):
        tf.reset_default_graph()
        out, start = [], 0
        for i, n in enumerate(rows):
            with tf.device(f"/job:ps/task:{i % 2}"):
                v = tf.Variable(value[start : start + n], name=f"emb/part_{i}")
            v.set_save_slice_info(SaveSliceInfo("emb", (20, 2), (start, 0), (n, 2)))
            out.append(v)
            start += n
        return out

    tf.Session.reset(two_ps)
    ours = parts([12, 8], full)
    with tf.Session(two_ps) as sess:
        sess.run(tf.global_variables_initializer())
        path = tf.train.Saver().save(sess, str(tmp_path / "emb"))
    assert read_index(path)["num_shards"] == 2
    _equal(tf1.train.NewCheckpointReader(path).get_tensor("emb"), full)
    theirs = str(tmp_path / "theirs")
    with tf1.Graph().as_default(), tf1.Session() as sess:
        with tf1.variable_scope("", partitioner=tf1.fixed_size_partitioner(3)):
            emb = tf1.get_variable("emb", [20, 2], tf1.float32, tf1.zeros_initializer())
        sess.run(tf1.global_variables_initializer())
        tf1.train.Saver(list(emb)).restore(sess, path)
        sess.run([p.assign(p * 3) for p in emb])
        tf1.train.Saver(list(emb)).save(sess, theirs)
    tf.Session.reset(two_ps)
    ours = parts([5, 15], np.zeros_like(full))
    with tf.Session(two_ps) as sess:
        tf.train.Saver(ours).restore(sess, theirs)
        _equal(np.concatenate(sess.run(ours)), full * 3)
