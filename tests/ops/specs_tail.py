"""Rows of the op table for the long tail of TF1's top-level array names
(``ops/array/stitch.py``, ``sets.py``, ``shape_checks.py``, ``reinterpret.py``,
``batch_space.py``). ``tests/ops/array/test_tail_tf.py`` adds what a row cannot say:
placeholders of unknown size, dynamic crops, error classes."""

from __future__ import annotations

import autograd.numpy as anp
import numpy as np

from dataflow.testing.op_spec import OpSpec, call, squared

RNG = np.random.default_rng(3202)


def rand(*shape):
    return RNG.standard_normal(shape)


def _stitch_ref(a, b):
    # indices [[3, 0], [1, 4, 2]] (a repeated index, whose overwritten rows TF still
    # sends gradients to, is checked against TF in tests/ops/array/test_tail_tf.py)
    return anp.stack([a[1], b[0], b[2], a[0], b[1]])


def _space_to_batch_ref(x):
    padded = anp.concatenate([anp.zeros((1, 1, 4, 2)), x], axis=1)  # [1, 4, 4, 2]
    blocks = anp.reshape(padded, (1, 2, 2, 2, 2, 2))
    return anp.reshape(anp.transpose(blocks, (2, 4, 0, 1, 3, 5)), (4, 2, 2, 2))


def _batch_to_space_ref(x):
    blocks = anp.reshape(x, (2, 2, 1, 2, 2, 2))
    joined = anp.reshape(anp.transpose(blocks, (2, 3, 0, 4, 1, 5)), (1, 4, 4, 2))
    return joined[:, 1:, :3]


def _batch_gather_ref(p):
    idx = np.array([[2, 0], [1, 1]])
    return anp.stack([p[0][idx[0]], p[1][idx[1]]])


def _searchsorted_ref(side):
    def ref(seq, vals):
        rows = [np.searchsorted(s, v, side=side) for s, v in zip(seq, vals, strict=True)]
        return np.array(rows, np.int32)

    return ref


SEQ = np.sort(RNG.integers(0, 6, (2, 6)), axis=1).astype(np.float32)
VALS = RNG.integers(-1, 8, (2, 4)).astype(np.float32)

ROWS = [
    OpSpec(
        "dynamic_stitch",
        *squared(
            lambda tf, a, b: tf.dynamic_stitch([[3, 0], [1, 4, 2]], [a, b]),
            _stitch_ref,
        ),
        [rand(2, 3), rand(3, 3)],
    ),
    OpSpec(
        "parallel_dynamic_stitch",
        *squared(
            lambda tf, a, b: tf.parallel_dynamic_stitch([[3, 0], [1, 4, 2]], [a, b]),
            _stitch_ref,
        ),
        [rand(2, 3), rand(3, 3)],
        tf_parity=False,  # TF 2's parallel kernel leaves a repeated index's winner open
    ),
    OpSpec(
        "setdiff1d",
        lambda tf, x, y: list(tf.setdiff1d(x, y)),
        lambda x, y: [x[~np.isin(x, y)], np.flatnonzero(~np.isin(x, y)).astype(np.int32)],
        [np.array([4, 1, 2, 4, 7, 1], np.int32), np.array([1, 9], np.int32)],
        grad=0,
    ),
    OpSpec(
        "searchsorted_left",
        call("searchsorted"),
        _searchsorted_ref("left"),
        [SEQ, VALS],
        grad=0,
    ),
    OpSpec(
        "searchsorted_right",
        call("searchsorted", side="right"),
        _searchsorted_ref("right"),
        [SEQ, VALS],
        grad=0,
    ),
    OpSpec(
        "ensure_shape",
        *squared(call("ensure_shape", [2, None]), lambda x: x),
        [rand(2, 3)],
    ),
    OpSpec(
        "broadcast_dynamic_shape",
        call("broadcast_dynamic_shape"),
        lambda a, b: np.array(np.broadcast_shapes(tuple(a), tuple(b)), np.int32),
        [np.array([2, 1, 3], np.int32), np.array([4, 1], np.int32)],
        grad=0,
    ),
    OpSpec(
        "bitcast_narrow",
        call("bitcast", np.uint8),
        lambda x: x.view(np.uint8).reshape(*x.shape, 4),
        [rand(2, 3).astype(np.float32)],
        grad=0,
    ),
    OpSpec(
        "bitcast_wide",
        call("bitcast", np.int64),
        lambda x: x.view(np.int64).reshape(x.shape[:-1]),
        [RNG.integers(-9, 9, (3, 2)).astype(np.int32)],
        grad=0,
    ),
    OpSpec(
        "saturate_cast",
        lambda tf, x: tf.saturate_cast(x * 100.0, tf.int16),
        lambda x: np.clip(x * 100.0, -32768, 32767).astype(np.int16),
        [rand(3, 4) * 500.0],
        grad=0,
    ),
    OpSpec(
        "space_to_batch_nd",
        *squared(call("space_to_batch_nd", [2, 2], [[1, 0], [0, 0]]), _space_to_batch_ref),
        [rand(1, 3, 4, 2)],
    ),
    OpSpec(
        "batch_to_space_nd",
        *squared(call("batch_to_space_nd", [2, 2], [[1, 0], [0, 1]]), _batch_to_space_ref),
        [rand(4, 2, 2, 2)],
    ),
    OpSpec(
        "repeat",
        *squared(call("repeat", [2, 0, 3], axis=1), lambda x: x[:, [0, 0, 2, 2, 2]]),
        [rand(2, 3)],
    ),
    OpSpec(
        "batch_gather",
        *squared(lambda tf, p: tf.batch_gather(p, [[2, 0], [1, 1]]), _batch_gather_ref),
        [rand(2, 3, 2)],
    ),
]
