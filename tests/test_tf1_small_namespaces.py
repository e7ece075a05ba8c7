"""Small TF1 namespaces and their last names (issue 32), against ``tensorflow.compat.v1``:
``tf.errors`` (``UNAUTHENTICATED``, the code/class maps, ``raise_exception_on_not_ok_status``),
``tf.resource_loader``, ``tf.graph_util``'s node helpers and ``tf.summary``'s TF 2 hooks."""

from __future__ import annotations

import os

import pytest

import dataflow as tf

pytestmark = pytest.mark.tf
tf1 = pytest.importorskip("tensorflow").compat.v1
tf1.disable_eager_execution()


def test_every_error_code_maps_to_the_class_tf_maps_it_to() -> None:
    assert tf.errors.UNAUTHENTICATED == tf1.errors.UNAUTHENTICATED == 16
    for code in range(1, 17):
        ours = tf.errors.exception_type_from_error_code(code)
        theirs = tf1.errors.exception_type_from_error_code(code)
        assert ours.__name__ == theirs.__name__
        assert tf.errors.error_code_from_exception_type(ours) == code
        assert tf1.errors.error_code_from_exception_type(theirs) == code
    error = tf.errors.UnauthenticatedError(None, None, "no credentials")
    assert error.error_code == 16 and isinstance(error, tf.errors.OpError)
    with pytest.warns(UserWarning, match="Unknown class"):
        assert tf.errors.error_code_from_exception_type(ValueError) is None


def test_raise_exception_on_not_ok_status() -> None:
    with tf.errors.raise_exception_on_not_ok_status() as status:
        pass  # OK: nothing raised
    with pytest.raises(tf.errors.NotFoundError, match="no such table"):
        with tf.errors.raise_exception_on_not_ok_status() as status:
            status.code, status.message = tf.errors.NOT_FOUND, "no such table"


def test_resource_loader_paths_are_relative_to_the_calling_file(tmp_path) -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    assert tf.resource_loader.get_data_files_path() == here
    assert tf1.resource_loader.get_data_files_path() == here
    assert tf.resource_loader.get_path_to_datafile("data/x.txt") == os.path.join(here, "data/x.txt")
    assert tf.resource_loader.get_path_to_datafile("x") == tf1.resource_loader.get_path_to_datafile(
        "x"
    )
    assert tf.resource_loader.get_root_dir_with_all_resources() == here
    assert tf.resource_loader.readahead_file_path(str(tmp_path)) == str(tmp_path)
    assert b"def " in tf.resource_loader.load_resource("graph_util.py")
    with pytest.raises(OSError):
        tf.resource_loader.load_resource("no/such/file")


def _graph(lib):
    graph = lib.Graph()
    with graph.as_default():
        lib.constant(["a"], name="s")
        lib.constant([1, 2], name="i32")
        lib.constant([1.0], name="f")
        lib.cast(lib.constant(["1"]), lib.int64, name="c")  # not from strings in TF: parse
        lib.Variable([1.0, 2.0], name="v")
        x = lib.placeholder(lib.float32, [None, 3], name="x")
        lib.matmul(x, lib.ones([3, 4]), name="y")
    return graph


def test_must_run_on_cpu_agrees_with_tf_on_each_node() -> None:
    ours, theirs = _graph(tf), _graph(tf1)
    nodes = {n.name: n for n in theirs.as_graph_def().node}
    for name in ("s", "i32", "f", "x", "y"):
        for pin in (False, True):
            want = tf1.graph_util.must_run_on_cpu(nodes[name], pin)
            assert tf.graph_util.must_run_on_cpu(ours.get_operation_by_name(name), pin) == want
            assert tf.graph_util.must_run_on_cpu(nodes[name], pin) == want  # TF's NodeDef
    variable = next(n for n in theirs.as_graph_def().node if n.op in ("VarHandleOp", "VariableV2"))
    assert tf.graph_util.must_run_on_cpu(variable, pin_variables_on_cpu=True)
    assert not tf.graph_util.must_run_on_cpu(variable)


def test_tensor_shape_from_node_def_name_matches_tf() -> None:
    ours, theirs = _graph(tf), _graph(tf1)
    for name in ("y", "y:0", "x", "i32"):
        assert (
            tf.graph_util.tensor_shape_from_node_def_name(ours, name).as_list()
            == tf1.graph_util.tensor_shape_from_node_def_name(theirs, name).as_list()
        )
    assert tf.graph_util.import_graph_def is tf.import_graph_def


def test_summary_v2_hooks_answer_as_tf1_without_v2_writers() -> None:
    with tf.Graph().as_default():
        tf.summary.scalar("loss", tf.constant(1.0))
        assert tf.summary.all_v2_summary_ops() == []
        with pytest.raises(RuntimeError, match="SummaryWriter"):
            tf.summary.initialize()
        op = tf.summary.tensor_summary("m", tf.constant([1.0])).op
    with tf1.Graph().as_default():
        assert tf1.summary.all_v2_summary_ops() == []
        with pytest.raises(RuntimeError, match="SummaryWriter"):
            tf1.summary.initialize()
    with pytest.raises(ValueError, match="Can't get_summary_description on"):
        tf.summary.get_summary_description(op.graph.as_graph_def().node[-1])
    tf_node = tf1.NodeDef(name="t", op="TensorSummary")
    tf_node.attr["description"].s = b'{"typeHint": "scalar"}'
    assert tf.summary.get_summary_description(tf_node).type_hint == "scalar"
