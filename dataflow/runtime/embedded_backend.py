"""``EmbeddedBackend``: runs compiled plans in this process.

One resource store and kernel context per local device; a bound plan is an
``executor.EmbeddedPlan``. ``session.BaseSession`` picks this backend for an empty target.
"""

from __future__ import annotations

from typing import Any

from .config import ConfigProto, RunMetadata
from .context import DeviceContext, step_deadline
from .devices import array_namespace, local_devices, transfer
from .executor import EmbeddedPlan
from .plan import Plan
from .resources import ResourceStore


class EmbeddedBackend:
    """Runs plans in this process: one resource store and kernel context per device."""

    def __init__(self, config: ConfigProto) -> None:
        self.devices = local_devices()
        self.default_device = self.devices[0]
        self.contexts = {
            d: DeviceContext(d, array_namespace(d), ResourceStore(d), config.debug)
            for d in self.devices
        }
        self._multi_device = len(self.devices) > 1
        self._steps = 0

    def bind(self, plan: Plan) -> Any:
        return EmbeddedPlan(plan, self.contexts, self._debug, self._transfer_for(plan))

    def _transfer_for(self, plan: Plan) -> Any:
        """``devices.transfer`` when the plan has a GPU stage (values must cross to and
        from device memory); ``None`` otherwise, so CPU-only steps keep the fast path."""
        if self._multi_device and any("/device:GPU:" in s.device for s in plan.stages):
            return transfer
        return None

    @property
    def _debug(self) -> bool:
        return next(iter(self.contexts.values())).debug

    def execute(self, bound: Any, feed_values: list[Any], timeout: float | None) -> list[Any]:
        """Runs one step; with a ``timeout`` (seconds), a kernel blocked past it (a queue
        op) fails the step with ``DeadlineExceededError``, as in TF1's DirectSession."""
        if timeout is None:
            return bound.run(feed_values)
        with step_deadline(timeout):
            return bound.run(feed_values)

    def execute_traced(
        self,
        bound: Any,
        feed_values: list[Any],
        run_metadata: RunMetadata,
        timeout: float | None = None,
    ) -> list[Any]:
        """Runs with every kernel timed; the timings go to ``run_metadata.step_stats``."""
        trace: list[dict] = []
        traced = EmbeddedPlan(
            bound.plan, self.contexts, self._debug, self._transfer_for(bound.plan), trace
        )
        try:
            if timeout is None:
                return traced.run(feed_values)
            with step_deadline(timeout):
                return traced.run(feed_values)
        finally:
            run_metadata.step_stats.extend(trace)

    def resource_store(self, device: str | None = None) -> ResourceStore:
        return self.contexts[device or self.default_device].resources

    def close(self) -> None:
        for ctx in self.contexts.values():
            ctx.resources.clear()
