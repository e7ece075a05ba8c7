"""Optimizer updates of variables in GPU memory write into the variables' buffers.

With the stand-in cupy (``dataflow.testing.fake_cupy``, fixtures in ``conftest.py``):
``ResourceStore.update_in_place`` writes a device array in place when nothing but the
store holds it, as it does numpy arrays, so a variable and its slots keep one device
buffer (same object, same address) step after step under GradientDescent, Momentum and
Adam; the values equal the CPU run's. Copy-on-write holds too: a device value someone
still holds (a value read in the same step, a reference kept outside) is left as it
was, and the update goes into a new buffer, as TF1's read values promise.
``assign_add`` and ``scatter_add`` go through the same path.
"""

from __future__ import annotations

import types
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import dataflow as tf
from dataflow.testing.fake_cupy import DeviceArray

GPU0 = "/job:localhost/replica:0/task:0/device:GPU:0"

OPTIMIZERS: dict[str, Callable[[], Any]] = {
    "gradient_descent": lambda: tf.train.GradientDescentOptimizer(0.1),
    "momentum": lambda: tf.train.MomentumOptimizer(0.1, 0.9),
    "nesterov": lambda: tf.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True),
    "adam": lambda: tf.train.AdamOptimizer(0.05),
}


def _address(array: Any) -> int:
    """The address of an array's first element (cupy's ``data.ptr``)."""
    return int(np.ndarray.view(array, np.ndarray).__array_interface__["data"][0])


def _model(optimizer: Any) -> tuple[Any, Any, Any, Any]:
    """(x, w, loss, train): a linear least-squares model with a [3, 2] weight."""
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    w = tf.Variable(np.linspace(-1, 1, 6, dtype=np.float32).reshape(3, 2), name="w")
    target = tf.constant(np.arange(8, dtype=np.float32).reshape(4, 2))
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - target))
    return x, w, loss, optimizer.minimize(loss)


_FEED = np.random.default_rng(3).standard_normal((4, 3)).astype(np.float32)


def _losses(make_optimizer: Callable[[], Any], config: Any, steps: int = 4) -> list[float]:
    tf.reset_default_graph()
    x, _, loss, train = _model(make_optimizer())
    with tf.Session(config=config) as sess:
        sess.run(tf.global_variables_initializer())
        return [float(sess.run([loss, train], {x: _FEED})[0]) for _ in range(steps)]


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_updates_keep_each_device_buffer(one_gpu: types.ModuleType, name: str) -> None:
    x, w, loss, train = _model(OPTIMIZERS[name]())
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train, {x: _FEED})  # compiles; the first update may replace buffers
        store = sess.backend.resource_store(GPU0)
        # The variable and its slots (Adam's m and v, the momentum accumulator); the
        # beta powers are scalars that Adam assigns, as TF1's does.
        names = [n for n in store.names() if n.startswith("w")]
        assert len(names) == {"gradient_descent": 1, "adam": 3}.get(name, 2)
        buffers = {n: store.read(n) for n in names}
        assert {type(b) for b in buffers.values()} == {DeviceArray}
        where = {n: _address(b) for n, b in buffers.items()}
        # Weak references: a buffer held here would be replaced (next test), and a
        # replaced buffer freed could leave its address (and id) to its successor.
        refs = {n: weakref.ref(b) for n, b in buffers.items()}
        del buffers
        values = []
        for _ in range(3):
            before = sess.run(w)  # a copy in host memory: the update leaves it be
            kept = before.copy()
            sess.run(train, {x: _FEED})
            np.testing.assert_array_equal(before, kept)
            values.append(sess.run(w))
            assert all(refs[n]() is store.read(n) for n in names)
            assert {n: _address(store.read(n)) for n in names} == where
        assert not np.array_equal(values[0], values[-1])  # it did train
    # The same values as on the CPU (where the same kernels run on numpy).
    on_gpu = _losses(OPTIMIZERS[name], tf.ConfigProto())
    on_cpu = _losses(OPTIMIZERS[name], tf.ConfigProto(device_count={"GPU": 0}))
    np.testing.assert_allclose(on_gpu, on_cpu, rtol=1e-6)


def test_a_held_device_value_is_not_written(one_gpu: types.ModuleType) -> None:
    x, w, _, train = _model(tf.train.GradientDescentOptimizer(0.1))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train, {x: _FEED})
        store = sess.backend.resource_store(GPU0)
        held = store.read("w")  # as a stage still reading it would hold it
        kept = np.array(np.ndarray.view(held, np.ndarray))
        sess.run(train, {x: _FEED})
        np.testing.assert_array_equal(np.ndarray.view(held, np.ndarray), kept)
        replacement = store.read("w")
        assert replacement is not held and _address(replacement) != _address(held)
        del held, replacement
        # Nobody holds the new buffer now: the next update writes into it.
        ref = weakref.ref(store.read("w"))
        sess.run(train, {x: _FEED})
        assert ref() is store.read("w")


def test_a_device_view_of_the_variable_is_not_written(one_gpu: types.ModuleType) -> None:
    # A view holds its base (cupy's base; the stand-in's answers the same), so the
    # variable's buffer counts as shared while the view lives.
    x, w, _, train = _model(tf.train.MomentumOptimizer(0.1, 0.9))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train, {x: _FEED})
        store = sess.backend.resource_store(GPU0)
        view = store.read("w").reshape(-1)
        kept = np.array(np.ndarray.view(view, np.ndarray))
        sess.run(train, {x: _FEED})
        np.testing.assert_array_equal(np.ndarray.view(view, np.ndarray), kept)
        assert not np.array_equal(sess.run(w).reshape(-1), kept)


def test_a_value_read_in_the_same_step_keeps_the_old_value(one_gpu: types.ModuleType) -> None:
    # TF1: a read ordered before the update sees the value before it, even when the read
    # is fetched only after the update has run (the read holds the old buffer).
    x, w, loss, _ = _model(tf.train.GradientDescentOptimizer(0.1))
    read = tf.identity(w.read_value(), name="read")
    with tf.control_dependencies([read]):
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            before = sess.run(w)
            seen, _ = sess.run([read, train], {x: _FEED})
            np.testing.assert_array_equal(seen, before)
            assert not np.array_equal(sess.run(w), before)


def test_assign_add_and_scatter_add_write_in_place(one_gpu: types.ModuleType) -> None:
    v = tf.Variable(np.zeros((4, 2), np.float32), name="v")
    add = tf.assign_add(v, tf.ones([4, 2]))
    scatter = tf.scatter_add(v, tf.constant([1, 3]), tf.fill([2, 2], 10.0))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run([add.op, scatter.op])
        store = sess.backend.resource_store(GPU0)
        ref = weakref.ref(store.read("v"))
        address = _address(store.read("v"))
        for _ in range(2):
            sess.run(add.op)
            sess.run(scatter.op)
        assert ref() is store.read("v") and _address(store.read("v")) == address
        want = np.ones((4, 2), np.float32) * 3
        want[[1, 3]] += 30
        np.testing.assert_array_equal(sess.run(v), want)
