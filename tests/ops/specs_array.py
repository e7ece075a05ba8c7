"""The array family's rows of the op table (``tests/ops/op_table.py``).

Differentiable rows square the op's output (``squared``) so that the second-order
check differentiates through the gradient ops themselves (for a linear op alone the
gradient would not depend on the input). Integer, boolean and complex rows are
forward-only.
"""

from __future__ import annotations

import autograd.numpy as anp
import numpy as np

from dataflow.testing.op_spec import OpSpec, call, squared

RNG = np.random.default_rng(7)


def rand(*shape):
    return RNG.standard_normal(shape)


def unique_first_seen(a):
    """numpy's unique, ordered as TF1 orders it: by first occurrence."""
    values = list(dict.fromkeys(a.tolist()))
    idx = np.array([values.index(v) for v in a.tolist()], np.int32)
    counts = np.array([a.tolist().count(v) for v in values], np.int32)
    return [np.array(values, a.dtype), idx, counts]


def mirror_ref(paddings, mode):
    """np.pad's index map for REFLECT/SYMMETRIC, applied by indexing per axis."""

    def f(a):
        for axis, p in enumerate(paddings):
            idx = np.pad(np.arange(a.shape[axis]), p, mode=mode)
            a = a[(slice(None),) * axis + (idx,)]
        return a

    return f


MASK = np.array([[True, False, True], [False, False, True]])
SEGMENTS = np.array([3, 0, 3, 1])
ND_INDICES = np.array([[1, 0], [0, 2], [1, 0]])


DIFFERENTIABLE = [
    OpSpec(
        "reshape",
        *squared(lambda tf, a: tf.reshape(a, [4, -1]), lambda a: anp.reshape(a, (4, -1))),
        [rand(2, 3, 4)],
    ),
    OpSpec(
        "reshape_flat",
        *squared(lambda tf, a: tf.reshape(a, [-1]), lambda a: anp.reshape(a, -1)),
        [rand(2, 3)],
    ),
    OpSpec(
        "reshape_scalar",
        *squared(lambda tf, a: tf.reshape(a, []), lambda a: anp.reshape(a, ())),
        [rand(1, 1)],
    ),
    OpSpec(
        "reshape_dynamic",
        *squared(
            lambda tf, a: tf.reshape(a, tf.stack([tf.shape(a)[1], -1])),
            lambda a: anp.reshape(a, (a.shape[1], -1)),
        ),
        [rand(2, 3)],
    ),
    OpSpec("transpose_default", *squared(call("transpose"), anp.transpose), [rand(2, 3, 4)]),
    OpSpec(
        "transpose_perm",
        *squared(lambda tf, a: tf.transpose(a, [1, 2, 0]), lambda a: anp.transpose(a, (1, 2, 0))),
        [rand(2, 3, 4)],
    ),
    OpSpec(
        "concat_0",
        *squared(lambda tf, a, b: tf.concat([a, b], 0), lambda a, b: anp.concatenate([a, b], 0)),
        [rand(2, 3), rand(4, 3)],
    ),
    OpSpec(
        "concat_neg",
        *squared(
            lambda tf, a, b, c: tf.concat([a, b, c], -1),
            lambda a, b, c: anp.concatenate([a, b, c], -1),
        ),
        [rand(2, 1), rand(2, 3), rand(2, 2)],
    ),
    OpSpec(
        "concat_same_twice",
        *squared(lambda tf, a: tf.concat([a, a], 1), lambda a: anp.concatenate([a, a], 1)),
        [rand(2, 3)],
    ),
    OpSpec(
        "stack_0",
        *squared(lambda tf, a, b: tf.stack([a, b]), lambda a, b: anp.stack([a, b])),
        [rand(2, 3), rand(2, 3)],
    ),
    OpSpec(
        "stack_last",
        *squared(
            lambda tf, a, b: tf.stack([a, b], axis=-1), lambda a, b: anp.stack([a, b], axis=-1)
        ),
        [rand(2, 3), rand(2, 3)],
    ),
    OpSpec(
        "unstack",
        *squared(
            lambda tf, a: tf.stack(tf.unstack(a, axis=1)[::-1]),
            lambda a: anp.stack([a[:, i] for i in (2, 1, 0)]),
        ),
        [rand(2, 3, 2)],
        unknown_dims=False,  # the number of outputs is the static dimension (as in TF)
    ),
    OpSpec(
        "unstack_unused",
        *squared(lambda tf, a: tf.unstack(a)[1], lambda a: a[1]),
        [rand(3, 2)],
        unknown_dims=False,
    ),
    OpSpec(
        "split_even",
        *squared(
            lambda tf, a: tf.concat(tf.split(a, 2, axis=1)[::-1], 0),
            lambda a: anp.concatenate([a[:, 2:], a[:, :2]], 0),
        ),
        [rand(3, 4)],
    ),
    OpSpec(
        "split_sizes",
        *squared(lambda tf, a: tf.split(a, [1, -1, 2], axis=0)[1], lambda a: a[1:3]),
        [rand(5, 2)],
    ),
    OpSpec(
        "slice",
        *squared(lambda tf, a: tf.slice(a, [1, 0, 2], [1, -1, 2]), lambda a: a[1:2, :, 2:4]),
        [rand(3, 2, 4)],
    ),
    OpSpec(
        "getitem_int_slice",
        *squared(lambda tf, a: a[1, ::-1, 1:3], lambda a: a[1, ::-1, 1:3]),
        [rand(2, 3, 4)],
    ),
    OpSpec(
        "getitem_ellipsis_newaxis",
        *squared(lambda tf, a: a[..., None, 2], lambda a: a[..., None, 2]),
        [rand(2, 3, 4)],
    ),
    OpSpec(
        "getitem_step",
        *squared(lambda tf, a: a[::2, -1:0:-2], lambda a: a[::2, -1:0:-2]),
        [rand(5, 6)],
    ),
    OpSpec(
        "strided_slice_masks",
        *squared(
            lambda tf, a: tf.strided_slice(
                a, [0, 1, 0], [0, 3, 2], [1, 1, 1], begin_mask=1, end_mask=1, shrink_axis_mask=4
            ),
            lambda a: a[:, 1:3, 0],
        ),
        [rand(2, 4, 3)],
    ),
    OpSpec(
        "gather_0",
        *squared(lambda tf, a: tf.gather(a, [2, 0, 2]), lambda a: a[np.array([2, 0, 2])]),
        [rand(3, 2)],
    ),
    OpSpec(
        "gather_axis1_2d",
        *squared(
            lambda tf, a: tf.gather(a, [[1, 1], [0, 2]], axis=1),
            lambda a: a[:, np.array([[1, 1], [0, 2]])],
        ),
        [rand(2, 3, 2)],
    ),
    OpSpec(
        "gather_last",
        *squared(
            lambda tf, a: tf.gather(a, [0, 0, 1], axis=-1), lambda a: a[..., np.array([0, 0, 1])]
        ),
        [rand(2, 2)],
    ),
    OpSpec(
        "gather_nd",
        *squared(
            lambda tf, a: tf.gather_nd(a, ND_INDICES),
            lambda a: a[ND_INDICES[:, 0], ND_INDICES[:, 1]],
        ),
        [rand(2, 3, 2)],
    ),
    OpSpec(
        "scatter_nd",
        *squared(
            lambda tf, u: tf.scatter_nd(ND_INDICES, u, [2, 3, 2]),
            lambda u: anp.stack(
                [
                    anp.stack(
                        [
                            sum(
                                (u[k] for k in range(3) if tuple(ND_INDICES[k]) == (i, j)),
                                np.zeros(2),
                            )
                            for j in range(3)
                        ]
                    )
                    for i in range(2)
                ]
            ),
        ),
        [rand(3, 2)],
    ),
    OpSpec(
        "unsorted_segment_sum",
        *squared(
            lambda tf, d: tf.unsorted_segment_sum(d, SEGMENTS, 4),
            lambda d: anp.stack(
                [sum((d[k] for k in range(4) if SEGMENTS[k] == i), np.zeros(2)) for i in range(4)]
            ),
        ),
        [rand(4, 2)],
    ),
    OpSpec(
        "expand_dims",
        *squared(lambda tf, a: tf.expand_dims(a, 1), lambda a: anp.expand_dims(a, 1)),
        [rand(2, 3)],
    ),
    OpSpec(
        "expand_dims_last",
        *squared(lambda tf, a: tf.expand_dims(a, -1), lambda a: anp.expand_dims(a, -1)),
        [rand(2, 3)],
    ),
    OpSpec("squeeze_all", *squared(call("squeeze"), anp.squeeze), [rand(1, 3, 1)]),
    OpSpec(
        "squeeze_axis",
        *squared(lambda tf, a: tf.squeeze(a, [2]), lambda a: anp.squeeze(a, 2)),
        [rand(1, 3, 1)],
    ),
    OpSpec(
        "tile",
        *squared(lambda tf, a: tf.tile(a, [2, 1, 3]), lambda a: anp.tile(a, (2, 1, 3))),
        [rand(2, 1, 2)],
    ),
    OpSpec(
        "pad_constant",
        *squared(
            lambda tf, a: tf.pad(a, [[1, 0], [2, 1]]),
            lambda a: anp.pad(a, [[1, 0], [2, 1]], "constant"),
        ),
        [rand(2, 3)],
    ),
    OpSpec(
        "pad_constant_values",
        *squared(
            lambda tf, a: tf.pad(a, [[0, 2], [1, 1]], constant_values=1.5),
            lambda a: anp.pad(a, [[0, 2], [1, 1]], "constant", constant_values=1.5),
        ),
        [rand(2, 3)],
    ),
    OpSpec(
        "pad_reflect",
        *squared(
            lambda tf, a: tf.pad(a, [[1, 2], [2, 1]], "REFLECT"),
            mirror_ref([[1, 2], [2, 1]], "reflect"),
        ),
        [rand(3, 4)],
    ),
    OpSpec(
        "pad_symmetric",
        *squared(
            lambda tf, a: tf.pad(a, [[2, 3], [0, 2]], "symmetric"),
            mirror_ref([[2, 3], [0, 2]], "symmetric"),
        ),
        [rand(3, 2)],
    ),
    OpSpec(
        "reverse",
        *squared(lambda tf, a: tf.reverse(a, [0, -1]), lambda a: a[::-1, :, ::-1]),
        [rand(2, 3, 2)],
    ),
    OpSpec(
        "fill", *squared(lambda tf, v: tf.fill([2, 3], v), lambda v: v * anp.ones((2, 3))), [rand()]
    ),
    OpSpec(
        "broadcast_to",
        *squared(lambda tf, a: tf.broadcast_to(a, [2, 3, 4]), lambda a: a * anp.ones((2, 3, 4))),
        [rand(3, 1)],
    ),
    OpSpec(
        "boolean_mask",
        *squared(lambda tf, a: tf.boolean_mask(a, MASK), lambda a: a[MASK]),
        [rand(2, 3, 2)],
    ),
    OpSpec(
        "boolean_mask_axis1",
        *squared(lambda tf, a: tf.boolean_mask(a, MASK[0], axis=1), lambda a: a[:, MASK[0]]),
        [rand(2, 3, 2)],
    ),
    OpSpec("identity", *squared(call("identity"), lambda a: a), [rand(2)]),
    OpSpec(
        "zeros_like_plus",
        *squared(lambda tf, a: a + tf.zeros_like(a) + tf.ones_like(a), lambda a: a + 1.0),
        [rand(2)],
    ),
]

FORWARD_ONLY = [
    OpSpec(
        "sequence_mask",
        lambda tf, n: tf.sequence_mask(n, 5),
        lambda n: np.arange(5) < n[..., None],
        [np.array([[0, 3], [5, 2]], dtype=np.int32)],
        grad=0,
    ),
    OpSpec(
        "sequence_mask_float_maxlen_from_lengths",
        lambda tf, n: tf.sequence_mask(n, dtype=tf.float32),
        lambda n: (np.arange(n.max()) < n[..., None]).astype(np.float32),
        [np.array([1, 4, 2], dtype=np.int64)],
        grad=0,
    ),
    OpSpec(
        "concat_int",
        lambda tf, a, b: tf.concat([a, b], 1),
        lambda a, b: np.concatenate([a, b], 1),
        [np.arange(6).reshape(2, 3), np.arange(4).reshape(2, 2)],
        grad=0,
    ),
    OpSpec(
        "stack_bool",
        lambda tf, a, b: tf.stack([a, b], 1),
        lambda a, b: np.stack([a, b], 1),
        [np.array([True, False]), np.array([False, False])],
        grad=0,
    ),
    OpSpec(
        "transpose_int64",
        lambda tf, a: tf.transpose(a, [1, 0]),
        lambda a: a.T,
        [np.arange(6, dtype=np.int64).reshape(2, 3)],
        grad=0,
    ),
    OpSpec(
        "gather_int",
        lambda tf, a: tf.gather(a, [1, 1, 0]),
        lambda a: a[[1, 1, 0]],
        [np.array([5, 6], dtype=np.int32)],
        grad=0,
    ),
    OpSpec(
        "gather_int64_indices",
        lambda tf, a, i: tf.gather(a, i),
        lambda a, i: a[i],
        [rand(4), np.array([[3, 0], [1, 1]], dtype=np.int64)],
        grad=0,
    ),
    OpSpec(
        "one_hot",
        lambda tf, i: tf.one_hot(i, 4),
        lambda i: np.eye(4, dtype=np.float32)[i] * (i < 4)[..., None],
        [np.array([0, 3, 1])],
        grad=0,
    ),
    OpSpec(
        "one_hot_axis0_values",
        lambda tf, i: tf.one_hot(i, 3, on_value=5, off_value=-1, axis=0),
        lambda i: np.where(np.arange(3)[:, None] == i[None], 5, -1).astype(np.int32),
        [np.array([2, -1, 0, 7])],
        grad=0,
    ),
    OpSpec(
        "one_hot_2d_axis1",
        lambda tf, i: tf.one_hot(i, 3, axis=1, dtype=tf.float64),
        lambda i: np.moveaxis(np.eye(3)[i], -1, 1),
        [np.array([[0, 1], [2, 2]])],
        grad=0,
    ),
    OpSpec("range", lambda tf: tf.range(5), lambda: np.arange(5, dtype=np.int32), [], grad=0),
    OpSpec(
        "range_start_delta",
        lambda tf: tf.range(10, 2, -3),
        lambda: np.arange(10, 2, -3, dtype=np.int32),
        [],
        grad=0,
    ),
    OpSpec(
        "range_float",
        lambda tf: tf.range(1.0, 2.0, 0.25),
        lambda: np.arange(1, 2, 0.25, dtype=np.float32),
        [],
        grad=0,
    ),
    OpSpec(
        "range_dtype", lambda tf: tf.range(3, dtype=tf.float64), lambda: np.arange(3.0), [], grad=0
    ),
    OpSpec(
        "range_tensor",
        lambda tf, n: tf.range(n),
        lambda n: np.arange(n, dtype=np.int32),
        [np.int32(4)],
        grad=0,
    ),
    OpSpec("size", lambda tf, a: tf.size(a), lambda a: np.int32(a.size), [rand(2, 3)], grad=0),
    OpSpec(
        "size_int64",
        lambda tf, a: tf.size(a, out_type=tf.int64),
        lambda a: np.int64(a.size),
        [rand(2, 3)],
        grad=0,
    ),
    OpSpec("rank", lambda tf, a: tf.rank(a), lambda a: np.int32(a.ndim), [rand(2, 3)], grad=0),
    OpSpec(
        "size_dynamic",
        lambda tf, a: tf.size(tf.boolean_mask(a, a > 0)),
        lambda a: np.int32((a > 0).sum()),
        [rand(3, 2)],
        grad=0,
    ),
    OpSpec(
        "rank_dynamic",
        lambda tf, a: tf.rank(tf.placeholder_with_default(a, None)),
        lambda a: np.int32(a.ndim),
        [rand(2, 3)],
        grad=0,
    ),
    OpSpec(
        "shape_int64",
        lambda tf, a: tf.shape(a, out_type=tf.int64),
        lambda a: np.array(a.shape, dtype=np.int64),
        [rand(2, 3)],
        grad=0,
    ),
    OpSpec("zeros", lambda tf: tf.zeros([2, 3]), lambda: np.zeros((2, 3), np.float32), [], grad=0),
    OpSpec(
        "ones_int", lambda tf: tf.ones((2,), tf.int64), lambda: np.ones(2, np.int64), [], grad=0
    ),
    OpSpec(
        "zeros_big",
        lambda tf: tf.zeros([40, 30], tf.int32),
        lambda: np.zeros((40, 30), np.int32),
        [],
        grad=0,
    ),
    OpSpec(
        "zeros_dynamic",
        lambda tf, a: tf.zeros(tf.shape(a), tf.bool),
        lambda a: np.zeros(a.shape, bool),
        [rand(2, 2)],
        grad=0,
    ),
    OpSpec(
        "ones_like_dtype",
        lambda tf, a: tf.ones_like(a, dtype=tf.int32),
        lambda a: np.ones(a.shape, np.int32),
        [rand(3)],
        grad=0,
    ),
    OpSpec(
        "zeros_like_dtype",
        lambda tf, a: tf.zeros_like(a, dtype=tf.bool),
        lambda a: np.zeros(a.shape, bool),
        [rand(3)],
        grad=0,
    ),
    OpSpec(
        "fill_int", lambda tf: tf.fill([2, 2], 7), lambda: np.full((2, 2), 7, np.int32), [], grad=0
    ),
    OpSpec(
        "invert_permutation",
        lambda tf, p: tf.invert_permutation(p),
        lambda p: np.argsort(p).astype(np.int32),
        [np.array([2, 0, 3, 1], dtype=np.int32)],
        grad=0,
    ),
    OpSpec(
        "boolean_mask_int",
        lambda tf, a, m: tf.boolean_mask(a, m),
        lambda a, m: a[m],
        [np.arange(5), np.array([True, False, False, True, True])],
        grad=0,
    ),
    OpSpec(
        "boolean_mask_empty",
        lambda tf, a, m: tf.boolean_mask(a, m),
        lambda a, m: a[m],
        [rand(3, 2), np.zeros(3, bool)],
        grad=0,
    ),
    OpSpec(
        "unique",
        lambda tf, a: list(tf.unique(a)),
        lambda a: unique_first_seen(a)[:2],
        [np.array([4, 1, 4, 7, 1, 1, 9], np.int64)],
        grad=0,
    ),
    OpSpec(
        "unique_with_counts_float",
        lambda tf, a: list(tf.unique_with_counts(a, out_idx=tf.int64)),
        lambda a: [r.astype(np.int64) if r.dtype == np.int32 else r for r in unique_first_seen(a)],
        [np.array([2.5, -1.0, 2.5, 0.0], np.float32)],
        grad=0,
    ),
    OpSpec(
        "unstack_int",
        lambda tf, a: tf.unstack(a, axis=-1),
        lambda a: [a[:, 0], a[:, 1]],
        [np.arange(4).reshape(2, 2)],
        grad=0,
        unknown_dims=False,
    ),
    OpSpec(
        "split_int_list",
        lambda tf, a: tf.split(a, [2, 1]),
        lambda a: [a[:2], a[2:]],
        [np.arange(3)],
        grad=0,
    ),
    OpSpec(
        "reverse_empty_axis", lambda tf, a: tf.reverse(a, []), lambda a: a, [np.arange(3)], grad=0
    ),
    OpSpec(
        "pad_bool",
        lambda tf, a: tf.pad(a, [[1, 1]]),
        lambda a: np.pad(a, 1),
        [np.ones(2, bool)],
        grad=0,
    ),
    OpSpec(
        "tile_int",
        lambda tf, a: tf.tile(a, [0, 2]),
        lambda a: np.tile(a, (0, 2)),
        [np.arange(4).reshape(2, 2)],
        grad=0,
    ),
    OpSpec(
        "scatter_nd_duplicates",
        lambda tf: tf.scatter_nd([[0], [2], [0]], [1, 2, 3], [4]),
        lambda: np.array([4, 0, 2, 0], np.int32),
        [],
        grad=0,
    ),
    OpSpec(
        "segment_sum_negative_dropped",
        lambda tf, d: tf.unsorted_segment_sum(d, [0, -1, 1], 2),
        lambda d: np.stack([d[0], d[2]]),
        [rand(3, 2)],
        grad=0,
    ),
    OpSpec(
        "conjugate_transpose",
        lambda tf, a: tf.transpose(a, conjugate=True),
        lambda a: np.conj(a.T),
        [rand(2, 3) + 1j * rand(2, 3)],
        grad=0,
    ),
]

ROWS = DIFFERENTIABLE + FORWARD_ONLY
