"""Fuzzing the loaders of TF1's model files, ``.meta`` (``import_meta_graph``) and
``saved_model.pb`` (``saved_model.loader.load``), as the checkpoint readers are fuzzed
(``tests/ops/state/test_checkpoint_format.py``, whose byte edits are reused here):
whatever the bytes, loading gives a graph or a ``DataLossError``,
``InvalidArgumentError`` or ``NotFoundError``; never a crash, a hang, another exception,
or code of the file run.

The templates are a small model's MetaGraph and SavedModel written here (collections of
every kind, a saver, a signature, constants). Each example damages a copy: raw bytes
(truncations, bit flips, inserted and deleted bytes), a length-delimited field's length
rewritten to lie, another message type in the file's place, and MetaGraphs crafted with
bad nodes (unknown or code-running op types, inputs naming nothing or out of range,
duplicates and cycles, constants whose shape lies about their size, attrs of the wrong
kind) or bad collections (a ``VariableDef`` naming nothing, undecodable bytes).
"""

from __future__ import annotations

import os
import shutil
import tempfile

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from tensorboard.compat.proto import event_pb2, graph_pb2, meta_graph_pb2, variable_pb2

import dataflow as tf
from dataflow.train import tf_protos
from tests.ops.state.test_checkpoint_format import _BYTE_EDIT, FUZZ, _apply

CLEAN = (tf.errors.DataLossError, tf.errors.InvalidArgumentError, tf.errors.NotFoundError)


def _model():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    w = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2), name="w")
    b = tf.get_variable("b", [2], initializer=tf.zeros_initializer())
    y = tf.nn.relu(tf.matmul(x, w) + b, name="y")
    tf.add_to_collection("outputs", y)
    tf.add_to_collection("notes", "a note")
    tf.add_to_collection("numbers", 3)
    tf.add_to_collection("rates", 0.5)
    return x, y


@pytest.fixture(scope="module")
def templates():
    directory = tempfile.mkdtemp(prefix="tf1-files-fuzz-")
    with tf.Graph().as_default():
        x, y = _model()
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            prefix = saver.save(sess, os.path.join(directory, "model"))
            tf.saved_model.simple_save(sess, os.path.join(directory, "sm"), {"x": x}, {"y": y})
    with open(prefix + ".meta", "rb") as f:
        meta = f.read()
    with open(os.path.join(directory, "sm", "saved_model.pb"), "rb") as f:
        saved = f.read()
    yield {"directory": directory, "prefix": prefix, "meta": meta, "saved_model": saved}
    shutil.rmtree(directory, ignore_errors=True)


def _load_meta(templates, data: bytes) -> None:
    path = os.path.join(templates["directory"], "case.meta")
    with open(path, "wb") as f:
        f.write(data)
    with tf.Graph().as_default():
        try:
            saver = tf.train.import_meta_graph(path)
            if saver is not None:
                with tf.Session() as sess:
                    saver.restore(sess, templates["prefix"])
        except CLEAN:
            pass
        except ValueError as exc:  # TF1's own for a SaverDef over a missing checkpoint
            assert "not a valid checkpoint" in str(exc), repr(exc)


def _load_saved_model(templates, data: bytes) -> None:
    directory = tempfile.mkdtemp(dir=templates["directory"])
    try:
        shutil.copytree(
            os.path.join(templates["directory"], "sm", "variables"),
            os.path.join(directory, "variables"),
        )
        with open(os.path.join(directory, "saved_model.pb"), "wb") as f:
            f.write(data)
        with tf.Graph().as_default(), tf.Session() as sess:
            try:
                tf.saved_model.loader.load(sess, ["serve"], directory)
            except CLEAN:
                pass
            except RuntimeError as exc:  # TF1's own: no MetaGraph has the tags
                assert "could not be found" in str(exc), repr(exc)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


LOADERS = {"meta": _load_meta, "saved_model": _load_saved_model}


def test_the_templates_load(templates):
    _load_meta(templates, templates["meta"])
    _load_saved_model(templates, templates["saved_model"])
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(templates["prefix"] + ".meta")
        with tf.Session() as sess:
            saver.restore(sess, templates["prefix"])
            out = sess.run("y:0", {"x:0": np.ones((1, 3), np.float32)})
    np.testing.assert_array_equal(out, [[6.0, 9.0]])


@FUZZ
@given(edits=st.lists(_BYTE_EDIT, min_size=1, max_size=4), which=st.sampled_from(sorted(LOADERS)))
def test_damaged_bytes_load_cleanly(templates, edits, which):
    LOADERS[which](templates, _apply(templates[which], edits))


def _fields(data: bytes) -> list[tuple[int, int, int]]:
    """``(start of the length varint, its end, the length)`` of each length-delimited
    field at the top level of a message."""
    out, at = [], 0

    def varint(at: int) -> tuple[int, int]:
        value, shift = 0, 0
        while True:
            byte = data[at]
            value |= (byte & 0x7F) << shift
            at, shift = at + 1, shift + 7
            if not byte & 0x80:
                return value, at

    while at < len(data):
        key, at = varint(at)
        kind = key & 7
        if kind == 0:
            _, at = varint(at)
        elif kind == 1:
            at += 8
        elif kind == 5:
            at += 4
        elif kind == 2:
            length, end = varint(at)
            out.append((at, end, length))
            at = end + length
        else:
            break
    return out


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        out.append((value & 0x7F) | (0x80 if value > 0x7F else 0))
        value >>= 7
        if not value:
            return bytes(out)


@FUZZ
@given(
    which=st.sampled_from(sorted(LOADERS)),
    pick=st.floats(0, 1, exclude_max=True),
    length=st.one_of(st.integers(0, 64), st.integers(0, 2**35), st.just(2**63 - 1)),
    nested=st.booleans(),
)
def test_lying_lengths_load_cleanly(templates, which, pick, length, nested):
    """A length-delimited field (at the top, or inside the first such field) claims
    another length."""
    data = templates[which]
    fields = _fields(data)
    start, end, size = fields[int(pick * len(fields))]
    if nested:  # inside the field: its own first length-delimited field lies
        inner = data[end : end + size]
        found = _fields(inner)
        if found:
            i_start, i_end, _ = found[int(pick * len(found))]
            inner = inner[:i_start] + _varint(length) + inner[i_end:]
            data = data[:start] + _varint(len(inner)) + inner + data[end + size :]
    else:
        data = data[:start] + _varint(length) + data[end:]
    LOADERS[which](templates, data)


def test_other_message_types_are_refused(templates):
    graph_def = tf.Graph().as_graph_def().SerializeToString()
    event = event_pb2.Event(wall_time=1.0, step=3, file_version="brain.Event:2")
    others = {
        "meta": [templates["saved_model"], event.SerializeToString(), b"\x00" * 40, b""],
        "saved_model": [templates["meta"], event.SerializeToString(), graph_def, b"junk"],
    }
    for which, datas in others.items():
        for data in datas:
            LOADERS[which](templates, data)
    path = os.path.join(templates["directory"], "event.meta")
    with open(path, "wb") as f:
        f.write(event.SerializeToString())
    with tf.Graph().as_default(), pytest.raises(tf.errors.DataLossError, match="event.meta"):
        tf.train.import_meta_graph(path)
    with tf.Graph().as_default(), pytest.raises(tf.errors.NotFoundError, match="missing"):
        tf.train.import_meta_graph(os.path.join(templates["directory"], "missing.meta"))


def _meta(templates) -> meta_graph_pb2.MetaGraphDef:
    return meta_graph_pb2.MetaGraphDef.FromString(templates["meta"])


def _node(meta, name):
    return next(n for n in meta.graph_def.node if n.name == name)


def _crafted(templates):
    """``(what, MetaGraphDef, expected error class)``: one bad thing each."""
    cases = []

    def case(what, error, edit):
        meta = _meta(templates)
        edit(meta)
        cases.append((what, meta, error))

    def unknown_op(m):
        _node(m, "y").op = "NoSuchOp"

    def py_func(m):
        node = m.graph_def.node.add(name="call", op="PyFunc")
        node.attr["token"].s = b"pyfunc_0"
        node.input.append("x")

    def missing_input(m):
        _node(m, "y").input[0] = "nowhere"

    def out_of_range(m):
        _node(m, "y").input[0] = "x:7"

    def duplicate(m):
        m.graph_def.node.append(_node(m, "x"))

    def cycle(m):
        _node(m, "x").input.append("y")

    def huge_constant(m):
        value = _node(m, "w/Initializer/initial_value").attr["value"].tensor
        value.ClearField("tensor_content")
        value.float_val.append(1.0)
        del value.tensor_shape.dim[:]
        value.tensor_shape.dim.add(size=1 << 40)

    def short_content(m):
        value = _node(m, "w/Initializer/initial_value").attr["value"].tensor
        value.tensor_content = value.tensor_content[:5]

    def negative_dim(m):
        value = _node(m, "w/Initializer/initial_value").attr["value"].tensor
        value.tensor_shape.dim[0].size = -3

    def wrong_attr_kind(m):
        _node(m, "y").attr["T"].s = b"float"

    def bad_dtype(m):
        _node(m, "x").attr["dtype"].type = 999

    def missing_attr(m):
        del _node(m, "x").attr["dtype"]

    def variable_names_nothing(m):
        col = m.collection_def["variables"].bytes_list.value
        proto = variable_pb2.VariableDef.FromString(col[0])
        proto.variable_name = "ghost:0"
        col[0] = proto.SerializeToString()

    def undecodable_variable(m):
        m.collection_def["variables"].bytes_list.value[0] = b"\xff\xff\xff"

    def node_list_names_nothing(m):
        m.collection_def["outputs"].node_list.value[0] = "ghost:0"

    def saver_names_nothing(m):
        m.saver_def.restore_op_name = "ghost"

    case("unknown op type", tf.errors.NotFoundError, unknown_op)
    case("PyFunc", tf.errors.NotFoundError, py_func)
    case("input names no node", tf.errors.InvalidArgumentError, missing_input)
    case("input out of range", tf.errors.InvalidArgumentError, out_of_range)
    case("duplicate node", tf.errors.InvalidArgumentError, duplicate)
    case("cycle", tf.errors.InvalidArgumentError, cycle)
    case("constant expanding to 4 TiB", tf.errors.InvalidArgumentError, huge_constant)
    case("short tensor_content", tf.errors.InvalidArgumentError, short_content)
    case("negative dimension", tf.errors.InvalidArgumentError, negative_dim)
    case("attr of the wrong kind", tf.errors.InvalidArgumentError, wrong_attr_kind)
    case("unknown DataType", tf.errors.InvalidArgumentError, bad_dtype)
    case("missing attr", tf.errors.InvalidArgumentError, missing_attr)
    case("VariableDef names nothing", tf.errors.InvalidArgumentError, variable_names_nothing)
    case("undecodable VariableDef", tf.errors.DataLossError, undecodable_variable)
    case("node_list names nothing", tf.errors.InvalidArgumentError, node_list_names_nothing)
    case("SaverDef names nothing", tf.errors.InvalidArgumentError, saver_names_nothing)
    return cases


def test_crafted_metagraphs_fail_with_tf_error_classes(templates):
    for what, meta, error in _crafted(templates):
        for how in ("proto", "file", "saved_model"):
            with tf.Graph().as_default(), pytest.raises(error) as raised:
                if how == "proto":
                    tf.train.import_meta_graph(meta)
                elif how == "file":
                    path = os.path.join(templates["directory"], "crafted.meta")
                    with open(path, "wb") as f:
                        f.write(meta.SerializeToString())
                    tf.train.import_meta_graph(path)
                else:
                    directory = tempfile.mkdtemp(dir=templates["directory"])
                    meta.meta_info_def.tags[:] = ["serve"]
                    saved = tf_protos.SavedModel(saved_model_schema_version=1)
                    saved.meta_graphs.append(meta)
                    with open(os.path.join(directory, "saved_model.pb"), "wb") as f:
                        f.write(saved.SerializeToString())
                    with tf.Session() as sess:
                        tf.saved_model.loader.load(sess, ["serve"], directory)
            assert type(raised.value) is error, (what, how, raised.value)


_OPS = st.sampled_from(["Const", "Identity", "MatMul", "Placeholder", "NoOp", "Relu", "PyFunc"])
_INPUTS = st.sampled_from(["x", "x:0", "x:1", "^x", "y", "w", "", "nowhere", "w:0", "^y"])


@FUZZ
@given(
    target=st.integers(0, 1000),
    op=st.one_of(st.none(), _OPS),
    inputs=st.one_of(st.none(), st.lists(_INPUTS, max_size=3)),
    drop=st.lists(st.text(min_size=1, max_size=8), max_size=2),
    name=st.one_of(st.none(), st.sampled_from(["x", "y", "", "a/b", "bad name", "^x"])),
)
def test_mutated_nodes_load_cleanly(templates, target, op, inputs, drop, name):
    meta = _meta(templates)
    node = meta.graph_def.node[target % len(meta.graph_def.node)]
    if op is not None:
        node.op = op
    if inputs is not None:
        del node.input[:]
        node.input.extend(inputs)
    for key in drop + list(node.attr)[: len(drop)]:
        node.attr.pop(key, None)
    if name is not None:
        node.name = name
    with tf.Graph().as_default():
        try:
            tf.train.import_meta_graph(meta)
        except CLEAN:
            pass


def test_graph_def_alone_is_refused_as_a_meta_graph(templates):
    data = graph_pb2.GraphDef(node=_meta(templates).graph_def.node).SerializeToString()
    path = os.path.join(templates["directory"], "graph.meta")
    with open(path, "wb") as f:
        f.write(data)
    with tf.Graph().as_default(), pytest.raises(tf.errors.DataLossError, match="graph.meta"):
        tf.train.import_meta_graph(path)
