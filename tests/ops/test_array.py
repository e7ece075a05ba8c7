"""The array ops against ``autograd.numpy`` references and finite differences.

One spec table drives ``check_op``: forward value, first-order gradients against
``autograd`` and central differences, and second order. Every builder squares the op's
output (``y * y``) so that the second-order check differentiates *through the gradient
ops themselves* (for a linear op alone the gradient would not depend on the input).
Integer, boolean and other non-differentiable cases go through ``check_forward``.
"""

from __future__ import annotations

import autograd.numpy as anp
import numpy as np
import pytest

import dataflow as tf
from dataflow.testing.grad_check import check_forward, check_op

RNG = np.random.default_rng(7)


def rand(*shape):
    return RNG.standard_normal(shape)


def sq(f):
    """``f`` followed by squaring, for both the graph builder and the reference."""
    return lambda *args: (lambda y: y * y)(f(*args))


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

# (id, graph builder, autograd.numpy reference, arguments)
GRAD_CASES = [
    (
        "reshape",
        lambda a: tf.reshape(a, [4, -1]),
        lambda a: anp.reshape(a, (4, -1)),
        [rand(2, 3, 4)],
    ),
    ("reshape_flat", lambda a: tf.reshape(a, [-1]), lambda a: anp.reshape(a, -1), [rand(2, 3)]),
    ("reshape_scalar", lambda a: tf.reshape(a, []), lambda a: anp.reshape(a, ()), [rand(1, 1)]),
    (
        "reshape_dynamic",
        lambda a: tf.reshape(a, tf.stack([tf.shape(a)[1], -1])),
        lambda a: anp.reshape(a, (a.shape[1], -1)),
        [rand(2, 3)],
    ),
    ("transpose_default", tf.transpose, anp.transpose, [rand(2, 3, 4)]),
    (
        "transpose_perm",
        lambda a: tf.transpose(a, [1, 2, 0]),
        lambda a: anp.transpose(a, (1, 2, 0)),
        [rand(2, 3, 4)],
    ),
    (
        "concat_0",
        lambda a, b: tf.concat([a, b], 0),
        lambda a, b: anp.concatenate([a, b], 0),
        [rand(2, 3), rand(4, 3)],
    ),
    (
        "concat_neg",
        lambda a, b, c: tf.concat([a, b, c], -1),
        lambda a, b, c: anp.concatenate([a, b, c], -1),
        [rand(2, 1), rand(2, 3), rand(2, 2)],
    ),
    (
        "concat_same_twice",
        lambda a: tf.concat([a, a], 1),
        lambda a: anp.concatenate([a, a], 1),
        [rand(2, 3)],
    ),
    (
        "stack_0",
        lambda a, b: tf.stack([a, b]),
        lambda a, b: anp.stack([a, b]),
        [rand(2, 3), rand(2, 3)],
    ),
    (
        "stack_last",
        lambda a, b: tf.stack([a, b], axis=-1),
        lambda a, b: anp.stack([a, b], axis=-1),
        [rand(2, 3), rand(2, 3)],
    ),
    (
        "unstack",
        lambda a: tf.stack(tf.unstack(a, axis=1)[::-1]),
        lambda a: anp.stack([a[:, i] for i in (2, 1, 0)]),
        [rand(2, 3, 2)],
    ),
    ("unstack_unused", lambda a: tf.unstack(a)[1], lambda a: a[1], [rand(3, 2)]),
    (
        "split_even",
        lambda a: tf.concat(tf.split(a, 2, axis=1)[::-1], 0),
        lambda a: anp.concatenate([a[:, 2:], a[:, :2]], 0),
        [rand(3, 4)],
    ),
    ("split_sizes", lambda a: tf.split(a, [1, -1, 2], axis=0)[1], lambda a: a[1:3], [rand(5, 2)]),
    (
        "slice",
        lambda a: tf.slice(a, [1, 0, 2], [1, -1, 2]),
        lambda a: a[1:2, :, 2:4],
        [rand(3, 2, 4)],
    ),
    ("getitem_int_slice", lambda a: a[1, ::-1, 1:3], lambda a: a[1, ::-1, 1:3], [rand(2, 3, 4)]),
    (
        "getitem_ellipsis_newaxis",
        lambda a: a[..., None, 2],
        lambda a: a[..., None, 2],
        [rand(2, 3, 4)],
    ),
    ("getitem_step", lambda a: a[::2, -1:0:-2], lambda a: a[::2, -1:0:-2], [rand(5, 6)]),
    (
        "strided_slice_masks",
        lambda a: tf.strided_slice(
            a, [0, 1, 0], [0, 3, 2], [1, 1, 1], begin_mask=1, end_mask=1, shrink_axis_mask=4
        ),
        lambda a: a[:, 1:3, 0],
        [rand(2, 4, 3)],
    ),
    ("gather_0", lambda a: tf.gather(a, [2, 0, 2]), lambda a: a[np.array([2, 0, 2])], [rand(3, 2)]),
    (
        "gather_axis1_2d",
        lambda a: tf.gather(a, [[1, 1], [0, 2]], axis=1),
        lambda a: a[:, np.array([[1, 1], [0, 2]])],
        [rand(2, 3, 2)],
    ),
    (
        "gather_last",
        lambda a: tf.gather(a, [0, 0, 1], axis=-1),
        lambda a: a[..., np.array([0, 0, 1])],
        [rand(2, 2)],
    ),
    (
        "gather_nd",
        lambda a: tf.gather_nd(a, ND_INDICES),
        lambda a: a[ND_INDICES[:, 0], ND_INDICES[:, 1]],
        [rand(2, 3, 2)],
    ),
    (
        "scatter_nd",
        lambda u: tf.scatter_nd(ND_INDICES, u, [2, 3, 2]),
        lambda u: anp.stack(
            [
                anp.stack(
                    [
                        sum((u[k] for k in range(3) if tuple(ND_INDICES[k]) == (i, j)), np.zeros(2))
                        for j in range(3)
                    ]
                )
                for i in range(2)
            ]
        ),
        [rand(3, 2)],
    ),
    (
        "unsorted_segment_sum",
        lambda d: tf.unsorted_segment_sum(d, SEGMENTS, 4),
        lambda d: anp.stack(
            [sum((d[k] for k in range(4) if SEGMENTS[k] == i), np.zeros(2)) for i in range(4)]
        ),
        [rand(4, 2)],
    ),
    ("expand_dims", lambda a: tf.expand_dims(a, 1), lambda a: anp.expand_dims(a, 1), [rand(2, 3)]),
    (
        "expand_dims_last",
        lambda a: tf.expand_dims(a, -1),
        lambda a: anp.expand_dims(a, -1),
        [rand(2, 3)],
    ),
    ("squeeze_all", tf.squeeze, anp.squeeze, [rand(1, 3, 1)]),
    ("squeeze_axis", lambda a: tf.squeeze(a, [2]), lambda a: anp.squeeze(a, 2), [rand(1, 3, 1)]),
    ("tile", lambda a: tf.tile(a, [2, 1, 3]), lambda a: anp.tile(a, (2, 1, 3)), [rand(2, 1, 2)]),
    (
        "pad_constant",
        lambda a: tf.pad(a, [[1, 0], [2, 1]]),
        lambda a: anp.pad(a, [[1, 0], [2, 1]], "constant"),
        [rand(2, 3)],
    ),
    (
        "pad_constant_values",
        lambda a: tf.pad(a, [[0, 2], [1, 1]], constant_values=1.5),
        lambda a: anp.pad(a, [[0, 2], [1, 1]], "constant", constant_values=1.5),
        [rand(2, 3)],
    ),
    (
        "pad_reflect",
        lambda a: tf.pad(a, [[1, 2], [2, 1]], "REFLECT"),
        mirror_ref([[1, 2], [2, 1]], "reflect"),
        [rand(3, 4)],
    ),
    (
        "pad_symmetric",
        lambda a: tf.pad(a, [[2, 3], [0, 2]], "symmetric"),
        mirror_ref([[2, 3], [0, 2]], "symmetric"),
        [rand(3, 2)],
    ),
    ("reverse", lambda a: tf.reverse(a, [0, -1]), lambda a: a[::-1, :, ::-1], [rand(2, 3, 2)]),
    ("fill", lambda v: tf.fill([2, 3], v), lambda v: v * anp.ones((2, 3)), [rand()]),
    (
        "broadcast_to",
        lambda a: tf.broadcast_to(a, [2, 3, 4]),
        lambda a: a * anp.ones((2, 3, 4)),
        [rand(3, 1)],
    ),
    ("boolean_mask", lambda a: tf.boolean_mask(a, MASK), lambda a: a[MASK], [rand(2, 3, 2)]),
    (
        "boolean_mask_axis1",
        lambda a: tf.boolean_mask(a, MASK[0], axis=1),
        lambda a: a[:, MASK[0]],
        [rand(2, 3, 2)],
    ),
    ("identity", tf.identity, lambda a: a, [rand(2)]),
    (
        "zeros_like_plus",
        lambda a: a + tf.zeros_like(a) + tf.ones_like(a),
        lambda a: a + 1.0,
        [rand(2)],
    ),
]


@pytest.mark.parametrize(
    "build,reference,args", [c[1:] for c in GRAD_CASES], ids=[c[0] for c in GRAD_CASES]
)
def test_gradients(build, reference, args):
    check_op(sq(build), sq(reference), args)


# (id, builder, numpy reference, arguments)
FORWARD_CASES = [
    (
        "concat_int",
        lambda a, b: tf.concat([a, b], 1),
        lambda a, b: np.concatenate([a, b], 1),
        [np.arange(6).reshape(2, 3), np.arange(4).reshape(2, 2)],
    ),
    (
        "stack_bool",
        lambda a, b: tf.stack([a, b], 1),
        lambda a, b: np.stack([a, b], 1),
        [np.array([True, False]), np.array([False, False])],
    ),
    (
        "transpose_int64",
        lambda a: tf.transpose(a, [1, 0]),
        lambda a: a.T,
        [np.arange(6, dtype=np.int64).reshape(2, 3)],
    ),
    (
        "gather_int",
        lambda a: tf.gather(a, [1, 1, 0]),
        lambda a: a[[1, 1, 0]],
        [np.array([5, 6], dtype=np.int32)],
    ),
    (
        "gather_int64_indices",
        lambda a, i: tf.gather(a, i),
        lambda a, i: a[i],
        [rand(4), np.array([[3, 0], [1, 1]], dtype=np.int64)],
    ),
    (
        "one_hot",
        lambda i: tf.one_hot(i, 4),
        lambda i: np.eye(4, dtype=np.float32)[i] * (i < 4)[..., None],
        [np.array([0, 3, 1])],
    ),
    (
        "one_hot_axis0_values",
        lambda i: tf.one_hot(i, 3, on_value=5, off_value=-1, axis=0),
        lambda i: np.where(np.arange(3)[:, None] == i[None], 5, -1).astype(np.int32),
        [np.array([2, -1, 0, 7])],
    ),
    (
        "one_hot_2d_axis1",
        lambda i: tf.one_hot(i, 3, axis=1, dtype=tf.float64),
        lambda i: np.moveaxis(np.eye(3)[i], -1, 1),
        [np.array([[0, 1], [2, 2]])],
    ),
    ("range", lambda: tf.range(5), lambda: np.arange(5, dtype=np.int32), []),
    (
        "range_start_delta",
        lambda: tf.range(10, 2, -3),
        lambda: np.arange(10, 2, -3, dtype=np.int32),
        [],
    ),
    (
        "range_float",
        lambda: tf.range(1.0, 2.0, 0.25),
        lambda: np.arange(1, 2, 0.25, dtype=np.float32),
        [],
    ),
    ("range_dtype", lambda: tf.range(3, dtype=tf.float64), lambda: np.arange(3.0), []),
    ("range_tensor", lambda n: tf.range(n), lambda n: np.arange(n, dtype=np.int32), [np.int32(4)]),
    ("size", lambda a: tf.size(a), lambda a: np.int32(a.size), [rand(2, 3)]),
    (
        "size_int64",
        lambda a: tf.size(a, out_type=tf.int64),
        lambda a: np.int64(a.size),
        [rand(2, 3)],
    ),
    ("rank", lambda a: tf.rank(a), lambda a: np.int32(a.ndim), [rand(2, 3)]),
    (
        "size_dynamic",
        lambda a: tf.size(tf.boolean_mask(a, a > 0)),
        lambda a: np.int32((a > 0).sum()),
        [rand(3, 2)],
    ),
    (
        "rank_dynamic",
        lambda a: tf.rank(tf.placeholder_with_default(a, None)),
        lambda a: np.int32(a.ndim),
        [rand(2, 3)],
    ),
    (
        "shape_int64",
        lambda a: tf.shape(a, out_type=tf.int64),
        lambda a: np.array(a.shape, dtype=np.int64),
        [rand(2, 3)],
    ),
    ("zeros", lambda: tf.zeros([2, 3]), lambda: np.zeros((2, 3), np.float32), []),
    ("ones_int", lambda: tf.ones((2,), tf.int64), lambda: np.ones(2, np.int64), []),
    ("zeros_big", lambda: tf.zeros([40, 30], tf.int32), lambda: np.zeros((40, 30), np.int32), []),
    (
        "zeros_dynamic",
        lambda a: tf.zeros(tf.shape(a), tf.bool),
        lambda a: np.zeros(a.shape, bool),
        [rand(2, 2)],
    ),
    (
        "ones_like_dtype",
        lambda a: tf.ones_like(a, dtype=tf.int32),
        lambda a: np.ones(a.shape, np.int32),
        [rand(3)],
    ),
    (
        "zeros_like_dtype",
        lambda a: tf.zeros_like(a, dtype=tf.bool),
        lambda a: np.zeros(a.shape, bool),
        [rand(3)],
    ),
    ("fill_int", lambda: tf.fill([2, 2], 7), lambda: np.full((2, 2), 7, np.int32), []),
    (
        "invert_permutation",
        lambda p: tf.invert_permutation(p),
        lambda p: np.argsort(p).astype(np.int32),
        [np.array([2, 0, 3, 1], dtype=np.int32)],
    ),
    (
        "boolean_mask_int",
        lambda a, m: tf.boolean_mask(a, m),
        lambda a, m: a[m],
        [np.arange(5), np.array([True, False, False, True, True])],
    ),
    (
        "boolean_mask_empty",
        lambda a, m: tf.boolean_mask(a, m),
        lambda a, m: a[m],
        [rand(3, 2), np.zeros(3, bool)],
    ),
    (
        "unstack_int",
        lambda a: tf.unstack(a, axis=-1),
        lambda a: [a[:, 0], a[:, 1]],
        [np.arange(4).reshape(2, 2)],
    ),
    ("split_int_list", lambda a: tf.split(a, [2, 1]), lambda a: [a[:2], a[2:]], [np.arange(3)]),
    ("reverse_empty_axis", lambda a: tf.reverse(a, []), lambda a: a, [np.arange(3)]),
    ("pad_bool", lambda a: tf.pad(a, [[1, 1]]), lambda a: np.pad(a, 1), [np.ones(2, bool)]),
    (
        "tile_int",
        lambda a: tf.tile(a, [0, 2]),
        lambda a: np.tile(a, (0, 2)),
        [np.arange(4).reshape(2, 2)],
    ),
    (
        "scatter_nd_duplicates",
        lambda: tf.scatter_nd([[0], [2], [0]], [1, 2, 3], [4]),
        lambda: np.array([4, 0, 2, 0], np.int32),
        [],
    ),
    (
        "segment_sum_negative_dropped",
        lambda d: tf.unsorted_segment_sum(d, [0, -1, 1], 2),
        lambda d: np.stack([d[0], d[2]]),
        [rand(3, 2)],
    ),
    (
        "conjugate_transpose",
        lambda a: tf.transpose(a, conjugate=True),
        lambda a: np.conj(a.T),
        [rand(2, 3) + 1j * rand(2, 3)],
    ),
]


@pytest.mark.parametrize(
    "build,reference,args", [c[1:] for c in FORWARD_CASES], ids=[c[0] for c in FORWARD_CASES]
)
def test_forward(build, reference, args):
    out = check_forward(build, reference, args)
    want = reference(*args)
    for o, w in zip(
        out if isinstance(out, list) else [out],
        want if isinstance(want, list) else [want],
        strict=True,
    ):
        assert np.asarray(o).dtype == np.asarray(w).dtype


def test_getitem_with_tensor_indices(sess):
    x = tf.placeholder(tf.float64, [None, 4])
    i = tf.placeholder(tf.int32, [])
    j = tf.placeholder(tf.int64, [])
    value = rand(5, 4)
    y = x[i, j:]
    z = x[i : i + 2, ::-1][:, j]
    assert y.shape.as_list() == [None] and z.shape.as_list() == [None]
    got_y, got_z = sess.run([y, z], {x: value, i: 3, j: 1})
    np.testing.assert_array_equal(got_y, value[3, 1:])
    np.testing.assert_array_equal(got_z, value[3:5, ::-1][:, 1])
    (g,) = tf.gradients(tf.reduce_sum(y * y), x)
    want = np.zeros_like(value)
    want[3, 1:] = 2 * value[3, 1:]
    np.testing.assert_allclose(sess.run(g, {x: value, i: 3, j: 1}), want)


def test_list_of_tensors_autopacks(sess):
    x = tf.placeholder(tf.int64, [])
    y = tf.placeholder(tf.float32, [])
    packed = tf.convert_to_tensor([[x, 2], [3, x]])
    floats = tf.convert_to_tensor([y, 1])
    assert packed.dtype == tf.int64 and packed.shape.as_list() == [2, 2]
    assert floats.dtype == tf.float32
    got = sess.run([packed, floats], {x: 5, y: 0.5})
    np.testing.assert_array_equal(got[0], [[5, 2], [3, 5]])
    np.testing.assert_array_equal(got[1], np.array([0.5, 1], np.float32))


def test_tensor_iteration_uses_getitem(sess):
    x = tf.constant([[1, 2], [3, 4]])
    rows = list(x)
    assert [r.shape.as_list() for r in rows] == [[2], [2]]
    np.testing.assert_array_equal(sess.run(rows), [[1, 2], [3, 4]])


def test_gather_on_variable_gives_dense_gradient(sess):
    table = tf.Variable(np.arange(8.0).reshape(4, 2))
    loss = tf.reduce_sum(tf.gather(table, [1, 3, 1]))
    (g,) = tf.gradients(loss, table)
    assert isinstance(g, tf.Tensor)
    sess.run(tf.global_variables_initializer())
    np.testing.assert_array_equal(sess.run(g), [[0, 0], [2, 2], [0, 0], [1, 1]])


def test_float_indices_are_refused_not_rounded() -> None:
    # TF1: a TypeError naming the argument, for integral floats too ([1.0] was taken as 1).
    for build in (
        lambda: tf.gather(tf.zeros([3]), [1.0]),
        lambda: tf.gather_nd(tf.zeros([3]), [[1.0]]),
        lambda: tf.one_hot([1.0], 3),
        lambda: tf.unsorted_segment_sum(tf.zeros([2]), [0.0, 1.0], 2),
        lambda: tf.scatter_nd([[1.0]], [1.0], [3]),
    ):
        with pytest.raises(TypeError, match="indices|segment_ids"):
            build()


def test_one_hot_refuses_a_negative_depth(sess) -> None:
    with pytest.raises(ValueError, match="depth must be non-negative, got -3"):
        tf.one_hot([0, 1], -3)
    depth = tf.placeholder(tf.int32, [])
    y = tf.one_hot([0, 1], depth, name="hot")
    with pytest.raises(
        tf.errors.InvalidArgumentError, match=r"(?s)depth must be non-negative, got -1.*node hot "
    ):
        sess.run(y, {depth: -1})
    assert sess.run(y, {depth: 2}).tolist() == [[1.0, 0.0], [0.0, 1.0]]


def test_unknown_shape_gradients(sess):
    # Gradients built for placeholders of unknown dims use shape() at run time.
    x = tf.placeholder(tf.float64, [None, None])
    y = tf.concat([tf.tile(x, [1, 2]), tf.pad(x[1:], [[0, 1], [1, 1]])], 0)
    y = tf.reshape(tf.transpose(y), [-1])
    (g,) = tf.gradients(tf.reduce_sum(y * y), x)
    value = rand(3, 2)

    def ref(a):
        b = anp.concatenate([anp.tile(a, (1, 2)), anp.pad(a[1:], [[0, 1], [1, 1]], "constant")], 0)
        return anp.sum(anp.reshape(anp.transpose(b), -1) ** 2)

    import autograd

    np.testing.assert_allclose(sess.run(g, {x: value}), autograd.grad(ref)(value))
