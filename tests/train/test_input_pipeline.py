"""Queue-based input pipelines against ``tensorflow.compat.v1`` on the same files.

Each test builds one pipeline the way TF1 tutorials write it (a filename queue, a
reader, batching, a loop under a ``Coordinator`` with ``start_queue_runners`` until
``OutOfRangeError``) once with ``dataflow`` and once with TF1, and compares what comes
out: exact order and keys where TF's order is deterministic (no shuffling, one
thread), the multiset of records otherwise, reader counters, batch shapes.
"""

from __future__ import annotations

import collections
import gzip
from typing import Any

import numpy as np
import pytest

import dataflow

pytestmark = pytest.mark.tf


@pytest.fixture(scope="module")
def tf1():
    tf = pytest.importorskip("tensorflow")
    tf.compat.v1.disable_eager_execution()
    return tf.compat.v1


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value


def _loop(tf: Any, build: Any) -> tuple[list, Any]:
    """Runs ``build(tf) -> (fetches, after)`` in a new graph: the training loop until
    ``OutOfRangeError``; returns every step's values and ``after`` fetched at the end."""
    graph = tf.Graph()
    with graph.as_default():
        fetches, after = build(tf)
        init = tf.group(tf.global_variables_initializer(), tf.local_variables_initializer())
        with tf.Session(graph=graph) as sess:
            sess.run(init)
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess=sess, coord=coord)
            steps = []
            try:
                while not coord.should_stop():
                    steps.append(_plain(sess.run(fetches)))
            except tf.errors.OutOfRangeError:
                pass
            finally:
                coord.request_stop()
            coord.join(threads)
            last = _plain(sess.run(after)) if after is not None else None
    return steps, last


def _both(tf1: Any, build: Any) -> tuple:
    return _loop(dataflow, build), _loop(tf1, build)


@pytest.fixture
def text_files(tmp_path):
    paths = []
    for i, body in enumerate(["h\na0\na1\r\na2\n", "h\n", "h\nc0\n\nc2", "h\nd0\nd1\n"]):
        path = tmp_path / f"part-{i}.csv"
        path.write_bytes(body.encode())
        paths.append(str(path))
    return paths


def test_text_lines_in_order_with_keys_and_counters(tf1, text_files):
    def build(tf):
        queue = tf.train.string_input_producer(text_files, num_epochs=2, shuffle=False)
        reader = tf.TextLineReader(skip_header_lines=1)
        key, value = reader.read(queue)
        return [key, value], [reader.num_records_produced(), reader.num_work_units_completed()]

    (ours, our_counts), (theirs, their_counts) = _both(tf1, build)
    assert ours == theirs
    assert [v for _, v in ours[:3]] == [b"a0", b"a1", b"a2"]
    assert ours[0][0].endswith(b"part-0.csv:2")
    assert our_counts == their_counts


def test_read_up_to_and_batches_of_lines(tf1, text_files):
    def build(tf):
        queue = tf.train.string_input_producer(text_files, num_epochs=1, shuffle=False)
        keys, values = tf.TextLineReader(skip_header_lines=1).read_up_to(queue, 2)
        return [keys, values], None

    (ours, _), (theirs, _) = _both(tf1, build)
    assert ours == theirs


@pytest.mark.parametrize("smaller", [True, False])
def test_batch_final_batch_and_epochs(tf1, text_files, smaller):
    def build(tf):
        queue = tf.train.string_input_producer(text_files, num_epochs=3, shuffle=False)
        key, value = tf.TextLineReader(skip_header_lines=1).read(queue)
        batch = tf.train.batch(
            {"k": key, "v": value}, batch_size=5, allow_smaller_final_batch=smaller
        )
        return batch, None

    (ours, _), (theirs, _) = _both(tf1, build)
    assert ours == theirs
    assert [len(b["v"]) for b in ours] == ([5] * 4 + [4] if smaller else [5] * 4)


def _write_records(tf1, path, records, compression=None):
    options = tf1.python_io.TFRecordOptions(compression) if compression else None
    with tf1.python_io.TFRecordWriter(str(path), options) as writer:
        for r in records:
            writer.write(r)


@pytest.mark.parametrize("compression", [None, "GZIP", "ZLIB"])
def test_tfrecords_tf_wrote_with_offsets_as_keys(tf1, tmp_path, compression):
    files = []
    for i in range(3):
        files.append(str(tmp_path / f"r{i}.tfrecord"))
        _write_records(tf1, files[-1], [b"x" * (j + i) for j in range(4)], compression)

    def build(tf):
        queue = tf.train.string_input_producer(files, num_epochs=1, shuffle=False)
        options = tf.python_io.TFRecordOptions(compression) if compression else None
        reader = tf.TFRecordReader(options=options)
        return list(reader.read(queue)), reader.num_records_produced()

    (ours, our_count), (theirs, their_count) = _both(tf1, build)
    assert ours == theirs
    assert our_count == their_count == 12


@pytest.mark.parametrize(
    ("size", "record", "header", "footer", "hop"),
    [(20, 4, 0, 0, 0), (23, 4, 2, 3, 0), (24, 5, 1, 2, 3), (9, 4, 0, 0, 0), (3, 4, 0, 0, 0)],
)
def test_fixed_length_records(tf1, tmp_path, size, record, header, footer, hop):
    files = []
    for i in range(2):
        files.append(str(tmp_path / f"f{i}.bin"))
        with open(files[-1], "wb") as f:
            f.write(bytes((i * 50 + j) % 256 for j in range(size + i)))

    def build(tf):
        queue = tf.train.string_input_producer(files, num_epochs=1, shuffle=False)
        reader = tf.FixedLengthRecordReader(
            record, header_bytes=header, footer_bytes=footer, hop_bytes=hop
        )
        return list(reader.read(queue)), reader.num_work_units_completed()

    (ours, our_units), (theirs, their_units) = _both(tf1, build)
    assert ours == theirs
    assert our_units == their_units


def test_fixed_length_records_gzip(tf1, tmp_path):
    path = tmp_path / "f.bin.gz"
    with gzip.open(path, "wb") as f:
        f.write(bytes(range(40)))

    def build(tf):
        queue = tf.train.string_input_producer([str(path)], num_epochs=1, shuffle=False)
        reader = tf.FixedLengthRecordReader(8, header_bytes=4, encoding="GZIP")
        return list(reader.read(queue)), None

    (ours, _), (theirs, _) = _both(tf1, build)
    assert ours == theirs and len(ours) == 4


def test_whole_files_and_identity(tf1, text_files):
    def build(tf):
        queue = tf.train.string_input_producer(text_files, num_epochs=1, shuffle=False)
        names = tf.train.string_input_producer(["a", "b"], num_epochs=2, shuffle=False)
        whole = tf.WholeFileReader().read(queue)
        ident = tf.IdentityReader()
        return list(whole) + list(ident.read(names)), ident.num_records_produced()

    (ours, our_count), (theirs, their_count) = _both(tf1, build)
    assert ours == theirs and len(ours) == 4
    assert our_count == their_count == 4


def test_shuffled_filenames_are_a_permutation_per_epoch(text_files):
    graph = dataflow.Graph()
    with graph.as_default():
        queue = dataflow.train.string_input_producer(text_files, num_epochs=3, seed=7)
        name = queue.dequeue()
        with dataflow.Session(graph=graph) as sess:
            sess.run(dataflow.local_variables_initializer())
            coord = dataflow.train.Coordinator()
            threads = dataflow.train.start_queue_runners(sess, coord)
            got = []
            with pytest.raises(dataflow.errors.OutOfRangeError):
                while True:
                    got.append(sess.run(name).decode())
            coord.request_stop()
            coord.join(threads)
    epochs = [got[i : i + 4] for i in range(0, 12, 4)]
    assert len(got) == 12 and all(sorted(e) == sorted(text_files) for e in epochs)
    assert len({tuple(e) for e in epochs}) > 1  # shuffled differently each epoch


def test_shuffle_batch_with_threads_yields_each_record_once_per_epoch(tf1, tmp_path):
    files = []
    for i in range(4):
        files.append(str(tmp_path / f"s{i}.tfrecord"))
        _write_records(tf1, files[-1], [b"%d-%d" % (i, j) for j in range(25)])

    def build(tf):
        queue = tf.train.string_input_producer(files, num_epochs=2, seed=3)
        _, value = tf.TFRecordReader().read(queue)
        batch = tf.train.shuffle_batch(
            [value],
            batch_size=16,
            capacity=60,
            min_after_dequeue=20,
            num_threads=3,
            seed=5,
            allow_smaller_final_batch=True,
        )
        return batch, None

    (ours, _), (theirs, _) = _both(tf1, build)
    count = collections.Counter(v for b in ours for v in b)
    assert count == collections.Counter(v for b in theirs for v in b)
    assert set(count.values()) == {2} and len(count) == 100
    assert [len(b) for b in ours] == [len(b) for b in theirs] == [16] * 12 + [8]


def test_shuffle_batch_join_one_reader_per_thread(tf1, tmp_path):
    files = []
    for i in range(3):
        files.append(str(tmp_path / f"j{i}.tfrecord"))
        _write_records(tf1, files[-1], [b"%d-%d" % (i, j) for j in range(10)])

    def build(tf):
        queue = tf.train.string_input_producer(files, num_epochs=1, shuffle=False)
        pairs = [list(tf.TFRecordReader().read(queue)) for _ in range(3)]
        batch = tf.train.shuffle_batch_join(
            pairs, batch_size=5, capacity=20, min_after_dequeue=5, seed=1
        )
        return batch, None

    (ours, _), (theirs, _) = _both(tf1, build)
    ours_values = sorted(v for _, values in ours for v in values)
    assert ours_values == sorted(v for _, values in theirs for v in values)
    assert len(ours_values) == 30
    for keys, values in ours:  # keys and values stay paired
        for k, v in zip(keys, values):
            assert k.split(b".tfrecord:")[0].endswith(v.split(b"-")[0])


def test_batch_join_and_enqueue_many(tf1):
    def build(tf):
        a = tf.train.limit_epochs(tf.constant([[1, 2], [3, 4], [5, 6]]), num_epochs=2)
        b = tf.train.limit_epochs(tf.constant([[7, 8], [9, 10], [11, 12]]), num_epochs=1)
        return tf.train.batch_join(
            [[a], [b]], 4, enqueue_many=True, allow_smaller_final_batch=True
        ), None

    (ours, _), (theirs, _) = _both(tf1, build)
    rows = sorted(tuple(r) for b in ours for r in b)
    assert rows == sorted(tuple(r) for b in theirs for r in b)
    assert len(rows) == 9


def test_dynamic_pad_shapes(tf1):
    def build(tf):
        n = tf.train.range_input_producer(5, num_epochs=1, shuffle=False).dequeue()
        seq = tf.range(n + 1)
        return tf.train.batch([seq, n], 2, dynamic_pad=True, allow_smaller_final_batch=True), None

    (ours, _), (theirs, _) = _both(tf1, build)
    assert ours == theirs
    assert [np.shape(s) for s, _ in ours] == [(2, 2), (2, 4), (1, 5)]


def test_maybe_batch_keeps_what_keep_input_selects(tf1):
    def build(tf):
        rows = tf.train.limit_epochs(tf.range(10), num_epochs=1)
        keep = tf.equal(rows % 3, 0)
        single = tf.train.range_input_producer(6, num_epochs=1, shuffle=False).dequeue()
        return [
            tf.train.maybe_batch([rows], keep, 2, enqueue_many=True),
            tf.train.maybe_batch([single], single > 2, 3),
        ], None

    (ours, _), (theirs, _) = _both(tf1, build)
    assert ours == theirs == [[[0, 3], [3, 4, 5]]]


def test_slice_and_range_producers_in_order(tf1):
    def build(tf):
        x, y = tf.train.slice_input_producer(
            [tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), tf.constant([10, 20, 30])],
            num_epochs=2,
            shuffle=False,
        )
        return [x, y], None

    (ours, _), (theirs, _) = _both(tf1, build)
    assert ours == theirs and len(ours) == 6


def test_slice_input_producer_shuffles_each_epoch():
    def build(tf):
        (x,) = tf.train.slice_input_producer([tf.range(8)], num_epochs=3, seed=2)
        return x, None

    ours, _ = _loop(dataflow, build)
    epochs = [sorted(ours[i : i + 8]) for i in range(0, 24, 8)]
    assert len(ours) == 24 and all(e == list(range(8)) for e in epochs)


def test_match_filenames_once(tf1, text_files, tmp_path):
    def build(tf):
        files = tf.train.match_filenames_once(str(tmp_path / "part-*.csv"))
        return None, files

    graph = dataflow.Graph()
    with graph.as_default():
        _, files = build(dataflow)
        assert files in dataflow.local_variables()
        with dataflow.Session(graph=graph) as sess:
            sess.run(dataflow.local_variables_initializer())
            ours = sess.run(files)
    with tf1.Graph().as_default():
        _, files = build(tf1)
        with tf1.Session() as sess:
            sess.run(tf1.local_variables_initializer())
            theirs = sess.run(files)
    assert ours.tolist() == theirs.tolist() == [p.encode() for p in text_files]


def test_limit_epochs_and_count_up_to():
    with dataflow.Graph().as_default():
        x = dataflow.train.limit_epochs(dataflow.constant(5), num_epochs=2)
        with dataflow.Session() as sess:
            sess.run(dataflow.local_variables_initializer())
            assert [sess.run(x), sess.run(x)] == [5, 5]
            with pytest.raises(dataflow.errors.OutOfRangeError):
                sess.run(x)
        with pytest.raises(ValueError, match="num_epochs"):
            dataflow.train.limit_epochs(x, 0)
    with pytest.raises(ValueError, match="non-null"):
        dataflow.train.string_input_producer([])
    with pytest.raises(ValueError, match="min_after_dequeue"):
        dataflow.train.shuffle_batch([dataflow.constant(1)], 2, 10, 10)


def test_a_training_loop_in_monitored_training_session(tmp_path):
    """The TF1 tutorial shape: producer -> shuffle_batch -> SGD, under
    MonitoredTrainingSession, until the epochs run out."""
    rng = np.random.default_rng(0)
    x_all = rng.standard_normal((64, 3)).astype(np.float32)
    y_all = x_all @ np.array([[1.0], [-2.0], [0.5]], np.float32)
    with dataflow.Graph().as_default():
        x, y = dataflow.train.slice_input_producer([x_all, y_all], num_epochs=20, seed=1)
        xb, yb = dataflow.train.shuffle_batch([x, y], 16, capacity=64, min_after_dequeue=16)
        w = dataflow.Variable(np.zeros((3, 1), np.float32))
        loss = dataflow.reduce_mean(dataflow.square(dataflow.matmul(xb, w) - yb))
        step = dataflow.train.get_or_create_global_step()
        train = dataflow.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
        with dataflow.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path)) as sess:
            while not sess.should_stop():
                _, last, n = sess.run([train, loss, step])
    assert n in (79, 80)  # 80 batches; the step read before or after the last update
    assert last < 1e-4


def test_copies_of_one_enqueue_op_share_a_thread_in_process():
    """``num_threads=4`` lists one enqueue op four times; in the embedded session the
    copies run in one thread (Python steps: contending threads were 3x slower), and the
    output is the same: every row once, then OutOfRangeError."""
    with dataflow.Graph().as_default():
        rows = dataflow.train.limit_epochs(dataflow.range(40), num_epochs=1)
        batch = dataflow.train.batch([rows], 8, num_threads=4, enqueue_many=True)
        (runner,) = dataflow.get_collection(dataflow.GraphKeys.QUEUE_RUNNERS)
        assert len(runner.enqueue_ops) == 4
        with dataflow.Session() as sess:
            sess.run(dataflow.local_variables_initializer())
            coord = dataflow.train.Coordinator()
            threads = dataflow.train.start_queue_runners(sess, coord)
            assert len(threads) == 2  # one for the four copies, one closing on a stop
            got = []
            with pytest.raises(dataflow.errors.OutOfRangeError):
                while True:
                    got += sess.run(batch).tolist()
            coord.request_stop()
            coord.join(threads)
    assert got == list(range(40))
