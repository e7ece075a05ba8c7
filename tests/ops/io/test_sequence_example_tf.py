"""``parse_sequence_example`` and ``parse_single_sequence_example`` against
``tensorflow.compat.v1``: values, dtypes and static shapes of the context, feature-list
and length dicts over a batch with short, long, empty and missing lists, one proto at a
time, a batch of unknown size, a scalar given to the batched parser, and TF's errors
(at build time and when run)."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow

pytestmark = pytest.mark.tf


def _protos():
    from tensorflow.core.example import example_pb2, feature_pb2

    def ints(v):
        return feature_pb2.Feature(int64_list=feature_pb2.Int64List(value=v))

    def floats(v):
        return feature_pb2.Feature(float_list=feature_pb2.FloatList(value=v))

    def strings(v):
        return feature_pb2.Feature(bytes_list=feature_pb2.BytesList(value=v))

    def make(context_ids, steps, words):
        proto = example_pb2.SequenceExample()
        proto.context.feature["ids"].CopyFrom(ints(context_ids))
        proto.context.feature["pos"].CopyFrom(floats([0.5, -1.5]))
        lists = proto.feature_lists.feature_list
        for s in steps:
            lists["frame"].feature.add().CopyFrom(floats([s, s * 2.0, -s]))
            lists["tokens"].feature.add().CopyFrom(ints(list(range(int(s)))))
        for w in words:
            lists["words"].feature.add().CopyFrom(strings([w]))
        return proto.SerializeToString()

    empty = example_pb2.SequenceExample()
    empty.context.feature["pos"].CopyFrom(floats([3.0, 4.0]))
    empty.context.feature["title"].CopyFrom(strings([b"t"]))
    empty.feature_lists.feature_list["frame"].SetInParent()
    return [
        make([4, 5], [1.0, 3.0, 2.0], [b"a", b"bc"]),
        make([], [4.0], []),
        empty.SerializeToString(),
        make([9], [0.0, 1.0], [b"x", b"y", b"z", b""]),
    ]


PROTOS = _protos()
CONTEXT = {
    "ids": ("VarLenFeature", dict(dtype="int64")),
    "title": ("VarLenFeature", dict(dtype="string")),
    "pos": ("FixedLenFeature", dict(shape=[2], dtype="float32")),
    "label": ("FixedLenFeature", dict(shape=[], dtype="int64", default_value=-1)),
    "name": ("FixedLenFeature", dict(shape=[1], dtype="string", default_value=[b"?"])),
}
SEQUENCE = {
    "frame": ("FixedLenSequenceFeature", dict(shape=[3], dtype="float32")),
    "tokens": ("VarLenFeature", dict(dtype="int64")),
    "words": ("FixedLenSequenceFeature", dict(shape=[], dtype="string", allow_missing=True)),
}


def _specs(tf, table):
    out = {}
    for key, (kind, kwargs) in table.items():
        kwargs = {k: getattr(tf, v) if k == "dtype" else v for k, v in kwargs.items()}
        out[key] = getattr(tf.io, kind)(**kwargs)
    return out


def _static(structure):
    """(shape, dtype) of every tensor of a dict (or tuple of dicts), by key."""
    found = []
    for d in structure:
        for key in sorted(d):
            value = d[key]
            parts = (
                (value.indices, value.values, value.dense_shape)
                if hasattr(value, "indices")
                else (value,)
            )
            found += [(key, p.shape.as_list(), p.dtype.name) for p in parts]
    return found


def _build(tf):
    context, sequence = _specs(tf, CONTEXT), _specs(tf, SEQUENCE)
    batch = tf.io.parse_sequence_example(tf.constant(PROTOS[:3]), context, sequence)
    fed = tf.placeholder(tf.string, [None])
    unknown = tf.io.parse_sequence_example(fed, context, sequence)
    singles = [tf.io.parse_single_sequence_example(p, context, sequence) for p in PROTOS]
    top = tf.parse_single_sequence_example(PROTOS[0], None, sequence)
    scalar = tf.io.parse_sequence_example(PROTOS[3], context, sequence)  # unbatched
    return fed, [batch, unknown, *singles, top, scalar]


@pytest.fixture(scope="module")
def results():
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    out = []
    for tf in (dataflow, tf1):
        with tf.Graph().as_default():
            fed, fetches = _build(tf)
            static = [_static(f) for f in fetches]
            with tf.Session() as sess:
                out.append((static, sess.run(fetches, {fed: PROTOS[1:]})))
    return out


def _assert_same(got, want):
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _assert_same(g, w)
    elif isinstance(want, dict):
        assert sorted(got) == sorted(want)
        for key in want:
            _assert_same(got[key], want[key])
    elif hasattr(want, "indices"):
        for g, w in zip(got, want):
            _assert_same(g, w)
    else:
        got, want = np.asarray(got), np.asarray(want)
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_values_match_tf(results):
    (_, got), (_, want) = results
    _assert_same(got, want)
    lengths = got[0][2]
    np.testing.assert_array_equal(lengths["frame"], [3, 1, 0])


def test_static_shapes_match_tf(results):
    (got, _), (want, _) = results
    assert got == want


def test_build_errors_match_tf():
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    for tf in (dataflow, tf1):
        with tf.Graph().as_default():
            fixed = tf.io.FixedLenFeature([], tf.int64)
            seq = tf.io.FixedLenSequenceFeature([], tf.int64)
            single, batch = tf.io.parse_single_sequence_example, tf.io.parse_sequence_example
            default = tf.io.FixedLenSequenceFeature([], tf.int64, default_value=1)
            bad = [
                (single, (PROTOS[0],)),
                (single, (PROTOS[:1], {"a": fixed})),
                (single, (PROTOS[0], None, {"a": fixed})),
                (single, (PROTOS[0], {"a": seq})),
                (batch, (PROTOS, None, {"a": default})),
                (batch, (PROTOS, {"a": tf.io.FixedLenFeature([None], tf.int64)})),
            ]
            for parse, args in bad:
                with pytest.raises(ValueError):
                    parse(*args)
            with pytest.raises(TypeError):
                tf.io.parse_sequence_example(PROTOS, {"a": tf.io.FixedLenFeature([], tf.int32)})


def test_run_errors_match_tf():
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    for tf in (dataflow, tf1):
        with tf.Graph().as_default():
            one = PROTOS[0]
            fetches = [
                tf.io.parse_sequence_example(
                    PROTOS, None, {"gone": tf.io.FixedLenSequenceFeature([], tf.int64)}
                ),
                tf.io.parse_single_sequence_example(
                    one, None, {"frame": tf.io.FixedLenSequenceFeature([2], tf.float32)}
                ),
                tf.io.parse_single_sequence_example(
                    one, None, {"frame": tf.io.FixedLenSequenceFeature([3], tf.int64)}
                ),
                tf.io.parse_single_sequence_example(
                    one, {"label": tf.io.FixedLenFeature([], tf.int64)}
                ),
                tf.io.parse_single_sequence_example(
                    b"\x0a\x05ab", {"label": tf.io.FixedLenFeature([], tf.int64, 0)}
                ),
            ]
            with tf.Session() as sess:
                for fetch in fetches:
                    with pytest.raises(tf.errors.InvalidArgumentError):
                        sess.run(fetch)
