"""Persistent session tensors against ``tensorflow.compat.v1``: a handle fetched in one
run names a value kept in the session, fed back by its string or the ``TensorHandle``
itself in later runs, read with ``eval()`` and dropped with ``delete()`` /
``delete_session_tensor``; also on a cluster, where the value stays on its worker."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow as tf

A = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)


def _program(module):
    out = []
    with module.Graph().as_default():
        x = module.placeholder(module.float32, [2, 2])
        product = module.matmul(x, x)
        keep = module.get_session_handle(product)
        keep_int = module.get_session_handle(module.constant([7, 8], module.int64))
        with module.Session() as sess:
            handle, handle_int = sess.run([keep, keep_int], {x: A})
            out.append(type(handle).__name__)
            holder, kept = module.get_session_tensor(handle.handle, module.float32)
            again = module.matmul(kept, kept) + 1.0
            out.append(sess.run(again, {holder: handle.handle}))
            out.append(handle.eval())
            out.append(handle_int.eval())
            # A handle of a value computed from a kept one, in a third run.
            second = sess.run(module.get_session_handle(again), {holder: handle.handle})
            out.append(second.eval())
            handle.delete()
            try:
                sess.run(kept, {holder: handle.handle})
                out.append(None)
            except module.errors.OpError as exc:
                out.append(type(exc).__name__)
            deleter_holder, deleter = module.delete_session_tensor(second.handle)
            sess.run(deleter, {deleter_holder: second.handle})
            try:
                second.eval()
                out.append(None)
            except module.errors.OpError as exc:
                out.append(type(exc).__name__)
            out.append(kept.dtype.name)
        with pytest.raises(TypeError):
            module.get_session_handle(A)
    return out


@pytest.fixture(scope="module")
def reference():
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    tf1.disable_eager_execution()
    return _program(tf1)


def test_session_handles_across_runs_match_tf(reference):
    ours = _program(tf)
    assert len(ours) == len(reference)
    for got, want in zip(ours, reference):
        if isinstance(want, np.ndarray):
            assert np.asarray(got).dtype == want.dtype
            np.testing.assert_allclose(got, want, rtol=1e-6)
        else:
            assert got == want


def test_a_handle_belongs_to_its_session():
    with tf.Graph().as_default():
        keep = tf.get_session_handle(tf.constant(3.0))
        with tf.Session() as first:
            handle = first.run(keep)
            holder, kept = tf.get_session_tensor(handle.handle, tf.float32)
            assert first.run(kept, {holder: handle.handle}) == 3.0
            assert first.run(kept, {holder: handle}) == 3.0  # feeds its handle string
            with tf.Session() as second, pytest.raises(tf.errors.InvalidArgumentError):
                second.run(kept, {holder: handle.handle})
