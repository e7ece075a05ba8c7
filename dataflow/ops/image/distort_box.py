"""``tf.image.sample_distorted_bounding_box`` (``SampleDistortedBoundingBoxV2``): a
random crop window for data augmentation, TF1's rules with this project's random
stream (so the windows are not TF's, their distribution is).

Each of ``max_attempts`` candidates draws an aspect ratio uniformly from
``aspect_ratio_range``, a height uniformly among the integers that keep its area in
``area_range`` of the image (and its width inside the image), a width of
``round(height * ratio)``, and a top-left corner uniformly where the window fits. The
first candidate covering at least ``min_object_covered`` of some bounding box (the
share of the box's area inside the window) wins; all candidates are drawn at once, as
arrays. When none qualifies the window is the whole image. Bounding boxes are
normalised ``[y_min, x_min, y_max, x_max]``; without any, the whole image is the box
when ``use_image_if_no_bounding_boxes``, else the step fails.

Outputs: ``begin = [y, x, 0]``, ``size = [h, w, -1]`` (for ``tf.slice``) and the window
as a normalised box, ``[1, 1, 4]``. Stateful (a random op); not differentiable.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...framework import dtypes, errors, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor
from ...framework.tensor_shape import TensorShape
from ..build import apply_op_n
from ..host import to_host
from ..random.random_ops import generator_source, seed_attrs


def _infer(op: Operation) -> list:
    size, boxes, covered = op.inputs
    if size.shape.rank not in (None, 1) or boxes.shape.rank not in (None, 3):
        raise ValueError("image_size must be 1-D and bounding_boxes 3-D [batch, N, 4]")
    if covered.shape.rank not in (None, 0):
        raise ValueError("min_object_covered must be a scalar")
    return [
        (size.dtype, TensorShape([3])),
        (size.dtype, TensorShape([3])),
        (dtypes.float32, TensorShape([1, 1, 4])),
    ]


def _kernel(ctx: Any, attrs: dict) -> Any:
    xp, rng = ctx.xp, generator_source(ctx, attrs)
    lo_ratio, hi_ratio = attrs["aspect_ratio_range"]
    lo_area, hi_area = attrs["area_range"]
    attempts, use_image = attrs["max_attempts"], attrs["use_image_if_no_bounding_boxes"]

    def sample(image_size: Any, boxes: Any, covered: Any) -> Any:
        height, width = (int(v) for v in np.asarray(to_host(image_size))[:2])
        flat = np.asarray(to_host(boxes), np.float64).reshape(-1, 4)
        if flat.shape[0] == 0:
            if not use_image:
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    "No bounding boxes provided as input. One must enable "
                    "use_image_if_no_bounding_boxes if you wish to not provide any.",
                )
            flat = np.array([[0.0, 0.0, 1.0, 1.0]])
        pixels = flat * [height, width, height, width]
        g = rng()
        ratio = np.asarray(to_host(g.uniform(lo_ratio, hi_ratio, attempts)))
        area = float(height * width)
        low_h = np.ceil(np.sqrt(lo_area * area / ratio))
        high_h = np.floor(np.sqrt(hi_area * area / ratio))
        high_h = np.minimum(high_h, np.minimum(height, np.floor(width / ratio)))
        unit = np.asarray(to_host(g.random(attempts)))
        h = np.floor(low_h + unit * (high_h - low_h + 1)).astype(np.int64)
        w = np.round(h * ratio).astype(np.int64)
        ok = (low_h <= high_h) & (h > 0) & (w > 0) & (h <= height) & (w <= width)
        y = np.floor(np.asarray(to_host(g.random(attempts))) * (height - h + 1)).astype(np.int64)
        x = np.floor(np.asarray(to_host(g.random(attempts))) * (width - w + 1)).astype(np.int64)
        # share of each box inside each candidate window: [attempts, boxes]
        inter_h = np.clip(
            np.minimum((y + h)[:, None], pixels[None, :, 2])
            - np.maximum(y[:, None], pixels[None, :, 0]),
            0,
            None,
        )
        inter_w = np.clip(
            np.minimum((x + w)[:, None], pixels[None, :, 3])
            - np.maximum(x[:, None], pixels[None, :, 1]),
            0,
            None,
        )
        box_area = (pixels[:, 2] - pixels[:, 0]) * (pixels[:, 3] - pixels[:, 1])
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.where(box_area > 0, inter_h * inter_w / box_area, 0.0)
        ok &= (share >= float(covered)).any(axis=1)
        chosen = np.flatnonzero(ok)
        if chosen.size:
            k = chosen[0]
            top, left, hh, ww = int(y[k]), int(x[k]), int(h[k]), int(w[k])
        else:
            top, left, hh, ww = 0, 0, height, width
        dtype = np.asarray(to_host(image_size)).dtype
        box = np.array(
            [[[top / height, left / width, (top + hh) / height, (left + ww) / width]]], np.float32
        )
        return (
            xp.asarray(np.array([top, left, 0], dtype)),
            xp.asarray(np.array([hh, ww, -1], dtype)),
            xp.asarray(box),
        )

    return sample


registry.register(
    registry.OpDef(
        "SampleDistortedBoundingBoxV2",
        _infer,
        _kernel,
        registry.NOT_DIFFERENTIABLE,
        stateful=True,
        gpu_kernel=False,
    )
)


def sample_distorted_bounding_box(
    image_size: Any,
    bounding_boxes: Any,
    seed: int | None = None,
    seed2: int | None = None,
    min_object_covered: Any = 0.1,
    aspect_ratio_range: Any = None,
    area_range: Any = None,
    max_attempts: int | None = None,
    use_image_if_no_bounding_boxes: bool | None = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """``(begin, size, bboxes)``: a random crop window of an image of ``image_size``
    (``[height, width, channels]``) covering at least ``min_object_covered`` of one of
    ``bounding_boxes`` (``[batch, N, 4]``, normalised) (``tf.image.
    sample_distorted_bounding_box``); ``tf.slice(image, begin, size)`` crops it.

    Raises:
        ValueError: inputs of the wrong rank, or ranges that are not increasing pairs.
        InvalidArgumentError: (when the step runs) no boxes without
            ``use_image_if_no_bounding_boxes``.
    """
    ratios = [float(v) for v in (aspect_ratio_range or (0.75, 1.33))]
    areas = [float(v) for v in (area_range or (0.05, 1.0))]
    for pair, what in ((ratios, "aspect_ratio_range"), (areas, "area_range")):
        if len(pair) != 2 or pair[0] > pair[1] or pair[0] <= 0:
            raise ValueError(f"{what} must be two increasing positive numbers, got {pair}")
    attempts = int(max_attempts or 100)
    if attempts < 1:
        raise ValueError(f"max_attempts must be positive, got {attempts}")
    size = convert_to_tensor(image_size, name="image_size")
    boxes = convert_to_tensor(bounding_boxes, dtype=dtypes.float32, name="bounding_boxes")
    covered = convert_to_tensor(min_object_covered, dtype=dtypes.float32, name="min_object_covered")
    attrs = {
        **seed_attrs(seed),
        "aspect_ratio_range": ratios,
        "area_range": areas,
        "max_attempts": attempts,
        "use_image_if_no_bounding_boxes": bool(use_image_if_no_bounding_boxes),
    }
    op = apply_op_n("SampleDistortedBoundingBoxV2", [size, boxes, covered], attrs, name=name)
    return op.outputs[0], op.outputs[1], op.outputs[2]
