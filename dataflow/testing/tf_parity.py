"""Running one TF1 program with ``dataflow`` and with ``tensorflow.compat.v1``.

A parity test writes its program once, against a module ``tf``: ``build(tf)`` returns
``(fetches, feed_dict)`` (``feed_dict`` may be ``None``). ``run_in_fresh_graph`` builds
it in a new graph of one library and runs it once in a session of that graph;
``assert_same_fetches`` compares our fetched values with TensorFlow's, and
``assert_parity_on_constants`` does both for a program of constant inputs. The caller
imports TensorFlow (``pytest.importorskip``) and passes it in; this module never does.

    ours = run_in_fresh_graph(dataflow, build)
    theirs = run_in_fresh_graph(tf1, build)
    assert_same_fetches(ours, theirs, rtol=1e-5, atol=1e-6)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import dataflow


def run_in_fresh_graph(tf: Any, build: Callable[[Any], tuple[Any, dict | None]]) -> Any:
    """Builds ``build(tf)`` in a new ``tf.Graph`` and returns one run of its fetches."""
    graph = tf.Graph()
    with graph.as_default():
        fetches, feed_dict = build(tf)
        with tf.Session(graph=graph) as sess:
            return sess.run(fetches, feed_dict)


def assert_parity_on_constants(
    tf1: Any, program: Callable[..., Any], *inputs: Any, rtol: float = 1e-5, atol: float = 1e-6
) -> None:
    """``program(tf, *constants)`` (a list of tensors; ``inputs`` as constants) fetches the
    same with ``dataflow`` (run first) and with ``tf1``."""

    def build(tf: Any) -> tuple[Any, None]:
        return program(tf, *[tf.constant(x) for x in inputs]), None

    ours, theirs = (run_in_fresh_graph(lib, build) for lib in (dataflow, tf1))
    assert_same_fetches(ours, theirs, rtol=rtol, atol=atol)


def assert_same_fetches(
    ours: Sequence[Any], theirs: Sequence[Any], rtol: float = 1e-5, atol: float = 1e-6
) -> None:
    """The same number of fetches and, per fetch, the same shape, dtype and values."""
    assert len(ours) == len(theirs)
    for k, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape, f"fetch {k}: shape {a.shape} != TF's {b.shape}"
        assert a.dtype == b.dtype, f"fetch {k}: dtype {a.dtype} != TF's {b.dtype}"
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=f"fetch {k}")
