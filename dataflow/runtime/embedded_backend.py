"""``EmbeddedBackend``: runs compiled plans in this process.

One resource store and kernel context per local device (``ConfigProto.device_count``
sets how many CPU devices there are); a bound plan is an ``executor.EmbeddedPlan``, or,
where stages on different devices could overlap, an ``inter_op.ConcurrentPlan`` running
them at the same time. ``session.BaseSession`` picks this backend for an empty target.
"""

from __future__ import annotations

from typing import Any

from .config import ConfigProto, RunMetadata
from .context import step_deadline
from .devices import array_namespace, local_devices, transfer
from .executor import EmbeddedPlan
from .inter_op import ConcurrentPlan, InterOpPool, LocalDeviceContext, stage_graph
from .plan import Plan
from .resources import ResourceStore
from .stage_split import split_for_overlap


class EmbeddedBackend:
    """Runs plans in this process: one resource store and kernel context per device."""

    def __init__(self, config: ConfigProto) -> None:
        self.devices = local_devices(device_count=config.device_count)
        self.default_device = self.devices[0]
        self.contexts = {
            d: LocalDeviceContext(d, array_namespace(d), ResourceStore(d), config.debug)
            for d in self.devices
        }
        self._multi_device = len(self.devices) > 1
        self._steps = 0
        # TF1's inter-op pool: 0 picks a default (here one thread per device, as more
        # than that cannot be busy at once); 1 or less runs every stage on the caller.
        threads = config.inter_op_parallelism_threads
        self._pool = InterOpPool(threads if threads else len(self.devices))

    def bind(self, plan: Plan, trace: list | None = None) -> Any:
        """The plan ready to run: an ``EmbeddedPlan``, or a ``ConcurrentPlan`` when
        threads are allowed and stages on different devices could overlap (the plan's
        stages then cut where another device waits, ``stage_split.py``)."""
        moves = self._transfer_for(plan)
        if self._pool.helpers >= 1 and len({s.device for s in plan.stages}) > 1:
            split = split_for_overlap(plan)
            graph = stage_graph(split)
            if graph.concurrent:
                bound = EmbeddedPlan(split, self.contexts, self._debug, moves, trace)
                return ConcurrentPlan(bound, graph, self._pool, self.contexts, moves)
        return EmbeddedPlan(plan, self.contexts, self._debug, moves, trace)

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
        traced = self.bind(bound.plan, trace)
        try:
            if timeout is None:
                return traced.run(feed_values)
            with step_deadline(timeout):
                return traced.run(feed_values)
        finally:
            run_metadata.step_stats.extend(trace)

    def to_dask(self, bound: Any, feed_values: list[Any]) -> Any:
        raise ValueError(
            "to_dask() needs a cluster session: Session(target) with a "
            "Dask client, scheduler address or dataflow.LocalCluster."
        )

    def resource_store(self, device: str | None = None) -> ResourceStore:
        return self.contexts[device or self.default_device].resources

    def close(self) -> None:
        self._pool.close()
        for ctx in self.contexts.values():
            ctx.resources.clear()
