"""``tf.train.Example`` protos and ``parse_example``/``parse_single_example`` against
``tensorflow.compat.v1``: the same bytes both ways, and the same parsed tensors (dense,
defaults, missing features, ``VarLenFeature`` sparse outputs, ``FixedLenSequenceFeature``)
or the same errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import dataflow

from ..strings.test_string_ops import tf_error_text


def _example(train: Any, **features: Any) -> bytes:
    """An ``Example`` (of ``train``'s classes) with ``name=(kind, values)`` features;
    ``None`` for a feature present with no list set."""
    example = train.Example()
    for key, spec in features.items():
        feature = example.features.feature[key]
        if spec is None:
            continue
        kind, values = spec
        getattr(feature, kind).value.extend(values)
    return example.SerializeToString(deterministic=True)


def _protos(train: Any) -> list[bytes]:
    return [
        _example(
            train,
            a=("int64_list", [1, 2]),
            b=("float_list", [1.5]),
            c=("bytes_list", [b"x", b"yy\x00"]),
            m=("float_list", [1, 2, 3, 4, 5, 6]),
            e=None,
        ),
        _example(train, a=("int64_list", [3, 4]), c=("bytes_list", []), m=("float_list", [])),
        _example(
            train, a=("int64_list", [5, -6]), b=("float_list", [-2.0]), s=("bytes_list", [b"q"])
        ),
    ]


# name -> features(tf), for parse_example on the three protos above.
BATCH_CASES: dict[str, Callable[[Any], dict]] = {
    "fixed_and_defaults": lambda tf: {
        "a": tf.FixedLenFeature([2], tf.int64),
        "b": tf.FixedLenFeature([], tf.float32, default_value=7.0),
        "s": tf.FixedLenFeature([1], tf.string, default_value=["none"]),
        "a_matrix": tf.FixedLenFeature([1, 2], tf.int64, default_value=[[8, 9]]),
    },
    "varlen_all_dtypes": lambda tf: {
        "a": tf.VarLenFeature(tf.int64),
        "b": tf.VarLenFeature(tf.float32),
        "c": tf.VarLenFeature(tf.string),
        "absent": tf.VarLenFeature(tf.float32),
        "e": tf.VarLenFeature(tf.int64),
    },
    "sequence": lambda tf: {
        "m": tf.io.FixedLenSequenceFeature([2], tf.float32, allow_missing=True),
        "c": tf.io.FixedLenSequenceFeature([], tf.string, allow_missing=True),
        "b": tf.io.FixedLenSequenceFeature([], tf.float32, allow_missing=True, default_value=-1.0),
        "absent": tf.io.FixedLenSequenceFeature([3], tf.int64, allow_missing=True),
    },
    "missing_without_default": lambda tf: {"b": tf.FixedLenFeature([], tf.float32)},
    "empty_feature_is_missing": lambda tf: {"e": tf.FixedLenFeature([], tf.int64)},
    "wrong_count": lambda tf: {"a": tf.FixedLenFeature([3], tf.int64)},
    "wrong_dtype": lambda tf: {"a": tf.FixedLenFeature([2], tf.float32)},
    "sequence_not_a_multiple": lambda tf: {
        "m": tf.io.FixedLenSequenceFeature([4], tf.float32, allow_missing=True)
    },
    "sequence_without_allow_missing": lambda tf: {
        "m": tf.io.FixedLenSequenceFeature([2], tf.float32)
    },
    "unknown_dimension": lambda tf: {"a": tf.FixedLenFeature([None], tf.int64)},
    "int32_not_allowed": lambda tf: {"a": tf.FixedLenFeature([2], tf.int32)},
    "default_of_wrong_size": lambda tf: {"x": tf.FixedLenFeature([2], tf.int64, default_value=5)},
}

SINGLE_CASES: dict[str, Callable[[Any], dict]] = {
    "mixed": lambda tf: {
        "a": tf.FixedLenFeature([2], tf.int64),
        "c": tf.VarLenFeature(tf.string),
        "m": tf.io.FixedLenSequenceFeature([3], tf.float32, allow_missing=True),
        "b": tf.FixedLenFeature([], tf.float32, default_value=0.25),
    },
    "matrix_default": lambda tf: {
        "x": tf.FixedLenFeature([1, 2], tf.int64, default_value=[[1, 1]])
    },
    "missing": lambda tf: {"s": tf.FixedLenFeature([], tf.string)},
}


def _run(tf: Any, parse: Callable, serialized: Any, features: Callable[[Any], dict]) -> tuple:
    with tf.Graph().as_default():
        try:
            out = parse(serialized, features(tf))
        except (TypeError, ValueError) as exc:
            return ("raises at build", type(exc).__name__, str(exc))
        shapes = {
            k: v.shape.as_list() for k, v in out.items() if not isinstance(v, tf.SparseTensor)
        }
        with tf.Session() as sess:
            try:
                return shapes, sess.run(out)
            except tf.errors.OpError as exc:
                return ("raises", type(exc).__name__, exc.message)


def _assert_same(ours: Any, theirs: Any) -> None:
    if hasattr(theirs, "indices"):
        for a, b in zip(ours, theirs, strict=True):
            _assert_same(a, b)
        return
    a, b = np.asarray(ours), np.asarray(theirs)
    assert a.dtype == b.dtype and a.shape == b.shape, (a, b)
    assert a.tolist() == b.tolist()


def _compare(ours: tuple, theirs: tuple) -> None:
    if isinstance(theirs[0], str):
        assert ours[:2] == theirs[:2], (ours, theirs)
        if theirs[0] == "raises":
            assert tf_error_text(theirs[2]) in ours[2], (ours[2], theirs[2])
        return
    assert not isinstance(ours[0], str), ours
    assert ours[0] == theirs[0]
    assert sorted(ours[1]) == sorted(theirs[1])
    for key in theirs[1]:
        _assert_same(ours[1][key], theirs[1][key])


@pytest.mark.tf
@pytest.mark.parametrize("name", sorted(BATCH_CASES))
def test_parse_example_matches_tf(name: str) -> None:
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    protos = _protos(tf1.train)
    features = BATCH_CASES[name]
    ours = _run(dataflow, dataflow.parse_example, protos, features)
    _compare(ours, _run(tf1, tf1.parse_example, protos, features))


@pytest.mark.tf
@pytest.mark.parametrize("name", sorted(SINGLE_CASES))
@pytest.mark.parametrize("index", [0, 1])
def test_parse_single_example_matches_tf(name: str, index: int) -> None:
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    proto = _protos(tf1.train)[index]
    features = SINGLE_CASES[name]
    ours = _run(dataflow, dataflow.io.parse_single_example, proto, features)
    _compare(ours, _run(tf1, tf1.io.parse_single_example, proto, features))


@pytest.mark.tf
def test_example_bytes_round_trip_with_tf() -> None:
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    for ours, theirs in zip(_protos(dataflow.train), _protos(tf1.train), strict=True):
        assert ours == theirs
        assert tf1.train.Example.FromString(ours) == tf1.train.Example.FromString(theirs)
        assert (
            dataflow.train.Example.FromString(theirs).SerializeToString(deterministic=True)
            == theirs
        )
    sequence = tf1.train.SequenceExample()
    sequence.context.feature["len"].int64_list.value.append(2)
    rows = sequence.feature_lists.feature_list["tokens"].feature
    rows.add().bytes_list.value.extend([b"a", b"b"])
    rows.add().float_list.value.append(0.5)
    data = sequence.SerializeToString(deterministic=True)
    mine = dataflow.train.SequenceExample.FromString(data)
    assert mine.feature_lists.feature_list["tokens"].feature[1].float_list.value == [0.5]
    assert mine.SerializeToString(deterministic=True) == data


def test_our_protos_parse_with_our_op() -> None:
    tf = dataflow
    proto = tf.train.Example(
        features=tf.train.Features(
            feature={
                "x": tf.train.Feature(float_list=tf.train.FloatList(value=[0.5, 1.5])),
                "w": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"hi"])),
                "n": tf.train.Feature(int64_list=tf.train.Int64List(value=[7])),
            }
        )
    ).SerializeToString()
    out = tf.parse_single_example(
        tf.constant(proto),
        {
            "x": tf.FixedLenFeature([2], tf.float32),
            "w": tf.FixedLenFeature([], tf.string),
            "n": tf.VarLenFeature(tf.int64),
        },
    )
    with tf.Session() as sess:
        got = sess.run(out)
    assert got["x"].tolist() == [0.5, 1.5] and got["w"] == b"hi"
    assert got["n"].indices.tolist() == [[0]] and got["n"].values.tolist() == [7]


def test_parse_errors_at_build() -> None:
    tf = dataflow
    with pytest.raises(ValueError, match="features"):
        tf.parse_example(["x"], {})
    with pytest.raises(ValueError, match="must be a scalar"):
        tf.parse_single_example(["x"], {"a": tf.VarLenFeature(tf.int64)})


def test_parse_from_a_placeholder_batch() -> None:
    tf = dataflow
    serialized = tf.placeholder(tf.string, [None])
    out = tf.parse_example(serialized, {"a": tf.FixedLenFeature([2], tf.int64)})
    assert out["a"].shape.as_list() == [None, 2]
    with tf.Session() as sess:
        got = sess.run(out["a"], {serialized: _protos(tf.train)})
    assert got.tolist() == [[1, 2], [3, 4], [5, -6]]
