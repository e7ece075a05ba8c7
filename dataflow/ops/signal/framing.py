"""``frame`` (overlapping windows of a signal) and ``overlap_and_add`` (their sum back
into one signal), as composites.

``frame`` is one ``gather`` along the framed axis with an index matrix ``[num_frames,
frame_length]`` (row ``f`` holds ``f * frame_step + range(frame_length)``), after
padding the end of the signal when ``pad_end``. ``overlap_and_add`` is its adjoint:
the frames axis and the frame axis move to the front and one
``unsorted_segment_sum`` adds every sample into output position ``f * frame_step + j``.
Their gradients are each other's ops (``gather``'s is a segment sum and back), so both
are differentiable to any order. Indices are built with graph ops, so frame lengths
and steps may be tensors; constant ones fold, giving static shapes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...framework import dtypes
from ...framework.graph import Tensor
from ...framework.scopes import name_scope
from ...framework.tensor_util import constant_value
from .. import array as array_ops
from .. import math as math_ops
from ..build import convert_inputs


def scalar_int(value: Any, what: str) -> Tensor:
    """``value`` as an int32 scalar tensor; a ``ValueError`` if its rank is not 0."""
    t = convert_inputs([value], dtypes.int32)[0]
    if t.shape.ndims not in (None, 0):
        raise ValueError(f"{what} must be a scalar, got shape {t.shape}")
    if not t.dtype.is_integer:
        raise TypeError(f"{what} must be an integer, got {t.dtype.name}")
    return math_ops.cast(t, dtypes.int32)


def _frame_indices(num_frames: Tensor, frame_length: Tensor, frame_step: Tensor) -> Tensor:
    starts = math_ops.multiply(array_ops.range_(num_frames), frame_step)
    offsets = array_ops.range_(frame_length)
    return math_ops.add(array_ops.expand_dims(starts, 1), array_ops.expand_dims(offsets, 0))


def frame(
    signal: Any,
    frame_length: Any,
    frame_step: Any,
    pad_end: bool = False,
    pad_value: Any = 0,
    axis: int = -1,
    name: str | None = None,
) -> Tensor:
    """Slices ``signal`` along ``axis`` into frames of ``frame_length`` samples, one every
    ``frame_step`` samples.

    Args:
        signal: a tensor of rank at least 1.
        frame_length: the samples per frame (an int or an int32 scalar tensor).
        frame_step: the samples between the starts of consecutive frames.
        pad_end: pad the end of the signal with ``pad_value`` so that every sample is
            in a frame (``ceil(n / frame_step)`` frames); otherwise only whole frames
            are kept (``1 + (n - frame_length) // frame_step``, at least 0).
        pad_value: the value padded with.
        axis: the axis to frame (an int).
        name: a name scope.

    Returns:
        ``signal`` with ``axis`` replaced by two axes ``[num_frames, frame_length]``.
    """
    with name_scope(name, "frame", [signal, frame_length, frame_step]):
        x = convert_inputs([signal])[0]
        if x.shape.ndims == 0:
            raise ValueError(f"frame needs a signal of rank at least 1, got shape {x.shape}")
        length_t = scalar_int(frame_length, "frame_length")
        step_t = scalar_int(frame_step, "frame_step")
        axis = int(axis)
        if x.shape.ndims is not None:
            axis = axis % x.shape.ndims
        elif axis < 0:
            raise ValueError("frame needs the signal's rank for a negative axis")
        samples = array_ops.shape(x)[axis]
        if pad_end:
            num_frames = math_ops.floordiv(
                math_ops.add(samples, math_ops.subtract(step_t, 1)), step_t
            )
            needed = math_ops.add(
                math_ops.multiply(math_ops.subtract(num_frames, 1), step_t), length_t
            )
            extra = math_ops.maximum(math_ops.subtract(needed, samples), 0)
            rank = array_ops.rank(x)
            where = math_ops.cast(math_ops.equal(array_ops.range_(rank), axis), dtypes.int32)
            paddings = array_ops.stack([array_ops.zeros_like(where), where * extra], axis=1)
            x = array_ops.pad(x, paddings, constant_values=pad_value)
        else:
            whole = math_ops.floordiv(math_ops.subtract(samples, length_t), step_t)
            num_frames = math_ops.maximum(math_ops.add(whole, 1), 0)
        indices = _frame_indices(num_frames, length_t, step_t)
        return array_ops.gather(x, indices, axis=axis)


def overlap_and_add(signal: Any, frame_step: Any, name: str | None = None) -> Tensor:
    """Adds overlapping frames back into one signal: frame ``f`` (the second to last
    axis) starts at sample ``f * frame_step``.

    Args:
        signal: ``[..., frames, frame_length]``, of known rank.
        frame_step: an int or int32 scalar tensor, at most ``frame_length``.
        name: a name scope.

    Returns:
        ``[..., (frames - 1) * frame_step + frame_length]``.

    Raises:
        ValueError: ``signal`` has rank below 2 (or unknown), or a known ``frame_step``
            exceeds a known ``frame_length``.
    """
    with name_scope(name, "overlap_and_add", [signal, frame_step]):
        x = convert_inputs([signal])[0]
        rank = x.shape.ndims
        if rank is None or rank < 2:
            raise ValueError(f"overlap_and_add needs a signal of rank >= 2, got {x.shape}")
        step_t = scalar_int(frame_step, "frame_step")
        step_value = constant_value(step_t)
        frame_dim = x.shape.as_list()[-1]
        if step_value is not None and frame_dim is not None and int(step_value) > frame_dim:
            raise ValueError(
                f"frame_step ({int(step_value)}) must be at most frame_length ({frame_dim})"
            )
        dims = array_ops.shape(x)
        frames, length = dims[-2], dims[-1]
        ids = _frame_indices(frames, length, step_t)
        total = math_ops.add(math_ops.multiply(math_ops.subtract(frames, 1), step_t), length)
        total = math_ops.maximum(total, 0)
        perm = [rank - 2, rank - 1, *range(rank - 2)]
        moved = array_ops.transpose(x, perm)
        summed = array_ops.unsorted_segment_sum(moved, ids, total)
        back = [*range(1, rank - 1), 0]
        return array_ops.transpose(summed, np.asarray(back, np.int32))
