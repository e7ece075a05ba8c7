"""Shared fixtures: every test starts with a fresh default graph."""

from __future__ import annotations

import os

# Deterministic, uncontended BLAS in the test process (see DESIGN.md, "BLAS threads").
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
# Every session in the tests checks each kernel's output dtype and shape (STYLE habit 6).
os.environ.setdefault("DATAFLOW_DEBUG", "1")
# The reference's tf.compat.v1.layers needs Keras 2 (the tf-keras package), chosen
# before TensorFlow is first imported.
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

import pytest

import dataflow as tf


@pytest.fixture(autouse=True)
def fresh_default_graph():
    tf.reset_default_graph()
    yield
    tf.reset_default_graph()


@pytest.fixture
def sess():
    """An embedded session with per-kernel dtype/shape checks on."""
    with tf.Session(config=tf.ConfigProto(debug=True)) as s:
        yield s
