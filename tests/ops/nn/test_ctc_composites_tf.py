"""``tf.nn.collapse_repeated``, ``ctc_unique_labels`` and
``ctc_beam_search_decoder_v2`` against ``tensorflow.compat.v1``."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow
from dataflow.testing.tf_parity import assert_parity_on_constants

pytestmark = [
    pytest.mark.tf,
    pytest.mark.filterwarnings("ignore::UserWarning"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]
tf1 = pytest.importorskip("tensorflow.compat.v1")


@pytest.mark.parametrize(
    "labels,lengths",
    [
        ([[1, 1, 2, 2, 2], [3, 3, 3, 4, 0]], [5, 4]),
        ([[1, 2, 3, 3], [5, 5, 5, 5], [7, 7, 8, 8]], [4, 4, 1]),
        ([[2, 2, 2]], [0]),
    ],
)
def test_collapse_repeated(labels, lengths):
    def program(tf, x, n):
        return list(tf.nn.collapse_repeated(x, n))

    assert_parity_on_constants(
        tf1, program, np.array(labels, np.int32), np.array(lengths, np.int32)
    )


def test_collapse_repeated_int64_labels_fed():
    labels = np.array([[4, 4, 1, 4], [2, 3, 3, 3]], np.int64)
    got = {}
    for tf in (tf1, dataflow):
        with tf.Graph().as_default():
            x = tf.placeholder(tf.int64, [None, None])
            n = tf.placeholder(tf.int32, [None])
            out, new = tf.nn.collapse_repeated(x, n)
            assert out.dtype == tf.int64 and new.dtype == tf.int32
            with tf.Session() as sess:
                got[tf is tf1] = sess.run([out, new], {x: labels, n: [4, 3]})
    for ours, theirs in zip(got[False], got[True]):
        np.testing.assert_array_equal(ours, theirs)


def test_ctc_beam_search_decoder_v2_keeps_repeats():
    rng = np.random.default_rng(2)
    logits = rng.standard_normal((6, 2, 4)).astype(np.float32)
    logits[:, :, 1] += 2.0  # repeated 1s are likely

    def program(tf, x):
        decoded, log_probs = tf.nn.ctc_beam_search_decoder_v2(x, [6, 5], beam_width=4, top_paths=2)
        return [*(t for d in decoded for t in (d.indices, d.values, d.dense_shape)), log_probs]

    assert_parity_on_constants(tf1, program, logits, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_ctc_unique_labels(dtype):
    def program(tf, x):
        y, idx = tf.nn.ctc_unique_labels(x)
        assert y.dtype == tf.int64 and idx.dtype == tf.int32
        return [y, idx]

    labels = np.array([[3, 1, 3, 2, 1, 1], [0, 0, 0, 0, 0, 0], [5, 4, 3, 2, 1, 7]], dtype)
    assert_parity_on_constants(tf1, program, labels)
