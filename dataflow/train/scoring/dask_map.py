"""``map_blocks``: a ``LegacyModel`` scored over a Dask collection, block by block.

The result is a lazy collection built from three kinds of task:

* **the model**: one task holding the ``LegacyModel`` (its ``GraphDef`` bytes and tensor
  names). With a ``distributed`` client it is scattered to every worker once, under the
  key ``legacy-model-<fingerprint>`` (the task graph then carries only that key, whatever
  the model's size; mapping the same model again reuses it). Without one it is a literal
  task of the graph, which Dask's local schedulers read in place and a cluster computing
  the collection later copies to each worker once, worker to worker.
* **one scoring task per block** (a ``dask.array``'s blocks along axis 0, a
  ``dask.dataframe``'s partitions): ``resident.score`` on the worker, which finds the
  worker's imported graph and open session by the model's fingerprint (importing it on
  the first block that worker scores) and runs one step on the block.
* for arrays, **one pick per output and block**, taking that output from the step's
  tuple, so several outputs share one step per block.

Nothing is computed or gathered here. What can be checked without data is checked when
``map_blocks`` is called: the names, the blocks' trailing shapes and dtypes against the
inputs, and the outputs' static shapes, which give the result's chunks and meta.
"""

from __future__ import annotations

import operator
import sys
from collections.abc import Mapping
from typing import Any

import numpy as np

from ...framework import errors
from . import resident
from .model import LegacyModel


def map_blocks(
    model: LegacyModel,
    collection: Any,
    inputs: Any = None,
    outputs: Any = None,
    *,
    client: Any = None,
) -> Any:
    """Scores ``model`` over a Dask collection, block by block, lazily.

    Arrays: ``collection`` is a ``dask.array.Array`` (feeding the input ``inputs``
    names, by default the model's only input) or a dict ``{input key: dask array}``. Each
    array's blocks along axis 0 are fed as they are (the other axes are rechunked to one
    block if they are not); arrays fed together must have the same number of rows.

    Dataframes: ``collection`` is a ``dask.dataframe.DataFrame`` and ``inputs`` maps each
    input key to a column (fed as a vector) or a list of columns (fed as a matrix, one
    column of the matrix per column, in that order); by default the model's only input
    gets every column.

    Args:
        model: a ``LegacyModel``.
        collection: a ``dask.array.Array``, a dict of them, or a ``dask.dataframe``.
        inputs: see above.
        outputs: for arrays, an output key (the result is one ``dask.array``), a list of
            keys (a list of arrays) or ``None`` (every output: one array, or a dict by key
            when the model has several). For dataframes, a dict ``{output key: column name
            or list of names}`` (a list spreads a matrix output over columns), a list of
            keys, or ``None`` (every output); unnamed outputs are named by their key
            without ``":0"``, a matrix output's columns ``<name>_0``, ``<name>_1``, ....
        client: a ``distributed.Client`` (or a ``dataflow.LocalCluster``) to scatter the
            model to, once per worker; by default the current default client, if any.
            Without one, the model is one task of the result's graph.

    Returns:
        ``dask.array.Array``(s) whose blocks follow the input's along axis 0 (dtype, meta
        and trailing chunks from the outputs' static dtypes and shapes; a trailing size
        unknown until run is NaN), or a ``dask.dataframe.DataFrame`` with the input's
        index and divisions.

    Raises:
        NotFoundError: an input or output key is not the model's, or a column is missing.
        InvalidArgumentError: the collection's blocks cannot feed an input (trailing
            shape, dtype, rows), or an output has no rows dimension.
    """
    if not isinstance(model, LegacyModel):
        raise TypeError(f"map_blocks takes a LegacyModel, not {type(model).__name__}")
    if _is_dataframe(collection):
        return _map_frame(model, collection, inputs, outputs, client)
    return _map_arrays(model, collection, inputs, outputs, client)


# --- arrays -------------------------------------------------------------------------------


def _map_arrays(model: LegacyModel, collection: Any, inputs: Any, outputs: Any, client: Any):
    import dask.array as da
    from dask.base import tokenize

    if isinstance(collection, Mapping):
        if inputs is not None:
            raise TypeError("map_blocks: a dict of arrays names its inputs by its keys")
        arrays = {model.input_spec(k).key: v for k, v in collection.items()}
    else:
        key = _only(model.inputs, "input") if inputs is None else model.input_spec(inputs).key
        arrays = {key: collection}
    for key, array in arrays.items():
        if not isinstance(array, da.Array):
            raise TypeError(
                f"map_blocks feeds input '{key}' a {type(array).__name__}; it takes dask "
                "arrays (da.from_array(...) for one in memory) or a dask dataframe"
            )
        if array.ndim == 0:
            raise errors.InvalidArgumentError(
                None, None, f"Input '{key}' is fed a scalar array: blocks need rows"
            )
    arrays = _aligned(arrays)
    for key, array in arrays.items():
        fixed = (model.input_spec(key).shape or (None,))[0]
        if fixed is not None and any(n != fixed for n in array.chunks[0]):
            raise errors.InvalidArgumentError(
                None,
                None,
                f"Input '{key}' takes blocks of {fixed} rows; the array's blocks have "
                f"{sorted(set(array.chunks[0]))} (rechunk it)",
            )
    fed = {k: (tuple(_dim(d) for d in a.shape[1:]), a.dtype) for k, a in arrays.items()}
    static = model.specialize(fed)
    wanted, shape_of_result = _wanted_outputs(model, outputs)
    ordered = [arrays[k] for k in model.inputs]
    token = tokenize(model.fingerprint, wanted, *(a.name for a in ordered))
    args: list[Any] = [_placed(model, client), None, tuple(wanted), None]
    for array in ordered:
        args += [array, ("i", *(f"t{j}" for j in range(1, array.ndim)))]
    steps = da.blockwise(
        resident.score,
        ("i",),
        *args,
        concatenate=True,
        dtype=object,
        meta=np.empty((0,), dtype=object),
        name=f"legacy-model-score-{token}",
    )
    rows = ordered[0].chunks[0]
    results = []
    for index, key in enumerate(wanted):
        trailing, dtype = static[key]
        if trailing is None:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"Output '{key}' has an unknown rank for these inputs: a dask array needs it",
            )
        chunks = (rows, *((np.nan,) if d is None else (d,) for d in trailing))
        results.append(
            steps.map_blocks(
                operator.getitem,
                index,
                chunks=chunks,
                new_axis=list(range(1, 1 + len(trailing))) or None,
                dtype=dtype,
                meta=np.empty((0,) * len(chunks), dtype=dtype),
                name=f"{_label(key)}-{tokenize(token, key)}",
            )
        )
    if shape_of_result == "one":
        return results[0]
    if shape_of_result == "dict":
        return dict(zip(wanted, results))
    return results


def _aligned(arrays: dict[str, Any]) -> dict[str, Any]:
    """One block along every axis but the first, and the first array's row chunks."""
    out = {}
    first = None
    for key, array in arrays.items():
        if any(len(c) > 1 for c in array.chunks[1:]):
            array = array.rechunk({axis: -1 for axis in range(1, array.ndim)})
        if first is None:
            first = (key, array)
        elif array.chunks[0] != first[1].chunks[0]:
            n, m = array.shape[0], first[1].shape[0]
            if not (np.isnan(n) or np.isnan(m)) and n != m:
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"Inputs '{first[0]}' and '{key}' are fed arrays of {m} and {n} rows",
                )
            array = array.rechunk({0: first[1].chunks[0]})
        out[key] = array
    return out


def _wanted_outputs(model: LegacyModel, outputs: Any) -> tuple[list[str], str]:
    if outputs is None:
        keys = list(model.outputs)
        return keys, "one" if len(keys) == 1 else "dict"
    if isinstance(outputs, str):
        return [model.output_spec(outputs).key], "one"
    return [model.output_spec(k).key for k in outputs], "list"


# --- dataframes ---------------------------------------------------------------------------


def _map_frame(model: LegacyModel, frame: Any, inputs: Any, outputs: Any, client: Any):
    import pandas as pd

    columns = list(frame.columns)
    if inputs is None:
        inputs = {_only(model.inputs, "input"): columns}
    if not isinstance(inputs, Mapping):
        raise TypeError("map_blocks over a dataframe takes inputs={input key: column(s)}")
    plan_in = []
    fed = {}
    for key, cols in inputs.items():
        spec = model.input_spec(key)
        names = [cols] if isinstance(cols, str) else list(cols)
        missing = [c for c in names if c not in columns]
        if missing:
            raise errors.NotFoundError(
                None, None, f"Input '{spec.key}': the dataframe has no column {missing}"
            )
        dtypes = [frame.dtypes[c] for c in names]
        common = _frame_dtype(spec, dtypes, names)
        fed[spec.key] = (() if isinstance(cols, str) else (len(names),), common)
        plan_in.append((spec.key, cols if isinstance(cols, str) else tuple(names)))
    static = model.specialize(fed)
    plan_in.sort(key=lambda item: model.inputs.index(item[0]))
    plan_out = _column_plan(model, outputs, static)
    meta_columns = {
        name: pd.Series([], dtype=static[key][1]) for key, names, _ in plan_out for name in names
    }
    meta = pd.DataFrame(meta_columns, index=frame._meta.index[:0])
    return frame.map_partitions(
        score_partition,
        _placed(model, client),
        tuple(plan_in),
        tuple(plan_out),
        meta=meta,
        align_dataframes=False,
    )


def score_partition(part: Any, model: LegacyModel, plan_in: tuple, plan_out: tuple) -> Any:
    """Scores one dataframe partition: the input columns as numpy blocks, the outputs as
    the columns of a frame with the partition's index (``plan_in``/``plan_out`` as
    ``map_blocks`` makes them)."""
    import pandas as pd

    blocks = [
        part[cols].to_numpy() if isinstance(cols, str) else part[list(cols)].to_numpy()
        for _, cols in plan_in
    ]
    values = resident.score(model, [key for key, _, _ in plan_out], *blocks)
    data = {}
    for (key, names, vector), value in zip(plan_out, values):
        value = np.asarray(value)
        if vector and value.ndim == 2 and value.shape[1] == 1:
            value = value[:, 0]
        width = 1 if value.ndim == 1 else value.shape[1] if value.ndim == 2 else -1
        if width != len(names) or (vector and value.ndim != 1):
            raise errors.InvalidArgumentError(
                None,
                None,
                f"Output '{key}' has shape {value.shape}, which does not fill the columns "
                f"{list(names)}",
            )
        for j, name in enumerate(names):
            data[name] = value if value.ndim == 1 else value[:, j]
    return pd.DataFrame(data, index=part.index)


def _frame_dtype(spec: Any, dtypes: list[Any], names: list[str]) -> np.dtype:
    from .model import check_feed_dtype

    for name, dtype in zip(names, dtypes):
        numpy_dtype = np.dtype(object) if not isinstance(dtype, np.dtype) else dtype
        if not isinstance(dtype, np.dtype) and getattr(dtype, "kind", "O") in "biuf":
            numpy_dtype = np.dtype(dtype.kind + str(dtype.itemsize))
        try:
            check_feed_dtype(spec, numpy_dtype)
        except errors.InvalidArgumentError as e:
            raise errors.InvalidArgumentError(
                None, None, f"{e.message} (column '{name}', dtype {dtype})"
            ) from None
    return np.dtype(object) if spec.is_string else spec.dtype


def _column_plan(model: LegacyModel, outputs: Any, static: dict) -> list[tuple]:
    if outputs is None:
        outputs = list(model.outputs)
    if isinstance(outputs, str):
        outputs = [outputs]
    pairs = list(outputs.items()) if isinstance(outputs, Mapping) else [(k, None) for k in outputs]
    plan = []
    for key, names in pairs:
        spec = model.output_spec(key)
        trailing = static[spec.key][0]
        if trailing is not None and len(trailing) > 1:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"Output '{spec.key}' has shape (rows, {', '.join(map(str, trailing))}): a "
                "dataframe takes vectors and matrices; score a dask array instead",
            )
        width = None if not trailing else trailing[0]
        base = spec.key[:-2] if spec.key.endswith(":0") else spec.key
        vector = isinstance(names, str) or (names is None and trailing == ())
        if isinstance(names, str):
            if trailing and width not in (None, 1):
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"Output '{spec.key}' has {width} columns; name each (a list of names)",
                )
            columns = [names]
        elif names is None:
            if trailing is None or (trailing and width is None):
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"Output '{spec.key}' has a width unknown until run: name its columns "
                    "(outputs={key: [names]})",
                )
            columns = [base] if trailing == () else [f"{base}_{j}" for j in range(width or 0)]
        else:
            columns = list(names)
            if trailing == () or (width is not None and width != len(columns)):
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"Output '{spec.key}' has shape (rows{''.join(f', {d}' for d in trailing)}"
                    f"), which does not fill the columns {columns}",
                )
        plan.append((spec.key, tuple(columns), vector))
    every = [c for _, columns, _ in plan for c in columns]
    if len(set(every)) != len(every):
        raise ValueError(f"map_blocks: output columns named twice: {every}")
    return plan


# --- where the model goes -----------------------------------------------------------------


def _placed(model: LegacyModel, client: Any) -> Any:
    """The model as an argument of the scoring tasks: a future of it scattered to every
    worker (reused while this client holds one), or a literal task of the graph."""
    key = f"legacy-model-{model.fingerprint[:32]}"
    client = _client(client)
    if client is None:
        from dask.delayed import delayed

        return delayed(model, name=key, pure=True)
    import distributed

    state = client.futures.get(key)
    if state is not None and state.status == "finished":
        return distributed.Future(key, client=client)
    return client.scatter({key: model}, broadcast=True)[key]


def _client(client: Any) -> Any:
    if client is not None:
        return getattr(client, "client", client)  # a dataflow.LocalCluster: its client
    if "distributed" not in sys.modules:
        return None
    import distributed

    try:
        return distributed.default_client()
    except ValueError:  # no client in this process
        return None


# --- small helpers ------------------------------------------------------------------------


def _is_dataframe(collection: Any) -> bool:
    module = sys.modules.get("dask.dataframe")
    return module is not None and isinstance(collection, module.DataFrame)


def _only(keys: tuple[str, ...], what: str) -> str:
    if len(keys) != 1:
        raise errors.InvalidArgumentError(
            None, None, f"The model has {what}s {list(keys)}: say which one the data feeds"
        )
    return keys[0]


def _dim(d: Any) -> int | None:
    return None if isinstance(d, float) and np.isnan(d) else int(d)


def _label(key: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in key).strip("-") or "output"
