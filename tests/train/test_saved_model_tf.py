"""TF1 SavedModels both ways with TensorFlow: what ``tensorflow.compat.v1`` wrote
(``simple_save``; a builder with two tag sets, two signatures, an asset and a main op)
loads here and serves TF's outputs, and TF loads and serves what we wrote; the
signature helpers and the loader's errors against TF's."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow as tf
from dataflow.train.saved_model.loader import read_saved_model

pytestmark = pytest.mark.tf

RNG = np.random.default_rng(5)
X = RNG.standard_normal((7, 4)).astype(np.float32)
Y = RNG.integers(0, 3, 7).astype(np.int32)
TOL = dict(rtol=1e-5, atol=1e-6)  # float32 through a few ops (API.md's promise)
GREETING = b"hello from the assets"


@pytest.fixture(scope="module")
def tf1():
    tensorflow = pytest.importorskip("tensorflow")
    tensorflow.compat.v1.disable_eager_execution()
    return tensorflow.compat.v1


def _net(lib, use_resource=None):
    x = lib.placeholder(lib.float32, [None, 4], name="x")
    y = lib.placeholder(lib.int32, [None], name="y")
    w = lib.get_variable("w", [4, 3], use_resource=use_resource)
    b = lib.get_variable("b", [3], initializer=lib.constant_initializer(0.25))
    logits = lib.nn.bias_add(lib.matmul(x, w), b, name="logits")
    probs = lib.nn.softmax(logits, name="probs")
    loss = lib.reduce_mean(
        lib.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits), name="loss"
    )
    return x, y, logits, probs, loss


def _serve(lib, sess, meta, key, feeds, import_scope=None):
    """Runs signature ``key`` of a loaded MetaGraph: ``{output key: value}``."""
    sig = meta.signature_def[key]
    info = lib.saved_model.utils.get_tensor_from_tensor_info
    graph = sess.graph
    fetch = {k: info(v, graph, import_scope) for k, v in sig.outputs.items()}
    feed = {info(sig.inputs[k], graph, import_scope): v for k, v in feeds.items()}
    return sess.run(fetch, feed)


@pytest.mark.parametrize("use_resource", [False, True], ids=["ref", "resource"])
def test_simple_save_tf1_wrote_serves_here(tf1, tmp_path, use_resource):
    export = str(tmp_path / "model")
    with tf1.Graph().as_default():
        x, _, _, probs, _ = _net(tf1, use_resource)
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            tf1.saved_model.simple_save(sess, export, {"x": x}, {"probs": probs})
            want = sess.run(probs, {x: X})
    assert tf.saved_model.contains_saved_model(export)
    assert tf.saved_model.maybe_saved_model_directory(export)
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, [tf.saved_model.SERVING], export)
        got = _serve(tf, sess, meta, "serving_default", {"x": X})
    np.testing.assert_allclose(got["probs"], want, **TOL)


def _build(lib, export, asset_path):
    """Two MetaGraphs: ``serve`` (signatures ``serving_default`` and ``scores``; an asset
    a local variable reads, set by the main op: the local variables' initializer) and
    ``train`` (signature ``loss``). Returns what each signature gives for ``X``/``Y``."""
    with lib.Graph().as_default():
        x, y, logits, probs, loss = _net(lib)
        asset = lib.constant(asset_path, name="asset_path")
        lib.add_to_collection(lib.GraphKeys.ASSET_FILEPATHS, asset)
        greeting = lib.Variable(
            lib.read_file(asset),
            trainable=False,
            collections=[lib.GraphKeys.LOCAL_VARIABLES],
            name="greeting",
        )
        sig = lib.saved_model.signature_def_utils
        serve = {
            "serving_default": sig.predict_signature_def(
                {"x": x}, {"probs": probs, "greeting": greeting.read_value()}
            ),
            "scores": sig.predict_signature_def({"features": x}, {"logits": logits}),
        }
        train = {"loss": sig.predict_signature_def({"x": x, "y": y}, {"loss": loss})}
        with lib.Session() as sess:
            sess.run(lib.global_variables_initializer())
            sess.run(greeting.initializer)
            builder = lib.saved_model.builder.SavedModelBuilder(export)
            builder.add_meta_graph_and_variables(
                sess,
                [lib.saved_model.tag_constants.SERVING],
                signature_def_map=serve,
                assets_collection=[asset],
                main_op=lib.local_variables_initializer(),
            )
            builder.add_meta_graph([lib.saved_model.tag_constants.TRAINING], train)
            builder.save()
            return {
                "serving_default": sess.run({"probs": probs, "greeting": greeting}, {x: X}),
                "scores": sess.run({"logits": logits}, {x: X}),
                "loss": sess.run({"loss": loss}, {x: X, y: Y}),
            }


def _load_and_serve(lib, export, import_scope=None):
    """Each signature of each MetaGraph of ``export``, as ``_build`` returns them."""
    out = {}
    feeds = {
        "serving_default": {"x": X},
        "scores": {"features": X},
        "loss": {"x": X, "y": Y},
    }
    for tags in ([lib.saved_model.tag_constants.SERVING], [lib.saved_model.tag_constants.TRAINING]):
        with lib.Graph().as_default(), lib.Session() as sess:
            meta = lib.saved_model.loader.load(sess, tags, export, import_scope=import_scope)
            assert list(meta.meta_info_def.tags) == tags
            for key in meta.signature_def:
                out[key] = _serve(lib, sess, meta, key, feeds[key], import_scope)
    return out


def _same(got, want):
    assert sorted(got) == sorted(want)
    for key in want:
        assert sorted(got[key]) == sorted(want[key]), key
        for name, value in want[key].items():
            if name == "greeting":
                assert got[key][name] == GREETING
            else:
                np.testing.assert_allclose(got[key][name], value, **TOL, err_msg=name)


@pytest.fixture
def asset_path(tmp_path):
    path = tmp_path / "greeting.txt"
    path.write_bytes(GREETING)
    return str(path)


def test_a_builder_tf1_wrote_loads_and_serves_here(tf1, tmp_path, asset_path):
    export = str(tmp_path / "model")
    want = _build(tf1, export, asset_path)
    (tmp_path / "greeting.txt").unlink()  # the loader feeds the copy under assets/
    _same(_load_and_serve(tf, export), want)
    _same(_load_and_serve(tf, export, import_scope="loaded"), want)


@pytest.mark.parametrize("as_text", [False, True], ids=["pb", "pbtxt"])
def test_tf_loads_and_serves_a_saved_model_we_wrote(tf1, tmp_path, asset_path, as_text):
    export = str(tmp_path / "model")
    want = _build(tf, export, asset_path)
    if as_text:  # the same SavedModel, written as text
        saved = read_saved_model(export)
        (tmp_path / "model" / "saved_model.pb").unlink()
        from google.protobuf import text_format

        (tmp_path / "model" / "saved_model.pbtxt").write_text(text_format.MessageToString(saved))
    (tmp_path / "greeting.txt").unlink()
    assert sorted(p.name for p in (tmp_path / "model" / "assets").iterdir()) == ["greeting.txt"]
    _same(_load_and_serve(tf1, export), want)
    _same(_load_and_serve(tf, export), want)


def test_builder_save_as_text(tf1, tmp_path):
    export = str(tmp_path / "model")
    with tf.Graph().as_default():
        x, _, _, probs, _ = _net(tf)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            builder = tf.saved_model.Builder(export)
            builder.add_meta_graph_and_variables(
                sess,
                ["serve"],
                {"p": tf.saved_model.predict_signature_def({"x": x}, {"probs": probs})},
            )
            path = builder.save(as_text=True)
            want = sess.run(probs, {x: X})
    assert path.endswith("saved_model.pbtxt")
    with tf1.Graph().as_default(), tf1.Session() as sess:
        meta = tf1.saved_model.load(sess, ["serve"], export)
        np.testing.assert_allclose(_serve(tf1, sess, meta, "p", {"x": X})["probs"], want, **TOL)


def _signatures(lib):
    """Signatures of every kind (and some invalid ones), built with ``lib``."""
    sig = lib.saved_model.signature_def_utils
    examples = lib.placeholder(lib.string, [None], name="examples")
    x = lib.placeholder(lib.float32, [None, 2], name="x")
    scores = lib.nn.softmax(x, name="scores")
    classes = lib.gather(lib.constant(["no", "yes"]), lib.argmax(x, 1), name="classes")
    ids = lib.argmax(x, 1, name="ids")
    info = lib.saved_model.utils.build_tensor_info
    return {
        "predict": sig.predict_signature_def({"x": x}, {"s": scores}),
        "classify": sig.classification_signature_def(examples, classes, scores),
        "classify_scores": sig.classification_signature_def(examples, None, scores),
        "regress": sig.regression_signature_def(examples, lib.reduce_sum(x, 1, name="total")),
        "custom": sig.build_signature_def({"x": info(x)}, {"ids": info(ids)}, "my/method"),
        "bad_classify": sig.build_signature_def(
            {"inputs": info(x)}, {"scores": info(scores)}, "tensorflow/serving/classify"
        ),
        "bad_regress": sig.build_signature_def(
            {"inputs": info(examples)}, {"outputs": info(ids)}, "tensorflow/serving/regress"
        ),
        "empty_predict": sig.build_signature_def(
            {}, {"s": info(scores)}, "tensorflow/serving/predict"
        ),
    }


def test_signature_helpers_build_what_tf_builds(tf1):
    with tf.Graph().as_default():
        ours = _signatures(tf)
        valid = {k: tf.saved_model.is_valid_signature(v) for k, v in ours.items()}
    with tf1.Graph().as_default():
        theirs = _signatures(tf1)
        want_valid = {k: tf1.saved_model.is_valid_signature(v) for k, v in theirs.items()}
    for key in theirs:
        assert ours[key].SerializeToString(deterministic=True) == theirs[key].SerializeToString(
            deterministic=True
        ), key
    assert valid == want_valid
    assert not tf.saved_model.is_valid_signature(None)


@pytest.mark.parametrize(
    "build",
    [
        lambda lib, x, e: lib.saved_model.predict_signature_def({}, {"x": x}),
        lambda lib, x, e: lib.saved_model.predict_signature_def({"x": x}, None),
        lambda lib, x, e: lib.saved_model.classification_signature_def(x, None, x),
        lambda lib, x, e: lib.saved_model.classification_signature_def(e, None, None),
        lambda lib, x, e: lib.saved_model.classification_signature_def(e, None, e),
        lambda lib, x, e: lib.saved_model.regression_signature_def(e, e),
        lambda lib, x, e: lib.saved_model.regression_signature_def(x, x),
    ],
)
def test_signature_helpers_refuse_what_tf_refuses(tf1, build):
    for lib in (tf1, tf):
        with lib.Graph().as_default():
            x = lib.placeholder(lib.float32, [None], name="x")
            e = lib.placeholder(lib.string, [None], name="e")
            with pytest.raises(ValueError):
                build(lib, x, e)


def test_tensor_info_round_trip(tf1):
    with tf.Graph().as_default() as graph:
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        sparse = tf.SparseTensor([[0, 1]], [2.0], [2, 3])
        info, sparse_info = (tf.saved_model.build_tensor_info(t) for t in (x, sparse))
        assert tf.saved_model.get_tensor_from_tensor_info(info) is x
        back = tf.saved_model.get_tensor_from_tensor_info(sparse_info, graph)
        assert back.indices is sparse.indices and back.values is sparse.values
    with tf1.Graph().as_default():
        x = tf1.placeholder(tf1.float32, [None, 3], name="x")
        sparse = tf1.SparseTensor([[0, 1]], [2.0], [2, 3])
        want, want_sparse = (tf1.saved_model.build_tensor_info(t) for t in (x, sparse))
    assert info.SerializeToString() == want.SerializeToString()
    # TF names a SparseTensor's constants under "SparseTensor/"; the rest is the same.
    for field in ("indices_tensor_name", "values_tensor_name", "dense_shape_tensor_name"):
        got = getattr(sparse_info.coo_sparse, field)
        assert getattr(want_sparse.coo_sparse, field).endswith(got)
    sparse_info.ClearField("coo_sparse")
    want_sparse.ClearField("coo_sparse")
    assert sparse_info.SerializeToString() == want_sparse.SerializeToString()


def test_loader_and_builder_errors_as_tf(tf1, tmp_path):
    missing = str(tmp_path / "nothing")
    assert not tf.saved_model.contains_saved_model(missing)
    with tf.Graph().as_default(), tf.Session() as sess:
        with pytest.raises(tf.errors.NotFoundError, match="SavedModel file does not exist"):
            tf.saved_model.loader.load(sess, ["serve"], missing)
    export = str(tmp_path / "model")
    with tf.Graph().as_default():
        x, _, _, probs, _ = _net(tf)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            tf.saved_model.simple_save(sess, export, {"x": x}, {"p": probs})
            with pytest.raises(AssertionError, match="already exists"):
                tf.saved_model.builder.SavedModelBuilder(export)
            builder = tf.saved_model.builder.SavedModelBuilder(str(tmp_path / "other"))
            with pytest.raises(AssertionError, match="add_meta_graph_and_variables"):
                builder.add_meta_graph(["serve"])
            builder.add_meta_graph_and_variables(sess, ["serve"])
            with pytest.raises(AssertionError, match="add_meta_graph"):
                builder.add_meta_graph_and_variables(sess, ["serve"])
    for lib in (tf1, tf):
        with lib.Graph().as_default(), lib.Session() as sess:
            with pytest.raises(RuntimeError, match="could not be found"):
                lib.saved_model.loader.load(sess, ["train"], export)


def test_main_ops_as_tf(tf1, tmp_path):
    """``main_op`` initializes the global and local variables (after a restore, the
    global ones are initialized again, as in TF1); ``main_op_with_restore`` groups it
    with the restore op (TF1 orders neither before the other)."""
    seen = []
    for lib in (tf1, tf):
        with lib.Graph().as_default() as graph:
            g = lib.Variable(3.0, name="g")
            loc = lib.Variable(4.0, name="loc", collections=[lib.GraphKeys.LOCAL_VARIABLES])
            saver = lib.train.Saver([g])
            with lib.Session() as sess:
                sess.run(g.initializer)
                sess.run(g.assign(7.0))
                prefix = saver.save(sess, str(tmp_path / lib.__name__.split(".")[0]))
                saver.restore(sess, prefix)
                sess.run(lib.saved_model.main_op.main_op())
                seen.append(sess.run([g, loc]))
            restore = graph.get_operation_by_name(saver.as_saver_def().restore_op_name)
            both = lib.saved_model.main_op.main_op_with_restore(restore)
            assert restore in both.control_inputs
            with lib.Session() as sess:
                sess.run(both, {saver.as_saver_def().filename_tensor_name: prefix})
                assert sess.run(loc) == 4.0 and sess.run(g) in (3.0, 7.0)
    assert seen[0] == seen[1] == [3.0, 4.0]
