"""``tf.nn.max_pool_with_argmax`` against ``tensorflow.compat.v1``: pooled values, flat
indices (with and without the batch), dtypes, static shapes, gradients (first and
second order) and build-time errors."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow
from dataflow.testing.tf_parity import assert_parity_on_constants

pytestmark = [
    pytest.mark.tf,
    pytest.mark.filterwarnings("ignore::UserWarning"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]
tf1 = pytest.importorskip("tensorflow.compat.v1")

rng = np.random.default_rng(13)


@pytest.mark.parametrize(
    "k,s,padding,batch,dtype",
    [
        ([1, 2, 2, 1], [1, 2, 2, 1], "VALID", False, None),
        ([1, 3, 3, 1], [1, 2, 2, 1], "SAME", True, None),
        ([1, 3, 3, 1], [1, 1, 1, 1], "SAME", False, "int32"),
        ([1, 2, 3, 1], [1, 2, 1, 1], "VALID", True, "int32"),
    ],
)
def test_values_indices_and_gradients(k, s, padding, batch, dtype):
    def program(tf, x, w):
        y, idx = tf.nn.max_pool_with_argmax(
            x,
            k,
            s,
            padding,
            include_batch_in_index=batch,
            output_dtype=None if dtype is None else getattr(tf, dtype),
        )
        assert idx.dtype == (tf.int64 if dtype is None else getattr(tf, dtype))
        if dtype is not None:  # TF's CPU gradient kernel takes int64 indices only
            return [y, idx]
        gx = tf.gradients(tf.reduce_sum(y * y * w), x)[0]
        return [y, idx, gx]

    x = rng.standard_normal((2, 5, 6, 3)).astype(np.float32)
    with tf1.Graph().as_default():
        shape = tf1.nn.max_pool_with_argmax(x, k, s, padding)[0].shape.as_list()
    w = rng.standard_normal(shape).astype(np.float32)
    assert_parity_on_constants(tf1, program, x, w, rtol=1e-5, atol=1e-5)


def test_static_shapes():
    shapes = {}
    for tf in (tf1, dataflow):
        with tf.Graph().as_default():
            x = tf.placeholder(tf.float32, [None, 7, 6, 2])
            y, idx = tf.nn.max_pool_with_argmax(x, [1, 3, 3, 1], [1, 2, 2, 1], "SAME")
            shapes[tf is tf1] = (y.shape.as_list(), idx.shape.as_list())
    assert shapes[True] == shapes[False]


def test_errors():
    with dataflow.Graph().as_default():
        x = dataflow.zeros([1, 4, 4, 1])
        with pytest.raises(ValueError):
            dataflow.nn.max_pool_with_argmax(x, 2, 2, "SAME", data_format="NCHW")
        with pytest.raises(ValueError):
            dataflow.nn.max_pool_with_argmax(x, 2, 2, "FULL")
        with pytest.raises(ValueError):
            dataflow.nn.max_pool_with_argmax(x, 5, 1, "VALID")


@pytest.mark.parametrize("batch", [False, True])
def test_second_order_gathers_at_the_maxima(batch):
    # TF has no gradient for MaxPoolGradWithArgmax; here d/dw sum(dx * x), with
    # dx = MaxPoolGradWithArgmax(2 * y * w), is 2 * y * x[argmax] = 2 * y**2.
    x0 = rng.standard_normal((2, 5, 4, 3))
    with dataflow.Graph().as_default():
        x = dataflow.constant(x0)
        y, _ = dataflow.nn.max_pool_with_argmax(x, 2, 2, "SAME", include_batch_in_index=batch)
        w = dataflow.ones_like(y)
        gx = dataflow.gradients(dataflow.reduce_sum(y * y * w), x)[0]
        gw = dataflow.gradients(dataflow.reduce_sum(gx * x), w)[0]
        with dataflow.Session() as sess:
            got_y, got_gw = sess.run([y, gw])
    np.testing.assert_allclose(got_gw, 2 * got_y**2, rtol=1e-12)
