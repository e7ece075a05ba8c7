"""``tf.image.decode_gif`` (``DecodeGif``): every frame of a GIF as uint8 ``[frames,
height, width, 3]``, composited as TF does.

The file is walked block by block: the header and logical screen, the global colour
table, extension blocks (a graphic control extension names a transparent colour index
for the next image only; the others are skipped) and image descriptors, each with its
position, size, interlace flag, optional local colour table and LZW data in sub-blocks.
Each image's LZW data is handed to Pillow's decoder inside a one-image GIF of the
image's size whose palette is the identity grey ramp, so the decoded pixel values are
the image's colour indices (interlaced rows put back in order). A file cut short keeps
the whole images before the cut, as TF's decoder does (none: an error).

Compositing, TF's rule: every output frame is as wide and as high as the widest and
the highest image (the logical screen's size is not used, as in TF); frame ``k`` starts
as a copy of frame ``k - 1`` (frame 0 as black); the part of the image inside the
canvas is painted with its colour table's entries, except pixels holding the
transparent index, which keep the previous frame's colour; what falls outside is cut
off. Disposal methods are not applied (TF ignores them too). The painting is one masked
assignment per frame. Runs on the host; not differentiable.
"""

from __future__ import annotations

import io
import struct
from typing import Any, NamedTuple

import numpy as np

from ...framework import dtypes, errors, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor
from ...framework.tensor_shape import TensorShape
from ..build import apply_op
from ..host import to_host

_GREY_RAMP = np.repeat(np.arange(256, dtype=np.uint8), 3).tobytes()


class _Frame(NamedTuple):
    left: int
    top: int
    width: int
    height: int
    interlaced: bool
    colours: np.ndarray | None  # [entries, 3] uint8, the local or global table
    transparent: int  # -1: none
    lzw: bytes  # minimum code size byte, then the data sub-blocks and their terminator


def _invalid(message: str) -> Exception:
    return errors.InvalidArgumentError(None, None, message)


class _Reader:
    """A cursor over the file's bytes that fails with TF's error class when short."""

    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise _invalid("Failed to decode gif: the file is truncated")
        chunk = self.data[self.pos : self.pos + n]
        self.pos += n
        return chunk

    def colour_table(self, packed: int) -> np.ndarray:
        entries = 2 ** ((packed & 7) + 1)
        return np.frombuffer(self.take(3 * entries), np.uint8).reshape(entries, 3)

    def sub_blocks(self) -> bytes:
        """The raw sub-blocks (length bytes included) through the zero terminator."""
        start = self.pos
        while True:
            (size,) = self.take(1)
            if size == 0:
                return self.data[start : self.pos]
            self.take(size)


def _frames(data: bytes) -> tuple[int, int, list[_Frame]]:
    reader = _Reader(data)
    if reader.take(6) not in (b"GIF87a", b"GIF89a"):
        raise _invalid("Failed to decode gif: not a GIF file")
    width, height, packed, _, _ = struct.unpack("<HHBBB", reader.take(7))
    global_table = reader.colour_table(packed) if packed & 0x80 else None
    frames: list[_Frame] = []
    try:
        _read_images(reader, global_table, frames)
    except errors.InvalidArgumentError:
        if not frames:
            raise
        # TF keeps the whole images read before a truncation (giflib's partial slurp)
    return width, height, frames


def _read_images(reader: _Reader, global_table: np.ndarray | None, frames: list) -> None:
    """Appends the file's images to ``frames`` up to the trailer."""
    transparent = -1
    while True:
        (kind,) = reader.take(1)
        if kind == 0x3B:  # trailer
            break
        if kind == 0x21:  # extension
            (label,) = reader.take(1)
            blocks = reader.sub_blocks()
            if label == 0xF9 and len(blocks) >= 5 and blocks[0] >= 4:
                transparent = blocks[4] if blocks[1] & 1 else -1
            continue
        if kind != 0x2C:
            raise _invalid(f"Failed to decode gif: unexpected block type {kind:#x}")
        left, top, w, h, packed = struct.unpack("<HHHHB", reader.take(9))
        local = reader.colour_table(packed) if packed & 0x80 else None
        lzw = reader.take(1) + reader.sub_blocks()
        colours = local if local is not None else global_table
        frames.append(_Frame(left, top, w, h, bool(packed & 0x40), colours, transparent, lzw))
        transparent = -1
    if not frames:
        raise _invalid("Failed to decode gif: no frames")


def _indices(frame: _Frame) -> np.ndarray:
    """The frame's colour indices, ``[height, width]`` uint8, by Pillow's LZW decoder."""
    from PIL import Image

    screen = struct.pack("<HHBBB", frame.width, frame.height, 0xF7, 0, 0)
    descriptor = struct.pack(
        "<HHHHB", 0, 0, frame.width, frame.height, 0x40 if frame.interlaced else 0
    )
    one = b"GIF89a" + screen + _GREY_RAMP + b"\x2c" + descriptor + frame.lzw + b"\x3b"
    try:
        picture = Image.open(io.BytesIO(one))
        picture.load()
    except Exception as exc:
        raise _invalid(f"Failed to decode gif: {exc}") from None
    return np.asarray(picture.convert("L") if picture.mode != "L" else picture, np.uint8)


def gif_frames(data: bytes) -> np.ndarray:
    """A GIF file's frames composited as TF does: uint8 ``[frames, height, width, 3]``."""
    _, _, frames = _frames(data)
    # TF's canvas is the largest image's width and height, whatever the screen says
    width, height = max(f.width for f in frames), max(f.height for f in frames)
    out = np.zeros((len(frames), height, width, 3), np.uint8)
    for k, frame in enumerate(frames):
        if k:
            out[k] = out[k - 1]
        top, left = min(frame.top, height), min(frame.left, width)
        bottom = min(frame.top + frame.height, height)
        right = min(frame.left + frame.width, width)
        if bottom <= top or right <= left:
            continue
        if frame.colours is None:
            raise _invalid("Missing color map.")
        indices = _indices(frame)[: bottom - frame.top, : right - frame.left]
        painted = indices != frame.transparent
        if (indices[painted] >= len(frame.colours)).any():
            raise _invalid(
                f"found color index {int(indices[painted].max())} outside of color map "
                f"range {len(frame.colours)}"
            )
        region = out[k, top:bottom, left:right]
        region[painted] = frame.colours[indices[painted]]
    return out


def _infer_decode_gif(op: Operation) -> list:
    contents = op.inputs[0]
    if contents.dtype != dtypes.string:
        raise TypeError(f"contents must be a string tensor, got {contents.dtype.name}")
    if contents.shape.rank not in (None, 0):
        raise ValueError(f"Shape must be rank 0 but is rank {contents.shape.rank}")
    return [(dtypes.uint8, TensorShape([None, None, None, 3]))]


def _decode_gif_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp

    def decode(contents: Any) -> Any:
        value = np.asarray(to_host(contents), dtype=object).reshape(-1)[0]
        return xp.asarray(gif_frames(value.encode() if isinstance(value, str) else value))

    return decode


registry.register(
    registry.OpDef(
        "DecodeGif",
        _infer_decode_gif,
        _decode_gif_kernel,
        registry.NOT_DIFFERENTIABLE,
        gpu_kernel=False,
    )
)


def decode_gif(contents: Any, name: str | None = None) -> Tensor:
    """The frames of a GIF file (a scalar string) as uint8 ``[frames, height, width,
    3]``, each composited over the previous one as TF does (see the module docstring).

    Raises:
        ValueError: ``contents`` is not a scalar.
        InvalidArgumentError: when run, the string is not a well-formed GIF file.
    """
    contents = convert_to_tensor(contents, dtype=dtypes.string, name="contents")
    return apply_op("DecodeGif", [contents], {}, name=name)
