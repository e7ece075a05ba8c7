"""GraphDefs with issue 32's signal, linalg and special-function ops go both ways: TF1
imports and runs what dataflow writes, and dataflow imports and runs what TF1 writes,
with the same values. (``expm`` is left out: TF's is a Python composite, and its
GraphDefs reject the ``MatrixExponential`` op that TF removed.)"""

from __future__ import annotations

import numpy as np
import pytest

import dataflow

pytestmark = pytest.mark.tf
tf1 = pytest.importorskip("tensorflow.compat.v1")

rng = np.random.default_rng(3)
X = rng.standard_normal((4, 4))
P = rng.uniform(0.5, 2.0, (4, 4))


def _build(tf):
    x = tf.constant(X, name="x")
    p = tf.constant(P, name="p")
    z = tf.complex(x, p)
    s, u, v = tf.linalg.svd(x)
    q, r = tf.linalg.qr(x)
    e, w = tf.linalg.eigh(x + tf.transpose(x))
    lu, perm = tf.linalg.lu(x + 4.0 * tf.eye(4, dtype=tf.float64))
    outs = [
        tf.abs(tf.signal.fft(z)),
        tf.signal.irfft(tf.signal.rfft(x)),
        tf.math.real(tf.signal.fft2d(z)),
        tf.math.angle(tf.math.conj(z)),
        s,
        tf.abs(r),
        e,
        tf.linalg.slogdet(x)[1],
        lu,
        tf.cast(perm, tf.float64),
        tf.math.igamma(p, p),
        tf.math.betainc(p, p, p / 3.0),
        tf.math.zeta(p + 1.0, p),
        tf.math.xlogy(x, p),
        tf.math.bessel_i1e(x),
        tf.math.cumulative_logsumexp(x, axis=1),
        tf.math.segment_prod(x, [0, 0, 1, 1]),
    ]
    return [tf.identity(o, name=f"out{k}") for k, o in enumerate(outs)]


def _run_imported(lib, graph_def, count):
    # Through the wire format: each library reads the other's serialized bytes.
    data = graph_def.SerializeToString()
    graph_def = tf1.GraphDef.FromString(data) if lib is tf1 else data
    graph = lib.Graph()
    with graph.as_default():
        fetched = lib.import_graph_def(
            graph_def, return_elements=[f"out{k}:0" for k in range(count)]
        )
        with lib.Session(graph=graph) as sess:
            return sess.run(fetched)


def _run_built(lib):
    graph = lib.Graph()
    with graph.as_default():
        outs = _build(lib)
        with lib.Session(graph=graph) as sess:
            return sess.run(outs), graph.as_graph_def(), len(outs)


@pytest.mark.parametrize("writer, reader", [(dataflow, tf1), (tf1, dataflow)])
def test_graph_defs_go_both_ways(writer, reader):
    want, graph_def, count = _run_built(writer)
    got = _run_imported(reader, graph_def, count)
    for k, (a, b) in enumerate(zip(got, want, strict=True)):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9, err_msg=f"out{k}")
