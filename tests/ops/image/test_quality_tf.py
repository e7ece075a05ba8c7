"""``tf.image``'s measures and derivative filters against ``tensorflow.compat.v1``:
``total_variation``, ``image_gradients``, ``sobel_edges``, ``psnr``, ``ssim``,
``ssim_multiscale``: values, dtypes, static shapes and gradients. Float32 sums of up to a
few hundred products in another order than TF's convolutions: rtol 1e-4 (SSIM's ratios
of small local variances amplify rounding), atol 1e-5."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow

pytestmark = pytest.mark.tf

RNG = np.random.default_rng(3204)
A = RNG.random((2, 45, 38, 3)).astype(np.float32)
B = np.clip(A + 0.1 * RNG.standard_normal(A.shape), 0, 1).astype(np.float32)
U8 = RNG.integers(0, 256, (3, 16, 16, 1)).astype(np.uint8)

CASES = {
    "total_variation": lambda tf, a, b: [
        tf.image.total_variation(a),
        tf.image.total_variation(a[0]),
    ],
    "image_gradients": lambda tf, a, b: list(tf.image.image_gradients(a)),
    "sobel_edges": lambda tf, a, b: [tf.image.sobel_edges(a[:, :9, :7])],
    "psnr": lambda tf, a, b: [
        tf.image.psnr(a, b, 1.0),
        tf.image.psnr(a[0], b[0], 2.0),
        tf.image.psnr(tf.constant(U8), tf.constant(U8[::-1]), 255),
    ],
    "ssim": lambda tf, a, b: [
        tf.image.ssim(a, b, 1.0),
        tf.image.ssim(a[0], b[0], 1.0, filter_size=5, filter_sigma=1.0),
        tf.image.ssim(tf.constant(U8), tf.constant(U8[::-1]), 255),
        tf.image.ssim(tf.reshape(a, [1, 2, 45, 38, 3]), tf.reshape(b, [1, 2, 45, 38, 3]), 1.0),
    ],
    "ssim_multiscale": lambda tf, a, b: [
        tf.image.ssim_multiscale(a, b, 1.0, filter_size=3),
        tf.image.ssim_multiscale(a, b, 1.0, power_factors=(0.5, 0.2, 0.3), filter_size=5),
    ],
}
NO_GRADIENT_FETCHES = {"psnr": [2], "ssim": [2]}  # integer inputs


def _run(tf, name):
    config = tf.ConfigProto(debug=True) if tf is dataflow else None
    with tf.Graph().as_default() as graph:
        a = tf.placeholder(tf.float32, [None, 45, 38, 3])
        b = tf.placeholder(tf.float32, [2, 45, 38, 3])
        outs = CASES[name](tf, a, b)
        skip = NO_GRADIENT_FETCHES.get(name, [])
        loss = tf.add_n([tf.reduce_sum(o * (i + 1.0)) for i, o in enumerate(outs) if i not in skip])
        grads = tf.gradients(loss, [a, b])
        grads = [g for g in grads if g is not None]
        shapes = [o.shape.as_list() if o.shape.rank is not None else None for o in outs]
        with tf.Session(graph=graph, config=config) as sess:
            return shapes, sess.run(outs + grads, {a: A, b: B})


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_tf(name):
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    (our_shapes, ours), (their_shapes, theirs) = _run(dataflow, name), _run(tf1, name)
    assert our_shapes == their_shapes
    assert len(ours) == len(theirs)
    for i, (x, y) in enumerate(zip(ours, theirs, strict=True)):
        assert x.dtype == y.dtype and x.shape == y.shape, i
        np.testing.assert_allclose(x, y, rtol=1e-4, atol=1e-5, err_msg=f"fetch {i}")


def test_build_time_errors_match_tf():
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    for tf in (dataflow, tf1):
        with tf.Graph().as_default():
            with pytest.raises(ValueError):
                tf.image.total_variation(tf.zeros([4, 4]))
            with pytest.raises(ValueError):
                tf.image.image_gradients(tf.zeros([4, 4, 3]))
