"""``ClusterSpec``: jobs made of numbered tasks, each task one process (TF1's
``tf.train.ClusterSpec``).

On Dask a task is one worker, named by its address (``'tcp://10.0.0.5:40123'``,
``'10.0.0.5:40123'``) or by its Dask worker name (``'ps-0'``). A ``ClusterSpec`` given to
a session (``ConfigProto(cluster_def=...)``) says which worker is ``/job:J/task:T``;
without one, a worker named ``J-T`` is that task.

Pure data: this module imports nothing from Dask, so the training layer and user code can
build cluster specs without a cluster.

Example: ``ClusterSpec({"ps": ["ps-0"], "worker": ["worker-0", "worker-1"]})``
has ``num_tasks("worker") == 2`` and ``task_address("ps", 0) == "ps-0"``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class ClusterSpec:
    """A cluster as a set of tasks, organized into jobs.

    Args:
        cluster: a dict mapping job names to a list of task addresses (task ``i`` is
            the ``i``-th entry) or to a dict mapping task indices to addresses; another
            ``ClusterSpec``; or TF's ``ClusterDef`` protobuf (``tf.train.ClusterDef``).
            Addresses may be Dask worker addresses or names.

    Raises:
        TypeError: ``cluster`` is none of the above.
    """

    def __init__(self, cluster: Any) -> None:
        if isinstance(cluster, ClusterSpec):
            cluster = cluster.as_dict()
        elif _is_cluster_def(cluster):
            cluster = {job.name: dict(job.tasks) for job in cluster.job}
        if not isinstance(cluster, Mapping):
            raise TypeError(
                "`cluster` must be a dictionary mapping one or more job names to "
                "lists of network addresses, or a ClusterSpec"
            )
        self._jobs: dict[str, dict[int, str]] = {}
        for job, tasks in cluster.items():
            if not isinstance(job, str):
                raise TypeError(f"Job name {job!r} must be a string")
            if isinstance(tasks, (list, tuple)):
                table = {i: t for i, t in enumerate(tasks)}
            elif isinstance(tasks, Mapping):
                table = {int(i): t for i, t in tasks.items()}
            else:
                raise TypeError(
                    f"The tasks for job {job!r} must be a list or a dictionary "
                    "from integers to strings."
                )
            for address in table.values():
                if address is not None and not isinstance(address, str):
                    raise TypeError(f"Task address {address!r} must be a string")
            self._jobs[job] = {i: a for i, a in table.items() if a is not None}

    @property
    def jobs(self) -> list[str]:
        """The job names, in the order given."""
        return list(self._jobs)

    def _job(self, job_name: str) -> dict[int, str]:
        try:
            return self._jobs[job_name]
        except KeyError:
            raise ValueError(f"No such job in cluster: {job_name!r}") from None

    def num_tasks(self, job_name: str) -> int:
        return len(self._job(job_name))

    def task_indices(self, job_name: str) -> list[int]:
        return sorted(self._job(job_name))

    def task_address(self, job_name: str, task_index: int) -> str:
        job = self._job(job_name)
        try:
            return job[task_index]
        except KeyError:
            raise ValueError(f"No task with index {task_index!r} in job {job_name!r}") from None

    def job_tasks(self, job_name: str) -> list[str | None]:
        """Addresses indexed by task (``None`` in the gaps of a sparse job)."""
        job = self._job(job_name)
        out: list[str | None] = [None] * (max(job) + 1 if job else 0)
        for i, address in job.items():
            out[i] = address
        return out

    def as_dict(self) -> dict[str, list[str] | dict[int, str]]:
        """Job -> list of addresses (dense jobs) or dict task -> address (sparse)."""
        out: dict[str, list[str] | dict[int, str]] = {}
        for job, tasks in self._jobs.items():
            indices = sorted(tasks)
            if indices and indices[-1] + 1 == len(indices):
                out[job] = [tasks[i] for i in indices]
            else:
                out[job] = {i: tasks[i] for i in indices}
        return out

    def as_cluster_def(self) -> Any:
        """The cluster as TF's ``ClusterDef`` protobuf (jobs sorted by name, as TF)."""
        from tensorboard.compat.proto.cluster_pb2 import ClusterDef  # only when asked

        cluster_def = ClusterDef()
        for job, tasks in sorted(self._jobs.items()):
            entry = cluster_def.job.add(name=job)
            for index, address in tasks.items():
                entry.tasks[index] = address
        return cluster_def

    def tasks(self) -> list[tuple[str, int, str]]:
        """Every ``(job, task, address)``, jobs in order, tasks ascending."""
        return [(job, i, tasks[i]) for job, tasks in self._jobs.items() for i in sorted(tasks)]

    def __bool__(self) -> bool:
        return bool(self._jobs)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ClusterSpec):
            return self._jobs == other._jobs
        if isinstance(other, Mapping):
            try:
                return self._jobs == ClusterSpec(other)._jobs
            except TypeError:
                return False
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple((j, tuple(sorted(t.items()))) for j, t in self._jobs.items()))

    def __repr__(self) -> str:
        items = self.as_dict()
        return "ClusterSpec({" + ", ".join(f"{k!r}: {items[k]!r}" for k in sorted(items)) + "})"


def _is_cluster_def(value: Any) -> bool:
    """Whether ``value`` is a ``ClusterDef`` protobuf, TF's or tensorboard's copy (told
    by its message type's name, so this module need not import protobuf)."""
    descriptor = getattr(value, "DESCRIPTOR", None)
    return str(getattr(descriptor, "full_name", "")).split(".")[-1] == "ClusterDef"
