"""GraphDefs both ways with TensorFlow: frozen graphs ``tensorflow.compat.v1`` wrote run
here with TF's outputs, graphs we freeze run in TF with ours, and ``tf.graph_util``
against TF's own."""

from __future__ import annotations

import numpy as np
import pytest
from tensorboard.util import tensor_util

import dataflow as tf

pytestmark = pytest.mark.tf


@pytest.fixture(scope="module")
def tf1():
    tensorflow = pytest.importorskip("tensorflow")
    tensorflow.compat.v1.disable_eager_execution()
    return tensorflow.compat.v1


def _mlp(tf):
    x = tf.placeholder(tf.float32, [None, 8], name="x")
    w1 = tf.get_variable("w1", [8, 16])
    b1 = tf.get_variable("b1", [16], initializer=tf.random_normal_initializer(seed=2))
    h = tf.nn.relu(tf.matmul(x, w1) + b1)
    w2 = tf.get_variable("w2", [16, 3])
    b2 = tf.get_variable("b2", [3], initializer=tf.constant_initializer(0.5))
    tf.nn.softmax(tf.nn.bias_add(tf.matmul(h, w2), b2), name="y")
    return (4, 8), 16


def _cnn(tf):
    x = tf.placeholder(tf.float32, [None, 12, 12, 3], name="x")
    k = tf.get_variable("k", [3, 3, 3, 4])
    kb = tf.get_variable("kb", [4], initializer=tf.constant_initializer(0.1))
    h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, k, [1, 1, 1, 1], "SAME"), kb))
    h = tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
    h = tf.nn.avg_pool(h, [1, 2, 2, 1], [1, 1, 1, 1], "SAME")
    h = tf.reshape(h, [-1, 6 * 6 * 4])
    w = tf.get_variable("w", [144, 5])
    logits = tf.matmul(h, w)
    tf.identity(tf.nn.log_softmax(logits) - tf.reduce_mean(logits, axis=1, keepdims=True), "y")
    return (2, 12, 12, 3), 144


def _mobile(tf):
    """MobileNet's blocks: TF writes FusedBatchNormV3, Relu6, DepthwiseConv2dNative and
    LeakyRelu, which dataflow builds from other ops."""
    x = tf.placeholder(tf.float32, [None, 8, 8, 3], name="x")
    k = tf.get_variable("k", [3, 3, 3, 4])
    h = tf.nn.conv2d(x, k, [1, 1, 1, 1], "SAME")
    scale = tf.get_variable("scale", [4], initializer=tf.random_uniform_initializer(0.5, 1.5))
    offset = tf.get_variable("offset", [4])
    mean = tf.get_variable("mean", [4])
    var = tf.get_variable("var", [4], initializer=tf.random_uniform_initializer(0.5, 2.0))
    h, _, _ = tf.nn.fused_batch_norm(h, scale, offset, mean, var, is_training=False)
    h = tf.nn.relu6(h)
    d = tf.get_variable("d", [3, 3, 4, 2])
    h = tf.nn.leaky_relu(tf.nn.depthwise_conv2d(h, d, [1, 2, 2, 1], "SAME"), 0.1)
    w = tf.get_variable("w", [4 * 4 * 8, 3])
    tf.nn.softmax(tf.matmul(tf.reshape(h, [-1, 4 * 4 * 8]), w), name="y")
    return (2, 8, 8, 3), 128


def _lstm(tf):
    x = tf.placeholder(tf.float32, [None, 5, 4], name="x")
    outputs, _ = tf.nn.dynamic_rnn(tf.nn.rnn_cell.LSTMCell(6), x, dtype=tf.float32)
    tf.identity(outputs[:, -1], name="y")
    return (3, 5, 4), 10


def _frozen(lib, model, seed=1):
    """``model`` built and initialized in ``lib`` (dataflow or tf.compat.v1), frozen by
    that library's ``convert_variables_to_constants``: the ``.pb`` bytes and the
    input's shape, the longest sum of products of one output (for the tolerance)."""
    with lib.Graph().as_default() as g:
        lib.set_random_seed(seed)
        shape, terms = model(lib)
        with lib.Session() as sess:
            sess.run(lib.global_variables_initializer())
            frozen = lib.graph_util.convert_variables_to_constants(sess, g.as_graph_def(), ["y"])
    return frozen.SerializeToString(), shape, terms


def _run(lib, pb, feed):
    with lib.Graph().as_default():
        graph_def = lib.GraphDef.FromString(pb)
        (y,) = lib.import_graph_def(graph_def, return_elements=["y:0"], name="")
        with lib.Session() as sess:
            return sess.run(y, {"x:0": feed})


def _close(got, want, terms):
    # float32 sums of ``terms`` products, each rounded once, and a few transcendental ops
    eps = np.finfo(np.float32).eps
    np.testing.assert_allclose(got, want, rtol=4 * terms * eps, atol=4 * terms * eps)


@pytest.mark.parametrize("model", [_mlp, _cnn, _mobile], ids=["mlp", "cnn", "mobile"])
def test_a_graph_tf1_froze_runs_here_with_tf_outputs(tf1, tmp_path, model):
    pb, shape, terms = _frozen(tf1, model)
    if model is _mobile:  # TF's primitives that are composites here
        written = {n.op for n in tf1.GraphDef.FromString(pb).node}
        assert {"FusedBatchNormV3", "Relu6", "DepthwiseConv2dNative", "LeakyRelu"} <= written
    path = tmp_path / "frozen.pb"
    path.write_bytes(pb)
    feed = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    with tf.gfile.GFile(str(path), "rb") as f:
        ours = _run(tf, f.read(), feed)
    _close(ours, _run(tf1, pb, feed), terms)


@pytest.mark.parametrize("model", [_mlp, _cnn], ids=["mlp", "cnn"])
def test_a_graph_we_froze_runs_in_tf_with_our_outputs(tf1, model):
    pb, shape, terms = _frozen(tf, model)
    feed = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    graph_def = tf1.GraphDef.FromString(pb)
    assert {n.op for n in graph_def.node} >= {"Const", "Identity", "Placeholder"}
    assert not {n.op for n in graph_def.node} & {"VarHandleOp", "ReadVariableOp"}
    _close(_run(tf1, pb, feed), _run(tf, pb, feed), terms)


def test_tf_imports_our_graph_with_type_attrs_and_only_its_attrs(tf1):
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        parts = tf.split(tf.concat([x, x * 2.0], axis=1), 2, axis=1)
        tf.nn.softmax(tf.transpose(parts[1]), name="y")
        graph_def = g.as_graph_def()
    nodes = {n.name: n for n in graph_def.node}
    assert nodes["concat"].attr["N"].i == 2
    assert nodes["concat"].attr["Tidx"].type == tf1.int32.as_datatype_enum
    assert nodes["y"].attr["T"].type == tf1.float32.as_datatype_enum
    assert "axis" not in nodes["y"].attr and nodes["y"].attr["_df_axis"].i == -1
    feed = np.arange(6, dtype=np.float32).reshape(2, 3)
    pb = graph_def.SerializeToString()
    np.testing.assert_allclose(_run(tf1, pb, feed), _run(tf, pb, feed), rtol=1e-6)


def _frozen_lstm(tf1, control_flow_v2):
    """TF1's frozen dynamic_rnn, its while loop written as control flow v1 (TF 1.15's
    default: Enter/Merge/Switch/NextIteration/Exit and TensorArrayV3) or v2 (a ``While``
    op calling functions of the GraphDef's library, over TensorLists)."""
    was = tf1.control_flow_v2_enabled()
    (tf1.enable_control_flow_v2 if control_flow_v2 else tf1.disable_control_flow_v2)()
    try:
        return _frozen(tf1, _lstm)[0]
    finally:
        (tf1.enable_control_flow_v2 if was else tf1.disable_control_flow_v2)()


@pytest.mark.filterwarnings("ignore:`tf.nn.rnn_cell.LSTMCell` is deprecated")
def test_a_tf1_lstm_in_control_flow_v1_runs_here_with_tf_outputs(tf1):
    """TF 1.15's default: the while-loop frame and TensorArrayV3 ops are rebuilt as our
    while_loop over tensor lists (more loops and conds: tests/ops/test_tf_control_flow.py)."""
    pb = _frozen_lstm(tf1, control_flow_v2=False)
    written = {n.op for n in tf1.GraphDef.FromString(pb).node}
    assert {"Enter", "Exit", "LoopCond", "Merge", "NextIteration", "Switch"} <= written
    assert "TensorArrayV3" in written
    feed = np.random.default_rng(2).standard_normal((3, 5, 4)).astype(np.float32)
    _close(_run(tf, pb, feed), _run(tf1, pb, feed), 10 * 5)


@pytest.mark.filterwarnings("ignore:`tf.nn.rnn_cell.LSTMCell` is deprecated")
def test_a_tf1_lstm_in_control_flow_v2_runs_here_with_tf_outputs(tf1):
    """Control flow v2: a ``StatelessWhile`` calling functions of the GraphDef's
    library, over TensorLists, rebuilt as our while_loop."""
    pb = _frozen_lstm(tf1, control_flow_v2=True)
    assert "StatelessWhile" in {n.op for n in tf1.GraphDef.FromString(pb).node}
    feed = np.random.default_rng(3).standard_normal((3, 5, 4)).astype(np.float32)
    _close(_run(tf, pb, feed), _run(tf1, pb, feed), 10 * 5)


def test_extract_sub_graph_and_remove_training_nodes_as_tf(tf1):
    with tf1.Graph().as_default() as g:
        x = tf1.placeholder(tf1.float32, [None, 2], name="x")
        checked = tf1.check_numerics(x * 2.0, "bad")
        a = tf1.identity(tf1.add(checked, x, name="sum"), name="a")
        with tf1.control_dependencies([a]):
            b = tf1.identity(a + 1.0, name="b")
        c = tf1.identity(tf1.identity(b), name="c")
        tf1.identity(x, name="unused")
        with g.colocate_with(b):
            tf1.identity(tf1.stop_gradient(b), name="beside_b")
        del c
        graph_def = g.as_graph_def()
    ours_def = tf.GraphDef.FromString(graph_def.SerializeToString())

    def shape(gd):
        return [(n.name, n.op, list(n.input)) for n in gd.node]

    for dest in (["c"], ["a", "unused"], ["beside_b"]):
        want = tf1.graph_util.extract_sub_graph(graph_def, dest)
        assert shape(tf.graph_util.extract_sub_graph(ours_def, dest)) == shape(want)
    for protected in (None, ["c"]):
        want = tf1.graph_util.remove_training_nodes(graph_def, protected)
        got = tf.graph_util.remove_training_nodes(ours_def, protected)
        assert shape(got) == shape(want)
    assert tf.compat.v1.graph_util.extract_sub_graph is tf.graph_util.extract_sub_graph
    with pytest.raises(TypeError, match="list of node names"):
        tf.graph_util.extract_sub_graph(ours_def, "c")
    with pytest.raises(AssertionError, match="nope is not in graph"):
        tf.graph_util.extract_sub_graph(ours_def, ["nope"])
    with pytest.raises(TypeError, match="GraphDef"):
        tf.graph_util.remove_training_nodes(b"not a proto")


def test_convert_variables_to_constants_whitelist_and_blacklist():
    with tf.Graph().as_default() as g:
        _mlp(tf)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            w1 = sess.run(g.get_tensor_by_name("w1/Read/ReadVariableOp:0"))
            graph_def = g.as_graph_def()
            only = tf.graph_util.convert_variables_to_constants(
                sess, graph_def, ["y"], variable_names_whitelist=["w1"]
            )
            but = tf.graph_util.convert_variables_to_constants(
                sess, graph_def, ["y"], variable_names_blacklist=["w1"]
            )
    ops = {n.name: n.op for n in only.node}
    assert ops["w1"] == "Const" and ops["w2"] == "VarHandleOp"
    node = next(n for n in only.node if n.name == "w1")
    np.testing.assert_array_equal(tensor_util.make_ndarray(node.attr["value"].tensor), w1)
    ops = {n.name: n.op for n in but.node}
    assert ops["w1"] == "VarHandleOp" and ops["w2"] == "Const"
    assert not {"Assign", "AssignVariableOp", "RandomUniform"} & set(ops.values())


def _table_rows():
    from tests.ops.op_table import OP_TABLE

    return [row for row in OP_TABLE if row.tf_parity]


def _program(lib, row):
    """The row's op built in ``lib`` on named placeholders: (GraphDef bytes, output
    names, the outputs' values), or None when ``lib`` cannot build it."""
    with lib.Graph().as_default() as g:
        phs = [
            lib.placeholder(np.asarray(a).dtype, np.shape(a), name=f"in{i}")
            for i, a in enumerate(row.args)
        ]
        try:
            outs = row.build(lib, *phs)
        except Exception:  # a row TF1 builds otherwise (its own parity test says how)
            return None
        outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
        with lib.Session() as sess:
            values = sess.run(outs, dict(zip(phs, row.args, strict=True)))
        return g.as_graph_def().SerializeToString(), [o.name for o in outs], values


def _imported(lib, pb, names, row):
    with lib.Graph().as_default():
        outs = lib.import_graph_def(lib.GraphDef.FromString(pb), return_elements=names, name="")
        with lib.Session() as sess:
            return sess.run(outs, {f"in{i}:0": a for i, a in enumerate(row.args)})


def _same(got, want, row):
    for a, b in zip(got, want, strict=True):
        if np.asarray(b).dtype == object:
            assert np.asarray(a).tolist() == np.asarray(b).tolist()
        else:
            np.testing.assert_allclose(a, b, rtol=row.tf_rtol, atol=row.tf_atol)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")
def test_every_op_table_row_tf_wrote_runs_here_or_is_named_as_missing(tf1):
    """Each op of the op table, as TF1 writes it: our import gives TF's values, or one
    NotFoundError / UnimplementedError naming what we cannot build; never another value."""
    ran, refused = 0, []
    for row in _table_rows():
        program = _program(tf1, row)
        if program is None:
            continue
        pb, names, want = program
        try:
            got = _imported(tf, pb, names, row)
        except (tf.errors.NotFoundError, tf.errors.UnimplementedError) as exc:
            assert "import_graph_def:" in str(exc)
            refused.append(row.name)
            continue
        _same(got, want, row)
        ran += 1
    assert ran >= 315, (ran, refused)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")
def test_every_op_table_row_we_wrote_runs_in_tf_or_tf_refuses_it(tf1):
    """Each op of the op table, as we write it: TF imports it and computes our values,
    or TF refuses the GraphDef (a type of ours TF lacks, a node whose TF op would compute
    something else); never another value."""
    ran, refused = 0, []
    for row in _table_rows():
        program = _program(tf, row)
        if program is None:
            continue
        pb, names, want = program
        try:
            got = _imported(tf1, pb, names, row)
        except (
            ValueError,
            tf1.errors.NotFoundError,
            tf1.errors.InvalidArgumentError,
            tf1.errors.UnimplementedError,  # an op TF removed from GraphDefs (MatrixExponential)
        ):
            refused.append(row.name)
            continue
        _same(got, want, row)
        ran += 1
    assert ran >= 310, (ran, refused)
