"""``Tensor.__getitem__`` against numpy basic indexing, over hypothesis-drawn keys.

Each drawn key mixes ints (negative too), slices with any bounds and steps (negative
too, bounds past the ends), at most one ``...`` and ``tf.newaxis``. For every key the
graph's value, its static shape (from a fully known and from an all-unknown input
shape) and its gradient (``StridedSliceGrad``) must match numpy's; a second variant
passes every int and slice bound as a fed scalar tensor.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import dataflow as tf


@st.composite
def index_cases(draw):
    shape = draw(st.lists(st.integers(0, 5), min_size=0, max_size=3))
    rank = len(shape)
    use_ellipsis = draw(st.booleans())
    if use_ellipsis:
        start = draw(st.integers(0, rank))
        stop = draw(st.integers(start, rank))
    else:
        start = stop = draw(st.integers(0, rank))  # dims from here on are left implicit
    parts = []
    for axis in range(rank):
        if start <= axis < stop:
            if axis == start:
                parts.append(Ellipsis)
            continue
        if not use_ellipsis and axis >= start:
            break
        d = shape[axis]
        if d > 0 and draw(st.booleans()):
            parts.append(draw(st.integers(-d, d - 1)))
        else:
            bound = st.one_of(st.none(), st.integers(-d - 2, d + 2))
            step = st.one_of(st.none(), st.sampled_from([1, 2, 3, -1, -2]))
            parts.append(slice(draw(bound), draw(bound), draw(step)))
    if use_ellipsis and Ellipsis not in parts:
        parts.insert(start, Ellipsis)  # an ellipsis standing for no dimension
    for _ in range(draw(st.integers(0, 2))):
        parts.insert(draw(st.integers(0, len(parts))), None)
    return shape, tuple(parts)


def _tensorize(key):
    """The key with every int (and slice bound) replaced by a fed int32 scalar."""
    feeds = {}

    def scalar(v):
        if v is None:
            return None
        p = tf.placeholder(tf.int32, [])
        feeds[p] = v
        return p

    out = []
    for k in key:
        if isinstance(k, int):
            out.append(scalar(k))
        elif isinstance(k, slice):
            out.append(slice(scalar(k.start), scalar(k.stop), k.step))
        else:
            out.append(k)
    return tuple(out), feeds


@settings(max_examples=40, deadline=None)
@given(index_cases())
def test_getitem_matches_numpy(case):
    shape, key = case
    value = np.arange(float(np.prod(shape))).reshape(shape) + 1.0
    want = value[key]
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float64, shape)
        y = x[key]
        assert y.shape.as_list() == list(want.shape)
        loose = tf.placeholder(tf.float64, [None] * len(shape))
        y_loose = loose[key]
        assert y_loose.shape.is_compatible_with(want.shape)
        assert y_loose.shape.rank == want.ndim
        w = np.random.default_rng(0).standard_normal(want.shape)
        (g,) = tf.gradients(y, x, grad_ys=tf.constant(w))
        key_t, feeds = _tensorize(key)
        y_t = x[key_t]
        assert y_t.shape.rank == want.ndim
        with tf.Session(config=tf.ConfigProto(debug=True)) as sess:
            got, got_loose, got_g, got_t = sess.run(
                [y, y_loose, g, y_t], {x: value, loose: value, **feeds}
            )
    want_g = np.zeros_like(value)
    want_g[key] += w
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got_loose, want)
    np.testing.assert_array_equal(got_t, want)
    np.testing.assert_allclose(got_g, want_g)


def test_getitem_second_order_through_strided_slice_grad(sess):
    # d/dx <grad(sum(x[k]^3)), w> = 6 x w at k: differentiates StridedSliceGrad.
    x = tf.placeholder(tf.float64, [4, 3])
    value = np.random.default_rng(1).standard_normal((4, 3))
    w = np.random.default_rng(2).standard_normal((4, 3))
    y = x[1::2, ::-1]
    (g,) = tf.gradients(tf.reduce_sum(y * y * y), x)
    (h,) = tf.gradients(tf.reduce_sum(g * w), x)
    want = np.zeros_like(value)
    want[1::2, ::-1] = 6 * value[1::2, ::-1] * w[1::2, ::-1]
    np.testing.assert_allclose(sess.run(h, {x: value}), want)
