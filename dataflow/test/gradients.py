"""``tf.test.compute_gradient`` and ``compute_gradient_error`` (TF1's
``gradient_checker``): the Jacobian of ``y`` with respect to ``x`` from the gradient
graph (one ``tf.gradients`` per output element, each seeded with a one-hot ``grad_ys``)
and by central differences, both ``[x size, y size]`` (real dtypes), in the default
session."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autodiff.gradients import gradients
from ..framework.graph import Tensor
from ..framework.scopes import name_scope
from ..ops.constant import placeholder
from ..runtime.session import get_default_session


def _jacobians(
    x: Tensor,
    x_shape: Any,
    y: Tensor,
    y_shape: Any,
    x_value: np.ndarray,
    delta: float,
    feeds: dict,
) -> tuple[np.ndarray, np.ndarray]:
    sess = get_default_session()
    if sess is None:
        raise ValueError("compute_gradient needs a default session (`with sess.as_default()`)")
    x_size, y_size = int(np.prod(x_shape)), int(np.prod(y_shape))
    x_dtype, y_dtype = x.dtype.as_numpy_dtype, y.dtype.as_numpy_dtype
    feeds = dict(feeds)
    # Theoretical: row-by-row over the outputs, one gradient graph fed a one-hot seed.
    with name_scope("gradient_check"):
        seed = placeholder(y.dtype, y_shape, name="grad_ys")
        dx = gradients(y, x, grad_ys=seed)[0]
    theoretical = np.zeros((x_size, y_size), dtype=x_dtype)
    if dx is not None:
        one_hot = np.zeros(y_size, dtype=y_dtype)
        for j in range(y_size):
            one_hot[:] = 0
            one_hot[j] = 1
            feeds[seed] = one_hot.reshape(y_shape)
            feeds[x] = x_value
            value = sess.run(dx, feeds)
            if hasattr(value, "indices"):  # IndexedSlices: densify
                dense = np.zeros(x_shape, x_dtype)
                np.add.at(dense, value.indices, value.values)
                value = dense
            theoretical[:, j] = np.asarray(value).reshape(-1)
    # Numerical: central differences, one input element at a time.
    numerical = np.zeros((x_size, y_size), dtype=y_dtype)
    flat = x_value.reshape(-1).copy()
    feeds.pop(seed, None)
    for i in range(x_size):
        saved = flat[i]
        flat[i] = saved + delta
        feeds[x] = flat.reshape(x_shape)
        plus = np.asarray(sess.run(y, feeds), dtype=np.float64)
        flat[i] = saved - delta
        feeds[x] = flat.reshape(x_shape)
        minus = np.asarray(sess.run(y, feeds), dtype=np.float64)
        flat[i] = saved
        numerical[i, :] = ((plus - minus) / (2 * delta)).reshape(-1)
    return theoretical, numerical


def compute_gradient(
    x: Any,
    x_shape: Any,
    y: Tensor,
    y_shape: Any,
    x_init_value: Any = None,
    delta: float = 1e-3,
    init_targets: Any = None,
    extra_feed_dict: dict | None = None,
) -> Any:
    """The theoretical and numerical Jacobians of ``y`` with respect to ``x``.

    Args:
        x: a tensor, or a list of them (each fed while its Jacobian is computed).
        x_shape: its shape (a list of shapes for a list ``x``).
        y: the output tensor; ``y_shape`` its shape.
        x_init_value: the point (an array or a list of arrays); default uniform
            random in [0, 1) (seeded, as TF1's checker).
        delta: the central-difference step.
        init_targets: ops run once first (e.g. variable initializers).
        extra_feed_dict: more feeds.

    Returns:
        ``(theoretical, numerical)``, each ``[x size, y size]``; a list of such pairs
        for a list ``x``.
    """
    sess = get_default_session()
    if init_targets is not None and sess is not None:
        sess.run(init_targets)
    feeds = dict(extra_feed_dict or {})
    if isinstance(x, (list, tuple)):
        values = x_init_value or [None] * len(x)
        points = [_point(t, s, v) for t, s, v in zip(x, x_shape, values)]
        out = []
        for i, (t, s) in enumerate(zip(x, x_shape)):
            others = {u: p for j, (u, p) in enumerate(zip(x, points)) if j != i}
            out.append(_jacobians(t, s, y, y_shape, points[i], delta, {**feeds, **others}))
        return out
    return _jacobians(x, x_shape, y, y_shape, _point(x, x_shape, x_init_value), delta, feeds)


def _point(x: Tensor, shape: Any, value: Any) -> np.ndarray:
    dtype = x.dtype.as_numpy_dtype
    if value is not None:
        value = np.asarray(value, dtype=dtype)
        if value.shape != tuple(shape):
            raise ValueError(f"x_init_value has shape {value.shape}, x_shape is {tuple(shape)}")
        return value
    return np.random.RandomState(0).random_sample(tuple(shape)).astype(dtype)


def compute_gradient_error(
    x: Any,
    x_shape: Any,
    y: Tensor,
    y_shape: Any,
    x_init_value: Any = None,
    delta: float = 1e-3,
    init_targets: Any = None,
    extra_feed_dict: dict | None = None,
) -> float:
    """The largest absolute difference between the theoretical and numerical
    Jacobians (over every ``x`` of a list)."""
    grads = compute_gradient(
        x, x_shape, y, y_shape, x_init_value, delta, init_targets, extra_feed_dict
    )
    pairs = grads if isinstance(grads, list) else [grads]
    error = 0.0
    for theoretical, numerical in pairs:
        if theoretical.size or numerical.size:
            error = max(error, float(np.fabs(theoretical - numerical).max()))
    return error
