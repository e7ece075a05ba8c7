"""MetaGraphs both ways with TensorFlow: a model ``tensorflow.compat.v1`` built, trained
and saved (checkpoint and ``.meta``) restores here with ``import_meta_graph`` and
``Saver.restore``, gives TF's outputs and keeps training through its ``train_op``
collection with TF's losses; the reverse; collections, ``clear_devices``,
``import_scope`` and text files."""

from __future__ import annotations

import os

import numpy as np
import pytest

import dataflow as tf

pytestmark = pytest.mark.tf

RNG = np.random.default_rng(11)
X = RNG.standard_normal((16, 6)).astype(np.float32)
Y = RNG.integers(0, 3, 16).astype(np.int32)
STEPS = 4
# float32 losses and probabilities through a few dozen ops and a few updates: relative
# 1e-5 (API.md's float32 promise), and an absolute floor for probabilities near 0.
TOL = dict(rtol=1e-5, atol=1e-6)

OPTIMIZERS = {
    "gd": lambda lib: lib.train.GradientDescentOptimizer(0.3),
    "momentum": lambda lib: lib.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True),
    "adam": lambda lib: lib.train.AdamOptimizer(0.05),
    "rmsprop": lambda lib: lib.train.RMSPropOptimizer(0.05),
}


@pytest.fixture(scope="module")
def tf1():
    tensorflow = pytest.importorskip("tensorflow")
    tensorflow.compat.v1.disable_eager_execution()
    return tensorflow.compat.v1


def _model(lib, optimizer, use_resource):
    """An MLP classifier trained by ``optimizer``: TF1's ref variables unless
    ``use_resource`` (dataflow's are resource variables either way)."""
    x = lib.placeholder(lib.float32, [None, 6], name="x")
    y = lib.placeholder(lib.int32, [None], name="y")
    w1 = lib.get_variable("w1", [6, 8], use_resource=use_resource)
    b1 = lib.Variable(lib.zeros([8]), name="b1", use_resource=use_resource)
    h = lib.nn.relu(lib.matmul(x, w1) + b1)
    w2 = lib.get_variable("w2", [8, 3], use_resource=use_resource)
    logits = lib.matmul(h, w2)
    lib.nn.softmax(logits, name="probs")
    loss = lib.reduce_mean(
        lib.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits), name="loss"
    )
    step = lib.train.get_or_create_global_step()
    OPTIMIZERS[optimizer](lib).minimize(loss, global_step=step)


def _train_and_save(lib, optimizer, use_resource, directory):
    """Builds, trains 3 steps and saves (``model-3`` and its ``.meta``); then the
    probabilities at the checkpoint and the losses of ``STEPS`` more steps."""
    with lib.Graph().as_default():
        lib.set_random_seed(3)
        _model(lib, optimizer, use_resource)
        (train,) = lib.get_collection(lib.GraphKeys.TRAIN_OP)
        saver = lib.train.Saver()
        feed = {"x:0": X, "y:0": Y}
        with lib.Session() as sess:
            sess.run(lib.global_variables_initializer())
            for _ in range(3):
                sess.run(train, feed)
            prefix = saver.save(sess, os.path.join(directory, "model"), global_step=3)
            probs = sess.run("probs:0", feed)
            losses = [sess.run([train, "loss:0"], feed)[1] for _ in range(STEPS)]
    return prefix, probs, losses


def _restore_and_train(lib, prefix, **import_args):
    """``import_meta_graph`` of ``prefix.meta``, restore, then the probabilities and the
    losses of ``STEPS`` steps of the ``train_op`` collection; and the global step."""
    with lib.Graph().as_default():
        saver = lib.train.import_meta_graph(prefix + ".meta", **import_args)
        (train,) = lib.get_collection(lib.GraphKeys.TRAIN_OP)
        scope = import_args.get("import_scope")
        name = (lambda n: f"{scope}/{n}") if scope else (lambda n: n)
        feed = {name("x:0"): X, name("y:0"): Y}
        with lib.Session() as sess:
            saver.restore(sess, prefix)
            probs = sess.run(name("probs:0"), feed)
            losses = [sess.run([train, name("loss:0")], feed)[1] for _ in range(STEPS)]
            step = sess.run(lib.get_collection(lib.GraphKeys.GLOBAL_STEP)[0])
    return probs, losses, step


@pytest.mark.parametrize("use_resource", [False, True], ids=["ref", "resource"])
@pytest.mark.parametrize("optimizer", sorted(OPTIMIZERS))
def test_a_metagraph_tf1_wrote_restores_and_trains_here(tf1, tmp_path, optimizer, use_resource):
    prefix, want_probs, want_losses = _train_and_save(tf1, optimizer, use_resource, tmp_path)
    probs, losses, step = _restore_and_train(tf, prefix)
    np.testing.assert_allclose(probs, want_probs, **TOL)
    np.testing.assert_allclose(losses, want_losses, **TOL)
    assert losses[-1] < losses[0]
    assert step == 3 + STEPS


@pytest.mark.parametrize("optimizer", sorted(OPTIMIZERS))
def test_a_metagraph_we_wrote_restores_and_trains_in_tf(tf1, tmp_path, optimizer):
    prefix, want_probs, want_losses = _train_and_save(tf, optimizer, None, tmp_path)
    probs, losses, step = _restore_and_train(tf1, prefix)
    np.testing.assert_allclose(probs, want_probs, **TOL)
    np.testing.assert_allclose(losses, want_losses, **TOL)
    assert losses[-1] < losses[0]
    assert step == 3 + STEPS


def test_tf_saves_with_our_saver_def_and_we_restore_it(tf1, tmp_path):
    """TF runs the SaverDef of a MetaGraph we wrote to save again; what it wrote restores
    here through our import of the same MetaGraph."""
    prefix, _, _ = _train_and_save(tf, "adam", None, tmp_path)
    with tf1.Graph().as_default():
        saver = tf1.train.import_meta_graph(prefix + ".meta")
        (train,) = tf1.get_collection(tf1.GraphKeys.TRAIN_OP)
        with tf1.Session() as sess:
            saver.restore(sess, prefix)
            sess.run(train, {"x:0": X, "y:0": Y})
            again = saver.save(sess, str(tmp_path / "tf_model"), global_step=4)
            want = sess.run("probs:0", {"x:0": X})
            want_w1 = sess.run(tf1.global_variables()[0])
    assert os.path.exists(again + ".meta")
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(again + ".meta")
        with tf.Session() as sess:
            saver.restore(sess, again)
            np.testing.assert_allclose(sess.run("probs:0", {"x:0": X}), want, **TOL)
            np.testing.assert_array_equal(sess.run(tf.global_variables()[0]), want_w1)


def _collections(lib, with_queue):
    """A graph's worth of collections of every kind TF serializes (queue runners only
    when ``with_queue``: TF's queue op types are not dataflow's, so a graph with queues
    goes between the two libraries in neither direction)."""
    x = lib.placeholder(lib.float32, [None, 2], name="x")
    w = lib.get_variable("w", [2, 2], initializer=lib.ones_initializer())
    counter = lib.Variable(5, name="counter", trainable=False)
    lib.Variable(
        lib.zeros([3]), name="seen", trainable=False, collections=[lib.GraphKeys.LOCAL_VARIABLES]
    )
    y = lib.matmul(x, w, name="y")
    bump = counter.assign_add(1, name="bump").op
    lib.summary.scalar("total", lib.reduce_sum(y))
    if with_queue:
        queue = lib.FIFOQueue(4, [lib.float32], shapes=[[2]], name="q")
        enqueue = queue.enqueue(lib.constant([1.0, 2.0]), name="feed_q")
        lib.train.add_queue_runner(lib.train.QueueRunner(queue, [enqueue]))
        lib.identity(queue.dequeue(), name="taken")
    lib.add_to_collection("my_tensors", y)
    lib.add_to_collection("my_ops", bump)
    for s in ("alpha", b"beta"):
        lib.add_to_collection("my_strings", s)
    for n in (3, -7):
        lib.add_to_collection("my_ints", n)
    lib.add_to_collection("my_floats", 0.25)


def _seen(lib, graph):
    """What the collections of ``graph`` hold, by name and value."""

    def names(key):
        return [getattr(v, "name", v) for v in graph.get_collection(key)]

    runners = graph.get_collection(lib.GraphKeys.QUEUE_RUNNERS)
    return {
        "variables": names(lib.GraphKeys.GLOBAL_VARIABLES),
        "trainable": names(lib.GraphKeys.TRAINABLE_VARIABLES),
        "local": names(lib.GraphKeys.LOCAL_VARIABLES),
        "summaries": names(lib.GraphKeys.SUMMARIES),
        "my_tensors": names("my_tensors"),
        "my_ops": names("my_ops"),
        "my_strings": graph.get_collection("my_strings"),
        "my_ints": graph.get_collection("my_ints"),
        "my_floats": graph.get_collection("my_floats"),
        "runners": [
            (
                sorted(op.name for op in r.enqueue_ops),
                r.close_op.name,
                r.cancel_op.name,
            )
            for r in runners
        ],
    }


WANT = {
    "variables": ["w:0", "counter:0"],
    "trainable": ["w:0"],
    "local": ["seen:0"],
    "summaries": ["total:0"],
    "my_tensors": ["y:0"],
    "my_ops": ["bump"],
    "my_strings": [b"alpha", b"beta"],
    "my_ints": [3, -7],
    "my_floats": [0.25],
}


@pytest.mark.parametrize(
    "writer, reader", [("tf1", "dataflow"), ("dataflow", "tf1"), ("dataflow", "dataflow")]
)
def test_collections_round_trip(tf1, tmp_path, writer, reader):
    src = tf1 if writer == "tf1" else tf
    dst = tf1 if reader == "tf1" else tf
    with_queue = writer == reader
    path = str(tmp_path / "collections.meta")
    with src.Graph().as_default():
        _collections(src, with_queue)
        src.train.export_meta_graph(path)
    with dst.Graph().as_default() as graph:
        dst.train.import_meta_graph(path)
        seen = _seen(dst, graph)
        with dst.Session() as sess:
            sess.run(dst.global_variables_initializer())
            sess.run(dst.local_variables_initializer())
            sess.run(graph.get_collection("my_ops")[0])
            assert sess.run(graph.get_collection(dst.GraphKeys.GLOBAL_VARIABLES)[1]) == 6
            np.testing.assert_array_equal(
                sess.run(graph.get_collection("my_tensors")[0], {"x:0": [[1.0, 2.0]]}), [[3, 3]]
            )
            assert sess.run(graph.get_collection(dst.GraphKeys.LOCAL_VARIABLES)[0]).shape == (3,)
            if with_queue:
                (runner,) = graph.get_collection(dst.GraphKeys.QUEUE_RUNNERS)
                sess.run(runner.enqueue_ops[0])
                np.testing.assert_array_equal(sess.run("taken:0"), [1.0, 2.0])
    assert {k: seen[k] for k in WANT} == WANT
    if with_queue:
        ((enqueues, close, cancel),) = seen["runners"]
        assert enqueues == ["feed_q"]
        assert close.startswith("q_Close") and cancel.startswith("q_Close") and close != cancel


def test_devices_are_kept_or_cleared(tf1, tmp_path):
    path = str(tmp_path / "devices.meta")
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(1.0, name="v")
        tf.identity(v, name="out")
        kept = tf.train.export_meta_graph()
        tf.train.export_meta_graph(path, clear_devices=True)
    assert {n.device for n in kept.graph_def.node if n.name.startswith("v")} == {"/job:ps/task:0"}
    cleared = tf1.MetaGraphDef.FromString((tmp_path / "devices.meta").read_bytes())
    assert {n.device for n in cleared.graph_def.node} == {""}
    with tf1.Graph().as_default():
        tf1.train.import_meta_graph(path)
        assert tf1.get_default_graph().get_operation_by_name("v").device == ""
    with tf.Graph().as_default() as graph:
        tf.train.import_meta_graph(kept, clear_devices=True)
        assert {op.device for op in graph.get_operations()} == {""}
    with tf.Graph().as_default() as graph:
        tf.train.import_meta_graph(kept)
        assert graph.get_operation_by_name("v").device.startswith("/job:ps")


def test_import_scope_and_text_files(tf1, tmp_path):
    """A MetaGraph TF wrote as text imports under a scope; its saver restores there."""
    with tf1.Graph().as_default():
        tf1.set_random_seed(5)
        _model(tf1, "gd", False)
        saver = tf1.train.Saver()
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            prefix = saver.save(sess, str(tmp_path / "m"), write_meta_graph=False)
            saver.export_meta_graph(str(tmp_path / "m.meta.txt"), as_text=True)
            want = sess.run("probs:0", {"x:0": X})
    assert (tmp_path / "m.meta.txt").read_text().startswith("meta_info_def")
    with tf.Graph().as_default() as graph:
        saver = tf.train.import_meta_graph(str(tmp_path / "m.meta.txt"), import_scope="net")
        assert {v.name for v in tf.trainable_variables()} == {
            "net/w1:0",
            "net/b1:0",
            "net/w2:0",
        }
        assert graph.get_collection(tf.GraphKeys.TRAIN_OP)[0].name.startswith("net/")
        with tf.Session() as sess:
            saver.restore(sess, prefix)
            np.testing.assert_allclose(sess.run("net/probs:0", {"net/x:0": X}), want, **TOL)
    with tf.Graph().as_default():
        tf.Variable(1.0, name="v")
        tf.train.Saver().export_meta_graph(str(tmp_path / "ours.txt"), as_text=True)
    assert (tmp_path / "ours.txt").read_text().startswith("meta_info_def")
    with tf1.Graph().as_default():
        saver = tf1.train.import_meta_graph(str(tmp_path / "ours.txt"), import_scope="ours")
        assert [v.name for v in tf1.global_variables()] == ["ours/v:0"]


def test_saver_def_names_what_tf_runs(tf1):
    """The SaverDef of our saver names TF's filename tensor, save tensor and restore op
    of the exported graph, with TF's settings."""
    with tf.Graph().as_default():
        tf.Variable(1.0, name="v")
        saver = tf.train.Saver(max_to_keep=3, keep_checkpoint_every_n_hours=2.0)
        ours = saver.as_saver_def()
        meta = saver.export_meta_graph()
    with tf1.Graph().as_default():
        tf1.Variable(1.0, name="v")
        theirs = tf1.train.Saver(max_to_keep=3, keep_checkpoint_every_n_hours=2.0).as_saver_def()
    for field in (
        "filename_tensor_name",
        "save_tensor_name",
        "restore_op_name",
        "max_to_keep",
        "keep_checkpoint_every_n_hours",
        "version",
    ):
        assert getattr(ours, field) == getattr(theirs, field), field
    assert meta.saver_def == ours
    assert {"save/SaveV2", "save/RestoreV2", "save/restore_all"} <= {
        n.name for n in meta.graph_def.node
    }
    assert not {n.op for n in meta.graph_def.node} & {"SaveShard", "RestoreShard"}


def test_import_meta_graph_without_saver_or_variables_returns_none(tf1):
    with tf1.Graph().as_default():
        tf1.constant(1.0, name="c")
        meta = tf1.train.export_meta_graph()
    with tf.Graph().as_default() as graph:
        assert tf.train.import_meta_graph(meta) is None
        assert graph.get_operation_by_name("c").type == "Const"
