"""``tf.image`` basics as TF1 computes them: resizing (bilinear and nearest neighbour,
TF1's legacy corner rules), flips, crops and pads (central, random, to a bounding box,
``resize_image_with_crop_or_pad``), dtype conversion, grayscale, standardization,
brightness and contrast (fixed and random), and PNG/JPEG decoding.

Everything but decoding is a composite of existing ops, so gradients come for free:
resizing gathers the source rows and columns (positions and weights computed while
building, from the static sizes) and interpolates. Images are ``[height, width,
channels]`` or batches ``[batch, height, width, channels]``. Random variants draw from
this project's seeded stream, not TF's.
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np

from ...framework import dtypes, errors, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor
from ...framework.scopes import control_dependencies, name_scope
from ...framework.tensor_shape import TensorShape
from ...framework.tensor_util import constant_value
from .. import array as array_ops
from ..array.indexing import gather
from ..build import apply_op
from ..cast import cast
from ..constant import constant
from ..control.group import identity
from ..debug.check_ops import assert_greater_equal
from ..linalg.contraction import tensordot
from ..math.arith import maximum, minimum, multiply, sqrt
from ..math.compare import less, where
from ..math.reduce import reduce_mean
from ..random.random_ops import random_uniform


class ResizeMethod:
    BILINEAR = 0
    NEAREST_NEIGHBOR = 1
    BICUBIC = 2
    AREA = 3


def _as_batch(image: Any) -> tuple[Tensor, bool]:
    image = convert_to_tensor(image)
    rank = image.shape.rank
    if rank not in (3, 4):
        raise ValueError(f"'image' must have either 3 or 4 dimensions, got shape {image.shape}")
    return (array_ops.expand_dims(image, 0), True) if rank == 3 else (image, False)


def _unbatch(images: Tensor, was_single: bool) -> Tensor:
    return array_ops.squeeze(images, [0]) if was_single else images


def static_hw(images: Tensor, what: str) -> tuple[int, int]:
    dims = images.shape.as_list()
    if dims[1] is None or dims[2] is None:
        raise ValueError(
            f"{what} needs the image's height and width at build time, got {images.shape}"
        )
    return int(dims[1]), int(dims[2])


def _scale(size_in: int, size_out: int, align_corners: bool) -> float:
    if align_corners and size_out > 1:
        return (size_in - 1) / (size_out - 1)
    return size_in / size_out


def _bilinear_axis(size_in: int, size_out: int, align_corners: bool) -> tuple:
    position = np.arange(size_out) * _scale(size_in, size_out, align_corners)
    low = np.floor(position).astype(np.int64)
    high = np.minimum(low + 1, size_in - 1)
    return low, high, (position - low).astype(np.float32)


def _nearest_axis(size_in: int, size_out: int, align_corners: bool) -> np.ndarray:
    position = np.arange(size_out) * _scale(size_in, size_out, align_corners)
    index = np.round(position) if align_corners else np.floor(position)
    return np.minimum(index, size_in - 1).astype(np.int64)


def resize_bilinear(
    images: Any, size: Any, align_corners: bool = False, name: str | None = None
) -> Tensor:
    """Bilinear resizing to ``size = [height, width]`` (float32), TF1's legacy rule:
    output pixel ``y`` samples input position ``y * in / out``."""
    with name_scope(name, "ResizeBilinear", [images]):
        batch, single = _as_batch(images)
        (h, w), (oh, ow) = static_hw(batch, "resize_bilinear"), static_size(size)
        x = cast(batch, dtypes.float32)
        top, bottom, dy = _bilinear_axis(h, oh, align_corners)
        left, right, dx = _bilinear_axis(w, ow, align_corners)
        rows_top, rows_bottom = gather(x, top, axis=1), gather(x, bottom, axis=1)
        dx_t = constant(dx.reshape(1, 1, ow, 1))
        top_line = _lerp(gather(rows_top, left, axis=2), gather(rows_top, right, axis=2), dx_t)
        bottom_line = _lerp(
            gather(rows_bottom, left, axis=2), gather(rows_bottom, right, axis=2), dx_t
        )
        out = _lerp(top_line, bottom_line, constant(dy.reshape(1, oh, 1, 1)))
        return _unbatch(out, single)


def _lerp(a: Tensor, b: Tensor, t: Tensor) -> Tensor:
    return a + (b - a) * t


def resize_nearest_neighbor(
    images: Any, size: Any, align_corners: bool = False, name: str | None = None
) -> Tensor:
    """Nearest-neighbour resizing to ``size`` (the input's dtype), TF1's legacy rule."""
    with name_scope(name, "ResizeNearestNeighbor", [images]):
        batch, single = _as_batch(images)
        (h, w), (oh, ow) = static_hw(batch, "resize_nearest_neighbor"), static_size(size)
        rows = gather(batch, _nearest_axis(h, oh, align_corners), axis=1)
        return _unbatch(gather(rows, _nearest_axis(w, ow, align_corners), axis=2), single)


def static_size(size: Any) -> tuple[int, int]:
    value = (
        constant_value(convert_to_tensor(size, dtype=dtypes.int32))
        if isinstance(size, Tensor)
        else size
    )
    if value is None:
        raise ValueError("resize needs its output size at build time")
    height, width = (int(v) for v in np.asarray(value).reshape(-1))
    if height <= 0 or width <= 0:
        raise ValueError(f"size must be positive, got {height}x{width}")
    return height, width


def resize_images(
    images: Any,
    size: Any,
    method: int = ResizeMethod.BILINEAR,
    align_corners: bool = False,
    preserve_aspect_ratio: bool = False,
    name: str | None = None,
) -> Tensor:
    """Resizes to ``size`` with ``method`` (``ResizeMethod.BILINEAR`` or
    ``NEAREST_NEIGHBOR``); bilinear results are float32, as in TF1.

    Raises:
        ValueError: another method, or ``preserve_aspect_ratio`` (not provided).
    """
    if preserve_aspect_ratio:
        raise ValueError("resize_images: preserve_aspect_ratio is not provided")
    if method == ResizeMethod.BILINEAR:
        return resize_bilinear(images, size, align_corners, name)
    if method == ResizeMethod.NEAREST_NEIGHBOR:
        return resize_nearest_neighbor(images, size, align_corners, name)
    raise ValueError(f"resize_images: method {method} is not provided (bilinear and nearest are)")


# --- flips, crops ----------------------------------------------------------------------------
def flip_left_right(image: Any) -> Tensor:
    """The image mirrored horizontally (the width axis)."""
    batch, single = _as_batch(image)
    return _unbatch(array_ops.reverse(batch, [2]), single)


def flip_up_down(image: Any) -> Tensor:
    """The image mirrored vertically (the height axis)."""
    batch, single = _as_batch(image)
    return _unbatch(array_ops.reverse(batch, [1]), single)


def _random_flip(image: Any, axis: int, seed: int | None) -> Tensor:
    batch, single = _as_batch(image)
    n = array_ops.shape(batch)[:1]
    flip = less(random_uniform(n, seed=seed), 0.5)  # one coin per image
    mask = array_ops.reshape(flip, [-1, 1, 1, 1]) & array_ops.ones_like(batch, dtype=dtypes.bool)
    return _unbatch(where(mask, array_ops.reverse(batch, [axis]), batch), single)


def random_flip_left_right(image: Any, seed: int | None = None) -> Tensor:
    """Each image mirrored horizontally with probability 1/2."""
    return _random_flip(image, 2, seed)


def random_flip_up_down(image: Any, seed: int | None = None) -> Tensor:
    """Each image mirrored vertically with probability 1/2."""
    return _random_flip(image, 1, seed)


def central_crop(image: Any, central_fraction: float) -> Tensor:
    """The central ``central_fraction`` of the height and width (TF1's offsets).

    Raises:
        ValueError: ``central_fraction`` not in (0, 1].
    """
    if not 0.0 < central_fraction <= 1.0:
        raise ValueError("central_fraction must be within (0, 1]")
    batch, single = _as_batch(image)
    if central_fraction == 1.0:
        return _unbatch(batch, single)
    h, w = static_hw(batch, "central_crop")
    top = int((h - h * central_fraction) / 2)
    left = int((w - w * central_fraction) / 2)
    cropped = batch[:, top : h - top, left : w - left, :]
    return _unbatch(cropped, single)


def random_crop(value: Any, size: Any, seed: int | None = None, name: str | None = None) -> Tensor:
    """A window of shape ``size`` at a random offset of ``value`` (any rank).

    Raises:
        InvalidArgumentError: when run, ``size`` is larger than ``value``.
    """
    with name_scope(name, "random_crop", [value, size]):
        value = convert_to_tensor(value)
        size = convert_to_tensor(size, dtype=dtypes.int32)
        shape = array_ops.shape(value)
        limit = shape - size + 1
        check = assert_greater_equal(shape, size, message="Need value.shape >= size")
        with control_dependencies([check]):
            offset = cast(
                random_uniform(array_ops.shape(shape), 0.0, 1.0, seed=seed)
                * cast(limit, dtypes.float32),
                dtypes.int32,
            )
        return array_ops.slice_(value, minimum(offset, limit - 1), size)


def _static_or_tensor(value: Any) -> Any:
    """A Python int when ``value`` is known at build time, else the int32 tensor."""
    known = constant_value(convert_to_tensor(value)) if isinstance(value, Tensor) else value
    if known is not None:
        return int(known)
    return cast(value, dtypes.int32)


def _image_dims(image: Tensor) -> list:
    """``image``'s dimensions: Python ints where static, scalar tensors elsewhere."""
    dynamic = array_ops.shape(image)
    return [d if d is not None else dynamic[i] for i, d in enumerate(image.shape.as_list())]


def _checked_positive(value: Any, what: str) -> Any:
    if not isinstance(value, Tensor) and value <= 0:
        raise ValueError(f"{what} must be > 0.")
    return value


def crop_to_bounding_box(
    image: Any, offset_height: Any, offset_width: Any, target_height: Any, target_width: Any
) -> Tensor:
    """The ``target_height`` x ``target_width`` window of ``image`` (3-D or 4-D) whose
    top-left corner is at ``(offset_height, offset_width)``.

    Raises:
        ValueError: a static offset is negative, a static size is not positive, or the
            window does not fit in the image's static size.
    """
    with name_scope(None, "crop_to_bounding_box", [image]):
        batch, single = _as_batch(image)
        oh, ow, th, tw = (
            _static_or_tensor(v) for v in (offset_height, offset_width, target_height, target_width)
        )
        _, height, width, _ = _image_dims(batch)
        for value, what in ((oh, "offset_height"), (ow, "offset_width")):
            if not isinstance(value, Tensor) and value < 0:
                raise ValueError(f"{what} must be >= 0.")
        _checked_positive(th, "target_height")
        _checked_positive(tw, "target_width")
        for a, b, c, what in ((oh, th, height, "height"), (ow, tw, width, "width")):
            if not any(isinstance(v, Tensor) for v in (a, b, c)) and a + b > c:
                raise ValueError(f"{what} must be >= target + offset.")
        cropped = array_ops.slice_(
            batch, array_ops.stack([0, oh, ow, 0]), array_ops.stack([-1, th, tw, -1])
        )
        static = [
            batch.shape.as_list()[0],
            *(None if isinstance(v, Tensor) else v for v in (th, tw)),
            batch.shape.as_list()[3],
        ]
        cropped.set_shape(static)
        return _unbatch(cropped, single)


def pad_to_bounding_box(
    image: Any, offset_height: Any, offset_width: Any, target_height: Any, target_width: Any
) -> Tensor:
    """``image`` (3-D or 4-D) placed at ``(offset_height, offset_width)`` on a zero
    canvas of ``target_height`` x ``target_width``.

    Raises:
        ValueError: a static offset is negative or the image does not fit.
    """
    with name_scope(None, "pad_to_bounding_box", [image]):
        batch, single = _as_batch(image)
        oh, ow, th, tw = (
            _static_or_tensor(v) for v in (offset_height, offset_width, target_height, target_width)
        )
        _, height, width, _ = _image_dims(batch)
        after_h = th - oh - height
        after_w = tw - ow - width
        checks = (
            (oh, "offset_height must be >= 0"),
            (ow, "offset_width must be >= 0"),
            (after_h, "height must be <= target - offset"),
            (after_w, "width must be <= target - offset"),
        )
        for value, message in checks:
            if not isinstance(value, Tensor) and value < 0:
                raise ValueError(message)
        paddings = array_ops.reshape(
            array_ops.stack([0, 0, oh, after_h, ow, after_w, 0, 0]), [4, 2]
        )
        padded = array_ops.pad(batch, paddings)
        static = [
            batch.shape.as_list()[0],
            *(None if isinstance(v, Tensor) else v for v in (th, tw)),
            batch.shape.as_list()[3],
        ]
        padded.set_shape(static)
        return _unbatch(padded, single)


def resize_image_with_crop_or_pad(image: Any, target_height: Any, target_width: Any) -> Tensor:
    """``image`` (3-D or 4-D) cropped or zero-padded, evenly on both sides, to
    ``target_height`` x ``target_width`` (TF1's offsets: the larger half of an odd
    difference is cropped or padded at the bottom and right).

    Raises:
        ValueError: the image is not 3-D or 4-D, or a static target size is not positive.
    """
    with name_scope(None, "resize_image_with_crop_or_pad", [image]):
        batch, single = _as_batch(image)
        th = _checked_positive(_static_or_tensor(target_height), "target_height")
        tw = _checked_positive(_static_or_tensor(target_width), "target_width")
        _, height, width, _ = _image_dims(batch)

        def pick(fn: Any, x: Any, y: Any) -> Any:
            if isinstance(x, Tensor) or isinstance(y, Tensor):
                return (maximum if fn is max else minimum)(x, y)
            return fn(x, y)

        width_diff = tw - width
        height_diff = th - height
        cropped = crop_to_bounding_box(
            batch,
            pick(max, -height_diff // 2, 0),
            pick(max, -width_diff // 2, 0),
            pick(min, th, height),
            pick(min, tw, width),
        )
        resized = pad_to_bounding_box(
            cropped, pick(max, height_diff // 2, 0), pick(max, width_diff // 2, 0), th, tw
        )
        return _unbatch(resized, single)


def rgb_to_grayscale(images: Any, name: str | None = None) -> Tensor:
    """Luma of RGB ``images`` (``[..., 3]`` to ``[..., 1]``): ``0.2989 r + 0.5870 g +
    0.1140 b``, computed in float32 and converted back to the images' dtype."""
    with name_scope(name, "rgb_to_grayscale", [images]) as scope:
        images = convert_to_tensor(images, name="images")
        flt_image = convert_image_dtype(images, dtypes.float32)
        rgb_weights = constant([0.2989, 0.5870, 0.1140], dtype=dtypes.float32)
        gray = tensordot(flt_image, rgb_weights, [[-1], [-1]])
        gray = array_ops.expand_dims(gray, -1)
        return convert_image_dtype(gray, images.dtype, name=scope)


def grayscale_to_rgb(images: Any, name: str | None = None) -> Tensor:
    """Grayscale ``images`` (``[..., 1]``) with the channel repeated three times.

    Raises:
        ValueError: the last dimension is not 1, or the rank is below 2.
    """
    with name_scope(name, "grayscale_to_rgb", [images]) as scope:
        images = convert_to_tensor(images, name="images")
        rank = images.shape.rank
        if rank is not None and rank < 2:
            raise ValueError("A grayscale image must be at least two-dimensional.")
        if images.shape.rank is not None and images.shape.as_list()[-1] not in (None, 1):
            raise ValueError("Last dimension of a grayscale image should be size 1.")
        if rank is None:
            raise ValueError("grayscale_to_rgb needs images of known rank")
        rgb = array_ops.tile(images, [1] * (rank - 1) + [3], name=scope)
        rgb.set_shape(images.shape[:-1].concatenate([3]))
        return rgb


# --- values --------------------------------------------------------------------------------
def _range_max(dtype: dtypes.DType) -> float:
    return float(np.iinfo(dtype.as_numpy_dtype).max) if dtype.is_integer else 1.0


def convert_image_dtype(
    image: Any, dtype: Any, saturate: bool = False, name: str | None = None
) -> Tensor:
    """Converts between integer images (0..max) and float images (0..1), TF1's rule:
    int to float divides by the int's max, float to int multiplies by ``max + 0.5``."""
    with name_scope(name, "convert_image", [image]) as scope:
        image = convert_to_tensor(image)
        dtype = dtypes.as_dtype(dtype)
        # The result is named by the scope, as TF1 names it.
        if image.dtype == dtype:
            return identity(image, name=scope)
        if image.dtype.is_integer and dtype.is_integer:
            scale = (_range_max(dtype) + 1) / (_range_max(image.dtype) + 1)
            return cast(cast(image, dtypes.float64) * scale, dtype, name=scope)
        if image.dtype.is_integer:
            return multiply(cast(image, dtype), 1.0 / _range_max(image.dtype), name=scope)
        if dtype.is_integer:
            scaled = image * (_range_max(dtype) + 0.5)
            if saturate:
                scaled = minimum(maximum(scaled, 0.0), _range_max(dtype))
            return cast(scaled, dtype, name=scope)
        return cast(image, dtype, name=scope)


def per_image_standardization(image: Any) -> Tensor:
    """Each image scaled to mean 0 and unit variance: ``(x - mean) / max(stddev,
    1 / sqrt(pixels))`` over its pixels and channels (float32)."""
    with name_scope(None, "per_image_standardization", [image]):
        batch, single = _as_batch(image)
        x = cast(batch, dtypes.float32)
        count = cast(array_ops.size(x[0]), dtypes.float32)
        mean = reduce_mean(x, axis=[1, 2, 3], keepdims=True)
        variance = reduce_mean((x - mean) * (x - mean), axis=[1, 2, 3], keepdims=True)
        adjusted = maximum(sqrt(variance), 1.0 / sqrt(count))
        return _unbatch((x - mean) / adjusted, single)


def adjust_brightness(image: Any, delta: Any) -> Tensor:
    """``delta`` added to every value (an integer image goes through float and back)."""
    image = convert_to_tensor(image)
    as_float = convert_image_dtype(image, dtypes.float32)
    return convert_image_dtype(as_float + delta, image.dtype, saturate=True)


def adjust_contrast(images: Any, contrast_factor: Any) -> Tensor:
    """Each channel of each image pushed away from (or towards) its mean by
    ``contrast_factor``: ``(x - mean) * factor + mean``."""
    images = convert_to_tensor(images)
    x = convert_image_dtype(images, dtypes.float32)
    mean = reduce_mean(x, axis=[-3, -2], keepdims=True)
    out = (x - mean) * contrast_factor + mean
    return convert_image_dtype(out, images.dtype, saturate=True)


def random_brightness(image: Any, max_delta: float, seed: int | None = None) -> Tensor:
    """``adjust_brightness`` by a delta drawn from ``[-max_delta, max_delta)``."""
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    return adjust_brightness(image, random_uniform([], -max_delta, max_delta, seed=seed))


def random_contrast(image: Any, lower: float, upper: float, seed: int | None = None) -> Tensor:
    """``adjust_contrast`` by a factor drawn from ``[lower, upper)``."""
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")
    return adjust_contrast(image, random_uniform([], lower, upper, seed=seed))


# --- decoding --------------------------------------------------------------------------------
def _infer_decode(op: Operation) -> list:
    if op.inputs[0].dtype != dtypes.string:
        raise TypeError(f"contents must be a string tensor, got {op.inputs[0].dtype.name}")
    channels = op.attrs["channels"]
    return [(dtypes.uint8, TensorShape([None, None, channels or None]))]


def _decode_kernel(ctx: Any, attrs: dict) -> Any:
    xp, channels = ctx.xp, attrs["channels"]
    modes = {1: "L", 3: "RGB", 4: "RGBA"}

    def decode(contents: Any) -> Any:
        from PIL import Image

        data = contents.item() if hasattr(contents, "item") else contents
        try:
            opened = Image.open(io.BytesIO(data))
            opened.load()
        except Exception as exc:
            raise errors.InvalidArgumentError(None, None, f"Invalid image data: {exc}") from None
        picture: Image.Image = opened
        if channels == 1 and opened.mode not in ("L", "P", "1"):
            # libpng's RGB-to-gray weights (0.299, 0.587, 0.114 in 1/32768ths), which TF
            # decodes with; Pillow's own conversion rounds differently.
            rgb = np.asarray(opened.convert("RGB"), np.int64)
            gray = (9798 * rgb[..., 0] + 19235 * rgb[..., 1] + 3735 * rgb[..., 2]) >> 15
            return xp.asarray(gray.astype(np.uint8)[..., None])
        if channels:
            picture = opened.convert(modes[channels])
        elif opened.mode not in ("L", "RGB", "RGBA"):
            picture = opened.convert("RGBA" if "A" in opened.mode else "RGB")
        pixels = np.asarray(picture, np.uint8)
        return xp.asarray(pixels[..., None] if pixels.ndim == 2 else pixels)

    return decode


registry.register(
    registry.OpDef(
        "DecodeImage",
        _infer_decode,
        _decode_kernel,
        registry.NOT_DIFFERENTIABLE,
        gpu_kernel=False,
    )
)


def decode_image(contents: Any, channels: int | None = None, name: str | None = None) -> Tensor:
    """A PNG, JPEG, GIF (first frame) or BMP image as uint8 ``[h, w, channels]``
    (``channels`` 1, 3 or 4 converts; ``None`` keeps the file's)."""
    if channels not in (None, 0, 1, 3, 4):
        raise ValueError(f"channels must be 0, 1, 3 or 4, got {channels}")
    contents = convert_to_tensor(contents, dtype=dtypes.string)
    return apply_op("DecodeImage", [contents], {"channels": int(channels or 0)}, name=name)


decode_png = decode_jpeg = decode_image
