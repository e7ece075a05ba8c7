"""``tf.train.replica_device_setter``: a device function for replicated training.

Used as ``with tf.device(tf.train.replica_device_setter(ps_tasks=2)):``, it sends every
op whose type is in ``ps_ops`` (by default the variable ops, ``VarHandleOp``) to a
``/job:ps`` task chosen by ``ps_strategy`` (round-robin by default) and everything else
to ``worker_device``. Fields set by an inner ``tf.device`` scope win over the ones this
function fills in (``merge_devices=True``), as in TF1. The ops a variable makes (its
initializer, reads, updates) are colocated with its handle, so they follow it to the ps.

Example: three variables under ``replica_device_setter(ps_tasks=2)`` land on
``/job:ps/task:0``, ``/job:ps/task:1``, ``/job:ps/task:0``; a ``matmul`` lands on
``/job:worker``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from ..framework.device_spec import DeviceSpec
from ..runtime.cluster_spec import ClusterSpec

# TF1's STANDARD_PS_OPS; of these, dataflow has VarHandleOp.
STANDARD_PS_OPS = (
    "Variable",
    "VariableV2",
    "AutoReloadVariable",
    "MutableHashTable",
    "MutableHashTableV2",
    "MutableHashTableOfTensors",
    "MutableHashTableOfTensorsV2",
    "MutableDenseHashTable",
    "MutableDenseHashTableV2",
    "VarHandleOp",
    "BoostedTreesEnsembleResourceHandleOp",
    "BoostedTreesQuantileStreamResourceHandleOp",
    "ResourceConditionalAccumulator",
    "DecisionTreeResource",
)


class _RoundRobinStrategy:
    """The next ps task, in round-robin order."""

    def __init__(self, num_tasks: int) -> None:
        self._num_tasks = num_tasks
        self._next_task = 0

    def __call__(self, unused_op: Any) -> int:
        task = self._next_task
        self._next_task = (self._next_task + 1) % self._num_tasks
        return task


class _ReplicaDeviceChooser:
    def __init__(
        self,
        ps_tasks: int,
        ps_device: str,
        worker_device: str,
        merge_devices: bool,
        ps_ops: Sequence[str],
        ps_strategy: Callable[[Any], int],
    ) -> None:
        self._ps_tasks = ps_tasks
        self._ps_device = ps_device
        self._worker_device = worker_device
        self._merge_devices = merge_devices
        self._ps_ops = frozenset(ps_ops)
        self._ps_strategy = ps_strategy

    def device_function(self, op: Any) -> str:
        if not self._merge_devices and op.device:
            return op.device
        current = DeviceSpec.from_string(op.device or "")
        if self._ps_tasks and self._ps_device and op.type in self._ps_ops:
            ps = DeviceSpec.from_string(self._ps_device)
            # The task is only chosen when an inner scope does not name another job.
            if ps.job and (not current.job or current.job == ps.job):
                ps = replace(ps, task=self._ps_strategy(op))
            return ps.merge(current).to_string()
        return DeviceSpec.from_string(self._worker_device or "").merge(current).to_string()


def replica_device_setter(
    ps_tasks: int = 0,
    ps_device: str = "/job:ps",
    worker_device: str = "/job:worker",
    merge_devices: bool = True,
    cluster: Any = None,
    ps_ops: Sequence[str] | None = None,
    ps_strategy: Callable[[Any], int] | None = None,
) -> Callable[[Any], str] | None:
    """Returns a device function to use when building a graph for replicas.

    Args:
        ps_tasks: number of tasks in the ps job (ignored when ``cluster`` is given).
        ps_device: device of the ps job; empty for no ps job.
        worker_device: device of the worker job; empty for no worker job.
        merge_devices: merge with the device an inner scope set, rather than keep it.
        cluster: a ``ClusterSpec`` or a dict job -> addresses; ``ps_tasks`` is then the
            size of the ps job.
        ps_ops: op types placed on the ps job (default ``STANDARD_PS_OPS``).
        ps_strategy: ``fn(op) -> task index`` for ps ops (default round-robin).

    Returns:
        A function for ``tf.device()``, or ``None`` (no constraint) when there are no
        ps tasks.

    Raises:
        TypeError: ``cluster`` is not a ``ClusterSpec`` or dict, or ``ps_strategy``
            is not callable.
    """
    if cluster is not None:
        spec = cluster if isinstance(cluster, ClusterSpec) else ClusterSpec(cluster)
        ps_job = DeviceSpec.from_string(ps_device).job
        if ps_job not in spec.jobs:
            return None
        ps_tasks = spec.num_tasks(ps_job)
    if ps_tasks == 0:
        return None
    if ps_ops is None:
        ps_ops = list(STANDARD_PS_OPS)
    if not merge_devices:
        logging.getLogger(__name__).warning(
            "DEPRECATION: It is recommended to set merge_devices=true in replica_device_setter"
        )
    if ps_strategy is None:
        ps_strategy = _RoundRobinStrategy(ps_tasks)
    if not callable(ps_strategy):
        raise TypeError("ps_strategy must be callable")
    return _ReplicaDeviceChooser(
        ps_tasks, ps_device, worker_device, merge_devices, ps_ops, ps_strategy
    ).device_function


__all__ = ["replica_device_setter", "STANDARD_PS_OPS"]
