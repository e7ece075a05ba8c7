"""``tf.contrib.framework`` (``arg_scope``, model variables, the global step, ``nest``),
``tf.contrib.slim`` and the names ``tf.contrib`` leaves out."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow as tf
from dataflow import NotProvidedError

tf1 = pytest.importorskip("tensorflow").compat.v1


# --- arg_scope -----------------------------------------------------------------------
@tf.contrib.framework.add_arg_scope
def layer(x, scale=1.0, shift=0.0):
    return x * scale + shift


def test_arg_scope_nests_and_explicit_arguments_win():
    scope = tf.contrib.framework.arg_scope
    with scope([layer], scale=2.0):
        assert layer(1.0) == 2.0
        with scope([layer], shift=1.0) as inner:
            assert layer(1.0) == 3.0
            assert layer(1.0, scale=5.0) == 6.0
        assert layer(1.0) == 2.0
    assert layer(1.0) == 1.0
    with scope(inner):  # re-entering a saved scope
        assert layer(1.0) == 3.0
    assert tf.contrib.framework.arg_scoped_arguments(layer) == ["x", "scale", "shift"]


def test_arg_scope_over_contrib_layers_as_slim_programs_write_it():
    slim = tf.contrib.slim
    images = tf.placeholder(tf.float32, [2, 8, 8, 3])
    with slim.arg_scope(
        [slim.conv2d, slim.fully_connected],
        activation_fn=tf.nn.tanh,
        weights_initializer=tf.truncated_normal_initializer(stddev=0.01),
        weights_regularizer=slim.l2_regularizer(0.0005),
    ):
        net = slim.conv2d(images, 4, [3, 3], scope="conv1")
        net = slim.max_pool2d(net, [2, 2], scope="pool1")
        net = slim.flatten(net)
        net = slim.fully_connected(net, 10, activation_fn=None, scope="fc")
    assert net.op.type == "BiasAdd" and net.shape.as_list() == [2, 10]
    assert [v.op.name for v in slim.get_model_variables()] == [
        "conv1/weights",
        "conv1/biases",
        "fc/weights",
        "fc/biases",
    ]
    assert len(tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)) == 2
    assert [v.op.name for v in slim.get_variables("fc")] == ["fc/weights", "fc/biases"]
    assert [v.op.name for v in slim.get_variables_by_name("weights")] == [
        "conv1/weights",
        "fc/weights",
    ]
    assert slim.get_unique_variable("fc/biases") is slim.get_variables("fc")[1]
    assert [v.op.name for v in slim.get_variables_to_restore(exclude=["fc"])] == [
        "conv1/weights",
        "conv1/biases",
    ]
    assert slim.conv2d is tf.contrib.layers.conv2d


def test_arg_scope_bad_input():
    scope = tf.contrib.framework.arg_scope
    with pytest.raises(ValueError, match="not decorated with @add_arg_scope"):
        with scope([tf.nn.relu], name="x"):
            pass
    with pytest.raises(TypeError, match="list/tuple"):
        with scope(layer, scale=2.0):
            pass
    with pytest.raises(ValueError, match="kwargs must be empty"):
        with scope({}, scale=2.0):
            pass


# --- global step, model variables --------------------------------------------------------
def test_global_step_helpers_are_tf_train_s():
    step = tf.contrib.framework.get_or_create_global_step()
    assert step is tf.train.get_global_step()
    assert tf.contrib.framework.get_global_step() is step
    assert step.op.name == "global_step"


def test_model_variable_collections():
    v = tf.contrib.framework.model_variable("w", [2], collections=["mine"])
    u = tf.contrib.framework.variable("u", [3], trainable=False)
    assert tf.model_variables() == [v] and tf.get_collection("mine") == [v]
    assert tf.global_variables() == [v, u] and tf.trainable_variables() == [v]
    assert tf.contrib.framework.get_trainable_variables() == [v]


# --- nest --------------------------------------------------------------------------------
def test_nest_matches_tf1():
    nest, theirs = tf.contrib.framework.nest, tf1.nest
    a = {"x": (1, [2, 3]), "y": 4}
    b = {"x": (10, [20, 30]), "y": 40}
    assert nest.map_structure(lambda p, q: p + q, a, b) == theirs.map_structure(
        lambda p, q: p + q, a, b
    )
    assert nest.flatten(a) == theirs.flatten(a)
    assert nest.is_sequence([1]) and not nest.is_sequence(np.zeros(2))
    for bad, error in [((1, (2, 3)), TypeError), ([1, [2, 3]], TypeError), ((1, 2), ValueError)]:
        with pytest.raises(error):
            theirs.assert_same_structure((1, [2, 3]), bad)
        with pytest.raises(error, match="same nested structure"):
            nest.assert_same_structure((1, [2, 3]), bad)
    nest.assert_same_structure((1, [2, 3]), [1, (2, 3)], check_types=False)
    theirs.assert_same_structure((1, [2, 3]), [1, (2, 3)], check_types=False)


# --- learn.ModeKeys, missing names --------------------------------------------------------
def test_mode_keys_are_tf1s_strings():
    keys = tf.contrib.learn.ModeKeys
    assert (keys.TRAIN, keys.EVAL, keys.INFER) == ("train", "eval", "infer")


@pytest.mark.parametrize(
    "path", ["contrib.keras", "contrib.layers.conv3d", "contrib.rnn.UGRNNCell", "contrib.slim.nets"]
)
def test_a_contrib_name_left_out_says_so(path):
    *parents, name = path.split(".")
    module = tf
    for part in parents:
        module = getattr(module, part)
    with pytest.raises(NotProvidedError, match=f"tf.{path} is a tf.contrib name"):
        getattr(module, name)
    assert not hasattr(module, name)
    assert not hasattr(module, "__wrapped__")  # dunder lookups stay plain AttributeErrors


# --- checkpoints -------------------------------------------------------------------------
def test_load_checkpoint_reads_the_latest_checkpoint_of_a_directory(tmp_path):
    if not hasattr(tf.train, "NewCheckpointReader"):
        pytest.skip("tf.train.NewCheckpointReader is not in this tree yet")
    w = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3), name="w")
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        saver.save(sess, str(tmp_path / "model"), global_step=1)
        sess.run(w.assign(w * 2))
        saver.save(sess, str(tmp_path / "model"), global_step=2)
    reader = tf.contrib.framework.load_checkpoint(str(tmp_path))
    np.testing.assert_array_equal(reader.get_tensor("w"), 2 * np.arange(6).reshape(2, 3))
    assert tf.contrib.framework.list_variables(str(tmp_path)) == [("w", [2, 3])]
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="Couldn't find 'checkpoint'"):
        tf.contrib.framework.load_checkpoint(str(tmp_path / "empty"))


# --- util ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "values, dtype, shape",
    [
        (np.arange(6, dtype=np.float32).reshape(2, 3), None, None),
        ([1, 2, 3], tf.int64, None),
        (2.5, tf.float64, [2, 2]),
        ([b"a", b"bc"], tf.string, None),
    ],
)
def test_make_tensor_proto_matches_tf1(values, dtype, shape):
    ours = tf.contrib.util.make_tensor_proto(
        values, dtype=dtype, shape=shape, allow_broadcast=shape is not None
    )
    theirs = tf1.make_tensor_proto(
        values,
        dtype=None if dtype is None else dtype.name,
        shape=shape,
        allow_broadcast=shape is not None,
    )
    parsed = type(theirs)()
    parsed.ParseFromString(ours.SerializeToString())
    assert parsed.dtype == theirs.dtype
    assert parsed.tensor_shape == theirs.tensor_shape
    np.testing.assert_array_equal(tf1.make_ndarray(parsed), tf1.make_ndarray(theirs))
    np.testing.assert_array_equal(tf.contrib.util.make_ndarray(ours), tf1.make_ndarray(theirs))
    with pytest.raises(ValueError, match="allow_broadcast and verify_shape"):
        tf.contrib.util.make_tensor_proto(values, verify_shape=True, allow_broadcast=True)
    assert tf.contrib.util.constant_value(tf.constant(3.0)) == 3.0
