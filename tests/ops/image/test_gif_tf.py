"""``decode_gif`` against ``tensorflow.compat.v1``: animated GIFs whose later frames are
smaller than the screen, at offsets, with transparent pixels and local colour tables,
interlaced or not, and a hand-made file (a transparent first frame smaller than the
screen, a frame hanging off it) decode to the same frames (exactly: colour indices, no loss); bad
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


def _lzw_literals(indices: np.ndarray) -> bytes:
    """Indices as GIF LZW data of literal 9-bit codes only (a clear code every 254
    codes keeps the width at 9 bits), in sub-blocks."""
    codes = []
    for start in range(0, indices.size, 254):
        codes += [256, *indices.reshape(-1)[start : start + 254].tolist()]
    codes.append(257)
    bits = "".join(format(c, "09b")[::-1] for c in codes)
    bits += "0" * (-len(bits) % 8)
    data = bytes(int(bits[i : i + 8][::-1], 2) for i in range(0, len(bits), 8))
    blocks = b"".join(
        bytes([len(data[i : i + 255])]) + data[i : i + 255] for i in range(0, len(data), 255)
    )
    return b"\x08" + blocks + b"\x00"


def _hand_made() -> bytes:
    """A GIF Pillow would not write: a first frame smaller than the screen, offset, with
    a transparent index, a second frame with a local table hanging off the canvas (TF's
    canvas is the largest image's size), a third larger than the screen."""
    import struct

    table = RNG.integers(0, 256, (4, 3)).astype(np.uint8).tobytes()
    local = RNG.integers(0, 256, (8, 3)).astype(np.uint8).tobytes()
    first = RNG.integers(0, 4, (4, 5))
    second = RNG.integers(0, 8, (4, 5))
    third = RNG.integers(0, 4, (7, 9))
    out = b"GIF89a" + struct.pack("<HHBBB", 8, 6, 0x81, 0, 0) + table
    out += b"\x21\xf9\x04\x01\x00\x00\x02\x00"  # transparent index 2, next image only
    out += b"\x2c" + struct.pack("<HHHHB", 1, 1, 5, 4, 0) + _lzw_literals(first)
    out += b"\x2c" + struct.pack("<HHHHB", 5, 3, 5, 4, 0x82) + local + _lzw_literals(second)
    out += b"\x2c" + struct.pack("<HHHHB", 2, 0, 9, 7, 0) + _lzw_literals(third)
    return out + b"\x3b"


FILES = [_animated(False, 4, 16), _animated(True, 3, 200), _still(), _hand_made()]
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
    assert [g.shape[0] for g in got[:5]] == [4, 3, 1, 3, 3]


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
