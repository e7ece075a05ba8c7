"""TF's checkpoint op types here (``SaveV2``, ``RestoreV2``, ``MergeV2Checkpoints``,
``ShardedFilename``, ``StaticRegexFullMatch``) and ``BroadcastGradientArgs``, against
``tensorflow``'s raw ops: what one writes the other reads, and the same outputs."""

from __future__ import annotations

import os

import numpy as np
import pytest

import dataflow as tf
from dataflow.framework import errors

pytestmark = pytest.mark.tf

VALUES = {
    "a": np.arange(6, dtype=np.float32).reshape(2, 3),
    "b": np.array([True, False]),
    "c": np.array([b"x", b"", b"yz"], dtype=object),
    "d": np.int64(-4),
}


class _Raw:
    """TF's raw ops, each built in a graph of its own and run in a session (so the
    tests hold whether or not another test turned eager execution off)."""

    def __init__(self, tensorflow):
        self._tf = tensorflow

    def __getattr__(self, op_type):
        def run(**kwargs):
            with self._tf.Graph().as_default():
                out = getattr(self._tf.raw_ops, op_type)(**kwargs)
                with self._tf.compat.v1.Session() as sess:
                    return sess.run(out)

        return run


@pytest.fixture(scope="module")
def raw():
    return _Raw(pytest.importorskip("tensorflow"))


def _session_run(build):
    with tf.Graph().as_default(), tf.Session() as sess:
        return sess.run(build())


def _save_here(prefix, values, specs=None):
    names = list(values)
    specs = specs or [""] * len(names)

    def build():
        return tf.get_default_graph().create_op(
            "SaveV2",
            [
                tf.constant(prefix),
                tf.constant(names),
                tf.constant(specs),
                *[tf.constant(v) for v in values.values()],
            ],
            {"dtypes": [tf.as_dtype(np.asarray(v).dtype) for v in values.values()]},
        )

    _session_run(build)


def _restore_here(prefix, names, dtypes, specs=None):
    specs = specs or [""] * len(names)

    def build():
        op = tf.get_default_graph().create_op(
            "RestoreV2",
            [tf.constant(prefix), tf.constant(names), tf.constant(specs)],
            {"dtypes": [tf.as_dtype(d) for d in dtypes]},
        )
        return list(op.outputs)

    return _session_run(build)


def test_tf_restores_what_save_v2_wrote_here(raw, tmp_path):
    prefix = str(tmp_path / "ours")
    _save_here(prefix, VALUES)
    got = raw.RestoreV2(
        prefix=prefix,
        tensor_names=list(VALUES),
        shape_and_slices=[""] * len(VALUES),
        dtypes=[np.asarray(v).dtype if v.dtype != object else "string" for v in VALUES.values()],
    )
    for (name, want), value in zip(VALUES.items(), got):
        np.testing.assert_array_equal(value, want, err_msg=name)


def test_restore_v2_reads_what_tf_saved(raw, tmp_path):
    prefix = str(tmp_path / "theirs")
    raw.SaveV2(
        prefix=prefix,
        tensor_names=list(VALUES),
        shape_and_slices=[""] * len(VALUES),
        tensors=[v for v in VALUES.values()],
    )
    dtypes = [np.asarray(v).dtype if v.dtype != object else "string" for v in VALUES.values()]
    got = _restore_here(prefix, list(VALUES), dtypes)
    for (name, want), value in zip(VALUES.items(), got):
        np.testing.assert_array_equal(value, want, err_msg=name)


def test_slices_both_ways(raw, tmp_path):
    """A variable saved as two slices (TF's spec strings) reads whole and by slice."""
    full = np.arange(20, dtype=np.float32).reshape(10, 2)
    specs = ["10 2 0,6:0,2", "10 2 6,4:0,2"]
    prefix = str(tmp_path / "sliced")
    _save_here_parts = {"w": full[:6]}
    _save_here(prefix, _save_here_parts, specs[:1])  # one part alone is a valid checkpoint
    ours = str(tmp_path / "two")
    with tf.Graph().as_default(), tf.Session() as sess:
        op = tf.get_default_graph().create_op(
            "SaveV2",
            [
                tf.constant(ours),
                tf.constant(["w", "w"]),
                tf.constant(specs),
                tf.constant(full[:6]),
                tf.constant(full[6:]),
            ],
            {"dtypes": [tf.float32, tf.float32]},
        )
        sess.run(op)
    (whole,) = raw.RestoreV2(
        prefix=ours, tensor_names=["w"], shape_and_slices=[""], dtypes=[np.float32]
    )
    np.testing.assert_array_equal(whole, full)
    theirs = str(tmp_path / "theirs")
    raw.SaveV2(
        prefix=theirs,
        tensor_names=["w", "w"],
        shape_and_slices=specs,
        tensors=[full[:6], full[6:]],
    )
    (part,) = _restore_here(theirs, ["w"], [np.float32], ["10 2 3,5:0,2"])
    np.testing.assert_array_equal(part, full[3:8])
    np.testing.assert_array_equal(_restore_here(theirs, ["w"], [np.float32])[0], full)


def test_restore_v2_errors(tmp_path):
    prefix = str(tmp_path / "ours")
    _save_here(prefix, {"a": VALUES["a"]})
    with pytest.raises(errors.NotFoundError, match="missing"):
        _restore_here(prefix, ["missing"], [np.float32])
    with pytest.raises(errors.InvalidArgumentError, match="dtype"):
        _restore_here(prefix, ["a"], [np.int32])
    with pytest.raises(errors.InvalidArgumentError, match="slice spec"):
        _restore_here(prefix, ["a"], [np.float32], ["2 3 0,9:0,3"])
    with pytest.raises(errors.NotFoundError):
        _restore_here(str(tmp_path / "none"), ["a"], [np.float32])


def test_merge_v2_checkpoints_as_tf(raw, tmp_path):
    """Two one-shard checkpoints in a temporary directory merged into one of two shards,
    which TF reads; the directory is removed."""
    temp = tmp_path / "model_temp"
    os.makedirs(temp)
    parts = [str(temp / "part-00000-of-00002"), str(temp / "part-00001-of-00002")]
    _save_here(parts[0], {"a": VALUES["a"]})
    _save_here(parts[1], {"b": VALUES["b"], "c": VALUES["c"]})
    final = str(tmp_path / "model")

    def build():
        return tf.get_default_graph().create_op(
            "MergeV2Checkpoints",
            [tf.constant(parts), tf.constant(final)],
            {"delete_old_dirs": True},
        )

    _session_run(build)
    assert not temp.exists()
    assert sorted(os.listdir(tmp_path)) == [
        "model.data-00000-of-00002",
        "model.data-00001-of-00002",
        "model.index",
    ]
    got = raw.RestoreV2(
        prefix=final,
        tensor_names=["c", "a"],
        shape_and_slices=["", ""],
        dtypes=["string", "float32"],
    )
    np.testing.assert_array_equal(got[0], VALUES["c"])
    np.testing.assert_array_equal(got[1], VALUES["a"])


def test_sharded_filename_and_regex_match_as_tf(raw):
    def build():
        name = tf.get_default_graph().create_op(
            "ShardedFilename",
            [tf.constant("/tmp/m_temp/part"), tf.constant(3), tf.constant(12)],
        )
        match = tf.get_default_graph().create_op(
            "StaticRegexFullMatch",
            [tf.constant(["s3://bucket/x", "/local/x", "s3:/no"])],
            {"pattern": "^s3://.*"},
        )
        return name.outputs[0], match.outputs[0]

    name, match = _session_run(build)
    assert name == raw.ShardedFilename(basename="/tmp/m_temp/part", shard=3, num_shards=12)
    want = raw.StaticRegexFullMatch(
        input=["s3://bucket/x", "/local/x", "s3:/no"], pattern="^s3://.*"
    )
    np.testing.assert_array_equal(match, want)


@pytest.mark.parametrize(
    "s0, s1",
    [
        ([2, 3], [2, 3]),
        ([3], [2, 3]),
        ([2, 1], [2, 3]),
        ([1, 1], [4, 1]),
        ([], [2, 3]),
        ([5, 1, 3], [4, 1]),
        ([1], [1]),
    ],
)
def test_broadcast_gradient_args_as_tf(raw, s0, s1):
    def build():
        op = tf.get_default_graph().create_op(
            "BroadcastGradientArgs",
            [tf.constant(s0, dtype=tf.int32), tf.constant(s1, dtype=tf.int32)],
        )
        return list(op.outputs)

    r0, r1 = _session_run(build)
    want0, want1 = raw.BroadcastGradientArgs(s0=np.array(s0, np.int32), s1=np.array(s1, np.int32))
    np.testing.assert_array_equal(np.sort(r0), np.sort(want0))
    np.testing.assert_array_equal(np.sort(r1), np.sort(want1))


def test_broadcast_gradient_args_refuses_what_tf_refuses(raw):
    def build():
        op = tf.get_default_graph().create_op(
            "BroadcastGradientArgs", [tf.constant([2, 3]), tf.constant([4, 3])]
        )
        return list(op.outputs)

    with pytest.raises(errors.InvalidArgumentError, match="Incompatible shapes"):
        _session_run(build)
    tensorflow = pytest.importorskip("tensorflow")
    with pytest.raises(tensorflow.errors.InvalidArgumentError):
        raw.BroadcastGradientArgs(s0=[2, 3], s1=[4, 3])
