"""Operation and Tensor: the nodes and edges of a dataflow graph.

An ``Operation`` records its type, input ``Tensor``s, control inputs, attrs, requested
device, colocation groups and the user frame that built it (``user_frame``); its
output ``Tensor``s carry a static dtype and a (possibly partial) ``TensorShape`` from
the op type's ``infer`` rule. ``Graph`` (``graph.py``) creates both.

Two hooks let the layers above fill in behaviour this layer cannot import: the op
library registers the Python operators (``+``, ``*``, ``[]``; ``register_operator``), and
the runtime registers how to find the default session that ``Tensor.eval`` and
``Operation.run`` use (``register_default_session_hook``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from types import CodeType, FrameType
from typing import TYPE_CHECKING, Any

from . import device_spec, dtypes, repr_hooks
from .tensor_shape import TensorShape, as_shape

if TYPE_CHECKING:  # a Graph creates Operations and Tensors; here only annotations name it
    from .graph import Graph


_PACKAGE_DIR = __file__.rsplit("/framework/", 1)[0]
# Operator overloads (+, *, [], ...) are filled in by the op library at import time so
# that this layer does not import it (see ``register_operator``).
_OPERATORS: dict[str, Callable] = {}

# The attr (True) the op library sets on a read of a resource that TF1 would fetch as a
# ref variable: fetched, the read is taken after every other op of the step that uses the
# same resource handle (its updates), as TF1 reads a fetched ref variable's buffer when
# the step's outputs are gathered. The compiler orders it (``runtime/compile/prune.py``).
FETCH_AFTER_UPDATES = "_fetch_after_updates"


def register_operator(name: str, fn: Callable) -> None:
    _OPERATORS[name] = fn


def user_frame() -> tuple[CodeType, int] | None:
    """The code and line of the innermost frame outside this package (None if none).

    Every op records this, so it is kept raw: the code object and line number are
    taken from the frame (which is not kept: it would hold the caller's locals alive)
    and ``Operation.traceback`` formats them only when an error or a user asks.
    """
    frame: FrameType | None = sys._getframe(2)
    while frame is not None:
        code = frame.f_code
        if not code.co_filename.startswith(_PACKAGE_DIR):
            return code, frame.f_lineno
        frame = frame.f_back
    return None


def notebook_cell(filename: str) -> int | None:
    """The execution count of the IPython cell compiled as ``filename`` (ipykernel names
    a cell's code after a temporary file, ``/tmp/ipykernel_<pid>/<hash>.py``), or None
    outside IPython or for a real file."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    names = getattr(getattr(shell, "compile", None), "_filename_map", None)
    return names.get(filename) if isinstance(names, dict) else None


def registered_operator(name: str) -> Callable:
    """The op library's builder registered for operator ``name``."""
    fn = _OPERATORS.get(name)
    if fn is None:
        raise TypeError(f"operator {name} is not available (import dataflow.ops)")
    return fn


class Tensor:
    """One output of an ``Operation``: a symbolic handle to a value computed by a step."""

    __slots__ = ("_op", "_value_index", "_dtype", "_shape", "__weakref__")
    # Make numpy defer to our operators in ``ndarray + tensor``.
    __array_priority__ = 100

    def __init__(self, op: Operation, value_index: int, dtype: dtypes.DType, shape: TensorShape):
        self._op = op
        self._value_index = value_index
        self._dtype = dtype
        self._shape = shape

    @property
    def op(self) -> Operation:
        return self._op

    @property
    def value_index(self) -> int:
        return self._value_index

    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype

    @property
    def graph(self) -> Graph:
        return self._op._graph

    @property
    def name(self) -> str:
        return f"{self._op.name}:{self._value_index}"

    @property
    def device(self) -> str:
        return self._op.device

    @property
    def shape(self) -> TensorShape:
        return self._shape

    def get_shape(self) -> TensorShape:
        return self._shape

    def set_shape(self, shape: Any) -> None:
        """Merges ``shape`` into the static shape (a ``ValueError`` if incompatible)."""
        self._shape = self._shape.merge_with(as_shape(shape))

    def consumers(self) -> list[Operation]:
        """The ops that take this tensor as an input, in the order they were built."""
        return self._op._graph.consumers_of(self)

    def eval(self, feed_dict: dict | None = None, session: Any = None) -> Any:
        """Runs this tensor's value in ``session`` (default: the default session)."""
        return run_using_default_session(self, feed_dict, self.graph, session)

    def _repr_html_(self) -> str | None:
        return repr_hooks.html(type(self).__name__, self)

    def __repr__(self) -> str:
        return f"<tf.Tensor '{self.name}' shape={self._shape} dtype={self._dtype.name}>"

    __str__ = __repr__

    # TF1 graph mode: tensors compare and hash by identity (use tf.equal for values),
    # which is object's own ``==`` and ``hash``: left undefined here, they stay C-level
    # (tensors are dict keys throughout building, compiling and every ``run``).

    def __bool__(self) -> bool:
        raise TypeError(
            f"Using a `tf.Tensor` ('{self.name}') as a Python `bool` is not allowed: its "
            "value is only known when a Session runs it. Use tf.cond to branch on it."
        )

    __nonzero__ = __bool__

    def __iter__(self) -> Iterator:
        dims = self._shape.as_tuple()
        if not dims or dims[0] is None:  # unknown rank, a scalar, or an unknown length
            raise TypeError(
                f"Tensor '{self.name}' is not iterable: its first dimension must be "
                f"statically known (shape {self._shape})."
            )
        return (self[i] for i in range(dims[0]))

    def __len__(self) -> int:
        dims = self._shape.as_tuple()
        if not dims or dims[0] is None:
            raise TypeError(
                f"len is not well defined for Tensor '{self.name}' of shape {self._shape}"
            )
        return dims[0]

    # --- operators: delegate to the op library's registered builders ---------------
    # (called here, not through a helper: each op records the first frame outside the
    # package, and every frame between costs its creation a frame object)
    def __add__(self, other: Any) -> Tensor:
        return registered_operator("add")(self, other)

    def __radd__(self, other: Any) -> Tensor:
        return registered_operator("add")(other, self)

    def __sub__(self, other: Any) -> Tensor:
        return registered_operator("sub")(self, other)

    def __rsub__(self, other: Any) -> Tensor:
        return registered_operator("sub")(other, self)

    def __mul__(self, other: Any) -> Tensor:
        return registered_operator("mul")(self, other)

    def __rmul__(self, other: Any) -> Tensor:
        return registered_operator("mul")(other, self)

    def __truediv__(self, other: Any) -> Tensor:
        return registered_operator("truediv")(self, other)

    def __rtruediv__(self, other: Any) -> Tensor:
        return registered_operator("truediv")(other, self)

    def __floordiv__(self, other: Any) -> Tensor:
        return registered_operator("floordiv")(self, other)

    def __rfloordiv__(self, other: Any) -> Tensor:
        return registered_operator("floordiv")(other, self)

    def __mod__(self, other: Any) -> Tensor:
        return registered_operator("mod")(self, other)

    def __rmod__(self, other: Any) -> Tensor:
        return registered_operator("mod")(other, self)

    def __pow__(self, other: Any) -> Tensor:
        return registered_operator("pow")(self, other)

    def __rpow__(self, other: Any) -> Tensor:
        return registered_operator("pow")(other, self)

    def __matmul__(self, other: Any) -> Tensor:
        return registered_operator("matmul")(self, other)

    def __rmatmul__(self, other: Any) -> Tensor:
        return registered_operator("matmul")(other, self)

    def __lt__(self, other: Any) -> Tensor:
        return registered_operator("lt")(self, other)

    def __le__(self, other: Any) -> Tensor:
        return registered_operator("le")(self, other)

    def __gt__(self, other: Any) -> Tensor:
        return registered_operator("gt")(self, other)

    def __ge__(self, other: Any) -> Tensor:
        return registered_operator("ge")(self, other)

    def __and__(self, other: Any) -> Tensor:
        return registered_operator("and")(self, other)

    def __rand__(self, other: Any) -> Tensor:
        return registered_operator("and")(other, self)

    def __or__(self, other: Any) -> Tensor:
        return registered_operator("or")(self, other)

    def __ror__(self, other: Any) -> Tensor:
        return registered_operator("or")(other, self)

    def __xor__(self, other: Any) -> Tensor:
        return registered_operator("xor")(self, other)

    def __rxor__(self, other: Any) -> Tensor:
        return registered_operator("xor")(other, self)

    __div__ = __truediv__
    __rdiv__ = __rtruediv__

    def __neg__(self) -> Tensor:
        return registered_operator("neg")(self)

    def __abs__(self) -> Tensor:
        return registered_operator("abs")(self)

    def __invert__(self) -> Tensor:
        return registered_operator("invert")(self)

    def __getitem__(self, key: Any) -> Tensor:
        return registered_operator("getitem")(self, key)

    def __reduce__(self):
        raise TypeError(
            f"Tensor '{self.name}' cannot be pickled; fetch its value with a Session instead."
        )


class Operation:
    """A node of the graph: an op type applied to input tensors."""

    __slots__ = (
        "_graph",
        "_id",
        "_name",
        "_type",
        "_inputs",
        "_outputs",
        "_control_inputs",
        "_attrs",
        "_device",
        "_colocation",
        "_where",
        "__weakref__",
    )

    def __init__(
        self,
        graph: Graph,
        op_id: int,
        name: str,
        op_type: str,
        inputs: list[Tensor],
        control_inputs: list[Operation],
        attrs: dict,
        where: tuple[CodeType, int] | None,
    ):
        self._graph = graph
        self._id = op_id
        self._name = name
        self._type = op_type
        self._inputs = tuple(inputs)
        self._outputs: tuple[Tensor, ...] = ()
        self._control_inputs = tuple(control_inputs)
        self._attrs = attrs
        self._device = ""  # the graph sets both from its device and colocation scopes
        self._colocation: tuple[str, ...] = ()
        self._where = where

    @property
    def name(self) -> str:
        return self._name

    @property
    def type(self) -> str:
        return self._type

    @property
    def graph(self) -> Graph:
        return self._graph

    @property
    def inputs(self) -> tuple[Tensor, ...]:
        return self._inputs

    @property
    def outputs(self) -> tuple[Tensor, ...]:
        return self._outputs

    @property
    def control_inputs(self) -> tuple[Operation, ...]:
        return self._control_inputs

    @property
    def device(self) -> str:
        """The requested device (possibly partial); the placer completes it."""
        return self._device

    @property
    def attrs(self) -> dict:
        return self._attrs

    @property
    def colocation_groups(self) -> tuple[str, ...]:
        """Names of ops this op must share a device with (TF's ``loc:@name``)."""
        return self._colocation

    @property
    def traceback(self) -> str:
        """Where the user built this op ('file:line (function)'; in Jupyter or IPython
        'Cell In[3], line 2 (function)', as IPython's own tracebacks name a cell)."""
        if self._where is None:
            return "<unknown>"
        code, line = self._where
        cell = notebook_cell(code.co_filename)
        where = f"{code.co_filename}:{line}" if cell is None else f"Cell In[{cell}], line {line}"
        return f"{where} ({code.co_name})"

    @property
    def node_def(self) -> dict:
        return {
            "name": self._name,
            "op": self._type,
            "device": self._device,
            "input": [t.name for t in self._inputs]
            + [f"^{op.name}" for op in self._control_inputs],
        }

    def get_attr(self, name: str) -> Any:
        try:
            return self._attrs[name]
        except KeyError:
            raise ValueError(f"Operation '{self._name}' has no attr named '{name}'.") from None

    def _set_device(self, device: str) -> None:
        self._device = device_spec.canonical(device)

    def _add_control_input(self, op: Operation) -> None:
        if op not in self._control_inputs:
            self._control_inputs = self._control_inputs + (op,)

    def run(self, feed_dict: dict | None = None, session: Any = None) -> None:
        """Runs this op in ``session`` (default: the default session)."""
        run_using_default_session(self, feed_dict, self._graph, session)

    def describe(self) -> str:
        """'name' (type Type, built at file:line) for error messages."""
        return f"'{self._name}' (type {self._type}, built at {self.traceback})"

    def _repr_html_(self) -> str | None:
        return repr_hooks.html(type(self).__name__, self)

    def __repr__(self) -> str:
        return f"<tf.Operation '{self._name}' type={self._type}>"

    # Identity ``==`` and ``hash``: object's own (see Tensor).

    def __reduce__(self):
        raise TypeError(f"Operation '{self._name}' cannot be pickled.")


# --- default session hook -----------------------------------------------------------------
# The runtime registers how to find the default session; this layer only calls it.
DEFAULT_SESSION_HOOK: list[Callable[[], Any]] = []


def register_default_session_hook(fn: Callable[[], Any]) -> None:
    DEFAULT_SESSION_HOOK[:] = [fn]


def run_using_default_session(
    fetch: Any, feed_dict: dict | None, graph: Graph, session: Any
) -> Any:
    if session is None:
        session = DEFAULT_SESSION_HOOK[0]() if DEFAULT_SESSION_HOOK else None
        if session is None:
            raise ValueError(
                "Cannot evaluate tensor using `eval()`: No default session is "
                "registered. Use `with sess.as_default()` or pass an explicit "
                "session to `eval(session=sess)`"
            )
    if session.graph is not graph:
        raise ValueError(
            "Cannot use the given session to evaluate tensor: the tensor's "
            "graph is different from the session's graph."
        )
    return session.run(fetch, feed_dict)
