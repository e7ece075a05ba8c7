"""``Dataset.shard``, ``Dataset.enumerate`` and ``tf.data.Options`` against
``tensorflow.compat.v1``: the elements each worker's shard reads, enumerate's pairs and
their dtypes, and the options a pipeline carries and merges."""

from __future__ import annotations

import pytest

import dataflow as tf

pytestmark = pytest.mark.tf
tf1 = pytest.importorskip("tensorflow").compat.v1
tf1.disable_eager_execution()


def _elements(lib, make):
    graph = lib.Graph()
    with graph.as_default():
        item = lib.data.make_one_shot_iterator(make(lib)).get_next()
        out = []
        with lib.Session(graph=graph) as sess:
            while True:
                try:
                    out.append(sess.run(item))
                except lib.errors.OutOfRangeError:
                    return out


def _same(make):
    ours, theirs = _elements(tf, make), _elements(tf1, make)
    assert repr(ours) == repr(theirs)
    return ours


@pytest.mark.parametrize(("num_shards", "index"), [(1, 0), (3, 0), (3, 2), (4, 1), (20, 7)])
def test_shard_reads_every_nth_element_from_index(num_shards, index) -> None:
    got = _same(lambda lib: lib.data.Dataset.range(10).shard(num_shards, index))
    assert got == list(range(10))[index::num_shards]


def test_shards_of_a_file_dataset_split_it_between_workers(tmp_path) -> None:
    path = tmp_path / "lines.txt"
    path.write_text("".join(f"line {i}\n" for i in range(7)))
    parts = [
        _same(lambda lib, k=k: lib.data.TextLineDataset(str(path)).shard(2, k).batch(2))
        for k in range(2)
    ]
    lines = [line for part in parts for batch in part for line in batch]
    assert all(type(line) is bytes for line in lines)  # a batch of strings holds bytes
    assert sorted(lines) == [f"line {i}".encode() for i in range(7)]


@pytest.mark.parametrize(("num_shards", "index"), [(0, 0), (3, 3), (2, -1)])
def test_bad_shards_are_invalid_argument_as_in_tf1(num_shards, index) -> None:
    for lib in (tf, tf1):
        with pytest.raises(lib.errors.InvalidArgumentError):
            _elements(lib, lambda lib: lib.data.Dataset.range(4).shard(num_shards, index))


def test_enumerate_pairs_a_counter_with_each_element() -> None:
    got = _same(lambda lib: lib.data.Dataset.from_tensor_slices(["a", "b", "c"]).enumerate(start=5))
    assert [(int(i), s) for i, s in got] == [(5, b"a"), (6, b"b"), (7, b"c")]
    with tf.Graph().as_default():
        ds = tf.data.Dataset.range(3).enumerate()
        assert tf.data.get_output_types(ds) == (tf.int64, tf.int64)


def test_options_are_typed_merged_and_carried_downstream() -> None:
    options = tf.data.Options()
    assert options.experimental_deterministic is None
    options.experimental_deterministic = False
    options.experimental_threading.private_threadpool_size = 4
    with pytest.raises(TypeError):
        options.experimental_deterministic = "no"
    with pytest.raises(TypeError):
        options.experimental_threading.max_intra_op_parallelism = True
    with pytest.raises(AttributeError):
        options.no_such_option = 1
    with tf.Graph().as_default():
        ds = tf.data.Dataset.range(5).with_options(options).map(lambda x: x * 2).batch(2)
        assert ds.options() == options
        more = tf.data.Options()
        more.experimental_threading.max_intra_op_parallelism = 1
        merged = ds.with_options(more).options()
        assert merged.experimental_deterministic is False
        assert merged.experimental_threading.private_threadpool_size == 4
        assert merged.experimental_threading.max_intra_op_parallelism == 1
        assert ds.options() == options  # with_options makes a new dataset
        assert tf.data.Dataset.range(1).options() == tf.data.Options()
        with pytest.raises(TypeError):
            ds.with_options({"experimental_deterministic": False})
    # The elements are the same with the options set: dataflow keeps the order.
    assert _elements(tf, lambda lib: lib.data.Dataset.range(5).with_options(options)) == list(
        range(5)
    )


def test_tf1_options_agree_on_the_same_settings() -> None:
    for lib in (tf, tf1):
        a, b = lib.data.Options(), lib.data.Options()
        a.experimental_deterministic = True
        b.experimental_threading.private_threadpool_size = 2
        merged = a.merge(b)
        assert merged.experimental_deterministic is True
        assert merged.experimental_threading.private_threadpool_size == 2
        assert isinstance(merged.experimental_threading, lib.data.ThreadingOptions)
