"""Small TF1 programs run unchanged through ``dataflow`` and ``tensorflow.compat.v1``.

Each program is a function of the module ``tf`` returning (fetches, feeds builder); both
libraries build it in a fresh graph and run it in a session, and the outputs must agree
(float32 within 1e-5 relative, as API.md promises).
"""

from __future__ import annotations

import numpy as np
import pytest

import dataflow

tf1 = pytest.importorskip("tensorflow.compat.v1")
tf1.disable_eager_execution()
pytestmark = pytest.mark.tf

RNG = np.random.default_rng(42)
X = RNG.standard_normal((4, 3)).astype(np.float32)
W = RNG.standard_normal((3, 2)).astype(np.float32)


def seed_expression(tf):
    b = tf.constant(1.0)
    c = tf.constant(2.0)
    d = b + c
    e = c + 2
    return [d * e, d, e], {}


def relu_layer_with_feed(tf):
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    w = tf.Variable(W, name="w")
    b = tf.Variable(tf.zeros([2]), name="b")
    out = tf.nn.relu(tf.matmul(x, w) + b)
    return [out, tf.reduce_sum(out, axis=1), tf.reduce_mean(out)], {x: X}


def names_and_scopes(tf):
    with tf.name_scope("layer"):
        a = tf.constant(1.0, name="a")
        b = tf.add(a, 2.0)
    with tf.variable_scope("vars"):
        v = tf.get_variable("v", shape=[2], initializer=tf.zeros_initializer())
    c = tf.constant(3.0, name="a")
    names = [a.op.name, b.op.name, v.op.name, c.op.name]
    return [tf.constant(" ".join(names))], {}


def slicing_and_shapes(tf):
    x = tf.placeholder(tf.float32, [4, 3])
    parts = [
        x[1:3],
        x[:, ::-1],
        x[-1],
        x[..., 0],
        x[:, tf.newaxis, 1],
        tf.reshape(x, [-1]),
        tf.transpose(x),
        tf.concat([x, x], axis=1),
        tf.stack([x, x]),
        tf.gather(x, [3, 0]),
        tf.tile(x, [2, 1]),
        tf.pad(x, [[1, 0], [0, 2]]),
    ]
    return parts, {x: X}


def gradients_of_small_mlp(tf):
    x = tf.placeholder(tf.float32, [None, 3])
    w1 = tf.Variable(W, name="w1")
    w2 = tf.Variable(np.ones((2, 1), np.float32), name="w2")
    hidden = tf.tanh(tf.matmul(x, w1))
    loss = tf.reduce_mean(tf.square(tf.matmul(hidden, w2) - 1.0))
    grads = tf.gradients(loss, [w1, w2])
    return [loss] + grads, {x: X}


def softmax_cross_entropy(tf):
    logits = tf.constant(X)
    labels = tf.one_hot([0, 2, 1, 0], 3)
    return [
        tf.nn.softmax(logits),
        tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits),
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[0, 2, 1, 0], logits=logits),
        tf.argmax(logits, axis=1),
    ], {}


def control_flow(tf):
    x = tf.placeholder(tf.float32, [])
    y = tf.cond(x > 0, lambda: x * 2.0, lambda: -x)
    i, total = tf.while_loop(
        lambda i, t: i < 5, lambda i, t: (i + 1, t + x), [tf.constant(0), tf.constant(0.0)]
    )
    return [y, i, total, tf.gradients(total, x)[0]], {x: 1.5}


def variables_and_assignments(tf):
    v = tf.Variable([1.0, 2.0], name="v")
    counter = tf.Variable(0, name="counter")
    inc = tf.assign_add(counter, 1)
    with tf.control_dependencies([inc]):
        doubled = tf.assign(v, v * 2.0)
    # (A plain read of `counter` beside the update would be unordered in TF1 too.)
    return [doubled, inc], {}


def optimizer_steps(tf):
    x = tf.constant(X)
    w = tf.Variable(W, name="w")
    loss = tf.reduce_sum(tf.square(tf.matmul(x, w)))
    step = tf.train.AdamOptimizer(0.1).minimize(loss)
    with tf.control_dependencies([step]):
        after = tf.identity(loss)
    return [after], {}


PROGRAMS = [
    seed_expression,
    relu_layer_with_feed,
    names_and_scopes,
    slicing_and_shapes,
    gradients_of_small_mlp,
    softmax_cross_entropy,
    control_flow,
    variables_and_assignments,
    optimizer_steps,
]


def _run(module, program, steps=1):
    graph = module.Graph()
    with graph.as_default():
        fetches, feeds = program(module)
        init = module.global_variables_initializer()
        with module.Session(graph=graph) as sess:
            sess.run(init)
            return [sess.run(fetches, feeds) for _ in range(steps)]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_program_matches_tf1(program):
    ours = _run(dataflow, program, steps=3)
    theirs = _run(tf1, program, steps=3)
    for step, (a_all, b_all) in enumerate(zip(ours, theirs)):
        for i, (a, b) in enumerate(zip(a_all, b_all)):
            a, b = np.asarray(a), np.asarray(b)
            assert a.shape == b.shape, f"step {step}, output {i}: {a.shape} vs {b.shape}"
            if a.dtype.kind in "fc":
                np.testing.assert_allclose(
                    a, b, rtol=1e-5, atol=1e-6, err_msg=f"step {step}, output {i}"
                )
            else:
                assert a.tolist() == b.tolist(), f"step {step}, output {i}"
