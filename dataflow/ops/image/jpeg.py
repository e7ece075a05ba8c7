"""JPEG without decoding it here: ``is_jpeg``, ``extract_jpeg_shape``, ``encode_jpeg``,
and the encode-decode round trips ``adjust_jpeg_quality`` / ``random_jpeg_quality``.

``extract_jpeg_shape`` reads the file's markers only: after the start-of-image marker
``FF D8`` every segment is ``FF``, a marker byte and (except the standalone markers
``D0``-``D8`` and ``01``) a big-endian length counting itself; the first start-of-frame
segment (``C0``-``CF`` but ``C4``, ``C8``, ``CC``) holds the sample precision, the
height, the width and the number of components, which is the channel count.

``encode_jpeg`` hands the pixels to Pillow's libjpeg encoder (quality, progressive,
optimized Huffman tables, 4:2:0 or 4:4:4 chroma) and then sets what Pillow cannot in
the JFIF header: the density unit byte (1: inches, 2: centimetres) and the densities,
and an ``APP1`` segment with the XMP packet (Adobe's namespace line, a zero byte, the
packet) right after the JFIF segment. The bytes differ from TF's libjpeg-turbo output;
the header facts and the pixels they decode to (within JPEG's loss) do not.
``EncodeJpegVariableQuality`` is the same encoder with the quality a tensor, which is
what ``adjust_jpeg_quality`` builds. All of it runs on the host; nothing has a gradient.
"""

from __future__ import annotations

import io
import struct
from typing import Any

import numpy as np

from ...framework import dtypes, errors, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor
from ...framework.scopes import name_scope
from ...framework.tensor_shape import TensorShape
from ..build import apply_op
from ..host import to_host
from ..math.compare import equal
from ..random.random_ops import random_uniform
from ..strings.string_ops import substr
from .image_ops import convert_image_dtype, decode_image

_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
_STANDALONE = frozenset(range(0xD0, 0xD9)) | {0x01}
_XMP_NAMESPACE = b"http://ns.adobe.com/xap/1.0/\x00"
_FORMATS = ("", "grayscale", "rgb")
_UNITS = {"in": 1, "cm": 2}


def _bytes_of(contents: Any) -> bytes:
    value = np.asarray(to_host(contents), dtype=object).reshape(-1)[0]
    return value.encode() if isinstance(value, str) else bytes(value)


def jpeg_header_shape(data: bytes) -> tuple[int, int, int]:
    """``(height, width, components)`` from a JPEG file's first start-of-frame segment.

    Raises:
        InvalidArgumentError: not a JPEG file, or no frame header before the scan.
    """
    bad = errors.InvalidArgumentError(None, None, "Invalid JPEG data or crop window.")
    if data[:2] != b"\xff\xd8":
        raise bad
    pos = 2
    while pos + 4 <= len(data):
        if data[pos] != 0xFF:
            raise bad
        marker = data[pos + 1]
        if marker == 0xFF:  # fill byte before a marker
            pos += 1
            continue
        if marker in _STANDALONE:
            pos += 2
            continue
        if marker in (0xD9, 0xDA):  # end of image, or a scan before any frame header
            raise bad
        (length,) = struct.unpack(">H", data[pos + 2 : pos + 4])
        if marker in _SOF:
            if length < 8 or pos + 10 > len(data):
                raise bad
            height, width, components = struct.unpack(">HHB", data[pos + 5 : pos + 10])
            return height, width, components
        pos += 2 + length
    raise bad


# --- is_jpeg, extract_jpeg_shape ---------------------------------------------------------
def is_jpeg(contents: Any, name: str | None = None) -> Tensor:
    """Whether each string of ``contents`` starts like a JPEG file (``FF D8 FF``): a
    bool tensor of ``contents``'s shape."""
    with name_scope(name, "is_jpeg", [contents]):
        contents = convert_to_tensor(contents, dtype=dtypes.string, name="contents")
        return equal(substr(contents, 0, 3), b"\xff\xd8\xff")


def _infer_shape_op(op: Operation) -> list:
    contents = op.inputs[0]
    if contents.dtype != dtypes.string:
        raise TypeError(f"contents must be a string tensor, got {contents.dtype.name}")
    if contents.shape.rank not in (None, 0):
        raise ValueError(f"Shape must be rank 0 but is rank {contents.shape.rank}")
    return [(op.attrs["output_type"], TensorShape([3]))]


def _shape_kernel(ctx: Any, attrs: dict) -> Any:
    xp, np_type = ctx.xp, attrs["output_type"].as_numpy_dtype

    def extract(contents: Any) -> Any:
        return xp.asarray(np.array(jpeg_header_shape(_bytes_of(contents)), np_type))

    return extract


registry.register(
    registry.OpDef(
        "ExtractJpegShape",
        _infer_shape_op,
        _shape_kernel,
        registry.NOT_DIFFERENTIABLE,
        gpu_kernel=False,
    )
)


def extract_jpeg_shape(
    contents: Any, output_type: Any = dtypes.int32, name: str | None = None
) -> Tensor:
    """``[height, width, channels]`` of a JPEG file (a scalar string) read from its frame
    header, without decoding the image.

    Raises:
        TypeError: ``output_type`` is not int32 or int64.
        ValueError: ``contents`` is not a scalar.
        InvalidArgumentError: when run, the string is not a JPEG file.
    """
    output_type = dtypes.as_dtype(output_type)
    if output_type not in (dtypes.int32, dtypes.int64):
        raise TypeError(
            f"Value passed to parameter 'output_type' has DataType {output_type.name} not in "
            "list of allowed values: int32, int64"
        )
    contents = convert_to_tensor(contents, dtype=dtypes.string, name="contents")
    return apply_op("ExtractJpegShape", [contents], {"output_type": output_type}, name=name)


# --- encode_jpeg -------------------------------------------------------------------------
def _channels_for(fmt: str, image_channels: int) -> int:
    """The channel count ``fmt`` asks for, checked against the image's."""
    if fmt == "":
        if image_channels not in (1, 3):
            raise errors.InvalidArgumentError(
                None, None, f"image must have 1 or 3 channels, got {image_channels}"
            )
        return image_channels
    wanted = 1 if fmt == "grayscale" else 3
    if wanted != image_channels:
        raise errors.InvalidArgumentError(
            None, None, f"format {fmt} expects {wanted} channels, got {image_channels}"
        )
    return wanted


def _with_header(data: bytes, unit: int, x_density: int, y_density: int, xmp: bytes) -> bytes:
    """``data`` with its JFIF densities set and the XMP segment after the JFIF one."""
    if data[2:4] != b"\xff\xe0" or data[6:11] != b"JFIF\x00":
        raise errors.InternalError(None, None, "the JPEG encoder wrote no JFIF header")
    head = bytearray(data[:18])
    head[13:18] = struct.pack(">BHH", unit, x_density, y_density)
    (length,) = struct.unpack(">H", data[4:6])
    end = 4 + length
    segment = b""
    if xmp:
        payload = _XMP_NAMESPACE + xmp
        segment = b"\xff\xe1" + struct.pack(">H", len(payload) + 2) + payload
    return bytes(head) + data[18:end] + segment + data[end:]


def jpeg_bytes(image: np.ndarray, quality: int, attrs: dict) -> bytes:
    """A uint8 ``[height, width, channels]`` array as a JPEG file, by ``attrs`` (the
    ``EncodeJpeg`` attributes but quality)."""
    from PIL import Image

    if not 0 <= quality <= 100:
        raise errors.InvalidArgumentError(None, None, f"quality must be in [0,100], got {quality}")
    channels = _channels_for(attrs["format"], image.shape[2])
    if image.shape[0] == 0 or image.shape[1] == 0:
        raise errors.InvalidArgumentError(
            None, None, f"Invalid image dimensions: {list(image.shape)}"
        )
    picture = Image.fromarray(np.ascontiguousarray(image[..., 0] if channels == 1 else image))
    buffer = io.BytesIO()
    picture.save(
        buffer,
        format="JPEG",
        quality=int(quality),
        progressive=bool(attrs["progressive"]),
        optimize=bool(attrs["optimize_size"]),
        subsampling=2 if attrs["chroma_downsampling"] else 0,
        dpi=(1, 1),  # asks Pillow for a JFIF header; the densities are set below
    )
    xmp = attrs["xmp_metadata"]
    return _with_header(
        buffer.getvalue(),
        _UNITS[attrs["density_unit"]],
        attrs["x_density"],
        attrs["y_density"],
        xmp.encode() if isinstance(xmp, str) else bytes(xmp),
    )


def _infer_encode(op: Operation) -> list:
    image = op.inputs[0]
    if image.dtype != dtypes.uint8:
        raise TypeError(
            f"Value passed to parameter 'image' has DataType {image.dtype.name} not in list "
            "of allowed values: uint8"
        )
    if image.shape.rank not in (None, 3):
        raise ValueError(f"Shape must be rank 3 but is rank {image.shape.rank}")
    if op.type == "EncodeJpegVariableQuality" and op.inputs[1].shape.rank not in (None, 0):
        raise ValueError(f"Shape must be rank 0 but is rank {op.inputs[1].shape.rank}")
    return [(dtypes.string, TensorShape([]))]


def _encode_kernel(ctx: Any, attrs: dict) -> Any:
    def encode(image: Any, quality: Any = None) -> Any:
        level = attrs["quality"] if quality is None else int(np.asarray(to_host(quality)))
        return np.array(jpeg_bytes(np.asarray(to_host(image)), level, attrs), dtype=object)

    return encode


for _op_type in ("EncodeJpeg", "EncodeJpegVariableQuality"):
    registry.register(
        registry.OpDef(
            _op_type,
            _infer_encode,
            _encode_kernel,
            registry.NOT_DIFFERENTIABLE,
            gpu_kernel=False,
        )
    )


def _encode_attrs(
    image: Tensor,
    format: str,
    progressive: bool,
    optimize_size: bool,
    chroma_downsampling: bool,
    density_unit: str,
    x_density: int,
    y_density: int,
    xmp_metadata: Any,
) -> dict:
    if format not in _FORMATS:
        raise ValueError(
            f"Attr 'format' of 'EncodeJpeg' Op passed string '{format}' not in: "
            '"", "grayscale", "rgb".'
        )
    if density_unit not in _UNITS:
        raise ValueError(
            f"Attr 'density_unit' of 'EncodeJpeg' Op passed string '{density_unit}' not in: "
            '"in", "cm".'
        )
    channels = image.shape.as_list()[2] if image.shape.rank == 3 else None
    if channels is not None:
        _channels_for(format, channels)  # TF finds this when run; it is known now
    return {
        "format": format,
        "progressive": bool(progressive),
        "optimize_size": bool(optimize_size),
        "chroma_downsampling": bool(chroma_downsampling),
        "density_unit": density_unit,
        "x_density": int(x_density),
        "y_density": int(y_density),
        "xmp_metadata": xmp_metadata,
    }


def encode_jpeg(
    image: Any,
    format: str = "",
    quality: int = 95,
    progressive: bool = False,
    optimize_size: bool = False,
    chroma_downsampling: bool = True,
    density_unit: str = "in",
    x_density: int = 300,
    y_density: int = 300,
    xmp_metadata: Any = "",
    name: str | None = None,
) -> Tensor:
    """A uint8 image ``[height, width, channels]`` as JPEG bytes (a scalar string).

    Args:
        image: uint8, 1 (grayscale) or 3 (RGB) channels.
        format: ``""`` (by the channel count), ``"grayscale"`` or ``"rgb"``.
        quality: 0 to 100, higher is better and larger.
        progressive: a progressive file (refined in several scans).
        optimize_size: Huffman tables fitted to the image (smaller, slower).
        chroma_downsampling: halve the chroma's resolution (4:2:0) or keep it (4:4:4).
        density_unit: ``"in"`` or ``"cm"``, the unit of the densities.
        x_density: horizontal pixels per density unit.
        y_density: vertical pixels per density unit.
        xmp_metadata: an XMP packet written in the header when not empty.
        name: a name for the op.

    Raises:
        ValueError: ``format`` or ``density_unit`` not one of TF's, or ``image`` not 3-D.
        TypeError: ``image`` not uint8.
        InvalidArgumentError: a channel count ``format`` does not allow, or ``quality``
            outside ``[0, 100]`` (at build time where known, else when run).
    """
    image = convert_to_tensor(image, name="image")
    attrs = _encode_attrs(
        image,
        format,
        progressive,
        optimize_size,
        chroma_downsampling,
        density_unit,
        x_density,
        y_density,
        xmp_metadata,
    )
    if not 0 <= int(quality) <= 100:
        raise errors.InvalidArgumentError(None, None, f"quality must be in [0,100], got {quality}")
    return apply_op("EncodeJpeg", [image], {**attrs, "quality": int(quality)}, name=name)


def _encode_variable_quality(image: Tensor, quality: Any) -> Tensor:
    attrs = _encode_attrs(image, "", False, False, True, "in", 300, 300, "")
    quality = convert_to_tensor(quality, dtype=dtypes.int32, name="quality")
    return apply_op("EncodeJpegVariableQuality", [image, quality], {**attrs, "quality": 95})


# --- round trips -------------------------------------------------------------------------
def adjust_jpeg_quality(image: Any, jpeg_quality: Any, name: str | None = None) -> Tensor:
    """``image`` encoded as JPEG at ``jpeg_quality`` (an int or an int32 scalar tensor,
    0 to 100) and decoded again, in ``image``'s dtype: a float image goes to uint8 and
    back by ``convert_image_dtype`` (saturating).

    Raises:
        ValueError: ``image`` is not 3-D.
    """
    with name_scope(name, "adjust_jpeg_quality", [image]):
        image = convert_to_tensor(image, name="image")
        channels = image.shape.as_list()[-1] if image.shape.rank else None
        original = image.dtype
        pixels = convert_image_dtype(image, dtypes.uint8, saturate=True)
        encoded = _encode_variable_quality(pixels, jpeg_quality)
        decoded = decode_image(encoded, channels=channels or None)
        return convert_image_dtype(decoded, original, saturate=True)


def random_jpeg_quality(
    image: Any, min_jpeg_quality: int, max_jpeg_quality: int, seed: int | None = None
) -> Tensor:
    """``adjust_jpeg_quality`` at a quality drawn uniformly from the integers of
    ``[min_jpeg_quality, max_jpeg_quality)``.

    Raises:
        ValueError: a bound outside ``[0, 100]``, or ``min >= max``.
    """
    if not (0 <= min_jpeg_quality <= 100 and 0 <= max_jpeg_quality <= 100):
        raise ValueError("jpeg encoding range must be between 0 and 100.")
    if min_jpeg_quality >= max_jpeg_quality:
        raise ValueError("`min_jpeg_quality` must be less than `max_jpeg_quality`.")
    quality = random_uniform([], min_jpeg_quality, max_jpeg_quality, dtype=dtypes.int32, seed=seed)
    return adjust_jpeg_quality(image, quality)
