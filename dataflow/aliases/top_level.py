"""The long tail of TF1's top-level names (``tf.dynamic_stitch``,
``tf.space_to_batch_nd``, ``tf.searchsorted``, ...): explicit re-exports only, which
``dataflow/__init__.py`` takes whole (``__all__``) so that it stays one screenful per
module it re-exports."""
# ruff: noqa: I001 - this module is a public namespace: explicit re-exports only

from ..compat import dimension_at_index as dimension_at_index
from ..compat import dimension_value as dimension_value
from ..ops.io.codecs import matching_files as matching_files
from ..ops.io.parsing import SparseFeature as SparseFeature
from ..ops.io.sequence_example import (
    parse_single_sequence_example as parse_single_sequence_example,
)
from ..ops.io.codecs import (
    decode_base64 as decode_base64,
    decode_compressed as decode_compressed,
    encode_base64 as encode_base64,
    parse_tensor as parse_tensor,
    serialize_tensor as serialize_tensor,
    write_file as write_file,
)
from ..ops.debug.check_ops import (
    assert_equal as assert_equal,
    assert_greater as assert_greater,
    assert_greater_equal as assert_greater_equal,
    assert_less as assert_less,
    assert_less_equal as assert_less_equal,
    assert_negative as assert_negative,
    assert_non_negative as assert_non_negative,
    assert_non_positive as assert_non_positive,
    assert_none_equal as assert_none_equal,
    assert_positive as assert_positive,
)
from ..ops.debug.checks.ranks import (
    assert_rank as assert_rank,
    assert_rank_at_least as assert_rank_at_least,
    assert_rank_in as assert_rank_in,
    assert_scalar as assert_scalar,
)
from ..ops.debug.checks.values import (
    assert_integer as assert_integer,
    assert_near as assert_near,
    assert_proper_iterable as assert_proper_iterable,
    assert_same_float_dtype as assert_same_float_dtype,
    assert_type as assert_type,
    is_non_decreasing as is_non_decreasing,
    is_numeric_tensor as is_numeric_tensor,
    is_strictly_increasing as is_strictly_increasing,
)
from ..ops.random.distributions import random_gamma as random_gamma
from ..ops.random.distributions import random_poisson as random_poisson
from ..ops.random.random_ops import get_seed as get_seed
from ..ops.strings.conversions import as_string as as_string
from ..ops.strings.conversions import reduce_join as reduce_join
from ..ops.math.histogram_bins import histogram_fixed_width_bins as histogram_fixed_width_bins
from ..ops.sparse.edit_distance import edit_distance as edit_distance
from ..ops.control.switch_case import switch_case as switch_case
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
    "assert_equal",
    "assert_greater",
    "assert_greater_equal",
    "assert_integer",
    "assert_less",
    "assert_less_equal",
    "assert_near",
    "assert_negative",
    "assert_non_negative",
    "assert_non_positive",
    "assert_none_equal",
    "assert_positive",
    "assert_proper_iterable",
    "assert_rank",
    "assert_rank_at_least",
    "assert_rank_in",
    "assert_same_float_dtype",
    "assert_scalar",
    "assert_type",
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
    "edit_distance",
    "encode_base64",
    "ensure_shape",
    "extract_image_patches",
    "get_seed",
    "histogram_fixed_width_bins",
    "is_non_decreasing",
    "is_numeric_tensor",
    "is_strictly_increasing",
    "is_tensor",
    "matching_files",
    "parallel_dynamic_stitch",
    "parallel_stack",
    "parse_single_sequence_example",
    "parse_tensor",
    "random_gamma",
    "random_poisson",
    "reduce_join",
    "repeat",
    "required_space_to_batch_paddings",
    "saturate_cast",
    "searchsorted",
    "serialize_tensor",
    "setdiff1d",
    "space_to_batch",
    "space_to_batch_nd",
    "switch_case",
    "SparseFeature",
    "write_file",
]
