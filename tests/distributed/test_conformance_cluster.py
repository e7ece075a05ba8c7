"""The session conformance suite (``dataflow/testing/conformance.py``) on a
``LocalCluster(ps=1, worker=2)`` of worker processes, on both execution paths: the
per-step task graph and resident steps. The same tests run on the embedded session in
``tests/runtime/test_conformance.py``."""

from __future__ import annotations

import pytest

import dataflow as tf
from dataflow.testing.conformance import SessionConformance

pytestmark = pytest.mark.distributed


class TestGraphPath(SessionConformance):
    @pytest.fixture
    def session(self, csess: tf.Session) -> tf.Session:
        return csess


class TestResidentSteps(SessionConformance):
    @pytest.fixture
    def session(self, rsess: tf.Session) -> tf.Session:
        return rsess
