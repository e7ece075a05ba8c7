"""The worker plugin a dataflow client registers on its Dask cluster.

Each ``ClusterView`` (one per client) registers one ``DataflowWorkerPlugin`` under its
own name, ``dataflow-<client id>``, and unregisters it when the view closes. The
scheduler replays registered plugins on every worker that joins later, which is how a
restarted ``ps-0`` gets its pinning resource and RPC handlers back.

Two properties keep a shared cluster as we found it:

* **Pickled by value.** Dask would pickle the plugin by reference to this module, and a
  worker that joins later *without* dataflow installed would then fail to unpickle it
  and never start (its nanny retrying and ignoring SIGTERM). ``register_by_value``
  makes cloudpickle carry the class itself; its methods import dataflow only when they
  run, and a worker without dataflow logs one warning and joins as a plain Dask worker.
  So this module imports nothing of dataflow at module level.
* **One registration per client.** Between-graph replication has one client per
  training process; each keeps its own registration, so one process closing does not
  take the plugin away from the others, and the worker's handlers are removed only when
  the last dataflow registration on it goes (``teardown``).
"""

from __future__ import annotations

import logging
from typing import Any

from distributed import WorkerPlugin

PLUGIN_PREFIX = "dataflow-"


class DataflowWorkerPlugin(WorkerPlugin):
    """Prepares a worker for dataflow stages (``worker_steps.prepare_worker``)."""

    def __init__(self, name: str) -> None:
        self.name = name

    async def setup(self, worker: Any) -> None:
        try:
            from dataflow.runtime.dask import worker_steps
            from dataflow.runtime.execute import malloc_policy
        except ImportError as exc:
            logging.getLogger("distributed.worker").warning(
                "dataflow is not importable on this worker (%s); it runs plain Dask work "
                "but no dataflow stages",
                exc,
            )
            return
        await worker_steps.prepare_worker(worker)
        malloc_policy.apply()  # large arrays reuse memory under Dask's nanny setting

    async def teardown(self, worker: Any) -> None:
        # Dask removes the plugin from ``worker.plugins`` before calling this.
        if any(str(name).startswith(PLUGIN_PREFIX) for name in worker.plugins):
            return  # another client's registration still needs the handlers
        try:
            from dataflow.runtime.dask import worker_steps
        except ImportError:
            return
        await worker_steps.release_worker(worker)


def usable_gpus(dask_worker: Any = None) -> tuple[int, str]:
    """Run on a worker (``Client.run``, pickled by value like the plugin): how many GPUs
    dataflow's kernels can use there, and when none, why. A worker started with a ``GPU``
    resource but no working CuPy has none."""
    try:
        from dataflow.runtime import devices
    except ImportError as exc:
        return 0, f"dataflow is not importable there ({exc})"
    n = devices.gpu_count()
    return n, "" if n else devices.gpu_check()[1]


def register_by_value() -> None:
    """Makes Dask pickle ``DataflowWorkerPlugin`` by value (idempotent)."""
    import sys

    import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
