"""``Dataset.from_dask`` in embedded sessions, against numpy and pandas: rows, blocks,
dataframes as dicts of columns, aligned dicts/tuples, batching, seeded shuffling,
repeat, streaming a collection chunk by chunk, a collection persisted on a cluster, the
share book that splits epochs between replicas, bad input, and dask arrays in
``feed_dict``."""

from __future__ import annotations

import tracemalloc

import dask.array as da
import dask.dataframe as dd
import distributed
import numpy as np
import pandas as pd
import pytest

import dataflow as tf
from dataflow.ops.data.from_dask.shares import ShareBook

from ..distributed.conftest import collect_leaked_sockets


def _drain(sess, tensor):
    out = []
    while True:
        try:
            out.append(sess.run(tensor))
        except tf.errors.OutOfRangeError:
            return out


def _read(dataset, initializable=False):
    with tf.Session() as sess:
        return _drain(sess, dataset.make_one_shot_iterator().get_next())


X = np.arange(60, dtype=np.float32).reshape(30, 2)
FRAME = pd.DataFrame(
    {
        "b": np.arange(12, dtype=np.int64),
        "a": np.linspace(0.0, 1.0, 12),
        "name": [f"row{i}" for i in range(12)],
        "flag": np.arange(12) % 2 == 0,
    }
)


def test_rows_of_an_array_in_order():
    with tf.Graph().as_default():
        dataset = tf.data.Dataset.from_dask(da.from_array(X, chunks=(7, 2)))
        assert dataset.output_types == tf.float32
        assert dataset.output_shapes.as_list() == [2]
        rows = _read(dataset)
    np.testing.assert_array_equal(np.stack(rows), X)


def test_batches_cross_partition_boundaries_as_numpy_batches_do():
    with tf.Graph().as_default():
        dataset = tf.data.Dataset.from_dask(da.from_array(X, chunks=(7, 2))).batch(4)
        batches = _read(dataset)
    expected = [X[i : i + 4] for i in range(0, 30, 4)]
    assert len(batches) == len(expected)
    for got, want in zip(batches, expected, strict=True):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("drop", [False, True], ids=["remainder", "drop_remainder"])
def test_batches_cut_from_shuffled_partitions_hold_the_rows_in_their_order(drop):
    """``batch`` straight on ``from_dask`` cuts each batch from the partitions (a slice,
    or a take in a shuffled partition's order, joined across partition boundaries): the
    same rows, in the same order, as the rows read one by one and batched by numpy,
    over two epochs; a dropped remainder is left out of each."""
    x = da.from_array(X, chunks=(7, 2))  # partitions of 7, 7, 7, 7 and 2 rows

    def read(batch):
        with tf.Graph().as_default():
            dataset = tf.data.Dataset.from_dask(x, shuffle=True, seed=4)
            if batch:
                dataset = dataset.batch(4, drop_remainder=drop)
            return _read(dataset.repeat(2))

    rows = np.stack(read(batch=False))
    expected = []
    for epoch in (rows[:30], rows[30:]):
        stop = 28 if drop else 30
        expected += [epoch[i : min(i + 4, stop)] for i in range(0, stop, 4)]
    batches = read(batch=True)
    assert len(batches) == len(expected)
    for got, want in zip(batches, expected, strict=True):
        np.testing.assert_array_equal(got, want)
    assert sorted(rows[:30, 0].tolist()) == sorted(X[:, 0].tolist())


def test_blocks_are_the_partitions():
    with tf.Graph().as_default():
        dataset = tf.data.Dataset.from_dask(da.from_array(X, chunks=(7, 2)), blocks=True)
        assert dataset.output_shapes.as_list() == [None, 2]
        blocks = _read(dataset)
    assert [len(b) for b in blocks] == [7, 7, 7, 7, 2]
    np.testing.assert_array_equal(np.concatenate(blocks), X)


def test_a_dataframe_is_a_dict_of_its_columns():
    frame = dd.from_pandas(FRAME, npartitions=3)
    with tf.Graph().as_default():
        dataset = tf.data.Dataset.from_dask(frame).batch(5)
        assert dataset.output_types == {
            "a": tf.float64,
            "b": tf.int64,
            "flag": tf.bool,
            "name": tf.string,
        }
        batches = _read(dataset)
    got = {k: np.concatenate([b[k] for b in batches]) for k in FRAME.columns}
    np.testing.assert_array_equal(got["a"], FRAME["a"].to_numpy())
    np.testing.assert_array_equal(got["b"], FRAME["b"].to_numpy())
    np.testing.assert_array_equal(got["flag"], FRAME["flag"].to_numpy())
    assert got["name"].tolist() == [s.encode() for s in FRAME["name"]]


def test_a_dict_and_a_tuple_of_aligned_collections():
    x = da.from_array(X, chunks=(10, 2))
    y = da.arange(30, chunks=10)
    frame = dd.from_pandas(pd.DataFrame({"c": np.arange(30) * 2}), npartitions=3)
    frame = frame.repartition(divisions=[0, 10, 20, 29])
    with tf.Graph().as_default():
        pair = _read(tf.data.Dataset.from_dask((x, y)).batch(30))
        mixed = _read(tf.data.Dataset.from_dask({"x": x, "extra": frame}).batch(30))
    np.testing.assert_array_equal(pair[0][0], X)
    np.testing.assert_array_equal(pair[0][1], np.arange(30))
    np.testing.assert_array_equal(mixed[0]["x"], X)
    np.testing.assert_array_equal(mixed[0]["extra"]["c"], np.arange(30) * 2)


def test_seeded_shuffle_is_a_new_permutation_each_epoch_and_repeatable():
    x = da.arange(40, chunks=8)

    def two_epochs():
        with tf.Graph().as_default():
            dataset = tf.data.Dataset.from_dask(x, shuffle=True, seed=5).repeat(2)
            return [int(v) for v in _read(dataset)]

    first, again = two_epochs(), two_epochs()
    assert first == again
    assert sorted(first[:40]) == sorted(first[40:]) == list(range(40))
    assert first[:40] != list(range(40)) and first[:40] != first[40:]
    # Rows of one partition are permuted within it, and partitions come in a new order.
    assert [v // 8 for v in first[:8]] == [first[0] // 8] * 8
    assert first[:8] != sorted(first[:8])


def test_a_shuffle_buffer_on_top_mixes_across_partitions():
    x = da.arange(40, chunks=8)
    with tf.Graph().as_default():
        dataset = tf.data.Dataset.from_dask(x).shuffle(20, seed=1).batch(10)
        batches = _read(dataset)
    rows = np.concatenate(batches).tolist()
    assert sorted(rows) == list(range(40))
    assert len({v // 8 for v in batches[0].tolist()}) > 1


def test_per_element_maps_and_repeat_see_every_row():
    with tf.Graph().as_default():
        dataset = tf.data.Dataset.from_dask(da.arange(10, chunks=3))
        rows = _read(dataset.map(lambda v: v * 2).repeat(2))
    assert [int(v) for v in rows] == [2 * i for i in range(10)] * 2


def test_a_collection_larger_than_memory_streams_chunk_by_chunk():
    # 96 chunks of 1 MiB, computed lazily: reading them batch by batch must never hold
    # more than a few chunks at once.
    chunk_rows, width = 1024, 128
    x = da.random.default_rng(0).random((96 * chunk_rows, width), chunks=(chunk_rows, width))
    total = 0
    with tf.Graph().as_default():
        batch = tf.data.Dataset.from_dask(x).batch(512).make_one_shot_iterator().get_next()
        summed = tf.reduce_sum(batch)
        with tf.Session() as sess:
            tracemalloc.start()
            try:
                while True:
                    try:
                        sess.run(summed)
                        total += 1
                    except tf.errors.OutOfRangeError:
                        break
                _, peak = tracemalloc.get_traced_memory()
            finally:
                tracemalloc.stop()
    assert total == 96 * 2
    assert peak < 8 * chunk_rows * width * 8  # under 8 of the 96 chunks


def test_a_collection_persisted_on_a_cluster_is_read_through_its_client():
    with collect_leaked_sockets():
        client = distributed.Client(
            processes=False, n_workers=2, threads_per_worker=1, dashboard_address=None
        )
        try:
            x = client.persist(da.from_array(X, chunks=(7, 2)))
            with tf.Graph().as_default():
                rows = _read(tf.data.Dataset.from_dask(x).batch(30))
        finally:
            client.close()
            client.cluster.close()
    np.testing.assert_array_equal(rows[0], X)


def _index(claimed):
    """The partition of a claim (``(index, rows already delivered)``), or ``None``."""
    return None if claimed is None else claimed[0]


def test_the_share_book_gives_each_partition_once_per_epoch():
    book = ShareBook()
    a = book.begin("c", "a", 6, [0, 1, 2], None)
    b = book.begin("c", "b", 6, [3, 4], None)
    assert a == b == 0
    # Own partitions first, then one nobody holds (5), then another replica's.
    got_a = [_index(book.claim("c", 0, "a")) for _ in range(4)]
    assert got_a == [0, 1, 2, 5]
    assert book.claim("c", 0, "b") == (3, 0)
    assert book.claim("c", 0, "a") == (4, 0)  # b was slower: a helps
    assert book.claim("c", 0, "b") is None
    # a's next pass is a new epoch; b, still in epoch 0, joins it next time.
    assert book.begin("c", "a", 6, [], None) == 1
    assert book.claim("c", 1, "a") == (0, 0)
    assert book.begin("c", "b", 6, [], None) == 1
    claimed = {_index(book.claim("c", 1, r)) for r in "abababab"} - {None}
    assert claimed == {1, 2, 3, 4, 5}
    # A straggler that starts late joins the oldest epoch with work left.
    assert book.begin("c", "c", 6, [], None) == 2
    assert book.begin("c", "a", 6, [], None) == 2


def test_the_share_book_orders_an_epoch_by_its_seed():
    book = ShareBook()
    book.begin("s", "r", 8, [], 3)
    order = [_index(book.claim("s", 0, "r")) for _ in range(8)]
    assert sorted(order) == list(range(8)) and order != list(range(8))
    assert order == np.random.default_rng([3, 0]).permutation(8).tolist()


def test_a_lost_replicas_unfinished_claims_go_back_with_the_rows_it_delivered():
    book = ShareBook()
    live = {"tcp://a", "tcp://b"}
    assert book.begin("l", "a", 4, [0, 1], None, "tcp://a", live) == 0
    assert book.begin("l", "b", 4, [2, 3], None, "tcp://b", live) == 0
    assert book.claim("l", 0, "a", live) == (0, 0)
    assert book.claim("l", 0, "a", live) == (1, 0)  # read ahead
    book.progress("l", 0, "a", {0: (10, 10)})  # partition 0 finished
    book.progress("l", 0, "a", {1: (4, 10)})
    book.progress("l", 0, "a", {1: (3, 10)})  # an older report arriving late
    # a's worker leaves: b gets partition 1 with the 4 rows a delivered, after its own.
    live = {"tcp://b"}
    assert book.claim("l", 0, "b", live) == (2, 0)
    assert book.claim("l", 0, "b", live) == (3, 0)
    assert book.claim("l", 0, "b", live) == (1, 4)
    assert book.claim("l", 0, "b", live) is None


def test_a_recovering_replica_rejoins_its_epoch_and_a_restarted_one_moves_on():
    book = ShareBook()
    live = {"tcp://a", "tcp://b"}
    book.begin("r", "a", 4, [], None, "tcp://a", live)
    book.begin("r", "b", 4, [], None, "tcp://b", live)
    assert book.claim("r", 0, "a", live) == (0, 0)
    book.progress("r", 0, "a", {0: (2, 5)})
    # a's worker came back at a new address: a continues epoch 0, from row 2 of 0.
    live = {"tcp://a2", "tcp://b"}
    assert book.begin("r", "a", 4, [], None, "tcp://a2", live) == 0
    assert book.claim("r", 0, "a", live) == (0, 2)
    # b restarts its iterator on its live worker: a new pass, in a new epoch; what it
    # had claimed in epoch 0 is abandoned (TF1's restart), not handed out again.
    assert book.claim("r", 0, "b", live) == (1, 0)
    assert book.begin("r", "b", 4, [], None, "tcp://b", live) == 1
    assert {_index(book.claim("r", 0, "a", live)) for _ in range(3)} == {2, 3, None}


@pytest.mark.parametrize(
    "bad, error, words",
    [
        (np.arange(3), TypeError, "dask.array.Array"),
        ({"a": da.arange(4, chunks=2), "b": np.arange(4)}, TypeError, "every item"),
        (da.ones((4, 4), chunks=(2, 2)), ValueError, "rechunk"),
        (da.ones((), chunks=()), ValueError, "0-d"),
        ((da.arange(6, chunks=3), da.arange(6, chunks=2)), ValueError, "row partitions"),
        ((da.arange(6, chunks=(2, 4)), da.arange(6, chunks=(4, 2))), ValueError, "row chunks"),
    ],
)
def test_bad_collections_are_refused_when_the_dataset_is_built(bad, error, words):
    with tf.Graph().as_default(), pytest.raises(error, match=words):
        tf.data.Dataset.from_dask(bad)


def test_a_datetime_column_is_refused():
    frame = dd.from_pandas(pd.DataFrame({"t": pd.date_range("2020", periods=4)}), 2)
    with tf.Graph().as_default(), pytest.raises(TypeError, match="column 't'"):
        tf.data.Dataset.from_dask(frame)


def test_misaligned_dataframe_partitions_fail_when_read():
    x = da.arange(10, chunks=5)
    frame = dd.from_pandas(pd.DataFrame({"c": np.arange(10)}), npartitions=2)
    frame = frame.repartition(divisions=[0, 3, 9])
    with tf.Graph().as_default():
        dataset = tf.data.Dataset.from_dask((x, frame))
        with pytest.raises(tf.errors.InvalidArgumentError, match="partitioned alike"):
            _read(dataset)


def test_a_dask_array_can_be_fed():
    x = da.from_array(X, chunks=(7, 2))
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float64, [None, 2])
        total = tf.reduce_sum(p, axis=0)
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(total, {p: x}), X.sum(axis=0))
            with pytest.raises(ValueError, match="Cannot feed value of shape"):
                sess.run(total, {p: da.ones((3, 3), chunks=1)})
            frame = dd.from_pandas(pd.DataFrame({"c": [1.0, 2.0]}), npartitions=1)
            with pytest.raises(TypeError, match="from_dask"):
                sess.run(total, {p: frame})


@pytest.mark.parametrize("bad", [1, None, 2.5])
def test_an_object_array_read_as_strings_refuses_what_is_not_a_string(bad):
    # Issue 29: the iterator handed out 1, None and 2.5 as tf.string elements.
    x = da.from_array(np.array(["a", b"b", bad], dtype=object), chunks=3)
    with tf.Graph().as_default():
        nxt = tf.data.Dataset.from_dask(x).make_one_shot_iterator().get_next()
        assert nxt.dtype == tf.string
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="element 2 .*is "):
                sess.run(nxt)


def test_an_object_array_of_str_and_bytes_reads_as_bytes():
    x = da.from_array(np.array(["a", b"b", "\u00e9"], dtype=object), chunks=2)
    assert _read(tf.data.Dataset.from_dask(x)) == [b"a", b"b", "\u00e9".encode()]
