"""Area and bicubic resizing (``resize_area``, ``resize_bicubic``), ``resize_images``
with all four methods and ``preserve_aspect_ratio`` (``tf.image.resize`` in TF 1.15),
and ``resize_image_with_pad``.

Both resizers are separable: each output row is a fixed weighted sum of input rows,
and likewise for columns, so the resize is ``Wy @ image @ Wx^T`` per image and channel
(two ``einsum``s with constant matrices built at graph build time from the static
sizes); gradients come from the products.

* Area (TF1's rule): with ``scale = in / out`` (``(in - 1) / (out - 1)`` with
  ``align_corners``), output row ``y`` covers input ``[y scale, (y + 1) scale)``; input
  row ``i`` weighs the length of its overlap with that span (index clamped into the
  image), and the sum is divided by ``scale``.
* Bicubic (TF1's legacy rule, ``half_pixel_centers`` off): output row ``y`` samples
  input position ``y scale`` with Keys' cubic kernel (``a = -0.75``) on the four rows
  around it (indices clamped); as TF's kernel reads a 1024-entry table, the fraction
  is rounded to a multiple of 1/1024 first.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...framework import dtypes
from ...framework.graph import Tensor, convert_to_tensor
from ...framework.scopes import name_scope
from ..cast import cast
from ..constant import constant
from ..linalg.contraction import einsum
from .image_ops import (
    ResizeMethod,
    pad_to_bounding_box,
    resize_bilinear,
    resize_nearest_neighbor,
    static_hw,
    static_size,
)


def _scale(size_in: int, size_out: int, align_corners: bool) -> float:
    if align_corners and size_out > 1:
        return (size_in - 1) / (size_out - 1)
    return size_in / size_out


def area_weights(size_in: int, size_out: int, align_corners: bool) -> np.ndarray:
    """``[size_out, size_in]``: each output row's share of each input row."""
    scale = np.float32(_scale(size_in, size_out, align_corners))
    start = np.arange(size_out, dtype=np.float32) * scale
    stop = (np.arange(size_out, dtype=np.float32) + 1) * scale
    span = int(np.ceil(scale)) + 2
    rows = np.floor(start).astype(np.int64)[:, None] + np.arange(span)[None, :]
    inside = rows < np.ceil(stop)[:, None]
    overlap = np.minimum(rows + 1, stop[:, None]) - np.maximum(rows, start[:, None])
    weight = np.where(inside, np.maximum(overlap, 0.0), 0.0) / scale
    out = np.zeros((size_out, size_in))
    np.add.at(
        out,
        (np.repeat(np.arange(size_out), span), np.clip(rows, 0, size_in - 1).reshape(-1)),
        weight.reshape(-1),
    )
    return out


def _keys(x: np.ndarray, a: float = -0.75) -> np.ndarray:
    x = np.abs(x)
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return np.where(x <= 1, near, np.where(x < 2, far, 0.0))


def bicubic_weights(size_in: int, size_out: int, align_corners: bool) -> np.ndarray:
    """``[size_out, size_in]``: Keys' cubic weights of TF1's legacy bicubic resize."""
    scale = np.float32(_scale(size_in, size_out, align_corners))
    position = np.arange(size_out, dtype=np.float32) * scale
    floor = np.floor(position).astype(np.int64)
    delta = np.round((position - floor) * 1024.0) / 1024.0  # TF's table resolution
    offsets = np.arange(-1, 3)
    weight = _keys(delta[:, None] - offsets[None, :]).astype(np.float32)
    rows = np.clip(floor[:, None] + offsets[None, :], 0, size_in - 1)
    out = np.zeros((size_out, size_in))
    np.add.at(out, (np.repeat(np.arange(size_out), 4), rows.reshape(-1)), weight.reshape(-1))
    return out


def _separable(
    images: Any, size: Any, align_corners: bool, weights: Any, what: str, name: str | None
) -> Tensor:
    with name_scope(name, what, [images]):
        x = convert_to_tensor(images, name="images")
        if x.shape.rank not in (3, 4):
            raise ValueError(f"'images' must have either 3 or 4 dimensions, got {x.shape}")
        batch = x if x.shape.rank == 4 else x[None]
        (h, w), (oh, ow) = static_hw(batch, what), static_size(size)
        flt = cast(batch, dtypes.float32)
        wy = constant(weights(h, oh, align_corners).astype(np.float32))
        wx = constant(weights(w, ow, align_corners).astype(np.float32))
        out = einsum("pw,nowc->nopc", wx, einsum("oh,nhwc->nowc", wy, flt))
        return out if x.shape.rank == 4 else out[0]


def resize_area(
    images: Any, size: Any, align_corners: bool = False, name: str | None = None
) -> Tensor:
    """Area-averaging resize to ``size = [height, width]`` (``tf.image.resize_area``),
    float32.

    Raises:
        ValueError: images not 3-D or 4-D, or sizes unknown at graph build time.
    """
    return _separable(images, size, align_corners, area_weights, "ResizeArea", name)


def resize_bicubic(
    images: Any,
    size: Any,
    align_corners: bool = False,
    name: str | None = None,
    half_pixel_centers: bool = False,
) -> Tensor:
    """Bicubic resize to ``size = [height, width]`` (``tf.image.resize_bicubic``), TF1's
    legacy sampling, float32.

    Raises:
        ValueError: images not 3-D or 4-D, sizes unknown at graph build time, or
            ``half_pixel_centers`` (not provided).
    """
    if half_pixel_centers:
        raise ValueError("resize_bicubic: half_pixel_centers is not provided")
    return _separable(images, size, align_corners, bicubic_weights, "ResizeBicubic", name)


def _aspect_size(images: Tensor, size: Any) -> list[int]:
    batch = images if images.shape.rank == 4 else images[None]
    h, w = static_hw(batch, "resize_images")
    nh, nw = static_size(size)
    factor = min(np.float32(nh) / np.float32(h), np.float32(nw) / np.float32(w))
    return [int(np.round(np.float32(factor * h))), int(np.round(np.float32(factor * w)))]


def resize_images(
    images: Any,
    size: Any,
    method: int = ResizeMethod.BILINEAR,
    align_corners: bool = False,
    preserve_aspect_ratio: bool = False,
    name: str | None = None,
) -> Tensor:
    """Resizes 3-D or 4-D ``images`` to ``size`` with ``method`` (``ResizeMethod``:
    bilinear, nearest neighbour, bicubic or area; TF1's ``tf.image.resize_images`` and
    ``tf.image.resize``). Results are float32 except nearest neighbour, which keeps the
    dtype; a size equal to the image's returns the images unchanged, as TF1 does.
    ``preserve_aspect_ratio`` scales both sides by the smaller factor.

    Raises:
        ValueError: another method, images not 3-D or 4-D, or sizes unknown at build
            time.
    """
    with name_scope(name, "resize_images", [images, size]):
        x = convert_to_tensor(images, name="images")
        if x.shape.rank not in (3, 4):
            raise ValueError(f"'images' must have either 3 or 4 dimensions, got {x.shape}")
        target = _aspect_size(x, size) if preserve_aspect_ratio else list(static_size(size))
        batch = x if x.shape.rank == 4 else x[None]
        if list(static_hw(batch, "resize_images")) == target:
            return x
        if method == ResizeMethod.BILINEAR:
            return resize_bilinear(x, target, align_corners)
        if method == ResizeMethod.NEAREST_NEIGHBOR:
            return resize_nearest_neighbor(x, target, align_corners)
        if method == ResizeMethod.BICUBIC:
            return resize_bicubic(x, target, align_corners)
        if method == ResizeMethod.AREA:
            return resize_area(x, target, align_corners)
        raise ValueError(f"Resize method is not implemented: {method}")


def resize_image_with_pad(
    image: Any,
    target_height: int,
    target_width: int,
    method: int = ResizeMethod.BILINEAR,
    align_corners: bool = False,
) -> Tensor:
    """``image`` scaled to fit ``target_height`` x ``target_width`` keeping its aspect
    ratio, then zero-padded evenly to that size (``tf.image.resize_image_with_pad``).

    Raises:
        ValueError: a target size that is not positive, or sizes unknown at build time.
    """
    with name_scope(None, "resize_image_with_pad", [image]):
        x = convert_to_tensor(image, name="image")
        if x.shape.rank not in (3, 4):
            raise ValueError(f"'image' must have either 3 or 4 dimensions, got {x.shape}")
        if target_height <= 0 or target_width <= 0:
            raise ValueError("target_height and target_width must be > 0.")
        batch = x if x.shape.rank == 4 else x[None]
        h, w = static_hw(batch, "resize_image_with_pad")
        ratio = max(
            np.float32(w) / np.float32(target_width), np.float32(h) / np.float32(target_height)
        )
        new_h = np.float32(h) / ratio
        new_w = np.float32(w) / ratio
        pad_h = max(0, int(np.floor((np.float32(target_height) - new_h) / np.float32(2))))
        pad_w = max(0, int(np.floor((np.float32(target_width) - new_w) / np.float32(2))))
        resized = resize_images(
            x, [int(np.floor(new_h)), int(np.floor(new_w))], method, align_corners
        )
        return pad_to_bounding_box(resized, pad_h, pad_w, target_height, target_width)
