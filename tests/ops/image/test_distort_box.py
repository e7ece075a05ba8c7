"""``sample_distorted_bounding_box``: static shapes and dtypes as TF1's, and, since the
windows come from another random stream than TF's, its rules over many draws: each
window lies in the image, keeps its aspect ratio and area in range and covers enough
of the box (or is the whole image), crops with ``tf.slice``, and repeats under a seed."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow as tf

BOX = np.array([[[0.1, 0.2, 0.6, 0.9]]], np.float32)


def _draws(seed, n=40, **kwargs):
    with tf.Graph().as_default():
        image = tf.zeros([60, 80, 3])
        begin, size, box = tf.image.sample_distorted_bounding_box(
            tf.shape(image), BOX, seed=seed, **kwargs
        )
        crop = tf.slice(image, begin, size)
        with tf.Session(config=tf.ConfigProto(debug=True)) as sess:
            return [sess.run([begin, size, box, tf.shape(crop)]) for _ in range(n)]


@pytest.mark.tf
def test_static_shapes_match_tf():
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    for lib in (tf, tf1):
        with lib.Graph().as_default():
            outs = lib.image.sample_distorted_bounding_box([60, 80, 3], BOX, seed=1)
            assert [o.shape.as_list() for o in outs] == [[3], [3], [1, 1, 4]]
            assert [o.dtype.name for o in outs] == ["int32", "int32", "float32"]


def test_windows_follow_the_rules():
    for begin, size, box, crop in _draws(3, min_object_covered=0.5, area_range=(0.1, 0.9)):
        y, x, _ = begin
        h, w, _ = size
        assert 0 <= y and y + h <= 60 and 0 <= x and x + w <= 80 and list(crop) == [h, w, 3]
        np.testing.assert_allclose(box[0, 0], [y / 60, x / 80, (y + h) / 60, (x + w) / 80], 1e-6)
        if (h, w) != (60, 80):
            assert 0.75 - 1 / h <= w / h <= 1.33 + 1 / h
            assert 0.1 * 4800 - 2 * (h + w) <= h * w <= 0.9 * 4800 + 2 * (h + w)
            top, left, bottom, right = BOX[0, 0] * [60, 80, 60, 80]
            inter = max(0, min(y + h, bottom) - max(y, top)) * max(
                0, min(x + w, right) - max(x, left)
            )
            assert inter >= 0.5 * (bottom - top) * (right - left) - 1e-6


def test_seeded_draws_repeat_and_vary():
    first, second = _draws(7, n=5), _draws(7, n=5)
    assert [d[0].tolist() for d in first] == [d[0].tolist() for d in second]
    assert len({tuple(d[1]) for d in first}) > 1


def test_no_boxes():
    with tf.Graph().as_default():
        empty = np.zeros((1, 0, 4), np.float32)
        _, size, _ = tf.image.sample_distorted_bounding_box(
            [10, 10, 1], empty, use_image_if_no_bounding_boxes=True, min_object_covered=1.0
        )
        _, refused, _ = tf.image.sample_distorted_bounding_box([10, 10, 1], empty)
        with tf.Session() as sess:
            assert sess.run(size)[2] == -1
            with pytest.raises(tf.errors.InvalidArgumentError):
                sess.run(refused)
