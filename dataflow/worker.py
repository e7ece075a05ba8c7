"""Preload this on Dask workers and schedulers: ``dask worker ... --preload dataflow.worker``.

Importing it imports dataflow and the worker side of a cluster session
(``runtime/dask/worker_state.py``), so a worker pays that import when it starts instead of
in the first step that reaches it. A ``dataflow.LocalCluster`` preloads it on its own.
"""

from __future__ import annotations

from .runtime.dask import worker_state as worker_state
