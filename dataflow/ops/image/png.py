"""``tf.image.encode_png`` (``EncodePng``) with the standard library's ``zlib``, and
``decode_and_crop_jpeg`` (decoding, then a crop window).

A PNG file here is the 8-byte signature, an ``IHDR`` chunk (width, height, bit depth 8
or 16, colour type gray / gray+alpha / RGB / RGBA for 1 to 4 channels, no interlace), one
``IDAT`` chunk and ``IEND``; each chunk is length, type, data and the CRC-32 of type and
data. The image data is every row prefixed by filter byte 0 (no filter), samples
big-endian, compressed by ``zlib`` at ``compression`` (-1: zlib's default). Building the
rows is one ``reshape`` and ``concatenate`` of the whole image; the file bytes differ
from libpng's (which picks filters per row), the pixels they decode to do not.
Runs on the host (the output is a string); not differentiable.
"""

from __future__ import annotations

import struct
import zlib
from typing import Any

import numpy as np

from ...framework import dtypes, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor
from ...framework.scopes import name_scope
from ...framework.tensor_shape import TensorShape
from ..build import apply_op
from ..host import to_host
from .image_ops import crop_to_bounding_box, decode_image

_COLOUR_TYPE = {1: 0, 2: 4, 3: 2, 4: 6}


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png_bytes(image: np.ndarray, compression: int = -1) -> bytes:
    """A ``[height, width, channels]`` uint8 or uint16 array as a PNG file."""
    height, width, channels = image.shape
    depth = 16 if image.dtype == np.uint16 else 8
    samples = image.astype(">u2" if depth == 16 else np.uint8).reshape(height, -1)
    rows = np.concatenate([np.zeros((height, 1), np.uint8), samples.view(np.uint8)], axis=1)
    header = struct.pack(">IIBBBBB", width, height, depth, _COLOUR_TYPE[channels], 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(rows.tobytes(), compression))
        + _chunk(b"IEND", b"")
    )


def _infer_encode(op: Operation) -> list:
    image = op.inputs[0]
    if image.dtype != dtypes.uint8:  # dataflow has no uint16 dtype
        raise TypeError(f"EncodePng: image must be uint8, got {image.dtype.name}")
    if image.shape.rank not in (None, 3):
        raise ValueError(
            f"EncodePng: image must be 3-D [height, width, channels], got {image.shape}"
        )
    channels = image.shape.as_list()[-1] if image.shape.rank else None
    if channels not in (None, 1, 2, 3, 4):
        raise ValueError(f"EncodePng: image must have 1, 2, 3 or 4 channels, got {channels}")
    return [(dtypes.string, TensorShape([]))]


def _encode_kernel(ctx: Any, attrs: dict) -> Any:
    level = attrs["compression"]
    return lambda image: np.array(png_bytes(np.asarray(to_host(image)), level), dtype=object)


registry.register(
    registry.OpDef(
        "EncodePng", _infer_encode, _encode_kernel, registry.NOT_DIFFERENTIABLE, gpu_kernel=False
    )
)


def encode_png(image: Any, compression: int = -1, name: str | None = None) -> Tensor:
    """A uint8 image ``[height, width, channels]`` (1 to 4 channels) as PNG bytes
    (``tf.image.encode_png``); ``compression`` is zlib's level, -1 its default.

    Raises:
        TypeError: another dtype.
        ValueError: not 3-D, another channel count, or a level outside ``[-1, 9]``.
    """
    if not -1 <= int(compression) <= 9:
        raise ValueError(f"compression should be in [-1,9], got {compression}")
    x = convert_to_tensor(image, name="image")
    return apply_op("EncodePng", [x], {"compression": int(compression)}, name=name)


def decode_and_crop_jpeg(
    contents: Any,
    crop_window: Any,
    channels: int = 0,
    ratio: int = 1,
    fancy_upscaling: bool = True,
    try_recover_truncated: bool = False,
    acceptable_fraction: float = 1,
    dct_method: str = "",
    name: str | None = None,
) -> Tensor:
    """The ``crop_window = [y, x, height, width]`` of a decoded JPEG (or PNG, GIF, BMP)
    image (``tf.image.decode_and_crop_jpeg``): decoding, then ``crop_to_bounding_box``.

    Raises:
        ValueError: ``ratio`` other than 1 (downscaled decoding is not provided).
    """
    if ratio != 1:
        raise ValueError("decode_and_crop_jpeg: ratio other than 1 is not provided")
    with name_scope(name, "decode_and_crop_jpeg", [contents]):
        image = decode_image(contents, channels=channels or None)
        window = convert_to_tensor(crop_window, dtype=dtypes.int32, name="crop_window")
        return crop_to_bounding_box(image, window[0], window[1], window[2], window[3])
