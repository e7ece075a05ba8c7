"""A TF1 model scored over Dask collections in this process (Dask's local schedulers):
frozen graphs ``tensorflow.compat.v1`` wrote, mapped over a ``dask.array`` of many blocks
and a ``dask.dataframe``, give TF's outputs on the whole data; the result is lazy, with
the model as one task of its graph; what cannot fit fails early with TF1's classes.
The same on a real cluster: tests/distributed/test_scoring_cluster.py."""

from __future__ import annotations

import dask
import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

import dataflow as tf
from dataflow.train.scoring import LegacyModel, load_counts, map_blocks
from tests.train import tf1_models

pytestmark = pytest.mark.tf

RTOL, ATOL = 2e-5, 2e-6  # float32 matmuls summed in another order than TF's


@pytest.fixture(scope="module")
def tf1():
    tensorflow = pytest.importorskip("tensorflow")
    tensorflow.compat.v1.disable_eager_execution()
    return tensorflow.compat.v1


@pytest.fixture(scope="module")
def mlp(tf1):
    return tf1_models.mlp(tf1)


@pytest.fixture(scope="module")
def cnn(tf1):
    return tf1_models.cnn(tf1)


def _rows(n, width, seed=0):
    return np.random.default_rng(seed).normal(size=(n, width)).astype(np.float32)


@pytest.mark.parametrize("scheduler", ["sync", "threads", "processes"])
def test_mlp_over_a_dask_array_equals_tf_on_the_whole_array(tf1, mlp, scheduler):
    model = LegacyModel.from_frozen_graph(mlp, ["x"], ["probs", "logits:0"])
    x = _rows(1200, 8)
    scored = map_blocks(model, da.from_array(x, chunks=100))
    assert set(scored) == {"probs", "logits:0"}
    probs, logits = dask.compute(scored["probs"], scored["logits:0"], scheduler=scheduler)
    want = tf1_models.run(tf1, mlp, ["probs:0", "logits:0"], {"x:0": x})
    np.testing.assert_allclose(probs, want[0], rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(logits, want[1], rtol=RTOL, atol=ATOL)
    assert probs.dtype == np.float32


def test_result_is_lazy_with_the_model_as_one_task(mlp):
    model = LegacyModel.from_frozen_graph(mlp, ["x"], ["probs", "logits"])
    x = da.from_array(_rows(1200, 8), chunks=100)
    probs, logits = map_blocks(model, x, outputs=["probs", "logits"])
    assert probs.chunks == ((100,) * 12, (3,)) and probs.dtype == np.float32
    assert isinstance(probs._meta, np.ndarray) and probs._meta.shape == (0, 0)
    graph = {**dict(probs.__dask_graph__()), **dict(logits.__dask_graph__())}
    # 12 blocks of x, the model once, one step per block and one pick per output and block
    assert len(graph) == 12 + 1 + 12 + 2 * 12
    holders = [k for k, v in graph.items() if getattr(v, "value", None) is model]
    assert len(holders) == 1
    before = load_counts().get(model.fingerprint, 0)
    out = dask.compute(probs, logits, scheduler="threads")
    assert load_counts()[model.fingerprint] == before + 1  # imported once for 12 blocks
    np.testing.assert_allclose(out[0], tf_softmax(out[1]), rtol=1e-5, atol=1e-6)


def tf_softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_cnn_with_two_inputs_and_a_4d_output(tf1, cnn):
    model = LegacyModel.from_frozen_graph(cnn, ["image", "scale"], ["scores", "features"])
    rng = np.random.default_rng(1)
    image = rng.normal(size=(110, 10, 10, 2)).astype(np.float32)
    scale = rng.uniform(0.5, 2.0, 110).astype(np.float32)
    # the scale's blocks differ from the image's: they are rechunked to the image's rows
    scores, features = map_blocks(
        model,
        {"image": da.from_array(image, chunks=(10, 5, 10, 2)), "scale": da.from_array(scale, 25)},
        outputs=["scores", "features"],
    )
    assert scores.chunks == ((10,) * 11, (4,))
    assert features.chunks == ((10,) * 11, (5,), (5,), (3,))
    got = dask.compute(scores, features, scheduler="threads")
    want = tf1_models.run(
        tf1, cnn, ["scores:0", "features:0"], {"image:0": image, "scale:0": scale}
    )
    np.testing.assert_allclose(got[0], want[0], rtol=RTOL, atol=1e-5)
    np.testing.assert_allclose(got[1], want[1], rtol=RTOL, atol=ATOL)


def test_mlp_over_a_dataframe_keeps_index_and_names_columns(tf1, mlp):
    model = LegacyModel.from_frozen_graph(mlp, {"features": "x:0"}, ["probs", "logits"])
    x = _rows(600, 8, seed=2)
    frame = pd.DataFrame(x, columns=[f"f{i}" for i in range(8)], index=np.arange(600) * 3)
    frame["label"] = np.arange(600) % 3
    parts = dd.from_pandas(frame, npartitions=10)
    scored = map_blocks(
        model,
        parts,
        inputs={"features": [f"f{i}" for i in range(8)]},
        outputs={"probs": ["p_a", "p_b", "p_c"], "logits": ["l0", "l1", "l2"]},
    )
    assert list(scored.columns) == ["p_a", "p_b", "p_c", "l0", "l1", "l2"]
    assert scored.npartitions == 10 and scored.divisions == parts.divisions
    assert all(scored.dtypes == np.float32)
    out = scored.compute(scheduler="threads")
    want = tf1_models.run(tf1, mlp, ["probs:0", "logits:0"], {"x:0": x})
    np.testing.assert_array_equal(out.index, frame.index)
    np.testing.assert_allclose(out[["p_a", "p_b", "p_c"]], want[0], rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(out[["l0", "l1", "l2"]], want[1], rtol=RTOL, atol=ATOL)
    # default names: the key without ":0", a matrix's columns numbered
    named = map_blocks(model, parts[[f"f{i}" for i in range(8)]], outputs=["probs"])
    assert list(named.columns) == ["probs_0", "probs_1", "probs_2"]


@pytest.fixture(scope="module")
def vectors(tf1):
    """``a`` float32 [None] and ``n`` int32 [None] -> ``y = a * n + 1`` [None]."""
    graph = tf1.Graph()
    with graph.as_default():
        a = tf1.placeholder(tf1.float32, [None], name="a")
        n = tf1.placeholder(tf1.int32, [None], name="n")
        tf1.add(a * tf1.cast(n, tf1.float32), 1.0, name="y")
        tf1.reduce_sum(a, name="total")
        tf1.identity(a[:3], name="head")
    return graph.as_graph_def()


def test_columns_feed_vectors(tf1, vectors):
    model = LegacyModel.from_frozen_graph(vectors, ["a", "n"], ["y"])
    frame = pd.DataFrame({"a": np.linspace(0, 1, 50), "n": np.arange(50, dtype=np.int64)})
    parts = dd.from_pandas(frame, npartitions=5)
    out = map_blocks(model, parts, inputs={"a": "a", "n": "n"}, outputs={"y": "score"})
    got = out.compute(scheduler="sync")
    want = tf1_models.run(tf1, vectors, ["y:0"], {"a:0": frame.a, "n:0": frame.n})[0]
    np.testing.assert_allclose(got["score"], want, rtol=1e-6)
    assert got["score"].dtype == np.float32


def test_a_frozen_graph_file_tf_wrote(tf1, mlp, tmp_path):
    path = tf1.io.write_graph(mlp, str(tmp_path), "frozen.pb", as_text=False)
    model = LegacyModel.from_frozen_graph(path, ["x"], ["probs"])
    x = _rows(300, 8, seed=5)
    got = map_blocks(model, da.from_array(x, chunks=30)).compute(scheduler="sync")
    want = tf1_models.run(tf1, mlp, ["probs:0"], {"x:0": x})[0]
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


def test_a_saved_model_tf_wrote(tf1, tmp_path):
    export_dir = str(tmp_path / "export")
    tf1_models.saved_mlp(tf1, export_dir)
    model = LegacyModel.from_saved_model(export_dir)
    assert model.inputs == ("features", "weight") and model.outputs == ("probs", "score")
    assert model.input_spec("features").tensor == "features:0"
    rng = np.random.default_rng(6)
    x = rng.normal(size=(330, 6)).astype(np.float32)
    weight = rng.uniform(size=330).astype(np.float32)
    scored = map_blocks(
        model, {"features": da.from_array(x, 30), "weight": da.from_array(weight, 30)}
    )
    assert scored["score"].chunks == ((30,) * 11,)
    got = dask.compute(scored, scheduler="threads")[0]
    want = tf1_models.run_saved(
        tf1, export_dir, ["probs", "score"], {"features": x, "weight": weight}
    )
    np.testing.assert_allclose(got["probs"], want[0], rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(got["score"], want[1], rtol=RTOL, atol=ATOL)
    frame = pd.DataFrame(x, columns=list("abcdef")).assign(w=weight)
    table = map_blocks(
        model,
        dd.from_pandas(frame, npartitions=11),
        inputs={"features": list("abcdef"), "weight": "w"},
        outputs={"score": "score"},
    ).compute(scheduler="sync")
    np.testing.assert_allclose(table["score"], want[1], rtol=RTOL, atol=ATOL)
    with pytest.raises(tf.errors.NotFoundError, match="no signature 'predict'.*serving_default"):
        LegacyModel.from_saved_model(export_dir, signature_key="predict")
    with pytest.raises(tf.errors.NotFoundError):
        LegacyModel.from_saved_model(str(tmp_path / "nothing"))


def test_unknown_names_are_not_found(mlp):
    with pytest.raises(tf.errors.NotFoundError, match="names no tensor.*nope:0"):
        LegacyModel.from_frozen_graph(mlp, ["nope"], ["probs"])
    with pytest.raises(tf.errors.NotFoundError, match="probs:1"):
        LegacyModel.from_frozen_graph(mlp, ["x"], ["probs:1"])
    model = LegacyModel.from_frozen_graph(mlp, ["x"], ["probs"])
    x = da.zeros((40, 8), chunks=10, dtype=np.float32)
    with pytest.raises(tf.errors.NotFoundError, match="no output 'logits'"):
        map_blocks(model, x, outputs="logits")
    with pytest.raises(tf.errors.NotFoundError, match="no input 'y'"):
        map_blocks(model, {"y": x})
    frame = dd.from_pandas(pd.DataFrame({"a": np.zeros(10)}), npartitions=2)
    with pytest.raises(tf.errors.NotFoundError, match="no column"):
        map_blocks(model, frame, inputs={"x": ["a", "b"]})
    with pytest.raises(tf.errors.NotFoundError, match="No frozen graph"):
        LegacyModel.from_frozen_graph("/nonexistent/frozen.pb", ["x"], ["y"])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Not a GraphDef"):
        LegacyModel.from_frozen_graph(b"\xff\xff not protobuf", ["x"], ["y"])


def test_blocks_that_do_not_fit_fail_at_call_time(mlp, vectors):
    model = LegacyModel.from_frozen_graph(mlp, ["x"], ["probs"])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"takes shape \(\?, 8\).*\(rows, 7\)"):
        map_blocks(model, da.zeros((40, 7), chunks=10))
    with pytest.raises(tf.errors.InvalidArgumentError, match="takes shape"):
        map_blocks(model, da.zeros((40, 8, 1), chunks=10))
    with pytest.raises(tf.errors.InvalidArgumentError, match="takes float32.*<U1"):
        map_blocks(model, da.from_array(np.full((4, 8), "a"), chunks=2))
    both = LegacyModel.from_frozen_graph(vectors, ["a", "n"], ["y"])
    frame = dd.from_pandas(pd.DataFrame({"a": np.zeros(10), "n": np.zeros(10)}), npartitions=2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="takes int32.*column 'n'"):
        map_blocks(both, frame, inputs={"a": "a", "n": "n"})
    with pytest.raises(tf.errors.InvalidArgumentError, match="nothing feeds \\['n'\\]"):
        map_blocks(both, frame, inputs={"a": "a"})
    with pytest.raises(tf.errors.InvalidArgumentError, match="30 and 20 rows"):
        map_blocks(both, {"a": da.zeros(30, chunks=10), "n": da.zeros(20, chunks=10)})
    scalar = LegacyModel.from_frozen_graph(vectors, ["a"], ["total"])
    with pytest.raises(tf.errors.InvalidArgumentError, match="is a scalar"):
        map_blocks(scalar, da.zeros(30, chunks=10))


def test_an_output_that_is_not_per_row_fails_when_run(vectors):
    model = LegacyModel.from_frozen_graph(vectors, ["a"], ["head"])
    out = map_blocks(model, da.arange(30, chunks=10, dtype=np.float32))
    with pytest.raises(tf.errors.InvalidArgumentError, match="shape \\(3,\\) for a block of 10"):
        out.compute(scheduler="sync")


def test_a_fixed_batch_size_needs_blocks_of_that_size(tf1):
    graph = tf1.Graph()
    with graph.as_default():
        x = tf1.placeholder(tf1.float32, [16, 2], name="x")
        tf1.identity(x * 2.0, name="y")
    model = LegacyModel.from_frozen_graph(graph.as_graph_def(), ["x"], ["y"])
    with pytest.raises(tf.errors.InvalidArgumentError, match="blocks of 16 rows"):
        map_blocks(model, da.zeros((40, 2), chunks=16, dtype=np.float32))
    out = map_blocks(model, da.ones((48, 2), chunks=16, dtype=np.float32))
    np.testing.assert_array_equal(out.compute(scheduler="sync"), np.full((48, 2), 2.0))
