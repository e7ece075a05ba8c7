"""``tf.image``'s colour spaces and colour adjustments against ``tensorflow.compat.v1``:
values, dtypes and static shapes, and gradients where TF has them. The ops are float32
elementwise arithmetic in another order than TF's kernels, hence rtol/atol 2e-5 (a few
ulps of values in ``[0, 1]`` through a division by a channel range)."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow

pytestmark = pytest.mark.tf

RNG = np.random.default_rng(3203)
RGB = RNG.random((2, 5, 6, 3)).astype(np.float32)
HSV = RNG.random((2, 5, 6, 3)).astype(np.float32)
PIXELS = RNG.integers(0, 256, (4, 5, 3)).astype(np.uint8)

CASES = {
    "rgb_to_hsv": lambda tf, x, h, u: [tf.image.rgb_to_hsv(x)],
    "hsv_to_rgb": lambda tf, x, h, u: [tf.image.hsv_to_rgb(h)],
    "hsv_round_trip": lambda tf, x, h, u: [tf.image.hsv_to_rgb(tf.image.rgb_to_hsv(x[0]))],
    "yiq": lambda tf, x, h, u: [tf.image.rgb_to_yiq(x), tf.image.yiq_to_rgb(h)],
    "yuv": lambda tf, x, h, u: [tf.image.rgb_to_yuv(x), tf.image.yuv_to_rgb(h)],
    "adjust_saturation": lambda tf, x, h, u: [
        tf.image.adjust_saturation(x, 0.4),
        tf.image.adjust_saturation(x[0], 2.5),
        tf.image.adjust_saturation(u, 1.7),
    ],
    "adjust_hue": lambda tf, x, h, u: [
        tf.image.adjust_hue(x, 0.3),
        tf.image.adjust_hue(x[1], -0.7),
        tf.image.adjust_hue(u, 0.2),
    ],
    "adjust_gamma": lambda tf, x, h, u: [
        tf.image.adjust_gamma(x, 2.2),
        tf.image.adjust_gamma(x, 0.5, 1.3),
        tf.image.adjust_gamma(u, 1.8),
    ],
}
# TF's gradients: RGBToHSV and the matrix products have them; HSVToRGB and the adjust
# kernels (AdjustSaturation, AdjustHue) do not (ours are composites, differentiable:
# test_hsv_to_rgb_gradient checks hsv_to_rgb's against finite differences).
WITH_GRADIENTS = {"rgb_to_hsv", "yiq", "yuv"}


def _run(tf, name):
    config = tf.ConfigProto(debug=True) if tf is dataflow else None
    with tf.Graph().as_default() as graph:
        x = tf.placeholder(tf.float32, [None, 5, 6, 3])
        h = tf.placeholder(tf.float32, [2, None, 6, 3])
        u = tf.constant(PIXELS)
        outs = CASES[name](tf, x, h, u)
        fetches = list(outs)
        if name in WITH_GRADIENTS:
            loss = tf.add_n([tf.reduce_sum(tf.sin(3.0 * o)) for o in outs])
            fetches += (
                tf.gradients(loss, [x, h], unconnected_gradients="zero")
                if (tf is not dataflow)
                else [
                    g if g is not None else tf.zeros_like(v)
                    for g, v in zip(tf.gradients(loss, [x, h]), [x, h])
                ]
            )
        shapes = [o.shape.as_list() for o in outs]
        with tf.Session(graph=graph, config=config) as sess:
            return shapes, sess.run(fetches, {x: RGB, h: HSV})


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_tf(name):
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    (our_shapes, ours), (their_shapes, theirs) = _run(dataflow, name), _run(tf1, name)
    assert our_shapes == their_shapes
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        assert a.dtype == b.dtype and a.shape == b.shape, i
        if a.dtype == np.uint8:  # a value on a rounding boundary may land either side
            assert np.abs(a.astype(int) - b).max() <= 1, i
        else:
            np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-5, err_msg=f"output {i}")


def test_build_time_errors_match_tf():
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    for tf in (dataflow, tf1):
        with tf.Graph().as_default():
            for fn in (tf.image.rgb_to_hsv, tf.image.hsv_to_rgb, tf.image.rgb_to_yiq):
                with pytest.raises(ValueError):
                    fn(tf.zeros([4, 4, 2]))
            with pytest.raises(ValueError):
                tf.image.random_hue(tf.zeros([4, 4, 3]), 0.6)
            with pytest.raises(ValueError):
                tf.image.random_saturation(tf.zeros([4, 4, 3]), 0.5, 0.2)


def test_random_colour_ops_stay_in_their_range():
    with dataflow.Graph().as_default():
        x = dataflow.constant(RGB)
        hue = dataflow.image.random_hue(x, 0.2, seed=1)
        sat = dataflow.image.random_saturation(x, 0.5, 1.5, seed=2)
        with dataflow.Session() as sess:
            hues, sats = sess.run([hue, sat])
    # the value channel (max of r, g, b) is unchanged by both
    np.testing.assert_allclose(hues.max(-1), RGB.max(-1), rtol=1e-5)
    np.testing.assert_allclose(sats.max(-1), RGB.max(-1), rtol=1e-5)
    assert not np.allclose(hues, RGB) and not np.allclose(sats, RGB)


def _hsv_to_rgb_ref(hsv):
    """The HSV hexcone written out with autograd.numpy (away from the sector borders)."""
    import autograd.numpy as anp

    h, s, v = hsv[..., 0], hsv[..., 1], hsv[..., 2]
    c = s * v
    h6 = h * 6.0
    x = c * (1.0 - anp.abs(h6 - 2.0 * np.floor(h6 / 2.0) - 1.0))
    z = 0.0 * c
    table = [(c, x, z), (x, c, z), (z, c, x), (z, x, c), (x, z, c), (c, z, x)]
    sector = np.floor(h6)
    rgb = [
        sum(anp.where(sector == k, row[i], 0.0) for k, row in enumerate(table)) for i in range(3)
    ]
    return anp.stack([part + v - c for part in rgb], axis=-1)


def test_hsv_to_rgb_gradient_matches_autograd_and_finite_differences():
    from dataflow.testing import grad_check

    # hues away from the sector borders, where the function is smooth
    hsv = HSV[0, :2].astype(np.float64)
    hsv[..., 0] = np.floor(hsv[..., 0] * 6.0) / 6.0 + 0.02 + 0.12 * hsv[..., 0] / 6.0
    grad_check.check_op(dataflow.image.hsv_to_rgb, _hsv_to_rgb_ref, [hsv], order=2)
