"""Ordering, segment and counting ops: the errors TF1 raises for bad input, with its
classes (the op table checks values, shapes and gradients)."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow

pytestmark = pytest.mark.tf

tf1 = pytest.importorskip("tensorflow.compat.v1")


def _error(tf, build):
    with tf.Graph().as_default():
        try:
            out = build(tf)
            with tf.Session() as sess:
                sess.run(out)
        except Exception as exc:
            return type(exc).__name__
    return None


CASES = {
    "top_k_k_too_large": lambda tf: tf.nn.top_k(tf.zeros([2, 3]), 4),
    "top_k_negative_k": lambda tf: tf.nn.top_k(tf.zeros([3]), -1),
    "top_k_scalar": lambda tf: tf.nn.top_k(tf.constant(1.0), 1),
    "segment_ids_unsorted": lambda tf: tf.segment_sum(tf.ones([3]), [1, 0, 1]),
    "segment_ids_wrong_length": lambda tf: tf.segment_sum(
        tf.ones([3]), tf.placeholder_with_default(np.array([0, 1]), [None])
    ),
    "unsorted_id_too_large": lambda tf: tf.unsorted_segment_max(tf.ones([2]), [0, 5], 2),
    "segment_ids_not_vector": lambda tf: tf.segment_sum(tf.ones([2, 2]), [[0, 0], [1, 1]]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_raises_tf1s_error_class(case):
    ours = _error(dataflow, CASES[case])
    assert ours is not None and ours == _error(tf1, CASES[case])


def test_sort_of_unknown_rank_is_refused_at_build_time():
    with pytest.raises(ValueError, match="known rank"):
        dataflow.sort(dataflow.placeholder(dataflow.float32, None))
