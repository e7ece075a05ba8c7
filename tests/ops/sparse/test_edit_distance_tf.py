"""``tf.edit_distance`` against ``tensorflow.compat.v1``: integer and string sequences,
normalized or not, sequences missing on either side, rank 2 and 3 (indices in TF's
canonical order, which TF's kernel assumes),
static shapes; bad arguments' error classes."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow

pytestmark = pytest.mark.tf

RNG = np.random.default_rng(3210)


def _random_sparse(batch, max_len, vocab):
    rows = []
    for b in range(batch):
        n = int(RNG.integers(0, max_len + 1))
        rows += [(b, j, int(RNG.integers(0, vocab))) for j in range(n)]
    indices = np.array([[b, j] for b, j, _ in rows], np.int64).reshape(-1, 2)
    values = np.array([v for _, _, v in rows], np.int64)
    return indices, values, np.array([batch, max_len], np.int64)


HYP = _random_sparse(9, 7, 3)
TRUTH = _random_sparse(8, 6, 3)


def _program(tf):
    hyp = tf.SparseTensor(*HYP)
    truth = tf.SparseTensor(*TRUTH)
    words_h = tf.SparseTensor([[0, 0, 0], [0, 0, 1], [1, 1, 0]], ["a", "b", "c"], [2, 2, 2])
    words_t = tf.SparseTensor([[0, 0, 0], [0, 1, 0], [1, 1, 1]], ["a", "z", "c"], [2, 2, 2])
    fed = tf.sparse_placeholder(tf.int64)
    return [fed], [
        tf.edit_distance(hyp, truth),
        tf.edit_distance(hyp, truth, normalize=False),
        tf.edit_distance(truth, hyp),
        tf.edit_distance(words_h, words_t),
        tf.edit_distance(words_h, words_t, normalize=False),
        tf.edit_distance(fed, truth, normalize=False),
    ]


def _run(tf):
    with tf.Graph().as_default():
        placeholders, outs = _program(tf)
        shapes = [o.shape.as_list() if o.shape.rank is not None else None for o in outs]
        feed = tf.SparseTensorValue(*HYP)
        with tf.Session() as sess:
            return shapes, sess.run(outs, {placeholders[0]: feed})


def test_matches_tf():
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    (our_shapes, ours), (their_shapes, theirs) = _run(dataflow), _run(tf1)
    assert our_shapes == their_shapes
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        assert a.dtype == b.dtype and a.shape == b.shape, i
        np.testing.assert_allclose(a, b, rtol=1e-6, err_msg=f"fetch {i}")


def test_errors_match_tf():
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    for tf in (dataflow, tf1):
        with tf.Graph().as_default():
            with pytest.raises(TypeError):
                tf.edit_distance(tf.constant([1]), tf.SparseTensor([[0, 0]], [1], [1, 1]))
