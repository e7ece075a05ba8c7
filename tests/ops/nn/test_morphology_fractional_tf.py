"""``tf.nn.dilation2d``/``erosion2d``, ``fractional_max_pool``/``fractional_avg_pool``
and ``compute_accidental_hits`` against ``tensorflow.compat.v1`` (graph + Session):
values, gradients, static shapes and errors. The fractional pools' random sequences
are not TF's bit-for-bit, so TF's sequences are fed through this package's pooling,
and this package's own sequences are checked against TF's rules and a numpy pooling."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow
from dataflow.framework import errors
from dataflow.ops.nn.fractional import pool_with_sequences

pytestmark = [
    pytest.mark.tf,
    pytest.mark.filterwarnings("ignore::UserWarning"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]
tf1 = pytest.importorskip("tensorflow.compat.v1")

rng = np.random.default_rng(7)
X = rng.standard_normal((2, 7, 6, 3))
K = rng.standard_normal((3, 2, 3))
MORPH_CASES = [
    ("SAME", [1, 1, 1, 1], [1, 1, 1, 1]),
    ("SAME", [1, 2, 3, 1], [1, 2, 1, 1]),
    ("VALID", [1, 2, 1, 1], [1, 1, 2, 1]),
]


def _run(tf, build):
    with tf.Graph().as_default():
        fetches = build(tf)
        with tf.Session() as sess:
            return sess.run(fetches)


def _morphology(tf):
    x, k = tf.constant(X), tf.constant(K)
    out = []
    for padding, strides, rates in MORPH_CASES:
        d = tf.nn.dilation2d(x, k, strides, rates, padding)
        e = tf.nn.erosion2d(x, k, strides, rates, padding)
        loss = tf.reduce_sum(d * d) + tf.reduce_sum(tf.sin(e))
        out.append([d, e, *tf.gradients(loss, [x, k])])
    return out


@pytest.fixture(scope="module")
def morphology():
    return _run(dataflow, _morphology), _run(tf1, _morphology)


@pytest.mark.parametrize("case", range(len(MORPH_CASES)))
def test_dilation_erosion_values_and_gradients(morphology, case):
    ours, theirs = morphology
    for a, b in zip(ours[case], theirs[case], strict=True):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_dilation_static_shapes_and_unknown_sizes():
    shapes = {}
    for tf in (dataflow, tf1):
        with tf.Graph().as_default():
            x = tf.placeholder(tf.float64, [None, 7, 6, 3])
            y = tf.placeholder(tf.float64, [None, None, None, 3])
            d = tf.nn.dilation2d(x, K, [1, 2, 3, 1], [1, 2, 1, 1], "SAME")
            e = tf.nn.erosion2d(y, K, [1, 2, 1, 1], [1, 1, 2, 1], "VALID")
            shapes[tf] = (d.shape.as_list(), e.shape.as_list()[0])
            with tf.Session() as sess:
                shapes[tf, "value"] = sess.run(e, {y: X})
    assert shapes[dataflow] == shapes[tf1]
    np.testing.assert_allclose(shapes[dataflow, "value"], shapes[tf1, "value"], rtol=1e-12)


def test_dilation_routes_a_tie_to_the_first_tap():
    # all inputs and taps equal: every window's maximum is tied, and TF's kernel keeps
    # the first in row-major tap order, so only the top-left tap gets gradient.
    with dataflow.Graph().as_default():
        x = dataflow.zeros([1, 4, 5, 2])
        k = dataflow.zeros([2, 2, 2])
        d = dataflow.nn.dilation2d(x, k, [1, 1, 1, 1], [1, 1, 1, 1], "VALID")
        gx, gk = dataflow.gradients(dataflow.reduce_sum(d), [x, k])
        with dataflow.Session() as sess:
            gx, gk = sess.run([gx, gk])
    expected_x = np.zeros((1, 4, 5, 2), np.float32)
    expected_x[:, :3, :4] = 1.0
    expected_k = np.zeros((2, 2, 2), np.float32)
    expected_k[0, 0] = 3 * 4
    np.testing.assert_array_equal(gx, expected_x)
    np.testing.assert_array_equal(gk, expected_k)


def test_dilation_errors():
    with dataflow.Graph().as_default():
        x = dataflow.constant(X)
        with pytest.raises(ValueError, match="spatial"):
            dataflow.nn.dilation2d(x, K, [2, 1, 1, 1], [1, 1, 1, 1], "SAME")
        with pytest.raises(ValueError, match="padding"):
            dataflow.nn.dilation2d(x, K, [1, 1, 1, 1], [1, 1, 1, 1], "FULL")
        with pytest.raises(ValueError, match="depth"):
            dataflow.nn.dilation2d(x, K[:, :, :2], [1, 1, 1, 1], [1, 1, 1, 1], "SAME")
        with pytest.raises(ValueError, match="larger"):
            dataflow.nn.erosion2d(x, np.zeros((8, 1, 3)), [1, 1, 1, 1], [1, 1, 1, 1], "VALID")
        with pytest.raises(TypeError, match="real"):
            dataflow.nn.dilation2d(
                np.zeros((1, 3, 3, 1), bool),
                np.zeros((1, 1, 1), bool),
                [1, 1, 1, 1],
                [1, 1, 1, 1],
                "SAME",
            )


def test_integer_dilation_and_erosion_match_tf():
    # integers have no -inf: taps off the input are skipped through a mask, and the
    # lowest int32 in the input (erosion negates it) wraps as in TF's kernel
    x = rng.integers(-50, 50, (2, 6, 5, 2)).astype(np.int32)
    x[0, 0, 0, 0] = np.iinfo(np.int32).min
    k = rng.integers(-9, 9, (3, 2, 2)).astype(np.int32)

    def build(tf):
        out = []
        for padding, strides, rates in MORPH_CASES:
            out.append(tf.nn.dilation2d(x, k, strides, rates, padding))
            out.append(tf.nn.erosion2d(x, k, strides, rates, padding))
        return out

    for a, b in zip(_run(dataflow, build), _run(tf1, build), strict=True):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


# --- fractional pooling ---------------------------------------------------------------------
FX = rng.standard_normal((2, 9, 7, 3))
FX[0, :3, :3, 0] = 2.5  # tied maxima inside windows
RATIO = [1.0, 1.5, 1.7, 1.0]
FRACTIONAL_CASES = [(kind, pr, ov) for kind in ("max", "avg") for pr, ov in ((0, 0), (1, 1))]


def _tf_fractional(tf):
    x = tf.constant(FX)
    out = []
    for i, (kind, pseudo, overlap) in enumerate(FRACTIONAL_CASES):
        pool = tf.nn.fractional_max_pool if kind == "max" else tf.nn.fractional_avg_pool
        y, rows, cols = pool(x, RATIO, bool(pseudo), bool(overlap), True, 5 + i, 9)
        out.append([y, rows, cols, tf.gradients(tf.reduce_sum(y * y), x)[0]])
    return out


@pytest.fixture(scope="module")
def tf_fractional():
    return _run(tf1, _tf_fractional)


@pytest.mark.parametrize("case", range(len(FRACTIONAL_CASES)))
def test_fractional_pooling_over_tf_sequences(tf_fractional, case):
    kind, _, overlap = FRACTIONAL_CASES[case]
    y_tf, rows, cols, g_tf = tf_fractional[case]

    def build(tf):
        x = tf.constant(FX)
        y = pool_with_sequences(x, rows, cols, bool(overlap), kind)
        return [y, tf.gradients(tf.reduce_sum(y * y), x)[0]]

    y, g = _run(dataflow, build)
    np.testing.assert_allclose(y, y_tf, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(g, g_tf, rtol=1e-12, atol=1e-12)


def _numpy_pool(x, rows, cols, overlapping, kind):
    """The pooling of TF's kernel, written out with loops over windows."""
    out = np.empty((x.shape[0], len(rows) - 1, len(cols) - 1, x.shape[3]), x.dtype)
    for i in range(len(rows) - 1):
        r1 = min(rows[i + 1] - (0 if overlapping else 1), x.shape[1] - 1)
        for j in range(len(cols) - 1):
            c1 = min(cols[j + 1] - (0 if overlapping else 1), x.shape[2] - 1)
            window = x[:, rows[i] : r1 + 1, cols[j] : c1 + 1]
            reduce = np.max if kind == "max" else np.mean
            out[:, i, j] = reduce(window, axis=(1, 2))
    return out


def _check_sequence(seq, n, m):
    k = n // m
    assert seq.dtype == np.int64 and seq.shape == (m + 1,)
    assert seq[0] == 0 and seq[-1] == n
    assert set(np.diff(seq).tolist()) <= {k, k + 1}


@pytest.mark.parametrize(
    "kind,pseudo,overlap,known", [("max", False, True, True), ("avg", True, False, False)]
)
def test_fractional_sequences_follow_tfs_rules(kind, pseudo, overlap, known):
    pool = dataflow.nn.fractional_max_pool if kind == "max" else dataflow.nn.fractional_avg_pool
    with dataflow.Graph().as_default():
        x = dataflow.placeholder(dataflow.float64, [None, 9, 7, 3] if known else [None] * 3 + [3])
        fixed = pool(x, RATIO, pseudo, overlap, deterministic=True, seed=3, seed2=1)
        free = pool(x, RATIO, pseudo, overlap)
        if known:  # else the sizes come from the step's input
            assert fixed[0].shape.as_list() == [None, 6, 4, 3]
            assert fixed[1].shape.as_list() == [7] and fixed[2].shape.as_list() == [5]
        with dataflow.Session() as sess:
            first, again = (sess.run(fixed, {x: FX}) for _ in range(2))
            runs = [sess.run(free, {x: FX}) for _ in range(3)]
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a, b)  # deterministic: the same regions every run
    for y, rows, cols in [first, *runs]:
        _check_sequence(rows, 9, 6)
        _check_sequence(cols, 7, 4)
        np.testing.assert_allclose(y, _numpy_pool(FX, rows, cols, overlap, kind), rtol=1e-12)


def test_fractional_static_shapes_match_tf():
    shapes = {}
    for tf in (dataflow, tf1):
        with tf.Graph().as_default():
            x = tf.placeholder(tf.float32, [None, 10, 5, 2])
            y, rows, cols = tf.nn.fractional_avg_pool(x, [1.0, 1.44, 2.0, 1.0])
            shapes[tf] = (y.shape.as_list(), rows.shape.as_list(), cols.shape.as_list(), y.dtype)
    assert shapes[dataflow][0] == shapes[tf1][0] == [None, 6, 2, 2]
    assert shapes[dataflow][3].name == shapes[tf1][3].name
    # the sequences hold one boundary more than the outputs; TF's shape function says
    # [6] and [2] for them while its kernel returns 7 and 3 entries: here the truth.
    assert shapes[dataflow][1:3] == ([7], [3])


def test_fractional_errors():
    with dataflow.Graph().as_default():
        x = dataflow.constant(FX)
        with pytest.raises(errors.InvalidArgumentError, match="seed"):
            dataflow.nn.fractional_max_pool(x, RATIO, seed=1)
        with pytest.raises(ValueError, match="smaller than 1"):
            dataflow.nn.fractional_max_pool(x, [1.0, 0.5, 1.5, 1.0])
        with pytest.raises(ValueError, match="4"):
            dataflow.nn.fractional_avg_pool(x, [1.0, 1.5, 1.5])
        with pytest.raises(errors.UnimplementedError):
            dataflow.nn.fractional_avg_pool(x, [2.0, 1.5, 1.5, 1.0])


# --- compute_accidental_hits ----------------------------------------------------------------
def test_compute_accidental_hits_matches_tf():
    true = np.array([[1, 2], [3, 1], [7, 7], [0, 9]], np.int64)
    sampled = np.array([1, 5, 7, 1, 3], np.int64)  # 1 twice: TF names its last position

    def build(tf):
        return list(tf.nn.compute_accidental_hits(tf.constant(true), tf.constant(sampled), 2))

    ours, theirs = _run(dataflow, build), _run(tf1, build)
    for a, b in zip(ours, theirs, strict=True):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    with dataflow.Graph().as_default():
        with pytest.raises(errors.InvalidArgumentError, match="matrix"):
            dataflow.nn.compute_accidental_hits(true, sampled, 3)
