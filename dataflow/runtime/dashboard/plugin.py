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

Routes added through ``add_handlers`` are looked up before the application's own, and
stay until the scheduler stops. Nothing here raises into the scheduler: a failure
while adding the routes, or answering a request, is logged at debug level and the
request answers with the error in its JSON.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any

from distributed.diagnostics.plugin import SchedulerPlugin
from tornado import web

from .gather import HANDLER, PROGRESS_KEY, install_handler, merge, prune_progress
from .page import PAGE_HTML

logger = logging.getLogger(__name__)

PLUGIN_NAME = "dataflow-dashboard-page"
PAGE = "dataflow"
TITLE = "Dataflow"  # its name in individual-plots.json
LISTING = "individual-plots.json"
TIMEOUT_S = 5.0


class DataflowPage(SchedulerPlugin):
    """Serves the dataflow page from the scheduler's dashboard (see the module doc)."""

    name = PLUGIN_NAME
    idempotent = True  # a second registration (another client, session) is a no-op

    def __init__(self) -> None:
        self.scheduler: Any = None
        self.ready: set[str] = set()  # worker addresses that have the handler

    async def start(self, scheduler: Any) -> None:
        self.scheduler = scheduler
        try:
            add_routes(scheduler.http_application, self)
        except Exception:
            logger.debug("dataflow: could not add the dashboard page", exc_info=True)

    def remove_worker(self, scheduler: Any, worker: str, **kwargs: Any) -> None:
        self.ready.discard(worker)

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

    async def _ask(self, address: str) -> dict:
        try:
            return await asyncio.wait_for(self._call(address), TIMEOUT_S)
        except Exception as exc:
            logger.debug("dataflow: page data from %s failed", address, exc_info=True)
            self.ready.discard(address)
            return {"error": f"{type(exc).__name__}: {exc}"}

    async def _call(self, address: str) -> dict:
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
                return {"error": "dataflow is not installed on this worker"}
            self.ready.add(address)
        return await getattr(rpc, HANDLER)()


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
