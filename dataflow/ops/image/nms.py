"""Greedy non-maximum suppression: ``non_max_suppression`` (``NonMaxSuppressionV3``),
``non_max_suppression_with_scores`` (``V5``, hard suppression), ``_padded`` (``V4``),
``_overlaps`` (``NonMaxSuppressionWithOverlaps``) and ``combined_non_max_suppression``
(``CombinedNonMaxSuppression``). None is differentiable (nor in TF1).

Algorithm: keep the candidates scoring above ``score_threshold``, in order of falling
score (ties: the lower index first); compute every pair's overlap once (IoU of the
boxes, corners in either order, 0 when a box has no area; or the given ``overlaps``);
then repeat at most ``max_output_size`` times: select the first candidate still alive
and kill every candidate overlapping it by more than the threshold. Each round is one
vectorised step, so the loop runs once per selected box, never once per candidate.

``CombinedNonMaxSuppression`` runs that per image and class (boxes shared by all
classes when their third dimension is 1), keeps at most ``max_output_size_per_class``
each, and takes the ``max_total_size`` best of an image (by score, then class order),
zero-padded; boxes clipped to ``[0, 1]`` with ``clip_boxes``.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from ...framework import dtypes, errors, registry
from ...framework.graph import Operation, Tensor, convert_to_tensor
from ...framework.tensor_shape import TensorShape
from ...framework.tensor_util import constant_value
from ..build import apply_op, apply_op_n


def iou_matrix(xp: Any, boxes: Any) -> Any:
    """``[n, n]`` intersection over union of ``[n, 4]`` boxes ``(y1, x1, y2, x2)``."""
    y_lo = xp.minimum(boxes[:, 0], boxes[:, 2])
    y_hi = xp.maximum(boxes[:, 0], boxes[:, 2])
    x_lo = xp.minimum(boxes[:, 1], boxes[:, 3])
    x_hi = xp.maximum(boxes[:, 1], boxes[:, 3])
    area = (y_hi - y_lo) * (x_hi - x_lo)
    inter_h = xp.maximum(
        xp.minimum(y_hi[:, None], y_hi[None]) - xp.maximum(y_lo[:, None], y_lo[None]), 0
    )
    inter_w = xp.maximum(
        xp.minimum(x_hi[:, None], x_hi[None]) - xp.maximum(x_lo[:, None], x_lo[None]), 0
    )
    inter = inter_h * inter_w
    union = area[:, None] + area[None] - inter
    positive = (area[:, None] > 0) & (area[None] > 0)
    return xp.where(positive, inter / xp.where(positive, union, 1), 0)


def greedy(xp: Any, overlaps: Any, scores: Any, limit: int, threshold: float, floor: float) -> Any:
    """Indices (int64) of the boxes greedy suppression selects, best first."""
    candidates = xp.nonzero(scores > floor)[0]
    order = candidates[xp.argsort(-scores[candidates], kind="stable")]
    near = overlaps[order][:, order] > threshold
    alive = xp.ones(order.shape[0], dtype=bool)
    picked = []
    for _ in range(min(limit, order.shape[0])):
        remaining = xp.nonzero(alive)[0]
        if remaining.shape[0] == 0:
            break
        first = int(remaining[0])
        picked.append(first)
        alive &= ~near[:, first]  # overlaps[candidate, selected], as TF reads them
        alive[first] = False
    return order[xp.asarray(picked, dtype=xp.int64)]


def _check_args(op: Operation, n_scalars: int) -> None:
    what = op.inputs[0]
    if what.shape.rank not in (None, 2):
        raise ValueError(f"{op.type}: boxes (or overlaps) must be 2-D, got {what.shape}")
    if op.inputs[1].shape.rank not in (None, 1):
        raise ValueError(f"{op.type}: scores must be 1-D, got {op.inputs[1].shape}")
    for t in op.inputs[2 : 2 + n_scalars]:
        if t.shape.rank not in (None, 0):
            raise ValueError(f"{op.type}: {t.name} must be a scalar, got {t.shape}")


def _infer_nms(op: Operation) -> list:
    _check_args(op, 3)
    size = op.attrs.get("pad_to")
    if op.type == "NonMaxSuppressionV4":
        return [(dtypes.int32, TensorShape([size])), (dtypes.int32, TensorShape([]))]
    if op.type == "NonMaxSuppressionV5":
        return [
            (dtypes.int32, TensorShape([None])),
            (op.inputs[1].dtype, TensorShape([None])),
            (dtypes.int32, TensorShape([])),
        ]
    return [(dtypes.int32, TensorShape([None]))]


def _nms_kernel(kind: str) -> Any:
    def factory(ctx: Any, attrs: dict) -> Any:
        xp = ctx.xp

        def nms(boxes: Any, scores: Any, limit: Any, threshold: Any, floor: Any) -> Any:
            limit, threshold, floor = int(limit), float(threshold), float(floor)
            if limit < 0:
                raise errors.InvalidArgumentError(None, None, "max_output_size must be >= 0")
            if not 0.0 <= threshold <= 1.0 and kind != "overlaps":
                raise errors.InvalidArgumentError(None, None, "iou_threshold must be in [0, 1]")
            overlaps = boxes if kind == "overlaps" else iou_matrix(xp, boxes)
            chosen = greedy(xp, overlaps, scores, limit, threshold, floor)
            index = chosen.astype(xp.int32)
            if kind == "padded":
                count = index.shape[0]
                if attrs["pad_to_max_output_size"]:
                    index = xp.concatenate([index, xp.zeros(limit - count, dtype=xp.int32)])
                return index, xp.asarray(count, dtype=xp.int32)
            if kind == "scores":
                return index, scores[chosen], xp.asarray(index.shape[0], dtype=xp.int32)
            return index

        return nms

    return factory


for _type, _kind in (
    ("NonMaxSuppressionV3", "plain"),
    ("NonMaxSuppressionV4", "padded"),
    ("NonMaxSuppressionV5", "scores"),
    ("NonMaxSuppressionWithOverlaps", "overlaps"),
):
    registry.register(
        registry.OpDef(_type, _infer_nms, _nms_kernel(_kind), registry.NOT_DIFFERENTIABLE)
    )


def _inputs(boxes: Any, scores: Any, limit: Any, threshold: Any, floor: Any) -> list:
    b = convert_to_tensor(boxes, name="boxes")
    s = convert_to_tensor(scores, dtype=b.dtype, name="scores")
    return [
        b,
        s,
        convert_to_tensor(limit, dtype=dtypes.int32, name="max_output_size"),
        convert_to_tensor(threshold, dtype=b.dtype, name="iou_threshold"),
        convert_to_tensor(floor, dtype=b.dtype, name="score_threshold"),
    ]


def non_max_suppression(
    boxes: Any,
    scores: Any,
    max_output_size: Any,
    iou_threshold: float = 0.5,
    score_threshold: float = float("-inf"),
    name: str | None = None,
) -> Tensor:
    """The indices (int32) of at most ``max_output_size`` boxes chosen greedily by
    falling score, each overlapping every earlier choice by at most ``iou_threshold``
    (``tf.image.non_max_suppression``). ``boxes`` is ``[n, 4]`` ``(y1, x1, y2, x2)``,
    ``scores`` ``[n]``; boxes scoring at most ``score_threshold`` are never chosen.

    Raises:
        ValueError: inputs of the wrong rank.
        InvalidArgumentError: (when the step runs) ``iou_threshold`` outside ``[0, 1]``.
    """
    inputs = _inputs(boxes, scores, max_output_size, iou_threshold, score_threshold)
    return apply_op("NonMaxSuppressionV3", inputs, name=name)


def non_max_suppression_with_scores(
    boxes: Any,
    scores: Any,
    max_output_size: Any,
    iou_threshold: float = 0.5,
    score_threshold: float = float("-inf"),
    soft_nms_sigma: float = 0.0,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """``non_max_suppression`` and the chosen boxes' scores
    (``tf.image.non_max_suppression_with_scores``).

    Raises:
        ValueError: ``soft_nms_sigma`` other than 0 (soft suppression is not provided).
    """
    if soft_nms_sigma:
        raise ValueError("non_max_suppression_with_scores: soft_nms_sigma is not provided")
    inputs = _inputs(boxes, scores, max_output_size, iou_threshold, score_threshold)
    op = apply_op_n("NonMaxSuppressionV5", inputs, name=name)
    return op.outputs[0], op.outputs[1]


def non_max_suppression_padded(
    boxes: Any,
    scores: Any,
    max_output_size: Any,
    iou_threshold: float = 0.5,
    score_threshold: float = float("-inf"),
    pad_to_max_output_size: bool = False,
    name: str | None = None,
    sorted_input: bool = False,
    canonicalized_coordinates: bool = False,
    tile_size: int = 512,
) -> tuple[Tensor, Tensor]:
    """``(selected_indices, valid_outputs)``: ``non_max_suppression`` padded with zeros to
    ``max_output_size`` entries when ``pad_to_max_output_size``, and how many are real
    (``tf.image.non_max_suppression_padded`` for one image; ``sorted_input``,
    ``canonicalized_coordinates`` and ``tile_size`` change only TF's speed).

    Raises:
        ValueError: batched ``boxes`` (rank 3; not provided).
    """
    inputs = _inputs(boxes, scores, max_output_size, iou_threshold, score_threshold)
    if inputs[0].shape.rank not in (None, 2):
        raise ValueError("non_max_suppression_padded: batched boxes are not provided")
    known = constant_value(inputs[2])
    pad_to = int(known) if pad_to_max_output_size and known is not None else None
    attrs = {"pad_to_max_output_size": bool(pad_to_max_output_size), "pad_to": pad_to}
    op = apply_op_n("NonMaxSuppressionV4", inputs, attrs, name=name)
    return op.outputs[0], op.outputs[1]


def non_max_suppression_overlaps(
    overlaps: Any,
    scores: Any,
    max_output_size: Any,
    overlap_threshold: float = 0.5,
    score_threshold: float = float("-inf"),
    name: str | None = None,
) -> Tensor:
    """``non_max_suppression`` over a given ``[n, n]`` ``overlaps`` matrix instead of
    boxes (``tf.image.non_max_suppression_overlaps``)."""
    inputs = _inputs(overlaps, scores, max_output_size, overlap_threshold, score_threshold)
    return apply_op("NonMaxSuppressionWithOverlaps", inputs, name=name)


CombinedNMS = namedtuple(
    "CombinedNMS", ["nmsed_boxes", "nmsed_scores", "nmsed_classes", "valid_detections"]
)


def _infer_combined(op: Operation) -> list:
    boxes, scores = op.inputs[:2]
    if boxes.shape.rank not in (None, 4):
        raise ValueError(f"boxes must be 4-D [batch, boxes, q, 4], got {boxes.shape}")
    if scores.shape.rank not in (None, 3):
        raise ValueError(f"scores must be 3-D [batch, boxes, classes], got {scores.shape}")
    batch = boxes.shape.as_list()[0] if boxes.shape.rank else None
    size = op.attrs["total"]
    return [
        (dtypes.float32, TensorShape([batch, size, 4])),
        (dtypes.float32, TensorShape([batch, size])),
        (dtypes.float32, TensorShape([batch, size])),
        (dtypes.int32, TensorShape([batch])),
    ]


def _combined_kernel(ctx: Any, attrs: dict) -> Any:
    xp, per_class, total = ctx.xp, attrs["per_class"], attrs["total"]

    def combined(boxes: Any, scores: Any, threshold: Any, floor: Any) -> Any:
        batch, _, classes = scores.shape
        out_boxes = xp.zeros((batch, total, 4), dtype=xp.float32)
        out_scores = xp.zeros((batch, total), dtype=xp.float32)
        out_classes = xp.zeros((batch, total), dtype=xp.float32)
        valid = xp.zeros(batch, dtype=xp.int32)
        for b in range(batch):  # one suppression per image and class
            found = []
            for c in range(classes):
                these = boxes[b, :, c if boxes.shape[2] > 1 else 0]
                chosen = greedy(
                    xp,
                    iou_matrix(xp, these),
                    scores[b, :, c],
                    per_class,
                    float(threshold),
                    float(floor),
                )
                found.append((these[chosen], scores[b, chosen, c], xp.full(chosen.shape[0], c)))
            picked = [xp.concatenate(parts) for parts in zip(*found)]
            order = xp.argsort(-picked[1], kind="stable")[:total]
            n = order.shape[0]
            out_boxes[b, :n] = picked[0][order]
            out_scores[b, :n] = picked[1][order]
            out_classes[b, :n] = picked[2][order]
            valid[b] = n
        if attrs["clip_boxes"]:
            out_boxes = xp.clip(out_boxes, 0.0, 1.0)
        return out_boxes, out_scores, out_classes, valid

    return combined


registry.register(
    registry.OpDef(
        "CombinedNonMaxSuppression",
        _infer_combined,
        _combined_kernel,
        registry.NOT_DIFFERENTIABLE,
    )
)


def combined_non_max_suppression(
    boxes: Any,
    scores: Any,
    max_output_size_per_class: int,
    max_total_size: int,
    iou_threshold: float = 0.5,
    score_threshold: float = float("-inf"),
    pad_per_class: bool = False,
    clip_boxes: bool = True,
    name: str | None = None,
) -> CombinedNMS:
    """Greedy suppression per image and class, then the best ``max_total_size`` of each
    image (``tf.image.combined_non_max_suppression``).

    Args:
        boxes: float32 ``[batch, n, q, 4]``, ``q`` 1 (shared) or the number of classes.
        scores: float32 ``[batch, n, classes]``.
        max_output_size_per_class: how many boxes each class may keep (known at build
            time here).
        max_total_size: how many an image keeps (known at build time).
        iou_threshold, score_threshold: as in ``non_max_suppression``.
        pad_per_class: pad to ``min(max_output_size_per_class * classes,
            max_total_size)`` instead of ``max_total_size``.
        clip_boxes: clip the boxes to ``[0, 1]``.
        name: the op name.

    Returns:
        ``(nmsed_boxes, nmsed_scores, nmsed_classes, valid_detections)``.
    """
    b = convert_to_tensor(boxes, dtype=dtypes.float32, name="boxes")
    s = convert_to_tensor(scores, dtype=dtypes.float32, name="scores")
    per_class, total = int(max_output_size_per_class), int(max_total_size)
    classes = s.shape.as_list()[-1] if s.shape.rank else None
    if pad_per_class:
        if classes is None:
            raise ValueError("pad_per_class needs the number of classes at build time")
        total = min(per_class * classes, total)
    inputs = [
        b,
        s,
        convert_to_tensor(iou_threshold, dtype=dtypes.float32, name="iou_threshold"),
        convert_to_tensor(score_threshold, dtype=dtypes.float32, name="score_threshold"),
    ]
    attrs = {"per_class": per_class, "total": total, "clip_boxes": bool(clip_boxes)}
    op = apply_op_n("CombinedNonMaxSuppression", inputs, attrs, name=name)
    return CombinedNMS(*op.outputs)
