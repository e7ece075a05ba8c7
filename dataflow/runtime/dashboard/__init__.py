"""The dataflow page of the Dask dashboard: every step visible, on either step path.

Steps sent straight to the workers (the resident path) never reach the scheduler, so
Dask's own pages cannot show them. ``register(client)`` adds a page to the
scheduler's dashboard (same port, ``/dataflow``; listed in ``individual-plots.json``,
where JupyterLab's Dask extension finds pages) that shows live, from what each worker
records (``dask/step_metrics.py``): steps/s per session, stage times per device, bytes
moved between devices, the placed graph of each plan by stage, and the memory that
variables and queues hold on each worker.

* ``plugin.py``: the ``SchedulerPlugin`` that adds the routes, and their handlers;
* ``gather.py``: what a worker reports, and how the scheduler merges the reports;
* ``page.py``: the page (HTML and a small script that redraws it every second).

Training progress toward a target: ``report_progress(session, global_step, last_step)``
(called by ``tf.train.MonitoredSession`` and ``HookedSession`` about once a second,
``train/sessions/progress.py``) stores the session's global step and the last step its
``StopAtStepHook`` (or ``ProgressBarHook``) aims for in the scheduler's metadata
(``Client.set_metadata``, sent without waiting for the answer); the page shows it
beside the steps the workers counted.

``register`` works on a running cluster (it needs no restart) and is idempotent;
``DaskBackend`` calls it for every session, and it costs one scheduler RPC per client.
The plugin travels by value, so a scheduler without dataflow installed serves the
page too. Nothing here ever raises into a session: a failure is logged at debug level.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
import weakref
from typing import Any

from .gather import PROGRESS_KEY

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

        # By value (as ``dask/worker_plugin.py`` does): a scheduler without dataflow can
        # unpickle it. Dask looks for the plugin's own module in the registry.
        cloudpickle.register_pickle_by_value(sys.modules[__name__])
        cloudpickle.register_pickle_by_value(plugin)
        client.register_plugin(plugin.DataflowPage(), name=plugin.PLUGIN_NAME)
        _registered[client] = comm
        return True
    except Exception:
        logger.debug("dataflow: could not add the dashboard page", exc_info=True)
        return False


def can_report(session: Any) -> bool:
    """Whether ``session`` runs on a Dask cluster, whose page ``report_progress`` feeds."""
    # Only the Dask backend has a client; the embedded one has no dashboard.
    backend = getattr(session, "backend", None)
    return getattr(backend, "client", None) is not None and hasattr(backend, "session_id")


def report_progress(
    session: Any,
    global_step: int,
    last_step: int | None = None,
    global_steps_per_s: float | None = None,
) -> bool:
    """Shows on the dataflow page how far ``session``'s training is: its
    ``global_step``, the ``last_step`` it stops at (when known) and the rate the global
    step moves at (all replicas together). Returns whether the report was sent.

    Sent on the client's event loop without waiting for the scheduler (a step never
    waits on the dashboard); a failure is logged at debug level, never raised.
    """
    if not can_report(session):
        return False
    backend = session.backend
    value = {
        "global_step": int(global_step),
        "last_step": None if last_step is None else int(last_step),
        "global_steps_per_s": global_steps_per_s,
        "time": time.time(),
    }
    try:
        client = backend.client
        client.loop.add_callback(_send_progress, client, [PROGRESS_KEY, backend.session_id], value)
        return True
    except Exception:
        logger.debug("dataflow: could not report progress to the dashboard", exc_info=True)
        return False


async def _send_progress(client: Any, keys: list[str], value: dict) -> None:
    try:
        await asyncio.wait_for(client.scheduler.set_metadata(keys=keys, value=value), 10)
    except Exception:
        logger.debug("dataflow: could not report progress to the dashboard", exc_info=True)
