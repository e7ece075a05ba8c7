"""``EmbeddedBackend``: runs compiled plans in this process.

One resource store and kernel context per local device (``ConfigProto.device_count``
sets how many CPU devices there are); a bound plan is an ``executor.EmbeddedPlan``, or,
where stages on different devices could overlap, an ``inter_op.ConcurrentPlan`` running
them at the same time. ``session.BaseSession`` picks this backend for an empty target.
"""

from __future__ import annotations

import threading
from typing import Any

from ..._util import intra_op
from ..compile.plan import Plan
from ..compile.stage_split import split_for_overlap
from ..config import ConfigProto, StepTrace
from ..devices import array_namespace, local_devices, transfer
from ..resources import ResourceStore
from . import blas_threads, malloc_policy
from .context import step_deadline
from .executor import EmbeddedPlan
from .inter_op import ConcurrentPlan, InterOpPool, LocalDeviceContext, stage_graph

_KEPT_TRACED = 32  # timed bindings kept (``execute_traced``), one per traced plan


class EmbeddedBackend:
    """Runs plans in this process: one resource store and kernel context per device."""

    def __init__(self, config: ConfigProto) -> None:
        malloc_policy.apply()  # each step's large arrays reuse memory
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
        # TF1's intra-op pool: the threads each step's kernels split their work over
        # (``_util/intra_op``), BLAS held to one meanwhile (``_hold_threads``).
        self._intra_op = max(0, int(config.intra_op_parallelism_threads or 0))
        # id(bound plan) -> (that plan, its timed binding, the binding's event list, a
        # lock held while a traced step uses it): ``execute_traced``.
        self._traced: dict[int, tuple[Any, Any, list, threading.Lock]] = {}
        self._traced_lock = threading.Lock()

    def bind(self, plan: Plan, trace: list | None = None) -> Any:
        """The plan ready to run: an ``EmbeddedPlan``, or a ``ConcurrentPlan`` when
        threads are allowed and stages on different devices could overlap (the plan's
        stages then cut where another device waits, ``compile/stage_split.py``)."""
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

    def _hold_threads(self) -> tuple[int, int]:
        """Sets a step up: (the token of its BLAS hold, its intra-op threads). The
        step's kernels split their work over its threads (``_util/intra_op``; large
        matmuls too, ``ops/parallel_products.py``) and BLAS runs on one thread:
        BLAS's own threads spin for a while after each call (OpenBLAS: ~0.1 s) and held
        the cores the kernels' threads needed, so that splitting gained nothing beside
        them (docs/performance.md)."""
        token = blas_threads.hold(1)  # (first: the default reads what the hold found)
        return token, blas_threads.kernel_threads(self._intra_op)

    def execute(self, bound: Any, feed_values: list[Any], timeout: float | None) -> list[Any]:
        """Runs one step; with a ``timeout`` (seconds), a kernel blocked past it (a queue
        op) fails the step with ``DeadlineExceededError``, as in TF1's DirectSession.
        The step's kernels run on the session's intra-op threads (``_hold_threads``)."""
        token, threads = self._hold_threads()
        before = intra_op.set_threads(threads)
        try:
            if timeout is None:
                return bound.run(feed_values)
            with step_deadline(timeout):
                return bound.run(feed_values)
        finally:
            intra_op.set_threads(before)
            blas_threads.release(token)

    def execute_traced(
        self,
        bound: Any,
        feed_values: list[Any],
        run_metadata: StepTrace,
        timeout: float | None = None,
    ) -> list[Any]:
        """Runs with every kernel timed; the timings go to ``run_metadata.step_stats``.

        The timed binding of a plan is kept and reused, as the untimed one is: binding
        again for every traced step gave kernels fresh state each time (a convolution's
        transform matrices, recycled arrays), so traced steps ran 3-4x slower than the
        steps they were meant to explain. A traced step running while another uses the
        kept binding gets one of its own."""
        key = id(bound)
        with self._traced_lock:
            kept = self._traced.get(key)
            if kept is None or kept[0] is not bound:
                trace: list[dict] = []
                kept = (bound, self.bind(bound.plan, trace), trace, threading.Lock())
                if len(self._traced) >= _KEPT_TRACED:  # the oldest goes
                    del self._traced[next(iter(self._traced))]
                self._traced[key] = kept
        _, traced, trace, in_use = kept
        if not in_use.acquire(blocking=False):
            trace = []
            traced, in_use = self.bind(bound.plan, trace), threading.Lock()
            in_use.acquire()
        trace.clear()
        token, threads = self._hold_threads()
        before = intra_op.set_threads(threads)
        try:
            if timeout is None:
                return traced.run(feed_values)
            with step_deadline(timeout):
                return traced.run(feed_values)
        finally:
            intra_op.set_threads(before)
            blas_threads.release(token)
            run_metadata.step_stats.extend(trace)
            trace.clear()
            in_use.release()

    def to_dask(self, bound: Any, feed_values: list[Any]) -> Any:
        raise ValueError(
            "to_dask() needs a cluster session: Session(target) with a "
            "Dask client, scheduler address or dataflow.LocalCluster."
        )

    def resource_store(self, device: str | None = None) -> ResourceStore:
        return self.contexts[device or self.default_device].resources

    def close(self) -> None:
        self._traced.clear()
        self._pool.close()
        for ctx in self.contexts.values():
            ctx.resources.clear()
