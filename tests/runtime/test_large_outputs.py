"""Elementwise ops with outputs over glibc's mmap threshold write into arrays kept from
step to step (``runtime/execute/large_outputs.py``): the same values as numpy's, a value
the program keeps never changes under later steps, and a released one is written
again instead of new pages."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow as tf
from dataflow.framework import dtypes
from dataflow.framework.tensor_shape import TensorShape
from dataflow.runtime.execute import large_outputs

ROWS, COLS = 90_000, 100  # 36 MB of float32: over the 32 MiB threshold


@pytest.fixture(scope="module")
def data() -> np.ndarray:
    return np.random.default_rng(0).standard_normal((ROWS, COLS)).astype(np.float32)


def _address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def test_a_large_product_is_right_kept_values_stay_and_released_memory_is_reused(data):
    graph = tf.Graph()
    with graph.as_default():
        v = tf.Variable(data)
        doubled = v * 2.0
        scaled = tf.tanh(tf.abs(-v) / 4.0)  # unary and binary ops, chained
    with tf.Session(graph=graph) as sess:
        sess.run(v.initializer)
        first, second = sess.run(doubled), sess.run(doubled)
        # Both held by the program: two arrays, each the right value.
        assert not np.shares_memory(first, second)
        np.testing.assert_array_equal(first, data * np.float32(2.0))
        np.testing.assert_array_equal(second, data * np.float32(2.0))
        kept = _address(second)
        del first
        third = sess.run(doubled)
        np.testing.assert_array_equal(second, data * np.float32(2.0))  # unchanged
        assert _address(third) != kept
        np.testing.assert_array_equal(third, data * np.float32(2.0))
        released = _address(third)
        del third
        assert _address(sess.run(doubled)) == released  # written again, not new pages
        expected = np.tanh(np.abs(-data) / np.float32(4.0))
        for _ in range(3):
            np.testing.assert_array_equal(sess.run(scaled), expected)


def test_a_fetched_value_written_by_the_program_changes_no_later_step(data):
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [ROWS, COLS])
        shifted = x + 1.0
    with tf.Session(graph=graph) as sess:
        got = sess.run(shifted, {x: data})
        got[...] = 0  # the program's own array now
        del got
        np.testing.assert_array_equal(sess.run(shifted, {x: data}), data + np.float32(1.0))


def test_only_large_fully_known_real_outputs_get_their_own_kernel():
    def kernel(*xs):
        return np.multiply(*xs)

    big = TensorShape([ROWS, COLS])
    assert large_outputs.large_output_kernel("multiply", dtypes.float32, big, np, kernel)
    assert large_outputs.large_output_kernel(None, dtypes.float32, big, np, kernel) is None
    # 9 MB: split over the threads, not kept (malloc reuses it).
    split_only = TensorShape([ROWS // 4, COLS])
    assert large_outputs.large_output_kernel("multiply", dtypes.float32, split_only, np, kernel)
    small = TensorShape([ROWS // 10, COLS])  # 3.6 MB: the ufunc itself
    assert large_outputs.large_output_kernel("multiply", dtypes.float32, small, np, kernel) is None
    # ... unless a distributed step's client fetches it (its worker may hand it a slab),
    # from 256 KiB.
    fetched = large_outputs.large_output_kernel(
        "multiply", dtypes.float32, small, np, kernel, fetched=True
    )
    assert fetched is not None
    fetched_small = TensorShape([ROWS // 100, COLS])  # 360 KB
    assert (
        large_outputs.large_output_kernel(
            "multiply", dtypes.float32, fetched_small, np, kernel, fetched=True
        )
        is not None
    )
    tiny = TensorShape([ROWS // 400, COLS])  # 90 KB
    assert (
        large_outputs.large_output_kernel("multiply", dtypes.float32, tiny, np, kernel, True)
        is None
    )
    unknown = TensorShape([None, COLS])
    assert (
        large_outputs.large_output_kernel("multiply", dtypes.float32, unknown, np, kernel) is None
    )
    assert large_outputs.large_output_kernel("multiply", dtypes.complex64, big, np, kernel) is None
    # An input of another dtype takes the op's own kernel (numpy's casting rules).
    large = large_outputs.large_output_kernel("multiply", dtypes.float32, big, np, kernel)
    halves = np.full((ROWS, COLS), 0.5, np.float64)
    assert large(halves, np.float32(2.0)).dtype == np.float64


@pytest.mark.parametrize(
    "other",
    [
        np.float32(2.5),  # a scalar
        np.linspace(-1, 1, COLS, dtype=np.float32),  # a row broadcast along the rows
        np.linspace(-1, 1, COLS, dtype=np.float32)[None],  # the same with its axis
        np.linspace(-1, 1, ROWS, dtype=np.float32)[:, None],  # a column
        "full",  # the other operand as large
    ],
    ids=["scalar", "row", "row-2d", "column", "full"],
)
def test_a_large_elementwise_op_split_over_the_threads_equals_numpys(data, other, intra_op_splits):
    """Each element is computed by the same ufunc as the whole call computes it: equal
    bits to numpy's, whatever the other operand broadcasts as; the op asked to split
    its rows (two threads)."""
    other = data[::-1].copy() if isinstance(other, str) else other
    counts = intra_op_splits
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, data.shape)
        y = tf.constant(other)
        outputs = [x * y, tf.maximum(x, y), x - y]
    config = tf.ConfigProto(intra_op_parallelism_threads=2)
    with tf.Session(graph=graph, config=config) as sess:
        got = sess.run(outputs, {x: data})
    assert counts.count(ROWS) == 3
    for value, want in zip(got, [data * other, np.maximum(data, other), data - other]):
        np.testing.assert_array_equal(value, want)


def test_a_fetched_output_takes_the_memory_its_stage_was_given(data):
    """``handing_off``: the kernel of a fetched output computes into the array the
    stage's memory gives (a worker's slab), and into its own where it gives none."""
    shape = TensorShape([ROWS // 10, COLS])
    kernel = large_outputs.large_output_kernel(
        "add", dtypes.float32, shape, np, np.add, fetched=True
    )
    given = np.empty((ROWS // 10, COLS), np.float32)
    x = data[: ROWS // 10]
    before = large_outputs.handing_off(lambda dims, dtype: given)
    try:
        out = kernel(x, np.float32(1.0))
        assert out is given
        np.testing.assert_array_equal(out, x + np.float32(1.0))
        large_outputs.handing_off(lambda dims, dtype: None)
        own = kernel(x, np.float32(2.0))
        assert own is not given
        np.testing.assert_array_equal(own, x + np.float32(2.0))
    finally:
        large_outputs.handing_off(before)
