"""TFRecord files against ``tensorflow.compat.v1``: files TF writes read here
(``tf_record_iterator``, ``TFRecordDataset``) and files written here read by TF, with
each compression; byte-identical uncompressed files; ``DataLossError`` on damage."""

from __future__ import annotations

import os
import pathlib

import numpy as np
import pytest

import dataflow as tf

RECORDS = [b"", b"a", b"\x00" * 3, bytes(range(256)) * 40, b"last"]
KINDS = ["NONE", "ZLIB", "GZIP"]


def _tf_options(tf1, kind):
    return tf1.python_io.TFRecordOptions(getattr(tf1.python_io.TFRecordCompressionType, kind))


def _read_with_dataset(lib, path, kind):
    with lib.Graph().as_default():
        compression = "" if kind == "NONE" else kind
        dataset = lib.data.TFRecordDataset(path, compression_type=compression)
        item = dataset.make_one_shot_iterator().get_next()
        out = []
        with lib.Session() as sess:
            while True:
                try:
                    out.append(sess.run(item))
                except lib.errors.OutOfRangeError:
                    return out


@pytest.mark.tf
@pytest.mark.parametrize("kind", KINDS)
def test_files_tf_writes_read_here(tmp_path, kind):
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    path = str(tmp_path / f"theirs-{kind}.tfrecord")
    with tf1.python_io.TFRecordWriter(path, _tf_options(tf1, kind)) as writer:
        for record in RECORDS:
            writer.write(record)
    options = tf.python_io.TFRecordOptions(getattr(tf.python_io.TFRecordCompressionType, kind))
    assert list(tf.python_io.tf_record_iterator(path, options)) == RECORDS
    assert list(tf.io.tf_record_iterator(path, "" if kind == "NONE" else kind)) == RECORDS
    assert _read_with_dataset(tf, path, kind) == RECORDS


@pytest.mark.tf
@pytest.mark.parametrize("kind", KINDS)
def test_files_written_here_read_by_tf(tmp_path, kind):
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    path = str(tmp_path / f"ours-{kind}.tfrecord")
    options = tf.io.TFRecordOptions(None if kind == "NONE" else kind)
    with tf.io.TFRecordWriter(path, options) as writer:
        for record in RECORDS[:2]:
            writer.write(record)
        writer.flush()
        for record in RECORDS[2:]:
            writer.write(record)
    assert list(tf1.python_io.tf_record_iterator(path, _tf_options(tf1, kind))) == RECORDS
    assert _read_with_dataset(tf1, path, kind) == RECORDS
    if kind == "NONE":
        theirs = str(tmp_path / "theirs.tfrecord")
        with tf1.python_io.TFRecordWriter(theirs) as writer:
            for record in RECORDS:
                writer.write(record)
        assert pathlib.Path(path).read_bytes() == pathlib.Path(theirs).read_bytes()


@pytest.mark.tf
def test_examples_written_here_parse_in_tf(tmp_path):
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    path = str(tmp_path / "examples.tfrecord")
    with tf.python_io.TFRecordWriter(path) as writer:
        for i in range(5):
            example = tf.train.Example()
            example.features.feature["i"].int64_list.value.append(i)
            example.features.feature["v"].float_list.value.extend([i / 2, -i])
            writer.write(example.SerializeToString())
    with tf1.Graph().as_default():
        dataset = tf1.data.TFRecordDataset(path).map(
            lambda s: tf1.parse_single_example(
                s, {"i": tf1.FixedLenFeature([], tf1.int64), "v": tf1.VarLenFeature(tf1.float32)}
            )
        )
        item = dataset.batch(5).make_one_shot_iterator().get_next()
        with tf1.Session() as sess:
            got = sess.run(item)
    assert got["i"].tolist() == list(range(5))
    assert got["v"].values.tolist() == [v for i in range(5) for v in (i / 2, -i)]


def test_corrupted_file_is_data_loss(tmp_path):
    path = str(tmp_path / "a.tfrecord")
    with tf.python_io.TFRecordWriter(path) as writer:
        writer.write(b"first record")
        writer.write(b"second record")
    data = bytearray(pathlib.Path(path).read_bytes())
    data[-6] ^= 0xFF  # a byte of the second record's data
    pathlib.Path(path).write_bytes(bytes(data))
    records = tf.python_io.tf_record_iterator(path)
    assert next(records) == b"first record"
    with pytest.raises(tf.errors.DataLossError, match="corrupted record at 28"):
        next(records)
    with tf.Graph().as_default():
        item = tf.data.TFRecordDataset(path).make_one_shot_iterator().get_next()
        with tf.Session() as sess:
            assert sess.run(item) == b"first record"
            with pytest.raises(tf.errors.DataLossError):
                sess.run(item)


def test_truncated_file_is_data_loss(tmp_path):
    path = str(tmp_path / "a.tfrecord")
    with tf.python_io.TFRecordWriter(path) as writer:
        writer.write(b"x" * 100)
    data = pathlib.Path(path).read_bytes()
    for cut in (5, 30):
        pathlib.Path(path).write_bytes(data[:cut])
        with pytest.raises(tf.errors.DataLossError, match="truncated record at 0"):
            list(tf.python_io.tf_record_iterator(path))


def test_missing_file_and_closed_writer(tmp_path):
    with pytest.raises(tf.errors.NotFoundError):
        tf.python_io.tf_record_iterator(str(tmp_path / "nope"))
    writer = tf.python_io.TFRecordWriter(str(tmp_path / "w"))
    writer.close()
    writer.close()
    with pytest.raises(tf.errors.FailedPreconditionError):
        writer.write(b"x")


def test_options_and_compression_names():
    options = tf.python_io.TFRecordOptions
    kinds = tf.python_io.TFRecordCompressionType
    assert options.get_compression_type_string(None) == ""
    assert options.get_compression_type_string(kinds.GZIP) == "GZIP"
    assert options.get_compression_type_string(options(kinds.ZLIB)) == "ZLIB"
    assert options.get_compression_type_string("gzip") == "GZIP"
    with pytest.raises(ValueError):
        options("LZ4")


def test_many_records_across_buffer_refills(tmp_path):
    path = str(tmp_path / "big.tfrecord.gz")
    rng = np.random.default_rng(0)
    records = [rng.bytes(int(n)) for n in rng.integers(0, 300_000, 12)]
    with tf.python_io.TFRecordWriter(path, "GZIP") as writer:
        for record in records:
            writer.write(record)
    assert list(tf.python_io.tf_record_iterator(path, "GZIP")) == records
    assert os.path.getsize(path) > 0


@pytest.mark.parametrize("length", [1 << 33, 1 << 62, (1 << 64) - 1])
def test_a_huge_announced_length_is_data_loss_not_an_allocation(tmp_path, length):
    # Issue 29: a checksummed header announcing 2**62 bytes raised MemoryError or
    # OverflowError (a read of that size); reads are bounded, so the record is cut short.
    import struct

    from dataflow.ops.io.tf_record import masked_crc32c

    header = struct.pack("<Q", length)
    path = tmp_path / "huge.tfrecord"
    path.write_bytes(header + struct.pack("<I", masked_crc32c(header)) + b"tiny")
    with pytest.raises(tf.errors.DataLossError, match="truncated record at 0"):
        list(tf.python_io.tf_record_iterator(str(path)))
