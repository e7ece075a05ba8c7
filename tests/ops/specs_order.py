"""Rows of the op table for ordering, segments, counting and clipping (``math.ordering``,
``math.segment``, ``Cumprod``, ``math.clip``). Float inputs have distinct values where a
gradient picks an element (top_k, max/min), and rows with ties or empty segments check
values only, where TF's rules for them show."""

from __future__ import annotations

import autograd.numpy as anp
import numpy as np

from dataflow.testing.op_spec import OpSpec, call

RNG = np.random.default_rng(23)


def distinct(*shape):
    """Values far enough apart that finite differences never reorder them."""
    n = int(np.prod(shape))
    return (RNG.permutation(n) * 0.5 + RNG.uniform(0, 0.1, n)).reshape(shape) - n / 4


IDS = np.array([0, 0, 1, 3])  # sorted, segment 2 empty
UNSORTED = np.array([1, 0, 1, 3])  # segment 2 empty


def _segments(x, ids, n, reduce):
    return anp.stack([reduce(x[ids == i], axis=0) for i in range(n)])


def _segment_ref(reduce, empty=0.0):
    def ref(x):
        rows = [
            reduce(x[IDS == i], axis=0) if (IDS == i).any() else anp.full(x.shape[1:], empty)
            for i in range(4)
        ]
        return anp.stack(rows)

    return ref


def _value(x):
    return getattr(x, "_value", x)  # the array inside an autograd box


def _sorted_last(x, descending=False):
    """``x`` sorted along its last axis by indexing (autograd's sort is 1-D only)."""
    order = np.argsort(-_value(x) if descending else _value(x), axis=-1, kind="stable")
    rows = np.arange(x.shape[0])[:, None]
    return x[rows, order]


def _cumprod_rows(x, axis):
    """Running products by explicit slices (autograd has no cumprod gradient)."""
    moved = anp.moveaxis(x, axis, 0)
    out = anp.stack([anp.prod(moved[: i + 1], axis=0) for i in range(moved.shape[0])])
    return anp.moveaxis(out, 0, axis)


def _clip_by_norm(x, clip):
    norm = anp.sqrt(anp.sum(x * x))
    return x * clip / anp.maximum(norm, clip)


def _global_clip(a, b, clip):
    norm = anp.sqrt(anp.sum(a * a) + anp.sum(b * b))
    scale = clip * anp.minimum(1.0 / norm, 1.0 / clip)
    return [a * scale, b * scale, norm]


ROWS = [
    OpSpec(
        "top_k_values",
        lambda tf, x: tf.nn.top_k(x, 2).values,
        lambda x: _sorted_last(x, descending=True)[:, :2],
        (distinct(3, 4),),
    ),
    OpSpec(
        "top_k_indices_with_ties",
        lambda tf, x: tf.nn.top_k(x, 3).indices,
        lambda x: np.argsort(-x, axis=-1, kind="stable")[..., :3].astype(np.int32),
        (np.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0]]),),
        grad=0,
    ),
    OpSpec(
        "sort_ascending_axis0",
        call("sort", axis=0),
        lambda x: _sorted_last(x.T).T,
        (distinct(4, 3),),
        unknown_dims=False,
    ),
    OpSpec(
        "sort_descending",
        call("sort", direction="DESCENDING"),
        lambda x: _sorted_last(x, descending=True),
        (distinct(2, 5),),
    ),
    OpSpec(
        "argsort_with_ties",
        call("argsort"),
        lambda x: np.argsort(x, axis=-1, kind="stable").astype(np.int32),
        (np.array([[2.0, 1.0, 2.0, 0.0, 1.0]]),),
        grad=0,
    ),
    OpSpec(
        "in_top_k_ties_count",
        lambda tf, p: tf.nn.in_top_k(p, [0, 2, 3], 2),
        lambda p: np.array([True, True, False]),
        (np.array([[5.0, 1, 5, 5], [0, 3, 3, 3], [4, 3, 2, 1]], np.float32),),
        grad=0,
    ),
    OpSpec(
        "cumprod",
        call("cumprod", axis=1),
        lambda x: _cumprod_rows(x, 1),
        (RNG.uniform(0.5, 1.5, (2, 4)),),
    ),
    OpSpec(
        "cumprod_exclusive_reverse",
        call("cumprod", axis=0, exclusive=True, reverse=True),
        lambda x: _cumprod_rows(x[::-1], 0)[::-1] / x,
        (RNG.uniform(0.5, 1.5, (4, 2)),),
    ),
    OpSpec("segment_sum", call("segment_sum", IDS), _segment_ref(anp.sum), (distinct(4, 2),)),
    OpSpec("segment_mean", call("segment_mean", IDS), _segment_ref(anp.mean), (distinct(4, 2),)),
    OpSpec("segment_max", call("segment_max", IDS), _segment_ref(anp.max), (distinct(4, 2),)),
    OpSpec("segment_min", call("segment_min", IDS), _segment_ref(anp.min), (distinct(4, 2),)),
    OpSpec(
        "unsorted_segment_max",
        call("unsorted_segment_max", UNSORTED, 4),
        lambda x: np.stack(
            [
                x[UNSORTED == i].max(0) if i != 2 else np.full(2, np.finfo(x.dtype).min)
                for i in range(4)
            ]
        ),
        (distinct(4, 2),),
        grad=0,
    ),
    OpSpec(
        "unsorted_segment_min_grad",
        call("unsorted_segment_min", UNSORTED[:3], 2),
        lambda x: _segments(x, UNSORTED[:3], 2, anp.min),
        (distinct(3, 2),),
    ),
    OpSpec(
        "unsorted_segment_max_grad",
        call("unsorted_segment_max", UNSORTED[:3], 2),
        lambda x: _segments(x, UNSORTED[:3], 2, anp.max),
        (distinct(3, 2),),
    ),
    OpSpec(
        "unsorted_segment_prod",
        call("unsorted_segment_prod", UNSORTED[:3], 2),
        lambda x: _segments(x, UNSORTED[:3], 2, anp.prod),
        (RNG.uniform(0.5, 1.5, (3, 2)),),
    ),
    OpSpec(
        "unsorted_segment_prod_zeros",
        call("unsorted_segment_prod", [0, 0, 0, 1, 1], 2),
        lambda x: np.stack([x[:3].prod(0), x[3:].prod(0)]),
        (np.array([[0.0, 2.0], [3.0, 0.0], [4.0, 0.0], [0.0, 1.5], [2.0, 0.5]]),),
        grad=0,
    ),
    OpSpec(
        "unsorted_segment_mean",
        call("unsorted_segment_mean", UNSORTED, 4),
        lambda x: anp.stack(
            [
                anp.mean(x[UNSORTED == i], axis=0) if (UNSORTED == i).any() else anp.zeros(2)
                for i in range(4)
            ]
        ),
        (distinct(4, 2),),
    ),
    OpSpec(
        "unsorted_segment_sqrt_n",
        call("unsorted_segment_sqrt_n", UNSORTED[:3], 2),
        lambda x: anp.stack(
            [
                anp.sum(x[UNSORTED[:3] == i], axis=0) / anp.sqrt((UNSORTED[:3] == i).sum())
                for i in (0, 1)
            ]
        ),
        (distinct(3, 2),),
    ),
    OpSpec(
        "bincount",
        lambda tf, a: tf.bincount(a, minlength=6),
        lambda a: np.bincount(a, minlength=6).astype(np.int32),
        (np.array([1, 1, 4, 0], np.int32),),
        grad=0,
    ),
    OpSpec(
        "bincount_weights_maxlength",
        lambda tf, a, w: tf.bincount(a, weights=w, maxlength=3, dtype=tf.float64),
        lambda a, w: np.bincount(a, weights=w)[:3],
        (np.array([1, 1, 4, 0], np.int32), np.array([0.5, 1.0, 2.0, 3.0])),
        grad=0,
    ),
    OpSpec(
        "histogram_fixed_width",
        lambda tf, v: tf.histogram_fixed_width(v, [0.0, 5.0], nbins=5),
        lambda v: np.array([2, 1, 0, 1, 2], np.int32),
        (np.array([-1.0, 0.0, 1.5, 3.2, 4.99, 9.0]),),
        grad=0,
    ),
    OpSpec(
        "clip_by_norm_clips",
        lambda tf, x: tf.clip_by_norm(x, 1.5),
        lambda x: _clip_by_norm(x, 1.5),
        (distinct(2, 3),),
    ),
    OpSpec(
        "clip_by_norm_axes",
        lambda tf, x: tf.clip_by_norm(x, 1.0, axes=[1]),
        lambda x: x / anp.maximum(anp.sqrt(anp.sum(x * x, axis=1, keepdims=True)), 1.0),
        (distinct(3, 2),),
    ),
    OpSpec(
        "clip_by_global_norm",
        lambda tf, a, b: tf.concat(
            [tf.reshape(c, [-1]) for c in tf.clip_by_global_norm([a, None, b], 2.0)[0][::2]], 0
        ),
        lambda a, b: anp.concatenate([c.reshape(-1) for c in _global_clip(a, b, 2.0)[:2]]),
        (distinct(2, 2), distinct(3)),
    ),
    OpSpec(
        "global_norm",
        lambda tf, a, b: tf.global_norm([a, None, b]),
        lambda a, b: _global_clip(a, b, 2.0)[2],
        (distinct(2, 2), distinct(3)),
    ),
    OpSpec(
        "clip_by_average_norm",
        lambda tf, x: tf.clip_by_average_norm(x, 0.1),
        lambda x: x * 0.1 * anp.minimum(x.size / anp.sqrt(anp.sum(x * x)), 10.0),
        # TF casts the element count to float32, so its op takes float32 only.
        (distinct(2, 3).astype(np.float32),),
        rtol=1e-5,
        atol=1e-6,
        tf_rtol=1e-5,
        tf_atol=1e-6,
    ),
]
