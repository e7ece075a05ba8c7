"""A TF1 frozen graph scored over Dask collections on real clusters (a
``dataflow.LocalCluster`` and a plain ``distributed.LocalCluster(processes=True)``):
TF's outputs on the whole data; the model crosses to each worker once (the scattered
key on every worker, one import per worker process, a task graph whose size does not
grow with the model's); the outputs stay on the workers until the test gathers them."""

from __future__ import annotations

import pickle

import dask.array as da
import dask.dataframe as dd
import distributed
import numpy as np
import pandas as pd
import pytest

from dataflow.testing.dask_transfers import sent_bytes
from dataflow.train.scoring import LegacyModel, load_counts, map_blocks
from tests.distributed.conftest import collect_leaked_sockets
from tests.train import tf1_models

pytestmark = [pytest.mark.distributed, pytest.mark.tf]

RTOL, ATOL = 2e-5, 2e-6


@pytest.fixture(scope="module")
def tf1():
    tensorflow = pytest.importorskip("tensorflow")
    tensorflow.compat.v1.disable_eager_execution()
    return tensorflow.compat.v1


def _counts(client, fingerprint):
    """Worker address -> how many times that worker process imported the model."""
    return {a: c.get(fingerprint, 0) for a, c in client.run(load_counts).items()}


def _graph_bytes(collection):
    return len(pickle.dumps(dict(collection.__dask_graph__()), protocol=5))


def test_mlp_on_a_dataflow_cluster_crosses_once_and_stays_on_the_workers(tf1, cluster):
    client = cluster.client
    frozen = tf1_models.mlp(tf1)
    model = LegacyModel.from_frozen_graph(frozen, ["x"], ["probs", "logits"])
    x = np.random.default_rng(0).normal(size=(2400, 8)).astype(np.float32)
    blocks = client.persist(da.from_array(x, chunks=200))  # 12 blocks on the workers
    with client.as_current():
        distributed.wait(distributed.futures_of(blocks))
    # Dask's active memory manager drops a key's extra replicas every 2 s while no task
    # waits for it (its ReduceReplicas policy), so the broadcast is looked at with it paused;
    # the rest of the test runs with it, as a user's cluster does.
    was_running = client.amm.running()
    client.amm.stop()
    try:
        probs, logits = map_blocks(model, blocks, outputs=["probs", "logits"], client=cluster)
        holders = client.has_what()
    finally:
        if was_running:
            client.amm.start()

    # The model is one scattered key, on every worker; the result holds no data.
    key = f"legacy-model-{model.fingerprint[:32]}"
    graph = dict(probs.__dask_graph__())
    steps = [t for k, t in graph.items() if k[0].startswith("legacy-model-score-")]
    assert len(steps) == 12 and all(key in t.dependencies for t in steps)
    assert key not in graph and not any(isinstance(t, np.ndarray) for t in graph.values())
    assert len(holders) == 3 and all(key in keys for keys in holders.values())

    # A model 300 times bigger gives the same task graph, to the byte.
    big = LegacyModel.from_frozen_graph(tf1_models.mlp(tf1, extra=200_000), ["x"], ["probs"])
    assert len(big.graph_def) > 300 * len(model.graph_def)
    small_graph = _graph_bytes(map_blocks(model, blocks, outputs="probs", client=cluster))
    assert _graph_bytes(map_blocks(big, blocks, outputs="probs", client=cluster)) == small_graph
    assert small_graph < len(big.graph_def) / 50

    # Computed on the cluster, kept there: nothing of the outputs reaches this process.
    kept = client.persist([probs, logits])
    with client.as_current():
        distributed.wait(distributed.futures_of(kept))
    out_keys = [k for c in kept for k in c.__dask_keys__()]
    flat = [k for row in out_keys for k in (row if isinstance(row, list) else [row])]
    assert sent_bytes(client, keys=flat)["to_clients"] == 0
    counts = _counts(client, model.fingerprint)
    assert set(counts.values()) <= {0, 1} and sum(counts.values()) >= 1, counts

    # Mapping the same model again reuses the scattered key and the workers' sessions.
    again = map_blocks(model, blocks, outputs="logits", client=cluster)
    got_probs, got_logits, got_again = client.gather(client.compute([*kept, again]))
    assert _counts(client, model.fingerprint) == counts
    want = tf1_models.run(tf1, frozen, ["probs:0", "logits:0"], {"x:0": x})
    np.testing.assert_allclose(got_probs, want[0], rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(got_logits, want[1], rtol=RTOL, atol=ATOL)
    np.testing.assert_array_equal(got_again, got_logits)


@pytest.fixture(scope="module")
def plain():
    """A plain Dask cluster of three worker processes, with this test's client default."""
    with collect_leaked_sockets():
        c = distributed.LocalCluster(
            n_workers=3, threads_per_worker=2, processes=True, dashboard_address=None
        )
    client = distributed.Client(c)
    try:
        yield client
    finally:
        with collect_leaked_sockets():
            client.close()
            c.close()


def test_cnn_and_a_dataframe_on_a_plain_dask_cluster(tf1, plain):
    frozen = tf1_models.cnn(tf1)
    model = LegacyModel.from_frozen_graph(frozen, ["image", "scale"], ["scores"])
    rng = np.random.default_rng(1)
    image = rng.normal(size=(120, 10, 10, 2)).astype(np.float32)
    scale = rng.uniform(0.5, 2.0, 120).astype(np.float32)
    scores = map_blocks(  # the default client: scattered to its workers
        model,
        {"image": da.from_array(image, chunks=10), "scale": da.from_array(scale, chunks=10)},
    )
    assert scores.chunks == ((10,) * 12, (4,))
    got = scores.compute()
    want = tf1_models.run(tf1, frozen, ["scores:0"], {"image:0": image, "scale:0": scale})
    np.testing.assert_allclose(got, want[0], rtol=RTOL, atol=1e-5)
    counts = _counts(plain, model.fingerprint)
    assert set(counts.values()) <= {0, 1} and sum(counts.values()) >= 2, counts

    mlp_frozen = tf1_models.mlp(tf1)
    mlp = LegacyModel.from_frozen_graph(mlp_frozen, {"features": "x"}, ["probs"])
    x = rng.normal(size=(1000, 8)).astype(np.float32)
    frame = pd.DataFrame(x, columns=list("abcdefgh"))
    frame["id"] = np.arange(1000)
    parts = dd.from_pandas(frame, npartitions=12)
    scored = map_blocks(mlp, parts, inputs={"features": list("abcdefgh")})
    assert list(scored.columns) == ["probs_0", "probs_1", "probs_2"]
    out = scored.compute()
    want = tf1_models.run(tf1, mlp_frozen, ["probs:0"], {"x:0": x})[0]
    np.testing.assert_allclose(out.to_numpy(), want, rtol=RTOL, atol=ATOL)
    np.testing.assert_array_equal(out.index, frame.index)
    counts = _counts(plain, mlp.fingerprint)
    assert set(counts.values()) <= {0, 1} and sum(counts.values()) >= 2, counts


def test_without_a_client_the_model_is_one_task_each_worker_copies_once(tf1, plain):
    frozen = tf1_models.mlp(tf1, hidden=16)
    model = LegacyModel.from_frozen_graph(frozen, ["x"], ["logits"])
    x = np.random.default_rng(3).normal(size=(1200, 8)).astype(np.float32)
    with distributed.Client(plain.cluster, set_as_default=False) as other:
        # made while no client is current: the model is a literal task of the graph
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(distributed, "default_client", _no_client)
            lazy = map_blocks(model, da.from_array(x, chunks=100))
        holders = [
            k for k, v in dict(lazy.__dask_graph__()).items() if getattr(v, "value", None) is model
        ]
        assert len(holders) == 1
        got = other.compute(lazy).result()
    want = tf1_models.run(tf1, frozen, ["logits:0"], {"x:0": x})[0]
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
    counts = _counts(plain, model.fingerprint)
    assert set(counts.values()) <= {0, 1} and sum(counts.values()) >= 1, counts


def _no_client():
    raise ValueError("No clients found")


def test_a_saved_model_signature_on_a_plain_dask_cluster(tf1, plain, tmp_path):
    export_dir = str(tmp_path / "export")
    tf1_models.saved_mlp(tf1, export_dir)
    model = LegacyModel.from_saved_model(export_dir, tags=["serve"])
    rng = np.random.default_rng(7)
    x = rng.normal(size=(440, 6)).astype(np.float32)
    weight = rng.uniform(size=440).astype(np.float32)
    scored = map_blocks(
        model,
        {"features": da.from_array(x, chunks=40), "weight": da.from_array(weight, chunks=40)},
        outputs=["score", "probs"],
    )
    assert [a.chunks[0] for a in scored] == [(40,) * 11] * 2
    got = plain.gather(plain.compute(scored))
    want = tf1_models.run_saved(
        tf1, export_dir, ["score", "probs"], {"features": x, "weight": weight}
    )
    np.testing.assert_allclose(got[0], want[0], rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(got[1], want[1], rtol=RTOL, atol=ATOL)
    counts = _counts(plain, model.fingerprint)
    assert set(counts.values()) <= {0, 1} and sum(counts.values()) >= 1, counts
