"""The control-flow and debugging rows of the op table (``tests/ops/op_table.py``):
``cond``, ``case``, ``while_loop`` (with their gradients), ``Print``, assertions,
``check_numerics``, ``py_func``, ``eye`` and a broadcast whose sizes are known only at
run time.

References use Python control flow on the values, which ``autograd`` follows.
"""

from __future__ import annotations

import autograd.numpy as anp
import numpy as np

from dataflow.testing.op_spec import OpSpec

RNG = np.random.default_rng(5)


def cond_build(tf, x):
    return tf.cond(tf.reduce_sum(x) > 0, lambda: x * x, lambda: tf.sin(x))


def cond_reference(x):
    return x * x if np.sum(x) > 0 else anp.sin(x)


def case_build(tf, x):
    total = tf.reduce_sum(x)
    return tf.case(
        [(total > 1.0, lambda: x * x), (total < -1.0, lambda: tf.exp(x))],
        default=lambda: tf.sin(x),
        exclusive=True,
    )


def case_reference(x):
    total = np.sum(x)
    return x * x if total > 1.0 else anp.exp(x) if total < -1.0 else anp.sin(x)


def while_build(tf, x):
    """y <- sin(y) * x, three times."""
    _, y = tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, tf.sin(y) * x), [0, x])
    return y


def while_reference(x):
    y = x
    for _ in range(3):
        y = anp.sin(y) * x
    return y


def asserted(tf, x):
    check = tf.assert_less(x, x + 1.0)
    with tf.control_dependencies([check]):
        return tf.identity(x * 2.0)


def printed(tf, x):
    # TF1's Print writes to the process's stderr; the table checks its value and gradient.
    return tf.Print(x, [tf.reduce_sum(x)], "op table: ") * 3.0


def checked(tf, x):
    return tf.check_numerics(x * x, "op table")


def squared_in_python(tf, x):
    return tf.py_func(np.square, [x], tf.float64, stateful=False)


def eye_times(tf, x):
    """An identity whose size is known at run time only (a static size folds away)."""
    rows = tf.shape(tf.placeholder_with_default(x, [None, None]))[0]
    return tf.matmul(tf.eye(rows, dtype=tf.float64), x)


def broadcast_at_run_time(tf, x, b):
    """``x + b`` where neither size is known at build time: the gradient sums over the
    broadcast axes with one op that decides at run time (``SumLike``)."""
    unknown = tf.placeholder_with_default(x, [None, None])
    return unknown * tf.placeholder_with_default(b, [None])


ROWS = [
    OpSpec("cond", cond_build, cond_reference, (RNG.uniform(0.1, 1, (2, 3)),)),
    OpSpec("cond_false", cond_build, cond_reference, (-RNG.uniform(0.1, 1, (2, 3)),)),
    OpSpec("case", case_build, case_reference, (RNG.uniform(-1, 1, (2, 2)) * 0.3,)),
    OpSpec("case_first", case_build, case_reference, (RNG.uniform(0.5, 1, (2, 2)),)),
    OpSpec("while_loop", while_build, while_reference, (RNG.uniform(0.5, 1.5, (3,)),)),
    OpSpec("assert_less", asserted, lambda x: x * 2.0, (RNG.standard_normal(3),), grad=1),
    OpSpec("print", printed, lambda x: x * 3.0, (RNG.standard_normal(3),), grad=1),
    OpSpec("check_numerics", checked, lambda x: x * x, (RNG.standard_normal(3),)),
    # py_func has no gradient; its static shape is unknown, in TF as here.
    OpSpec("py_func", squared_in_python, np.square, (RNG.standard_normal((2, 3)),), grad=0),
    OpSpec("eye_dynamic", eye_times, lambda x: x, (RNG.standard_normal((3, 2)),), grad=1),
    OpSpec(
        "broadcast_at_run_time",
        broadcast_at_run_time,
        lambda x, b: x * b,
        (RNG.standard_normal((2, 3)), RNG.standard_normal(3)),
    ),
]
