"""``decode_gif`` against ``tensorflow.compat.v1``: animated GIFs whose later frames are
smaller than the screen, at offsets, with transparent pixels and local colour tables,
interlaced or not, decode to the same frames (exactly: colour indices, no loss); bad
input raises TF's error classes."""

from __future__ import annotations

import io

import numpy as np
import pytest

import dataflow

pytestmark = pytest.mark.tf

RNG = np.random.default_rng(4407)


def _animated(interlace: bool, frames: int, palette_colours: int) -> bytes:
    """An animated GIF by Pillow: it crops later frames to what changed (offsets) and
    marks unchanged pixels transparent."""
    from PIL import Image

    base = RNG.integers(0, 256, (13, 17, 3)).astype(np.uint8)
    images = []
    for k in range(frames):
        frame = base.copy()
        frame[2 + k : 6 + k, 3 : 9 + k] = RNG.integers(0, 256, 3)
        images.append(Image.fromarray(frame).quantize(palette_colours))
    out = io.BytesIO()
    images[0].save(
        out,
        format="GIF",
        save_all=True,
        append_images=images[1:],
        interlace=interlace,
        duration=40,
        disposal=1,
    )
    return out.getvalue()


def _still() -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.fromarray(RNG.integers(0, 4, (6, 5)).astype(np.uint8) * 60).save(out, format="GIF")
    return out.getvalue()


FILES = [_animated(False, 4, 16), _animated(True, 3, 200), _still()]
FILES += [FILES[0][:-20], FILES[1][: len(FILES[1]) // 2]]  # cut short: the whole images


@pytest.fixture(scope="module")
def tf1():
    return pytest.importorskip("tensorflow.compat.v1")


def _decode(tf, blobs):
    with tf.Graph().as_default():
        outs = [tf.image.decode_gif(b) for b in blobs] + [tf.io.decode_gif(blobs[0])]
        static = [(o.shape.as_list(), o.dtype.name) for o in outs]
        with tf.Session() as sess:
            return sess.run(outs), static


def test_frames_match_tf(tf1):
    got, got_static = _decode(dataflow, FILES)
    want, want_static = _decode(tf1, FILES)
    assert got_static == want_static
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype == np.uint8
        np.testing.assert_array_equal(g, w)
    assert [g.shape[0] for g in got[:4]] == [4, 3, 1, 3]


def test_bad_input_raises_like_tf(tf1):
    truncated = FILES[0][:40]  # cut inside the first image
    for tf in (dataflow, tf1):
        with tf.Graph().as_default():
            with pytest.raises(ValueError):
                tf.image.decode_gif([FILES[2]])
            fetches = [tf.image.decode_gif(b) for b in (b"GIF", b"not a gif", truncated)]
            with tf.Session() as sess:
                for fetch in fetches:
                    with pytest.raises(tf.errors.InvalidArgumentError):
                        sess.run(fetch)
