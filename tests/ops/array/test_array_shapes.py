"""Static shapes of the array ops: partial shapes, build-time folding, and errors.

* Array rows of the op table (``specs_array``) are rebuilt on placeholders of unknown
  rank, where the op allows it; the static shape must agree with the shape the kernel
  really produces (unknown dimensions of a known rank: ``tests/ops/test_op_table.py``).
* Hand-written cases pin the partial shapes TF1 infers (``None`` dims, ``-1`` in
  reshape, shape arithmetic through ``tf.shape``/``tf.stack``).
* Bad arguments are ``ValueError``/``TypeError`` at build time, naming the op; what can
  only be seen at run time is an ``InvalidArgumentError``.
"""

from __future__ import annotations

import numpy as np
import pytest

import dataflow as tf
from tests.ops.specs_array import ROWS


def _run(fetches, feeds):
    with tf.Session(config=tf.ConfigProto(debug=True)) as sess:
        return sess.run(fetches, feeds)


def _check_against_kernel(build, args, shape_of):
    phs = [tf.placeholder(tf.as_dtype(np.asarray(a).dtype), shape_of(np.shape(a))) for a in args]
    out = build(*phs)
    outs = out if isinstance(out, list) else [out]
    got = _run(outs, dict(zip(phs, args, strict=True)))
    for o, g in zip(outs, got, strict=True):
        assert o.shape.is_compatible_with(np.shape(g)), (o.shape, np.shape(g))
        assert o.dtype.as_numpy_dtype == np.asarray(g).dtype


UNKNOWN_RANK_OK = [
    row
    for row in ROWS
    if row.name
    in {
        "reshape",
        "reshape_flat",
        "reshape_dynamic",
        "concat_0",
        "concat_neg",
        "stack_0",
        "stack_last",
        "slice",
        "getitem_ellipsis_newaxis",
        "gather_0",
        "expand_dims",
        "squeeze_all",
        "tile",
        "pad_constant",
        "fill",
        "identity",
        "concat_int",
        "size",
        "rank",
        "zeros_dynamic",
        "transpose_default",
        "reverse",
        "split_sizes",
        "split_even",
    }
]


@pytest.mark.parametrize("row", UNKNOWN_RANK_OK, ids=[r.name for r in UNKNOWN_RANK_OK])
def test_unknown_rank_agrees_with_kernel(row):
    _check_against_kernel(row.builder(tf), row.args, lambda s: None)


def ph(*shape, dtype=tf.float32):
    return tf.placeholder(dtype, list(shape))


# (id, builder, expected static shape as a list, or None for unknown rank)
PARTIAL_CASES = [
    ("reshape_minus1", lambda: tf.reshape(ph(None, 3, 4), [-1, 12]), [None, 12]),
    ("reshape_middle", lambda: tf.reshape(ph(None, 3, 4), [2, -1, 3]), [2, None, 3]),
    ("reshape_known", lambda: tf.reshape(ph(2, 3, 4), [-1, 6]), [4, 6]),
    (
        "reshape_stacked",
        lambda: (lambda x: tf.reshape(x, tf.stack([tf.shape(x)[0], 12])))(ph(None, 3, 4)),
        [None, 12],
    ),
    ("reshape_to_shape_of", lambda: tf.reshape(ph(None, 3), tf.shape(ph(5, None))), [5, None]),
    (
        "reshape_concat_shape",
        lambda: (lambda x: tf.reshape(x, tf.concat([tf.shape(x)[:1], [-1]], 0)))(ph(None, 3, 4)),
        [None, None],
    ),
    ("reshape_unknown_rank", lambda: tf.reshape(tf.placeholder(tf.float32), [2, -1]), [2, None]),
    ("reshape_unknown_target", lambda: tf.reshape(ph(2, 3), ph(None, dtype=tf.int32)), None),
    ("transpose", lambda: tf.transpose(ph(None, 3, 4)), [4, 3, None]),
    (
        "transpose_dynamic_perm",
        lambda: tf.transpose(ph(None, 3), ph(2, dtype=tf.int32)),
        [None, None],
    ),
    ("concat_0", lambda: tf.concat([ph(None, 3), ph(2, None)], 0), [None, 3]),
    ("concat_1", lambda: tf.concat([ph(None, 3), ph(2, None)], 1), [2, None]),
    ("concat_known", lambda: tf.concat([ph(None, 3), ph(None, 4)], -1), [None, 7]),
    (
        "concat_dynamic_axis",
        lambda: tf.concat([ph(2, 3), ph(2, 3)], tf.placeholder(tf.int32, [])),
        [None, None],
    ),
    ("stack", lambda: tf.stack([ph(None, 3), ph(2, None)]), [2, 2, 3]),
    ("stack_axis1", lambda: tf.stack([ph(None, 3)] * 4, axis=1), [None, 4, 3]),
    ("getitem", lambda: ph(None, 3, 4)[1:, None, ::2], [None, 1, 2, 4]),
    ("getitem_ellipsis", lambda: ph(None, 3, 4)[..., 0], [None, 3]),
    ("getitem_reverse", lambda: ph(None, 5)[:, ::-2], [None, 3]),
    ("getitem_tensor_begin", lambda: ph(None, 3)[tf.placeholder(tf.int32, []) :, 0], [None]),
    ("getitem_tensor_shrink", lambda: ph(None, 3)[tf.placeholder(tf.int32, [])], [3]),
    ("getitem_unknown_rank", lambda: tf.placeholder(tf.float32)[0], None),
    ("getitem_unknown_rank_ellipsis", lambda: tf.placeholder(tf.float32)[..., 0], None),
    ("slice", lambda: tf.slice(ph(None, 3, 4), [0, 1, 1], [-1, -1, 2]), [None, 2, 2]),
    ("slice_dynamic_size", lambda: tf.slice(ph(4, 3), [1, 0], ph(2, dtype=tf.int32)), [None, None]),
    ("gather", lambda: tf.gather(ph(5, 3), ph(2, None, dtype=tf.int32)), [2, None, 3]),
    (
        "gather_axis1",
        lambda: tf.gather(ph(None, 3), ph(None, dtype=tf.int64), axis=1),
        [None, None],
    ),
    ("gather_nd", lambda: tf.gather_nd(ph(None, 3, 4), ph(7, 2, dtype=tf.int32)), [7, 4]),
    ("expand_dims", lambda: tf.expand_dims(ph(None, 3), 0), [1, None, 3]),
    ("squeeze_unknown", lambda: tf.squeeze(ph(None, 1, 3)), None),
    ("squeeze_axis", lambda: tf.squeeze(ph(None, 1, 3), [1]), [None, 3]),
    ("squeeze_known", lambda: tf.squeeze(ph(1, 2, 1)), [2]),
    ("tile", lambda: tf.tile(ph(None, 3), [2, 2]), [None, 6]),
    ("pad", lambda: tf.pad(ph(None, 3), [[1, 1], [2, 0]]), [None, 5]),
    ("pad_reflect", lambda: tf.pad(ph(None, 3), [[1, 1], [2, 0]], "REFLECT"), [None, 5]),
    ("split", lambda: tf.split(ph(None, 6), 3, 1)[2], [None, 2]),
    ("split_sizes", lambda: tf.split(ph(None, 6), [1, -1], 1)[1], [None, 5]),
    ("split_unknown_dim", lambda: tf.split(ph(4, None), [1, -1], 1)[1], [4, None]),
    ("unstack", lambda: tf.unstack(ph(None, 2), axis=1)[0], [None]),
    ("one_hot", lambda: tf.one_hot(ph(None, 2, dtype=tf.int32), 5), [None, 2, 5]),
    ("one_hot_axis", lambda: tf.one_hot(ph(None, 2, dtype=tf.int32), 5, axis=1), [None, 5, 2]),
    ("range", lambda: tf.range(tf.placeholder(tf.int32, [])), [None]),
    ("range_static", lambda: tf.range(2, 11, 3), [3]),
    ("boolean_mask", lambda: tf.boolean_mask(ph(None, 3), ph(None, dtype=tf.bool)), [None, 3]),
    (
        "boolean_mask_axis",
        lambda: tf.boolean_mask(ph(2, 4, 3), ph(4, dtype=tf.bool), axis=1),
        [2, None, 3],
    ),
    ("fill", lambda: tf.fill(tf.stack([tf.placeholder(tf.int32, []), 3]), 1.0), [None, 3]),
    ("zeros_shape_of", lambda: tf.zeros(tf.shape(ph(None, 3))), [None, 3]),
    ("zeros_like_dtype", lambda: tf.zeros_like(ph(None, 3), dtype=tf.int32), [None, 3]),
    ("scatter_nd", lambda: tf.scatter_nd(ph(None, 1, dtype=tf.int32), ph(None, 3), [5, 3]), [5, 3]),
    (
        "segment_sum",
        lambda: tf.unsorted_segment_sum(ph(None, 3), ph(None, dtype=tf.int32), 4),
        [4, 3],
    ),
    ("reverse", lambda: tf.reverse(ph(None, 3), [1]), [None, 3]),
    ("broadcast_to", lambda: tf.broadcast_to(ph(3, 1), [2, 3, 4]), [2, 3, 4]),
]


@pytest.mark.parametrize(
    "build,want", [c[1:] for c in PARTIAL_CASES], ids=[c[0] for c in PARTIAL_CASES]
)
def test_partial_static_shapes(build, want):
    out = build()
    if want is None:
        assert out.shape.rank is None, out.shape
    else:
        assert out.shape.as_list() == want


def test_shape_arithmetic_folds_at_build_time():
    x = tf.placeholder(tf.float32, [None, 3, 4])
    assert tf.get_static_value(tf.shape(tf.zeros([2, 3, 4]))[1:]).tolist() == [3, 4]
    assert tf.get_static_value(tf.size(tf.zeros([2, 5]))) == 10
    assert tf.get_static_value(tf.rank(x)) == 3
    assert tf.get_static_value(tf.concat([[1, 2], tf.range(3)], 0)).tolist() == [1, 2, 0, 1, 2]
    assert tf.get_static_value(tf.reverse(tf.stack([1, 2, 3]), [0])).tolist() == [3, 2, 1]
    assert tf.get_static_value(tf.one_hot(1, 3, dtype=tf.int32)).tolist() == [0, 1, 0]
    assert tf.get_static_value(tf.shape(x)[0]) is None


# (id, builder, exception type, message pattern)
BUILD_ERRORS = [
    (
        "reshape_size",
        lambda: tf.reshape(tf.zeros([2, 3]), [4]),
        ValueError,
        "Cannot reshape a tensor with 6 elements to shape \\[4\\]",
    ),
    (
        "reshape_multiple",
        lambda: tf.reshape(tf.zeros([2, 3]), [4, -1]),
        ValueError,
        "not a multiple of 4",
    ),
    (
        "reshape_two_minus1",
        lambda: tf.reshape(tf.zeros([2, 3]), [-1, -1]),
        ValueError,
        "at most one",
    ),
    (
        "reshape_float_shape",
        lambda: tf.reshape(tf.zeros([2, 3]), tf.constant([6.0])),
        TypeError,
        "int32 or int64",
    ),
    ("reshape_in_name", lambda: tf.reshape(tf.zeros([2, 3]), [5], name="bad"), ValueError, "'bad'"),
    (
        "concat_rank",
        lambda: tf.concat([tf.zeros([2, 3]), tf.zeros([2, 3, 1])], 0),
        ValueError,
        "Shape must be rank 2 but is rank 3",
    ),
    (
        "concat_dim",
        lambda: tf.concat([tf.zeros([2, 3]), tf.zeros([2, 4])], 0),
        ValueError,
        "Dimension 1 in both shapes must be equal, but are 3 and 4",
    ),
    (
        "concat_axis",
        lambda: tf.concat([tf.zeros([2, 3]), tf.zeros([2, 3])], 2),
        ValueError,
        "axis 2 is out of range",
    ),
    ("concat_axis_single", lambda: tf.concat([tf.zeros([2, 3])], -3), ValueError, "out of range"),
    ("concat_scalars", lambda: tf.concat([1.0, 2.0], 0), ValueError, "concatenate scalars"),
    (
        "concat_dtype",
        lambda: tf.concat([tf.zeros([2]), tf.zeros([2], tf.int32)], 0),
        TypeError,
        "does not match",
    ),
    (
        "stack_shapes",
        lambda: tf.stack([tf.zeros([2]), tf.zeros([3])]),
        ValueError,
        "Dimension 0 in both shapes must be equal",
    ),
    ("stack_axis", lambda: tf.stack([tf.zeros([2])] * 2, axis=2), ValueError, "out of range"),
    (
        "transpose_perm",
        lambda: tf.transpose(tf.zeros([2, 3]), [0, 0]),
        ValueError,
        "not a valid permutation",
    ),
    (
        "transpose_len",
        lambda: tf.transpose(tf.zeros([2, 3]), [0, 1, 2]),
        ValueError,
        "permutation of size 2",
    ),
    ("expand_dims_axis", lambda: tf.expand_dims(tf.zeros([2, 3]), 3), ValueError, "out of range"),
    (
        "squeeze_not_one",
        lambda: tf.squeeze(tf.zeros([1, 3]), [1]),
        ValueError,
        "Can not squeeze dim\\[1\\], expected a dimension of 1, got 3",
    ),
    ("squeeze_axis", lambda: tf.squeeze(tf.zeros([1, 3]), [2]), ValueError, "out of range"),
    ("gather_axis", lambda: tf.gather(tf.zeros([2, 3]), [0], axis=2), ValueError, "out of range"),
    (
        "gather_float_indices",
        lambda: tf.gather(tf.zeros([2, 3]), tf.constant([0.0])),
        TypeError,
        "int32 or int64",
    ),
    (
        "gather_nd_depth",
        lambda: tf.gather_nd(tf.zeros([2, 3]), [[0, 1, 2]]),
        ValueError,
        "indices.shape\\[-1\\] must be <= params.rank",
    ),
    (
        "slice_size",
        lambda: tf.slice(tf.zeros([4, 3]), [1, 1], [2, 3]),
        ValueError,
        "Expected size\\[1\\] in \\[0, 2\\], but got 3",
    ),
    (
        "slice_rank",
        lambda: tf.slice(tf.zeros([4, 3]), [1], [2]),
        ValueError,
        "Expected begin and size arguments to be 1-D tensors of size 2",
    ),
    (
        "getitem_bounds",
        lambda: tf.zeros([3, 2])[3],
        ValueError,
        "slice index 3 of dimension 0 out of bounds",
    ),
    (
        "getitem_negative_bounds",
        lambda: tf.zeros([3, 2])[:, -3],
        ValueError,
        "slice index -3 of dimension 1 out of bounds",
    ),
    ("getitem_too_many", lambda: tf.zeros([3])[0, 0], ValueError, "Index out of range"),
    ("getitem_float", lambda: tf.zeros([3])[1.0], TypeError, "Only integers"),
    ("getitem_float_tensor", lambda: tf.zeros([3])[tf.constant(1.0)], TypeError, "Only integers"),
    ("getitem_vector_tensor", lambda: tf.zeros([3])[tf.constant([1])], TypeError, "Only integers"),
    ("getitem_list", lambda: tf.zeros([3])[[0, 1]], TypeError, "Only integers"),
    ("getitem_ellipses", lambda: tf.zeros([3])[..., ...], ValueError, "Multiple ellipses"),
    ("getitem_zero_step", lambda: tf.zeros([3])[::0], ValueError, "non-zero"),
    (
        "split_even",
        lambda: tf.split(tf.zeros([5, 2]), 2),
        ValueError,
        "evenly divisible by 2 but is 5",
    ),
    (
        "split_sizes",
        lambda: tf.split(tf.zeros([5, 2]), [2, 2]),
        ValueError,
        "must add up to dimension 0 of size 5",
    ),
    ("split_axis", lambda: tf.split(tf.zeros([5, 2]), 2, axis=-3), ValueError, "out of range"),
    (
        "unstack_num",
        lambda: tf.unstack(tf.placeholder(tf.float32, [None, 2])),
        ValueError,
        "Cannot infer num",
    ),
    (
        "unstack_mismatch",
        lambda: tf.unstack(tf.zeros([3, 2]), num=2),
        ValueError,
        "Cannot unpack dimension 0 of size 3 into 2",
    ),
    ("tile_length", lambda: tf.tile(tf.zeros([3, 2]), [2]), ValueError, "vector of length 2"),
    (
        "pad_reflect",
        lambda: tf.pad(tf.zeros([3, 2]), [[3, 0], [0, 0]], "REFLECT"),
        ValueError,
        "no greater than 2 in REFLECT mode",
    ),
    (
        "pad_symmetric",
        lambda: tf.pad(tf.zeros([3, 2]), [[0, 0], [0, 3]], "SYMMETRIC"),
        ValueError,
        "no greater than 2 in SYMMETRIC mode",
    ),
    (
        "pad_shape",
        lambda: tf.pad(tf.zeros([3, 2]), [[1, 1]]),
        ValueError,
        "paddings must be a matrix of shape \\[2, 2\\]",
    ),
    (
        "pad_negative",
        lambda: tf.pad(tf.zeros([3, 2]), [[1, -1], [0, 0]]),
        ValueError,
        "non-negative",
    ),
    (
        "pad_mode",
        lambda: tf.pad(tf.zeros([3, 2]), [[1, 1], [0, 0]], "WRAP"),
        ValueError,
        "Unknown padding mode: WRAP",
    ),
    ("range_delta", lambda: tf.range(0, 3, 0), ValueError, "delta != 0"),
    (
        "range_direction",
        lambda: tf.range(3, 0, 1),
        ValueError,
        "Requires start <= limit when delta > 0",
    ),
    (
        "one_hot_axis",
        lambda: tf.one_hot([1, 2], 3, axis=2),
        ValueError,
        "Expected axis to be -1 or between \\[0, 1\\]",
    ),
    (
        "one_hot_dtypes",
        lambda: tf.one_hot([1], 3, on_value=tf.constant(1.0), off_value=tf.constant(0)),
        TypeError,
        "dtype of on_value",
    ),
    (
        "boolean_mask_scalar",
        lambda: tf.boolean_mask(tf.zeros([3]), True),
        ValueError,
        "mask cannot be scalar",
    ),
    (
        "boolean_mask_shape",
        lambda: tf.boolean_mask(tf.zeros([3, 2]), [True, False]),
        ValueError,
        "incompatible",
    ),
    (
        "boolean_mask_unknown_rank",
        lambda: tf.boolean_mask(tf.zeros([3]), tf.placeholder(tf.bool)),
        ValueError,
        "Number of mask dimensions must be specified",
    ),
    ("fill_value_rank", lambda: tf.fill([2], [1.0, 2.0]), ValueError, "rank 0"),
    (
        "scatter_nd_shape",
        lambda: tf.scatter_nd([[0], [1]], tf.zeros([2, 4]), [3, 5]),
        ValueError,
        "updates shape",
    ),
]


@pytest.mark.parametrize(
    "build,exc,pattern", [c[1:] for c in BUILD_ERRORS], ids=[c[0] for c in BUILD_ERRORS]
)
def test_build_time_errors(build, exc, pattern):
    with pytest.raises(exc, match=pattern):
        build()


# (id, builder over placeholders -> fetch, feeds as (shape, dtype, value) per placeholder)
RUN_ERRORS = [
    ("reshape", lambda x: tf.reshape(x, [4, -1]), [np.zeros((2, 3), np.float32)], "cannot reshape"),
    (
        "gather_range",
        lambda i: tf.gather(tf.zeros([3, 2]), i),
        [np.array([0, 3])],
        "not in \\[0, 3\\)",
    ),
    (
        "gather_negative",
        lambda i: tf.gather(tf.zeros([3, 2]), i),
        [np.array([-1])],
        "not in \\[0, 3\\)",
    ),
    (
        "gather_nd_range",
        lambda i: tf.gather_nd(tf.zeros([3, 2]), i),
        [np.array([[2, 2]])],
        "not in",
    ),
    ("unstack", lambda x: tf.unstack(x, num=2)[0], [np.zeros((3,), np.float32)], "expected 2"),
    (
        "slice",
        lambda b: tf.slice(tf.zeros([3, 2]), b, [2, 1]),
        [np.array([2, 0])],
        "to fit in dimension 0 of size 3",
    ),
    ("getitem", lambda i: tf.zeros([3, 2])[i], [np.int32(5)], "out of bounds"),
    ("range", lambda d: tf.range(0, 3, d), [np.int32(0)], "delta != 0"),
    (
        "split",
        lambda s: tf.split(tf.zeros([4]), s, num=2)[0],
        [np.array([1, 2])],
        "do not add up to 4",
    ),
    (
        "segment_ids",
        lambda s: tf.unsorted_segment_sum(tf.zeros([2]), s, 2),
        [np.array([0, 2])],
        "not in \\[0, 2\\)",
    ),
]


@pytest.mark.parametrize(
    "build,values,pattern", [c[1:] for c in RUN_ERRORS], ids=[c[0] for c in RUN_ERRORS]
)
def test_run_time_errors(build, values, pattern):
    phs = [tf.placeholder(tf.as_dtype(np.asarray(v).dtype), [None] * np.ndim(v)) for v in values]
    out = build(*phs)
    with pytest.raises(tf.errors.InvalidArgumentError, match=pattern):
        _run(out, dict(zip(phs, values, strict=True)))


def test_kernels_use_only_the_device_array_namespace():
    # Kernel bodies (and the helpers they call) must reach numpy/cupy through ctx.xp.
    import ast
    import inspect

    from dataflow.ops.array import indexing as array_gather
    from dataflow.ops.array import join as array_join
    from dataflow.ops.array import reorder as array_transpose
    from dataflow.ops.array import shapes as array_shape
    from dataflow.ops.array import slicing as array_slice

    # The array family's modules (dataflow/ops/array/__init__.py only re-exports their builders).
    modules = (array_shape, array_transpose, array_gather, array_join, array_slice)
    tree = ast.Module([n for m in modules for n in ast.parse(inspect.getsource(m)).body], [])
    helpers = {"slice_key", "_range_length", "_check_indices", "_nd_index"}
    checked = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and (
            node.name.endswith("_kernel") or node.name in helpers
        ):
            names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            assert "np" not in names, f"{node.name} uses numpy directly"
            checked += 1
    assert checked > 30
