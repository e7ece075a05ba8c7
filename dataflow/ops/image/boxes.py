"""Boxes on images: ``crop_and_resize`` (a composite) and ``draw_bounding_boxes``
(``DrawBoundingBoxes``, a kernel).

``crop_and_resize`` samples, for box ``[y1, x1, y2, x2]`` (normalised: 0 and 1 are the
first and last pixel centres) of image ``box_ind[i]``, the crop rows
``y1 (H - 1) + r (y2 - y1) (H - 1) / (crop_height - 1)`` (the box's centre row when the
crop is one row high), and the columns likewise; positions outside the image take
``extrapolation_value``. Bilinear sampling gathers the four neighbours (``floor`` and
``ceil`` of the position, as TF: at a whole position both are the same pixel, so the
box gradient there is zero) with ``gather_nd`` and interpolates; nearest rounds half
away from zero. As a composite, the gradient reaches the image (scattered back by
``gather_nd``'s gradient) and, for bilinear, the boxes (through the interpolation
weights), as TF1's gradients do.

``DrawBoundingBoxes`` paints the outline (one pixel wide) of each ``[y1, x1, y2, x2]``
box of an image in a colour cycling through the palette (TF's default palette of ten
when none is given, white on a one-channel image); corners are scaled by
``size - 1`` and truncated, boxes wholly outside are skipped and the rest clipped.
Each box writes its four edges with one indexed assignment per edge (boxes in order,
later ones on top).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...framework import dtypes, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor
from ...framework.scopes import name_scope
from ...framework.tensor_shape import TensorShape
from .. import array as array_ops
from ..array.indexing import gather_nd
from ..build import apply_op
from ..cast import cast
from ..math.arith import ceil, floor, maximum, minimum
from ..math.compare import greater_equal, less_equal, logical_and, where_v2
from .image_ops import static_size


def _sample_positions(lo: Tensor, hi: Tensor, n: int, size: Tensor) -> Tensor:
    """``[boxes, n]`` input positions of the crop's rows (or columns)."""
    extent = size - 1.0
    if n > 1:
        steps = array_ops.reshape(np.arange(n, dtype=np.float32), [1, n])
        scale = (hi - lo) * extent / float(n - 1)
        return lo[:, None] * extent + steps * scale[:, None]
    return array_ops.reshape(0.5 * (lo + hi) * extent, [-1, 1])


def crop_and_resize(
    image: Any,
    boxes: Any,
    box_ind: Any = None,
    crop_size: Any = None,
    method: str = "bilinear",
    extrapolation_value: float = 0.0,
    name: str | None = None,
    box_indices: Any = None,
) -> Tensor:
    """Crops of ``image`` (``[batch, H, W, C]``) at normalised ``boxes`` (``[n, 4]``),
    each resized to ``crop_size`` (``tf.image.crop_and_resize``): float32
    ``[n, crop_height, crop_width, C]``.

    Args:
        image: the images.
        boxes: float ``[n, 4]`` ``(y1, x1, y2, x2)``; ``y1 > y2`` flips the crop.
        box_ind: int32 ``[n]``, the image of each box (``box_indices`` in TF 2).
        crop_size: ``[crop_height, crop_width]``, known at graph build time here.
        method: ``"bilinear"`` or ``"nearest"``.
        extrapolation_value: the value of samples outside the image.
        name: the name scope.
        box_indices: ``box_ind`` by its TF 2 name.

    Raises:
        ValueError: another method, or inputs of the wrong rank.
        InvalidArgumentError: (when the step runs) a ``box_ind`` outside the batch.
    """
    box_ind = box_indices if box_ind is None else box_ind
    if method not in ("bilinear", "nearest"):
        raise ValueError(f"method must be 'bilinear' or 'nearest', got {method!r}")
    with name_scope(name, "CropAndResize", [image, boxes, box_ind]):
        x = convert_to_tensor(image, name="image")
        b = convert_to_tensor(boxes, name="boxes")
        ind = convert_to_tensor(box_ind, dtype=dtypes.int32, name="box_ind")
        if x.shape.rank not in (None, 4):
            raise ValueError(f"image must be 4-D, got shape {x.shape}")
        if b.shape.rank not in (None, 2) or (b.shape.rank == 2 and b.shape[1] not in (None, 4)):
            raise ValueError(f"boxes must be [num_boxes, 4], got shape {b.shape}")
        if ind.shape.rank not in (None, 1):
            raise ValueError(f"box_ind must be 1-D, got shape {ind.shape}")
        ch, cw = static_size(crop_size)
        flt = cast(x, dtypes.float32)
        b = cast(b, dtypes.float32)
        dims = array_ops.shape(flt)
        height, width = cast(dims[1], dtypes.float32), cast(dims[2], dtypes.float32)
        in_y = _sample_positions(b[:, 0], b[:, 2], ch, height)  # [n, ch]
        in_x = _sample_positions(b[:, 1], b[:, 3], cw, width)  # [n, cw]
        inside = logical_and(
            logical_and(greater_equal(in_y, 0.0), less_equal(in_y, height - 1.0))[:, :, None],
            logical_and(greater_equal(in_x, 0.0), less_equal(in_x, width - 1.0))[:, None, :],
        )
        n = array_ops.shape(b)[:1]
        grid = array_ops.concat([n, [ch, cw]], 0)
        batch_ix = array_ops.broadcast_to(ind[:, None, None], grid)

        def clamp(v: Tensor, size: Tensor) -> Tensor:
            return cast(minimum(maximum(v, 0.0), size - 1.0), dtypes.int32)

        def pick(rows: Tensor, cols: Tensor) -> Tensor:
            index = array_ops.stack(
                [
                    batch_ix,
                    array_ops.broadcast_to(rows[:, :, None], grid),
                    array_ops.broadcast_to(cols[:, None, :], grid),
                ],
                axis=-1,
            )
            return gather_nd(flt, index)

        if method == "nearest":
            near_y = clamp(floor(in_y + 0.5), height)
            near_x = clamp(floor(in_x + 0.5), width)
            value = pick(near_y, near_x)
        else:
            top, left = floor(in_y), floor(in_x)
            dy = (in_y - top)[:, :, None, None]
            dx = (in_x - left)[:, None, :, None]
            t, bo = clamp(top, height), clamp(ceil(in_y), height)
            le, ri = clamp(left, width), clamp(ceil(in_x), width)
            upper = pick(t, le) + (pick(t, ri) - pick(t, le)) * dx
            lower = pick(bo, le) + (pick(bo, ri) - pick(bo, le)) * dx
            value = upper + (lower - upper) * dy
        out = where_v2(inside[:, :, :, None], value, float(extrapolation_value))
        out.set_shape(TensorShape([b.shape[0], ch, cw, x.shape[3] if x.shape.rank else None]))
        return out


# TF's default palette (RGBA, 0..1), cycled through by box.
_PALETTE = np.array(
    [
        [1.0, 1.0, 0.0, 1.0],
        [0.0, 0.0, 1.0, 1.0],
        [1.0, 0.0, 0.0, 1.0],
        [0.0, 1.0, 0.0, 1.0],
        [0.5, 0.0, 0.5, 1.0],
        [0.5, 0.5, 0.0, 1.0],
        [0.5, 0.0, 0.0, 1.0],
        [0.0, 0.0, 0.5, 1.0],
        [0.0, 1.0, 1.0, 1.0],
        [1.0, 0.0, 1.0, 1.0],
    ],
    np.float32,
)


def _infer_draw(op: Operation) -> list:
    images, boxes = op.inputs[:2]
    if images.shape.rank not in (None, 4):
        raise ValueError(f"images must be 4-D, got shape {images.shape}")
    if boxes.shape.rank not in (None, 3):
        raise ValueError(f"boxes must be 3-D [batch, boxes, 4], got shape {boxes.shape}")
    return [(images.dtype, images.shape)]


def _draw_kernel(ctx: Any, attrs: dict) -> Any:
    xp = ctx.xp

    def draw(images: Any, boxes: Any, colors: Any) -> Any:
        out = images.copy()
        batch, height, width, depth = images.shape
        palette = colors if colors.shape[0] else xp.asarray(_PALETTE)
        palette = palette[:, :depth].astype(images.dtype)
        if depth == 1 and not colors.shape[0]:  # the default palette draws white on gray
            palette = xp.ones_like(palette)
        for b in range(batch):  # boxes in order, each painting four edges at once
            for k in range(boxes.shape[1]):
                color = palette[k % palette.shape[0]]
                y1, x1, y2, x2 = (float(v) for v in boxes[b, k])
                top, bottom = int(y1 * (height - 1)), int(y2 * (height - 1))
                left, right = int(x1 * (width - 1)), int(x2 * (width - 1))
                if top > bottom or left > right:
                    continue
                if bottom < 0 or top >= height or right < 0 or left >= width:
                    continue
                t, bo = max(top, 0), min(bottom, height - 1)
                le, ri = max(left, 0), min(right, width - 1)
                if 0 <= top < height:
                    out[b, top, le : ri + 1] = color
                if 0 <= bottom < height:
                    out[b, bottom, le : ri + 1] = color
                if 0 <= left < width:
                    out[b, t : bo + 1, left] = color
                if 0 <= right < width:
                    out[b, t : bo + 1, right] = color
        return out

    return draw


registry.register(
    registry.OpDef("DrawBoundingBoxesV2", _infer_draw, _draw_kernel, registry.NOT_DIFFERENTIABLE)
)


def draw_bounding_boxes(
    images: Any, boxes: Any, name: str | None = None, colors: Any = None
) -> Tensor:
    """``images`` (``[batch, h, w, depth]``, float) with the outlines of ``boxes``
    (``[batch, n, 4]``, normalised ``(y1, x1, y2, x2)``) painted in ``colors`` (RGBA rows,
    cycled; TF's palette by default) (``tf.image.draw_bounding_boxes``).

    Raises:
        ValueError: inputs of the wrong rank.
    """
    x = convert_to_tensor(images, name="images")
    b = convert_to_tensor(boxes, dtype=dtypes.float32, name="boxes")
    palette = np.zeros((0, 4), np.float32) if colors is None else colors
    c = convert_to_tensor(palette, dtype=dtypes.float32, name="colors")
    return apply_op("DrawBoundingBoxesV2", [x, b, c], name=name)
