"""``as_string``, ``regex_full_match``, ``reduce_join`` and ``unsorted_segment_join``
against ``tensorflow.compat.v1``: values, static shapes and error classes."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow

pytestmark = pytest.mark.tf

WORDS = np.array([[b"a", b"bc", b""], [b"d", b"ef", b"ghi"]], dtype=object)


def _tf1():
    return pytest.importorskip("tensorflow.compat.v1")


def _program(tf):
    f = tf.constant([1.5, -0.25, 1234.5678, 1e-7, 3.0])
    i = tf.constant([[5, -12], [0, 123456]], tf.int64)
    w = tf.placeholder(tf.string, [2, 3])
    return (w,), [
        tf.as_string(f),
        tf.strings.as_string(f, precision=2),
        tf.strings.as_string(f, scientific=True),
        tf.strings.as_string(f, shortest=True),
        tf.strings.as_string(f, precision=1, width=9, fill="0"),
        tf.strings.as_string(f, width=12, fill="-"),
        tf.strings.as_string(f, precision=3, fill="+"),
        tf.strings.as_string(tf.constant([True, False]), width=7),
        tf.strings.as_string(i),
        tf.strings.as_string(i, width=6),
        tf.strings.as_string(tf.constant([True, False])),
        tf.dtypes.as_string(tf.constant([7], tf.uint8), width=3, fill="0"),
        tf.strings.regex_full_match(w, "[a-e]+"),
        tf.strings.regex_full_match(w, r"\w*"),
        tf.strings.reduce_join(w),
        tf.strings.reduce_join(w, axis=1, separator="-"),
        tf.strings.reduce_join(w, axis=0, keep_dims=True),
        tf.reduce_join(w, [-1, 0], separator=","),
        tf.strings.reduce_join(w, axis=1, keepdims=True),
        tf.strings.unsorted_segment_join(w, [1, 1], 3, separator="+"),
        tf.strings.unsorted_segment_join(w, [[0, 2, 0], [2, 2, 0]], 4, separator="|"),
    ]


def _run(tf):
    with tf.Graph().as_default():
        placeholders, outs = _program(tf)
        shapes = [o.shape.as_list() if o.shape.rank is not None else None for o in outs]
        with tf.Session() as sess:
            return shapes, sess.run(outs, {placeholders[0]: WORDS})


def test_matches_tf():
    (our_shapes, ours), (their_shapes, theirs) = _run(dataflow), _run(_tf1())
    assert our_shapes == their_shapes
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        assert np.shape(a) == np.shape(b), i
        assert np.asarray(a).tolist() == np.asarray(b).tolist(), i


def test_errors_match_tf():
    tf1 = _tf1()
    for tf in (dataflow, tf1):
        with tf.Graph().as_default():
            with pytest.raises(tf.errors.InvalidArgumentError):
                with tf.Session() as sess:  # TF finds it when the kernel is made
                    sess.run(tf.strings.as_string([1.0], width=3, fill="*"))
            with pytest.raises(tf.errors.InvalidArgumentError):
                with tf.Session() as sess:
                    sess.run(tf.strings.as_string([1], precision=3))
            with pytest.raises(tf.errors.InvalidArgumentError):
                with tf.Session() as sess:
                    sess.run(tf.strings.as_string([1.0], scientific=True, shortest=True))
            bad = tf.strings.regex_full_match(["a"], "(")
            out_of_range = tf.strings.unsorted_segment_join(["a", "b"], [0, 3], 2)
            with tf.Session() as sess:
                for fetch in (bad, out_of_range):
                    with pytest.raises(tf.errors.InvalidArgumentError):
                        sess.run(fetch)


def test_as_string_refuses_strings_as_tf_1_15():
    # TF 1.15's AsString takes numbers and booleans only (TF 2 added strings)
    with dataflow.Graph().as_default():
        with pytest.raises(TypeError):
            dataflow.strings.as_string(["a"])
