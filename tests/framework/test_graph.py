"""The graph data model: naming, scopes, collections, lookup, dtypes, shapes, devices."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import dataflow as tf
from dataflow.framework import registry
from dataflow.framework.device_spec import DeviceSpec
from dataflow.framework.tensor_shape import TensorShape, broadcast_shapes


def test_unique_names_and_name_scopes():
    a = tf.constant(1.0, name="a")
    b = tf.constant(2.0, name="a")
    assert (a.name, b.name) == ("a:0", "a_1:0")
    with tf.name_scope("outer") as outer:
        assert outer == "outer/"
        c = tf.constant(3.0, name="c")
        with tf.name_scope("inner") as inner:
            d = tf.constant(4.0)
    with tf.name_scope("outer") as again:
        pass
    assert c.name == "outer/c:0"
    assert inner == "outer/inner/"
    assert d.name == "outer/inner/Const:0"
    assert again == "outer_1/"
    with tf.name_scope("abs/"):
        e = tf.constant(5.0, name="e")
    assert e.name == "abs/e:0"


def test_get_by_name_and_lookup_errors():
    g = tf.get_default_graph()
    a = tf.constant(1.0, name="x")
    assert g.get_tensor_by_name("x:0") is a
    assert g.get_operation_by_name("x") is a.op
    assert g.as_graph_element("x:0") is a
    with pytest.raises(KeyError, match="does not exist"):
        g.get_tensor_by_name("nope:0")
    with pytest.raises(ValueError, match="looks like an"):
        g.get_tensor_by_name("x")
    with pytest.raises(KeyError, match="only has 1 outputs"):
        g.get_tensor_by_name("x:3")
    assert a.op in g.get_operations()


def test_default_graph_stack_is_per_graph_and_per_thread():
    g1 = tf.Graph()
    with g1.as_default():
        t = tf.constant(1.0)
        assert tf.get_default_graph() is g1
        seen = []
        worker = threading.Thread(target=lambda: seen.append(tf.get_default_graph()))
        worker.start()
        worker.join()
        assert seen[0] is not g1
    assert t.graph is g1
    assert tf.get_default_graph() is not g1


def test_reset_default_graph_inside_nesting_is_refused():
    with tf.Graph().as_default():
        with pytest.raises(AssertionError):
            tf.reset_default_graph()


def test_control_dependencies_recorded_and_cleared():
    a = tf.constant(1.0)
    b = tf.constant(2.0)
    with tf.control_dependencies([a]):
        c = tf.identity(b)
        with tf.control_dependencies(None):
            d = tf.identity(b)
        with tf.control_dependencies([b.op]):
            e = tf.constant(3.0)
    assert c.op.control_inputs == (a.op,)
    assert d.op.control_inputs == ()
    assert set(e.op.control_inputs) == {a.op, b.op}


def test_device_scopes_merge_and_functions():
    with tf.device("/job:ps"):
        with tf.device("/task:1"):
            a = tf.constant(1.0)
        with tf.device(None):
            b = tf.constant(1.0)
    with tf.device(lambda op: "/job:worker/task:0" if op.type == "Const" else ""):
        c = tf.constant(1.0)
    assert a.device == "/job:ps/task:1"
    assert b.device == ""
    assert c.device == "/job:worker/task:0"
    assert a.op.device == a.device


def test_colocate_with_records_group_and_device():
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(1.0, name="v")
    with tf.device("/job:worker"), tf.colocate_with(v):
        c = tf.identity(v.value())
    assert c.op.colocation_groups == ("v",)
    assert c.device == "/job:ps/task:0"


def test_collections():
    tf.add_to_collection("things", 1)
    tf.add_to_collections(["things", "more"], 2)
    assert tf.get_collection("things") == [1, 2]
    assert tf.get_collection("more") == [2]
    tf.get_collection_ref("things").append(3)
    assert tf.get_collection("things") == [1, 2, 3]


def test_finalize_refuses_new_ops():
    g = tf.Graph()
    with g.as_default():
        tf.constant(1.0)
        g.finalize()
        with pytest.raises(RuntimeError, match="finalized"):
            tf.constant(2.0)


def test_tensor_refuses_bool_and_iteration_of_unknown_length():
    x = tf.placeholder(tf.float32, [None])
    with pytest.raises(TypeError, match="Python `bool`"):
        bool(x)
    with pytest.raises(TypeError, match="not iterable"):
        iter(x)
    assert "Placeholder" in repr(x)


def test_tensor_properties_and_set_shape():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    assert x.dtype == tf.float32 and x.name == "x:0" and x.op.type == "Placeholder"
    assert x.shape.as_list() == [None, 3] and x.get_shape().rank == 2
    x.set_shape([2, None])
    assert x.shape.as_list() == [2, 3]
    with pytest.raises(ValueError):
        x.set_shape([4, 3])


def test_ops_record_where_they_were_built():
    a = tf.constant(1.0)
    assert "test_graph.py" in a.op.traceback
    line = test_ops_record_where_they_were_built.__code__.co_firstlineno + 4
    b = a * 2.0  # through the operator, the op library and the constant builder
    assert b.op.traceback.endswith(f"test_graph.py:{line} (test_ops_record_where_they_were_built)")
    assert b.op.inputs[1].op.traceback == b.op.traceback
    with pytest.raises(ValueError, match=rf"Built at .*test_graph.py:{line + 4} "):
        tf.placeholder(tf.float32, [2]) + tf.placeholder(tf.float32, [3])


def test_ops_built_in_a_notebook_cell_name_the_cell():
    """In Jupyter a cell's code is compiled as a temporary file (ipykernel's
    ``/tmp/ipykernel_<pid>/<hash>.py``); an op names the cell instead, as IPython's own
    tracebacks do ("Cell In[1], line 3")."""
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    try:
        cell = "import dataflow as tf\nx = tf.constant(1.0)\ny = x + 1\n"
        assert shell.run_cell(cell, store_history=True).success
        count = shell.execution_count - 1
        op = shell.user_ns["y"].op
        assert op.traceback == f"Cell In[{count}], line 3 (<module>)"
    finally:
        InteractiveShell.clear_instance()


def test_consumers_follow_ops_added_after_a_query():
    x = tf.placeholder(tf.float32, [2], name="x")
    a = x + 1.0
    assert [op.name for op in x.consumers()] == ["add"]
    b = x * a
    c = tf.add(x, x, name="twice")
    assert [op.name for op in x.consumers()] == ["add", "mul", "twice", "twice"]
    assert a.consumers() == [b.op] and c.consumers() == []


def test_python_float_constants_match_numpy_casts():
    for dtype in (None, tf.float16, tf.float32, tf.float64):
        for value in (0.5, -0.0, 1e-40, 6e4, float("nan")):
            t = tf.constant(value, dtype=dtype)
            value_attr = t.op.get_attr("value")
            expected = np.asarray(value).astype((dtype or tf.float32).as_numpy_dtype)
            assert value_attr.dtype == expected.dtype and t.dtype == (dtype or tf.float32)
            np.testing.assert_array_equal(value_attr, expected)
            assert np.signbit(value_attr) == np.signbit(expected)
            assert not value_attr.flags.writeable and t.shape.as_list() == []


def test_registry_refuses_second_registration_and_names_the_first():
    with pytest.raises(KeyError, match=r"already registered at .*constant.py"):
        registry.register(registry.OpDef("Const", lambda op: [], None))
    with pytest.raises(KeyError, match="No op type"):
        registry.lookup("NoSuchOp")


def test_dtypes():
    assert tf.as_dtype(np.float32) is tf.float32
    assert tf.as_dtype("float64") is tf.float64
    assert tf.as_dtype(float) is tf.float32 and tf.as_dtype(int) is tf.int32
    assert tf.float32.is_floating and tf.int64.is_integer and tf.bool.is_bool
    assert tf.float32 == np.float32 and tf.float32 != tf.float64
    with pytest.raises(TypeError):
        tf.as_dtype("complex256x")


def test_tensor_shape_semantics():
    s = TensorShape([None, 3])
    assert s.is_compatible_with([2, 3]) and not s.is_compatible_with([2, 4])
    assert s.merge_with([2, None]).as_list() == [2, 3]
    assert TensorShape(None).rank is None
    assert s.num_elements() is None and TensorShape([2, 3]).num_elements() == 6
    assert s[1].value == 3 and s[0].value is None
    assert str(TensorShape([None, 3])) == "(?, 3)"
    assert broadcast_shapes(TensorShape([4, 1]), TensorShape([3])).as_list() == [4, 3]
    assert broadcast_shapes(TensorShape([None, 1]), TensorShape([3])).as_list() == [None, 3]
    with pytest.raises(ValueError):
        broadcast_shapes(TensorShape([2]), TensorShape([3]))
    with pytest.raises(ValueError):
        TensorShape(None).as_list()


@pytest.mark.parametrize(
    "text,expected",
    [
        ("/job:ps/task:0/device:CPU:0", DeviceSpec("ps", None, 0, "CPU", 0)),
        ("/cpu:0", DeviceSpec(device_type="CPU", device_index=0)),
        ("/gpu:1", DeviceSpec(device_type="GPU", device_index=1)),
        ("/job:worker/replica:0/task:2", DeviceSpec("worker", 0, 2)),
        ("", DeviceSpec()),
    ],
)
def test_device_spec_parsing(text, expected):
    assert DeviceSpec.from_string(text) == expected


def test_device_spec_merge_and_match():
    spec = DeviceSpec.from_string("/job:ps/task:1").merge("/device:GPU:0")
    assert spec.to_string() == "/job:ps/task:1/device:GPU:0"
    assert DeviceSpec.from_string("/job:ps").is_satisfied_by("/job:ps/task:3/device:CPU:0")
    assert not DeviceSpec.from_string("/gpu:0").is_satisfied_by("/job:ps/task:0/device:CPU:0")
    with pytest.raises(ValueError, match="Unknown attribute"):
        DeviceSpec.from_string("/bogus:1")
