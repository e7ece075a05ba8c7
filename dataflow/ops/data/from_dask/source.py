"""Where a ``from_dask`` dataset's rows come from: the collection's partitions.

``describe`` turns what the user passed (a ``dask.array.Array``, a
``dask.dataframe.DataFrame``, or a dict or tuple of them whose row partitions line up)
into a ``DaskSource``: one ``Component`` per flat tensor of the element, each knowing,
for every row partition, either the key the scheduler holds it under (a persisted
collection: the key is followed through Dask's aliases to the one a ``Future`` names) or,
for a collection that is not persisted, the collection itself, whose graph computes the
partition on demand. No data is read when the dataset is built.

``read_partition(source, i)`` returns partition ``i`` as a list of numpy arrays, one per
component (a dataframe contributes its columns). For each persisted key, in order of
preference:

1. the key is in this Dask worker's memory (``worker.data``): taken as it is, no copy,
   no message;
2. it is held elsewhere: a ``Future`` on the key; Dask copies it worker to worker, and a
   key lost with its worker is recomputed from lineage by the scheduler before the
   future resolves (a key the cluster no longer holds at all is an ``UnavailableError``);
3. outside a worker (an embedded session) the future is resolved by this process's
   client.

A partition that is not persisted is computed where the reader runs: in this thread
with Dask's synchronous scheduler, or through the client when its graph refers to
futures. Either way only the partition being read is materialized: a collection larger
than memory streams.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ....framework import dtypes, errors
from ....framework.tensor_shape import TensorShape

ARRAY, FRAME = "array", "frame"


@dataclass(frozen=True, eq=False)
class Component:
    """One dask collection of the element: an array, or a dataframe (its columns)."""

    kind: str
    columns: tuple[str, ...]  # a dataframe's columns, in the element's (sorted) order
    keys: tuple | None  # the persisted key of each partition; None when not persisted
    collection: Any  # the collection itself when not persisted (else None)
    rows: tuple[int | None, ...]  # rows per partition (None: unknown, a dataframe's)
    numpy_dtypes: tuple[Any, ...]  # per flat tensor of this component


@dataclass(frozen=True, eq=False)
class DaskSource:
    """A whole ``from_dask`` input: its components and the name replicas share it by."""

    name: str
    components: tuple[Component, ...]

    @property
    def partitions(self) -> int:
        return len(self.components[0].rows)


def _is_array(value: Any) -> bool:
    return type(value).__module__.startswith("dask.array") and hasattr(value, "chunks")


def _is_frame(value: Any) -> bool:
    return type(value).__name__ == "DataFrame" and type(value).__module__.startswith(
        "dask.dataframe"
    )


def is_collection(value: Any) -> bool:
    return _is_array(value) or _is_frame(value)


def _persisted_key(graph: Mapping, key: Any) -> Any:
    """The key a ``Future`` in ``graph`` holds for ``key`` (following aliases), or
    ``None`` when ``key`` is computed by a task, not held by the cluster."""
    from dask._task_spec import Alias
    from distributed import Future

    for _ in range(len(graph) + 1):
        value = graph.get(key)
        if isinstance(value, Future):
            return value.key
        if isinstance(value, Alias):
            key = value.target
        elif isinstance(value, tuple) and _is_key_in(value, graph):  # an old-style alias
            key = value
        else:
            return None
    return None


def _is_key_in(value: tuple, graph: Mapping) -> bool:
    try:
        return value in graph
    except TypeError:  # a legacy task tuple holding lists: not a key
        return False


def _keys(collection: Any, partition_keys: list) -> tuple | None:
    graph = dict(collection.__dask_graph__())
    found = [_persisted_key(graph, k) for k in partition_keys]
    return None if any(k is None for k in found) else tuple(found)


def _frame_dtype(column: str, dtype: Any, what: str) -> tuple[dtypes.DType, Any]:
    kind = np.dtype(dtype).kind if isinstance(dtype, np.dtype) else None
    if kind in ("b", "i", "u", "f"):
        return dtypes.as_dtype(np.dtype(dtype)), np.dtype(dtype)
    if kind == "O" or str(dtype) in ("str", "string"):
        return dtypes.string, object
    raise TypeError(
        f"{what}: column {column!r} has dtype {dtype}; from_dask takes numeric, bool and "
        "string columns (convert others, e.g. datetimes with .astype('int64'))"
    )


def _array_component(x: Any, what: str) -> tuple[Component, Any]:
    if x.ndim == 0:
        raise ValueError(f"{what}: a 0-d dask array has no rows to read")
    if any(n != 1 for n in x.numblocks[1:]):
        raise ValueError(
            f"{what}: the dask array {x.name} has {x.numblocks[1:]} chunks along its "
            "non-leading axes; each row partition must be one block: "
            "rechunk({axis: -1}) those axes first"
        )
    keys = [k for k in _flat_keys(x.__dask_keys__())]
    persisted = _keys(x, keys)
    rows = tuple(None if np.isnan(c) else int(c) for c in x.chunks[0])
    dtype = dtypes.as_dtype(x.dtype)
    spec = (dtype, TensorShape([None if np.isnan(d) else int(d) for d in x.shape[1:]]))
    component = Component(
        ARRAY,
        (),
        persisted,
        None if persisted is not None else x,
        rows,
        (np.dtype(x.dtype),),
    )
    return component, spec


def _flat_keys(keys: Any) -> list:
    """A dask array's block keys, one per row block (other axes have one block)."""
    out = []
    for item in keys:
        while isinstance(item, list):
            item = item[0]
        out.append(item)
    return out


def _frame_component(df: Any, what: str) -> tuple[Component, dict]:
    names = [str(c) for c in df.columns]
    if len(set(names)) != len(names):
        raise ValueError(f"{what}: the dataframe's column names are not unique: {names}")
    found = {str(c): _frame_dtype(str(c), df.dtypes[c], what) for c in df.columns}
    columns = tuple(sorted(found))
    keys = list(df.__dask_keys__())
    persisted = _keys(df, keys)
    component = Component(
        FRAME,
        columns,
        persisted,
        None if persisted is not None else df,
        (None,) * df.npartitions,
        tuple(found[c][1] for c in columns),
    )
    specs = {c: (found[c][0], TensorShape([])) for c in found}
    return component, specs


def describe(collection: Any, name: str | None = None) -> tuple[DaskSource, list, Any]:
    """The source of ``collection``; per collection in it, in the order they are read,
    the ``(dtype, row shape)`` of an array or a dict of them for a dataframe's
    columns; and a function building the user's structure from one value per
    collection.

    Raises:
        TypeError: something in ``collection`` is not a dask array or dataframe.
        ValueError: a 0-d array, an array chunked along other axes than the first, or
            components whose row partitions do not line up.
    """
    what = "from_dask"
    leaves, structure = _leaves(collection, what)
    components, specs = [], []
    for leaf in leaves:
        component, spec = (_array_component if _is_array(leaf) else _frame_component)(leaf, what)
        components.append(component)
        specs.append(spec)
    counts = {len(c.rows) for c in components}
    if len(counts) != 1:
        raise ValueError(
            f"{what}: the collections have {sorted(counts)} row partitions; they must be "
            "chunked alike along their rows (rechunk or repartition them to match)"
        )
    arrays = [c.rows for c in components if c.kind == ARRAY]
    if any(r != arrays[0] for r in arrays):
        raise ValueError(
            f"{what}: the dask arrays' row chunks differ ({[list(r) for r in arrays]}); "
            "rechunk them alike"
        )
    if arrays:  # a dataframe's partition sizes are known once an array's are
        components = [
            Component(c.kind, c.columns, c.keys, c.collection, arrays[0], c.numpy_dtypes)
            if c.kind == FRAME
            else c
            for c in components
        ]
    if name is None:
        from dask.base import tokenize

        names = [_name_of(c, leaf) for c, leaf in zip(components, leaves, strict=True)]
        keys = [c.keys for c in components]
        name = f"{names[0]}-{tokenize(names, keys)[:8]}"
    return DaskSource(name, tuple(components)), specs, structure


def _name_of(component: Component, leaf: Any) -> str:
    """The name of the keys a persisted component is held under (its collection's
    token), else the collection's own name."""
    if component.keys and isinstance(component.keys[0], tuple):
        return str(component.keys[0][0])
    return str(leaf.name if _is_array(leaf) else leaf._name)  # a column may be "name"


def _leaves(collection: Any, what: str) -> tuple[list, Any]:
    """The collections in ``collection`` (one, or a dict or tuple of them) and a
    function rebuilding the structure from one value per collection."""
    if is_collection(collection):
        return [collection], lambda values: values[0]
    if isinstance(collection, Mapping) and collection:
        keys = sorted(collection)
        for k in keys:
            _check_leaf(collection[k], what)
        return [collection[k] for k in keys], lambda values: dict(zip(keys, values, strict=True))
    if isinstance(collection, tuple) and collection:
        for item in collection:
            _check_leaf(item, what)
        return list(collection), tuple
    raise TypeError(
        f"{what}: expected a dask.array.Array, a dask.dataframe.DataFrame, or a non-empty "
        f"dict or tuple of them; got {type(collection).__name__}"
    )


def _check_leaf(value: Any, what: str) -> None:
    if not is_collection(value):
        raise TypeError(
            f"{what}: every item must be a dask.array.Array or dask.dataframe.DataFrame; "
            f"got {type(value).__name__}"
        )


# --- reading -----------------------------------------------------------------------------
def this_worker() -> Any:
    """The Dask worker this thread works for, or ``None`` (an embedded session): the
    worker of the task running (a task-graph step), or the worker whose thread pool this
    thread belongs to (a resident step runs its stages in the worker's executor)."""
    from distributed import Worker, get_worker
    from distributed.threadpoolexecutor import thread_state

    try:
        return get_worker()
    except ValueError:
        pass
    thread = threading.current_thread()
    # A pool thread that seceded (a stage waiting for a remote partition leaves the
    # pool's count) is no longer among the pool's threads but keeps its executor: missed,
    # its next pass read every partition through the worker's client instead.
    executor = getattr(thread_state, "executor", None)
    for worker in list(Worker._instances):
        if thread in getattr(worker.executor, "_threads", ()):
            return worker
        if executor is not None and executor in worker.executors.values():
            return worker
    return None


def worker_client(worker: Any) -> Any:
    """The client of ``worker`` (made once per worker; ``get_client`` finds it only
    inside a task, and a resident step's stages are not tasks)."""
    return worker._get_client()


def local_partitions(source: DaskSource, worker: Any) -> list[int]:
    """The partitions all of whose persisted keys are in ``worker``'s memory."""
    if worker is None or any(c.keys is None for c in source.components):
        return []
    data = worker.data
    return [
        i
        for i in range(source.partitions)
        if all(c.keys is not None and c.keys[i] in data for c in source.components)
    ]


def read_partition(
    source: DaskSource, index: int, worker: Any, before_wait: Any = None
) -> list[np.ndarray]:
    """Partition ``index`` as numpy arrays, one per flat tensor (see the module
    docstring), read by ``worker`` (``this_worker()``). ``before_wait`` is called once
    before the first remote wait (a worker thread leaves the pool's count so that it
    cannot starve the tasks it waits for)."""
    out: list[np.ndarray] = []
    lengths: set[int] = set()
    waited = [before_wait is None]

    def wait() -> None:
        if not waited[0]:
            waited[0] = True
            before_wait()

    for component in source.components:
        value = _value(source, component, index, worker, wait)
        arrays = _to_arrays(component, value)
        lengths.update(len(a) for a in arrays)
        out.extend(arrays)
    if len(lengths) > 1:
        raise errors.InvalidArgumentError(
            None,
            None,
            f"from_dask: partition {index} of {source.name} has components of "
            f"{sorted(lengths)} rows; the collections must be partitioned alike",
        )
    return out


def _value(source: DaskSource, component: Component, index: int, worker: Any, wait: Any) -> Any:
    if component.keys is None:
        return _compute(component, index, wait)
    key = component.keys[index]
    if worker is None:
        return _from_client(source, key, index)
    try:
        return worker.data[key]
    except KeyError:
        pass
    wait()
    return _from_peer(source, worker, key, index)


def _gone(source: DaskSource, key: Any, index: int) -> Exception:
    return errors.UnavailableError(
        None,
        None,
        f"from_dask: partition {index} of {source.name} (key {key!r}) is no longer held "
        "by the cluster: keep the persisted collection referenced (or published) while "
        "datasets read it",
    )


def _from_peer(source: DaskSource, worker: Any, key: Any, index: int) -> Any:
    """``key`` copied from a worker holding it, as a worker fetches a task's inputs
    (Dask logs it as a transfer between the two workers). While no worker holds it (its
    holder was lost and the scheduler is recomputing it from lineage) we wait."""
    from distributed.utils import sync
    from distributed.worker import get_data_from_worker

    async def fetch(holders: list[str]) -> Any:
        for address in holders:
            try:
                reply = await get_data_from_worker(worker.rpc, [key], address, who=worker.address)
            except OSError:  # the holder just died: ask the scheduler again
                continue
            data: Any = reply.get("data", {})  # absent when the holder was busy
            if key in data:
                return data[key]
        return _MISSING

    pause = 0.01
    while True:
        holders = sync(worker.loop, worker.scheduler.who_has, keys=[key]).get(key) or []
        value = sync(worker.loop, fetch, list(holders)) if holders else _MISSING
        if value is not _MISSING:
            return value
        if not worker_client(worker).run_on_scheduler(_held, key):
            raise _gone(source, key, index)
        time.sleep(pause)
        pause = min(0.5, pause * 2)


def _from_client(source: DaskSource, key: Any, index: int) -> Any:
    """``key`` through this process's client (an embedded session)."""
    from distributed import Future, get_client

    client = get_client()
    known = key in client.futures  # the client that persisted it holds a future
    future: Any = Future(key, client=client)
    if not known and not client.run_on_scheduler(_want, key, client.id):
        raise _gone(source, key, index)
    return future.result()


_MISSING = object()


def _held(key: Any, dask_scheduler: Any = None) -> bool:
    """On the scheduler: whether ``key`` is in memory or can be (re)computed."""
    task = dask_scheduler.tasks.get(key) if dask_scheduler is not None else None
    return task is not None and (task.state == "memory" or task.run_spec is not None)


def _want(key: Any, client_id: str, dask_scheduler: Any = None) -> bool:
    """On the scheduler: tells it that client ``client_id`` wants ``key`` (so that the
    client's future on it resolves), if the key is still held or computable."""
    if not _held(key, dask_scheduler):
        return False
    dask_scheduler.client_desires_keys(keys=[key], client=client_id)
    return True


def _compute(component: Component, index: int, wait: Any) -> Any:
    import dask
    from distributed import futures_of, get_client

    collection = component.collection
    part = collection.blocks[index] if component.kind == ARRAY else collection.partitions[index]
    if futures_of(part):
        wait()
        return get_client().compute(part).result()
    (value,) = dask.compute(part, scheduler="sync")
    return value


def _to_arrays(component: Component, value: Any) -> list[np.ndarray]:
    if component.kind == ARRAY:
        array = np.asarray(value, dtype=component.numpy_dtypes[0])
        return [_strings(array, "the array") if array.dtype == object else array]
    out = []
    for column, dtype in zip(component.columns, component.numpy_dtypes, strict=True):
        series = value[column] if column in value.columns else value[_original(value, column)]
        if dtype is object:
            values = np.empty(len(series), dtype=object)
            values[:] = series.tolist()
            out.append(_strings(values, f"column {column!r}"))
        else:
            out.append(series.to_numpy(dtype=dtype))
    return out


def _strings(values: np.ndarray, what: str) -> np.ndarray:
    """``values`` (an object array read as ``tf.string``) with ``str`` encoded to UTF-8.

    Raises:
        InvalidArgumentError: an element is neither ``bytes`` nor ``str`` (TF1 refuses
            to hand out ``1`` or ``None`` as a string).
    """
    flat = values.reshape(-1)
    for i, v in enumerate(flat):
        if isinstance(v, str):
            flat[i] = v.encode()
        elif not isinstance(v, bytes):
            raise errors.InvalidArgumentError(
                None,
                None,
                f"from_dask: {what} is read as tf.string, but its element {i} of this "
                f"partition is {type(v).__name__} ({v!r}); convert it to str or bytes first",
            )
    return values


def _original(frame: Any, column: str) -> Any:
    """The dataframe's own label of ``column`` (labels that are not strings)."""
    for label in frame.columns:
        if str(label) == column:
            return label
    raise errors.InvalidArgumentError(
        None, None, f"from_dask: a partition lacks the column {column!r}"
    )
