"""``tf.contrib.training.bucket_by_sequence_length`` and ``bucket`` as TF 1.15 documents
and builds them (TF 2 has no contrib): fed examples in a fixed order, every batch holds
examples of one bucket, each bucket's batches are its examples in order, padded to the
batch's longest with ``dynamic_pad``; ``keep_input`` filters; static shapes, the queue
runners and summaries TF adds, and TF's errors."""

from __future__ import annotations

import collections

import numpy as np
import pytest

import dataflow as tf

LENGTHS = np.array([3, 7, 1, 4, 9, 2, 6, 5, 8, 3, 1, 7], np.int32)
TOKENS = np.zeros((12, 9), np.int64)
for _i, _n in enumerate(LENGTHS):
    TOKENS[_i, :_n] = np.arange(1, _n + 1) + 10 * _i
BOUNDARIES = [3, 6]


def bucket_of(length):
    return int(np.searchsorted(BOUNDARIES, length, side="right"))


def expected_streams(batch_size, keep=lambda i: True, epochs=20):
    """Per bucket, the example ids of its batches in order (the documented rule), over
    more epochs than the queues can run ahead (their capacities: tens of examples, so
    a bucket that fills slowly may have its fifth epoch's batch among the first ten)."""
    streams = collections.defaultdict(list)
    for i in list(range(12)) * epochs:
        if keep(i):
            streams[bucket_of(LENGTHS[i])].append(i)
    return {
        b: [
            ids[k : k + batch_size[b]]
            for k in range(0, len(ids) - batch_size[b] + 1, batch_size[b])
        ]
        for b, ids in streams.items()
    }


def example():
    index = tf.train.range_input_producer(12, shuffle=False).dequeue()
    length = tf.gather(LENGTHS, index)
    return index, length, tf.gather(TOKENS, index)[:length]


def fetch_batches(fetches, count):
    with tf.train.MonitoredSession() as sess:
        return [sess.run(fetches) for _ in range(count)]


@pytest.mark.parametrize("batch_size", [2, [3, 2, 1]])
def test_batches_hold_one_bucket_each_in_order(batch_size):
    index, length, tokens = example()
    lengths, outputs = tf.contrib.training.bucket_by_sequence_length(
        length, {"tokens": tokens, "id": index}, batch_size, BOUNDARIES, dynamic_pad=True
    )
    sizes = batch_size if isinstance(batch_size, list) else [batch_size] * 3
    fixed = None if isinstance(batch_size, list) else batch_size
    assert lengths.shape.as_list() == [fixed] and outputs["tokens"].shape.as_list() == [fixed, None]
    assert sorted(outputs) == ["id", "tokens"]
    got = collections.defaultdict(list)
    for lens, out in fetch_batches((lengths, outputs), 10):
        ids = out["id"]
        buckets = {bucket_of(n) for n in lens}
        assert len(buckets) == 1 and len(ids) == sizes[buckets.pop()]
        np.testing.assert_array_equal(lens, LENGTHS[ids])
        assert out["tokens"].shape == (len(ids), lens.max())
        np.testing.assert_array_equal(out["tokens"], TOKENS[ids, : lens.max()])
        got[bucket_of(lens[0])].append(list(ids))
    want = expected_streams(sizes)
    for b, batches in got.items():
        assert [list(w) for w in want[b][: len(batches)]] == batches


def test_keep_input_filters_examples():
    index, length, tokens = example()
    keep = tf.equal(length % 2, 1)
    lengths, (ids,) = tf.contrib.training.bucket_by_sequence_length(
        length, [index], 2, BOUNDARIES, keep_input=keep
    )
    got = collections.defaultdict(list)
    for lens, batch in fetch_batches((lengths, ids), 6):
        assert (lens % 2 == 1).all()
        got[bucket_of(lens[0])].append(list(batch))
    want = expected_streams([2, 2, 2], keep=lambda i: LENGTHS[i] % 2 == 1)
    for b, batches in got.items():
        assert [list(w) for w in want[b][: len(batches)]] == batches


def test_bucket_builds_tf_graph_pieces():
    x = tf.constant([1.0, 2.0])
    which, (out,) = tf.contrib.training.bucket(
        [x], tf.constant(1), 4, 3, num_threads=2, allow_smaller_final_batch=True
    )
    assert which.dtype == tf.int32 and which.shape.as_list() == []
    assert out.shape.as_list() == [None, 2]
    runners = tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)
    assert [len(r.enqueue_ops) for r in runners] == [1, 1, 1, 2]
    assert [r.queue.name for r in runners] == [
        "bucket/bucket_queue_0",
        "bucket/bucket_queue_1",
        "bucket/bucket_queue_2",
        "bucket/top_queue",
    ]
    with tf.Session() as sess:
        merged = tf.Summary.FromString(sess.run(tf.summary.merge_all()))
    # TF's tags: the name scope, then "bucket/<queue name>/..."
    assert [(v.tag, v.simple_value) for v in merged.value] == [
        ("bucket/bucket/bucket/bucket_queue_0/size", 0.0),
        ("bucket/bucket/bucket/bucket_queue_1/size", 0.0),
        ("bucket/bucket/bucket/bucket_queue_2/size", 0.0),
        ("bucket/bucket/bucket/top_queue/fraction_of_32_full", 0.0),
    ]


def test_errors_as_tf():
    x = tf.constant([1, 2])
    by_length = tf.contrib.training.bucket_by_sequence_length
    with pytest.raises(TypeError, match="list or tuple"):
        by_length(2, [x], 2, 5)
    with pytest.raises(ValueError, match="must not be empty"):
        by_length(2, [x], 2, [])
    with pytest.raises(ValueError, match="increasing"):
        by_length(2, [x], 2, [4, 4])
    with pytest.raises(TypeError, match="integers"):
        by_length(2, [x], 2, [1.5, 4])
    with pytest.raises(ValueError, match="num_buckets elements"):
        by_length(2, [x], [2, 2, 2], [3])
    with pytest.raises(ValueError, match="bucket_capacities"):
        by_length(2, [x], 2, [3], bucket_capacities=[4])
    with pytest.raises(ValueError, match="fully defined"):
        by_length(2, [tf.placeholder(tf.int32, [None])], 2, [3])
