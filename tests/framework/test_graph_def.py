"""``Graph.as_graph_def``, ``tf.import_graph_def`` and ``tf.train.write_graph``."""

from __future__ import annotations

import numpy as np
import pytest
from google.protobuf import text_format

import dataflow as tf


def _model():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    with tf.device("/cpu:0"):
        w = tf.constant(np.arange(6, dtype=np.float32).reshape(3, 2), name="w")
    with tf.name_scope("layer"):
        y = tf.nn.relu(tf.matmul(x, w) - 4.0, name="out")
    with tf.control_dependencies([y.op]):
        z = tf.identity(y * 2.0, name="z")
    return x, y, z


def test_graph_def_holds_our_names_types_inputs_and_devices():
    with tf.Graph().as_default() as g:
        _model()
        graph_def = g.as_graph_def()
    assert isinstance(graph_def, tf.GraphDef)
    assert [n.name for n in graph_def.node] == [op.name for op in g.get_operations()]
    for node in graph_def.node:
        op = g.get_operation_by_name(node.name)
        assert node.op == op.type
        assert node.device == op.device
        data = [t.name[:-2] if t.name.endswith(":0") else t.name for t in op.inputs]
        assert list(node.input) == data + [f"^{c.name}" for c in op.control_inputs]
    w = next(n for n in graph_def.node if n.name == "w")
    assert "CPU:0" in w.device
    assert any(
        i.startswith("^layer/out") for i in next(n for n in graph_def.node if n.name == "z").input
    )


def test_add_shapes_and_from_version():
    with tf.Graph().as_default() as g:
        x, y, _ = _model()
        shapes = {n.name: n.attr["_output_shapes"] for n in g.as_graph_def(add_shapes=True).node}
        assert [d.size for d in shapes["layer/out"].list.shape[0].dim] == [-1, 2]
        assert "_output_shapes" not in g.as_graph_def().node[0].attr
        version = g.version
        tf.add(y, 1.0, name="later")
        assert [n.name for n in g.as_graph_def(from_version=version).node][-1] == "later"
        assert len(g.as_graph_def(from_version=version).node) < len(g.as_graph_def().node)


def test_import_rebuilds_a_graph_that_computes_the_same():
    feed = np.array([[1.0, 2.0, 3.0], [0.0, -1.0, 4.0]], np.float32)
    with tf.Graph().as_default() as g:
        x, _, z = _model()
        graph_def = g.as_graph_def()
        with tf.Session() as sess:
            expected = sess.run(z, {x: feed})
    with tf.Graph().as_default() as g2:
        out_z, out_x = tf.import_graph_def(graph_def, return_elements=["z:0", "x:0"])
        assert out_z.name == "import/z:0" and out_z.shape.as_list() == [None, 2]
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(out_z, {out_x: feed}), expected)
        # Imported twice: the prefix is made unique, as a name scope is.
        (again,) = tf.import_graph_def(graph_def, return_elements=["layer/out"])
        assert again.name == "import_1/layer/out"
        assert g2.get_operation_by_name("import/w").device == g.get_operation_by_name("w").device


def test_import_with_input_map_and_serialized_bytes():
    with tf.Graph().as_default() as g:
        x, _, z = _model()
        serialized = g.as_graph_def().SerializeToString()
    with tf.Graph().as_default():
        mine = tf.constant([[1.0, 1.0, 1.0]])
        (out,) = tf.import_graph_def(
            serialized, input_map={"x:0": mine}, return_elements=["z:0"], name="net"
        )
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(out), [[4.0, 10.0]])


def test_import_errors_are_clear():
    with tf.Graph().as_default() as g:
        _model()
        graph_def = g.as_graph_def()
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="names no node"):
            tf.import_graph_def(graph_def, return_elements=["nope:0"])
        with pytest.raises(ValueError, match="input_map key 'nope:0'"):
            tf.import_graph_def(graph_def, input_map={"nope": tf.constant(1.0)})
    with tf.Graph().as_default() as g:
        tf.while_loop(lambda i: i < 3, lambda i: i + 1, [0])
        loop_def = g.as_graph_def()
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="attributes a GraphDef cannot hold"):
            tf.import_graph_def(loop_def)


def test_import_orders_unsorted_nodes_and_rejects_cycles():
    with tf.Graph().as_default() as g:
        _model()
        graph_def = g.as_graph_def()
    shuffled = tf.GraphDef()
    shuffled.node.extend(reversed(graph_def.node))
    with tf.Graph().as_default() as g2:
        tf.import_graph_def(shuffled, name="")
        assert sorted(op.name for op in g2.get_operations()) == sorted(
            n.name for n in graph_def.node
        )
    cyclic = tf.GraphDef()
    a, b = cyclic.node.add(name="a", op="Identity"), cyclic.node.add(name="b", op="Identity")
    a.input.append("b")
    b.input.append("a")
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="cycle"):
            tf.import_graph_def(cyclic)


def test_write_graph_text_and_binary(tmp_path):
    with tf.Graph().as_default() as g:
        _model()
        text_path = tf.train.write_graph(g, str(tmp_path / "out"), "graph.pbtxt")
        binary_path = tf.io.write_graph(g.as_graph_def(), str(tmp_path), "graph.pb", as_text=False)
    with open(text_path) as f:
        from_text = text_format.Parse(f.read(), tf.GraphDef())
    with open(binary_path, "rb") as f:
        from_binary = tf.GraphDef.FromString(f.read())
    assert from_text == from_binary == g.as_graph_def()


@pytest.mark.tf
def test_tensorflow_reads_our_graph_def():
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    with tf.Graph().as_default() as g:
        _model()
        serialized = g.as_graph_def().SerializeToString()
    theirs = tf1.GraphDef.FromString(serialized)
    assert [n.name for n in theirs.node] == [op.name for op in g.get_operations()]


# --- malformed GraphDefs (issue 29): TF1's classes at import, not raw KeyErrors at run ----------
_CONST = (
    'node { name: "a" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } } '
    'attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 2.0 } } } }'
)


def _parse(text):
    return text_format.Parse(text, tf.GraphDef())


@pytest.mark.parametrize(
    ("text", "error", "match"),
    [
        ('node { name: "n" op: "NoSuchOp" }', tf.errors.NotFoundError, "'NoSuchOp'"),
        (
            _CONST + ' node { name: "b" op: "Identity" input: "a:3" '
            'attr { key: "T" value { type: DT_FLOAT } } }',
            ValueError,
            "'a' \\(op Const\\) has 1 outputs",
        ),
        (
            'node { name: "p" op: "Placeholder" attr { key: "dtype" value { type: 99 } } }',
            ValueError,
            "unknown DataType enum 99",
        ),
        ('node { name: "p" op: "Placeholder" }', ValueError, "'p'.*lacks the attr 'dtype'"),
        (
            _CONST + ' node { name: "s" op: "AddV2" input: "a" '
            'attr { key: "T" value { type: DT_FLOAT } } }',
            ValueError,
            "'AddV2' takes 2 inputs, got 1",
        ),
        (_CONST + " " + _CONST, ValueError, "'a' appears more than once"),
    ],
    ids=["unknown_op", "input_index", "dtype_enum", "no_dtype", "add_arity", "same_name"],
)
def test_a_malformed_graph_def_is_refused_at_import(text, error, match):
    with tf.Graph().as_default():
        with pytest.raises(error, match=match):
            tf.import_graph_def(_parse(text), name="")


@pytest.mark.parametrize("value", ["node { }", 3, None, b"\xff\xff\xff"])
def test_import_graph_def_of_something_else_is_a_type_error(value):
    with tf.Graph().as_default(), pytest.raises(TypeError, match="GraphDef"):
        tf.import_graph_def(value)


def test_import_graph_def_takes_tensorflows_own_graph_def_and_serialized_bytes():
    tf1 = pytest.importorskip("tensorflow").compat.v1
    theirs = text_format.Parse(_CONST, tf1.GraphDef())
    for given in (theirs, theirs.SerializeToString()):
        with tf.Graph().as_default():
            (a,) = tf.import_graph_def(given, return_elements=["a:0"], name="")
            with tf.Session() as sess:
                assert sess.run(a) == 2.0


def test_input_map_of_another_dtype_is_refused():
    text = _CONST + (
        ' node { name: "b" op: "Identity" input: "a" attr { key: "T" value { type: DT_FLOAT } } }'
    )
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="'a:0' a int32 tensor.*expects float32"):
            tf.import_graph_def(_parse(text), input_map={"a:0": tf.constant(1)}, name="")
        (b,) = tf.import_graph_def(
            _parse(text), input_map={"a:0": tf.constant(5.0)}, return_elements=["b:0"]
        )
        with tf.Session() as sess:
            assert sess.run(b) == 5.0
