"""``tf.strings.to_hash_bucket`` (TF's legacy ``Hash64``) and ``to_hash_bucket_strong``
(keyed SipHash-2-4) against ``tensorflow.compat.v1``: buckets over every string length
from 0 to 80 (each partial-word tail) and random bytes, static shapes, dtypes and errors."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow

pytestmark = pytest.mark.tf

_RNG = np.random.default_rng(7)
WORDS = np.array(
    [_RNG.integers(0, 256, n, dtype=np.uint8).tobytes() for n in range(81)]
    + [_RNG.integers(0, 256, n, dtype=np.uint8).tobytes() for n in _RNG.integers(0, 300, 40)]
    + [b"", b"hello", "h\u00e9llo".encode()],
    dtype=object,
)


def _program(tf, words):
    grid = tf.reshape(words[:120], [8, 15])
    return [
        tf.strings.to_hash_bucket(words, 1000),
        tf.strings.to_hash_bucket(grid, 2**62 + 7),
        tf.string_to_hash_bucket(words, 1),
        tf.strings.to_hash_bucket_strong(words, 1000, [1, 2]),
        tf.strings.to_hash_bucket_strong(grid, 2**62 + 7, [2**62 + 12345, 987654321]),
        tf.string_to_hash_bucket_strong(words, 17, [0, 0]),
    ]


def test_buckets_match_tf1() -> None:
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    with tf1.Graph().as_default():
        ref_outs = _program(tf1, tf1.constant(WORDS))
        with tf1.Session() as sess:
            expected = sess.run(ref_outs)
    with dataflow.Graph().as_default():
        words = dataflow.placeholder(dataflow.string, [None])
        outs = _program(dataflow, words)
        assert [o.dtype for o in outs] == [dataflow.int64] * len(outs)
        assert outs[1].shape.as_list() == [8, 15]
        assert outs[0].shape.as_list() == [None]
        with dataflow.Session() as sess:
            got = sess.run(outs, {words: WORDS})
    for ours, theirs in zip(got, expected):
        np.testing.assert_array_equal(ours, theirs)


def test_errors_at_graph_build() -> None:
    with dataflow.Graph().as_default():
        with pytest.raises(ValueError):
            dataflow.strings.to_hash_bucket(["a"], 0)
        with pytest.raises(ValueError):
            dataflow.strings.to_hash_bucket_strong(["a"], 3, [1, 2, 3])
        with pytest.raises(TypeError):
            dataflow.strings.to_hash_bucket(dataflow.constant([1, 2]), 3)
