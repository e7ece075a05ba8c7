"""Shared fixtures: every test starts with a fresh default graph."""

from __future__ import annotations

import logging
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

from .scheduling import make_scheduler


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """With ``-n`` (pytest-xdist), clusters and timings run one file at a time on one
    worker while the other runs the rest (``tests/scheduling.py``); an explicit
    ``--dist`` other than xdist's default is left as asked."""
    if config.getoption("dist") == "load":
        return make_scheduler(config, log)
    return None


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


@pytest.fixture
def dataflow_log(caplog):
    """``caplog`` receiving the package's INFO records: tf.logging's ``"dataflow"``
    logger may have installed its own standard-error handler and stopped propagating to
    the root (where caplog listens) the first time it was used in this process."""
    logger = logging.getLogger("dataflow")
    level, propagate = logger.level, logger.propagate
    caplog.handler.setLevel(logging.INFO)
    logger.setLevel(logging.INFO)
    logger.addHandler(caplog.handler)
    logger.propagate = False  # or the root's caplog handler would see each record twice
    try:
        yield caplog
    finally:
        logger.removeHandler(caplog.handler)
        logger.setLevel(level)
        logger.propagate = propagate


@pytest.fixture
def intra_op_splits(monkeypatch) -> list[int]:
    """The item counts of every ``intra_op.split`` the test's kernels ask for (each
    split still runs)."""
    from dataflow._util import intra_op

    counts: list[int] = []
    real = intra_op.split

    def counted(count, piece, grain=1, blas=False):
        counts.append(count)
        return real(count, piece, grain, blas)

    monkeypatch.setattr(intra_op, "split", counted)
    return counts
