"""``tf.data.experimental.cardinality`` (and ``Dataset.cardinality``,
``tf.data.INFINITE_CARDINALITY``/``UNKNOWN_CARDINALITY``) against
``tensorflow.compat.v1``: the same pipelines built with both libraries, every count run
in one session each."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow as tf

pytestmark = pytest.mark.tf
tf1 = pytest.importorskip("tensorflow.compat.v1")


def _more(t, lo):
    return lambda x: x > lo


PIPELINES = {
    "range": lambda t, D: D.range(10),
    "range_step": lambda t, D: D.range(3, 17, 4),
    "range_negative_step": lambda t, D: D.range(10, 0, -3),
    "range_empty": lambda t, D: D.range(5, 2),
    "slices": lambda t, D: D.from_tensor_slices(np.zeros((7, 2))),
    "slices_tuple": lambda t, D: D.from_tensor_slices((np.zeros(5), np.ones((5, 3)))),
    "tensors": lambda t, D: D.from_tensors([1, 2]),
    "batch": lambda t, D: D.range(10).batch(3),
    "batch_drop": lambda t, D: D.range(10).batch(3, drop_remainder=True),
    "padded_batch": lambda t, D: D.range(10).padded_batch(4, []),
    "batch_infinite": lambda t, D: D.range(3).repeat().batch(2),
    "repeat": lambda t, D: D.range(3).repeat(),
    "repeat_empty": lambda t, D: D.range(0).repeat(),
    "repeat_2": lambda t, D: D.range(3).repeat(2),
    "repeat_0": lambda t, D: D.range(3).repeat(0),
    "repeat_negative": lambda t, D: D.range(3).repeat(-2),
    "repeat_unknown": lambda t, D: D.range(10).filter(_more(t, 3)).repeat(),
    "repeat_unknown_2": lambda t, D: D.range(10).filter(_more(t, 3)).repeat(2),
    "take": lambda t, D: D.range(10).take(4),
    "take_more": lambda t, D: D.range(10).take(20),
    "take_all": lambda t, D: D.range(10).take(-1),
    "take_infinite": lambda t, D: D.range(3).repeat().take(5),
    "take_0_infinite": lambda t, D: D.range(3).repeat().take(0),
    "take_unknown": lambda t, D: D.range(10).filter(_more(t, 3)).take(3),
    "skip": lambda t, D: D.range(10).skip(4),
    "skip_more": lambda t, D: D.range(10).skip(20),
    "skip_all": lambda t, D: D.range(10).skip(-1),
    "skip_infinite": lambda t, D: D.range(3).repeat().skip(5),
    "skip_all_infinite": lambda t, D: D.range(3).repeat().skip(-1),
    "skip_unknown": lambda t, D: D.range(10).filter(_more(t, 3)).skip(-1),
    "filter": lambda t, D: D.range(10).filter(_more(t, 3)),
    "filter_batch": lambda t, D: D.range(10).filter(_more(t, 3)).batch(2),
    "map": lambda t, D: D.range(10).map(lambda x: x * 2),
    "shuffle": lambda t, D: D.range(10).shuffle(4),
    "prefetch": lambda t, D: D.range(10).prefetch(2),
    "cache": lambda t, D: D.range(10).cache(),
    "zip": lambda t, D: D.zip((D.range(4), D.range(6))),
    "zip_infinite": lambda t, D: D.zip((D.range(4).repeat(), D.range(6))),
    "zip_all_infinite": lambda t, D: D.zip((D.range(4).repeat(), D.range(6).repeat())),
    "zip_unknown": lambda t, D: D.zip((D.range(4).filter(_more(t, 1)), D.range(6).repeat())),
    "concatenate": lambda t, D: D.range(4).concatenate(D.range(6)),
    "concatenate_infinite_unknown": lambda t, D: (
        D.range(4).repeat().concatenate(D.range(6).filter(_more(t, 1)))
    ),
    "concatenate_unknown": lambda t, D: D.range(4).filter(_more(t, 1)).concatenate(D.range(6)),
    "flat_map": lambda t, D: D.range(3).flat_map(lambda x: D.range(x)),
    "interleave": lambda t, D: D.range(3).interleave(lambda x: D.range(x), cycle_length=2),
    "unbatch": lambda t, D: D.range(10).batch(2).unbatch(),
    "shard": lambda t, D: D.range(10).shard(3, 0),
    "shard_last": lambda t, D: D.range(10).shard(3, 2),
    "enumerate": lambda t, D: D.range(5).enumerate(),
    "generator": lambda t, D: D.from_generator(lambda: iter([1]), t.int64),
}


def _counts(t):
    with t.Graph().as_default():
        fetches = {
            name: t.data.experimental.cardinality(build(t, t.data.Dataset))
            for name, build in PIPELINES.items()
        }
        with t.Session() as sess:
            return {k: v.dtype.name for k, v in fetches.items()}, sess.run(fetches)


@pytest.fixture(scope="module")
def counts():
    return _counts(tf), _counts(tf1)


@pytest.mark.parametrize("case", sorted(PIPELINES))
def test_cardinality_matches_tf(counts, case):
    (ours_dtypes, ours), (_, theirs) = counts
    assert ours_dtypes[case] == "int64"
    assert np.asarray(ours[case]).shape == ()
    assert int(ours[case]) == int(theirs[case])


def test_constants_and_the_method():
    assert tf.data.INFINITE_CARDINALITY == tf1.data.INFINITE_CARDINALITY == -1
    assert tf.data.UNKNOWN_CARDINALITY == tf1.data.UNKNOWN_CARDINALITY == -2
    assert tf.data.experimental.INFINITE_CARDINALITY == tf1.data.experimental.INFINITE_CARDINALITY
    assert tf.data.experimental.UNKNOWN_CARDINALITY == tf1.data.experimental.UNKNOWN_CARDINALITY
    with tf.Graph().as_default():
        size = tf.placeholder(tf.int64, [])
        ds = tf.data.Dataset.range(10).batch(size)
        n = ds.cardinality()
        with tf.Session() as sess:
            assert [sess.run(n, {size: b}) for b in (1, 3, 4, 20)] == [10, 4, 3, 1]
        with pytest.raises(TypeError):
            tf.data.experimental.cardinality(tf.constant(1))
