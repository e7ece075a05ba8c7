"""Persistent session tensors on a real cluster: the value stays in the store of the
worker that computed it, a later run reads it there by its handle, and closing the
session releases it."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow as tf

pytestmark = pytest.mark.distributed


def test_a_handle_names_a_value_kept_on_its_worker(clean_cluster):
    with tf.device("/job:worker/task:1"):
        x = tf.placeholder(tf.float32, [3])
        keep = tf.get_session_handle(tf.square(x))
    with tf.Session(clean_cluster, config=tf.ConfigProto(debug=True)) as sess:
        handle = sess.run(keep, {x: [1.0, 2.0, 3.0]})
        assert "/job:worker/replica:0/task:1/" in handle.handle
        holder, kept = tf.get_session_tensor(handle.handle, tf.float32)
        total = tf.reduce_sum(kept) * 2.0
        assert sess.placement([kept])[kept.op.name].startswith("/job:worker/replica:0/task:1")
        np.testing.assert_allclose(sess.run(total, {holder: handle.handle}), 28.0)
        np.testing.assert_allclose(handle.eval(), [1.0, 4.0, 9.0])
        handle.delete()
        with pytest.raises(tf.errors.InvalidArgumentError):
            handle.eval()
    with tf.Session(clean_cluster) as other, pytest.raises(tf.errors.InvalidArgumentError):
        other.run(kept, {holder: handle.handle})
