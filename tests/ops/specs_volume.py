"""The 3-D window rows of the op table (``tests/ops/op_table.py``): ``conv3d``,
``max_pool3d``, ``avg_pool3d`` (their gradient ops and, squared so that second order
reaches them, the gradients' gradients), and ``max_pool_with_argmax``. References are
``autograd.numpy`` sums over window offsets, VALID padding; inputs of the max pools
have no ties."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import autograd.numpy as anp
import numpy as np

from dataflow.testing.op_spec import OpSpec

RNG = np.random.default_rng(21)


def _views(x, k: tuple, s: tuple):
    """Per window offset, the strided VALID view of the NDHWC ``x`` it reads."""
    outs = [(n - kk) // ss + 1 for n, kk, ss in zip(x.shape[1:4], k, s)]
    for offset in itertools.product(*(range(kk) for kk in k)):
        where = tuple(slice(o, o + ss * (m - 1) + 1, ss) for o, ss, m in zip(offset, s, outs))
        yield offset, x[(slice(None), *where, slice(None))]


def ref_conv3d(s: tuple) -> Callable:
    def conv(x, w):
        return sum(anp.einsum("ndhwc,co->ndhwo", v, w[o]) for o, v in _views(x, w.shape[:3], s))

    return conv


def ref_pool3d(k: tuple, s: tuple, kind: str) -> Callable:
    def pool(x):
        views = anp.stack([v for _, v in _views(x, k, s)])
        y = anp.max(views, axis=0) if kind == "max" else anp.mean(views, axis=0)
        return y * y

    return pool


def _distinct(*shape: int) -> np.ndarray:
    return RNG.permutation(np.prod(shape)).reshape(shape) / 11.0 + RNG.uniform(0, 0.01, shape)


def _ref_max_pool2d(x):
    views = [x[:, i::2, j::2, :][:, :2, :2, :] for i in range(2) for j in range(2)]
    y = anp.max(anp.stack(views), axis=0)
    return y * y


ROWS = [
    OpSpec(
        "conv3d_valid_strided",
        lambda tf, x, w: tf.nn.conv3d(x, w, [1, 2, 1, 1, 1], "VALID"),
        ref_conv3d((2, 1, 1)),
        (RNG.standard_normal((2, 5, 4, 3, 2)), RNG.standard_normal((2, 2, 2, 2, 3))),
        rtol=1e-5,
        atol=1e-7,
    ),
    OpSpec(
        "max_pool3d_squared",
        lambda tf, x: tf.square(tf.nn.max_pool3d(x, [1, 2, 2, 1, 1], [1, 2, 1, 1, 1], "VALID")),
        ref_pool3d((2, 2, 1), (2, 1, 1), "max"),
        (_distinct(2, 4, 3, 3, 2),),
        tf_parity=False,  # TF's CPU 3-D pools take float32 only: tests/ops/nn/test_volume_tf.py
    ),
    OpSpec(
        "avg_pool3d_squared",
        lambda tf, x: tf.square(tf.nn.avg_pool3d(x, [1, 2, 1, 2, 1], [1, 1, 1, 2, 1], "VALID")),
        ref_pool3d((2, 1, 2), (1, 1, 2), "avg"),
        (RNG.standard_normal((1, 3, 2, 4, 2)),),
        tf_parity=False,  # TF's CPU 3-D pools take float32 only: tests/ops/nn/test_volume_tf.py
    ),
    OpSpec(  # TF has no gradient of MaxPoolGradWithArgmax: first order here
        "max_pool_with_argmax_squared",
        lambda tf, x: tf.square(
            tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")[0]
        ),
        _ref_max_pool2d,
        (_distinct(2, 4, 4, 3),),
        grad=1,
    ),
]
