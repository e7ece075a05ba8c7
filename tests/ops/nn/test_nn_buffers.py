"""``_util.recycler.Recycler`` (arrays reused from step to step by the conv, pool and ReLU
kernels): an array is handed out again only when nothing but the recycler holds it, so
values a caller keeps (fetched results, views of them) never change under it; and
kernels that recycle give the same values, step after step, as references computed
independently (numpy sums over kernel offsets and window maxima written here)."""

from __future__ import annotations

import threading
import weakref

import numpy as np
import pytest

import dataflow as tf
from dataflow._util.recycler import Recycler
from dataflow.testing import strict_xp


def test_free_array_is_handed_out_again() -> None:
    r = Recycler(np)
    a = r.empty((4, 3), np.float32)
    first = weakref.ref(a)
    del a
    b = r.empty((4, 3), np.float32)
    assert b is first()  # kept by the recycler, free again: reused


def test_held_array_or_view_is_never_handed_out() -> None:
    r = Recycler(np)
    a = r.empty((5,), np.float64)
    b = r.empty((5,), np.float64)
    assert b is not a
    view = a[1:]
    del a
    c = r.empty((5,), np.float64)
    assert c is not view.base and c is not b


def test_shape_and_dtype_must_match() -> None:
    r = Recycler(np)
    a = r.empty((2, 3), np.float32)
    first = weakref.ref(a)
    del a
    assert r.empty((3, 2), np.float32) is not first()
    assert r.empty((2, 3), np.float64) is not first()
    assert r.empty((2, 3), np.float32) is first()


def test_frozen_free_array_comes_back_writeable() -> None:
    r = Recycler(np)
    a = r.empty((3,), np.float32)
    a.flags.writeable = False  # as a fetch may leave it
    del a
    b = r.empty((3,), np.float32)
    b[...] = 1.0
    np.testing.assert_array_equal(b, np.ones(3, np.float32))


def test_zeros_are_zero_after_reuse() -> None:
    r = Recycler(np)
    a = r.empty((6,), np.float32)
    a[...] = 7.0
    del a
    np.testing.assert_array_equal(r.zeros((6,), np.float32), np.zeros(6, np.float32))


def test_other_namespaces_allocate_fresh_arrays() -> None:
    r = Recycler(strict_xp)
    a = r.empty((3,), np.float32)
    first = weakref.ref(a)
    del a
    assert first() is None  # not kept
    assert isinstance(r.empty((3,), np.float32), strict_xp.StrictArray)


def test_list_is_bounded() -> None:
    r = Recycler(np, size=2)
    held = [r.empty((i + 1,), np.float32) for i in range(5)]
    evicted = weakref.ref(held[0])
    del held
    assert evicted() is None  # dropped from the recycler, then by its last owner


def test_concurrent_takers_never_share_an_array() -> None:
    r = Recycler(np, size=4)
    errors: list[str] = []

    def worker(tag: float) -> None:
        for _ in range(2000):
            a = r.empty((64,), np.float64)
            a[...] = tag
            if not (a == tag).all():
                errors.append(f"array shared with another thread (tag {tag})")
                return
            del a

    threads = [threading.Thread(target=worker, args=(float(t),)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


# --- kernels that recycle, in a session ---------------------------------------------------
def _ref_conv_same(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    kh, kw = w.shape[:2]
    n, h, wd, _ = x.shape
    pt, pl = (kh - 1) // 2, (kw - 1) // 2
    xpad = np.pad(x, ((0, 0), (pt, kh - 1 - pt), (pl, kw - 1 - pl), (0, 0)))
    out = np.zeros((n, h, wd, w.shape[3]))
    for i in range(kh):
        for j in range(kw):
            out += np.tensordot(xpad[:, i : i + h, j : j + wd, :], w[i, j], axes=([3], [0]))
    return out


def _ref_pool2(x: np.ndarray) -> np.ndarray:
    n, h, w, c = x.shape
    return x.reshape(n, h // 2, 2, w // 2, 2, c).max(axis=(2, 4))


@pytest.mark.parametrize(
    "channels, filters, size",
    # One-channel im2col; the Fourier route (this geometry takes it: fourier_pays).
    [(1, 8, 12), (32, 48, 14)],
)
def test_fetched_values_survive_later_steps(channels: int, filters: int, size: int) -> None:
    rng = np.random.default_rng(3)
    wv = rng.standard_normal((5, 5, channels, filters)).astype(np.float32)
    feeds = [rng.standard_normal((4, size, size, channels)).astype(np.float32) for _ in range(3)]

    def build() -> tuple:
        x = tf.placeholder(tf.float32, [None, size, size, channels])
        w = tf.constant(wv)
        conv = tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME")
        pool = tf.nn.max_pool(tf.nn.relu(conv), [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
        return x, [conv, pool, *tf.gradients(tf.reduce_sum(pool * pool), [x, w])]

    with tf.Graph().as_default():
        x, fetches = build()
        with tf.Session() as sess:
            kept = [sess.run(fetches, {x: f}) for f in feeds]
            for _ in range(2):  # more steps, results dropped: their arrays get reused
                sess.run(fetches, {x: feeds[0]})
    for f, (conv, pool, _, _) in zip(feeds, kept):
        ref = _ref_conv_same(f.astype(np.float64), wv.astype(np.float64))
        np.testing.assert_allclose(conv, ref, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(pool, _ref_pool2(np.maximum(ref, 0)), rtol=1e-4, atol=1e-4)
    # Each feed's step in a session of its own (nothing to reuse there) gives what the
    # shared session gave, bit for bit, though later steps of that one reused arrays.
    for f, got in zip(feeds, kept):
        with tf.Graph().as_default():
            x, fetches = build()
            with tf.Session() as sess:
                fresh = sess.run(fetches, {x: f})
        for a, b in zip(got, fresh):
            np.testing.assert_array_equal(a, b)
