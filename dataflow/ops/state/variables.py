"""Variables: mutable state in the graph, and the ops that read and update it.

A ``Variable`` is a ``VarHandleOp`` (its output is the variable's name, of dtype
``resource``) plus the ops that use the handle: ``ReadVariableOp``,
``AssignVariableOp``, ``AssignAddVariableOp``, ``AssignSubVariableOp``, the scatter
updates and ``VarIsInitializedOp``. Every op taking the handle is placed with it (the
placer colocates consumers of ``resource`` tensors with their producer), so on a
cluster reads and updates run on the worker holding the variable.

The value lives in the device's ``ResourceStore`` (runtime), keyed by the handle op's
name, as a read-only array. A value read or fetched earlier never changes under its
reader: ``assign`` stores a new array, and read-modify-write updates
(``assign_add``/``assign_sub``, the optimizers' apply ops) write in place only when
nobody else holds the buffer, else into a new one (``ResourceStore.update_in_place``).
They check their inputs before writing, so a failed update leaves the variable as it
was, and run under the variable's lock, so concurrent ``assign_add``s never lose an
increment.

Using a variable as a tensor makes a fresh ``ReadVariableOp`` in the current scope, so
``control_dependencies`` order the read after the updates it names (as TF1's resource
variables do). Gradients with respect to a variable are gradients with respect to its
handle; each read passes its gradient through to the handle.

Fetching a variable fetches its snapshot read. TF1 fetches a ref variable (its default,
``use_resource=False``) by its buffer when the step ends, so ``run([train_op, w])`` sees
the step's update; a resource variable's snapshot is read when it runs, before them. A
ref variable's snapshot carries ``FETCH_AFTER_UPDATES``, which the compiler honours.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...framework import behavior, dtypes, registry, repr_hooks
from ...framework import graph as graph_module
from ...framework.graph import Operation, Tensor, convert_to_tensor, get_default_graph
from ...framework.operation import FETCH_AFTER_UPDATES
from ...framework.tensor_shape import TensorShape, as_shape
from ..build import apply_op
from .creator_scope import CreatorDispatch
from .sync_aggregation import (
    VariableAggregation,
    VariableSynchronization,
    check_sync_and_aggregation,
)

GLOBAL_VARIABLES = "variables"
TRAINABLE_VARIABLES = "trainable_variables"
LOCAL_VARIABLES = "local_variables"
MODEL_VARIABLES = "model_variables"
GLOBAL_STEP = "global_step"


class GraphKeys:
    """Standard collection names (``tf.GraphKeys``)."""

    GLOBAL_VARIABLES = GLOBAL_VARIABLES
    VARIABLES = GLOBAL_VARIABLES
    TRAINABLE_VARIABLES = TRAINABLE_VARIABLES
    LOCAL_VARIABLES = LOCAL_VARIABLES
    MODEL_VARIABLES = MODEL_VARIABLES
    GLOBAL_STEP = GLOBAL_STEP
    UPDATE_OPS = "update_ops"
    LOSSES = "losses"
    REGULARIZATION_LOSSES = "regularization_losses"
    SUMMARIES = "summaries"
    QUEUE_RUNNERS = "queue_runners"
    SAVERS = "savers"
    INIT_OP = "init_op"
    LOCAL_INIT_OP = "local_init_op"
    READY_OP = "ready_op"
    READY_FOR_LOCAL_INIT_OP = "ready_for_local_init_op"
    TRAIN_OP = "train_op"
    MOVING_AVERAGE_VARIABLES = "moving_average_variables"
    SUMMARY_OP = "summary_op"
    METRIC_VARIABLES = "metric_variables"
    TABLE_INITIALIZERS = "table_initializer"
    ASSET_FILEPATHS = "asset_filepaths"


# --- the Variable class ---------------------------------------------------------------
class Variable(metaclass=CreatorDispatch):  # variable_creator_scope dispatches
    """A TF1 variable: state that persists across ``Session.run`` calls.

    Args:
        initial_value: a value or tensor (or a callable returning one) giving the value
            the ``initializer`` assigns.
        trainable: add to ``TRAINABLE_VARIABLES`` (what optimizers update by default).
        collections: collections to add to (default ``[GLOBAL_VARIABLES]``).
        validate_shape: require assigned values to keep the variable's shape.
        name: the variable's name (made unique in the graph).
        dtype: convert the initial value to this dtype.
        shape: the static shape (default: the initial value's).
        use_resource: False (TF1's default, unless ``enable_resource_variables``): a ref
            variable, fetched after the step's updates; True: fetched when read.
    """

    # Make numpy defer to our operators in ``ndarray + variable``.
    __array_priority__ = 100

    def __init__(
        self,
        initial_value: Any = None,
        trainable: bool = True,
        collections: list[str] | None = None,
        validate_shape: bool = True,
        caching_device: Any = None,
        name: str | None = None,
        variable_def: Any = None,
        dtype: Any = None,
        expected_shape: Any = None,
        import_scope: Any = None,
        constraint: Any = None,
        use_resource: Any = None,
        synchronization: Any = None,
        aggregation: Any = None,
        shape: Any = None,
    ):
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        check_sync_and_aggregation(synchronization, aggregation)
        self._sync = synchronization or VariableSynchronization.AUTO
        self._aggregation = aggregation or VariableAggregation.NONE
        graph = get_default_graph()
        self._graph = graph
        self._trainable = trainable
        self._constraint = constraint
        ref = not (behavior.resource_variables_enabled() if use_resource is None else use_resource)
        with graph.name_scope(name or "Variable") as scope:
            # The initial value ignores control dependencies in scope (it must be
            # computable before anything else runs), as TF1's init_scope does.
            with graph.control_dependencies(None), graph.name_scope("Initializer"):
                value = initial_value() if callable(initial_value) else initial_value
                self._initial_value = convert_to_tensor(value, dtype=dtype, name="initial_value")
            self._dtype = self._initial_value.dtype
            self._shape = (
                as_shape(shape)
                if shape is not None
                else (self._initial_value.shape if validate_shape else TensorShape(None))
            )
            if not self._shape.is_compatible_with(self._initial_value.shape) and validate_shape:
                raise ValueError(
                    f"initial value of shape {self._initial_value.shape} does "
                    f"not match variable '{scope[:-1]}' shape {self._shape}"
                )
            self._handle = graph.create_op(
                "VarHandleOp",
                [],
                {"shared_name": scope[:-1], "dtype": self._dtype, "shape": self._shape},
                name=scope,
            ).outputs[0]
            self._attrs = {"dtype": self._dtype, "shape": self._shape}
            with graph.colocate_with(self._handle.op), graph.control_dependencies(None):
                self._initializer_op = graph.create_op(
                    "AssignVariableOp",
                    [self._handle, self._initial_value],
                    dict(self._attrs, validate_shape=validate_shape),
                    name="Assign",
                )
                with graph.name_scope("Read"):
                    self._snapshot = graph.create_op(
                        "ReadVariableOp",
                        [self._handle],
                        dict(self._attrs, **{FETCH_AFTER_UPDATES: True}) if ref else self._attrs,
                    ).outputs[0]
        if collections is None:
            collections = [GLOBAL_VARIABLES]
        if trainable and TRAINABLE_VARIABLES not in collections:
            collections = list(collections) + [TRAINABLE_VARIABLES]
        graph.add_to_collections(collections, self)

    # --- identity ----------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._handle.name

    @property
    def op(self) -> Operation:
        return self._handle.op

    @property
    def synchronization(self) -> VariableSynchronization:
        return self._sync

    @property
    def aggregation(self) -> VariableAggregation:
        return self._aggregation

    @property
    def handle(self) -> Tensor:
        return self._handle

    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype

    @property
    def shape(self) -> TensorShape:
        return self._shape

    def get_shape(self) -> TensorShape:
        return self._shape

    @property
    def graph(self) -> graph_module.Graph:
        return self._graph

    @property
    def device(self) -> str:
        return self._handle.op.device

    @property
    def trainable(self) -> bool:
        return self._trainable

    @property
    def initializer(self) -> Operation:
        """The op that assigns the initial value."""
        return self._initializer_op

    def set_initializer(self, op: Operation) -> None:
        """Makes ``op`` the variable's initializer (``tf.train.init_from_checkpoint``'s
        restore, as TF1 replaces the initializer op)."""
        self._initializer_op = op

    @property
    def save_slice_info(self) -> Any:
        """Where this variable lies in a partitioned variable (a
        ``state.checkpoint.tf_bundle.SaveSliceInfo``), or ``None``: a ``Saver`` saves it as
        that slice of the full variable, as TF1 does."""
        return getattr(self, "_save_slice_info", None)

    def set_save_slice_info(self, info: Any) -> None:
        self._save_slice_info = info

    @property
    def initial_value(self) -> Tensor:
        return self._initial_value

    @property
    def constraint(self) -> Any:
        return self._constraint

    def _as_graph_element(self) -> Tensor:
        return self._snapshot

    # --- reads -------------------------------------------------------------------------
    def value(self) -> Tensor:
        """A read of the current value, made in the current control-dependency scope."""
        return self.read_value()

    def read_value(self) -> Tensor:
        graph = get_default_graph()
        with (
            graph.colocate_with(self._handle.op),
            graph.name_scope(self._handle.op.name + "/Read/"),
        ):
            return apply_op("ReadVariableOp", [self._handle], self._attrs)

    def eval(self, session: Any = None) -> Any:
        return self._snapshot.eval(session=session)

    def load(self, value: Any, session: Any = None) -> None:
        """Assigns ``value`` by running the initializer with its input fed."""
        from ...framework.operation import DEFAULT_SESSION_HOOK

        session = session or (DEFAULT_SESSION_HOOK[0]() if DEFAULT_SESSION_HOOK else None)
        if session is None:
            raise ValueError(
                "Either session argument should be provided or default "
                "session should be established"
            )
        session.run(self._initializer_op, {self._initial_value: value})

    def initialized_value(self) -> Tensor:
        return self._initial_value

    # --- updates -----------------------------------------------------------------------
    def _update(
        self,
        op_type: str,
        value: Any,
        name: str | None,
        extra: dict | None = None,
        inputs: list | None = None,
    ) -> Tensor:
        graph = get_default_graph()
        with graph.colocate_with(self._handle.op):
            values = inputs if inputs is not None else [convert_to_tensor(value, dtype=self._dtype)]
            return graph.create_op(
                op_type, [self._handle] + values, dict(self._attrs, **(extra or {})), name=name
            ).outputs[0]

    def assign(
        self,
        value: Any,
        use_locking: bool | None = None,
        name: str | None = None,
        read_value: bool = True,
    ) -> Tensor:
        """Assigns ``value``; returns the new value."""
        return self._update("AssignVariableOp", value, name, {"validate_shape": True})

    def assign_add(
        self,
        delta: Any,
        use_locking: bool | None = None,
        name: str | None = None,
        read_value: bool = True,
    ) -> Tensor:
        """Adds ``delta`` atomically; returns the new value."""
        return self._update("AssignAddVariableOp", delta, name)

    def assign_sub(
        self,
        delta: Any,
        use_locking: bool | None = None,
        name: str | None = None,
        read_value: bool = True,
    ) -> Tensor:
        """Subtracts ``delta`` atomically; returns the new value."""
        return self._update("AssignSubVariableOp", delta, name)

    def scatter_update(self, indices: Any, updates: Any, name: str | None = None) -> Tensor:
        return self._update(
            "ResourceScatterUpdate",
            None,
            name,
            inputs=[convert_to_tensor(indices), convert_to_tensor(updates, dtype=self._dtype)],
        )

    def scatter_add(self, indices: Any, updates: Any, name: str | None = None) -> Tensor:
        return self._update(
            "ResourceScatterAdd",
            None,
            name,
            inputs=[convert_to_tensor(indices), convert_to_tensor(updates, dtype=self._dtype)],
        )

    def is_initialized(self) -> Tensor:
        graph = get_default_graph()
        with graph.colocate_with(self._handle.op):
            return apply_op("VarIsInitializedOp", [self._handle])

    def set_shape(self, shape: Any) -> None:
        self._shape = self._shape.merge_with(shape)

    def _repr_html_(self) -> str | None:
        return repr_hooks.html("Variable", self)

    def __repr__(self) -> str:
        return (
            f"<tf.Variable '{self._handle.op.name}:0' shape={self._shape} dtype={self._dtype.name}>"
        )

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other: object) -> bool:
        return self is other

    def __bool__(self) -> bool:
        raise TypeError(f"Using a tf.Variable ('{self.name}') as a Python bool is not allowed.")

    def __iter__(self):
        raise TypeError(f"'Variable' object ('{self.name}') is not iterable.")

    def __array__(self, *args: Any, **kwargs: Any):
        raise TypeError(
            f"tf.Variable '{self.name}' has no value outside a Session; run it "
            "to get a numpy array."
        )

    # --- operators: those of a read of the current value (``value()``) ---------------
    def __add__(self, other: Any) -> Tensor:
        return self.value().__add__(other)

    def __radd__(self, other: Any) -> Tensor:
        return self.value().__radd__(other)

    def __sub__(self, other: Any) -> Tensor:
        return self.value().__sub__(other)

    def __rsub__(self, other: Any) -> Tensor:
        return self.value().__rsub__(other)

    def __mul__(self, other: Any) -> Tensor:
        return self.value().__mul__(other)

    def __rmul__(self, other: Any) -> Tensor:
        return self.value().__rmul__(other)

    def __truediv__(self, other: Any) -> Tensor:
        return self.value().__truediv__(other)

    def __rtruediv__(self, other: Any) -> Tensor:
        return self.value().__rtruediv__(other)

    def __floordiv__(self, other: Any) -> Tensor:
        return self.value().__floordiv__(other)

    def __rfloordiv__(self, other: Any) -> Tensor:
        return self.value().__rfloordiv__(other)

    def __mod__(self, other: Any) -> Tensor:
        return self.value().__mod__(other)

    def __rmod__(self, other: Any) -> Tensor:
        return self.value().__rmod__(other)

    def __pow__(self, other: Any) -> Tensor:
        return self.value().__pow__(other)

    def __rpow__(self, other: Any) -> Tensor:
        return self.value().__rpow__(other)

    def __matmul__(self, other: Any) -> Tensor:
        return self.value().__matmul__(other)

    def __rmatmul__(self, other: Any) -> Tensor:
        return self.value().__rmatmul__(other)

    def __lt__(self, other: Any) -> Tensor:
        return self.value().__lt__(other)

    def __le__(self, other: Any) -> Tensor:
        return self.value().__le__(other)

    def __gt__(self, other: Any) -> Tensor:
        return self.value().__gt__(other)

    def __ge__(self, other: Any) -> Tensor:
        return self.value().__ge__(other)

    def __and__(self, other: Any) -> Tensor:
        return self.value().__and__(other)

    def __rand__(self, other: Any) -> Tensor:
        return self.value().__rand__(other)

    def __or__(self, other: Any) -> Tensor:
        return self.value().__or__(other)

    def __ror__(self, other: Any) -> Tensor:
        return self.value().__ror__(other)

    def __xor__(self, other: Any) -> Tensor:
        return self.value().__xor__(other)

    def __rxor__(self, other: Any) -> Tensor:
        return self.value().__rxor__(other)

    __div__ = __truediv__
    __rdiv__ = __rtruediv__

    def __neg__(self) -> Tensor:
        return self.value().__neg__()

    def __abs__(self) -> Tensor:
        return self.value().__abs__()

    def __invert__(self) -> Tensor:
        return self.value().__invert__()

    def __getitem__(self, key: Any) -> Tensor:
        return self.value()[key]


def _convert_variable(value: Variable, dtype: Any = None, name: Any = None) -> Tensor:
    return value.value()


graph_module.register_tensor_conversion_function(Variable, _convert_variable)


# --- module-level functions ------------------------------------------------------------
def _as_variable(ref: Any, what: str) -> Variable:
    if not isinstance(ref, Variable):
        raise TypeError(f"{what} needs a tf.Variable as 'ref', got {type(ref).__name__}")
    return ref


def assign(
    ref: Variable,
    value: Any,
    validate_shape: bool | None = None,
    use_locking: bool | None = None,
    name: str | None = None,
) -> Tensor:
    """``ref.assign(value)``: returns the new value."""
    return _as_variable(ref, "assign").assign(value, use_locking, name)


def assign_add(
    ref: Variable, value: Any, use_locking: bool | None = None, name: str | None = None
) -> Tensor:
    """``ref.assign_add(value)``: returns the new value."""
    return _as_variable(ref, "assign_add").assign_add(value, use_locking, name)


def assign_sub(
    ref: Variable, value: Any, use_locking: bool | None = None, name: str | None = None
) -> Tensor:
    """``ref.assign_sub(value)``: returns the new value."""
    return _as_variable(ref, "assign_sub").assign_sub(value, use_locking, name)


def scatter_update(
    ref: Variable, indices: Any, updates: Any, use_locking: bool = True, name: str | None = None
) -> Tensor:
    """Sets ``ref[indices] = updates``; returns the new value."""
    return _as_variable(ref, "scatter_update").scatter_update(indices, updates, name)


def scatter_add(
    ref: Variable, indices: Any, updates: Any, use_locking: bool = False, name: str | None = None
) -> Tensor:
    """Adds ``updates`` into ``ref[indices]`` (repeated indices add up)."""
    return _as_variable(ref, "scatter_add").scatter_add(indices, updates, name)


def global_variables(scope: str | None = None) -> list[Variable]:
    return get_default_graph().get_collection(GLOBAL_VARIABLES, scope)


all_variables = global_variables


def trainable_variables(scope: str | None = None) -> list[Variable]:
    return get_default_graph().get_collection(TRAINABLE_VARIABLES, scope)


def local_variables(scope: str | None = None) -> list[Variable]:
    return get_default_graph().get_collection(LOCAL_VARIABLES, scope)


def model_variables(scope: str | None = None) -> list[Variable]:
    return get_default_graph().get_collection(MODEL_VARIABLES, scope)


def variables_initializer(var_list: list[Variable], name: str = "init") -> Operation:
    """One op running the initializers of ``var_list``."""
    from ..control.group import group

    return group(*[v.initializer for v in var_list], name=name)


def global_variables_initializer() -> Operation:
    return variables_initializer(global_variables())


initialize_all_variables = global_variables_initializer


def local_variables_initializer() -> Operation:
    return variables_initializer(local_variables(), name="init_1")


def is_variable_initialized(variable: Variable) -> Tensor:
    return variable.is_initialized()


def report_uninitialized_variables(
    var_list: list[Variable] | None = None, name: str = "report_uninitialized_variables"
) -> Tensor:
    """A string tensor with the names of the uninitialized variables of ``var_list``."""
    graph = get_default_graph()
    var_list = global_variables() + local_variables() if var_list is None else var_list
    with graph.name_scope(name):
        flags = [v.is_initialized() for v in var_list]
        names = [v.op.name for v in var_list]
        return apply_op("ReportUninitialized", flags, {"names": tuple(names)})


def _infer_report(op: Operation) -> list:
    return [(dtypes.string, TensorShape([None]))]


def _report_kernel(ctx: Any, attrs: dict) -> Any:
    names = attrs["names"]

    def report(*flags: Any) -> Any:
        return np.array([n.encode() for n, f in zip(names, flags) if not bool(f)], dtype=object)

    return report


registry.register(
    registry.OpDef(
        "ReportUninitialized",
        _infer_report,
        _report_kernel,
        registry.NOT_DIFFERENTIABLE,
        gpu_kernel=False,  # names as strings, from flags read on the host
    )
)
