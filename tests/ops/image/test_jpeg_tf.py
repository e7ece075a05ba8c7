"""``is_jpeg``, ``extract_jpeg_shape``, ``encode_jpeg``, ``adjust_jpeg_quality`` and
``random_jpeg_quality`` against ``tensorflow.compat.v1``.

JPEG files written here are not TF's bytes (Pillow's libjpeg, not TF's libjpeg-turbo
calls), so they are compared by what can be compared exactly (``is_jpeg``, the frame
header's shape, the JFIF densities, the XMP packet, progressive frames) and by the
pixels TF decodes them to, which must match the pixels TF's own files decode to within
a few levels (same quantisation tables, different encoder rounding)."""

from __future__ import annotations

import io

import numpy as np
import pytest

import dataflow

pytestmark = pytest.mark.tf

RNG = np.random.default_rng(1532)
_Y, _X = np.mgrid[0:24, 0:20]
_SMOOTH = np.stack([_Y * 9, _X * 11, (_Y + _X) * 5], axis=-1) + RNG.integers(0, 12, (24, 20, 3))
RGB = np.clip(_SMOOTH, 0, 255).astype(np.uint8)
GRAY = RGB[..., :1].copy()
OPTIONS = [
    {"quality": 95},
    {"quality": 40, "chroma_downsampling": False, "density_unit": "cm", "x_density": 37},
    {"quality": 75, "progressive": True, "optimize_size": True, "y_density": 72},
    {"format": "grayscale", "quality": 60, "xmp_metadata": "<x:xmpmeta>df</x:xmpmeta>"},
]


def _image_for(options):
    return GRAY if options.get("format") == "grayscale" else RGB


def _encode_all(tf):
    with tf.Graph().as_default():
        files = [tf.image.encode_jpeg(tf.constant(_image_for(o)), **o) for o in OPTIONS]
        files.append(tf.io.encode_jpeg(tf.constant(GRAY), format="", quality=90))
        with tf.Session() as sess:
            return sess.run(files)


def _other_files():
    from PIL import Image

    cmyk = io.BytesIO()
    Image.fromarray(RGB).convert("CMYK").save(cmyk, format="JPEG")
    png = io.BytesIO()
    Image.fromarray(RGB).save(png, format="PNG")
    return [cmyk.getvalue(), png.getvalue(), b"\xff\xd8", b"", b"\xff\xd8\xff\xd9"]


@pytest.fixture(scope="module")
def tf1():
    return pytest.importorskip("tensorflow.compat.v1")


@pytest.fixture(scope="module")
def files(tf1):
    """Our files, TF's files for the same options, and some that are not ours."""
    return _encode_all(dataflow), _encode_all(tf1), _other_files()


def _run(tf, build):
    with tf.Graph().as_default():
        outs = build(tf)
        with tf.Session() as sess:
            return sess.run(outs)


def _decode_in_tf(tf1, blobs):
    return _run(tf1, lambda tf: [tf.image.decode_jpeg(b) for b in blobs])


def test_header_facts_match_tf(tf1, files):
    ours, theirs, others = files
    every = ours + theirs + others
    want = _run(tf1, lambda tf: tf.image.is_jpeg(tf.constant(every)))
    got = _run(dataflow, lambda tf: tf.image.is_jpeg(tf.constant(every)))
    np.testing.assert_array_equal(got, want)
    assert got.dtype == want.dtype == np.bool_
    jpegs = ours + theirs + others[:1]
    for dtype in ("int32", "int64"):
        want = _run(
            tf1, lambda tf, d=dtype: [tf.image.extract_jpeg_shape(b, getattr(tf, d)) for b in jpegs]
        )
        got = _run(
            dataflow,
            lambda tf, d=dtype: [tf.io.extract_jpeg_shape(b, getattr(tf, d)) for b in jpegs],
        )
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(g, w)
            assert g.dtype == w.dtype
    assert [list(s) for s in got[:5]] == [[24, 20, 3]] * 3 + [[24, 20, 1]] * 2
    for ours_file, theirs_file, options in zip(ours, theirs, OPTIONS):
        assert ours_file[13:18] == theirs_file[13:18]  # JFIF density unit, x, y
        assert (b"\xff\xc2" in ours_file) == (b"\xff\xc2" in theirs_file)  # progressive
        if options.get("xmp_metadata"):
            packet = b"http://ns.adobe.com/xap/1.0/\x00" + options["xmp_metadata"].encode()
            assert packet in ours_file and packet in theirs_file


def test_encoded_pixels_match_tf(tf1, files):
    ours, theirs, _ = files
    decoded_ours = _decode_in_tf(tf1, ours)
    decoded_theirs = _decode_in_tf(tf1, theirs)
    for got, want in zip(decoded_ours, decoded_theirs, strict=True):
        assert got.shape == want.shape and got.dtype == np.uint8
        diff = np.abs(got.astype(int) - want.astype(int))
        assert diff.mean() <= 1.5 and diff.max() <= 24


def test_adjust_and_random_jpeg_quality_match_tf(tf1):
    floats = RGB.astype(np.float32) / 255.0

    def build(tf):
        return [
            tf.image.adjust_jpeg_quality(tf.constant(RGB), 30),
            tf.image.adjust_jpeg_quality(tf.constant(floats), tf.constant(85)),
            tf.image.adjust_jpeg_quality(tf.constant(GRAY), 50),
            tf.image.random_jpeg_quality(tf.constant(RGB), 20, 21, seed=3),
        ]

    got, want = _run(dataflow, build), _run(tf1, build)
    for g, w, scale in zip(got, want, [1, 255, 1, 1], strict=True):
        assert g.shape == w.shape and g.dtype == w.dtype
        diff = np.abs(g.astype(np.float64) - w.astype(np.float64)) * scale
        assert diff.mean() <= 1.5 and diff.max() <= 24
    static = []
    for tf in (dataflow, tf1):
        with tf.Graph().as_default():
            q = tf.image.random_jpeg_quality(tf.constant(floats), 10, 90)
            static.append((q.shape.as_list(), q.dtype.name))
    assert static[0] == static[1]


def test_errors_match_tf(tf1):
    for tf in (dataflow, tf1):
        with tf.Graph().as_default():
            with pytest.raises(ValueError):
                tf.image.encode_jpeg(tf.constant(RGB), format="cmyk")
            with pytest.raises(ValueError):
                tf.image.encode_jpeg(tf.constant(RGB), density_unit="mm")
            with pytest.raises(TypeError):
                tf.image.encode_jpeg(tf.constant(floats_of(RGB)))
            with pytest.raises(ValueError):
                tf.image.encode_jpeg(tf.constant(RGB[None]))
            with pytest.raises(TypeError):
                tf.image.extract_jpeg_shape(b"", output_type=tf.float32)
            with pytest.raises(ValueError):
                tf.image.random_jpeg_quality(tf.constant(RGB), 50, 50)
            with pytest.raises(ValueError):
                tf.image.random_jpeg_quality(tf.constant(RGB), -1, 50)
            bad_channels = tf.placeholder(tf.uint8, [None, None, None])
            png = tf.constant(_other_files()[1])
            runs = [
                (tf.image.encode_jpeg(bad_channels), {bad_channels: np.zeros((2, 2, 4))}),
                (tf.image.encode_jpeg(bad_channels, format="grayscale"), {bad_channels: RGB}),
                (tf.image.extract_jpeg_shape(png), None),
            ]
            with tf.Session() as sess:
                for fetch, feed in runs:
                    with pytest.raises(tf.errors.InvalidArgumentError):
                        sess.run(fetch, feed)
    with dataflow.Graph().as_default():  # known channels: found while building
        with pytest.raises(dataflow.errors.InvalidArgumentError):
            dataflow.image.encode_jpeg(dataflow.zeros([2, 2, 4], dataflow.uint8))


def floats_of(image):
    return image.astype(np.float32) / 255.0
