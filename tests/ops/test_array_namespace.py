"""Every kernel, run on the strict array namespace, gives what it gives on numpy.

STYLE.md habit 12: one conformance suite runs on every array namespace. Here each case
builds a small graph and runs it twice through the embedded executor with the same
plan: once with a ``DeviceContext`` whose ``xp`` is ``numpy``, once with the strict
stand-in (``dataflow.testing.strict_xp``), whose arrays refuse any numpy call that did
not come through ``ctx.xp`` and any host array mixed into device arrays. Feeds enter the
strict run as strict arrays (as they would be copied to a GPU). Values must agree
exactly: both runs execute the same numpy code, so any difference is a kernel that
behaves differently when ``ctx.xp`` is not numpy (the ``xp is np`` branches).

Cases come from the op families' own spec tables (``tests/ops``: array, linalg, math,
reductions), each with first-order gradients of its float inputs, plus a table below
for the families that keep no such table: nn/conv/pool, random, state and variables,
queues, control flow, debugging, py_func, checkpoints and the optimizers' apply ops.
``test_every_kernel_is_covered`` checks that together they reach every registered op
type that has a kernel (control-flow bodies included).
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any
from unittest import mock

import numpy as np
import pytest

import dataflow as tf
from dataflow._util import nest
from dataflow.framework import errors, registry
from dataflow.framework.graph import Graph, Tensor
from dataflow.ops.state.checkpoint import tf_bundle as checkpoint_tf_bundle
from dataflow.runtime import devices
from dataflow.runtime.compile.compiler import compile_plan
from dataflow.runtime.compile.plan import Plan
from dataflow.runtime.execute import executor
from dataflow.runtime.execute.context import DeviceContext
from dataflow.runtime.execute.executor import EmbeddedPlan
from dataflow.runtime.resources import ResourceStore
from dataflow.testing import strict_xp
from tests.ops.op_table import OP_TABLE

pytestmark = [pytest.mark.filterwarnings("ignore:Output seems independent of input")]

DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"

# A step: (fetches, feed_dict), (fetches, feed_dict, FAILS) for a step that must raise
# the same OpError in both runs, or a host action ``fn(previous step's values)`` run
# between steps. A case builder returns its steps, in order.
Step = Any
FAILS = "fails"


# --- the runner --------------------------------------------------------------------------
def run_steps(
    steps: Sequence[Step], xp: Any, device: str = DEVICE
) -> tuple[list[list[Any]], set[str]]:
    """Runs ``steps`` on one device whose array namespace is ``xp``; returns the fetched
    values (as numpy) per step and the op types the plans ran."""
    ctx = DeviceContext(device, xp, ResourceStore(device), debug=True)
    results, types = [], set()
    for step in steps:
        if callable(step):
            step(results[-1])
            continue
        fetches, feed_dict, *expect = step
        leaves = nest.flatten(fetches)
        feeds = list(feed_dict)
        plan = compile_plan(leaves, feeds, [device], device)
        types |= plan_op_types(plan)
        values = [np.asarray(v, dtype=t.dtype.as_numpy_dtype) for t, v in feed_dict.items()]
        if xp is not np:  # feeds enter the device (strings stay on the host)
            values = [v if v.dtype == object else xp.asarray(v) for v in values]
        try:
            with _outputs_checked(xp):
                out = EmbeddedPlan(plan, {device: ctx}, debug=True).run(values)
        except errors.OpError as exc:
            if expect != [FAILS]:
                raise
            results.append([f"{type(exc).__name__}: {exc.message.split(' [[')[0]}"])
            continue
        assert expect != [FAILS], f"step {len(results)} was expected to fail"
        results.append([strict_xp.to_numpy(devices.to_host(v)) for v in out])
    return results, types


@contextlib.contextmanager
def _outputs_checked(xp: Any) -> Iterator[None]:
    """Off numpy, the debug executor's per-kernel output check also requires arrays of
    ``xp`` (``xp.ndarray``): a kernel returning a host array would hand numpy arrays to
    the next kernel on a GPU. Host-only values (strings, resource names, datasets) are
    exempt."""
    if xp is np:
        yield
        return
    plain = executor.check_value

    def check(call: Any, dtype: Any, shape: Any, value: Any) -> None:
        plain(call, dtype, shape, value)
        host_only = dtype.name in ("string", "resource", "variant")  # names, pipelines
        if not host_only and not isinstance(value, xp.ndarray):
            raise errors.InternalError(
                None,
                None,
                f"kernel of '{call.op_name}' ({call.op_type}) returned a "
                f"{type(value).__name__}, not an array of its device's namespace",
            )

    with mock.patch.object(executor, "check_value", check):
        yield


def plan_op_types(plan: Plan) -> set[str]:
    """Op types of a plan's calls and, recursively, of its control-flow bodies."""
    found: set[str] = set()
    stack = [plan]
    while stack:
        p = stack.pop()
        for stage in p.stages:
            for call in stage.calls:
                found.add(call.op_type)
                stack.extend(v for v in call.attrs.values() if isinstance(v, Plan))
    return found


def assert_same(got: Any, want: Any, where: str) -> None:
    if want is None or isinstance(want, str):
        assert got == want, where
        return
    if isinstance(got, bytes):  # a session hands back a scalar string as bytes, as TF1's
        got = np.asarray(got, dtype=object)
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, f"{where}: dtype {got.dtype} vs numpy's {want.dtype}"
    assert got.shape == want.shape, f"{where}: shape {got.shape} vs numpy's {want.shape}"
    if want.dtype == object:
        assert got.tolist() == want.tolist(), where
    else:
        np.testing.assert_array_equal(got, want, err_msg=where)


def check_case(build: Callable[[], list[Step]]) -> set[str]:
    """Builds the case in a fresh graph; runs it on numpy and on the strict namespace."""
    global R
    runs = []
    for xp in (np, strict_xp):
        R = np.random.default_rng(3)  # both builds draw the same inputs
        graph = Graph()
        with graph.as_default():
            steps = build()
            runs.append(run_steps(steps, xp))
    (want, types), (got, _) = runs
    for i, (g_step, w_step) in enumerate(zip(got, want, strict=True)):
        for j, (g, w) in enumerate(zip(g_step, w_step, strict=True)):
            assert_same(g, w, f"step {i}, fetch {j}")
    return types


# --- cases from the op table ----------------------------------------------
def with_gradients(
    build: Callable, args: Sequence[Any], grad: bool = True
) -> Callable[[], list[Step]]:
    """A one-step case: ``build`` on placeholders fed ``args``, plus (``grad``) the
    gradients of its float outputs' sum with respect to its float inputs."""

    def case() -> list[Step]:
        values = [np.asarray(a) for a in args]
        phs = [tf.placeholder(tf.as_dtype(v.dtype), v.shape) for v in values]
        out = build(*phs)
        outs = [o for o in nest.flatten(out) if isinstance(o, Tensor)]
        fetches: list[Any] = list(outs)
        ys = [tf.reduce_sum(o) for o in outs if o.dtype.is_floating]
        xs = [p for p in phs if p.dtype.is_floating]
        if grad and ys and xs:
            fetches += [
                g for g in tf.gradients(tf.add_n(ys) if len(ys) > 1 else ys[0], xs) if g is not None
            ]
        return [(fetches, dict(zip(phs, values, strict=True)))]

    return case


def table_cases() -> Iterator[tuple[str, Callable]]:
    """Every row of the op table (tests/ops/op_table.py), with its gradients."""
    for row in OP_TABLE:
        yield row.name, with_gradients(row.builder(tf), row.args, row.grad > 0)


# --- cases for the families without a spec table ------------------------------------------
R = np.random.default_rng(3)


def rand(*shape: int) -> np.ndarray:
    return R.standard_normal(shape)


def one(fetches: Any, feeds: dict | None = None) -> list[Step]:
    return [(fetches, feeds or {})]


def grads_of(y: Tensor, xs: list[Tensor], order: int = 1) -> list[Tensor]:
    """First (and second, along a fixed direction) derivatives of ``y``."""
    g = [t for t in tf.gradients(y, xs) if t is not None]
    out = list(g)
    if order == 2:
        inner = tf.add_n([tf.reduce_sum(t * tf.ones_like(t) * 0.5) for t in g])
        out += [t for t in tf.gradients(inner, xs) if t is not None]
    return out


def ph(value: np.ndarray) -> tuple[Tensor, np.ndarray]:
    return tf.placeholder(tf.as_dtype(value.dtype), value.shape), value


def _math_extras() -> list[Step]:
    x, xv = ph(rand(3, 4))
    i, iv = ph(np.array([[1, -2], [3, 0]], np.int32))
    m, mv = ph(np.array([True, False, True]))
    outs = [
        tf.add_n([x, x, x]),
        tf.cast(x, tf.int32),
        tf.round(x),
        tf.ceil(x),
        tf.floor(x),
        tf.where(x > 0, x, -x),
        tf.where(m),
        tf.cumsum(x, axis=1),
        tf.cumsum(x, axis=0, exclusive=True, reverse=True),
        tf.argmax(x, 1),
        tf.argmin(x, 0),
        tf.reduce_all(m),
        tf.reduce_any(m),
        tf.math.is_nan(x),
        tf.math.is_inf(x),
        tf.clip_by_value(x, -0.5, 0.5),
        tf.abs(i),
        tf.sign(i),
        tf.math.floordiv(i, 2),
        tf.math.floormod(i, 3),
        tf.unsorted_segment_sum(x, [0, 2, 0], 3),
        tf.broadcast_to(x[:1], [3, 4]),
    ]
    y = tf.reduce_sum(
        tf.cumsum(x, axis=1) * tf.clip_by_value(x, -0.5, 0.5)
        + tf.unsorted_segment_sum(x, [0, 2, 0], 3)[:, :1]
    )
    return one(outs + grads_of(y, [x], order=2), {x: xv, i: iv, m: mv})


def _nn() -> list[Step]:
    x, xv = ph(rand(4, 5))
    labels = np.array([0, 3, 4, 1])
    onehot = np.eye(5)[labels]
    acts = [
        tf.nn.relu(x),
        tf.nn.softmax(x),
        tf.nn.log_softmax(x),
        tf.nn.softplus(x),
        tf.nn.sigmoid(x),
        tf.nn.tanh(x),
        tf.nn.elu(x),
        tf.nn.relu6(x),
        tf.nn.leaky_relu(x),
        tf.nn.softsign(x),
        tf.nn.l2_normalize(x, 1),
    ]
    ce = tf.nn.softmax_cross_entropy_with_logits(labels=onehot, logits=x)
    sce = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=x)
    mean, var = tf.nn.moments(x, [0])
    y = tf.add_n([tf.reduce_sum(a * a) for a in acts] + [tf.reduce_sum(ce), tf.reduce_sum(sce)])
    return one(
        acts + [ce, sce, mean, var, tf.nn.dropout(x, rate=0.5, seed=3)] + grads_of(y, [x], order=2),
        {x: xv},
    )


def _conv_pool() -> list[Step]:
    x, xv = ph(rand(2, 6, 5, 3))
    w, wv = ph(rand(3, 3, 3, 4))
    outs = [
        tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME"),
        tf.nn.conv2d(x, w, [1, 2, 2, 1], "VALID"),
        tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "SAME"),
        tf.nn.avg_pool(x, [1, 3, 3, 1], [1, 1, 1, 1], "VALID"),
        tf.nn.conv2d_transpose(
            tf.nn.conv2d(x, w, [1, 2, 2, 1], "SAME"), w, [2, 6, 5, 3], [1, 2, 2, 1], "SAME"
        ),
    ]
    y = tf.add_n([tf.reduce_sum(o * o) for o in outs])
    return one(outs + grads_of(y, [x, w], order=2), {x: xv, w: wv})


def _pool3d() -> list[Step]:
    x, xv = ph(rand(1, 4, 4, 3, 2))
    outs = [
        tf.nn.max_pool3d(x, [1, 2, 2, 2, 1], [1, 1, 2, 1, 1], "SAME"),
        tf.nn.avg_pool3d(x, [1, 2, 2, 1, 1], [1, 2, 1, 1, 1], "VALID"),
    ]
    y = tf.add_n([tf.reduce_sum(o * o) for o in outs])
    return one(outs + grads_of(y, [x], order=2), {x: xv})  # MaxPool3DGradGrad


def _framework_helpers() -> list[Step]:
    x, xv = ph(rand(3, 2))
    words = tf.constant([b"a", b"longer string"])
    outs = [
        tf.guarantee_const(x) * 2.0,
        tf.fingerprint(x),
        tf.fingerprint(words),
        tf.cast(tf.timestamp() > 0, tf.int32),  # the clock's value differs between runs
    ]
    return one(outs, {x: xv})


def _random() -> list[Step]:
    tf.set_random_seed(5)
    logits = tf.constant(np.log([[0.2, 0.3, 0.5], [0.6, 0.2, 0.2]]))
    outs = [
        tf.random_normal([3, 2], mean=1.0, stddev=2.0),
        tf.random_uniform([4], 1, 3),
        tf.random_uniform([5], 0, 10, dtype=tf.int32),
        tf.truncated_normal([2, 3]),
        tf.random_shuffle(tf.range(6)),
        tf.multinomial(logits, 4),
        tf.orthogonal_initializer(seed=2)([3, 3]),
    ]
    return [(outs, {}), (outs, {})]  # a second run continues each op's stream


def _random_distributions() -> list[Step]:
    tf.set_random_seed(7)
    alpha = tf.constant([0.5, 2.0, 4.0], tf.float64)
    gamma = tf.random_gamma([4], alpha, beta=2.0, dtype=tf.float64)
    seed = tf.constant([3, 4], tf.int64)
    logits = tf.constant(np.log([[0.2, 0.3, 0.5]]))
    outs = [
        gamma,
        tf.gradients(tf.reduce_sum(gamma), alpha)[0],  # RandomGammaGrad
        tf.random_poisson([1.0, 5.0], [3]),
        tf.random.stateless_uniform([3], seed),
        tf.random.stateless_uniform([3], seed, minval=0, maxval=9, dtype=tf.int32),
        tf.random.stateless_normal([2, 2], seed),
        tf.random.stateless_truncated_normal([3], seed),
        tf.random.stateless_parameterized_truncated_normal([3], seed, 0.0, 1.0, -0.5, 2.0),
        tf.random.stateless_categorical(logits, 4, seed),
        tf.random.stateless_gamma([3], seed, alpha=[1.5, 2.5, 3.5]),
        tf.random.stateless_poisson([3], seed, lam=[1.0, 4.0, 9.0]),
        tf.random.stateless_binomial([3], seed, counts=[5.0, 10.0, 20.0], probs=0.3),
    ]
    return [(outs, {}), (outs, {})]


def _variables() -> list[Step]:
    v = tf.Variable(np.arange(6.0).reshape(3, 2), name="v")
    r = tf.get_variable("r", [4], tf.float32, initializer=tf.ones_initializer(), use_resource=True)
    w = tf.Variable(tf.zeros([2]), name="w")  # never initialized
    delta, dv = ph(np.ones((3, 2)))
    rows = [
        tf.assign(v, v * 2.0),
        tf.assign_add(v, delta),
        tf.assign_sub(v, delta * 0.5),
        tf.scatter_add(r, [0, 0, 3], [1.0, 2.0, 3.0]),
        tf.scatter_update(r, [1], [7.0]),
    ]
    return [
        ([v.initializer, r.initializer], {}),
        (
            [
                tf.is_variable_initialized(v),
                tf.is_variable_initialized(w),
                tf.report_uninitialized_variables([v, w]),
            ],
            {},
        ),
        ([rows[0]], {}),
        ([rows[1], rows[2]], {delta: dv}),
        ([rows[3]], {}),
        ([rows[4], v.read_value(), r.read_value()], {}),
    ]


def _variable_scatters() -> list[Step]:
    """The row and slice scatters of ``ops/state/scatter.py``, one update each."""
    v = tf.Variable(np.arange(1.0, 7.0).reshape(3, 2), name="sv")
    i = tf.Variable(np.array([7, -7, 9], np.int32), name="si")
    rows = [[1.0, 2.0], [3.0, -4.0]]
    updates = [
        tf.scatter_sub(v, [0, 2], rows),
        tf.scatter_mul(v, [1, 1], rows),
        tf.scatter_div(v, [2, 0], rows),
        tf.scatter_max(v, [0, 2], rows),
        tf.scatter_min(v, [1, 0], rows),
        tf.scatter_div(i, [0, 1, 1], [2, 2, -1]),
        tf.scatter_nd_update(v, [[0, 1], [2, 0]], [5.0, 6.0]),
        tf.scatter_nd_add(v, [[1]], [[1.0, 1.0]]),
        tf.scatter_nd_sub(v, [[2, 1], [2, 1]], [0.5, 0.25]),
    ]
    return [([v.initializer, i.initializer], {})] + [([u], {}) for u in updates]


def _queues() -> list[Step]:
    q = tf.FIFOQueue(4, [tf.float32, tf.int32], shapes=[[2], []])
    x, xv = ph(np.array([1.0, 2.0], np.float32))
    n, nv = ph(np.array(3, np.int32))
    rq = tf.RandomShuffleQueue(5, 0, [tf.float32], shapes=[[]], seed=4)
    pq = tf.PriorityQueue(5, [tf.float32], shapes=[[]])
    return [
        ([pq.enqueue_many([tf.constant([3, 1, 2], tf.int64), tf.range(3.0)])], {}),
        (list(pq.dequeue_many(2)), {}),
        ([q.enqueue([x, n])], {x: xv, n: nv}),
        ([q.enqueue([x * 2, n + 1])], {x: xv, n: nv}),
        ([q.size()], {}),
        (list(q.dequeue()), {}),
        ([rq.enqueue_many([tf.range(5.0)])], {}),
        ([rq.dequeue()], {}),
        ([q.close()], {}),
        ([q.is_closed()], {}),
        (list(q.dequeue()), {}),
    ]


def _accumulators() -> list[Step]:
    acc = tf.ConditionalAccumulator(tf.float32, shape=[2])
    sparse = tf.SparseConditionalAccumulator(tf.float32, shape=[3, 1])
    g, gv = ph(np.array([1.0, 3.0], np.float32))
    return [
        ([acc.set_global_step(0)], {}),
        ([acc.apply_grad(g, local_step=0)], {g: gv}),
        ([acc.apply_grad(g * 3.0, local_step=0)], {g: gv}),
        ([acc.num_accumulated()], {}),
        ([acc.take_grad(2)], {}),
        ([acc.interrupt_takes()], {}),
        ([sparse.apply_grad([0, 2], tf.reshape(g, [2, 1]), grad_shape=[3, 1])], {g: gv}),
        ([sparse.apply_grad([2], [[5.0]], local_step=0)], {}),
        (list(sparse.take_grad(2)), {}),
    ]


def _session_tensors() -> list[Step]:
    x, xv = ph(np.array([1.5, -2.0], np.float32))
    keep = tf.get_session_handle(x * 2.0)
    holder, kept = tf.get_session_tensor("", tf.float32)
    gone, delete = tf.delete_session_tensor("")
    read: dict = {}
    drop: dict = {}
    return [
        ([keep], {x: xv}),
        lambda results: (read.update({holder: results[0]}), drop.update({gone: results[0]})),
        ([kept + 1.0], read),
        ([delete], drop),
    ]


def _control_flow() -> list[Step]:
    x, xv = ph(np.array([0.5, -1.5, 2.0]))
    p, pv = ph(np.array(True))
    c = tf.cond(p, lambda: tf.square(x), lambda: x * 3.0)
    c2 = tf.cond(
        p,
        lambda: tf.random_normal([2], seed=1, dtype=tf.float64),
        lambda: tf.zeros([2], tf.float64),
    )
    case = tf.case(
        [(tf.reduce_sum(x) > 10.0, lambda: x), (p, lambda: x + 1.0)],
        default=lambda: x - 1.0,
        exclusive=True,
    )
    _, w = tf.while_loop(
        lambda i, a: i < 3, lambda i, a: (i + 1, tf.sin(a) * a), [tf.constant(0), x]
    )
    _, w2 = tf.while_loop(
        lambda i, a: i < 2,
        lambda i, a: (
            i + 1,
            a * 2.0 + tf.reduce_sum(tf.random_uniform([1], seed=9, dtype=tf.float64)),
        ),
        [tf.constant(0), x],
    )
    # A py_func with a gradient inside a loop body: its gradient replays recorded values.
    doubled = lambda a: tf.reshape(
        tf.py_func(lambda v: v * 2.0, [a], tf.float64, grad=lambda op, g: [g * 2.0]),
        [3],
    )
    _, w3 = tf.while_loop(
        lambda i, a: i < 2, lambda i, a: (i + 1, doubled(tf.sin(a))), [tf.constant(0), x]
    )
    y = (
        tf.reduce_sum(c * c)
        + tf.reduce_sum(w * w)
        + tf.reduce_sum(case * case)
        + tf.reduce_sum(w3 * w3)
    )
    return one([c, c2, case, w, w2, w3] + grads_of(y, [x], order=2), {x: xv, p: pv})


def _debugging() -> list[Step]:
    x, xv = ph(np.array([[1.0, 2.0], [3.0, 4.0]]))
    checked = tf.debugging.check_numerics(x, "x")
    printed = tf.Print(x, [x, tf.shape(x)], "x = ", summarize=3)
    checks = tf.group(  # a grouping NoOp that ``y`` waits for: it stays in the plan
        tf.Assert(tf.reduce_all(x > 0), [x]),
        tf.debugging.assert_positive(x),
        tf.debugging.assert_less(x, 10.0),
        tf.print("x:", x, output_stream=sys.stderr),
    )
    with tf.control_dependencies([checks]):
        y = tf.identity(x * 2.0)
    return one([checked, printed, y] + grads_of(tf.reduce_sum(checked * printed), [x]), {x: xv})


def _py_func() -> list[Step]:
    x, xv = ph(np.array([1.0, 2.0, 3.0]))
    a = tf.py_func(lambda v: v * 2.0, [x], tf.float64)
    b = tf.py_func(lambda v: (v + 1.0).astype(np.float32), [x], tf.float32, stateful=False)
    return one([a, b], {x: xv})


def _checkpoint(tmp: str) -> Callable[[], list[Step]]:
    def case() -> list[Step]:
        v = tf.Variable(np.arange(4.0), name="v")
        u = tf.Variable(np.ones((2, 2), np.float32), name="u")
        tf.train.Saver([v, u])
        graph = tf.get_default_graph()
        save = [op for op in graph.get_operations() if op.type == "SaveShard"]
        restore = [op for op in graph.get_operations() if op.type == "RestoreShard"]
        assert save and restore, "the Saver built no SaveShard/RestoreShard ops"
        prefix = f"{tmp}/ckpt"
        path = {save[0].inputs[0]: prefix}  # the saver's filename placeholder

        def write_index(values: list) -> None:  # what Saver.save does after the shards
            meta = values[0].item() if hasattr(values[0], "item") else values[0]
            checkpoint_tf_bundle.write_index(prefix, 1, json.loads(meta))

        # TF's saver ops, as an imported MetaGraph's saver runs them.
        def op(op_type: str, inputs: list, attrs: dict | None = None) -> Any:
            return graph.create_op(op_type, [tf.constant(i) for i in inputs], attrs)

        parts = [f"{tmp}/merge_temp/part-0", f"{tmp}/merge_temp/part-1"]
        saves = [
            graph.create_op(
                "SaveV2",
                [tf.constant(p), tf.constant([n]), tf.constant([""]), var.read_value()],
                {"dtypes": [var.dtype]},
            )
            for p, n, var in zip(parts, "ab", (u, v))
        ]
        merge = op("MergeV2Checkpoints", [parts, f"{tmp}/merged"], {"delete_old_dirs": True})
        restored = op(
            "RestoreV2",
            [f"{tmp}/merged", ["a", "b"], ["2 2 1,1:-", "4 1,2"]],
            {"dtypes": [tf.float32, tf.float64]},
        )
        names = op("ShardedFilename", ["p", 1, 2])
        match = op("StaticRegexFullMatch", [["s3://x", "y"]], {"pattern": "^s3://.*"})
        axes = op("BroadcastGradientArgs", [np.array([2, 1], np.int32), np.array([3], np.int32)])
        return [
            ([v.initializer, u.initializer], {}),
            ([op.outputs[0] for op in save], path),
            write_index,
            ([tf.assign_add(v, tf.ones([4], tf.float64))], {}),
            (list(restore), path),
            ([v.read_value(), u.read_value()], {}),
            (saves, {}),
            ([merge], {}),
            ([*restored.outputs, names.outputs[0], match.outputs[0], *axes.outputs], {}),
        ]

    return case


def _optimizers() -> list[Step]:
    x = tf.constant(rand(6, 3))
    target = tf.constant(rand(6, 1))
    steps: list[Step] = []
    trains = []
    for i, opt in enumerate(
        [
            tf.train.GradientDescentOptimizer(0.1),
            tf.train.MomentumOptimizer(0.1, 0.9),
            tf.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True),
            tf.train.AdagradOptimizer(0.1),
            tf.train.AdamOptimizer(0.01),
            tf.train.RMSPropOptimizer(0.01),
            tf.train.RMSPropOptimizer(0.01, momentum=0.5, centered=True),
            tf.train.AdadeltaOptimizer(1.0),
            tf.train.FtrlOptimizer(0.1, l1_regularization_strength=0.01),
            tf.train.FtrlOptimizer(
                0.1, learning_rate_power=-0.6, l2_shrinkage_regularization_strength=0.1
            ),
            tf.train.ProximalGradientDescentOptimizer(0.1, l1_regularization_strength=0.01),
            tf.train.ProximalAdagradOptimizer(0.1, l2_regularization_strength=0.01),
            tf.train.AdagradDAOptimizer(
                0.1, tf.Variable(3, dtype=tf.int64, trainable=False, name="da_step"), 0.1, 0.01
            ),
        ]
    ):
        w = tf.Variable(np.full((3, 1), 0.5), name=f"w{i}")
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - target))
        trains.append((opt.minimize(loss), w))
    steps.append(([tf.global_variables_initializer()], {}))
    for _ in range(2):
        steps.append(([t for t, _ in trains], {}))
    steps.append(([w.read_value() for _, w in trains], {}))
    return steps


def _array_extras() -> list[Step]:
    x, xv = ph(rand(3, 4))
    e, ev = ph(rand(2, 2, 3))
    outs = [
        tf.eye(3),
        tf.einsum("iij->ij", tf.constant(rand(2, 2, 3))),
        tf.einsum("ij,ij->i", x, x),
        tf.linalg.band_part(tf.constant(rand(3, 3)), 1, 0),
        tf.scatter_nd([[0], [2]], [[1.0, 2.0], [3.0, 4.0]], [3, 2]),
        tf.gather_nd(x, [[0, 1], [2, 3]]),
        tf.reverse(x, [1]),
        tf.pad(x, [[1, 0], [0, 2]], mode="REFLECT"),
        tf.one_hot([0, 2], 3),
    ]
    y = tf.reduce_sum(tf.pad(x, [[1, 1], [2, 1]], mode="SYMMETRIC") ** 2) + tf.reduce_sum(
        tf.einsum("iij->ij", e) ** 2
    )
    return one(outs + grads_of(y, [x, e], order=2), {x: xv, e: ev})


def _sources_and_shapes() -> list[Step]:
    x = tf.placeholder(tf.float64, None)  # unknown rank: Rank/Size/Shape run as kernels
    n = tf.placeholder(tf.int32, [])
    d = tf.placeholder_with_default(tf.constant([1.0, 2.0]), [2])
    outs = [tf.rank(x), tf.size(x), tf.shape(x), tf.eye(n), tf.eye(2, n, batch_shape=[2]), d]
    feeds = {x: rand(2, 3), n: np.array(3, np.int32)}
    return [
        (outs, feeds),
        ([d * 2.0], {d: np.array([5.0, 6.0])}),
        ([tf.placeholder(tf.float32, [2], name="never_fed")], {}, FAILS),
    ]


def _fused_reductions() -> list[Step]:
    # Plan-time fusions (runtime/compile/fusion.py): whole float arrays take the dot path, a
    # partial reduction and an integer input the unfused kernels.
    x, xv = ph(rand(3, 4))
    f, fv = ph(rand(5, 1).astype(np.float32))
    i, iv = ph(np.array([[1, -2], [3, 4]], np.int32))
    outs = [
        tf.reduce_mean(tf.square(x)),
        tf.reduce_sum(tf.square(f)),
        tf.reduce_sum(tf.square(x), axis=1),
        tf.reduce_mean(tf.square(i)),
        tf.reduce_sum(tf.square(x), keepdims=True),
    ]
    return one(outs + grads_of(outs[0] + tf.reduce_sum(outs[2]), [x]), {x: xv, f: fv, i: iv})


def _summaries() -> list[Step]:
    # Summaries encode on the host: a device input is copied over first.
    x, xv = ph(rand(2, 3, 4, 1).astype(np.float32))
    outs = [
        tf.summary.scalar("s", tf.reduce_sum(x)),
        tf.summary.histogram("h", x),
        tf.summary.image("i", x, max_outputs=2),
        tf.summary.audio("a", tf.reshape(x, [2, 12]) / 4.0, 8000),
        tf.summary.tensor_summary("t", x),
    ]
    return one(outs + [tf.summary.merge(outs)], {x: xv})


def _images() -> list[Step]:
    # Decoding runs on the host; resizing and the rest are gathers and arithmetic.
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray((rand(3, 4, 3) * 40 + 128).clip(0, 255).astype(np.uint8)).save(buffer, "PNG")
    x, xv = ph(rand(2, 4, 5, 3))
    decoded = tf.image.decode_png(buffer.getvalue())
    outs = [
        decoded,
        tf.image.decode_png(buffer.getvalue(), channels=1),
        tf.image.resize_images(x, [6, 3]),
        tf.image.per_image_standardization(x),
        tf.image.convert_image_dtype(decoded, tf.float64),
    ]
    return one(outs + grads_of(tf.reduce_sum(outs[2] ** 2), [x]), {x: xv})


def _image_boxes_and_codecs() -> list[Step]:
    # Box selection and drawing run through ctx.xp; the byte codecs on the host, their
    # numeric results going to the device.
    import os
    import tempfile

    corner = np.abs(rand(12, 2)) * 0.3
    b, bv = ph(np.concatenate([corner, corner + 0.2], 1).astype(np.float32))
    sc, scv = ph(R.permutation(12).astype(np.float32))
    img, imgv = ph(np.abs(rand(1, 6, 7, 3)).astype(np.float32))
    audio, audiov = ph((rand(9, 2) * 0.3).astype(np.float32))
    words = tf.constant([["ab", "c"], ["", "de"]])
    outs = [
        tf.image.non_max_suppression(b, sc, 5, 0.2),
        *tf.image.non_max_suppression_with_scores(b, sc, 5, 0.2),
        *tf.image.non_max_suppression_padded(b, sc, 6, 0.2, pad_to_max_output_size=True),
        tf.image.non_max_suppression_overlaps(tf.abs(b[:, :1] - tf.transpose(b[:, :1])), sc, 4),
        *tf.image.combined_non_max_suppression(
            b[None, :, None], tf.stack([sc, -sc], 1)[None], 3, 4
        ),
        tf.image.draw_bounding_boxes(img, b[None, :3]),
        tf.image.decode_png(tf.image.encode_png(tf.cast(img[0] * 40.0, tf.uint8))),
        tf.io.decode_base64(tf.io.encode_base64(words)),
        tf.io.decode_compressed(words),
        tf.io.parse_tensor(tf.io.serialize_tensor(b), tf.float32),
        *tf.audio.decode_wav(tf.audio.encode_wav(audio, 8000)),
        tf.strings.as_string(sc),
        tf.strings.regex_full_match(words, "[a-d]*"),
        tf.strings.reduce_join(words, 1),
        tf.strings.unsorted_segment_join(words, [1, 0], 2),
        *tf.image.sample_distorted_bounding_box([6, 7, 3], b[None, :2], seed=3),
        tf.edit_distance(
            tf.SparseTensor([[0, 0], [0, 1], [1, 0]], [1, 2, 3], [2, 2]),
            tf.SparseTensor([[0, 0], [1, 1]], [1, 3], [2, 2]),
        ),
    ]
    path = os.path.join(tempfile.mkdtemp(), "written.bin")
    write = tf.io.write_file(path, tf.constant(b"bytes"))
    return [(write, {}), *one(outs, {b: bv, sc: scv, img: imgv, audio: audiov})]


def _codecs_and_sequences() -> list[Step]:
    # JPEG and GIF codecs, SequenceExample parsing and the Unicode kernels run on the
    # host (bytes in, bytes or numbers out).
    import io

    from PIL import Image

    frames = [(rand(4, 5, 3) * 40 + 128).clip(0, 255).astype(np.uint8) for _ in range(2)]
    gif = io.BytesIO()
    Image.fromarray(frames[0]).save(
        gif, "GIF", save_all=True, append_images=[Image.fromarray(frames[1])]
    )
    img, imgv = ph((rand(6, 7, 3) * 40 + 128).clip(0, 255).astype(np.uint8))
    q, qv = ph(np.array(60, np.int32))
    jpeg = tf.image.encode_jpeg(img, quality=90)
    seq = tf.train.SequenceExample()
    seq.context.feature["id"].int64_list.value.append(7)
    for step in ([1.0, 2.0], [3.0, 4.0], [5.0, 6.0]):
        seq.feature_lists.feature_list["x"].feature.add().float_list.value.extend(step)
    p, pv = tf.placeholder(tf.string, []), np.array(seq.SerializeToString(), dtype=object)
    context = {"id": tf.FixedLenFeature([], tf.int64)}
    sequence = {"x": tf.FixedLenSequenceFeature([2], tf.float32)}
    one_ctx, one_seq = tf.io.parse_single_sequence_example(p, context, sequence)
    many_ctx, many_seq, lengths = tf.io.parse_sequence_example(tf.stack([p, p]), context, sequence)
    points = tf.constant([[104, 105, 0x1F600], [120, 0xD800, 121]], tf.int32)
    outs = [
        tf.image.decode_jpeg(jpeg),
        tf.image.extract_jpeg_shape(jpeg),
        tf.image.is_jpeg(jpeg),
        tf.image.adjust_jpeg_quality(img, q),
        tf.image.decode_gif(gif.getvalue()),
        one_ctx["id"],
        one_seq["x"],
        many_ctx["id"],
        many_seq["x"],
        lengths["x"],
        tf.strings.unicode_encode(points, "UTF-8"),
        tf.strings.unicode_transcode(tf.constant(["héllo", "wörld"]), "UTF-8", "UTF-16-BE"),
    ]
    return one(outs, {img: imgv, q: qv, p: pv})


def _strings_and_records() -> list[Step]:
    # String kernels run on the host; numeric results (lengths, numbers, parsed
    # features, sparse indices) go to the device.
    proto = tf.train.Example()
    proto.features.feature["n"].int64_list.value.extend([1, 2])
    proto.features.feature["w"].bytes_list.value.append(b"hi")
    proto.features.feature["f"].float_list.value.extend([0.5, 1.5])
    s, sv = tf.placeholder(tf.string, [2]), np.array([b"1,ab,2.5", b"3,c d,95"], dtype=object)
    p, pv = tf.placeholder(tf.string, []), np.array(proto.SerializeToString(), dtype=object)
    parsed = tf.parse_single_example(
        p, {"n": tf.FixedLenFeature([2], tf.int64), "w": tf.VarLenFeature(tf.string)}
    )
    batch = tf.parse_example(
        tf.stack([p, p]),
        {
            "f": tf.io.FixedLenSequenceFeature([], tf.float32, allow_missing=True),
            "x": tf.FixedLenFeature([], tf.float32, default_value=-1.0),
        },
    )
    a, b, c = tf.decode_csv(s, [[0], [""], [0.0]])
    split = tf.string_split(b)
    halves = tf.strings.split(b, sep=" ")
    stacked = tf.io.deserialize_many_sparse(tf.io.serialize_many_sparse(split), tf.string)
    outs = [
        a,
        b,
        c,
        tf.string_to_number(tf.substr(s, 0, 1), tf.int64),
        tf.decode_raw(s, tf.uint8),
        tf.strings.length(tf.strings.join([b, tf.strings.strip(b)], separator="/")),
        tf.strings.regex_replace(tf.strings.upper(tf.strings.lower(b)), "C", "x"),
        tf.strings.to_hash_bucket(b, 7),
        tf.strings.to_hash_bucket_strong(b, 7, [3, 4]),
        tf.strings.format("{} / {}", [b, tf.strings.length(b)], summarize=1),
        tf.io.decode_json_example(
            tf.strings.join(
                [
                    '{"features": {"feature": {"n": {"int64List": {"value": [',
                    tf.as_string(tf.strings.length(b)),
                    "]}}}}}",
                ]
            )
        ),
        split.indices,
        split.values,
        split.dense_shape,
        halves.values,
        tf.io.serialize_sparse(split),
        stacked.indices,
        stacked.values,
        stacked.dense_shape,
        tf.equal(b, "ab"),  # compared on the host, the flags on the device
        tf.not_equal(split.values, tf.constant("c")),
        parsed["n"],
        parsed["w"].indices,
        parsed["w"].values,
        batch["f"],
        batch["x"],
    ]
    return one(outs, {s: sv, p: pv})


def _sampled_losses() -> list[Step]:
    # The sampler runs on the host; the losses' gathers and matmuls on the device.
    labels = tf.constant([[1], [3]], tf.int64)
    w, b = tf.constant(rand(6, 3)), tf.constant(rand(6))
    x, xv = ph(rand(2, 3))
    for draw in (tf.nn.uniform_candidate_sampler, tf.nn.log_uniform_candidate_sampler):
        draw(labels, 1, 2, True, 6, seed=1)
    sampled = tf.nn.fixed_unigram_candidate_sampler(
        labels, 1, 3, False, 6, unigrams=[1, 2, 3, 4, 5, 6], seed=2
    )
    nce = tf.nn.nce_loss(w, b, labels, x, 3, 6, sampled_values=sampled)
    softmax = tf.nn.sampled_softmax_loss(w, b, labels, x, 3, 6, sampled_values=sampled)
    return one(
        [nce, softmax, sampled.sampled_candidates, *grads_of(tf.reduce_sum(nce + softmax), [x])],
        {x: xv},
    )


def _ctc() -> list[Step]:
    # The labels are parsed on the host; the recursion and the decoder run on ctx.xp.
    labels = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], tf.constant([1, 1, 0]), [2, 2])
    x, xv = ph(rand(5, 2, 3))
    loss = tf.nn.ctc_loss(labels, x, [5, 3], ctc_merge_repeated=False)
    (decoded,), neg_sum = tf.nn.ctc_greedy_decoder(x, [5, 2])
    beams, log_probs = tf.nn.ctc_beam_search_decoder(x, [5, 4], beam_width=3, top_paths=2)
    return one(
        [
            loss,
            *grads_of(tf.reduce_sum(loss), [x]),
            decoded.indices,
            decoded.values,
            neg_sum,
            beams[1].values,
            log_probs,
        ],
        {x: xv},
    )


def _datasets() -> list[Step]:
    # Pipelines run on the host; map/filter bodies run on the op's device (ctx.xp).
    import tempfile

    from tensorboard.summary.writer.record_writer import RecordWriter

    folder = tempfile.mkdtemp(prefix="dataflow-conformance-")
    with open(f"{folder}/lines.txt", "w") as f:
        f.write("one\ntwo\n")
    with open(f"{folder}/data.tfrecord", "wb") as f:
        RecordWriter(f).write(b"record")
    Dataset = tf.data.Dataset
    x, xv = ph(rand(6, 2))
    pairs = Dataset.from_tensor_slices((x, tf.range(6))).map(lambda a, b: (a * 2.0, b))
    pairs = pairs.filter(lambda a, b: b < 5).concatenate(
        Dataset.zip(
            (
                Dataset.from_tensors(tf.ones([2], tf.float64)),
                Dataset.range(1).map(lambda i: tf.cast(i, tf.int32)),
            )
        )
    )
    batched = pairs.shuffle(3, seed=1).repeat(2).skip(1).take(8).cache().prefetch(1).batch(3)
    padded = (
        Dataset.range(1, 4)
        .flat_map(lambda n: Dataset.from_tensors(tf.fill([n], n)))
        .interleave(Dataset.from_tensors, cycle_length=2)
        .padded_batch(2, [None])
    )
    generated = Dataset.from_generator(lambda: iter([1, 2]), tf.int64)
    files = Dataset.zip(
        (
            Dataset.list_files(f"{folder}/*.txt", shuffle=False).flat_map(tf.data.TextLineDataset),
            tf.data.TFRecordDataset(f"{folder}/data.tfrecord"),
            # Any file is whole 1-byte records; every other one.
            tf.data.FixedLengthRecordDataset(f"{folder}/data.tfrecord", 1).shard(2, 1),
        )
    )
    import dask.array as da

    # A Dask collection read chunk by chunk in this process (tests/data/test_from_dask.py).
    chunked = Dataset.from_dask(da.from_array(np.arange(12.0).reshape(6, 2), chunks=(4, 2)))
    iterator = batched.make_initializable_iterator()
    generated_it = generated.make_one_shot_iterator()
    by_handle = tf.data.Iterator.from_string_handle(
        generated_it.string_handle(), generated.output_types, generated.output_shapes
    )
    nexts = list(iterator.get_next()) + [padded.make_one_shot_iterator().get_next()]
    nexts += [by_handle.get_next()] + list(files.make_one_shot_iterator().get_next())
    nexts += [chunked.batch(5).make_one_shot_iterator().get_next()]
    return [([iterator.initializer], {x: xv}), (nexts, {})]


def _sparse_optimizers() -> list[Step]:
    # An embedding's gradient is IndexedSlices: each optimizer's sparse update (rows).
    ids = tf.constant([3, 0, 3, 5])
    trains, tables = [], []
    for i, opt in enumerate(
        [
            tf.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True),
            tf.train.AdagradOptimizer(0.1),
            tf.train.AdamOptimizer(0.01),
            tf.train.RMSPropOptimizer(0.01),
            tf.train.RMSPropOptimizer(0.01, momentum=0.5, centered=True),
            tf.train.AdadeltaOptimizer(1.0),
            tf.train.FtrlOptimizer(0.1, l1_regularization_strength=0.01),
            tf.train.ProximalGradientDescentOptimizer(0.1, l1_regularization_strength=0.01),
            tf.train.ProximalAdagradOptimizer(0.1, l2_regularization_strength=0.01),
            tf.train.AdagradDAOptimizer(
                0.1, tf.Variable(3, dtype=tf.int64, trainable=False, name="da_step"), 0.1, 0.01
            ),
        ]
    ):
        table = tf.Variable(rand(6, 2), name=f"table{i}")
        loss = tf.reduce_sum(tf.square(tf.nn.embedding_lookup(table, ids)))
        trains.append(opt.minimize(loss))
        tables.append(table)
    steps: list[Step] = [([tf.global_variables_initializer()], {})]
    steps += [(trains, {}), (trains, {}), ([t.read_value() for t in tables], {})]
    return steps


def _readers() -> list[Step]:
    # Readers run on the host (strings); their counters and count_up_to through ctx.xp.
    import os
    import tempfile

    from tensorboard.summary.writer.record_writer import RecordWriter

    # One folder for both runs: keys hold the file names.
    folder = os.path.join(tempfile.gettempdir(), "dataflow-conformance-readers")
    os.makedirs(folder, exist_ok=True)
    paths = {name: f"{folder}/{name}" for name in ("lines.txt", "data.tfrecord", "fixed.bin")}
    with open(paths["lines.txt"], "w") as f:
        f.write("header\none\ntwo\n")
    with open(paths["data.tfrecord"], "wb") as f:
        RecordWriter(f).write(b"record")
    with open(paths["fixed.bin"], "wb") as f:
        f.write(b"HHabcdefFF")
    readers = [
        (tf.TextLineReader(skip_header_lines=1), paths["lines.txt"]),
        (tf.TFRecordReader(), paths["data.tfrecord"]),
        (tf.FixedLengthRecordReader(2, header_bytes=2, footer_bytes=2), paths["fixed.bin"]),
        (tf.WholeFileReader(), paths["lines.txt"]),
        (tf.IdentityReader(), "work"),
    ]
    steps: list[Step] = []
    for reader, path in readers:
        queue = tf.FIFOQueue(4, tf.string)
        steps += [
            ([queue.enqueue_many([[path, path]])], {}),
            (list(reader.read(queue)), {}),
            (list(reader.read_up_to(queue, 3)), {}),
            ([reader.num_records_produced(), reader.num_work_units_completed()], {}),
            ([reader.reset()], {}),
        ]
    # tf.read_file: a whole file as one string, on the host.
    steps.append(([tf.read_file(paths["lines.txt"])], {}))
    epochs = tf.Variable(tf.constant(0, tf.int64), trainable=False)
    count = tf.count_up_to(epochs, 1)
    return steps + [([epochs.initializer], {}), ([count], {}), ([count], {}, FAILS)]


def _lookup_tables() -> list[Step]:
    # Tables live on the host (keys are strings); lookups, sizes and exports, a text
    # file's vocabulary, and out-of-vocabulary buckets hashed with Fingerprint64.
    import os
    import tempfile

    folder = os.path.join(tempfile.gettempdir(), "dataflow-conformance-lookup")
    os.makedirs(folder, exist_ok=True)
    vocabulary = f"{folder}/vocab.txt"
    with open(vocabulary, "w") as f:
        f.write("a\nb\nc\n")
    pairs = tf.contrib.lookup.HashTable(
        tf.lookup.KeyValueTensorInitializer(["x", "y"], tf.constant([7, 8], tf.int64)), -1
    )
    from_file = tf.contrib.lookup.index_table_from_file(vocabulary, num_oov_buckets=2)
    keys = tf.constant(["y", "q", "a", "zz"])
    found = [pairs.lookup(keys), pairs.size(), *pairs.export(), from_file.lookup(keys)]
    return [([tf.tables_initializer()], {}), (found, {})]


def _conv_pool_fast_paths() -> list[Step]:
    # Conv2D and its gradients through the Fourier domain (this geometry takes it:
    # nn.conv.fourier.fourier_pays), one-channel im2col (tap-major), tiling max pools
    # (ksize == strides) with 8 channels (the packed-word tie masks) and 3.
    x, xv = ph(rand(2, 14, 12, 32).astype(np.float32))
    w, wv = ph(rand(5, 5, 32, 48).astype(np.float32))
    g, gv = ph(rand(2, 9, 8, 1))
    k, kv = ph(rand(3, 3, 1, 4))
    p, pv = ph(np.maximum(rand(2, 7, 6, 8), 0.0))
    outs = [
        tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME"),
        tf.nn.conv2d(g, k, [1, 2, 2, 1], "SAME"),
        tf.nn.max_pool(p, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"),
        tf.nn.max_pool(p[..., :3], [1, 3, 2, 1], [1, 3, 2, 1], "SAME"),
    ]
    y = tf.add_n([tf.reduce_sum(o * o) for o in outs[1:]])
    # With these static shapes the gradient is the one op Conv2DBackpropInputFilter; the
    # two backprop ops, built directly, take the Fourier route on their own.
    dy = outs[0] * 0.5
    separate = [
        tf.nn.conv2d_backprop_input([2, 14, 12, 32], w, dy, [1, 1, 1, 1], "SAME"),
        tf.nn.conv2d_backprop_filter(x, [5, 5, 32, 48], dy, [1, 1, 1, 1], "SAME"),
    ]
    return one(
        outs
        + separate
        + tf.gradients(tf.reduce_sum(outs[0] * outs[0]), [x, w])
        + grads_of(y, [g, k, p], order=2),
        {x: xv, w: wv, g: gv, k: kv, p: pv},
    )


def _cnn_block_fusions() -> list[Step]:
    # relu(bias_add(.)) runs as BiasAddRelu and the gradient of max_pool(relu(.)) as
    # MaxPoolGradRelu; the large input takes numpy's blocked clamps (nn.relu), which the
    # strict namespace does not, and the rounded one has tied maxima (resolved on
    # packed words: 8 channels).
    big, bigv = ph(rand(2, 64, 64, 16).astype(np.float32))
    small, smallv = ph(np.round(rand(2, 8, 6, 8) * 2).astype(np.float32))
    b, bv = ph(rand(16).astype(np.float32))
    c, cv = ph(np.round(rand(8) * 2).astype(np.float32))
    blocks = [tf.nn.relu(tf.nn.bias_add(big, b)), tf.nn.relu(tf.nn.bias_add(small, c))]
    pooled = [tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "SAME") for h in blocks]
    y = tf.add_n([tf.reduce_sum(o * o) for o in pooled])
    feeds = {big: bigv, small: smallv, b: bv, c: cv}
    return one(pooled + tf.gradients(y, [big, small, b, c]), feeds)


OWN_CASES: list[tuple[str, Callable[[], list[Step]]]] = [
    ("cnn_block_fusions", _cnn_block_fusions),
    ("math_extras", _math_extras),
    ("nn", _nn),
    ("conv_pool", _conv_pool),
    ("conv_pool_fast_paths", _conv_pool_fast_paths),
    ("pool3d", _pool3d),
    ("framework_helpers", _framework_helpers),
    ("random", _random),
    ("random_distributions", _random_distributions),
    ("variables", _variables),
    ("queues", _queues),
    ("accumulators", _accumulators),
    ("session_tensors", _session_tensors),
    ("control_flow", _control_flow),
    ("debugging", _debugging),
    ("py_func", _py_func),
    ("optimizers", _optimizers),
    ("sparse_optimizers", _sparse_optimizers),
    ("array_extras", _array_extras),
    ("variable_scatters", _variable_scatters),
    ("sources_and_shapes", _sources_and_shapes),
    ("fused_reductions", _fused_reductions),
    ("summaries", _summaries),
    ("datasets", _datasets),
    ("sampled_losses", _sampled_losses),
    ("ctc", _ctc),
    ("strings_and_records", _strings_and_records),
    ("codecs_and_sequences", _codecs_and_sequences),
    ("image_boxes_and_codecs", _image_boxes_and_codecs),
    ("images", _images),
    ("readers", _readers),
    ("lookup_tables", _lookup_tables),
]

ALL_CASES = list(table_cases()) + OWN_CASES


@pytest.mark.parametrize("build", [c[1] for c in ALL_CASES], ids=[c[0] for c in ALL_CASES])
def test_kernels_agree_on_the_strict_namespace(build: Callable, capfd) -> None:
    check_case(build)


def test_checkpoint_ops_on_the_strict_namespace(tmp_path) -> None:
    check_case(_checkpoint(str(tmp_path)))


def test_every_kernel_is_covered(tmp_path) -> None:
    covered: set[str] = set()
    for _, build in ALL_CASES + [("checkpoint", _checkpoint(str(tmp_path)))]:
        graph = Graph()
        with graph.as_default():
            for step in build():
                if callable(step):
                    continue
                fetches, feeds = step[:2]
                plan = compile_plan(nest.flatten(fetches), list(feeds), [DEVICE], DEVICE)
                covered |= plan_op_types(plan)
    with_kernel = {t for t in registry.registered_types() if registry.lookup(t).kernel}
    missing = sorted(with_kernel - covered)
    assert not missing, f"op types no conformance case runs: {missing}"


# --- the stand-in itself ----------------------------------------------------------------------
def test_strict_namespace_refuses_numpy_outside_it() -> None:
    x = strict_xp.asarray([1.0, -2.0, 3.0])
    assert isinstance(x, strict_xp.StrictArray)
    # Through the namespace, methods and operators: fine, and results stay strict.
    for value in (
        strict_xp.add(x, 1.0),
        x + 1.0,
        x.sum(),
        x[0],
        abs(x),
        x.astype(np.int32),
        strict_xp.linalg.norm(x),
        strict_xp.add.reduce(x),
        strict_xp.random.default_rng(0).standard_normal(2),
        strict_xp.concatenate([x, x]),
        strict_xp.where(x > 0)[0],
    ):
        assert isinstance(value, strict_xp.StrictArray), type(value)
    # numpy called directly on it, or a host array mixed in: refused, naming the call.
    with pytest.raises(AssertionError, match="numpy.add"):
        np.add(x, 1.0)
    with pytest.raises(AssertionError, match="numpy.concatenate"):
        np.concatenate([x, x])
    with pytest.raises(AssertionError, match="add.reduce"):
        np.add.reduce(x)
    with pytest.raises(AssertionError, match="plain numpy array"):
        strict_xp.maximum(x, np.zeros(3))
    with pytest.raises(AssertionError, match="plain numpy array"):
        x * np.ones(3)
    with pytest.raises(AssertionError, match="plain numpy array"):
        strict_xp.exp(np.ones(3))  # cupy functions take no host arrays
    with pytest.raises(AttributeError, match="permutation"):
        strict_xp.random.default_rng(0).permutation(3)  # cupy's Generator lacks it


def test_strict_namespace_round_trips_to_numpy() -> None:
    x = strict_xp.asarray(np.arange(6.0).reshape(2, 3))
    y = x.copy()
    y += 1.0  # in place stays strict
    assert type(y) is strict_xp.StrictArray
    host = strict_xp.to_numpy([x, (y,)])
    assert type(host[0]) is np.ndarray and type(host[1][0]) is np.ndarray
    np.testing.assert_array_equal(host[1][0], np.arange(6.0).reshape(2, 3) + 1)
    assert type(x.get()) is np.ndarray  # cupy's device-to-host copy
    np.add.at(x.get(), [0], 1.0)  # host copies are ordinary numpy arrays


def test_a_kernel_with_a_stray_numpy_call_fails_on_the_strict_namespace() -> None:
    def good(ctx: Any, attrs: dict) -> Callable:
        xp = ctx.xp
        return lambda a: xp.maximum(a, 0)

    def stray(ctx: Any, attrs: dict) -> Callable:
        return lambda a: np.maximum(a, 0)

    ctx = DeviceContext(DEVICE, strict_xp, ResourceStore(DEVICE))
    value = strict_xp.asarray([-1.0, 2.0])
    np.testing.assert_array_equal(strict_xp.to_numpy(good(ctx, {})(value)), [0.0, 2.0])
    with pytest.raises(AssertionError, match="numpy.maximum"):
        stray(ctx, {})(value)
