"""The scheduler side of the dataflow page: a ``SchedulerPlugin`` that adds its routes.

``DataflowPage.start(scheduler)`` (Dask calls it when a client registers the plugin,
on a running scheduler) adds three routes to the scheduler's HTTP application, the
one that serves Dask's dashboard, under the dashboard's prefix:

* ``/dataflow``: the page (``page.py``), which fetches the next one every
  second and redraws itself;
* ``/dataflow.json``: the page's data, gathered from every worker when asked
  (``gather.py``: one ``dataflow_page`` RPC per worker, at most ``TIMEOUT_S`` each),
  with the sessions' progress reports from the scheduler's metadata;
* ``/individual-plots.json``: Dask's list of single-plot pages, which JupyterLab's
  Dask extension reads to offer them, with the dataflow page added. Dask builds that
  list from its Bokeh applications and its static folder, neither of which a running
  scheduler can extend, so the route is served by a subclass of Dask's own handler
  that adds one entry to its answer.

It also feeds Dask's task stream (the ``/status`` page, ``performance_report``,
``get_task_stream``) with the stages of resident steps, which never pass through the
scheduler: while the scheduler records a task stream (Dask adds its ``TaskStreamPlugin``
when the ``/status`` page or ``performance_report`` first asks for one), every
``RUNS_EVERY_S`` it takes each worker's stage runs since the last time
(``step_metrics.RECORDER.take_runs``, the ``dataflow_stage_runs`` handler) and appends
them to that plugin's records as Dask's own transitions would: one rectangle per stage
run, keyed as the stage's task on the task-graph path, on its worker. Nothing is asked
of the workers while no task stream is recorded, and runs that stopped before the last
look that found no stream are left out. Each take's runs, from every worker, are
appended in the order they stopped: Dask's ``collect(start=...)`` (behind
``get_task_stream`` and ``performance_report``) bisects the records by stop time, so
one worker's runs appended after another's, earlier ones, would hide some of them.
Appending never reorders the records already there, which the ``/status`` plot reads
by their append count.

Routes added through ``add_handlers`` are looked up before the application's own, and
stay until the scheduler stops. Nothing here raises into the scheduler: a failure
while adding the routes, or answering a request, is logged at debug level and the
request answers with the error in its JSON.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import sys
import time
from typing import Any

from distributed.diagnostics.plugin import SchedulerPlugin
from tornado import web

from .gather import (
    HANDLER,
    PROGRESS_KEY,
    RUNS_HANDLER,
    install_handler,
    merge,
    prune_progress,
)
from .page import PAGE_HTML

logger = logging.getLogger(__name__)

PLUGIN_NAME = "dataflow-dashboard-page"
PAGE = "dataflow"
TITLE = "Dataflow"  # its name in individual-plots.json
LISTING = "individual-plots.json"
TIMEOUT_S = 5.0
RUNS_EVERY_S = 0.5  # how often stage runs are taken from the workers for the task stream
TASK_STREAM = "task-stream"  # the name of Dask's ``TaskStreamPlugin``


class DataflowPage(SchedulerPlugin):
    """Serves the dataflow page from the scheduler's dashboard (see the module doc)."""

    name = PLUGIN_NAME
    idempotent = True  # a second registration (another client, session) is a no-op

    def __init__(self) -> None:
        self.scheduler: Any = None
        self.ready: set[str] = set()  # worker addresses that have the handler
        self.lacking: set[str] = set()  # worker addresses without dataflow
        self._runs_callback: Any = None
        self._taking = False
        # The stream fed, and the last look before it was seen: runs that stopped
        # before then (kept by the workers while nobody recorded a stream) are left
        # out of it.
        self._stream_seen: tuple[Any, float] = (None, 0.0)
        self._looked_at = time.time()  # when the last look at the task stream was

    async def start(self, scheduler: Any) -> None:
        self.scheduler = scheduler
        try:
            add_routes(scheduler.http_application, self)
        except Exception:
            logger.debug("dataflow: could not add the dashboard page", exc_info=True)
        quiet_closed_pages()
        from tornado.ioloop import PeriodicCallback

        self._runs_callback = PeriodicCallback(self._take_runs, RUNS_EVERY_S * 1000)
        self._runs_callback.start()

    async def close(self) -> None:
        if self._runs_callback is not None:
            self._runs_callback.stop()

    async def _take_runs(self) -> None:
        """Appends the workers' stage runs to Dask's task stream, if it is recorded."""
        drop_dead_patched_curdocs()
        stream = self.scheduler.plugins.get(TASK_STREAM)
        looked_before, self._looked_at = self._looked_at, time.time()
        if stream is None or self._taking:
            return
        self._taking = True
        if self._stream_seen[0] is not stream:  # a new stream: older runs are history
            self._stream_seen = (stream, looked_before)
        since = self._stream_seen[1]
        try:
            # Not asking a worker without dataflow twice a second to install the handler.
            addresses = [a for a in self.scheduler.workers if a not in self.lacking]
            answers = await asyncio.gather(
                *(self._ask(address, RUNS_HANDLER) for address in addresses)
            )
            taken = []
            for address, runs in zip(addresses, answers, strict=True):
                if not isinstance(runs, (list, tuple)):  # a tuple, as Dask's RPCs answer
                    continue  # an error (logged by _ask), or no dataflow there
                for record in runs:
                    if record["startstops"][-1]["stop"] >= since:
                        record["worker"] = address
                        taken.append(record)
            taken.sort(key=lambda r: r["startstops"][-1]["stop"])
            stream.buffer.extend(taken)
            stream.index += len(taken)
        except Exception:
            logger.debug("dataflow: could not add stage runs to the task stream", exc_info=True)
        finally:
            self._taking = False

    def remove_worker(self, scheduler: Any, worker: str, **kwargs: Any) -> None:
        self.ready.discard(worker)
        self.lacking.discard(worker)

    async def data(self) -> dict:
        """The page's JSON (``gather.merge`` of every worker's ``collect``)."""
        scheduler = self.scheduler
        names = {address: str(ws.name) for address, ws in scheduler.workers.items()}
        answers = await asyncio.gather(*(self._ask(address) for address in names))
        progress = scheduler.task_metadata.get(PROGRESS_KEY)
        if isinstance(progress, dict):
            prune_progress(progress)
        else:
            progress = {}
        return merge(
            {names[a]: answer for a, answer in zip(names, answers, strict=True)},
            time.time(),
            progress,
        )

    async def _ask(self, address: str, handler: str = HANDLER) -> Any:
        try:
            return await asyncio.wait_for(self._call(address, handler), TIMEOUT_S)
        except Exception as exc:
            logger.debug("dataflow: page data from %s failed", address, exc_info=True)
            self.ready.discard(address)
            return {"error": f"{type(exc).__name__}: {exc}"}

    async def _call(self, address: str, handler: str) -> Any:
        rpc = self.scheduler.rpc(address)
        if address not in self.ready:
            from distributed.protocol import deserialize
            from distributed.protocol.pickle import dumps
            from distributed.protocol.serialize import Serialized

            answer = await rpc.run(
                function=dumps(install_handler), args=dumps(()), kwargs=dumps({})
            )
            if answer.get("status") != "OK":
                return {"error": str(answer.get("exception", answer.get("status")))}
            installed = answer["result"]
            if isinstance(installed, Serialized):
                installed = deserialize(installed.header, installed.frames)
            if not installed:
                self.lacking.add(address)
                return {"error": "dataflow is not installed on this worker"}
            self.ready.add(address)
        return await getattr(rpc, handler)()


def drop_dead_patched_curdocs() -> int:
    """Drops what Bokeh left of document callbacks that raised; how many (see below).

    While a document callback runs (a dashboard plot's periodic update), Bokeh 3.9's
    ``bokeh.io.doc.patch_curdoc`` keeps a weak reference to its document on a stack and
    pops it afterwards, but not in a ``finally``: a callback that raises (a plot updating
    while its cluster closes) leaves its entry. Once that document is gone, every later
    ``curdoc()`` in the process raises "Patched curdoc has been previously destroyed",
    and with it Dask's ``performance_report``, which builds its page with Bokeh in the
    scheduler. A running callback holds its own document, so an entry whose document is
    gone is always such a leftover; this runs with every take of stage runs (twice a
    second, in the scheduler's process). Without Bokeh loaded there is nothing to drop,
    and loading it here would cost the scheduler's loop a second and ~14 MB in a
    cluster that serves no dashboard."""
    bokeh_doc = sys.modules.get("bokeh.io.doc")
    stack = getattr(bokeh_doc, "_PATCHED_CURDOCS", None)
    if stack is None:
        return 0
    dropped = 0
    for ref in list(stack):
        if ref() is None:
            with contextlib.suppress(ValueError):  # removed meanwhile
                stack.remove(ref)  # one call: atomic beside the loop's own pushes and pops
                dropped += 1
    return dropped


def quiet_closed_pages() -> None:
    """Keeps a browser that leaves a dashboard page out of the script's output
    (idempotent; in the scheduler's process, which is the script's for a local
    cluster).

    A page's websocket closed before Bokeh attached its session to it (the browser left
    while the scheduler was busy, as in training) makes Bokeh's ``on_close`` fail an
    assertion (bokeh 3.9), which tornado logs as an ``ERROR`` with a traceback on
    ``tornado.application``. Nothing is lost: the page is gone. That record is logged
    at debug level instead; every other one passes."""
    log = logging.getLogger("tornado.application")
    if not any(isinstance(f, ClosedPageFilter) for f in log.filters):
        log.addFilter(ClosedPageFilter())


class ClosedPageFilter(logging.Filter):
    """Drops tornado's record of a dashboard websocket that closed before its Bokeh
    session existed (``quiet_closed_pages``)."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info
        if not exc or not isinstance(exc[1], AssertionError) or exc[2] is None:
            return True
        tb = exc[2]
        while tb.tb_next is not None:
            tb = tb.tb_next
        where = tb.tb_frame.f_code
        closed_page = (
            where.co_name == "session"
            and where.co_filename.replace("\\", "/").endswith("bokeh/server/connection.py")
            and "/ws" in record.getMessage()
        )
        if closed_page:
            logger.debug("dataflow: a dashboard page closed before its session began")
        return not closed_page


def add_routes(app: Any, plugin: DataflowPage) -> None:
    """Adds the page's routes to ``app`` (the scheduler's ``http_application``), under
    the prefix Dask's own routes have."""
    prefix = "/"
    listing: Any = None
    for rule in app.wildcard_router.rules:
        pattern = getattr(getattr(rule.matcher, "regex", None), "pattern", "")
        if pattern.endswith(LISTING + "$"):
            prefix = pattern[: -len(LISTING + "$")]
            listing = rule.target
    routes: list[tuple] = [
        (prefix + PAGE, PageHandler),
        (prefix + PAGE + r"\.json", DataHandler, {"plugin": plugin}),
    ]
    if isinstance(listing, type) and issubclass(listing, web.RequestHandler):
        routes.append(
            (prefix + LISTING, listing_with_page(listing), {"dask_server": plugin.scheduler})
        )
    app.add_handlers(r".*", routes)


def listing_with_page(original: type) -> type:
    """Dask's ``individual-plots.json`` handler, answering with the page added."""

    class ListsDataflow(original):
        def write(self, chunk: Any) -> None:
            if isinstance(chunk, dict):
                chunk = {**chunk, TITLE: "/" + PAGE}
            super().write(chunk)

    return ListsDataflow


class PageHandler(web.RequestHandler):
    def get(self) -> None:
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.write(PAGE_HTML)


class DataHandler(web.RequestHandler):
    def initialize(self, plugin: DataflowPage) -> None:
        self.plugin = plugin

    async def get(self) -> None:
        try:
            body = json.dumps(await self.plugin.data(), default=str)
        except Exception as exc:
            logger.debug("dataflow: page data failed", exc_info=True)
            body = json.dumps({"error": f"{type(exc).__name__}: {exc}"})
        self.set_header("Content-Type", "application/json")
        self.set_header("Cache-Control", "no-store")
        self.write(body)
