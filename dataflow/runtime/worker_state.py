"""The preload path of earlier releases (``--preload dataflow.runtime.worker_state``).

Deployments written with it keep working; the module is now
``dataflow.runtime.dask.worker_state``, and the path to preload is ``dataflow.worker``.
"""

from __future__ import annotations

from .dask import worker_state as worker_state  # importing it is the preload
