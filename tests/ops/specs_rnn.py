"""The fused recurrent ops' rows of the op table (``tests/ops/op_table.py``).

``LSTMSequence`` has no TF1 op of the same name: TF1 gets the same numbers from
``BasicLSTMCell``'s per-step ops, so TF's side of each row builds those (gates ``i, j,
f, o``, ``forget_bias`` on ``f``), and the reference is the same loop in
``autograd.numpy``. Its gradient op has no gradient (as TF's ``BlockLSTMGrad``), so the
rows go to first order.
"""

from __future__ import annotations

from typing import Any

import autograd.numpy as anp
import numpy as np

import dataflow
from dataflow.ops.nn.rnn import lstm_sequence
from dataflow.testing.op_spec import OpSpec

RNG = np.random.default_rng(5)
STEPS, BATCH, DEPTH, UNITS = 4, 3, 2, 3
FORGET_BIAS = 0.5
ARGS = (
    RNG.standard_normal((STEPS, BATCH, DEPTH)),
    RNG.standard_normal((BATCH, UNITS)),
    RNG.standard_normal((BATCH, UNITS)),
    RNG.standard_normal((DEPTH + UNITS, 4 * UNITS)) * 0.7,
    RNG.standard_normal(4 * UNITS) * 0.3,
)


def _sigmoid(x: Any) -> Any:
    return 0.5 * (anp.tanh(0.5 * x) + 1.0)


def reference(x: Any, c: Any, h: Any, kernel: Any, bias: Any) -> Any:
    hs, cs, acts = [], [], []
    n = UNITS
    for t in range(x.shape[0]):
        g = anp.dot(anp.concatenate([x[t], h], 1), kernel) + bias
        i, j = _sigmoid(g[:, :n]), anp.tanh(g[:, n : 2 * n])
        f, o = _sigmoid(g[:, 2 * n : 3 * n] + FORGET_BIAS), _sigmoid(g[:, 3 * n :])
        c = c * f + i * j
        h = anp.tanh(c) * o
        hs, cs, acts = hs + [h], cs + [c], acts + [anp.concatenate([i, j, f, o], 1)]
    return anp.concatenate([anp.stack(hs), anp.stack(cs), anp.stack(acts)], 2)


def build(tf: Any, x: Any, c: Any, h: Any, kernel: Any, bias: Any) -> Any:
    """Every output side by side, the activated gates included (so their gradient
    flows too)."""
    if tf is dataflow:
        op = lstm_sequence(x, c, h, kernel, bias, FORGET_BIAS)[0].op
        return tf.concat(list(op.outputs), 2)
    hs, cs, acts = [], [], []
    for t in range(STEPS):
        gates = tf.nn.bias_add(tf.matmul(tf.concat([x[t], h], 1), kernel), bias)
        i, j, f, o = tf.split(gates, 4, axis=1)
        i, j, f, o = tf.sigmoid(i), tf.tanh(j), tf.sigmoid(f + FORGET_BIAS), tf.sigmoid(o)
        c = c * f + i * j
        h = tf.tanh(c) * o
        hs, cs, acts = hs + [h], cs + [c], acts + [tf.concat([i, j, f, o], 1)]
    return tf.concat([tf.stack(hs), tf.stack(cs), tf.stack(acts)], 2)


def build_states(tf: Any, *inputs: Any) -> Any:
    """The outputs ``dynamic_rnn`` uses (no gradient reaches the gates)."""
    if tf is dataflow:
        return tf.concat(list(lstm_sequence(*inputs, FORGET_BIAS)), 2)
    return build(tf, *inputs)[:, :, : 2 * UNITS]


def reference_states(*args: Any) -> Any:
    return reference(*args)[:, :, : 2 * UNITS]


ROWS = [
    OpSpec("lstm_sequence", build_states, reference_states, ARGS, grad=1),
    OpSpec("lstm_sequence_gates", build, reference, ARGS, grad=1),
    OpSpec(
        "lstm_sequence_float32",
        build_states,
        reference_states,
        tuple(a.astype(np.float32) for a in ARGS),
        grad=0,  # values only: float32 finite differences mean little
        rtol=1e-4,
        atol=1e-5,
        tf_rtol=1e-5,
        tf_atol=1e-6,
    ),
]
