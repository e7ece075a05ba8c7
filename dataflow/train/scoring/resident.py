"""The models a process keeps imported: one graph and one session per model fingerprint.

A Dask worker (or this process, under Dask's local schedulers) scoring blocks of a
collection gets the ``LegacyModel`` as the value of one task of the graph (a scattered
future, or one literal task), so its bytes reach each worker once. The first block a
process scores imports that ``GraphDef`` into a new ``Graph`` and opens an embedded
``Session`` on it; later blocks, on any of the worker's threads, find both here by the
model's fingerprint and only run the step. ``load_counts`` says how many times this
process imported each model (1, unless evicted): the tests read it on every worker.

State: an ordered dict fingerprint -> ``_Loaded`` (graph, session, the feed and fetch
tensors), least recently used first, at most ``MAX_MODELS`` of them (the oldest one's
session is closed when a new model arrives), under one lock. Importing happens under a
per-fingerprint lock, so two threads asking for the same new model import it once while
other models keep scoring. ``Session.run`` is thread-safe: a worker's threads score
blocks of one model at the same time on one session.
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...framework import errors
from ...framework.graph import Graph, Tensor
from ...runtime.session import Session
from .model import LegacyModel, import_model_graph

MAX_MODELS = 4

_lock = threading.Lock()
_loading: dict[str, threading.Lock] = {}
_loaded: collections.OrderedDict[str, _Loaded] = collections.OrderedDict()
_load_counts: collections.Counter[str] = collections.Counter()


@dataclass(frozen=True)
class _Loaded:
    graph: Graph
    session: Session
    feeds: tuple[Tensor, ...]
    fetches: dict[str, Tensor]


def _get(model: LegacyModel) -> _Loaded:
    key = model.fingerprint
    with _lock:
        entry = _loaded.get(key)
        if entry is not None:
            _loaded.move_to_end(key)
            return entry
        loading = _loading.setdefault(key, threading.Lock())
    with loading:
        with _lock:
            entry = _loaded.get(key)
        if entry is not None:
            return entry
        graph = import_model_graph(model.graph_def)
        feeds = tuple(graph.get_tensor_by_name(s.tensor) for s in model.input_specs)
        fetches = {s.key: graph.get_tensor_by_name(s.tensor) for s in model.output_specs}
        entry = _Loaded(graph, Session(graph=graph), feeds, fetches)
        with _lock:
            _loaded[key] = entry
            _load_counts[key] += 1
            _loading.pop(key, None)
            while len(_loaded) > MAX_MODELS:
                _, old = _loaded.popitem(last=False)
                old.session.close()
        return entry


def score(model: LegacyModel, outputs: Sequence[str], *blocks: Any) -> tuple[Any, ...]:
    """Runs ``model`` on one block per input (numpy arrays, in ``model.inputs`` order) and
    returns the ``outputs`` (keys), each with the blocks' number of rows.

    Raises:
        InvalidArgumentError: the blocks have different numbers of rows, or an output's
            first dimension is not the rows (the model mixes rows, e.g. a reduction).
    """
    entry = _get(model)
    rows = {len(b) for b in blocks}
    if len(rows) > 1:
        raise errors.InvalidArgumentError(
            None, None, f"The blocks fed to one step have different numbers of rows: {rows}"
        )
    feed = {
        tensor: np.asarray(block, dtype=spec.dtype)
        for tensor, spec, block in zip(entry.feeds, model.input_specs, blocks)
    }
    values = entry.session.run([entry.fetches[k] for k in outputs], feed)
    (n,) = rows or {0}
    for key, value in zip(outputs, values):
        if np.ndim(value) == 0 or len(value) != n:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"Output '{key}' has shape {np.shape(value)} for a block of {n} rows: an "
                "output scored per block needs one row per input row",
            )
    return tuple(values)


def load_counts() -> dict[str, int]:
    """How many times this process imported each model (fingerprint -> count)."""
    with _lock:
        return dict(_load_counts)


def clear() -> None:
    """Closes the sessions of the models this process holds and forgets them."""
    with _lock:
        entries = list(_loaded.values())
        _loaded.clear()
    for entry in entries:
        entry.session.close()
