"""``tf.image``'s rotations, transposes, patches and the area/bicubic resizes against
``tensorflow.compat.v1``: values, dtypes, static shapes and gradients (where TF has
them). Rearrangements agree exactly; resizes are float32 weighted sums of up to 16 (or,
for area, ``ceil(scale)^2``) terms with weights rounded differently: rtol/atol 1e-5."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow

pytestmark = pytest.mark.tf

RNG = np.random.default_rng(3205)
X = RNG.random((2, 7, 9, 3)).astype(np.float32)
U8 = RNG.integers(0, 256, (5, 6, 2)).astype(np.uint8)


def _patches(tf, x):
    return [
        tf.image.extract_image_patches(x, [1, 3, 2, 1], [1, 2, 3, 1], [1, 1, 1, 1], "VALID"),
        tf.image.extract_image_patches(x, [1, 2, 3, 1], [1, 2, 2, 1], [1, 2, 1, 1], "SAME"),
        tf.extract_image_patches(x, [1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], "SAME"),
        tf.image.extract_patches(x, [1, 3, 3, 1], [1, 1, 1, 1], [1, 1, 2, 1], "VALID"),
    ]


CASES = {
    "rot90": lambda tf, x, k: [
        tf.image.rot90(x),
        tf.image.rot90(x[0], 2),
        tf.image.rot90(x, 3),
        tf.image.rot90(x, -1),
        tf.image.rot90(x[:, :5, :5], k),
    ],
    "transpose": lambda tf, x, k: [tf.image.transpose_image(x), tf.image.transpose(x[1])],
    "patches": lambda tf, x, k: _patches(tf, x),
    "resize_bicubic": lambda tf, x, k: [
        tf.image.resize_bicubic(x, [11, 5]),
        tf.image.resize_bicubic(x, [4, 13], align_corners=True),
        tf.image.resize_images(x, [3, 3], method=tf.image.ResizeMethod.BICUBIC),
    ],
    "resize_area": lambda tf, x, k: [
        tf.image.resize_area(x, [3, 4]),
        tf.image.resize_area(x, [10, 20]),
        tf.image.resize_area(x, [5, 4], align_corners=True),
        tf.image.resize(x[0], [2, 6], method=tf.image.ResizeMethod.AREA),
    ],
    "resize_other": lambda tf, x, k: [
        tf.image.resize(x, [7, 9]),
        tf.image.resize_images(x, [14, 9], preserve_aspect_ratio=True),
        tf.image.resize_images(x[0], [4, 20], method=1, preserve_aspect_ratio=True),
        tf.image.resize_image_with_pad(x, 10, 6),
        tf.image.resize_image_with_pad(x[0], 4, 12, method=tf.image.ResizeMethod.NEAREST_NEIGHBOR),
    ],
}
# TF has no gradient for ResizeArea.
NO_TF_GRADIENT = {"resize_area"}


def _run(tf, name):
    config = tf.ConfigProto(debug=True) if tf is dataflow else None
    with tf.Graph().as_default() as graph:
        x = tf.placeholder(tf.float32, [None, 7, 9, 3])
        k = tf.placeholder(tf.int32, [])
        outs = CASES[name](tf, x, k)
        fetches = list(outs)
        if name not in NO_TF_GRADIENT:
            loss = tf.add_n([tf.reduce_sum(tf.sin(o) * (i + 1.0)) for i, o in enumerate(outs)])
            fetches += tf.gradients(loss, [x])
        shapes = [o.shape.as_list() for o in outs]
        with tf.Session(graph=graph, config=config) as sess:
            return shapes, sess.run(fetches, {x: X, k: 3})


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_tf(name):
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    (our_shapes, ours), (their_shapes, theirs) = _run(dataflow, name), _run(tf1, name)
    assert our_shapes == their_shapes
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        assert a.dtype == b.dtype and a.shape == b.shape, i
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5, err_msg=f"fetch {i}")


def test_integer_images_match_tf():
    tf1 = pytest.importorskip("tensorflow.compat.v1")

    def run(tf):
        with tf.Graph().as_default():
            u = tf.constant(U8)
            outs = [
                tf.image.rot90(u),
                tf.image.transpose_image(u),
                tf.image.resize_area(u[None], [3, 3]),
                tf.image.resize_bicubic(u[None], [7, 4]),
                tf.image.resize_images(u, [5, 6]),
                tf.image.extract_image_patches(
                    u[None], [1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], "VALID"
                ),
            ]
            with tf.Session() as sess:
                return sess.run(outs)

    for a, b in zip(run(dataflow), run(tf1), strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-4)


def test_build_time_errors_match_tf():
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    for tf in (dataflow, tf1):
        with tf.Graph().as_default():
            with pytest.raises(ValueError):
                tf.image.rot90(tf.zeros([3, 3]))
            with pytest.raises(ValueError):
                tf.image.transpose_image(tf.zeros([3]))
            with pytest.raises(ValueError):
                tf.image.resize_image_with_pad(tf.zeros([4, 4, 1]), 0, 3)
            with pytest.raises(ValueError):
                tf.image.extract_image_patches(
                    tf.zeros([1, 4, 4, 1]), [1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], "FULL"
                )
