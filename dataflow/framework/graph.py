"""Graph: the container a program builds ops into, the default-graph stack, and
``convert_to_tensor``.

A ``Graph`` owns an append-only list of ``Operation``s (``operation.py``) in creation
order (each op's ``_id`` is its index, which every later pass uses to break ties
deterministically). ``create_op`` runs the op type's registered ``infer`` rule, so bad
shapes fail at build time with the op's name in the message.

Builder-side state (name scopes, control-dependency scopes, device functions,
colocation) lives on the graph in per-thread stacks, as in TF1, so two threads building
in one graph do not see each other's scopes.

Sub-graphs (``cond`` branches, ``while_loop`` bodies) are ``Graph``s with an
``outer_graph``; using a tensor of an enclosing graph inside one *captures* it: the
sub-graph gets a placeholder and remembers which outer tensor feeds it.
"""

from __future__ import annotations

import contextlib
import itertools
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Literal, overload

from .._util import naming
from . import device_spec, dtypes, errors, gradient_override, graph_def, repr_hooks
from . import registry as _registry
from .conversions import CONVERSION_FUNCS, add_conversion_function
from .operation import Operation, Tensor, registered_operator, user_frame
from .tensor_shape import as_shape

# Converts Python/numpy values to a Const tensor; set by the op library.
_CONSTANT_BUILDER: list[Callable] = []
# Converts registered types (e.g. Variable) to tensors.


def register_constant_builder(fn: Callable) -> None:
    _CONSTANT_BUILDER[:] = [fn]


# ``fn(value, dtype=None, name=None) -> Tensor`` for ``base_type`` (the library's own).
register_tensor_conversion_function = add_conversion_function


class _BuilderState(threading.local):
    """Per-thread builder scopes of one graph."""

    def __init__(self) -> None:
        self.name_stack = ""
        self.control_deps: list[list[Operation]] = []
        self.device_fns: list[Any] = []
        self.colocation: list[Operation] = []


class Graph(gradient_override.GradientOverrides):
    """A TensorFlow computation: ops and the tensors flowing between them."""

    def __init__(self) -> None:
        self._ops: list[Operation] = []
        self._ops_by_name: dict[str, Operation] = {}
        self._names_in_use: dict[str, int] = {}
        self._consumers: dict[Tensor, list[Operation]] = {}  # by ``consumers_of``, lazily
        self._consumers_indexed = 0  # ops[:this] are in ``_consumers``
        self._collections: dict[str, list[Any]] = {}
        self._finalized = False
        self._lock = threading.RLock()
        self._state = _BuilderState()
        self.seed: int | None = None
        self._seed_counter = itertools.count(1)
        self._version = 0
        # Sub-graph support (cond branches, loop bodies).
        self.outer_graph: Graph | None = None
        self.captures: list[tuple[Tensor, Tensor]] = []  # (outer tensor, inner placeholder)
        self._capture_map: dict[Tensor, Tensor] = {}
        # Control inputs on outer-graph ops requested inside a sub-graph; the op that
        # runs the sub-graph (If/While) takes them as its own control inputs.
        self.outer_control_inputs: list[Operation] = []
        self._variable_store: dict[str, Any] = {}  # see variable_store

    def nest_in(self, outer: Graph) -> None:
        """Makes this graph a body (branch, loop body) of ``outer``, sharing its seeds (ops
        inside get fresh op seeds), variable store and collections (listed outside)."""
        self.outer_graph = outer
        self.seed, self._seed_counter = outer.seed, outer._seed_counter
        self._variable_store, self._collections = outer._variable_store, outer._collections

    @property
    def variable_store(self) -> dict[str, Any]:
        """The variables ``get_variable`` made in this graph (and its bodies), by full name."""
        return self._variable_store

    # --- default graph ---------------------------------------------------------------
    def as_default(self) -> contextlib.AbstractContextManager:
        """Makes this the default graph inside a ``with`` block (per thread)."""
        return _default_graph_stack.get_controller(self)

    # --- lookup ------------------------------------------------------------------------
    def get_operations(self) -> list[Operation]:
        return list(self._ops)

    def get_operation_by_name(self, name: str) -> Operation:
        if not isinstance(name, str):
            raise TypeError(f"Operation names are strings, not {type(name).__name__}")
        try:
            return self._ops_by_name[name]
        except KeyError:
            raise KeyError(f"The name '{name}' refers to an Operation not in the graph.") from None

    def get_tensor_by_name(self, name: str) -> Tensor:
        if not isinstance(name, str):
            raise TypeError(f"Tensor names are strings, not {type(name).__name__}")
        op_name, sep, index = name.rpartition(":")
        if not sep or not index.isdigit():
            raise ValueError(
                f"The name '{name}' looks like an (invalid) Operation name, "
                "not a Tensor. Tensor names must be of the form "
                "'<op_name>:<output_index>'."
            )
        op = self._ops_by_name.get(op_name)
        if op is None:
            raise KeyError(
                f"The name '{name}' refers to a Tensor which does not exist. The "
                f"operation, '{op_name}', does not exist in the graph."
            )
        i = int(index)
        if i >= len(op.outputs):
            raise KeyError(
                f"The name '{name}' refers to a Tensor which does not exist. The "
                f"operation, '{op_name}', exists but only has "
                f"{len(op.outputs)} outputs."
            )
        return op.outputs[i]

    @overload
    def as_graph_element(
        self, obj: Any, allow_tensor: bool = ..., *, allow_operation: Literal[False]
    ) -> Tensor: ...

    @overload
    def as_graph_element(
        self, obj: Any, allow_tensor: bool = ..., allow_operation: bool = ...
    ) -> Tensor | Operation: ...

    def as_graph_element(
        self, obj: Any, allow_tensor: bool = True, allow_operation: bool = True
    ) -> Tensor | Operation:
        """Resolves a tensor, op, name string or convertible object of this graph."""
        if isinstance(obj, str):
            if ":" in obj and allow_tensor:
                return self.get_tensor_by_name(obj)
            if allow_operation:
                return self.get_operation_by_name(obj)
            raise ValueError(f"Name '{obj}' names an Operation, not a Tensor")
        if isinstance(obj, (Tensor, Operation)):
            if obj.graph is not self:
                raise ValueError(f"{obj!r} is not an element of this graph.")
            if isinstance(obj, Tensor) and not allow_tensor:
                raise TypeError(f"Can not convert a Tensor into an Operation: {obj!r}")
            if isinstance(obj, Operation) and not allow_operation:
                raise TypeError(f"Can not convert an Operation into a Tensor: {obj!r}")
            return obj
        graph_element = getattr(obj, "_as_graph_element", None)
        if graph_element is not None:
            return self.as_graph_element(graph_element(), allow_tensor, allow_operation)
        raise TypeError(f"Can not convert a {type(obj).__name__} into a Tensor or Operation.")

    def consumers_of(self, tensor: Tensor) -> list[Operation]:
        """The ops taking ``tensor`` as an input, in creation order (once per use)."""
        with self._lock:
            ops, index = self._ops, self._consumers
            for i in range(self._consumers_indexed, len(ops)):
                for t in ops[i]._inputs:
                    index.setdefault(t, []).append(ops[i])
            self._consumers_indexed = len(ops)
            return list(index.get(tensor, ()))

    @property
    def version(self) -> int:
        """Number of ops created so far (plans cache on it)."""
        return self._version

    # --- naming ------------------------------------------------------------------------
    def get_name_scope(self) -> str:
        return self._state.name_stack

    def unique_name(self, name: str, mark_as_used: bool = True) -> str:
        if self._state.name_stack:
            name = f"{self._state.name_stack}/{name}"
        key = name.lower()
        count = self._names_in_use.get(key, 0)
        if mark_as_used:
            self._names_in_use[key] = count + 1
        if count > 0:
            base = name
            while (name := f"{base}_{count}").lower() in self._names_in_use:
                count += 1
            if mark_as_used:
                self._names_in_use[name.lower()] = 1
        return name

    @contextlib.contextmanager
    def name_scope(self, name: str | None) -> Iterator[str]:
        """Pushes a name scope; yields the scope string ending in '/'."""
        state = self._state
        old = state.name_stack
        if not name:
            new = ""
        elif name.endswith("/"):
            new = name[:-1]
        else:
            if not naming.is_valid_scope_name(name):
                raise ValueError(f"'{name}' is not a valid scope name")
            new = self.unique_name(name)
        state.name_stack = new
        try:
            yield "" if not new else new + "/"
        finally:
            state.name_stack = old

    # --- scopes recorded on new ops -----------------------------------------------------
    @contextlib.contextmanager
    def control_dependencies(self, control_inputs: Sequence[Any] | None) -> Iterator[None]:
        """New ops get ``control_inputs`` as control inputs; ``None`` clears the scope."""
        state = self._state
        old = state.control_deps
        if control_inputs is None:
            state.control_deps = []
        else:
            ops = []
            for c in control_inputs:
                c = getattr(c, "op", c) if not isinstance(c, Operation) else c
                if hasattr(c, "_as_graph_element") and not isinstance(c, (Operation, Tensor)):
                    c = c._as_graph_element()
                    c = c.op if isinstance(c, Tensor) else c
                if not isinstance(c, Operation):
                    raise TypeError(f"Control input must be an Operation or Tensor: {c!r}")
                ops.append(self._resolve_capture_op(c))
            state.control_deps = old + [ops]
        try:
            yield
        finally:
            state.control_deps = old

    @contextlib.contextmanager
    def device(self, spec: Any) -> Iterator[None]:
        """Requests a device (string, ``DeviceSpec`` or function of an op) for new ops."""
        state = self._state
        old = state.device_fns
        if spec is None:
            state.device_fns = [None]
        else:
            if isinstance(spec, str):
                device_spec.DeviceSpec.from_string(spec)  # validate early
            state.device_fns = old + [spec]
        try:
            yield
        finally:
            state.device_fns = old

    @contextlib.contextmanager
    def colocate_with(self, op: Any, ignore_existing: bool = False) -> Iterator[None]:
        """New ops share a device with ``op`` (a tensor, op or variable)."""
        state = self._state
        old = state.colocation
        if op is None:
            state.colocation = []
        else:
            target = op
            if hasattr(target, "_as_graph_element") and not isinstance(target, (Tensor, Operation)):
                target = target._as_graph_element()
            if isinstance(target, Tensor):
                target = target.op
            if not isinstance(target, Operation):
                raise TypeError(f"colocate_with needs an op, tensor or variable, got {op!r}")
            state.colocation = ([] if ignore_existing else old) + [target]
        try:
            yield
        finally:
            state.colocation = old

    def _current_device(self, op: Operation) -> str:
        device = ""
        for fn in self._state.device_fns:
            if fn is None:
                device = ""
            elif callable(fn) and not isinstance(fn, (str, device_spec.DeviceSpec)):
                device = device_spec.merge_device(device, fn(op) or "")
            else:
                device = device_spec.merge_device(device, fn)
        return device

    # --- collections --------------------------------------------------------------------
    def add_to_collection(self, name: str, value: Any) -> None:
        self._collections.setdefault(name, []).append(value)

    def add_to_collections(self, names: Any, value: Any) -> None:
        for name in [names] if isinstance(names, str) else names:
            self.add_to_collection(name, value)

    def get_collection(self, name: str, scope: str | None = None) -> list[Any]:
        items = list(self._collections.get(name, []))
        if scope is None:
            return items
        pattern = re.compile(scope)
        return [i for i in items if pattern.match(getattr(i, "name", ""))]

    def get_collection_ref(self, name: str) -> list[Any]:
        return self._collections.setdefault(name, [])

    def clear_collection(self, name: str) -> None:
        self._collections.pop(name, None)

    def get_all_collection_keys(self) -> list[str]:
        return list(self._collections)

    # --- finalize -------------------------------------------------------------------------
    def finalize(self) -> None:
        """Makes the graph read-only: creating an op afterwards raises RuntimeError."""
        self._finalized = True

    @property
    def finalized(self) -> bool:
        return self._finalized

    def _unsafe_unfinalize(self) -> None:
        self._finalized = False

    # --- random seeds --------------------------------------------------------------------
    def next_op_seed(self) -> int:
        return next(self._seed_counter)

    # --- capture (sub-graphs) ------------------------------------------------------------
    def _is_ancestor(self, graph: Graph) -> bool:
        g = self.outer_graph
        while g is not None:
            if g is graph:
                return True
            g = g.outer_graph
        return False

    def capture(self, tensor: Tensor) -> Tensor:
        """The inner placeholder standing for outer ``tensor`` (created on first use)."""
        inner = self._capture_map.get(tensor)
        if inner is not None:
            return inner
        original = tensor
        outer = self.outer_graph
        if outer is None:
            raise ValueError(f"{tensor!r} cannot be captured: {self!r} has no outer graph")
        if tensor.graph is not outer:
            tensor = outer.capture(tensor)  # capture through each level
            inner = self._capture_map.get(tensor)
            if inner is not None:  # captured before through its outer placeholder
                self._capture_map[original] = inner
                return inner
        with self.control_dependencies(None), self.device(None), self.name_scope(None):
            op = self.create_op(
                "Placeholder", [], {"dtype": tensor.dtype, "shape": tensor.shape}, name="capture"
            )
        inner = op.outputs[0]
        self._capture_map[tensor] = inner
        self._capture_map[original] = inner  # a tensor from further out maps here too
        if tensor.graph is not self.outer_graph:
            raise AssertionError("capture chain broken")
        self.captures.append((tensor, inner))
        return inner

    def _resolve_input(self, tensor: Tensor) -> Tensor:
        if tensor.graph is self:
            return tensor
        if self._is_ancestor(tensor.graph):
            return self.capture(tensor)
        raise ValueError(f"Tensor {tensor!r} must be from the same graph as the op that uses it.")

    def _resolve_capture_op(self, op: Operation) -> Operation:
        if op.graph is self:
            return op
        if self._is_ancestor(op.graph):
            # A control input from an outer graph: the sub-graph runs after the outer op
            # anyway once its captures are computed, so depend on a captured output if
            # any, else ignore (the outer op is already ordered by the outer graph).
            self.outer_control_inputs.append(op)
            return None  # type: ignore[return-value]
        raise ValueError(f"Control input {op!r} must be from the same graph.")

    # --- op creation ---------------------------------------------------------------------
    def create_op(
        self,
        op_type: str,
        inputs: Sequence[Tensor],
        attrs: dict | None = None,
        name: str | None = None,
        control_inputs: Sequence[Operation] = (),
    ) -> Operation:
        """Creates an op of a registered type and infers its outputs' dtypes and shapes.

        ``ValueError``/``TypeError`` from the type's shape rule are re-raised with the
        op's name and input shapes in the message.
        """
        if self._finalized:
            raise RuntimeError("Graph is finalized and cannot be modified.")
        opdef = _registry.lookup(op_type)
        inputs = [t if t.graph is self else self._resolve_input(t) for t in inputs]
        attrs = self.with_gradient_override(op_type, attrs or {})
        with self._lock:
            if name is None:
                op_name = self.unique_name(op_type)
            elif name.endswith("/"):
                op_name = name[:-1]
                # An exact name (a scope's own name) is marked used, not counted again:
                # TF1 names a second Variable 'w' 'w_1', not 'w_2'.
                self._names_in_use.setdefault(op_name.lower(), 1)
            elif naming.is_valid_op_name(name):
                op_name = self.unique_name(name)
            else:
                raise ValueError(f"'{name}' is not a valid node name")
            state = self._state
            controls: list[Operation] = []
            if state.control_deps:  # this and the device steps cost nothing when unused
                input_ops = {t.op for t in inputs}
                for group in state.control_deps:
                    for c in group:
                        if c is not None and c not in controls and c not in input_ops:
                            controls.append(c)
            for c in control_inputs:
                c = self._resolve_capture_op(c)
                if c is not None and c not in controls:
                    controls.append(c)
            op = Operation(
                self, len(self._ops), op_name, op_type, inputs, controls, attrs, user_frame()
            )
            if state.colocation:
                target = state.colocation[-1]
                op._colocation = tuple(dict.fromkeys(target._colocation or (target.name,)))
                op._device = device_spec.canonical(target.device) if target.device else ""
            elif state.device_fns:
                device = self._current_device(op)
                op._device = device_spec.canonical(device) if device else ""
            try:
                specs = opdef.infer(op)
            except (ValueError, TypeError) as exc:
                shapes = ", ".join(str(t.shape) for t in inputs)
                raise type(exc)(
                    f"{exc} for '{op_name}' (op: '{op_type}') with input shapes: "
                    f"{shapes}. Built at {op.traceback}."
                ) from None
            op._outputs = tuple(Tensor(op, i, dt, as_shape(sh)) for i, (dt, sh) in enumerate(specs))
            self._ops.append(op)
            self._ops_by_name[op_name] = op
            self._version += 1
        return op

    def __repr__(self) -> str:
        return f"<dataflow.Graph with {len(self._ops)} ops>"

    def as_graph_def(self, from_version: int | None = None, add_shapes: bool = False) -> Any:
        """The graph as a ``GraphDef`` protobuf (``framework/graph_def.py``); with
        ``from_version``, only the ops added since ``version`` was that number."""
        return graph_def.to_graph_def(self, add_shapes, since=from_version)

    # --- drawing (provided by dataflow.viz, a higher layer, through a hook) -------------
    def visualize(self, filename: str | None = None, format: str = "svg", **kwargs: Any) -> Any:
        """A ``dataflow.viz.GraphView`` of the graph (no graphviz needed), or with
        ``filename`` its SVG file's path (other formats need graphviz's ``dot``); see
        ``dataflow.viz.visualize``."""
        if not _VISUALIZE_HOOK:
            raise RuntimeError("graph drawing is unavailable (import dataflow.viz)")
        return _VISUALIZE_HOOK[0](self, filename=filename, format=format, **kwargs)

    def _repr_html_(self) -> str | None:
        return repr_hooks.html("Graph", self)


class _DefaultGraphStack(threading.local):
    """Per-thread stack of default graphs over one process-wide global default."""

    _global_default: Graph | None = None

    def __init__(self) -> None:
        self.stack: list[Graph] = []

    def get_default(self) -> Graph:
        if self.stack:
            return self.stack[-1]
        if _DefaultGraphStack._global_default is None:
            _DefaultGraphStack._global_default = Graph()
        return _DefaultGraphStack._global_default

    def reset(self) -> None:
        if self.stack:
            raise AssertionError(
                "Do not use tf.reset_default_graph() to clear nested "
                "graphs. If you need a cleared graph, exit the nesting "
                "and create a new graph."
            )
        _DefaultGraphStack._global_default = None

    @contextlib.contextmanager
    def get_controller(self, graph: Graph) -> Iterator[Graph]:
        self.stack.append(graph)
        try:
            yield graph
        finally:
            # Its own (last) entry: the top, unless an InteractiveSession's graph was left
            # out of order (TF1's enforce_nesting=False). Graphs compare by identity.
            del self.stack[len(self.stack) - 1 - self.stack[::-1].index(graph)]


_default_graph_stack = _DefaultGraphStack()


def get_default_graph() -> Graph:
    """The graph new ops go into (per thread)."""
    return _default_graph_stack.get_default()


def reset_default_graph() -> None:
    """Clears the global default graph (outside any ``with graph.as_default()``)."""
    _default_graph_stack.reset()


# --- conversion ---------------------------------------------------------------------------
def convert_to_tensor(
    value: Any, dtype: Any = None, name: str | None = None, preferred_dtype: Any = None
) -> Tensor:
    """Returns ``value`` as a Tensor of the default graph (constants for plain values).

    Raises ``ValueError`` when ``dtype`` is given and ``value`` is a tensor of another
    dtype, naming both.
    """
    if isinstance(value, Tensor):
        if dtype is not None and dtypes.as_dtype(dtype) != value.dtype:
            raise ValueError(
                f"Tensor conversion requested dtype {dtypes.as_dtype(dtype).name}"
                f" for Tensor with dtype {value.dtype.name}: {value!r}"
            )
        graph = get_default_graph()
        if value.graph is not graph and graph._is_ancestor(value.graph):
            return graph.capture(value)
        return value
    for base, fn in CONVERSION_FUNCS:
        if isinstance(value, base):
            converted = fn(value, dtype=dtype, name=name)
            if converted is not NotImplemented:
                return convert_to_tensor(converted, dtype=dtype)
    if isinstance(value, Operation):
        raise TypeError(
            f"Can not convert an Operation ('{value.name}') into a Tensor; use its outputs."
        )
    if isinstance(value, (list, tuple)) and any(
        isinstance(v, Tensor) or any(isinstance(v, b) for b, _ in CONVERSION_FUNCS)
        for v in _flatten_list(value)
    ):
        # A list mixing tensors and numbers becomes a Pack (tf.stack) of its elements.
        pack = registered_operator("pack")
        return pack([convert_to_tensor(v, dtype=dtype) for v in value], name=name)
    if not _CONSTANT_BUILDER:
        raise TypeError("constants are unavailable (import dataflow.ops)")
    if dtype is None and preferred_dtype is not None:
        try:
            return _CONSTANT_BUILDER[0](value, dtype=preferred_dtype, name=name or None)
        except (TypeError, ValueError):
            pass
    return _CONSTANT_BUILDER[0](value, dtype=dtype, name=name or None)


def _flatten_list(value: Any) -> list[Any]:
    out, stack = [], [value]
    while stack:
        v = stack.pop()
        if isinstance(v, (list, tuple)):
            stack.extend(v)
        else:
            out.append(v)
    return out


def is_tensor_like(value: Any) -> bool:
    return isinstance(value, Tensor) or any(isinstance(value, b) for b, _ in CONVERSION_FUNCS)


# Draws a graph; set by dataflow.viz.
_VISUALIZE_HOOK: list[Callable[..., Any]] = []


def register_visualize_hook(fn: Callable[..., Any]) -> None:
    _VISUALIZE_HOOK[:] = [fn]


__all__ = [
    "Graph",
    "Operation",
    "Tensor",
    "get_default_graph",
    "reset_default_graph",
    "convert_to_tensor",
    "errors",
]
