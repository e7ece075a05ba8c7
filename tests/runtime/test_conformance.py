"""The session conformance suite (``dataflow/testing/conformance.py``) on the embedded
executor; ``tests/distributed/test_conformance_cluster.py`` runs it on a cluster."""

from __future__ import annotations

import pytest

import dataflow as tf
from dataflow.testing.conformance import SessionConformance


class TestEmbeddedSession(SessionConformance):
    @pytest.fixture
    def session(self, sess: tf.Session) -> tf.Session:
        return sess
