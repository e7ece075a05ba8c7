"""The one interface a ``Session`` drives: what a backend must do to run compiled plans.

Two backends implement it: ``embedded_backend.EmbeddedBackend`` (this process, the
default) and ``dask.backend.DaskBackend`` (a Dask cluster). ``Session`` calls only these
methods, so a feature a session offers is either here for both or refused by the
backend that cannot provide it, with a clear error (not looked up with ``getattr``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from .compile.plan import Plan
from .config import StepTrace


class Backend(Protocol):
    """Runs plans compiled by ``runtime.compiler`` on some set of devices."""

    @property
    def devices(self) -> Sequence[str]:
        """Every device this backend can place an op on (full TF device names)."""
        ...

    @property
    def default_device(self) -> str:
        """Where an op with no device request goes."""
        ...

    def bind(self, plan: Plan) -> Any:
        """Readies ``plan`` for repeated execution (compiled kernels, installed on
        workers); the result is passed back to ``execute``."""
        ...

    def execute(self, bound: Any, feed_values: list[Any], timeout: float | None) -> list[Any]:
        """Runs one step; returns the fetched values in the plan's fetch order."""
        ...

    def execute_traced(
        self, bound: Any, feed_values: list[Any], run_metadata: StepTrace, timeout: float | None
    ) -> list[Any]:
        """``execute`` with per-op timings (and, on a cluster, transfers and the
        client's own time) appended to ``run_metadata.step_stats``."""
        ...

    def to_dask(self, bound: Any, feed_values: list[Any]) -> Any:
        """The Dask graph of one step (``ValueError`` where there is none)."""
        ...

    def resource_store(self, device: str | None = None) -> Any:
        """The variable/queue store of ``device`` (the default device if omitted)."""
        ...

    def close(self) -> None:
        """Releases what the backend holds for this session."""
        ...
