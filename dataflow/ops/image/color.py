"""Colour spaces and colour adjustments of ``tf.image``: ``rgb_to_hsv``/``hsv_to_rgb``,
the YIQ and YUV conversions, ``adjust_saturation``/``adjust_hue``/``adjust_gamma`` and
their random variants.

All are composites of elementwise ops, so gradients come from the primitives (TF1 has
kernels for these; the values agree to float32 rounding):

* ``rgb_to_hsv``: ``v = max(r, g, b)``, ``range = v - min(r, g, b)``, ``s = range / v``
  (0 where ``v == 0``), hue from the channel holding the maximum (red, then green, then
  blue on ties: ``(g - b) / range``, ``(b - r) / range + 2``, ``(r - g) / range + 4``),
  divided by 6 and wrapped into ``[0, 1)``; 0 where ``range == 0``. Denominators are
  replaced by 1 where their branch is not taken, so no branch makes a NaN gradient.
* ``hsv_to_rgb``: chroma ``c = s v``, ``h6 = 6 h``, sector ``floor(h6)`` (0..5, anything
  else black plus ``m``), ``x = c (1 - |f - 1|)`` with ``f`` the position of ``h6`` in
  ``(0, 2]``, and ``m = v - c`` added to the sector's ``(c, x, 0)`` permutation.
* YIQ and YUV are 3x3 matrices on the last axis (``tensordot``).
* ``adjust_saturation``/``adjust_hue`` convert to float32, go through HSV (saturation
  scaled and clipped to ``[0, 1]``; hue shifted by ``delta`` modulo 1) and back to the
  image's dtype.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...framework import dtypes
from ...framework.graph import Tensor, convert_to_tensor
from ...framework.scopes import name_scope
from .. import array as array_ops
from ..cast import cast
from ..constant import constant
from ..linalg.contraction import tensordot
from ..math.arith import abs as abs_
from ..math.arith import floor, floormod, maximum, minimum, multiply, pow
from ..math.compare import equal, greater, logical_and, where_v2
from ..random.random_ops import random_uniform
from .image_ops import convert_image_dtype

# Each matrix maps an RGB row vector to the other space (``rgb @ M``). YIQ's way back is
# TF's published matrix, rounded to 8 digits (its exact inverse differs by up to 1e-4);
# YUV's is the exact inverse, which TF's agrees with to float32 rounding.
_RGB_TO_YIQ = np.array(
    [
        [0.299, 0.59590059, 0.2115],
        [0.587, -0.27455667, -0.52273617],
        [0.114, -0.32134392, 0.31119955],
    ]
)
_YIQ_TO_RGB = np.array(
    [
        [1.0, 1.0, 1.0],
        [0.95598634, -0.27201283, -1.10674021],
        [0.6208248, -0.64720424, 1.70423049],
    ]
)
_RGB_TO_YUV = np.array(
    [
        [0.299, -0.14714119, 0.61497538],
        [0.587, -0.28886916, -0.51496512],
        [0.114, 0.43601035, -0.10001026],
    ]
)


def _last_is_3(images: Tensor, what: str) -> None:
    last = images.shape.as_list()[-1] if images.shape.rank else None
    if images.shape.rank == 0 or last not in (None, 3):
        raise ValueError(f"{what}: the last dimension must be 3 (RGB), got shape {images.shape}")


def _channels(images: Tensor) -> list[Tensor]:
    return array_ops.unstack(images, axis=-1)


def rgb_to_hsv(images: Any, name: str | None = None) -> Tensor:
    """RGB ``images`` (float, values in ``[0, 1]``, last dimension 3) as hue, saturation
    and value, each in ``[0, 1]`` (``tf.image.rgb_to_hsv``).

    Raises:
        ValueError: the last dimension is not 3.
        TypeError: the images are not float.
    """
    with name_scope(name, "RGBToHSV", [images]):
        x = convert_to_tensor(images, name="images")
        if not x.dtype.is_floating:
            raise TypeError(f"rgb_to_hsv needs float images, got {x.dtype.name}")
        _last_is_3(x, "rgb_to_hsv")
        r, g, b = _channels(x)
        value = maximum(maximum(r, g), b)
        spread = value - minimum(minimum(r, g), b)
        has_value = greater(value, 0.0)
        saturation = where_v2(has_value, spread / where_v2(has_value, value, 1.0), 0.0)
        has_hue = greater(spread, 0.0)
        safe = where_v2(has_hue, spread, 1.0)
        red_max = equal(r, value)
        green_max = logical_and(~red_max, equal(g, value))
        hue = where_v2(
            red_max,
            (g - b) / safe,
            where_v2(green_max, (b - r) / safe + 2.0, (r - g) / safe + 4.0),
        )
        hue = floormod(hue / 6.0, 1.0)
        hue = where_v2(has_hue, hue, 0.0)
        return array_ops.stack([hue, saturation, value], axis=-1)


def hsv_to_rgb(images: Any, name: str | None = None) -> Tensor:
    """HSV ``images`` (float, each channel in ``[0, 1]``) as RGB (``tf.image.hsv_to_rgb``).

    Raises:
        ValueError: the last dimension is not 3.
        TypeError: the images are not float.
    """
    with name_scope(name, "HSVToRGB", [images]):
        x = convert_to_tensor(images, name="images")
        if not x.dtype.is_floating:
            raise TypeError(f"hsv_to_rgb needs float images, got {x.dtype.name}")
        _last_is_3(x, "hsv_to_rgb")
        h, s, v = _channels(x)
        chroma = s * v
        h6 = h * 6.0
        sector = floor(h6)
        # position of h6 in (0, 2]: a multiple of 2 (0 included) maps to 2
        f = h6 - 2.0 * floor(h6 / 2.0)
        f = where_v2(equal(f, 0.0), 2.0, f)
        second = chroma * (1.0 - abs_(f - 1.0))
        zero = chroma * 0.0
        rows = [
            (chroma, second, zero),
            (second, chroma, zero),
            (zero, chroma, second),
            (zero, second, chroma),
            (second, zero, chroma),
            (chroma, zero, second),
        ]
        out = [zero, zero, zero]
        for k, row in enumerate(rows):
            in_sector = equal(sector, float(k))
            out = [where_v2(in_sector, part, acc) for part, acc in zip(row, out, strict=True)]
        m = v - chroma
        return array_ops.stack([c + m for c in out], axis=-1)


def _convert(images: Any, matrix: np.ndarray, what: str, name: str | None) -> Tensor:
    with name_scope(name, what, [images]):
        x = convert_to_tensor(images, name="images")
        if not x.dtype.is_floating:
            raise TypeError(f"{what} needs float images, got {x.dtype.name}")
        _last_is_3(x, what)
        kernel = constant(matrix.astype(x.dtype.as_numpy_dtype), name="kernel")
        return tensordot(x, kernel, [[-1], [0]])


def rgb_to_yiq(images: Any) -> Tensor:
    """RGB ``images`` (float, last dimension 3) in the YIQ colour space
    (``tf.image.rgb_to_yiq``)."""
    return _convert(images, _RGB_TO_YIQ, "rgb_to_yiq", None)


def yiq_to_rgb(images: Any) -> Tensor:
    """YIQ ``images`` back to RGB (``tf.image.yiq_to_rgb``)."""
    return _convert(images, _YIQ_TO_RGB, "yiq_to_rgb", None)


def rgb_to_yuv(images: Any) -> Tensor:
    """RGB ``images`` (float, last dimension 3) in the YUV colour space
    (``tf.image.rgb_to_yuv``)."""
    return _convert(images, _RGB_TO_YUV, "rgb_to_yuv", None)


def yuv_to_rgb(images: Any) -> Tensor:
    """YUV ``images`` back to RGB (``tf.image.yuv_to_rgb``)."""
    return _convert(images, np.linalg.inv(_RGB_TO_YUV), "yuv_to_rgb", None)


def _through_hsv(image: Any, change: Any, what: str, name: str | None) -> Tensor:
    with name_scope(name, what, [image]):
        image = convert_to_tensor(image, name="image")
        _last_is_3(image, what)
        flt = convert_image_dtype(image, dtypes.float32)
        h, s, v = _channels(rgb_to_hsv(flt))
        rgb = hsv_to_rgb(array_ops.stack(change(h, s, v), axis=-1))
        return convert_image_dtype(rgb, image.dtype, saturate=True)


def adjust_saturation(image: Any, saturation_factor: Any, name: str | None = None) -> Tensor:
    """RGB ``image`` with its saturation multiplied by ``saturation_factor`` (clipped to
    ``[0, 1]``), through HSV in float32 (``tf.image.adjust_saturation``).

    Raises:
        ValueError: the last dimension is not 3.
    """

    def scale(h: Tensor, s: Tensor, v: Tensor) -> list[Tensor]:
        factor = cast(saturation_factor, dtypes.float32)
        return [h, minimum(maximum(s * factor, 0.0), 1.0), v]

    return _through_hsv(image, scale, "adjust_saturation", name)


def adjust_hue(image: Any, delta: Any, name: str | None = None) -> Tensor:
    """RGB ``image`` with ``delta`` (in ``[-1, 1]``) added to its hue, modulo 1, through
    HSV in float32 (``tf.image.adjust_hue``).

    Raises:
        ValueError: the last dimension is not 3.
    """

    def shift(h: Tensor, s: Tensor, v: Tensor) -> list[Tensor]:
        return [floormod(h + cast(delta, dtypes.float32), 1.0), s, v]

    return _through_hsv(image, shift, "adjust_hue", name)


def adjust_gamma(image: Any, gamma: Any = 1, gain: Any = 1) -> Tensor:
    """Gamma correction ``gain * image ** gamma`` (``tf.image.adjust_gamma``): float
    images directly, integer ones scaled to ``[0, 1]`` and back.

    Raises:
        ValueError: a ``gamma`` known at graph build time is negative.
    """
    with name_scope(None, "adjust_gamma", [image, gamma, gain]):
        image = convert_to_tensor(image, name="image")
        if isinstance(gamma, (int, float)) and gamma < 0:
            raise ValueError("Gamma should be a non-negative real number.")
        flt = (
            image
            if image.dtype in (dtypes.float16, dtypes.float32)
            else (convert_image_dtype(image, dtypes.float32))
        )
        g = cast(gamma, flt.dtype)
        adjusted = multiply(cast(gain, flt.dtype), pow(flt, g))
        return convert_image_dtype(adjusted, image.dtype, saturate=True)


def random_hue(image: Any, max_delta: float, seed: int | None = None) -> Tensor:
    """``adjust_hue`` by a delta drawn from ``[-max_delta, max_delta]``.

    Raises:
        ValueError: ``max_delta`` outside ``[0, 0.5]``.
    """
    if max_delta > 0.5:
        raise ValueError("max_delta must be <= 0.5.")
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    return adjust_hue(image, random_uniform([], -max_delta, max_delta, seed=seed))


def random_saturation(image: Any, lower: float, upper: float, seed: int | None = None) -> Tensor:
    """``adjust_saturation`` by a factor drawn from ``[lower, upper]``.

    Raises:
        ValueError: ``upper <= lower`` or ``lower < 0``.
    """
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")
    return adjust_saturation(image, random_uniform([], lower, upper, seed=seed))
