"""``SparseFeature`` in ``parse_example`` and ``parse_single_example`` against
``tensorflow.compat.v1``: one and two index keys, unsorted and ``already_sorted``
indices, a value key also asked for as a ``VarLenFeature``, protos without the
feature; values, dtypes and static shapes."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow

pytestmark = pytest.mark.tf


def _protos():
    from tensorflow.core.example import example_pb2, feature_pb2

    def make(idx, col, val, words):
        proto = example_pb2.Example()
        feature = proto.features.feature
        feature["idx"].int64_list.value.extend(idx)
        feature["col"].int64_list.value.extend(col)
        feature["val"].float_list.value.extend(val)
        feature["word"].bytes_list.value.extend(words)
        return proto.SerializeToString()

    empty = example_pb2.Example()
    empty.features.feature["other"].CopyFrom(
        feature_pb2.Feature(int64_list=feature_pb2.Int64List(value=[1]))
    )
    return [
        make([7, 2, 5], [1, 3, 0], [0.5, -1.0, 2.5], [b"a", b"b", b"c"]),
        make([], [], [], []),
        make([9, 0], [2, 2], [4.0, 8.0], [b"x", b"y"]),
        empty.SerializeToString(),
    ]


PROTOS = _protos()


def _features(tf):
    return {
        "by_idx": tf.io.SparseFeature("idx", "val", tf.float32, 10),
        "grid": tf.SparseFeature(["idx", "col"], "word", tf.string, [10, 4], True),
        "val": tf.io.VarLenFeature(tf.float32),
    }


def _static(parsed):
    return [
        (k, p.shape.as_list(), p.dtype.name)
        for k in sorted(parsed)
        for p in (parsed[k].indices, parsed[k].values, parsed[k].dense_shape)
    ]


@pytest.fixture(scope="module")
def results():
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    out = []
    for tf in (dataflow, tf1):
        with tf.Graph().as_default():
            fetches = [tf.io.parse_example(tf.constant(PROTOS), _features(tf))]
            fetches += [tf.parse_single_example(p, _features(tf)) for p in PROTOS]
            static = [_static(f) for f in fetches]
            with tf.Session() as sess:
                out.append((static, sess.run(fetches)))
    return out


def test_values_match_tf(results):
    (_, got), (_, want) = results
    for g, w in zip(got, want, strict=True):
        assert sorted(g) == sorted(w)
        for key in w:
            for part_g, part_w in zip(g[key], w[key], strict=True):
                assert part_g.dtype == part_w.dtype
                np.testing.assert_array_equal(part_g, part_w)
    np.testing.assert_array_equal(got[0]["by_idx"].indices[:3], [[0, 2], [0, 5], [0, 7]])


def test_static_shapes_match_tf(results):
    (got, _), (want, _) = results
    assert got == want


def test_bad_specs_raise_like_tf():
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    for tf in (dataflow, tf1):
        with tf.Graph().as_default():
            mismatched = tf.io.SparseFeature(["idx", "col"], "val", tf.float32, [10])
            conflict = tf.io.SparseFeature("idx", "val", tf.float32, 10)
            for features in (
                {"s": mismatched},
                {"s": conflict, "val": tf.io.VarLenFeature(tf.int64)},
            ):
                with pytest.raises(ValueError):
                    tf.io.parse_example(PROTOS, features)
