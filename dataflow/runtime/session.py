"""``Session``: run fetches given feeds, on this process or on a Dask cluster.

``run`` resolves the fetch structure to graph elements, looks up a compiled plan for
the (fetches, feed keys) signature (compiling it on first use), converts and checks
the fed values, executes, and packs the results in the fetch structure. A repeated
``run`` with the same signature does no graph walking: one dict lookup finds the bound
plan. Several threads may call ``run`` at once; they share plans and state.

The backend does the executing: ``embedded_backend.EmbeddedBackend`` runs plans in this
process; ``runtime.dask_backend.DaskBackend`` lowers them to Dask task graphs.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import logging
import threading
import time
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from .._util import nest
from ..framework import errors, registry, repr_hooks
from ..framework import graph as graph_module
from ..framework.graph import Graph, Operation, Tensor
from ..framework.operation import register_default_session_hook
from ..framework.sparse_tensor import (
    SparseTensor,
    expand_sparse_feeds,
    expand_sparse_fetches,
    has_sparse,
)
from .backend import Backend
from .compile.compiler import compile_plan
from .compile.plan import Plan
from .config import ConfigProto, RunMetadata, RunOptions, StepTrace
from .dask import feeds as dask_feeds
from .dask.trace import event as step_event
from .dask.trace import fill_run_metadata
from .devices import DeviceAttributes, device_attributes
from .execute.embedded_backend import EmbeddedBackend


class _Signature:
    """What a compiled signature remembers: the bound plan and how to map values."""

    __slots__ = (
        "bound",
        "unique_fetches",
        "leaf_index",
        "feed_tensors",
        "feed_checks",
        "accepted_shapes",
        "plan",
        "flat",
        "wrap",
    )

    def __init__(
        self,
        bound: Any,
        plan: Plan,
        unique_fetches: list,
        leaf_index: list[int],
        feed_tensors: list[Tensor],
    ):
        self.bound = bound
        self.plan = plan
        self.unique_fetches = unique_fetches
        self.leaf_index = leaf_index
        self.feed_tensors = feed_tensors
        # (numpy dtype, static dims, name) per feed; a dtype object (not a scalar type)
        # so the per-step check is one identity-fast comparison.
        self.feed_checks = [
            (
                None if t.dtype.as_numpy_dtype is None else np.dtype(t.dtype.as_numpy_dtype),
                t.shape.as_tuple(),
                t.name,
            )
            for t in feed_tensors
        ]
        # Per feed, the last shape that passed the static-shape check: a step feeding
        # the same shapes again (the usual loop) skips the check with one comparison.
        self.accepted_shapes: list[tuple | None] = [None] * len(feed_tensors)
        # Whether the fetches were a plain list/tuple of graph elements (no nesting):
        # then results need no re-packing.
        self.flat = False
        self.wrap = registry.fetch_wrappers([unique_fetches[i] for i in leaf_index])


class BaseSession:
    """Shared by ``Session`` and ``InteractiveSession``."""

    def __init__(
        self, target: Any = "", graph: Graph | None = None, config: ConfigProto | None = None
    ):
        if graph is not None and not isinstance(graph, Graph):
            raise TypeError(f"Session's graph must be a tf.Graph, but got {type(graph).__name__!r}")
        if config is not None and not isinstance(config, ConfigProto):
            raise TypeError(
                f"Session's config must be a tf.ConfigProto, but got {type(config).__name__!r}"
            )
        self._graph = graph if graph is not None else graph_module.get_default_graph()
        self._config = config or ConfigProto()
        self._target = target
        self._closed = False
        self._cache: dict[Any, _Signature] = {}
        self._cache_lock = threading.Lock()
        self._backend = self._make_backend(target)

    def _make_backend(self, target: Any) -> Backend:
        if target is None or target == "" or target == "local":
            return EmbeddedBackend(self._config)
        from .dask.backend import DaskBackend

        return DaskBackend(target, self._config)

    # --- properties --------------------------------------------------------------------
    @property
    def graph(self) -> Graph:
        return self._graph

    @property
    def graph_def(self) -> list[dict]:
        return [op.node_def for op in self._graph.get_operations()]

    @property
    def sess_str(self) -> str:
        return str(self._target or "")

    @property
    def backend(self) -> Backend:
        return self._backend

    def list_devices(self) -> list[DeviceAttributes]:
        """The devices this session can place ops on, each with ``name``,
        ``device_type``, ``memory_limit_bytes`` and ``incarnation``, as in TF1."""
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        return device_attributes(list(self._backend.devices))

    # --- running -----------------------------------------------------------------------
    def run(
        self,
        fetches: Any,
        feed_dict: dict | None = None,
        options: RunOptions | None = None,
        run_metadata: RunMetadata | None = None,
    ) -> Any:
        """Runs the ops and evaluates the tensors in ``fetches``.

        Args:
            fetches: a graph element (``Tensor``, ``Operation``, ``Variable``, or a name
                string) or any nesting of lists, tuples, dicts and namedtuples of them.
            feed_dict: maps tensors (or their names) to values that replace them.
            options: ``RunOptions``; ``trace_level=FULL_TRACE`` records timings.
            run_metadata: a ``RunMetadata`` proto; a traced run replaces its
                ``step_stats`` with the step's kernel timings, per device, as TF1 does.

        Returns:
            The fetched values (numpy arrays; ``None`` for ops) in the nesting of
            ``fetches``.

        Raises:
            RuntimeError: the session is closed.
            ValueError/TypeError: a fetch or feed is not valid for this graph.
            errors.OpError: a kernel failed; the error names the op.
        """
        start = time.perf_counter()  # a traced step's events begin here
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        if feed_dict is None:
            feed_dict = {}
        elif type(feed_dict) is not dict:
            feed_dict = _as_feed_dict(feed_dict)
        if feed_dict and any(isinstance(k, tuple) for k in feed_dict):
            # A structure of tensors (an RNN's state) fed a value of the same structure.
            feed_dict = nest.flatten_dict_items(feed_dict)
        if feed_dict and any(type(k) is SparseTensor for k in feed_dict):
            feed_dict = expand_sparse_feeds(feed_dict)
        kind = type(fetches)
        sig = None
        if kind is list or kind is tuple:
            # The common training step, ``run([loss, train_op], feeds)``: one lookup
            # keyed by the elements themselves, no flattening and no re-packing.
            try:
                flat_key: Any = (kind, tuple(fetches), tuple(feed_dict))
                sig = self._cache.get(flat_key)
            except TypeError:  # a nested list or dict inside: the general path
                flat_key = None
        if sig is None:
            if kind is not Tensor and kind is not Operation and has_sparse(fetches):
                # Fetched as the SparseTensorValue of its three tensors.
                fetches = expand_sparse_fetches(fetches)
                kind = type(fetches)
            sig = self._signature(fetches, feed_dict)
            if (
                (kind is list or kind is tuple)
                and flat_key is not None
                and all(type(f) is Tensor or type(f) is Operation for f in fetches)
            ):
                # A copy: the general key of ``[a, b]`` is also that of ``[[a, b]]``.
                sig = copy.copy(sig)
                sig.flat = True
                self._cache[flat_key] = sig
        feed_values = self._convert_feeds(sig, feed_dict)
        timeout = self._timeout(options)
        if options is not None and options.trace_level and run_metadata is not None:
            prepared = time.perf_counter()
            trace = StepTrace()
            results = self._backend.execute_traced(sig.bound, feed_values, trace, timeout)
            trace.step_stats.append(
                step_event("client: look up step, convert feeds", "Client", "", start, prepared)
            )
            fill_run_metadata(run_metadata, trace.step_stats, self._op_inputs)
        else:
            results = self._backend.execute(sig.bound, feed_values, timeout)
        leaves = [_host_value(results[i]) for i in sig.leaf_index]
        if sig.wrap is not None:  # e.g. a session handle, returned as a TensorHandle
            leaves = [f(v, self, t) if f else v for v, (f, t) in zip(leaves, sig.wrap)]
        if sig.flat:
            return leaves if kind is list else tuple(leaves)
        if kind is Tensor or kind is Operation or isinstance(fetches, str):
            return leaves[0]
        return nest.pack_sequence_as(fetches, leaves)

    def _op_inputs(self, name: str) -> list[str] | None:
        """The input names of op ``name`` as TF's trace labels write them (``x``,
        ``split:1``), or None for an event that is not an op of this graph."""
        try:
            op = self._graph.get_operation_by_name(name)
        except (KeyError, ValueError):
            return None
        return [t.name[:-2] if t.name.endswith(":0") else t.name for t in op.inputs]

    def _timeout(self, options: RunOptions | None) -> float | None:
        ms = (
            options.timeout_in_ms
            if options is not None and options.timeout_in_ms
            else self._config.operation_timeout_in_ms
        )
        return ms / 1000.0 if ms else None

    def _signature(self, fetches: Any, feed_dict: dict) -> _Signature:
        leaves = (
            [fetches]
            if type(fetches) is Tensor or type(fetches) is Operation
            else nest.flatten(fetches)
        )
        try:
            key = (tuple(leaves), tuple(feed_dict))
            sig = self._cache.get(key)
        except TypeError:  # an unhashable leaf: resolve it below for a clear error
            key, sig = None, None
        if sig is not None:
            return sig
        with self._cache_lock:
            sig = self._compile(leaves, feed_dict)
            if key is not None:
                self._cache[key] = sig
        return sig

    def _compile(self, leaves: list[Any], feed_dict: dict) -> _Signature:
        graph = self._graph
        unique: list[Tensor | Operation] = []
        position: dict[Any, int] = {}
        leaf_index = []
        for leaf in leaves:
            element = _fetch_element(graph, leaf)
            if element not in position:
                position[element] = len(unique)
                unique.append(element)
            leaf_index.append(position[element])
        feed_tensors = [_feed_tensor(graph, key) for key in feed_dict]
        plan = compile_plan(
            unique,
            feed_tensors,
            self._backend.devices,
            self._backend.default_device,
            self._config.allow_soft_placement,
        )
        if self._config.log_device_placement:
            _log_placement(plan.placement, graph)
        bound = self._backend.bind(plan)
        return _Signature(bound, plan, unique, leaf_index, feed_tensors)

    def _convert_feeds(self, sig: _Signature, feed_dict: dict) -> list[Any]:
        values = []
        accepted = sig.accepted_shapes
        for i, (value, (np_dtype, shape, name)) in enumerate(
            zip(feed_dict.values(), sig.feed_checks)
        ):
            if type(value) is np.ndarray and value.dtype == np_dtype and np_dtype.kind != "O":
                got = value.shape  # the usual feed: an array of the right dtype
            elif np_dtype is not None and dask_feeds.is_dask_collection(value):
                # Computed where the feed's consumers run (``dask.feeds``).
                value = dask_feeds.feed_value(
                    value,
                    np_dtype,
                    shape,
                    name,
                    self._backend,
                    sig.bound,
                    i,
                    functools.partial(_check_feed_shape, shape=shape, name=name),
                )
                got = tuple(value.shape)
            else:
                value = _convert_feed(value, np_dtype, name)
                got = np.shape(value)
            if got == accepted[i]:
                values.append(value)
                continue
            _check_feed_shape(got, shape, name)
            accepted[i] = got
            values.append(value)
        return values

    # --- inspection ----------------------------------------------------------------------
    def compiled_plan(self, fetches: Any, feed_dict: dict | None = None) -> Plan:
        """The ``Plan`` one ``run(fetches, feed_dict)`` would execute (compiled, not run:
        feeds may be omitted, placeholders then appear as ops of the plan)."""
        feed_dict = feed_dict or {}
        leaves = (
            [fetches]
            if type(fetches) is Tensor or type(fetches) is Operation
            else nest.flatten(fetches)
        )
        with contextlib.suppress(TypeError):
            sig = self._cache.get((tuple(leaves), tuple(feed_dict)))
            if sig is not None:
                return sig.plan
        unique = list(dict.fromkeys(_fetch_element(self._graph, leaf) for leaf in leaves))
        feeds = [_feed_tensor(self._graph, k) for k in feed_dict]
        return compile_plan(
            unique,
            feeds,
            self._backend.devices,
            self._backend.default_device,
            self._config.allow_soft_placement,
        )

    def placement(self, fetches: Any, feed_dict: dict | None = None) -> dict[str, str]:
        """Maps each op of the step to its device."""
        return dict(self.compiled_plan(fetches, feed_dict).placement)

    def to_dask(self, fetches: Any, feed_dict: dict | None = None) -> Any:
        """One step's Dask graph, a collection ``dask.visualize`` draws (clusters only)."""
        feed_dict = feed_dict or {}
        sig = self._signature(fetches, feed_dict)
        return self._backend.to_dask(sig.bound, self._convert_feeds(sig, feed_dict))

    def make_callable(self, fetches: Any, feed_list: list | None = None) -> Any:
        """A function running ``fetches`` with positional feeds for ``feed_list``."""
        feed_list = list(feed_list or [])

        def call(*args: Any) -> Any:
            return self.run(fetches, dict(zip(feed_list, args)))

        return call

    # --- lifecycle -----------------------------------------------------------------------
    @staticmethod
    def reset(
        target: Any, containers: list[str] | None = None, config: ConfigProto | None = None
    ) -> None:
        """Clears the variables and other state held on the cluster behind ``target``
        (which outlive sessions there, as in TF1's distributed runtime)."""
        if target is None or target == "" or target == "local":
            return
        from .dask.backend import reset

        reset(target, containers)

    def close(self) -> None:
        """Releases the session's state (variables, queues) and cancels blocked steps."""
        if not self._closed:
            self._closed = True
            self._backend.close()
            self._cache.clear()

    @contextlib.contextmanager
    def as_default(self) -> Iterator[BaseSession]:
        _default_sessions.stack.append(self)
        try:
            yield self
        finally:
            _default_sessions.stack.remove(self)

    def __enter__(self) -> BaseSession:
        self._context = [self._graph.as_default(), self.as_default()]
        for c in self._context:
            c.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        for c in reversed(self._context):
            c.__exit__(None, None, None)
        self.close()

    def _repr_html_(self) -> str | None:
        return repr_hooks.html("Session", self)

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            if not self._closed:
                self.close()


def _fetch_element(graph: Graph, leaf: Any) -> Tensor | Operation:
    """The graph element a fetch names, or TF1's error: ``TypeError`` for something that
    is no graph element, ``ValueError`` for an unknown name or another graph's element."""
    if leaf is None:
        raise TypeError("Fetch argument None has invalid type <class 'NoneType'>")
    try:
        return graph.as_graph_element(leaf)
    except TypeError as exc:
        raise TypeError(
            f"Fetch argument {leaf!r} has invalid type "
            f"{type(leaf).__name__!r}, must be a string or Tensor. "
            f"({exc})"
        ) from None
    except (ValueError, KeyError) as exc:
        detail = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        raise ValueError(
            f"Fetch argument {leaf!r} cannot be interpreted as a Tensor. ({detail})"
        ) from None


def _feed_tensor(graph: Graph, key: Any) -> Tensor:
    """The tensor a ``feed_dict`` key names (TF1: any failure is a ``TypeError``)."""
    try:
        return graph.as_graph_element(key, allow_operation=False)
    except (TypeError, ValueError, KeyError) as exc:
        detail = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        raise TypeError(f"Cannot interpret feed_dict key as Tensor: {detail}") from None


def _check_feed_shape(got: tuple, shape: tuple | None, name: str) -> None:
    """TF1's ``ValueError`` for a fed shape the placeholder's static shape refuses."""
    if shape is not None and (
        len(got) != len(shape) or any(d is not None and d != g for d, g in zip(shape, got))
    ):
        shape_str = (
            "("
            + ", ".join("?" if d is None else str(d) for d in shape)
            + ("," if len(shape) == 1 else "")
            + ")"
        )
        raise ValueError(
            f"Cannot feed value of shape {got} for Tensor '{name}', which has shape '{shape_str}'"
        )


def _convert_feed(value: Any, np_dtype: Any, name: str) -> Any:
    """A fed value that is not already an array of the placeholder's dtype."""
    if isinstance(value, Tensor):
        raise TypeError(
            f"The value of a feed cannot be a tf.Tensor object ({name}). "
            "Acceptable feed values include Python scalars, strings, "
            "lists, numpy ndarrays, or TensorHandles."
        )
    if np_dtype is None:
        return value
    if np_dtype.kind == "O":
        return _as_bytes(value, name)
    try:
        out = np.asarray(value, dtype=np_dtype)
    except OverflowError:
        raise TypeError(
            f"Type of feed value {value!r} with type {type(value)} is not "
            f"compatible with Tensor '{name}' of type {np.dtype(np_dtype).name}. "
            "Try explicitly setting the type of the feed tensor to a larger "
            "type (e.g. int64)."
        ) from None
    except (TypeError, ValueError) as exc:
        raise ValueError(f"Cannot feed value for Tensor '{name}': {exc}") from None
    if type(value) is int and out.dtype.kind in "iub" and out != value:
        # numpy wraps some out-of-range Python ints silently: refuse them as TF1 does.
        raise TypeError(
            f"Type of feed value {value!r} with type {type(value)} is not "
            f"compatible with Tensor '{name}' of type {out.dtype.name}. Try "
            "explicitly setting the type of the feed tensor to a larger type "
            "(e.g. int64)."
        )
    return out


def _as_bytes(value: Any, name: str) -> np.ndarray:
    """A value fed to a string tensor, as an object array of ``bytes``: TF1 stores
    strings as bytes, so a fed ``str`` (or numpy unicode array) is UTF-8 encoded."""
    try:
        out = np.array(value, dtype=object)  # a copy: encoding must not touch the caller's
    except (TypeError, ValueError) as exc:
        raise ValueError(f"Cannot feed value for Tensor '{name}': {exc}") from None
    flat = out.reshape(-1)
    for i, element in enumerate(flat):
        if isinstance(element, str):
            flat[i] = element.encode("utf-8")
        elif not isinstance(element, bytes) and hasattr(element, "__bytes__"):
            flat[i] = bytes(element)  # a TensorHandle feeds its handle string
    return out


def _log_placement(placement: Mapping[str, str], graph: Graph) -> None:
    """Each op's device, as TF1 writes it to standard error under
    ``log_device_placement`` whatever the verbosity (``name: (Type): device``): here
    through the ``"dataflow.placement"`` logger (the application's logging setup, or
    standard error when nothing would show it)."""
    logger = logging.getLogger("dataflow.placement")
    if logger.getEffectiveLevel() > logging.INFO:
        logger.setLevel(logging.INFO)  # asked for: shown at TF1's default verbosity too
    if not logger.hasHandlers():
        logger.addHandler(logging.StreamHandler())
    for name, device in placement.items():
        logger.info("%s: (%s): %s", name, graph.get_operation_by_name(name).type, device)


def _as_feed_dict(feed_dict: Any) -> dict:
    """A ``feed_dict`` given as another mapping, as a dict; anything else is refused."""
    if not isinstance(feed_dict, Mapping):
        if isinstance(feed_dict, (list, tuple)) and not feed_dict:
            return {}  # TF1 treats an empty feed_dict of any kind as none
        raise TypeError(
            f"feed_dict must be a dictionary (or another Mapping) of tensors "
            f"to values, not a {type(feed_dict).__name__}"
        )
    return dict(feed_dict)


def _host_value(value: Any) -> Any:
    if type(value) is np.ndarray:
        if value.ndim == 0:
            return value[()]
        # Stored state is read-only; hand the caller a copy it may change freely.
        return value if value.flags.writeable else value.copy()
    if value is None or isinstance(value, np.generic):
        return value
    from .devices import to_host

    return _host_value(np.asarray(to_host(value)))


class Session(BaseSession):
    """A TF1 session. ``Session()`` runs in this process; ``Session(target)`` on Dask.

    Args:
        target: ``''``/``None`` for the embedded runtime, or a ``distributed.Client``,
            a scheduler address such as ``'tcp://host:8786'``, or a
            ``dataflow.LocalCluster``.
        graph: the graph to run (default: the default graph).
        config: a ``ConfigProto``.
    """


class InteractiveSession(BaseSession):
    """A session that installs itself as the default session on construction.

    As in TF1, a ``graph`` passed explicitly also becomes the default graph until
    ``close()``; without one, the session runs the current default graph and leaves the
    graph stack alone, so ``tf.reset_default_graph()`` works after ``close()``.
    """

    def __init__(
        self, target: Any = "", graph: Graph | None = None, config: ConfigProto | None = None
    ):
        super().__init__(target, graph, config)
        self._graph_ctx = graph.as_default() if graph is not None else None
        if self._graph_ctx is not None:
            self._graph_ctx.__enter__()
        _default_sessions.stack.append(self)

    def close(self) -> None:
        if self in _default_sessions.stack:
            _default_sessions.stack.remove(self)
        if self._graph_ctx is not None:
            ctx, self._graph_ctx = self._graph_ctx, None
            ctx.__exit__(None, None, None)
        super().close()


class _DefaultSessions(threading.local):
    def __init__(self) -> None:
        self.stack: list[BaseSession] = []


_default_sessions = _DefaultSessions()


def get_default_session() -> BaseSession | None:
    return _default_sessions.stack[-1] if _default_sessions.stack else None


register_default_session_hook(get_default_session)

__all__ = ["Session", "InteractiveSession", "get_default_session", "errors"]
