"""Array ops: shapes, reshaping, slicing, joining, gathering, padding, and their
gradients: the public names of the array family, which lives in six modules.

===================  ===============================================================
module               holds
===================  ===============================================================
``array_shape``      ``Shape``/``Size``/``Rank``, ``Reshape``/``ExpandDims``/
                     ``Squeeze``, ``SumToShape``/``BroadcastTo``, ``ZerosLike``/
                     ``OnesLike``/``Fill`` (``zeros``, ``ones``), and the build-time
                     helpers the family shares (``_partial``, ``_int_tensor``, ...)
``array_transpose``  ``Transpose``/``ConjugateTranspose``, ``InvertPermutation``,
                     ``ReverseV2``, ``Range``
``array_gather``     ``GatherV2``, ``UnsortedSegmentSum``, ``GatherNd``,
                     ``ScatterNd``, ``OneHot``
``array_join``       ``ConcatV2``, ``Pack``/``Unpack``, ``Split``/``SplitV``, ``Tile``
``array_slice``      ``Slice``, ``StridedSlice``/``StridedSliceGrad`` and
                     ``tensor[...]``, ``Pad``/``PadV2``, ``MirrorPad``/
                     ``MirrorPadGrad``, ``boolean_mask``
``array_unique``     ``Unique``, ``UniqueWithCounts`` (not differentiable)
===================  ===============================================================

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
Fill                     the pass's own SumToShape to a scalar
=======================  ===========================================

Static shapes: shape-valued inputs (a reshape's target, slice bounds, paddings) are
read at build time with ``array_shape._partial``, which extends
``tensor_util.constant_value`` to vectors known only in part (``tf.stack([tf.shape(x)[0],
-1])`` gives ``[None, -1]``), so partial shapes from placeholders with ``None`` dims
propagate as in TF.
"""

# --- re-exports: the public builders of the family, by defining module -------------------
from .array_gather import gather as gather
from .array_gather import gather_nd as gather_nd
from .array_gather import one_hot as one_hot
from .array_gather import scatter_nd as scatter_nd
from .array_gather import unsorted_segment_sum as unsorted_segment_sum
from .array_join import concat as concat
from .array_join import split as split
from .array_join import stack as stack
from .array_join import tile as tile
from .array_join import unstack as unstack
from .array_pad import pad as pad
from .array_shape import broadcast_to as broadcast_to
from .array_shape import expand_dims as expand_dims
from .array_shape import fill as fill
from .array_shape import ones as ones
from .array_shape import ones_like as ones_like
from .array_shape import rank as rank
from .array_shape import reshape as reshape
from .array_shape import shape as shape
from .array_shape import size as size
from .array_shape import squeeze as squeeze
from .array_shape import sum_like as sum_like
from .array_shape import sum_to_shape as sum_to_shape
from .array_shape import zeros as zeros
from .array_shape import zeros_like as zeros_like
from .array_slice import boolean_mask as boolean_mask
from .array_slice import slice_ as slice_
from .array_slice import strided_slice as strided_slice
from .array_transpose import invert_permutation as invert_permutation
from .array_transpose import range_ as range_
from .array_transpose import reverse as reverse
from .array_transpose import transpose as transpose
from .array_unique import unique as unique
from .array_unique import unique_with_counts as unique_with_counts
