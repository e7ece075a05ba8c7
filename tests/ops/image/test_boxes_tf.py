"""``crop_and_resize`` and ``draw_bounding_boxes`` against ``tensorflow.compat.v1``:
values, dtypes, static shapes, and ``crop_and_resize``'s gradients with respect to the
image and the boxes. Bilinear samples are float32 sums of four products: rtol/atol 1e-5;
box gradients sum a crop's worth of them (atol 1e-4)."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow

pytestmark = pytest.mark.tf

RNG = np.random.default_rng(3207)
IMAGE = RNG.random((3, 9, 11, 2)).astype(np.float32)
BOXES = np.array(
    [
        [0.1, 0.2, 0.8, 0.7],
        [0.6, 0.9, 0.2, 0.1],  # flipped both ways
        [-0.2, 0.3, 0.5, 1.3],  # partly outside
        [0.33, 0.41, 0.35, 0.44],
    ],
    np.float32,
)


def _program(tf):
    image = tf.placeholder(tf.float32, [None, 9, 11, 2])
    boxes = tf.placeholder(tf.float32, [None, 4])
    ind = tf.constant([0, 2, 1, 2])
    outs = [
        tf.image.crop_and_resize(image, boxes, ind, [5, 4]),
        tf.image.crop_and_resize(image, boxes, ind, [1, 3], extrapolation_value=-1.0),
        tf.image.crop_and_resize(image, boxes, ind, [6, 6], method="nearest"),
    ]
    loss = tf.reduce_sum(tf.sin(outs[0]) * 2.0) + tf.reduce_sum(outs[1] * outs[1])
    grads = tf.gradients(loss, [image, boxes])
    (near_grad,) = tf.gradients(tf.reduce_sum(outs[2] * outs[2]), [image])
    return (image, boxes), [*outs, *grads, near_grad]


def _run(tf, program, feeds):
    config = tf.ConfigProto(debug=True) if tf is dataflow else None
    with tf.Graph().as_default() as graph:
        placeholders, outs = program(tf)
        shapes = [o.shape.as_list() for o in outs]
        with tf.Session(graph=graph, config=config) as sess:
            return shapes, sess.run(outs, dict(zip(placeholders, feeds, strict=True)))


def test_crop_and_resize_matches_tf():
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    ours = _run(dataflow, _program, [IMAGE, BOXES])
    theirs = _run(tf1, _program, [IMAGE, BOXES])
    assert ours[0] == theirs[0]
    for i, (a, b) in enumerate(zip(ours[1], theirs[1], strict=True)):
        assert a.dtype == b.dtype and a.shape == b.shape, i
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-4, err_msg=f"fetch {i}")


def _draw(tf):
    images = tf.placeholder(tf.float32, [2, 8, 10, None])
    boxes = tf.constant(
        [
            [[0.1, 0.1, 0.6, 0.5], [0.5, 0.3, 1.4, 0.9], [-0.5, -0.2, 0.3, 0.4]],
            [[0.7, 0.2, 0.3, 0.9], [0.0, 0.0, 1.0, 1.0], [1.2, 0.1, 1.5, 0.5]],
        ]
    )
    return (images,), [
        tf.image.draw_bounding_boxes(images, boxes),
        tf.image.draw_bounding_boxes(images, boxes, colors=[[0.2, 0.4, 0.6, 1.0]]),
    ]


@pytest.mark.parametrize("depth", [1, 3, 4])
def test_draw_bounding_boxes_matches_tf(depth):
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    feed = [RNG.random((2, 8, 10, depth)).astype(np.float32)]
    ours, theirs = _run(dataflow, _draw, feed), _run(tf1, _draw, feed)
    assert ours[0] == theirs[0]
    for a, b in zip(ours[1], theirs[1], strict=True):
        np.testing.assert_array_equal(a, b)


def test_build_time_errors_match_tf():
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    for tf in (dataflow, tf1):
        with tf.Graph().as_default():
            with pytest.raises(ValueError):
                tf.image.crop_and_resize(tf.zeros([2, 4, 4]), tf.zeros([1, 4]), [0], [2, 2])
            with pytest.raises(ValueError):
                tf.image.draw_bounding_boxes(tf.zeros([1, 4, 4, 3]), tf.zeros([1, 4]))
