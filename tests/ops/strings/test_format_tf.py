"""``tf.strings.format`` against ``tensorflow.compat.v1``: scalars, vectors, matrices and
rank 3, floats of both widths, integers, booleans and strings, ``summarize`` (cut, wide,
every entry), a custom placeholder, and the error for a placeholder count mismatch."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow

pytestmark = pytest.mark.tf


def _program(tf):
    c = tf.constant
    grid = np.arange(100).reshape(10, 10)
    return [
        tf.strings.format("{}|{}|{}|{}", [c(1.5), c(1 / 3), c(1e-7), c(1e10, tf.float64)]),
        tf.strings.format("{} and {}", [c(1 / 3, tf.float64), c(-7, tf.int64)]),
        tf.strings.format("a {} b {}", [c([1, 2, 3]), c([[1, 2], [3, 4]])]),
        tf.strings.format("{}", [c(np.arange(10))]),
        tf.strings.format("{}", [c(np.arange(7))]),
        tf.strings.format("{}", [c(np.arange(6))]),
        tf.strings.format("{}", [c(np.arange(40).reshape(5, 8))]),
        tf.strings.format("{}{}{}", [c(["ab", "c"]), c("x"), c([True, False])]),
        tf.strings.format("{}", c(np.arange(24).reshape(2, 3, 4))),
        tf.strings.format("{}", [c(np.arange(48).reshape(4, 3, 4))], summarize=1),
        tf.strings.format("{}", [c([-1.25, 2.0, np.nan, np.inf, -np.inf])]),
        tf.strings.format("{}", [c(np.arange(12).reshape(3, 4) * 1.5)]),
        tf.strings.format("{}", [c(np.zeros((0, 3)))]),
        tf.strings.format("x{}y", [c(np.uint8(200))]),
        tf.strings.format("{}", [c(np.arange(10))], summarize=2),
        tf.strings.format("{}", [c(np.arange(10))], summarize=-1),
        tf.strings.format("<> {}", [c(np.arange(4))], placeholder="<>"),
        tf.strings.format("{}", [c(grid)], summarize=1),
        tf.strings.format("no placeholders", []),
    ]


def test_matches_tf1() -> None:
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    with tf1.Graph().as_default(), tf1.Session() as sess:
        expected = sess.run(_program(tf1))
    with dataflow.Graph().as_default():
        outs = _program(dataflow)
        assert all(o.dtype == dataflow.string and o.shape.as_list() == [] for o in outs)
        with dataflow.Session() as sess:
            got = sess.run(outs)
    assert got == expected


def test_placeholder_count_must_match() -> None:
    with dataflow.Graph().as_default():
        with pytest.raises(ValueError):
            dataflow.strings.format("{} {}", [dataflow.constant(1)])
