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


# --- TensorArray, map_fn and scan -------------------------------------------------------------
def tensor_array_loop(tf, x):
    """Rows of ``x`` read from one TensorArray in a loop, results written to another."""
    n = tf.shape(x)[0]
    rows = tf.TensorArray(x.dtype, size=n).unstack(x)
    out = tf.TensorArray(x.dtype, size=0, dynamic_size=True)

    def body(i, acc, out):
        acc = acc * 0.5 + tf.sin(rows.read(i))
        return i + 1, acc, out.write(i, acc * rows.read(i))

    _, acc, out = tf.while_loop(lambda i, a, o: i < n, body, [0, tf.zeros_like(x[0]), out])
    return out.stack() * acc


def tensor_array_loop_reference(x):
    acc, out = anp.zeros_like(x[0]), []
    for row in x:
        acc = acc * 0.5 + anp.sin(row)
        out.append(acc * row)
    return anp.stack(out) * acc


def tensor_array_scatter_gather(tf, x, indices=(1, 3, 0)):
    ta = tf.TensorArray(x.dtype, size=4).scatter([3, 0, 2, 1], x)
    return ta.gather(list(indices)) * (ta.read(2) * ta.read(0))


def tensor_array_gather_repeated(tf, x):
    return tensor_array_scatter_gather(tf, x, (1, 1, 3))


def tensor_array_split_concat(tf, x):
    ta = tf.TensorArray(x.dtype, size=3).split(x, [1, 2, 3])
    size = tf.cast(ta.size(), x.dtype)  # 3
    return tf.concat([ta.read(1) * size, ta.concat() * tf.cos(ta.concat())], 0)


def map_fn_build(tf, x):
    return tf.map_fn(lambda row: tf.sin(row) * tf.reduce_sum(row * row), x)


def map_fn_reference(x):
    return anp.stack([anp.sin(r) * anp.sum(r * r) for r in x])


def scan_build(tf, x):
    return tf.scan(lambda a, row: a * anp.float64(0.5) * row + tf.cos(row), x, reverse=True)


def scan_reference(x):
    acc, out = x[-1], [x[-1]]
    for row in x[-2::-1]:
        acc = acc * 0.5 * row + anp.cos(row)
        out.append(acc)
    return anp.stack(out[::-1])


ROWS = [
    OpSpec("cond", cond_build, cond_reference, (RNG.uniform(0.1, 1, (2, 3)),)),
    OpSpec("cond_false", cond_build, cond_reference, (-RNG.uniform(0.1, 1, (2, 3)),)),
    OpSpec("case", case_build, case_reference, (RNG.uniform(-1, 1, (2, 2)) * 0.3,)),
    OpSpec("case_first", case_build, case_reference, (RNG.uniform(0.5, 1, (2, 2)),)),
    OpSpec("while_loop", while_build, while_reference, (RNG.uniform(0.5, 1.5, (3,)),)),
    OpSpec(
        "tensor_array_loop",
        tensor_array_loop,
        tensor_array_loop_reference,
        (RNG.uniform(-1, 1, (4, 3)),),
    ),
    OpSpec(
        "tensor_array_scatter_gather",
        tensor_array_scatter_gather,
        lambda x: x[[3, 0, 1]] * (x[2] * x[1]),
        (RNG.standard_normal((4, 3)),),
    ),
    # Reading one element twice sums both reads' gradients (autograd agrees); TF1's
    # TensorArray gradient keeps only one of them, so this row is not compared with TF.
    OpSpec(
        "tensor_array_gather_repeated",
        tensor_array_gather_repeated,
        lambda x: x[[3, 3, 0]] * (x[2] * x[1]),
        (RNG.standard_normal((4, 3)),),
        tf_parity=False,
    ),
    OpSpec(
        "tensor_array_split_concat",
        tensor_array_split_concat,
        lambda x: anp.concatenate([x[1:3] * 3.0, x * anp.cos(x)], 0),
        (RNG.standard_normal((6, 2)),),
    ),
    OpSpec("map_fn", map_fn_build, map_fn_reference, (RNG.uniform(-1, 1, (3, 2)),)),
    OpSpec("scan", scan_build, scan_reference, (RNG.uniform(-1, 1, (4, 2)),)),
    OpSpec("assert_less", asserted, lambda x: x * 2.0, (RNG.standard_normal(3),), grad=1),
    OpSpec("print", printed, lambda x: x * 3.0, (RNG.standard_normal(3),), grad=1),
    OpSpec("check_numerics", checked, lambda x: x * x, (RNG.standard_normal(3),)),
    # py_func has no gradient; its static shape is unknown, in TF as here.
    OpSpec("py_func", squared_in_python, np.square, (RNG.standard_normal((2, 3)),), grad=0),
    OpSpec(
        "identity_n",
        lambda tf, x, y: (lambda a, b: a * b + b)(*tf.identity_n([x, y])),
        lambda x, y: x * y + y,
        (RNG.standard_normal(3), RNG.standard_normal(3)),
    ),
    OpSpec("eye_dynamic", eye_times, lambda x: x, (RNG.standard_normal((3, 2)),), grad=1),
    OpSpec(
        "broadcast_at_run_time",
        broadcast_at_run_time,
        lambda x, b: x * b,
        (RNG.standard_normal((2, 3)), RNG.standard_normal(3)),
    ),
]
