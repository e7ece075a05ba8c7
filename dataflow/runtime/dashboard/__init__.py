"""The dataflow page of the Dask dashboard: every step visible, on either step path.

Steps sent straight to the workers (the resident path) never reach the scheduler, so
Dask's own pages cannot show them. ``register(client)`` adds a page to the
scheduler's dashboard (same port, ``/dataflow``; listed in ``individual-plots.json``,
where JupyterLab's Dask extension finds pages) that shows live, from what each worker
records (``step_metrics.py``): steps/s per session, stage times per device, bytes
moved between devices, the placed graph of each plan by stage, and the memory that
variables and queues hold on each worker.

* ``plugin.py``: the ``SchedulerPlugin`` that adds the routes, and their handlers;
* ``gather.py``: what a worker reports, and how the scheduler merges the reports;
* ``page.py``: the page (HTML and a small script that redraws it every second).

``register`` works on a running cluster (it needs no restart) and is idempotent;
``DaskBackend`` calls it for every session, and it costs one scheduler RPC per client.
The plugin travels by value, so a scheduler without dataflow installed serves the
page too. Nothing here ever raises into a session: a failure is logged at debug level.
"""

from __future__ import annotations

import logging
import sys
import weakref
from typing import Any

logger = logging.getLogger(__name__)

_registered: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # client -> comm


def register(client: Any) -> bool:
    """Adds the dataflow page to the dashboard of ``client``'s scheduler, once per
    scheduler connection; returns whether the page is there (``False`` after a failure,
    which is logged at debug level, never raised).

    Open it at ``<dashboard>/dataflow`` (``dashboard_link`` with ``status`` replaced).
    """
    try:
        comm = client.scheduler_comm
        if comm is not None and _registered.get(client) is comm:
            return True
        import cloudpickle

        from . import plugin

        # By value (as ``worker_plugin.py`` does): a scheduler without dataflow can
        # unpickle it. Dask looks for the plugin's own module in the registry.
        cloudpickle.register_pickle_by_value(sys.modules[__name__])
        cloudpickle.register_pickle_by_value(plugin)
        client.register_plugin(plugin.DataflowPage(), name=plugin.PLUGIN_NAME)
        _registered[client] = comm
        return True
    except Exception:
        logger.debug("dataflow: could not add the dashboard page", exc_info=True)
        return False
