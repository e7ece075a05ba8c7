"""Space-to-batch composites: ``space_to_batch_nd``/``batch_to_space_nd``, TF1's 4-D
``space_to_batch``/``batch_to_space``, and ``required_space_to_batch_paddings``.

``space_to_batch_nd(x, block, paddings)`` with ``x`` of shape
``[B] + spatial (M dims) + rest``:

1. ``pad`` the M spatial dimensions by ``paddings`` (``[M, 2]``): sizes ``P_i``;
2. ``reshape`` to ``[B, P_1/b_1, b_1, ..., P_M/b_M, b_M] + rest``;
3. ``transpose`` to ``[b_1, ..., b_M, B, P_1/b_1, ..., P_M/b_M] + rest``;
4. ``reshape`` to ``[B * prod(b), P_1/b_1, ..., P_M/b_M] + rest``.

``batch_to_space_nd`` runs the same steps backwards and crops instead of padding. Each
step is a primitive of the family, so gradients (to any order) come from them: the
gradient of one is the other. ``block_shape`` must be known at graph build time
(it fixes the reshapes' ranks); paddings and crops may be tensors.

Worked example: ``x = [[[[1], [2]], [[3], [4]]]]`` (``[1, 2, 2, 1]``), block ``[2, 2]``,
no padding: four images of one pixel each, ``[[[[1]]], [[[2]]], [[[3]]], [[[4]]]]``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...framework import dtypes
from ...framework.graph import Tensor, convert_to_tensor, get_default_graph
from ...framework.tensor_util import constant_value
from ..math.arith import add, floordiv, floormod, multiply, subtract
from .join import concat, stack
from .padding import pad
from .reorder import transpose
from .shape_helpers import shape_of
from .shapes import reshape, zeros
from .slicing import slice_


def _static_block(block_shape: Any, op_type: str) -> list[int]:
    block_t = convert_to_tensor(block_shape, name="block_shape")
    if block_t.dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"{op_type}: block_shape must be int32 or int64, got {block_t.dtype.name}")
    value = constant_value(block_t)
    if value is None:
        raise ValueError(f"{op_type}: block_shape must be known at graph build time")
    block = [int(b) for b in np.asarray(value).reshape(-1)]
    if np.asarray(value).ndim != 1 or not block:
        raise ValueError(f"{op_type}: block_shape must be a non-empty vector, got {value}")
    if min(block) < 1:
        raise ValueError(f"{op_type}: block_shape must be positive, got {block}")
    return block


def _dims(x: Tensor) -> list[Any]:
    """``x``'s dimensions: Python ints where known, scalar tensors elsewhere."""
    known = x.shape.as_list()
    if all(d is not None for d in known):
        return list(known)
    dynamic = shape_of(x)
    return [d if d is not None else dynamic[i] for i, d in enumerate(known)]


def _ranked(x: Tensor, m: int, op_type: str) -> int:
    rank = x.shape.rank
    if rank is None:
        raise ValueError(f"{op_type}: the rank of input must be known")
    if rank < m + 1:
        raise ValueError(f"{op_type}: input rank should be >= {m + 1}, got shape {x.shape}")
    return rank


def _pairs(value: Any, m: int, what: str, op_type: str) -> Tensor:
    pairs = convert_to_tensor(value, name=what)
    if pairs.dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"{op_type}: {what} must be int32 or int64, got {pairs.dtype.name}")
    if not pairs.shape.is_compatible_with([m, 2]):
        raise ValueError(f"{op_type}: {what} must have shape [{m}, 2], got {pairs.shape}")
    known = constant_value(pairs)
    if known is not None and (np.asarray(known) < 0).any():
        raise ValueError(f"{op_type}: {what} must be non-negative, got {known.tolist()}")
    return pairs


def _over(a: Any, b: int, what: str, op_type: str) -> Any:
    if not isinstance(a, int):
        return floordiv(a, b)
    if a % b:
        raise ValueError(f"{op_type}: {what} {a} is not divisible by block size {b}")
    return a // b


def _times(a: Any, b: int) -> Any:
    return a * b if isinstance(a, int) else multiply(a, b)


def space_to_batch_nd(
    input: Any, block_shape: Any, paddings: Any, name: str | None = None
) -> Tensor:
    """Divides the spatial dimensions of ``input`` into a grid of blocks and moves the
    blocks into the batch dimension (``tf.space_to_batch_nd``).

    Args:
        input: ``[batch] + spatial_shape + remaining_shape``, ``M = len(block_shape)``
            spatial dimensions.
        block_shape: int vector of ``M`` positive block sizes, known at graph build time.
        paddings: int ``[M, 2]``: zeros added before and after each spatial dimension.
        name: the name scope.

    Returns:
        ``[batch * prod(block_shape)] + [padded_i / block_i] + remaining_shape``.

    Raises:
        ValueError: a padded spatial size not divisible by its block, negative paddings,
            a block size below 1, or an input rank below ``M + 1``.
        TypeError: non-integer ``block_shape`` or ``paddings``.
    """
    with get_default_graph().name_scope(name or "SpaceToBatchND"):
        x = convert_to_tensor(input, name="input")
        block = _static_block(block_shape, "SpaceToBatchND")
        m = len(block)
        rank = _ranked(x, m, "SpaceToBatchND")
        pads = _pairs(paddings, m, "paddings", "SpaceToBatchND")
        known = constant_value(pads)
        if known is not None:  # a padding known at build time keeps the static sizes
            full: Any = np.concatenate([[[0, 0]], known, np.zeros((rank - m - 1, 2), np.int64)])
        else:
            full = concat(
                [zeros([1, 2], pads.dtype), pads, zeros([rank - m - 1, 2], pads.dtype)], 0
            )
        padded = pad(x, full)
        dims = _dims(padded)
        batch, spatial, rest = dims[0], dims[1 : m + 1], dims[m + 1 :]
        grid = [
            _over(p, b, f"padded dimension {i + 1}", "SpaceToBatchND")
            for i, (p, b) in enumerate(zip(spatial, block, strict=True))
        ]
        split = [batch] + [d for g, b in zip(grid, block, strict=True) for d in (g, b)] + rest
        blocks = reshape(padded, split)
        perm = [2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)]
        perm += list(range(2 * m + 1, 2 * m + 1 + len(rest)))
        moved = transpose(blocks, perm)
        return reshape(moved, [_times(batch, int(np.prod(block))), *grid, *rest])


def batch_to_space_nd(input: Any, block_shape: Any, crops: Any, name: str | None = None) -> Tensor:
    """The inverse of ``space_to_batch_nd`` (``tf.batch_to_space_nd``): moves blocks of
    the batch dimension back into ``M = len(block_shape)`` spatial dimensions, then
    crops them by ``crops`` (``[M, 2]``, from the start and the end).

    Returns:
        ``[batch / prod(block_shape)] + [input_i * block_i - crops] + remaining_shape``.

    Raises:
        ValueError: a batch not divisible by ``prod(block_shape)``, crops larger than a
            dimension, negative crops, a block size below 1, or a rank below ``M + 1``.
        TypeError: non-integer ``block_shape`` or ``crops``.
    """
    with get_default_graph().name_scope(name or "BatchToSpaceND"):
        x = convert_to_tensor(input, name="input")
        block = _static_block(block_shape, "BatchToSpaceND")
        m = len(block)
        rank = _ranked(x, m, "BatchToSpaceND")
        crop_t = _pairs(crops, m, "crops", "BatchToSpaceND")
        dims = _dims(x)
        batch, spatial, rest = dims[0], dims[1 : m + 1], dims[m + 1 :]
        out_batch = _over(batch, int(np.prod(block)), "batch", "BatchToSpaceND")
        blocks = reshape(x, [*block, out_batch, *spatial, *rest])
        perm = [m]
        for i in range(m):
            perm += [m + 1 + i, i]
        perm += list(range(2 * m + 1, rank + m))
        moved = transpose(blocks, perm)
        full = [_times(s, b) for s, b in zip(spatial, block, strict=True)]
        joined = reshape(moved, [out_batch, *full, *rest])
        known = constant_value(crop_t)
        if known is not None:
            known = np.asarray(known)
            for i, size in enumerate(full):
                if isinstance(size, int) and known[i].sum() > size:
                    raise ValueError(
                        f"BatchToSpaceND: crops {known[i].tolist()} exceed dimension {i + 1} "
                        f"of size {size}"
                    )
            begin = [0, *known[:, 0].tolist()] + [0] * len(rest)
            size_ = (
                [-1]
                + [
                    f - int(c.sum()) if isinstance(f, int) else subtract(f, int(c.sum()))
                    for f, c in zip(full, known, strict=True)
                ]
                + [-1] * len(rest)
            )
            return slice_(
                joined, begin, stack(size_) if any(isinstance(s, Tensor) for s in size_) else size_
            )
        crop_i = crop_t if crop_t.dtype == dtypes.int32 else _to_int32(crop_t)
        tail = [0] * len(rest)
        begin_t = concat([[0], crop_i[:, 0], tail], 0) if rest else concat([[0], crop_i[:, 0]], 0)
        sizes = shape_of(joined)[1 : m + 1] - crop_i[:, 0] - crop_i[:, 1]
        size_t = concat([[-1], sizes, [-1] * len(rest)], 0) if rest else concat([[-1], sizes], 0)
        return slice_(joined, begin_t, size_t)


def _to_int32(t: Tensor) -> Tensor:
    from ..cast import cast

    return cast(t, dtypes.int32)


def space_to_batch(input: Any, paddings: Any, block_size: int, name: str | None = None) -> Tensor:
    """TF1's 4-D ``tf.space_to_batch``: ``space_to_batch_nd`` with block
    ``[block_size, block_size]`` over height and width (``block_size`` >= 2)."""
    if int(block_size) < 2:
        raise ValueError(f"SpaceToBatch: block_size must be greater than 1, got {block_size}")
    x = convert_to_tensor(input, name="input")
    if x.shape.rank is not None and x.shape.rank != 4:
        raise ValueError(f"SpaceToBatch: input must be 4-D, got shape {x.shape}")
    return space_to_batch_nd(x, [int(block_size)] * 2, paddings, name=name or "SpaceToBatch")


def batch_to_space(input: Any, crops: Any, block_size: int, name: str | None = None) -> Tensor:
    """TF1's 4-D ``tf.batch_to_space``: ``batch_to_space_nd`` with block
    ``[block_size, block_size]`` over height and width (``block_size`` >= 2)."""
    if int(block_size) < 2:
        raise ValueError(f"BatchToSpace: block_size must be greater than 1, got {block_size}")
    x = convert_to_tensor(input, name="input")
    if x.shape.rank is not None and x.shape.rank != 4:
        raise ValueError(f"BatchToSpace: input must be 4-D, got shape {x.shape}")
    return batch_to_space_nd(x, [int(block_size)] * 2, crops, name=name or "BatchToSpace")


def required_space_to_batch_paddings(
    input_shape: Any, block_shape: Any, base_paddings: Any = None, name: str | None = None
) -> tuple[Tensor, Tensor]:
    """The ``(paddings, crops)`` that make ``input_shape`` (plus ``base_paddings``)
    divisible by ``block_shape`` (``tf.required_space_to_batch_paddings``): the extra
    padding goes at the end of each dimension, and ``crops`` removes it again. Both are
    int32 ``[M, 2]``."""
    with get_default_graph().name_scope(name or "required_space_to_batch_paddings"):
        shape_t = convert_to_tensor(input_shape, dtype=dtypes.int32, name="input_shape")
        block_t = convert_to_tensor(block_shape, dtype=dtypes.int32, name="block_shape")
        if block_t.shape.rank is not None and block_t.shape.rank != 1:
            raise ValueError(f"block_shape must be a vector, got shape {block_t.shape}")
        m = block_t.shape.as_list()[0]
        if base_paddings is None:
            base = zeros([m if m is not None else shape_of(block_t)[0], 2], dtypes.int32)
        else:
            base = convert_to_tensor(base_paddings, dtype=dtypes.int32, name="base_paddings")
        start, end = base[:, 0], base[:, 1]
        full = add(add(shape_t, start), end)
        extra = floormod(subtract(block_t, floormod(full, block_t)), block_t)
        paddings = stack([start, add(end, extra)], axis=1, name="paddings")
        crops = stack([multiply(extra, 0), extra], axis=1, name="crops")
        return paddings, crops
