"""A dask array as a ``feed_dict`` value.

``Session.run(..., feed_dict={x: dask_array})`` computes the array when the step runs.
Where depends on the session (``feed_value``):

* **Embedded session**: in this process, with Dask's threaded scheduler for a lazy
  array (chunks computed in parallel and assembled into one numpy array), or through the
  distributed client holding it for an array that refers to futures.
* **Cluster session**: on the cluster, where the placeholder's consumers run. The
  session knows, from the lowered plan, which workers read the feed
  (``feeds_by_worker``). The array is computed with ``Client.compute(...,
  workers=[w])`` on the first of them, so its chunks are computed there, or copied there
  worker to worker from where a persisted array keeps them. With several consumers, each,
  the first included, then gets a key of its own through one more task pinned to it (a
  copy worker to worker, or the same array on the first), so that each key has one
  replica, where it is read (Dask's active memory manager drops extra replicas of a key
  held on several workers, and could take the one a consumer needs). The step waits for
  these futures (never gathering them) and feeds a ``ClusterFeed``: a handle naming, per
  consuming worker, the key its copy is held under. The handle travels in the step's
  message (or task) instead of the data, and turns into the array when it is
  unpickled on a worker that holds its key (``_resolve``: the key is taken from
  ``worker.data``, as ``Dataset.from_dask`` reads a persisted partition in that worker's
  memory). Unpickled anywhere else (the scheduler unpickles a task graph before sending
  its tasks on) it stays a handle, and resolves on the worker the task is sent to.
  A handle that reaches a worker without its key (the key was lost with its worker
  meanwhile) stays a handle whose use in a kernel is an ``UnavailableError``. The
  futures are released when the step ends.

Bytes of the array never pass through the client, except when the fed tensor is itself
fetched (then the client gathers it, as it asked for it), or when no worker consumes it.

numpy's implicit ``__array__`` would compute a dask array too, but silently and through
whatever scheduler happens to be the default; this module makes the choice explicit and
refuses what cannot be fed (a dask dataframe: feed its ``.to_dask_array()`` or use
``Dataset.from_dask``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...framework import errors
from .cluster_view import comm_failures_as_unavailable


def is_dask_collection(value: Any) -> bool:
    return type(value).__module__.startswith(("dask.array", "dask.dataframe")) and hasattr(
        value, "__dask_graph__"
    )


def _check_array(value: Any, name: str) -> None:
    if not type(value).__module__.startswith("dask.array"):
        raise TypeError(
            f"Cannot feed a {type(value).__name__} for Tensor '{name}': feed a dask array "
            "(e.g. .to_dask_array(lengths=True)) or read it with tf.data.Dataset.from_dask"
        )


def compute_feed(value: Any, name: str) -> np.ndarray:
    """``value`` (a dask array) computed into a numpy array in this process.

    Raises:
        TypeError: ``value`` is a dask collection other than an array.
    """
    _check_array(value, name)
    from distributed import futures_of

    if futures_of(value):
        with comm_failures_as_unavailable(f"computing the dask array fed for Tensor '{name}'"):
            (out,) = futures_of(value)[0].client.compute([value], sync=True)
        return np.asarray(out)
    return np.asarray(value.compute(scheduler="threads"))


def feed_value(
    value: Any,
    np_dtype: Any,
    static_shape: tuple | None,
    name: str,
    backend: Any,
    bound: Any,
    index: int,
    check_shape: Callable[[tuple], None],
) -> Any:
    """What the step feeds for the dask collection ``value`` given for feed ``index``:
    a ``ClusterFeed`` when ``backend`` is a Dask cluster and some worker consumes the
    feed (module docstring), else the array computed in this process.
    ``check_shape(shape)`` raises the session's ``ValueError`` for a shape the
    placeholder refuses; known dimensions are checked before anything is computed.

    Raises:
        TypeError: ``value`` is a dask collection other than an array.
        ValueError: its shape does not fit the placeholder.
        errors.InvalidArgumentError: computing it on the cluster failed.
        errors.UnavailableError: a worker was lost while computing it.
    """
    _check_array(value, name)
    if not any(np.isnan(d) for d in value.shape):
        check_shape(tuple(int(d) for d in value.shape))
    workers = _consumers(backend, bound, index)
    if not workers:
        return np.asarray(compute_feed(value, name), dtype=np_dtype)
    if value.dtype != np_dtype:
        value = value.astype(np_dtype)  # computed on the cluster too
    # A worker or the scheduler lost while the array is computed or copied: distributed's
    # own errors (CommClosedError, ...) become UnavailableError, which recovery retries.
    with comm_failures_as_unavailable(f"computing the dask array fed for Tensor '{name}'"):
        return _compute_on(backend.client, value, workers, name)


def _consumers(backend: Any, bound: Any, index: int) -> list[str]:
    """Addresses of the workers whose part of the step reads feed ``index`` (none for
    a session that is not on a cluster)."""
    from .backend import DaskBackend

    if not isinstance(backend, DaskBackend):
        return []
    names = [
        name
        for name, pairs in bound.lowered.feeds_by_worker.items()
        if any(i == index for _slot, i in pairs)
    ]
    addresses = [backend.view.address_of(n) for n in sorted(names)]
    if any(a is None for a in addresses):
        missing = [n for n, a in zip(sorted(names), addresses, strict=True) if a is None]
        raise errors.UnavailableError(
            None, None, f"Dask worker(s) {missing} are not in the cluster; the step needs them"
        )
    return [a for a in addresses if a is not None]


def _same(value: Any) -> Any:
    return value  # pinned to a consumer: Dask copies the input there (none on its holder)


def _compute_on(client: Any, value: Any, workers: list[str], name: str) -> ClusterFeed:
    import distributed

    first = client.compute(value, workers=[workers[0]], allow_other_workers=False)
    futures = {workers[0]: first}
    if len(workers) > 1:
        # Every consumer, the first included, gets a key of its own held there only:
        # once a second consumer's copy is made from ``first``, ``first`` is held on two
        # workers, and Dask's active memory manager keeps one of the two, maybe not the
        # first consumer's. (One consumer: ``first`` is never copied, it stays.)
        futures = {
            address: client.submit(
                _same, first, workers=[address], allow_other_workers=False, pure=False
            )
            for address in workers
        }
    # ``first`` checked first: a copy fails only because it failed.
    pending = [first, *(f for f in futures.values() if f is not first)]
    with client.as_current():
        distributed.wait(pending)
    for future in pending:
        if future.status != "finished":
            _raise_failed(future, name)
    if futures[workers[0]] is not first:
        first.release()  # (on the first consumer its copy is the same array: nothing freed)
    shape = tuple(int(d) for d in value.shape) if not any(np.isnan(value.shape)) else None
    if shape is None:  # unknown chunks: ask the worker holding it (a few bytes back)
        shape = client.submit(
            np.shape, futures[workers[0]], workers=[workers[0]], pure=False
        ).result()
    keys = {address: future.key for address, future in futures.items()}
    return ClusterFeed(keys, tuple(shape), np.dtype(value.dtype), name, futures)


def _raise_failed(future: Any, name: str) -> None:
    from distributed.client import FutureCancelledError

    try:
        exc = future.exception()
    except (FutureCancelledError, Exception) as lost:
        exc = lost
    if isinstance(exc, FutureCancelledError) or type(exc).__name__ == "KilledWorker":
        raise errors.UnavailableError(
            None, None, f"computing the dask array fed for Tensor '{name}' failed: {exc}"
        )
    raise errors.InvalidArgumentError(
        None,
        None,
        f"computing the dask array fed for Tensor '{name}' on the cluster failed: "
        f"{type(exc).__name__}: {exc}",
    )


class ClusterFeed:
    """A fed dask array computed on the cluster: the keys its value is held under, per
    consuming worker's address (module docstring). Pickled, it carries only these keys;
    the futures that keep the values alive stay with the session's step."""

    def __init__(
        self,
        keys: dict[str, Any],
        shape: tuple,
        dtype: np.dtype,
        name: str,
        futures: dict[str, Any] | None = None,
    ):
        self.keys, self.shape, self.dtype, self.name = keys, shape, dtype, name
        self._futures = futures or {}

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __reduce__(self) -> tuple:
        return _resolve, (self.keys, self.shape, self.dtype, self.name)

    def _unavailable(self) -> errors.OpError:
        return errors.UnavailableError(
            None,
            None,
            f"the dask array fed for Tensor '{self.name}' is no longer held where the "
            f"step needs it (keys {list(self.keys.values())}); its worker was lost",
        )

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if not self._futures:
            raise self._unavailable()
        # The client asked for the fed value itself (a fetch of the fed tensor).
        value = np.asarray(next(iter(self._futures.values())).result())
        return value if dtype is None else value.astype(dtype, copy=False)

    def __getitem__(self, key: Any) -> Any:
        # A kernel indexing a handle that found no value (strided_slice's ``x[key]``):
        # the same error as a kernel converting it, not a TypeError.
        if not self._futures:
            raise self._unavailable()
        return np.asarray(self)[key]

    def __repr__(self) -> str:
        return f"ClusterFeed({self.name!r}, shape={self.shape}, dtype={self.dtype})"


def _resolve(keys: dict[str, Any], shape: tuple, dtype: np.dtype, name: str) -> Any:
    """Unpickling a ``ClusterFeed``: the value, read from the memory of a worker of this
    process that holds it, else the handle again."""
    from distributed import Worker

    for worker in list(Worker._instances):
        key = keys.get(str(getattr(worker, "address", "")))
        if key is None:
            continue
        try:
            value = worker.data[key]
        except KeyError:
            continue
        # Shared with Dask's copy in worker memory: read-only, as a kernel's input is.
        view = np.asarray(value).view()
        view.flags.writeable = False
        return view
    return ClusterFeed(keys, shape, dtype, name)
