"""``tf.image`` against ``tensorflow.compat.v1``: values (and gradients of the
differentiable ones) of the deterministic functions; the random ones by their rules."""

from __future__ import annotations

import io

import numpy as np
import pytest

import dataflow

RNG = np.random.default_rng(2)
IMAGES = RNG.random((2, 5, 6, 3)).astype(np.float32)
PIXELS = RNG.integers(0, 256, (4, 3, 3)).astype(np.uint8)

CASES = {
    "resize_bilinear_up": lambda tf, x: tf.image.resize_images(x, [8, 9]),
    "resize_bilinear_down_3d": lambda tf, x: tf.image.resize_bilinear(x[:1], [3, 4])[0],
    "resize_bilinear_align": lambda tf, x: tf.image.resize_bilinear(x, [7, 4], align_corners=True),
    "resize_nearest": lambda tf, x: tf.image.resize_images(
        x, [7, 4], method=tf.image.ResizeMethod.NEAREST_NEIGHBOR
    ),
    "resize_nearest_align": lambda tf, x: tf.image.resize_nearest_neighbor(
        x, [3, 8], align_corners=True
    ),
    "flips": lambda tf, x: tf.image.flip_left_right(x) + 2.0 * tf.image.flip_up_down(x),
    "central_crop": lambda tf, x: tf.image.central_crop(x[0], 0.6),
    "standardization": lambda tf, x: tf.image.per_image_standardization(x[1]),
    "brightness": lambda tf, x: tf.image.adjust_brightness(x, 0.3),
    "contrast": lambda tf, x: tf.image.adjust_contrast(x, 1.7),
}


# TF has no gradient for adjust_contrast (ours is differentiable): values only.
NO_TF_GRADIENT = {"contrast"}


def _run(tf, build, grads=True):
    with tf.Graph().as_default():
        x = tf.constant(IMAGES)
        y = build(tf, x)
        fetches = [y] + ([tf.gradients(tf.reduce_sum(y * y), x)[0]] if grads else [])
        with tf.Session() as sess:
            return sess.run(fetches)


@pytest.mark.tf
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_tf(name):
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    grads = name not in NO_TF_GRADIENT
    ours, theirs = _run(dataflow, CASES[name], grads), _run(tf1, CASES[name], grads)
    for a, b in zip(ours, theirs, strict=True):
        assert np.asarray(a).dtype == np.asarray(b).dtype and np.shape(a) == np.shape(b)
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


@pytest.mark.tf
def test_integer_images_match_tf():
    tf1 = pytest.importorskip("tensorflow.compat.v1")

    def build(tf):
        with tf.Graph().as_default():
            u8 = tf.constant(PIXELS)
            as_float = tf.image.convert_image_dtype(u8, tf.float32)
            outs = [
                as_float,
                tf.image.convert_image_dtype(as_float, tf.uint8),
                tf.image.convert_image_dtype(
                    tf.constant([[-0.2, 0.5, 1.3]]), tf.uint8, saturate=True
                ),
                tf.image.adjust_brightness(u8, 0.1),
                tf.image.adjust_contrast(u8, 0.5),
                tf.image.resize_nearest_neighbor(u8[None], [6, 2]),
            ]
            with tf.Session() as sess:
                return sess.run(outs)

    for a, b in zip(build(dataflow), build(tf1), strict=True):
        assert a.dtype == b.dtype
        np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), atol=1e-6)


@pytest.mark.tf
def test_decoding_matches_tf():
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(PIXELS).save(buffer, format="PNG")
    png = buffer.getvalue()

    def decode(tf):
        with tf.Graph().as_default():
            outs = [
                tf.image.decode_png(png),
                tf.image.decode_png(png, channels=1),
                tf.image.decode_image(png),
            ]
            with tf.Session() as sess:
                return sess.run(outs)

    color, gray, kept = decode(dataflow)
    their_color, their_gray, their_kept = decode(tf1)
    np.testing.assert_array_equal(color, their_color)
    np.testing.assert_array_equal(kept, their_kept)
    # Gray: libpng's weights; its rounding differs in a few pixels by one level.
    assert gray.dtype == their_gray.dtype and gray.shape == their_gray.shape
    assert np.abs(gray.astype(int) - their_gray).max() <= 1


def test_random_flip_flips_each_image_with_probability_one_half():
    tf = dataflow
    x = tf.constant(np.arange(200 * 2).reshape(200, 1, 2, 1).astype(np.float32))
    flipped = tf.image.random_flip_left_right(x, seed=3)
    with tf.Session() as sess:
        out = sess.run(flipped)
    original = np.arange(400).reshape(200, 1, 2, 1)
    same = (out == original).all(axis=(1, 2, 3))
    assert 70 < int(same.sum()) < 130  # about half kept, the rest mirrored
    mirrored = ~same
    np.testing.assert_array_equal(out[mirrored][:, :, ::-1], original[mirrored])


def test_random_crop_takes_a_window_of_the_value():
    tf = dataflow
    value = np.arange(5 * 6).reshape(5, 6)
    crop = tf.random_crop(tf.constant(value), [2, 3], seed=1)
    with tf.Session() as sess:
        windows = [sess.run(crop) for _ in range(20)]
    for w in windows:
        r, c = divmod(int(w[0, 0]), 6)
        np.testing.assert_array_equal(w, value[r : r + 2, c : c + 3])
    assert len({int(w[0, 0]) for w in windows}) > 3
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError):
        sess.run(tf.random_crop(tf.constant(value), [6, 1]))


def test_random_brightness_and_contrast_stay_in_their_ranges():
    tf = dataflow
    x = tf.constant(IMAGES[0])
    bright = tf.image.random_brightness(x, 0.2, seed=1) - x
    with tf.Session() as sess:
        deltas = [float(sess.run(bright)[0, 0, 0]) for _ in range(10)]
    assert all(-0.2 <= d < 0.2 for d in deltas) and len(set(deltas)) > 1
    with pytest.raises(ValueError, match="upper must be > lower"):
        tf.image.random_contrast(x, 0.5, 0.5)
