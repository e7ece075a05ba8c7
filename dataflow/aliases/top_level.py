"""The long tail of TF1's top-level names (``tf.dynamic_stitch``,
``tf.space_to_batch_nd``, ``tf.searchsorted``, ...): explicit re-exports only, which
``dataflow/__init__.py`` takes whole (``__all__``) so that it stays one screenful per
module it re-exports."""
# ruff: noqa: I001 - this module is a public namespace: explicit re-exports only

from ..compat import dimension_at_index as dimension_at_index
from ..compat import dimension_value as dimension_value
from ..ops.image.geometry import extract_image_patches as extract_image_patches
from ..ops.array import (
    batch_gather as batch_gather,
    batch_to_space as batch_to_space,
    batch_to_space_nd as batch_to_space_nd,
    bitcast as bitcast,
    broadcast_dynamic_shape as broadcast_dynamic_shape,
    broadcast_static_shape as broadcast_static_shape,
    dynamic_stitch as dynamic_stitch,
    ensure_shape as ensure_shape,
    is_tensor as is_tensor,
    parallel_dynamic_stitch as parallel_dynamic_stitch,
    repeat as repeat,
    required_space_to_batch_paddings as required_space_to_batch_paddings,
    saturate_cast as saturate_cast,
    searchsorted as searchsorted,
    setdiff1d as setdiff1d,
    space_to_batch as space_to_batch,
    space_to_batch_nd as space_to_batch_nd,
    stack as parallel_stack,
)

__all__ = [
    "batch_gather",
    "batch_to_space",
    "batch_to_space_nd",
    "bitcast",
    "broadcast_dynamic_shape",
    "broadcast_static_shape",
    "dimension_at_index",
    "dimension_value",
    "dynamic_stitch",
    "ensure_shape",
    "extract_image_patches",
    "is_tensor",
    "parallel_dynamic_stitch",
    "parallel_stack",
    "repeat",
    "required_space_to_batch_paddings",
    "saturate_cast",
    "searchsorted",
    "setdiff1d",
    "space_to_batch",
    "space_to_batch_nd",
]
