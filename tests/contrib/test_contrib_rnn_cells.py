"""``tf.contrib.rnn.NASCell`` and ``LayerNormBasicLSTMCell`` against the same cells
written out in ``tensorflow.compat.v1``'s core ops (TF 2.21 has no contrib), following
TF 1.15's ``contrib/rnn/python/ops/rnn_cell.py``: outputs, final states, variable names
and shapes, and the variables after one SGD step, from TF's initial values."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow

from .test_contrib_rnn_seq2seq import SEQUENCES, STEPS, check

pytestmark = [
    pytest.mark.tf,
    pytest.mark.filterwarnings("ignore:.*is deprecated:UserWarning"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]

tf1 = pytest.importorskip("tensorflow").compat.v1

UNITS, PROJ = 4, 3


def nas_reference(tf, num_proj=None, use_biases=False):
    """TF 1.15's NASCell, unrolled over ``STEPS`` in core TF1 ops."""
    x = tf.constant(SEQUENCES)
    out = num_proj or UNITS
    with tf.variable_scope("rnn/nas_cell"):
        w_m = tf.get_variable("recurrent_kernel", [out, 8 * UNITS])
        w_x = tf.get_variable("kernel", [SEQUENCES.shape[2], 8 * UNITS])
        b = (
            tf.get_variable("bias", [8 * UNITS], initializer=tf.zeros_initializer())
            if (use_biases)
            else None
        )
        p = tf.get_variable("projection_weights", [UNITS, num_proj]) if num_proj else None
    c = tf.zeros([x.shape[0], UNITS])
    m = tf.zeros([x.shape[0], out])
    outputs = []
    for t in range(STEPS):
        mm = tf.matmul(m, w_m)
        if b is not None:
            mm = mm + b
        ms = tf.split(mm, 8, 1)
        xs = tf.split(tf.matmul(x[:, t], w_x), 8, 1)
        l0 = tf.sigmoid(xs[0] + ms[0])
        l1 = tf.nn.relu(xs[1] + ms[1])
        l2 = tf.sigmoid(xs[2] + ms[2])
        l3 = tf.nn.relu(xs[3] * ms[3])
        l4 = tf.tanh(xs[4] + ms[4])
        l5 = tf.sigmoid(xs[5] + ms[5])
        l6 = tf.tanh(xs[6] + ms[6])
        l7 = tf.sigmoid(xs[7] + ms[7])
        c = tf.tanh(tf.tanh(l0 * l1) + c) * tf.tanh(l2 + l3)
        m = tf.tanh(c * tf.tanh(tf.tanh(l4 * l5) + tf.sigmoid(l6 + l7)))
        if p is not None:
            m = tf.matmul(m, p)
        outputs.append(m)
    outputs = tf.stack(outputs, 1)
    return [outputs, c, m], tf.reduce_sum(tf.square(outputs)) + tf.reduce_sum(c)


def nas_contrib(tf, num_proj=None, use_biases=False):
    cell = tf.contrib.rnn.NASCell(UNITS, num_proj=num_proj, use_biases=use_biases)
    outputs, (c, m) = tf.nn.dynamic_rnn(cell, tf.constant(SEQUENCES), dtype=tf.float32)
    return [outputs, c, m], tf.reduce_sum(tf.square(outputs)) + tf.reduce_sum(c)


@pytest.mark.parametrize("num_proj, use_biases", [(None, False), (PROJ, True)])
def test_nas_cell(num_proj, use_biases):
    check(
        lambda tf: nas_contrib(tf, num_proj, use_biases),
        lambda tf: nas_reference(tf, num_proj, use_biases),
    )


def layer_norm(tf, x, scope, gain, shift):
    """contrib.layers.layer_norm over the last axis (epsilon 1e-12), with its own
    ``gamma``/``beta`` under ``scope``."""
    with tf.variable_scope(scope):
        gamma = tf.get_variable("gamma", [UNITS], initializer=tf.constant_initializer(gain))
        beta = tf.get_variable("beta", [UNITS], initializer=tf.constant_initializer(shift))
    mean, var = tf.nn.moments(x, [1], keep_dims=True)
    return (x - mean) * tf.rsqrt(var + 1e-12) * gamma + beta


def ln_reference(tf, layer_norm_on=True, gain=1.0, shift=0.0, forget_bias=1.0):
    x = tf.constant(SEQUENCES)
    c = tf.zeros([x.shape[0], UNITS])
    h = tf.zeros([x.shape[0], UNITS])
    outputs = []
    for t in range(STEPS):
        with tf.variable_scope("rnn/layer_norm_basic_lstm_cell", reuse=tf.AUTO_REUSE):
            args = tf.concat([x[:, t], h], 1)
            kernel = tf.get_variable("kernel", [args.shape[1], 4 * UNITS])
            gates = tf.matmul(args, kernel)
            if not layer_norm_on:
                gates = gates + tf.get_variable("bias", [4 * UNITS])
            i, j, f, o = tf.split(gates, 4, 1)
            if layer_norm_on:
                i, j = (
                    layer_norm(tf, i, "input", gain, shift),
                    layer_norm(tf, j, "transform", gain, shift),
                )
                f, o = (
                    layer_norm(tf, f, "forget", gain, shift),
                    layer_norm(tf, o, "output", gain, shift),
                )
            c = c * tf.sigmoid(f + forget_bias) + tf.sigmoid(i) * tf.tanh(j)
            if layer_norm_on:
                c = layer_norm(tf, c, "state", gain, shift)
            h = tf.tanh(c) * tf.sigmoid(o)
        outputs.append(h)
    outputs = tf.stack(outputs, 1)
    return [outputs, c, h], tf.reduce_sum(tf.square(outputs)) + tf.reduce_sum(c)


def ln_contrib(tf, layer_norm_on=True, gain=1.0, shift=0.0, forget_bias=1.0):
    cell = tf.contrib.rnn.LayerNormBasicLSTMCell(
        UNITS, forget_bias, layer_norm=layer_norm_on, norm_gain=gain, norm_shift=shift
    )
    outputs, (c, h) = tf.nn.dynamic_rnn(cell, tf.constant(SEQUENCES), dtype=tf.float32)
    return [outputs, c, h], tf.reduce_sum(tf.square(outputs)) + tf.reduce_sum(c)


@pytest.mark.parametrize(
    "args", [(True, 1.0, 0.0, 1.0), (True, 0.5, 0.2, 0.0), (False, 1.0, 0.0, 1.0)]
)
def test_layer_norm_basic_lstm_cell(args):
    check(lambda tf: ln_contrib(tf, *args), lambda tf: ln_reference(tf, *args), 1e-4, 1e-5)


def test_layer_norm_basic_lstm_cell_recurrent_dropout():
    """Keep probability 0.5: about half the candidate units are zeroed, the rest doubled;
    a keep probability of 1.0 adds no dropout op at all."""
    tf = dataflow
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        x = tf.constant(SEQUENCES)
        cell = tf.contrib.rnn.LayerNormBasicLSTMCell(64, dropout_keep_prob=0.5)
        out, _ = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            a, b = sess.run(out), sess.run(out)
    assert np.isfinite(a).all() and not np.allclose(a, b)


def test_cells_refuse_an_unknown_input_depth():
    tf = dataflow
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, None])
        cell = tf.contrib.rnn.NASCell(UNITS)
        with pytest.raises(ValueError, match="Could not infer input size"):
            cell(x, cell.zero_state(2, tf.float32))
