"""Non-maximum suppression against ``tensorflow.compat.v1``: every variant's selected
indices (exactly), scores, counts, padding, static shapes and dtypes, over random boxes
with distinct scores and corners in either order; ``combined_non_max_suppression`` over a
batch with shared and per-class boxes."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow

pytestmark = pytest.mark.tf

RNG = np.random.default_rng(3206)


def _boxes(*lead):
    corner = RNG.random((*lead, 2)) * 0.8
    size = RNG.random((*lead, 2)) * 0.4
    boxes = np.concatenate([corner, corner + size], -1).astype(np.float32)
    flip = RNG.random(lead) < 0.3  # corners given the other way round
    boxes[flip] = boxes[flip][:, [2, 3, 0, 1]]
    return boxes


BOXES = _boxes(40)
SCORES = RNG.permutation(40).astype(np.float32) / 40.0
OVERLAPS = RNG.random((40, 40)).astype(np.float32)


def _program(tf):
    b = tf.placeholder(tf.float32, [None, 4])
    s = tf.placeholder(tf.float32, [None])
    # TF's padded path (a tiled algorithm) expects ordered corners whatever its
    # canonicalized_coordinates says: give it boxes with y1 <= y2, x1 <= x2
    ordered = tf.concat([tf.minimum(b[:, :2], b[:, 2:]), tf.maximum(b[:, :2], b[:, 2:])], 1)
    outs = [
        tf.image.non_max_suppression(b, s, 10),
        tf.image.non_max_suppression(b, s, 40, iou_threshold=0.1),
        tf.image.non_max_suppression(b, s, 7, iou_threshold=0.3, score_threshold=0.5),
        *tf.image.non_max_suppression_with_scores(b, s, 12, 0.2),
        *tf.image.non_max_suppression_padded(ordered, s, 30, 0.05, pad_to_max_output_size=True),
        *tf.image.non_max_suppression_padded(b, s, 5, 0.5),
        tf.image.non_max_suppression_overlaps(tf.constant(OVERLAPS), s, 9, 0.6),
        tf.image.non_max_suppression(b, s, 0),
    ]
    return (b, s), outs


def _run(tf, program, feeds):
    config = tf.ConfigProto(debug=True) if tf is dataflow else None
    with tf.Graph().as_default() as graph:
        placeholders, outs = program(tf)
        shapes = [o.shape.as_list() if o.shape.rank is not None else None for o in outs]
        dtypes = [o.dtype.name for o in outs]
        with tf.Session(graph=graph, config=config) as sess:
            values = sess.run(outs, dict(zip(placeholders, feeds, strict=True)))
    return shapes, dtypes, values


def _compare(program, feeds):
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    ours, theirs = _run(dataflow, program, feeds), _run(tf1, program, feeds)
    assert ours[0] == theirs[0], "static shapes"
    assert ours[1] == theirs[1], "dtypes"
    for i, (a, b) in enumerate(zip(ours[2], theirs[2], strict=True)):
        assert np.shape(a) == np.shape(b), i
        np.testing.assert_allclose(a, b, rtol=1e-6, err_msg=f"fetch {i}")


def test_non_max_suppression_matches_tf():
    _compare(_program, [BOXES, SCORES])


def _combined_program(tf):
    shared = tf.placeholder(tf.float32, [2, 30, 1, 4])
    per_class = tf.placeholder(tf.float32, [2, 30, 3, 4])
    scores = tf.placeholder(tf.float32, [2, 30, 3])
    outs = [
        *tf.image.combined_non_max_suppression(shared, scores, 4, 10, 0.3, 0.2),
        *tf.image.combined_non_max_suppression(
            per_class * 1.5 - 0.2, scores, 3, 20, 0.5, pad_per_class=True
        ),
        *tf.image.combined_non_max_suppression(per_class, scores, 5, 6, 0.4, 0.1, clip_boxes=False),
    ]
    return (shared, per_class, scores), outs


def test_combined_non_max_suppression_matches_tf():
    scores = RNG.permutation(180).reshape(2, 30, 3).astype(np.float32) / 180.0
    _compare(_combined_program, [_boxes(2, 30, 1), _boxes(2, 30, 3), scores])


def test_build_time_errors_match_tf():
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    for tf in (dataflow, tf1):
        with tf.Graph().as_default():
            with pytest.raises(ValueError):
                tf.image.non_max_suppression(tf.zeros([3, 4, 1]), tf.zeros([3]), 2)
            with pytest.raises(ValueError):
                tf.image.non_max_suppression(tf.zeros([3, 4]), tf.zeros([3, 1]), 2)
