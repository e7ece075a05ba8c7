"""``tf.train.ClusterSpec``.

The class lives in the runtime (``runtime/cluster_spec.py``, pure data) because sessions
and ``dataflow.LocalCluster`` read and produce it; this module is its ``tf.train`` home.
"""

from __future__ import annotations

from ..runtime.cluster_spec import ClusterSpec

__all__ = ["ClusterSpec"]
