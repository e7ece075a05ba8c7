"""``tf.data.FixedLengthRecordDataset`` against ``tensorflow.compat.v1``: records read
from files with headers and footers (CIFAR-10's binary layout), several files,
compressed files, decoding with ``decode_raw``, and the errors for a body that is not a
whole number of records and for bad sizes."""

from __future__ import annotations

import gzip
import zlib

import numpy as np
import pytest

import dataflow as tf

pytestmark = pytest.mark.tf
tf1 = pytest.importorskip("tensorflow").compat.v1
tf1.disable_eager_execution()

RNG = np.random.default_rng(11)


def _write(path, records, header=b"", footer=b"", compression=""):
    data = header + b"".join(records) + footer
    if compression == "GZIP":
        data = gzip.compress(data)
    elif compression == "ZLIB":
        data = zlib.compress(data)
    path.write_bytes(data)
    return str(path)


def _read_all(lib, files, **kwargs):
    graph = lib.Graph()
    with graph.as_default():
        ds = lib.data.FixedLengthRecordDataset(files, **kwargs)
        item = lib.data.make_one_shot_iterator(ds).get_next()
        out = []
        with lib.Session(graph=graph) as sess:
            while True:
                try:
                    out.append(sess.run(item))
                except lib.errors.OutOfRangeError:
                    return out, item.shape.as_list(), item.dtype.name


def _cifar_like(tmp_path, n, compression=""):
    # CIFAR-10's binary rows: 1 label byte and 3*32*32 pixel bytes (here 3*4*4).
    rows = [bytes([i % 10]) + RNG.integers(0, 256, 48, dtype=np.uint8).tobytes() for i in range(n)]
    return rows, _write(
        tmp_path / f"batch{n}{compression}.bin", rows, b"HDR", b"FOOTER!", compression
    )


@pytest.mark.parametrize("compression", ["", "GZIP", "ZLIB"])
def test_records_match_tf1(tmp_path, compression) -> None:
    rows_a, a = _cifar_like(tmp_path, 5, compression)
    rows_b, b = _cifar_like(tmp_path, 3, compression)
    kwargs = dict(record_bytes=49, header_bytes=3, footer_bytes=7, compression_type=compression)
    ours = _read_all(tf, [a, b], **kwargs)
    theirs = _read_all(tf1, [a, b], **kwargs)
    assert ours == theirs
    assert ours[0] == rows_a + rows_b and ours[1] == [] and ours[2] == "string"


def test_large_files_cross_read_chunks(tmp_path) -> None:
    # Records and a footer straddling the reader's chunk boundaries.
    rows = [RNG.integers(0, 256, 777, dtype=np.uint8).tobytes() for _ in range(3000)]
    path = _write(tmp_path / "big.bin", rows, b"H" * 5, b"F" * 11)
    ours, _, _ = _read_all(tf, path, record_bytes=777, header_bytes=5, footer_bytes=11)
    assert ours == rows


def test_decoding_a_cifar_record_as_tf1_programs_do(tmp_path) -> None:
    rows, path = _cifar_like(tmp_path, 4)

    def program(lib):
        with lib.Graph().as_default():
            ds = lib.data.FixedLengthRecordDataset([path], 49, header_bytes=3, footer_bytes=7)

            def parse(record):
                raw = lib.decode_raw(record, lib.uint8)
                label = lib.cast(lib.strided_slice(raw, [0], [1]), lib.int32)
                image = lib.reshape(lib.strided_slice(raw, [1], [49]), [3, 4, 4])
                return lib.transpose(image, [1, 2, 0]), label

            image, label = lib.data.make_one_shot_iterator(ds.map(parse).batch(4)).get_next()
            with lib.Session() as sess:
                return sess.run([image, label])

    ours, theirs = program(tf), program(tf1)
    np.testing.assert_array_equal(ours[0], theirs[0])
    np.testing.assert_array_equal(ours[1], theirs[1])


@pytest.mark.parametrize("compression", ["", "GZIP"])
def test_a_body_that_is_not_whole_records_is_refused_as_tf1(tmp_path, compression) -> None:
    # Known from the file's size: InvalidArgumentError; found at a compressed file's end:
    # DataLossError.
    path = _write(tmp_path / "bad.bin", [b"abcd", b"ef"], b"H", b"", compression)
    kind = "DataLossError" if compression else "InvalidArgumentError"
    for lib in (tf, tf1):
        with pytest.raises(getattr(lib.errors, kind), match="body length 6 bytes, which is not"):
            _read_all(lib, path, record_bytes=4, header_bytes=1, compression_type=compression)


def test_bad_sizes_and_files(tmp_path) -> None:
    path = _write(tmp_path / "ok.bin", [b"abcd"])
    with pytest.raises(tf.errors.InvalidArgumentError, match="record_bytes"):
        _read_all(tf, path, record_bytes=0)
    with pytest.raises(tf.errors.NotFoundError):
        _read_all(tf, str(tmp_path / "absent.bin"), record_bytes=4)
    with tf.Graph().as_default(), pytest.raises(ValueError, match="record_bytes must be a scalar"):
        tf.data.FixedLengthRecordDataset(path, [4, 4])
    with tf.Graph().as_default(), pytest.raises(ValueError, match="compression_type"):
        tf.data.FixedLengthRecordDataset(path, 4, compression_type="LZ4")
