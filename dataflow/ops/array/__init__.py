"""Array ops: shapes, reshaping, slicing, joining, gathering, padding, and their
gradients: the public names of the array family, which lives in the modules below.

============  ===============================================================
module        holds
============  ===============================================================
``shapes``    ``Shape``/``Size``/``Rank``, ``Reshape``/``ExpandDims``/
              ``Squeeze``, ``SumToShape``/``BroadcastTo``, ``ZerosLike``/
              ``OnesLike``/``Fill`` (``zeros``, ``ones``), and the build-time
              helpers the family shares (``shape_helpers``)
``reorder``   ``Transpose``/``ConjugateTranspose``, ``InvertPermutation``,
              ``ReverseV2``, ``Range``
``indexing``  ``GatherV2``, ``UnsortedSegmentSum``, ``GatherNd``,
              ``ScatterNd``, ``OneHot``
``join``      ``ConcatV2``, ``Pack``/``Unpack``, ``Split``/``SplitV``, ``Tile``
``slicing``   ``Slice``, ``StridedSlice``/``StridedSliceGrad`` and
              ``tensor[...]``, ``Pad``/``PadV2``, ``MirrorPad``/
              ``MirrorPadGrad``, ``boolean_mask``
``distinct``  ``Unique``, ``UniqueWithCounts`` (not differentiable)
``rearrange`` composites: ``roll``, ``meshgrid``, ``unravel_index``,
              ``space_to_depth``/``depth_to_space`` (NHWC),
              ``dynamic_partition``
============  ===============================================================

and ``tensor_scatter``: ``TensorScatterUpdate``/``Add``/``Sub``/``Max``/``Min``
(``tensor_scatter_nd_*``, a copy of a tensor with updates written in); ``batch_space``:
the composites ``space_to_batch_nd``/``batch_to_space_nd``, TF1's 4-D forms and
``required_space_to_batch_paddings``; ``stitch``: ``DynamicStitch``/
``ParallelDynamicStitch`` and the composites ``batch_gather``, ``repeat``; ``sets``:
``ListDiff`` (``setdiff1d``), ``LowerBound``/``UpperBound`` (``searchsorted``);
``shape_checks``: ``EnsureShape``, ``BroadcastArgs``, ``broadcast_static_shape``,
``is_tensor``; ``reinterpret``: ``Bitcast`` and the composite ``saturate_cast``.

Each module imports only the ones above it in this table (math ops, which build on this
family, are imported inside functions). This module holds no code: it re-exports every
public builder, so ``from .array import reshape`` and ``array_ops.concat`` keep working,
and importing it registers every op type of the family.

Every op type of the family is linear in its data input (or not differentiable), so
each gradient rule is the adjoint op, itself an op of the family with its own gradient:

=======================  ===========================================
forward                  gradient (adjoint)
=======================  ===========================================
Reshape, ExpandDims,     Reshape back to ``shape(x)``
Squeeze
Transpose(perm)          Transpose(invert_permutation(perm))
ReverseV2                ReverseV2
ConcatV2                 SplitV (sizes from the inputs' shapes)
Split, SplitV            ConcatV2
Pack                     Unpack, and back
Slice                    Pad (before = begin, after = rest)
StridedSlice             StridedSliceGrad (zeros with ``dy`` written at the
                         slice), whose gradient is StridedSlice again
Pad, PadV2               Slice
MirrorPad                MirrorPadGrad (folds the reflected borders back),
                         whose gradient is MirrorPad
Tile                     Reshape to ``[m0, d0, m1, d1, ...]`` + SumToShape
GatherV2                 UnsortedSegmentSum (dense, never IndexedSlices),
                         whose gradient is GatherV2
GatherNd                 ScatterNd, and back
TensorScatterAdd, Sub    the identity, and GatherNd for the updates
TensorScatterUpdate      itself (zeros written at the slices), GatherNd
TensorScatterMax, Min    split among the elements equal to the output
                         (not linear: their only nonlinear op types)
Fill                     the pass's own SumToShape to a scalar
=======================  ===========================================

Static shapes: shape-valued inputs (a reshape's target, slice bounds, paddings) are
read at build time with ``shape_helpers.partial_value``, which extends
``tensor_util.constant_value`` to vectors known only in part (``tf.stack([tf.shape(x)[0],
-1])`` gives ``[None, -1]``), so partial shapes from placeholders with ``None`` dims
propagate as in TF.
"""

# --- re-exports: the public builders of the family, by defining module ------------------
from .batch_space import batch_to_space as batch_to_space
from .batch_space import batch_to_space_nd as batch_to_space_nd
from .batch_space import required_space_to_batch_paddings as required_space_to_batch_paddings
from .batch_space import space_to_batch as space_to_batch
from .batch_space import space_to_batch_nd as space_to_batch_nd
from .distinct import unique as unique
from .distinct import unique_with_counts as unique_with_counts
from .indexing import gather as gather
from .indexing import gather_nd as gather_nd
from .indexing import one_hot as one_hot
from .indexing import scatter_nd as scatter_nd
from .indexing import unsorted_segment_sum as unsorted_segment_sum
from .join import concat as concat
from .join import split as split
from .join import stack as stack
from .join import tile as tile
from .join import unstack as unstack
from .padding import pad as pad
from .rearrange import depth_to_space as depth_to_space
from .rearrange import dynamic_partition as dynamic_partition
from .rearrange import meshgrid as meshgrid
from .rearrange import roll as roll
from .rearrange import space_to_depth as space_to_depth
from .rearrange import unravel_index as unravel_index
from .reinterpret import bitcast as bitcast
from .reinterpret import saturate_cast as saturate_cast
from .reorder import invert_permutation as invert_permutation
from .reorder import range_ as range_
from .reorder import reverse as reverse
from .reorder import transpose as transpose
from .sets import searchsorted as searchsorted
from .sets import setdiff1d as setdiff1d
from .shape_checks import broadcast_dynamic_shape as broadcast_dynamic_shape
from .shape_checks import broadcast_static_shape as broadcast_static_shape
from .shape_checks import ensure_shape as ensure_shape
from .shape_checks import is_tensor as is_tensor
from .shapes import broadcast_to as broadcast_to
from .shapes import expand_dims as expand_dims
from .shapes import fill as fill
from .shapes import ones as ones
from .shapes import ones_like as ones_like
from .shapes import rank as rank
from .shapes import reshape as reshape
from .shapes import shape as shape
from .shapes import size as size
from .shapes import squeeze as squeeze
from .shapes import sum_like as sum_like
from .shapes import sum_to_shape as sum_to_shape
from .shapes import zeros as zeros
from .shapes import zeros_like as zeros_like
from .slicing import boolean_mask as boolean_mask
from .slicing import slice_ as slice_
from .slicing import strided_slice as strided_slice
from .stitch import batch_gather as batch_gather
from .stitch import dynamic_stitch as dynamic_stitch
from .stitch import parallel_dynamic_stitch as parallel_dynamic_stitch
from .stitch import repeat as repeat
from .tensor_scatter import tensor_scatter_nd_add as tensor_scatter_nd_add
from .tensor_scatter import tensor_scatter_nd_max as tensor_scatter_nd_max
from .tensor_scatter import tensor_scatter_nd_min as tensor_scatter_nd_min
from .tensor_scatter import tensor_scatter_nd_sub as tensor_scatter_nd_sub
from .tensor_scatter import tensor_scatter_nd_update as tensor_scatter_nd_update
