"""Rearranging pixels without changing them: ``rot90``, ``transpose_image`` (and its
TF 1.15 name ``transpose``), and ``extract_image_patches``/``extract_patches``.

All are composites, so gradients come from the primitives:

* ``rot90`` by ``k`` quarter turns counter-clockwise: one turn is ``reverse`` of the
  width axis then swapping height and width; two reverse both; three swap then reverse
  the width. A ``k`` known only when the step runs picks among the four with ``case``.
* ``extract_image_patches`` gathers, from the image padded as ``padding`` says (SAME
  pads ``max((out - 1) * stride + (k - 1) * rate + 1 - size, 0)`` zeros, the smaller
  half first), the rows ``o * stride + i * rate`` (``o`` the output row, ``i`` the row
  within the patch) and likewise the columns, then moves the patch axes into the depth:
  ``[b, oh, kh, ow, kw, c]`` to ``[b, oh, ow, kh * kw * c]``. The index vectors come
  from the static height and width.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...framework import dtypes
from ...framework.graph import Tensor, convert_to_tensor
from ...framework.scopes import name_scope
from .. import array as array_ops
from ..array.indexing import gather
from ..control.cond import case
from ..math.arith import floormod
from ..math.compare import equal

_TURNS = {
    0: lambda x, h, w: x,
    1: lambda x, h, w: _swap(array_ops.reverse(x, [w]), h, w),
    2: lambda x, h, w: array_ops.reverse(x, [h, w]),
    3: lambda x, h, w: array_ops.reverse(_swap(x, h, w), [w]),
}


def _swap(x: Tensor, h: int, w: int) -> Tensor:
    perm = list(range(x.shape.rank or 0))
    perm[h], perm[w] = w, h
    return array_ops.transpose(x, perm)


def _image(image: Any) -> tuple[Tensor, int, int]:
    x = convert_to_tensor(image, name="image")
    if x.shape.rank not in (3, 4):
        raise ValueError(f"'image' (shape {x.shape}) must have either 3 or 4 dimensions.")
    return (x, 0, 1) if x.shape.rank == 3 else (x, 1, 2)


def rot90(image: Any, k: Any = 1, name: str | None = None) -> Tensor:
    """``image`` (3-D or a 4-D batch) rotated by ``k`` quarter turns counter-clockwise
    (``tf.image.rot90``); ``k`` may be a tensor.

    Raises:
        ValueError: ``image`` is not 3-D or 4-D.
        TypeError: ``k`` is not an integer.
    """
    with name_scope(name, "rot90", [image, k]):
        x, h, w = _image(image)
        k_t = convert_to_tensor(k, dtype=dtypes.int32, name="k")
        # a case over the turns even for a known k, so the static shape is TF's: the
        # branches' shapes merged (height and width unknown unless the image is square)
        turns = floormod(k_t, 4)
        pairs = [(equal(turns, n), (lambda n=n: _TURNS[n](x, h, w))) for n in (1, 2, 3)]
        return case(pairs, default=lambda: x, exclusive=True)


def transpose_image(image: Any, name: str | None = None) -> Tensor:
    """``image`` (3-D or a 4-D batch) with height and width swapped
    (``tf.image.transpose_image``; ``tf.image.transpose`` in TF 1.15).

    Raises:
        ValueError: ``image`` is not 3-D or 4-D.
    """
    with name_scope(name, "transpose", [image]):
        x, h, w = _image(image)
        return _swap(x, h, w)


def _patch_axis(size: int, k: int, stride: int, rate: int, padding: str) -> tuple:
    """Output length, zeros before and after, and the ``[out, k]`` source positions."""
    span = (k - 1) * rate + 1
    if padding == "VALID":
        out = (size - span) // stride + 1 if size >= span else 0
        before = after = 0
    else:
        out = -(-size // stride)
        total = max((out - 1) * stride + span - size, 0)
        before, after = total // 2, total - total // 2
    index = np.arange(out)[:, None] * stride + np.arange(k)[None, :] * rate
    return out, before, after, index.reshape(-1)


def _four(values: Any, what: str) -> tuple[int, int]:
    vals = [int(v) for v in values]
    if len(vals) != 4 or vals[0] != 1 or vals[3] != 1:
        raise ValueError(f"{what} must be [1, rows, cols, 1], got {vals}")
    if min(vals) < 1:
        raise ValueError(f"{what} must be positive, got {vals}")
    return vals[1], vals[2]


def extract_image_patches(
    images: Any,
    ksizes: Any = None,
    strides: Any = None,
    rates: Any = None,
    padding: str = "VALID",
    name: str | None = None,
    sizes: Any = None,
) -> Tensor:
    """Patches of ``ksizes`` from a 4-D ``images`` batch, ``strides`` apart, sampling
    every ``rates``-th pixel, stacked in the depth (``tf.image.extract_image_patches``,
    ``tf.extract_image_patches``): ``[b, out_rows, out_cols, kh * kw * depth]``, depth
    ordered by (patch row, patch column, channel).

    Args:
        images: ``[batch, height, width, depth]``, height and width known at build time.
        ksizes: ``[1, kh, kw, 1]`` (``sizes`` is its TF 2 name).
        strides: ``[1, sh, sw, 1]``.
        rates: ``[1, rh, rw, 1]``.
        padding: ``"VALID"`` or ``"SAME"``.
        name: the name scope.
        sizes: ``ksizes`` by its other name.

    Raises:
        ValueError: arguments not of the form ``[1, a, b, 1]``, another padding, or
            images not 4-D with a static height and width.
    """
    ksizes = sizes if ksizes is None else ksizes
    if ksizes is None or strides is None or rates is None:
        raise TypeError("extract_image_patches needs ksizes, strides and rates")
    with name_scope(name, "ExtractImagePatches", [images]):
        x = convert_to_tensor(images, name="images")
        if padding not in ("VALID", "SAME"):
            raise ValueError(f"padding must be VALID or SAME, got {padding!r}")
        if x.shape.rank != 4:
            raise ValueError(f"images must be 4-D, got shape {x.shape}")
        (kh, kw), (sh, sw), (rh, rw) = (
            _four(ksizes, "ksizes"),
            _four(strides, "strides"),
            _four(rates, "rates"),
        )
        _, h, w, c = x.shape.as_list()
        if h is None or w is None:
            raise ValueError(f"extract_image_patches needs a static height and width: {x.shape}")
        oh, top, bottom, rows = _patch_axis(h, kh, sh, rh, padding)
        ow, left, right, cols = _patch_axis(w, kw, sw, rw, padding)
        if top or bottom or left or right:
            x = array_ops.pad(x, [[0, 0], [top, bottom], [left, right], [0, 0]])
        picked = gather(gather(x, rows, axis=1), cols, axis=2)
        depth = None if c is None else kh * kw * c
        shape = array_ops.shape(picked)
        blocks = array_ops.reshape(picked, [shape[0], oh, kh, ow, kw, shape[3]])
        moved = array_ops.transpose(blocks, [0, 1, 3, 2, 4, 5])
        out = array_ops.reshape(moved, [shape[0], oh, ow, kh * kw * shape[3]])
        out.set_shape([x.shape.as_list()[0], oh, ow, depth])
        return out


def extract_patches(
    images: Any, sizes: Any, strides: Any, rates: Any, padding: str, name: str | None = None
) -> Tensor:
    """``extract_image_patches`` by its TF 2 argument name ``sizes``
    (``tf.image.extract_patches``)."""
    return extract_image_patches(images, sizes, strides, rates, padding, name)
