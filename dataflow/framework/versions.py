"""``tf.version``'s values: which TensorFlow dataflow stands in for, and which build it is.

A TF1 program reads these to check the API level it runs on
(``LooseVersion(tf.VERSION) >= "1.13"``) or to stamp a ``GraphDef``. dataflow implements
TF 1.15's graph-mode API, so ``VERSION`` is ``"1.15.0"`` and the ``GraphDef`` versions are
TF 1.15's (the producer version ``to_graph_def`` writes, ``graph_def.PRODUCER``). The build
strings say what really runs: ``GIT_VERSION`` names dataflow and its own version, and
``COMPILER_VERSION`` the Python implementation that runs it (dataflow compiles nothing).
"""

from __future__ import annotations

import platform

from .graph_def import PRODUCER

DATAFLOW_VERSION = "0.2.0"
"""dataflow's own release (``dataflow.__version__``)."""

VERSION = "1.15.0"
"""The TensorFlow API version dataflow implements."""

GIT_VERSION = f"dataflow-{DATAFLOW_VERSION}"
"""The build that runs: dataflow and its release (TF's is ``v1.15.0-rc3-22-g590d6ee``)."""

COMPILER_VERSION = f"{platform.python_implementation()} {platform.python_version()}"
"""What runs dataflow's code: the Python implementation and its version."""

GRAPH_DEF_VERSION = PRODUCER
"""The ``GraphDef`` producer version dataflow writes: TF 1.15's (134)."""

GRAPH_DEF_VERSION_MIN_CONSUMER = 0
"""The oldest ``GraphDef`` consumer version that can read dataflow's graphs (TF 1.15's)."""

GRAPH_DEF_VERSION_MIN_PRODUCER = 0
"""The oldest ``GraphDef`` producer version dataflow reads (TF 1.15's)."""
