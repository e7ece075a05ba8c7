"""The long tail of TF1's top-level names (``tf.dynamic_stitch``,
``tf.space_to_batch_nd``, ``tf.searchsorted``, ...): explicit re-exports only, which
``dataflow/__init__.py`` takes whole (``__all__``) so that it stays one screenful per
module it re-exports."""
# ruff: noqa: I001 - this module is a public namespace: explicit re-exports only

from ..compat import dimension_at_index as dimension_at_index
from ..compat import dimension_value as dimension_value
from ..ops.io.codecs import matching_files as matching_files
from ..ops.io.codecs import (
    decode_base64 as decode_base64,
    decode_compressed as decode_compressed,
    encode_base64 as encode_base64,
    parse_tensor as parse_tensor,
    serialize_tensor as serialize_tensor,
    write_file as write_file,
)
from ..ops.strings.conversions import as_string as as_string
from ..ops.strings.conversions import reduce_join as reduce_join
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
    "as_string",
    "batch_gather",
    "batch_to_space",
    "batch_to_space_nd",
    "bitcast",
    "broadcast_dynamic_shape",
    "broadcast_static_shape",
    "decode_base64",
    "decode_compressed",
    "dimension_at_index",
    "dimension_value",
    "dynamic_stitch",
    "encode_base64",
    "ensure_shape",
    "extract_image_patches",
    "is_tensor",
    "matching_files",
    "parallel_dynamic_stitch",
    "parallel_stack",
    "parse_tensor",
    "reduce_join",
    "repeat",
    "required_space_to_batch_paddings",
    "saturate_cast",
    "searchsorted",
    "serialize_tensor",
    "setdiff1d",
    "space_to_batch",
    "space_to_batch_nd",
    "write_file",
]
