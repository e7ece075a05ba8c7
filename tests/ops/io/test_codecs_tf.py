"""``tf.io``'s byte codecs and ``tf.audio``'s WAV codec against
``tensorflow.compat.v1``: base64 both ways (padded or not, binary bytes), ZLIB/GZIP
decompression, tensors serialized by one library and parsed by the other, WAV files
written by one and read by the other (samples, rates, channel and length requests),
files written with ``write_file`` and found with ``matching_files``; error classes of
bad input."""

from __future__ import annotations

import gzip
import zlib

import numpy as np
import pytest

import dataflow

pytestmark = pytest.mark.tf

RNG = np.random.default_rng(3208)
BLOBS = np.array(
    [b"", b"a", b"ab", b"abc", bytes(range(256)), b"\xff\xfe?>" * 7], dtype=object
).reshape(2, 3)
AUDIO = np.clip(RNG.standard_normal((50, 2)) * 0.4, -1.2, 1.2).astype(np.float32)
AUDIO[:4, 0] = [0.5 / 32768, -1.5 / 32768, 1.0, -1.0]  # halves, both ends


def _tf1():
    return pytest.importorskip("tensorflow.compat.v1")


def _run(tf, build):
    with tf.Graph().as_default():
        outs = build(tf)
        with tf.Session() as sess:
            return sess.run(outs)


def _base64(tf):
    x = tf.constant(BLOBS)
    return [
        tf.io.encode_base64(x),
        tf.io.encode_base64(x, pad=True),
        tf.io.decode_base64(tf.io.encode_base64(x)),
        tf.decode_base64(tf.encode_base64(x, pad=True)),
        tf.io.decode_compressed(
            tf.constant([zlib.compress(b"hello" * 9), zlib.compress(b"")]), "ZLIB"
        ),
        tf.io.decode_compressed(tf.constant(gzip.compress(b"xyz" * 30)), "GZIP"),
        tf.io.decode_compressed(x),
    ]


def test_base64_and_decompression_match_tf():
    for a, b in zip(_run(dataflow, _base64), _run(_tf1(), _base64), strict=True):
        assert np.shape(a) == np.shape(b)
        assert np.asarray(a).tolist() == np.asarray(b).tolist()


TENSORS = [
    np.arange(12, dtype=np.float32).reshape(3, 4) / 7,
    np.array([[1, -2], [3, 4]], np.int64),
    np.array(7, np.int32),
    np.array([True, False]),
    np.array([b"ab", b"", b"\x00z"], dtype=object),
    np.zeros((2, 0), np.float64),
]


def _serialize(tf):
    return [tf.io.serialize_tensor(tf.constant(t)) for t in TENSORS]


def _parse(serialized):
    def build(tf):
        kinds = [tf.float32, tf.int64, tf.int32, tf.bool, tf.string, tf.float64]
        return [tf.io.parse_tensor(s, k) for s, k in zip(serialized, kinds, strict=True)]

    return build


def test_serialized_tensors_parse_both_ways():
    tf1 = _tf1()
    ours, theirs = _run(dataflow, _serialize), _run(tf1, _serialize)
    for serialized in (ours, theirs):
        for lib in (dataflow, tf1):
            for got, want in zip(_run(lib, _parse(serialized)), TENSORS, strict=True):
                assert np.shape(got) == want.shape
                assert np.asarray(got).tolist() == want.tolist()


def test_parse_tensor_errors_match_tf():
    tf1 = _tf1()
    for tf in (dataflow, tf1):
        with tf.Graph().as_default():
            wrong = tf.io.parse_tensor(tf.io.serialize_tensor(tf.constant([1.0])), tf.int32)
            junk = tf.io.parse_tensor(tf.constant(b"\xff\xff\xff"), tf.int32)
            bad64 = tf.io.decode_base64(tf.constant("a*b"))
            with tf.Session() as sess:
                for fetch in (wrong, junk, bad64):
                    with pytest.raises(tf.errors.InvalidArgumentError):
                        sess.run(fetch)


def _encode_wav(tf):
    return [
        tf.audio.encode_wav(tf.constant(AUDIO), 16000),
        tf.audio.encode_wav(tf.constant(AUDIO[:, :1]), tf.constant(8000)),
    ]


def _decode_wav(files):
    def build(tf):
        stereo, mono = files
        return [
            *tf.audio.decode_wav(stereo),
            *tf.audio.decode_wav(mono),
            tf.audio.decode_wav(stereo, desired_channels=1)[0],
            tf.audio.decode_wav(mono, desired_channels=3)[0],
            tf.audio.decode_wav(stereo, desired_samples=20)[0],
            tf.audio.decode_wav(mono, desired_channels=2, desired_samples=70)[0],
        ]

    return build


def test_wav_files_match_tf():
    tf1 = _tf1()
    ours, theirs = _run(dataflow, _encode_wav), _run(tf1, _encode_wav)
    assert [bytes(a) for a in ours] == [bytes(b) for b in theirs]
    for lib in (dataflow, tf1):
        got, want = _run(lib, _decode_wav(ours)), _run(tf1, _decode_wav(theirs))
        for a, b in zip(got, want, strict=True):
            assert np.asarray(a).dtype == np.asarray(b).dtype and np.shape(a) == np.shape(b)
            np.testing.assert_array_equal(a, b)


def test_wav_static_shapes_match_tf():
    tf1 = _tf1()
    for tf in (dataflow, tf1):
        with tf.Graph().as_default():
            s = tf.placeholder(tf.string, [])
            audio, rate = tf.audio.decode_wav(s, desired_channels=2, desired_samples=9)
            assert audio.shape.as_list() == [9, 2] and rate.dtype == tf.int32
            assert tf.audio.decode_wav(s)[0].shape.as_list() == [None, None]
            with pytest.raises(ValueError):
                tf.audio.encode_wav(tf.zeros([3]), 100)


def test_write_file_and_matching_files_match_tf(tmp_path):
    tf1 = _tf1()
    for i, tf in enumerate((dataflow, tf1)):
        folder = tmp_path / f"run{i}"
        with tf.Graph().as_default():
            writes = [
                tf.io.write_file(str(folder / name), tf.constant(b"x" * n))
                for n, name in enumerate(["b.txt", "a.txt", "c.dat", "sub/d.txt"])
            ]
            found = tf.io.matching_files(str(folder / "*.txt"))
            back = tf.io.read_file(str(folder / "sub" / "d.txt"))
            with tf.Session() as sess:
                sess.run(writes)
                names, content = sess.run([found, back])
        assert [n.decode().rsplit("/", 1)[1] for n in names] == ["a.txt", "b.txt"]
        assert content == b"xxx"
