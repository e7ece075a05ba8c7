"""``encode_png`` and ``decode_and_crop_jpeg`` against ``tensorflow.compat.v1``: PNG
files written here decode in TF to the same pixels (and TF's decode here), for 1 to 4
channels and several compression levels; crops of decoded images match
TF's; bad arguments raise TF's error classes."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow

pytestmark = pytest.mark.tf

RNG = np.random.default_rng(3209)
IMAGES = [RNG.integers(0, 256, (5, 7, c)).astype(np.uint8) for c in (1, 2, 3, 4)]


def _tf1():
    return pytest.importorskip("tensorflow.compat.v1")


def _encode(tf, images, level):
    with tf.Graph().as_default():
        outs = [tf.image.encode_png(tf.constant(i), compression=level) for i in images]
        with tf.Session() as sess:
            return sess.run(outs)


def _decode(tf, files):
    with tf.Graph().as_default():
        outs = [tf.io.decode_png(f) for f in files]
        with tf.Session() as sess:
            return sess.run(outs)


@pytest.mark.parametrize("level", [-1, 0, 9])
def test_png_files_decode_in_tf(level):
    tf1 = _tf1()
    ours = _encode(dataflow, IMAGES, level)
    for decoded, want in zip(_decode(tf1, ours), IMAGES, strict=True):
        np.testing.assert_array_equal(decoded, want)
    theirs = _encode(tf1, IMAGES[:1] + IMAGES[2:], level)  # our decoder: 1, 3, 4 channels
    for decoded, want in zip(_decode(dataflow, theirs), IMAGES[:1] + IMAGES[2:], strict=True):
        np.testing.assert_array_equal(decoded, want)


def test_decode_and_crop_matches_tf():
    tf1 = _tf1()
    with tf1.Graph().as_default():
        gray = tf1.constant(RNG.integers(0, 256, (12, 10, 1)).astype(np.uint8))
        with tf1.Session() as sess:
            jpeg = sess.run(tf1.image.encode_jpeg(gray, quality=95))
    got = []
    for tf in (dataflow, tf1):
        with tf.Graph().as_default():
            window = tf.placeholder(tf.int32, [4])
            crop = tf.image.decode_and_crop_jpeg(jpeg, window, channels=1)
            full = tf.image.decode_jpeg(jpeg, channels=1)
            with tf.Session() as sess:
                cropped, whole = sess.run([crop, full], {window: [3, 2, 5, 6]})
        np.testing.assert_array_equal(cropped, whole[3:8, 2:8])
        got.append(cropped.astype(int))
    # two JPEG decoders: TF's default inverse DCT is libjpeg's fast integer one, Pillow's
    # the accurate one; on noise (the worst case) they differ by a few levels
    assert np.abs(got[0] - got[1]).max() <= 8
    assert np.abs(got[0] - got[1]).mean() <= 2


def test_errors_match_tf():
    tf1 = _tf1()
    for tf in (dataflow, tf1):
        with tf.Graph().as_default():
            with pytest.raises((TypeError, ValueError)):
                tf.image.encode_png(tf.zeros([2, 2, 3]))
            with pytest.raises(ValueError):
                tf.image.encode_png(tf.zeros([2, 2], tf.uint8))
