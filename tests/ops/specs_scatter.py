"""The scatter family's rows of the op table (``tests/ops/op_table.py``):
``tensor_scatter_nd_update``/``add``/``sub``/``max``/``min``.

The references write ``updates`` with a fixed 0/1 placement matrix, so autograd
differentiates them; differentiable rows square the output (``squared``) so the second
order goes through the gradient ops themselves.
"""

from __future__ import annotations

import autograd.numpy as anp
import numpy as np

from dataflow.testing.op_spec import OpSpec, squared

RNG = np.random.default_rng(32)
INDICES = np.array([[1, 0], [0, 2], [1, 1]])  # distinct slices of a [2, 3, 2] tensor
# PLACE[r, n] = 1 when row r of the tensor, flattened to [6, 2], is slice n of INDICES.
PLACE = np.zeros((6, 3))
PLACE[INDICES[:, 0] * 3 + INDICES[:, 1], np.arange(3)] = 1.0
WRITTEN = PLACE.sum(axis=1, keepdims=True) > 0


def reference(combine):
    def ref(t, u):
        rows = anp.reshape(t, (6, 2))
        placed = anp.dot(PLACE, u)
        return anp.reshape(anp.where(WRITTEN, combine(rows, placed), rows), (2, 3, 2))

    return ref


def with_indices_last(name):
    """``tf.<name>(tensor, INDICES, updates)`` with the inputs ``(tensor, updates)``."""

    def build(tf, t, u):
        return getattr(tf, name)(t, INDICES, u)

    return build


ROWS = [
    OpSpec(
        name,
        *squared(with_indices_last(name), reference(combine)),
        (RNG.standard_normal((2, 3, 2)), RNG.standard_normal((3, 2))),
    )
    for name, combine in (
        ("tensor_scatter_nd_update", lambda rows, placed: placed),
        ("tensor_scatter_nd_add", lambda rows, placed: rows + placed),
        ("tensor_scatter_nd_sub", lambda rows, placed: rows - placed),
        ("tensor_scatter_nd_max", anp.maximum),
        ("tensor_scatter_nd_min", anp.minimum),
    )
] + [
    OpSpec(
        "tensor_scatter_nd_add_duplicates_int",
        lambda tf: tf.tensor_scatter_nd_add(tf.zeros([4], tf.int32), [[0], [2], [0]], [1, 2, 3]),
        lambda: np.array([4, 0, 2, 0], np.int32),
        (),
        grad=0,
    ),
    OpSpec(
        "tensor_scatter_nd_update_rows",
        lambda tf, t, u: tf.tensor_scatter_nd_update(t, [[2], [0]], u),
        lambda t, u: anp.stack([u[1], t[1], u[0], t[3]]),
        (RNG.standard_normal((4, 3)), RNG.standard_normal((2, 3))),
    ),
]
