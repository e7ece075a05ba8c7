"""Frozen graphs with TF1's control flow (``tf.compat.v1`` with control flow v1: while-loop
frames, conds, ``TensorArrayV3``) run here with TF's outputs: ``dynamic_rnn`` over LSTM,
GRU and basic RNN cells (with and without ``sequence_length``, time-major both ways),
``bidirectional_dynamic_rnn``, ``tf.while_loop`` with conds inside and outside, nested
loops, ``map_fn``; malformed frames are refused at import."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow as tf
from dataflow.framework import graph_def as graph_def_lib

pytestmark = [
    pytest.mark.tf,
    # TF's rnn_cell classes warn that Keras replaces them; they are what TF1 users froze.
    pytest.mark.filterwarnings("ignore:.*is deprecated:UserWarning"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]


@pytest.fixture(scope="module", params=["v1", "v2"])
def tf1(request):
    """``tensorflow.compat.v1`` writing control flow v1 (TF 1.15's frames) or v2
    (functional ``While``/``If`` calling functions of the GraphDef's library)."""
    tensorflow = pytest.importorskip("tensorflow")
    v1 = tensorflow.compat.v1
    v1.disable_eager_execution()
    was = v1.control_flow_v2_enabled()
    (v1.enable_control_flow_v2 if request.param == "v2" else v1.disable_control_flow_v2)()
    yield v1
    (v1.enable_control_flow_v2 if was else v1.disable_control_flow_v2)()


@pytest.fixture(scope="module")
def tf1_v1():
    tensorflow = pytest.importorskip("tensorflow")
    v1 = tensorflow.compat.v1
    v1.disable_eager_execution()
    v1.disable_control_flow_v2()
    return v1


def _freeze(tf1, build):
    """Builds ``build(tf1)`` -> (feeds {name: array}, output names) in TF, freezes it,
    and returns the GraphDef's bytes, the feeds, the outputs and TF's values."""
    graph = tf1.Graph()
    with graph.as_default():
        tf1.set_random_seed(7)
        feeds, outputs = build(tf1)
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            expected = sess.run(
                [f"{o}:0" for o in outputs], {f"{k}:0": v for k, v in feeds.items()}
            )
            frozen = tf1.graph_util.convert_variables_to_constants(
                sess, graph.as_graph_def(), outputs
            )
    written = {n.op for n in frozen.node}
    if tf1.control_flow_v2_enabled():
        assert written & {"While", "StatelessWhile", "If", "StatelessIf"}
        assert not written & graph_def_lib.CONTROL_FLOW_V1
    else:
        assert {"Switch", "Merge"} <= written
    return frozen.SerializeToString(), feeds, outputs, expected


def _run_here(data, feeds, outputs):
    graph_def = tf.GraphDef.FromString(data)
    with tf.Graph().as_default() as graph:
        fetched = tf.import_graph_def(
            graph_def, return_elements=[f"{o}:0" for o in outputs], name=""
        )
        types = {op.type for op in graph.get_operations()}
        assert not types & graph_def_lib.CONTROL_FLOW_V1
        with tf.Session() as sess:
            return fetched, sess.run(fetched, {f"{k}:0": v for k, v in feeds.items()})


def _check(tf1, build, rtol=1e-5, atol=1e-6):
    data, feeds, outputs, expected = _freeze(tf1, build)
    tensors, got = _run_here(data, feeds, outputs)
    for name, t, g, e in zip(outputs, tensors, got, expected, strict=True):
        assert g.dtype == e.dtype, name
        assert g.shape == e.shape, name
        assert t.shape.is_compatible_with(e.shape), name
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, err_msg=name)


def _rnn(cell_kind, with_lengths, time_major, units=4):
    def build(tf1):
        rng = np.random.RandomState(3)
        shape = [6, 3, 5] if time_major else [3, 6, 5]
        x = tf1.placeholder(
            tf1.float32, [None, None, 5] if not time_major else [None, None, 5], "x"
        )
        cell = {
            "lstm": lambda: tf1.nn.rnn_cell.LSTMCell(units),
            "gru": lambda: tf1.nn.rnn_cell.GRUCell(units),
            "basic": lambda: tf1.nn.rnn_cell.BasicRNNCell(units),
        }[cell_kind]()
        feeds = {"x": rng.randn(*shape).astype(np.float32)}
        kwargs = {}
        if with_lengths:
            kwargs["sequence_length"] = tf1.placeholder(tf1.int32, [None], "lengths")
            feeds["lengths"] = np.array([6, 2, 4], np.int32)
        out, state = tf1.nn.dynamic_rnn(cell, x, dtype=tf1.float32, time_major=time_major, **kwargs)
        tf1.identity(out, "out")
        states = state if isinstance(state, tuple) else (state,)
        for i, s in enumerate(states):
            tf1.identity(s, f"state{i}")
        return feeds, ["out"] + [f"state{i}" for i in range(len(states))]

    return build


@pytest.mark.parametrize("with_lengths", [False, True])
@pytest.mark.parametrize("time_major", [False, True])
def test_dynamic_rnn_lstm(tf1, with_lengths, time_major):
    _check(tf1, _rnn("lstm", with_lengths, time_major))


@pytest.mark.parametrize("cell_kind", ["gru", "basic"])
def test_dynamic_rnn_gru_and_basic(tf1, cell_kind):
    _check(tf1, _rnn(cell_kind, True, False))


def test_bidirectional_dynamic_rnn(tf1):
    def build(tf1):
        rng = np.random.RandomState(5)
        x = tf1.placeholder(tf1.float32, [None, 7, 3], "x")
        lengths = tf1.placeholder(tf1.int32, [None], "lengths")
        (fw, bw), (sf, sb) = tf1.nn.bidirectional_dynamic_rnn(
            tf1.nn.rnn_cell.LSTMCell(4),
            tf1.nn.rnn_cell.GRUCell(3),
            x,
            sequence_length=lengths,
            dtype=tf1.float32,
        )
        tf1.concat([fw, tf1.pad(bw, [[0, 0], [0, 0], [0, 1]])], 2, name="out")
        tf1.identity(sf.h, "fw_h")
        tf1.identity(sb, "bw_state")
        feeds = {
            "x": rng.randn(2, 7, 3).astype(np.float32),
            "lengths": np.array([7, 3], np.int32),
        }
        return feeds, ["out", "fw_h", "bw_state"]

    _check(tf1, build)


def test_while_loop_with_conds_inside_and_outside(tf1):
    def build(tf1):
        x = tf1.placeholder(tf1.float32, [None], "x")
        n = tf1.placeholder(tf1.int32, [], "n")

        def body(i, acc, total, ta):
            acc = tf1.cond(
                tf1.equal(i % 2, 0), lambda: acc * 1.5 + x, lambda: acc - tf1.reduce_mean(x)
            )
            total = total + tf1.cast(i, tf1.float32) * tf1.reduce_sum(acc)
            return i + 1, acc, total, ta.write(i, acc)

        ta = tf1.TensorArray(tf1.float32, size=n)
        i, acc, total, ta = tf1.while_loop(
            lambda i, *_: i < n, body, [tf1.constant(0), x, tf1.constant(0.0), ta]
        )
        tf1.identity(acc, "acc")
        tf1.identity(ta.stack(), "stacked")
        picked = tf1.cond(total > 10.0, lambda: total * 2.0, lambda: -total, name="picked")
        tf1.identity(picked, "picked_out")
        tf1.identity(i, "count")
        return {"x": np.array([0.5, -1.0, 2.0], np.float32), "n": np.int32(5)}, [
            "acc",
            "stacked",
            "picked_out",
            "count",
        ]

    _check(tf1, build)


def test_cond_on_a_fed_predicate_both_ways(tf1):
    def build(tf1, flag):
        def inner(tf1):
            p = tf1.placeholder(tf1.bool, [], "p")
            x = tf1.placeholder(tf1.float32, [2], "x")
            a, b = tf1.cond(p, lambda: (x + 1.0, tf1.constant(3)), lambda: (x * x, tf1.constant(4)))
            tf1.identity(a, "a")
            tf1.identity(b, "b")
            return {"p": np.bool_(flag), "x": np.array([2.0, -3.0], np.float32)}, ["a", "b"]

        return inner

    _check(tf1, build(tf1, True))
    _check(tf1, build(tf1, False))


def test_nested_while_loops(tf1):
    def build(tf1):
        m = tf1.placeholder(tf1.int32, [], "m")

        def outer(i, s):
            j, t = tf1.while_loop(
                lambda j, t: j < i, lambda j, t: (j + 1, t + tf1.cast(j * i, tf1.float32)), [0, s]
            )
            return i + 1, t * 0.5

        _, s = tf1.while_loop(lambda i, s: i < m, outer, [tf1.constant(0), tf1.constant(1.0)])
        tf1.identity(s, "s")
        return {"m": np.int32(6)}, ["s"]

    _check(tf1, build)


def test_map_fn(tf1):
    def build(tf1):
        x = tf1.placeholder(tf1.float32, [None, 3], "x")
        w = tf1.get_variable("w", [3, 2])
        tf1.identity(tf1.map_fn(lambda row: tf1.tanh(tf1.tensordot(row, w, 1)), x), "y")
        return {"x": np.random.RandomState(1).randn(4, 3).astype(np.float32)}, ["y"]

    _check(tf1, build)


# --- malformed frames ----------------------------------------------------------------------
def _node(graph_def, name, op, inputs=(), **attrs):
    node = graph_def.node.add(name=name, op=op)
    node.input.extend(inputs)
    node.attr["T"].type = 1  # DT_FLOAT
    for key, value in attrs.items():
        if isinstance(value, bytes):
            node.attr[key].s = value
        else:
            node.attr[key].b = value
    return node


def _placeholder(graph_def, name="x"):
    node = graph_def.node.add(name=name, op="Placeholder")
    node.attr["dtype"].type = 1
    return node


def test_next_iteration_without_merge_is_refused():
    graph_def = tf.GraphDef()
    _placeholder(graph_def)
    _node(graph_def, "w/Enter", "Enter", ["x"], frame_name=b"w", is_constant=False)
    _node(graph_def, "w/NextIteration", "NextIteration", ["w/Enter"])
    with tf.Graph().as_default() as graph:
        with pytest.raises(tf.errors.InvalidArgumentError, match="NextIteration"):
            tf.import_graph_def(graph_def)
        assert not graph.get_operations()


def test_exit_without_frame_is_refused():
    graph_def = tf.GraphDef()
    _placeholder(graph_def)
    _node(graph_def, "Exit", "Exit", ["x"])
    with tf.Graph().as_default() as graph:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Exit"):
            tf.import_graph_def(graph_def)
        assert not graph.get_operations()


@pytest.mark.parametrize("cut", ["LoopCond", "Switch", "Enter", "NextIteration", "Merge"])
def test_a_frozen_loop_missing_any_part_is_refused(tf1_v1, cut):
    """A real dynamic_rnn frame with one control-flow node turned into a NoOp-like cut:
    its readers lose their input, which is refused at import, never hangs."""
    data, _, _, _ = _freeze(tf1_v1, _rnn("basic", False, False))
    graph_def = tf.GraphDef.FromString(data)
    victim = next(n for n in graph_def.node if n.op == cut)
    victim.op = "Identity"
    del victim.input[1:]
    with tf.Graph().as_default():
        with pytest.raises((tf.errors.InvalidArgumentError, ValueError)):
            tf.import_graph_def(graph_def)


def test_missing_op_types_are_listed_at_once():
    graph_def = tf.GraphDef()
    _placeholder(graph_def)
    _node(graph_def, "a", "NoSuchOpA", ["x"])
    _node(graph_def, "b", "NoSuchOpB", ["a"])
    _node(graph_def, "w/Enter", "Enter", ["b"], frame_name=b"w", is_constant=True)
    with tf.Graph().as_default():
        with pytest.raises(tf.errors.NotFoundError, match="NoSuchOpA.*NoSuchOpB"):
            tf.import_graph_def(graph_def)


@pytest.mark.parametrize("cell_kind", ["lstm", "gru"])
def test_gradients_through_an_imported_dynamic_rnn_are_tfs(tf1, cell_kind):
    build = _rnn(cell_kind, True, False)
    graph = tf1.Graph()
    with graph.as_default():
        tf1.set_random_seed(7)
        feeds, outputs = build(tf1)
        x = graph.get_tensor_by_name("x:0")
        # The GraphDef before TF's gradient rewrites a v2 loop's body to keep its history.
        forward = graph.as_graph_def()
        loss = tf1.reduce_sum(tf1.square(graph.get_tensor_by_name("out:0")))
        loss += tf1.reduce_sum(graph.get_tensor_by_name("state0:0"))
        (dx,) = tf1.gradients(loss, [x])
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            fed = {f"{k}:0": v for k, v in feeds.items()}
            want = sess.run(dx, fed)
            frozen = tf1.graph_util.convert_variables_to_constants(sess, forward, outputs)
    with tf.Graph().as_default() as here:
        out, state = tf.import_graph_def(
            frozen.SerializeToString(), return_elements=["out:0", "state0:0"], name=""
        )
        loss = tf.reduce_sum(tf.square(out)) + tf.reduce_sum(state)
        (dx,) = tf.gradients(loss, [here.get_tensor_by_name("x:0")])
        with tf.Session() as sess:
            got = sess.run(dx, fed)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def _calling(graph_def, name, op, function):
    node = graph_def.node.add(name=name, op=op)
    node.input.append("x")
    node.attr["f" if op.endswith("Call") else "body"].func.name = function
    if not op.endswith("Call"):
        node.attr["cond"].func.name = function
    return node


def test_nodes_calling_functions_other_than_control_flow_are_named_at_once():
    graph_def = tf.GraphDef()
    _placeholder(graph_def)
    function = graph_def.library.function.add()
    function.signature.name = "f"
    function.signature.input_arg.add(name="a", type=1)
    function.signature.output_arg.add(name="out", type=1)
    inner = function.node_def.add(name="g", op="NoSuchOpInside", input=["a"])
    inner.attr["T"].type = 1
    function.ret["out"] = "g:y:0"
    _calling(graph_def, "call", "PartitionedCall", "f")
    _calling(graph_def, "loop", "While", "not_in_library")
    with tf.Graph().as_default() as graph:
        with pytest.raises(tf.errors.UnimplementedError) as info:
            tf.import_graph_def(graph_def)
        assert not graph.get_operations()
    message = str(info.value)
    assert "'call' (PartitionedCall)" in message and "'loop' (While)" in message
    assert "'NoSuchOpInside' (1 node, e.g. 'f/g')" in message


def _mutations(graph_def, rng, count):
    """``count`` copies of ``graph_def``, each with one control-flow node damaged: an
    input dropped or rewired, its op type swapped for another, its frame renamed, or
    the node deleted."""
    kinds = sorted(graph_def_lib.CONTROL_FLOW_V1)
    names = [n.name for n in graph_def.node]
    for _ in range(count):
        damaged = tf.GraphDef()
        damaged.CopyFrom(graph_def)
        targets = [n for n in damaged.node if n.op in graph_def_lib.CONTROL_FLOW_V1]
        node = targets[rng.integers(len(targets))]
        how = rng.integers(5)
        if how == 0 and len(node.input):
            del node.input[rng.integers(len(node.input))]
        elif how == 1 and len(node.input):
            node.input[rng.integers(len(node.input))] = names[rng.integers(len(names))]
        elif how == 2:
            node.op = kinds[rng.integers(len(kinds))]
        elif how == 3:
            node.attr["frame_name"].s = b"elsewhere"
        else:
            keep = [n for n in damaged.node if n.name != node.name]
            del damaged.node[:]
            damaged.node.extend(keep)
        yield damaged


def test_damaged_frames_are_refused_at_import_never_crash(tf1_v1):
    """Fuzz: a frozen dynamic_rnn with a cond, its control flow damaged at random, is
    imported or refused with TF's error classes (never another exception or a hang)."""

    def build(tf1):
        x = tf1.placeholder(tf1.float32, [None, 4, 3], "x")
        lengths = tf1.placeholder(tf1.int32, [None], "lengths")
        out, _ = tf1.nn.dynamic_rnn(
            tf1.nn.rnn_cell.GRUCell(2), x, sequence_length=lengths, dtype=tf1.float32
        )
        tf1.identity(tf1.cond(lengths[0] > 2, lambda: out * 2.0, lambda: out), "y")
        feeds = {"x": np.zeros((1, 4, 3), np.float32), "lengths": np.array([3], np.int32)}
        return feeds, ["y"]

    data, _, _, _ = _freeze(tf1_v1, build)
    rng = np.random.default_rng(30)
    refused = 0
    for damaged in _mutations(tf.GraphDef.FromString(data), rng, 60):
        with tf.Graph().as_default():
            try:
                tf.import_graph_def(damaged, name="")
            except (tf.errors.InvalidArgumentError, tf.errors.NotFoundError, ValueError, TypeError):
                refused += 1
    assert refused >= 30


def test_scan_and_a_bounded_loop_over_a_growing_array(tf1):
    def build(tf1):
        x = tf1.placeholder(tf1.float32, [None, 2], "x")
        tf1.identity(tf1.scan(lambda acc, row: acc * 0.5 + row, x), "scanned")
        ta = tf1.TensorArray(tf1.float32, size=0, dynamic_size=True)
        _, ta = tf1.while_loop(
            lambda i, ta: i < 100,
            lambda i, ta: (i + 1, ta.write(i, tf1.reduce_sum(x) * tf1.cast(i, tf1.float32))),
            (tf1.constant(0), ta),
            maximum_iterations=tf1.shape(x)[0] + 2,
        )
        tf1.identity(ta.stack(), "grown")
        tf1.identity(ta.size(), "size")
        feeds = {"x": np.random.RandomState(6).randn(5, 2).astype(np.float32)}
        return feeds, ["scanned", "grown", "size"]

    _check(tf1, build)


def test_an_imported_loop_under_a_prefix_reads_input_map(tf1):
    data, feeds, outputs, _ = _freeze(tf1, _rnn("lstm", True, True))
    x_value = feeds["x"] * 2.0
    with tf1.Session(graph=tf1.Graph()) as sess:
        (want,) = tf1.import_graph_def(
            tf1.GraphDef.FromString(data), return_elements=["out:0"], name="m"
        )
        want = sess.run(want, {"m/x:0": x_value, "m/lengths:0": feeds["lengths"]})
    with tf.Graph().as_default() as graph:
        x = tf.placeholder(tf.float32, [None, None, 5], name="mine")
        (out,) = tf.import_graph_def(
            tf.GraphDef.FromString(data),
            input_map={"x:0": x * 2.0},
            return_elements=["out:0"],
            name="m",
        )
        assert out.name.startswith("m/")
        outside = {op.name for op in graph.get_operations() if not op.name.startswith("m/")}
        assert outside == {"mine", "mul", "Const"}  # the feed's ``x * 2.0``
        with tf.Session() as sess:
            got = sess.run(out, {x: feeds["x"], "m/lengths:0": feeds["lengths"]})
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_a_cond_written_with_raw_switch_and_merge_and_its_taken_index(tf1_v1):
    """Switch/Merge without tf.cond's pivots, and Merge's second output (the index of
    the branch taken), for both values of the predicate."""

    def build(flag):
        def inner(tf1):
            p = tf1.placeholder(tf1.bool, [], "p")
            x = tf1.placeholder(tf1.float32, [3], "x")
            false, true = tf1.raw_ops.Switch(data=x, pred=p)
            value, index = tf1.raw_ops.Merge(inputs=[false * 2.0, tf1.exp(true)])
            tf1.identity(value, "value")
            tf1.identity(index, "index")
            feeds = {"p": np.bool_(flag), "x": np.array([0.5, -1.0, 2.0], np.float32)}
            return feeds, ["value", "index"]

        return inner

    _check(tf1_v1, build(True))
    _check(tf1_v1, build(False))
