"""``tf.sparse`` and the top-level ``sparse_*`` names against ``tensorflow.compat.v1``:
each op's indices, values and dense shape (or dense result), static shapes, gradients
with respect to ``values`` where TF has them, and the error classes of bad input."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow

pytestmark = pytest.mark.tf

tf1 = pytest.importorskip("tensorflow.compat.v1")

RNG = np.random.default_rng(32)
# a [4, 3, 2] sparse tensor, entries out of row-major order, row 2 empty
A_INDICES = np.array([[1, 2, 0], [0, 1, 1], [3, 0, 1], [0, 0, 0], [1, 0, 1]], np.int64)
A_VALUES = RNG.standard_normal(5)
B_INDICES = np.array([[0, 1, 1], [1, 1, 0], [3, 0, 1], [3, 2, 1]], np.int64)
B_VALUES = RNG.standard_normal(4)
SHAPE = np.array([4, 3, 2], np.int64)
DATA = RNG.standard_normal((5, 3))
WEIGHTS = RNG.standard_normal((4, 3, 2))


def inputs(tf):
    a = tf.sparse.reorder(tf.SparseTensor(A_INDICES, A_VALUES, SHAPE))
    b = tf.SparseTensor(B_INDICES, B_VALUES, SHAPE)
    return a, b


def sparse_results(tf):
    """Sparse tensors, by name, each built the way a TF1 user writes it."""
    a, b = inputs(tf)
    raw = tf.SparseTensor(A_INDICES, A_VALUES, SHAPE)
    matrix = tf.sparse.reshape(a, [4, 6])
    return {
        "reorder": tf.sparse.reorder(raw),
        "sparse_reorder": tf.sparse_reorder(raw),
        "reshape": matrix,
        "reshape_inferred": tf.sparse_reshape(a, [-1, 2]),
        "transpose": tf.sparse.transpose(a),
        "transpose_perm": tf.sparse_transpose(a, [1, 0, 2]),
        "expand_dims": tf.sparse.expand_dims(a, 1),
        "expand_dims_last": tf.sparse.expand_dims(a, -1),
        "reset_shape": tf.sparse.reset_shape(a),
        "reset_shape_given": tf.sparse_reset_shape(a, [5, 3, 4]),
        "retain": tf.sparse.retain(a, [True, False, True, True, False]),
        "slice": tf.sparse.slice(a, [0, 1, 0], [2, 5, 2]),
        "sparse_slice": tf.sparse_slice(matrix, [1, 2], [3, 3]),
        "concat": tf.sparse.concat(1, [a, b]),
        "concat_expand": tf.sparse_concat(
            0,
            [a, tf.SparseTensor([[0, 4, 0]], np.array([1.0]), [1, 5, 2])],
            expand_nonconcat_dim=True,
        ),
        "add": tf.sparse.add(a, b),
        "add_threshold": tf.sparse_add(a, b, threshold=0.5),
        "add_empty": tf.sparse.add(
            tf.SparseTensor(np.zeros((0, 3), np.int64), np.zeros(0), SHAPE), b
        ),
        "maximum": tf.sparse.maximum(a, b),
        "minimum": tf.sparse_minimum(a, b),
        "softmax": tf.sparse.softmax(a),
        "from_dense": tf.sparse.from_dense(tf.sparse.to_dense(a)),
        "eye": tf.sparse.eye(3, 4, dtype=tf.float64),
        "fill_empty_rows": tf.sparse.fill_empty_rows(a, -2.0)[0],
        "reduce_sum_sparse": tf.sparse.reduce_sum_sparse(a, 1),
        "reduce_sum_sparse_keepdims": tf.sparse_reduce_sum_sparse(a, [0, 2], keepdims=True),
        "reduce_max_sparse": tf.sparse.reduce_max_sparse(a, -1),
        "reduce_max_sparse_all": tf.sparse_reduce_max_sparse(b),
        **bincounts(tf),
        "merge": tf.sparse.merge(
            tf.SparseTensor([[0, 0], [0, 1], [2, 0]], tf.constant([5, 1, 3], tf.int64), [3, 2]),
            tf.SparseTensor([[0, 0], [0, 1], [2, 0]], np.array([0.5, 1.5, 2.5]), [3, 2]),
            6,
        ),
        **{
            f"split_{i}": part
            for i, part in enumerate(tf.sparse.split(sp_input=matrix, num_split=4, axis=1))
        },
    }


def bincounts(tf):
    v = tf.constant([[3, 1, 3], [0, 7, 3]])
    ids = tf.SparseTensor([[0, 0], [0, 2], [1, 1]], tf.constant([5, 2, 5], tf.int64), [2, 4])
    w = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    return {
        "bincount": tf.sparse.bincount(v),
        "bincount_rows": tf.sparse.bincount(v, axis=-1),
        "bincount_weights": tf.sparse.bincount(v, weights=w, axis=-1),
        "bincount_minlength": tf.sparse.bincount(v, minlength=10),
        "bincount_maxlength": tf.sparse.bincount(v, maxlength=4),
        "bincount_binary": tf.sparse.bincount(v, binary_output=True, axis=-1),
        "bincount_sparse_rows": tf.sparse.bincount(ids, axis=-1),
        "bincount_sparse": tf.sparse.bincount(ids),
        "bincount_vector": tf.sparse.bincount(tf.constant([2, 2, 0])),
    }


def dense_results(tf):
    a, b = inputs(tf)
    ids = tf.SparseTensor([[0, 0], [0, 1], [2, 0]], tf.constant([3, 0, 3], tf.int64), [3, 2])
    return {
        "to_dense": tf.sparse.to_dense(a),
        "to_dense_default": tf.sparse.to_dense(a, default_value=-1.0),
        "reduce_sum": tf.sparse.reduce_sum(a, axis=1),
        "reduce_max": tf.sparse.reduce_max(a, axis=[0, 2]),
        "reduce_max_keepdims": tf.sparse_reduce_max(a, 2, keepdims=True),
        "reduce_max_all": tf.sparse.reduce_max(a),
        "matmul": tf.sparse.matmul(tf.sparse.reshape(a, [4, 6]), DATA[:, :2].T.repeat(3, 0)),
        "add_dense": tf.sparse.add(a, tf.ones([4, 3, 2], tf.float64)),
        "empty_rows": tf.sparse_fill_empty_rows(a, -2.0)[1],
        "to_indicator": tf.sparse.to_indicator(ids, 4),
        "segment_sum": tf.sparse.segment_sum(DATA, [0, 2, 4, 2], [0, 0, 1, 3]),
        "segment_mean": tf.sparse_segment_mean(DATA, [0, 2, 4, 2], [0, 0, 1, 3]),
        "segment_sqrt_n": tf.sparse.segment_sqrt_n(DATA, [0, 2, 4], [0, 0, 2], num_segments=4),
        "sparse_to_dense": tf.sparse_to_dense([[0, 1], [2, 0]], [3, 3], [5.0, 6.0], -1.0),
        "sparse_to_dense_scalar": tf.sparse_to_dense([1, 3], [5], 2.0),
    }


def run_all(tf):
    with tf.Graph().as_default():
        sparse, dense = sparse_results(tf), dense_results(tf)
        shapes = {k: v.get_shape().as_list() for k, v in dense.items()}
        with tf.Session() as sess:
            return sess.run(sparse), sess.run(dense), shapes


@pytest.fixture(scope="module")
def results():
    return run_all(dataflow), run_all(tf1)


def test_sparse_results_match_tf1(results) -> None:
    (ours, _, _), (theirs, _, _) = results
    for name, ref in theirs.items():
        got = ours[name]
        np.testing.assert_array_equal(got.indices, ref.indices, err_msg=name)
        np.testing.assert_array_equal(got.dense_shape, ref.dense_shape, err_msg=name)
        assert got.values.dtype == ref.values.dtype, name
        # sums and exponentials of a few float64 values: a few roundings
        np.testing.assert_allclose(got.values, ref.values, rtol=1e-14, err_msg=name)


def test_dense_results_match_tf1(results) -> None:
    (_, ours, our_shapes), (_, theirs, their_shapes) = results
    for name, ref in theirs.items():
        assert ours[name].dtype == ref.dtype, name
        np.testing.assert_allclose(ours[name], ref, rtol=1e-14, err_msg=name)
        assert our_shapes[name] == their_shapes[name], name


def gradients(tf):
    """Gradients through the ops TF has gradients for (TF's ``SparseConcat`` has none;
    ``sparse.concat`` and ``sparse.add`` of a dense operand here pass the values'
    gradient through their gathers)."""
    with tf.Graph().as_default():
        values = tf.constant(A_VALUES)
        other = tf.constant(B_VALUES)
        data = tf.constant(DATA)
        a = tf.sparse.reorder(tf.SparseTensor(A_INDICES, values, SHAPE))
        b = tf.SparseTensor(B_INDICES, other, SHAPE)
        weights = tf.constant(WEIGHTS)
        loss = (
            tf.reduce_sum(tf.sparse.to_dense(tf.sparse.add(a, b)) * weights)
            + tf.reduce_sum(
                tf.sparse.softmax(tf.sparse.reshape(a, [4, 6])).values
                * tf.range(5, dtype=tf.float64)
            )
            + tf.reduce_sum(tf.sparse.transpose(a).values ** 3)
            + tf.reduce_sum(tf.sparse.segment_mean(data, [0, 2, 4, 2], [0, 0, 1, 3]) ** 2)
        )
        grads = tf.gradients(loss, [values, other, data])
        grads[2] = tf.convert_to_tensor(grads[2])
        with tf.Session() as sess:
            return sess.run(grads)


def test_gradients_match_tf1() -> None:
    for mine, ref in zip(gradients(dataflow), gradients(tf1)):
        np.testing.assert_allclose(mine, ref, rtol=1e-12)


def test_bad_input_has_tf1_error_classes() -> None:
    for tf in (dataflow, tf1):
        with tf.Graph().as_default():
            a, _ = inputs(tf)
            with pytest.raises(ValueError):
                tf.sparse.reshape(a, [5, 5])  # 24 elements into 25
            with pytest.raises(ValueError):
                tf.sparse.retain(a, [True, False])
            with pytest.raises(ValueError):
                tf.sparse.split(a, 2, 1)  # positional arguments
            with pytest.raises(ValueError):
                tf.sparse.reset_shape(a, [4, 3])  # another rank
    with dataflow.Graph().as_default():
        a, b = inputs(dataflow)
        # TF1 fails on these when the step runs; dataflow knows at build time
        with pytest.raises(TypeError, match="to_indicator needs int32 or int64"):
            dataflow.sparse.to_indicator(a, 3)
        with pytest.raises(ValueError, match="known rank"):
            dataflow.sparse.reorder(
                dataflow.SparseTensor(
                    dataflow.placeholder(dataflow.int64),
                    A_VALUES,
                    dataflow.placeholder(dataflow.int64),
                )
            )
        with pytest.raises(TypeError, match="at least one SparseTensor"):
            dataflow.sparse.add(A_VALUES, B_VALUES)


def masked(tf):
    with tf.Graph().as_default():
        slices = tf.IndexedSlices(tf.constant(DATA), tf.constant([4, 1, 7, 1, 0]), [8, 3])
        out = tf.sparse.mask(slices, [1, 9, 0])
        also = tf.sparse_mask(slices, tf.constant([7]))
        with tf.Session() as sess:
            return sess.run([out.values, out.indices, also.values, also.indices])


def test_mask_matches_tf1() -> None:
    for mine, ref in zip(masked(dataflow), masked(tf1)):
        np.testing.assert_array_equal(mine, ref)


def dense_sparse_matmul(tf):
    with tf.Graph().as_default():
        a = tf.constant(DATA.astype(np.float32))
        b = tf.constant(WEIGHTS.reshape(4, 6)[:3].astype(np.float32))
        out = tf.sparse_matmul(a, b, a_is_sparse=True)
        out_t = tf.sparse_matmul(b, a, transpose_a=True, transpose_b=True)
        grads = tf.gradients(tf.reduce_sum(out * out) + tf.reduce_sum(out_t), [a, b])
        with tf.Session() as sess:
            return sess.run([out, out_t] + grads), out.shape.as_list()


def test_dense_sparse_matmul_matches_tf1() -> None:
    (ours, our_shape), (theirs, their_shape) = (
        dense_sparse_matmul(dataflow),
        dense_sparse_matmul(tf1),
    )
    assert our_shape == their_shape
    for mine, ref in zip(ours, theirs):
        assert mine.dtype == ref.dtype == np.float32
        # float32 sums of 3 to 6 products: a few float32 roundings
        np.testing.assert_allclose(mine, ref, rtol=1e-5)
    for tf in (dataflow, tf1):
        with tf.Graph().as_default(), pytest.raises(TypeError):
            tf.sparse_matmul(tf.constant(DATA), tf.constant(DATA.T))
