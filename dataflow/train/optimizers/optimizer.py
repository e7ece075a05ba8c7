"""``tf.train.Optimizer``: the base class of the TF1 optimizers.

Training adds two things to the graph (TF1's design, kept as is):

1. ``compute_gradients(loss, var_list)``: gradient ops, built by the gradient pass,
   one gradient (or ``None``) per variable;
2. ``apply_gradients(grads_and_vars)``: per variable, ONE update op created inside
   ``colocate_with(var)`` (a fused ``ResourceApply*`` kernel from ``training_ops``), so
   on a cluster each update runs on the worker holding the variable, then a ``group``
   of them (the train op), followed by ``global_step += 1`` when a global step is
   given. ``minimize`` is the two in a row.

State an optimizer keeps:

* *slots*: one variable per (slot name, variable), e.g. Adam's ``m`` and ``v``. A slot
  is a non-trainable variable made by ``get_variable`` in
  ``variable_scope(None, default_name="<var>/<OptimizerName>")`` as TF1's
  ``slot_creator`` makes it: ``w/Adam``, ``w/Adam_1``, ... and ``vs/w/Adam`` when
  ``minimize`` is called inside ``variable_scope("vs")`` (a name scope alone does not
  change it), outside any control dependencies, colocated with its variable;
* *non-slot variables*: shared by all variables, per graph, e.g. Adam's
  ``beta1_power``: a ``Variable`` in the caller's name scope (``train/beta1_power``
  under ``name_scope("train")``), colocated with the first variable by name.

Hyper-parameters (learning rate, momentum, ...) become tensors in ``_prepare`` as in
TF1: Python numbers are float32 constants, cast to each variable's dtype at use. So a
float64 variable sees ``float64(float32(0.1))``, exactly as TensorFlow computes it.
Constant hyper-parameters are cast at build time (a constant of the variable's dtype,
created colocated with the variable) instead of through a ``Cast`` op each step.

Subclasses implement ``_create_slots``, ``_prepare``, ``_resource_apply_dense`` and,
when they update shared state after the per-variable updates, ``_finish``.

A gradient that is an ``IndexedSlices`` (a gather from the variable: an embedding) is
applied as TF1 applies it, touching only its rows: its repeated rows are summed
(``_resource_apply_sparse_duplicate_indices``), then ``_resource_apply_sparse`` emits
the sparse form of the update (``ResourceSparseApply*``, the gradient holding just
those rows), still colocated with the variable.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ..._util import nest
from ...autodiff.gradients import gradients
from ...framework import dtypes
from ...framework.graph import Graph, Operation, Tensor, convert_to_tensor, get_default_graph
from ...framework.indexed_slices import IndexedSlices, convert_to_tensor_or_indexed_slices
from ...framework.tensor_util import constant_value
from ...ops import array as array_ops
from ...ops.constant import constant
from ...ops.control import group as control
from ...ops.state.checkpoint.tf_bundle import SaveSliceInfo
from ...ops.state.scope import get_variable
from ...ops.state.scope_context import variable_scope
from ...ops.state.variables import GLOBAL_VARIABLES, GraphKeys, Variable

_VALID_DTYPES = (dtypes.float16, dtypes.float32, dtypes.float64)


@contextlib.contextmanager
def _init_scope(graph: Graph) -> Iterator[None]:
    """Where optimizer state is created: the caller's name and variable scopes, outside
    any control dependencies (TF1's ``init_scope`` in graph mode keeps the name scope)."""
    with graph.as_default(), graph.control_dependencies(None):
        yield


def _filled_initial_value(var: Variable, value: float = 0.0) -> Callable[[], Tensor]:
    """A callable building ``value`` broadcast to ``var``'s shape and dtype.

    A fully defined shape becomes a scalar constant broadcast at run time (the graph
    never embeds a full-size array); an unknown shape follows the variable's initial
    value (TF1's ``slot_creator`` does the same).
    """

    def make() -> Tensor:
        scalar = constant(value, dtype=var.dtype)
        if var.shape.is_fully_defined():
            return array_ops.broadcast_to(scalar, var.shape.as_list())
        zeros = array_ops.zeros_like(var.initial_value)
        return zeros if value == 0.0 else zeros + scalar

    return make


class Optimizer:
    """Base class for optimizers (TF1's ``tf.train.Optimizer``).

    Args:
        use_locking: accepted for TF1 compatibility; updates always run under the
            variable's lock here (uncontended, it costs nothing measurable).
        name: the name scope of the ops ``apply_gradients`` creates, and the suffix of
            slot variable names.

    Raises:
        ValueError: ``name`` is empty.
    """

    GATE_NONE = 0
    GATE_OP = 1
    GATE_GRAPH = 2

    def __init__(self, use_locking: bool, name: str):
        if not name:
            raise ValueError("Must specify the optimizer name")
        self._use_locking = use_locking
        self._name = name
        # slot name -> {variable: slot variable}
        self._slots: dict[str, dict[Variable, Variable]] = {}
        # (name, graph) -> variable
        self._non_slot_dict: dict[tuple[str, Graph], Variable] = {}

    def get_name(self) -> str:
        return self._name

    # --- the public API --------------------------------------------------------------------
    def minimize(
        self,
        loss: Any,
        global_step: Any = None,
        var_list: Any = None,
        gate_gradients: int = GATE_OP,
        aggregation_method: Any = None,
        colocate_gradients_with_ops: bool = False,
        name: str | None = None,
        grad_loss: Any = None,
    ) -> Operation:
        """Adds ops minimizing ``loss`` by updating ``var_list``.

        ``compute_gradients`` then ``apply_gradients``; call them separately to process
        the gradients in between (e.g. clipping).

        Args:
            loss: the scalar tensor to minimize (or a callable returning it).
            global_step: optional integer variable incremented after the updates.
            var_list: variables to update (default: ``trainable_variables()``).
            gate_gradients: ``GATE_NONE``, ``GATE_OP`` or ``GATE_GRAPH``.
            aggregation_method: accepted for TF1 compatibility.
            colocate_gradients_with_ops: place each gradient op with its forward op.
            name: name of the returned op.
            grad_loss: optional gradient of ``loss`` (default: ones).

        Returns:
            The op running the updates (and the global step increment).

        Raises:
            ValueError: no variable receives a gradient, or the loss is not float.
        """
        grads_and_vars = self.compute_gradients(
            loss,
            var_list=var_list,
            gate_gradients=gate_gradients,
            aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops,
            grad_loss=grad_loss,
        )
        vars_with_grad = [v for g, v in grads_and_vars if g is not None]
        if not vars_with_grad:
            raise ValueError(
                "No gradients provided for any variable, check your graph for ops that do "
                "not support gradients, between variables "
                f"{[str(v) for _, v in grads_and_vars]} and loss {loss}."
            )
        return self.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def compute_gradients(
        self,
        loss: Any,
        var_list: Any = None,
        gate_gradients: int = GATE_OP,
        aggregation_method: Any = None,
        colocate_gradients_with_ops: bool = False,
        grad_loss: Any = None,
    ) -> list[tuple[Any, Variable]]:
        """Gradients of ``loss`` for the variables in ``var_list``.

        Returns:
            A list of ``(gradient, variable)`` pairs; the gradient is ``None`` for a
            variable ``loss`` does not depend on, and an ``IndexedSlices`` for one it
            reaches only through gathers (an embedding), as in TF1.

        Raises:
            ValueError: ``gate_gradients`` is not one of the three, the loss (or
                ``grad_loss``) is not float, or there are no variables.
            NotImplementedError: ``var_list`` holds something other than variables.
        """
        if callable(loss) and not isinstance(loss, (Tensor, Variable)):
            loss = loss()
        if gate_gradients not in (Optimizer.GATE_NONE, Optimizer.GATE_OP, Optimizer.GATE_GRAPH):
            raise ValueError(
                "gate_gradients must be one of: Optimizer.GATE_NONE, "
                f"Optimizer.GATE_OP, Optimizer.GATE_GRAPH.  Not {gate_gradients}"
            )
        loss = convert_to_tensor(loss)
        self._assert_valid_dtypes([loss])
        if grad_loss is not None:
            grad_loss = convert_to_tensor(grad_loss)
            self._assert_valid_dtypes([grad_loss])
        if var_list is None:
            var_list = list(loss.graph.get_collection(GraphKeys.TRAINABLE_VARIABLES))
        else:
            var_list = nest.flatten(var_list)
        for v in var_list:
            if not isinstance(v, Variable):
                raise NotImplementedError(f"Trying to optimize unsupported type {v!r}")
        if not var_list:
            raise ValueError("No variables to optimize.")
        grads = gradients(
            loss,
            var_list,
            grad_ys=grad_loss,
            gate_gradients=gate_gradients == Optimizer.GATE_OP,
            aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops,
        )
        if gate_gradients == Optimizer.GATE_GRAPH:
            grads = control.tuple(grads)
        grads_and_vars = list(zip(grads, var_list, strict=True))
        self._assert_valid_dtypes([v for g, v in grads_and_vars if g is not None])
        return grads_and_vars

    def apply_gradients(
        self, grads_and_vars: Any, global_step: Any = None, name: str | None = None
    ) -> Operation:
        """Adds one update op per variable with a gradient, and returns their group.

        Args:
            grads_and_vars: ``(gradient, variable)`` pairs, as ``compute_gradients``
                returns them; pairs with a ``None`` gradient are skipped.
            global_step: optional integer variable incremented once the updates ran.
            name: name of the returned op (default: the optimizer's name).

        Returns:
            The train op.

        Raises:
            TypeError: a gradient is not convertible to a tensor.
            ValueError: the list is empty, or no pair has a gradient.
        """
        grads_and_vars = tuple(grads_and_vars)
        if not grads_and_vars:
            raise ValueError("No variables provided.")
        converted = []
        for g, v in grads_and_vars:
            if not isinstance(v, Variable):
                raise NotImplementedError(f"Trying to optimize unsupported type {v!r}")
            if g is not None:
                try:
                    g = convert_to_tensor_or_indexed_slices(g)
                except (TypeError, ValueError):
                    raise TypeError(
                        f"Gradient must be convertible to a Tensor or IndexedSlices, or None: {g}"
                    ) from None
            converted.append((g, v))
        var_list = [v for g, v in converted if g is not None]
        if not var_list:
            raise ValueError(
                f"No gradients provided for any variable: {[str(v) for _, v in converted]}."
            )
        graph = var_list[0].graph
        with _init_scope(graph):
            self._create_slots(var_list)
        update_ops = []
        with graph.as_default(), graph.name_scope(name or self._name) as scope:
            self._prepare()
            for grad, var in converted:
                if grad is None:
                    continue
                with graph.name_scope("update_" + var.op.name), graph.colocate_with(var.op):
                    if isinstance(grad, IndexedSlices):
                        update_ops.append(
                            self._resource_apply_sparse_duplicate_indices(
                                grad.values, var, grad.indices
                            )
                        )
                    else:
                        update_ops.append(self._resource_apply_dense(grad, var))
            if global_step is None:
                apply_updates = self._finish(update_ops, scope)
            else:
                with (
                    graph.control_dependencies([self._finish(update_ops, "update")]),
                    graph.colocate_with(global_step.op),
                ):
                    apply_updates = global_step.assign_add(
                        convert_to_tensor(1, dtype=global_step.dtype), name=scope
                    )
            if isinstance(apply_updates, Tensor):
                apply_updates = apply_updates.op
            train_op = graph.get_collection_ref(GraphKeys.TRAIN_OP)
            if apply_updates not in train_op:
                train_op.append(apply_updates)
            return apply_updates

    # --- slots ------------------------------------------------------------------------------
    def get_slot(self, var: Variable, name: str) -> Variable | None:
        """The slot ``name`` (e.g. ``'m'``) of ``var``, or ``None``."""
        named_slots = self._slots.get(name)
        if not named_slots:
            return None
        return named_slots.get(var)

    def get_slot_names(self) -> list[str]:
        """The names of the slots this optimizer creates, sorted."""
        return sorted(self._slots)

    def variables(self) -> list[Variable]:
        """The variables this optimizer created in the current graph, sorted by name."""
        graph = get_default_graph()
        found = [v for (_, g), v in self._non_slot_dict.items() if g is graph]
        for slots in self._slots.values():
            found.extend(s for s in slots.values() if s.graph is graph)
        return sorted(found, key=lambda v: v.name)

    def _slot_dict(self, slot_name: str) -> dict[Variable, Variable]:
        return self._slots.setdefault(slot_name, {})

    def _get_or_make_slot_with_initializer(
        self, var: Variable, initializer: Any, shape: Any, dtype: Any, slot_name: str, op_name: str
    ) -> Variable:
        """The slot of ``var`` made by ``initializer`` (made once), TF1's signature.

        ``initializer`` is a number (the slot's value everywhere) or a TF1 initializer
        called as ``initializer(shape, dtype=dtype)``.
        """
        slots = self._slot_dict(slot_name)
        if var not in slots:
            if callable(initializer):
                make = lambda: initializer(shape.as_list(), dtype=dtype)
            else:
                make = _filled_initial_value(var, float(initializer))
            slots[var] = _create_slot(var, make, op_name)
        return slots[var]

    def _zeros_slot(self, var: Variable, slot_name: str, op_name: str) -> Variable:
        return self._get_or_make_slot_with_initializer(
            var, 0.0, var.shape, var.dtype, slot_name, op_name
        )

    def _get_or_make_slot(self, var: Variable, val: Any, slot_name: str, op_name: str) -> Variable:
        """The slot of ``var`` initialized to the tensor or value ``val``."""
        slots = self._slot_dict(slot_name)
        if var not in slots:
            slots[var] = _create_slot(var, lambda: convert_to_tensor(val, dtype=var.dtype), op_name)
        return slots[var]

    # --- non-slot variables -----------------------------------------------------------------
    def _create_non_slot_variable(
        self, initial_value: Any, name: str, colocate_with: Variable
    ) -> Variable:
        graph = colocate_with.graph
        key = (name, graph)
        v = self._non_slot_dict.get(key)
        if v is None:
            with _init_scope(graph), graph.colocate_with(colocate_with.op, ignore_existing=True):
                v = Variable(initial_value, name=name, trainable=False)
            self._non_slot_dict[key] = v
        return v

    def _get_non_slot_variable(self, name: str, graph: Graph | None = None) -> Variable | None:
        return self._non_slot_dict.get((name, graph or get_default_graph()))

    # --- hooks for subclasses ----------------------------------------------------------------
    def _create_slots(self, var_list: list[Variable]) -> None:
        """Creates the slots (and non-slot variables) the updates need."""

    def _prepare(self) -> None:
        """Converts hyper-parameters to tensors (inside the apply name scope)."""

    def _resource_apply_dense(self, grad: Tensor, var: Variable) -> Operation:
        """The update op of one variable (called colocated with it).

        A TF1 subclass that only implements ``_apply_dense(grad, var)`` (written for
        reference variables, e.g. with ``tf.assign_sub``) gets that one.
        """
        if type(self)._apply_dense is not Optimizer._apply_dense:
            return self._apply_dense(grad, var)
        raise NotImplementedError(f"{type(self).__name__} does not implement _resource_apply_dense")

    def _apply_dense(self, grad: Tensor, var: Variable) -> Operation:
        """TF1's hook for reference variables; see ``_resource_apply_dense``."""
        raise NotImplementedError(f"{type(self).__name__} does not implement _apply_dense")

    def _resource_apply_sparse_duplicate_indices(
        self, grad: Tensor, var: Variable, indices: Tensor
    ) -> Operation:
        """The update of the rows ``indices`` of ``var`` by ``grad`` (an ``IndexedSlices``'
        values, rows may repeat): sums the repeats (TF1's ``_deduplicate_indexed_slices``:
        ``unique``, then ``unsorted_segment_sum`` in order of first occurrence) and calls
        ``_resource_apply_sparse``. Optimizers whose update is linear in the gradient
        apply the repeats directly instead (``GradientDescentOptimizer``)."""
        with get_default_graph().name_scope("deduplicate"):
            unique_indices, positions = array_ops.unique(indices)
            summed = array_ops.unsorted_segment_sum(
                grad, positions, array_ops.shape(unique_indices)[0]
            )
        return self._resource_apply_sparse(summed, var, unique_indices)

    def _resource_apply_sparse(self, grad: Tensor, var: Variable, indices: Tensor) -> Operation:
        """The update of the unique rows ``indices`` of ``var`` by ``grad`` (their rows).

        A TF1 subclass implementing only ``_apply_sparse(grad: IndexedSlices, var)`` gets
        that; one implementing neither gets the dense update of the densified gradient
        (TF1 would raise ``NotImplementedError``).
        """
        shape = var.shape.as_list() if var.shape.is_fully_defined() else array_ops.shape(var)
        slices = IndexedSlices(grad, indices, shape)
        if type(self)._apply_sparse is not Optimizer._apply_sparse:
            return self._apply_sparse(slices, var)
        return self._resource_apply_dense(convert_to_tensor(slices), var)

    def _apply_sparse(self, grad: IndexedSlices, var: Variable) -> Operation:
        """TF1's sparse hook for reference variables; see ``_resource_apply_sparse``."""
        raise NotImplementedError(f"{type(self).__name__} does not implement _apply_sparse")

    def _finish(self, update_ops: list[Operation], name_scope: str) -> Operation:
        """Groups the updates into one op named ``name_scope``."""
        return control.group(*update_ops, name=name_scope)

    # --- helpers -----------------------------------------------------------------------------
    def _call_if_callable(self, param: Any) -> Any:
        return param() if callable(param) else param

    def _hyper(self, value: Any, name: str) -> Tensor:
        """A hyper-parameter as a tensor, as TF1's ``_prepare`` makes it."""
        return convert_to_tensor(self._call_if_callable(value), name=name)

    def _cast(self, t: Tensor, var: Variable) -> Tensor:
        """``t`` in ``var``'s dtype: itself, a constant folded at build time, or a Cast."""
        if t.dtype == var.dtype:
            return t
        value = constant_value(t)
        if value is not None:
            return constant(
                np.asarray(value).astype(var.dtype.as_numpy_dtype),
                dtype=var.dtype,
                name=t.op.name.rsplit("/", 1)[-1],
            )
        from ...ops import math as math_ops

        return math_ops.cast(t, var.dtype)

    def _assert_valid_dtypes(self, tensors: list[Any]) -> None:
        for t in tensors:
            dtype = t.dtype
            if dtype not in _VALID_DTYPES:
                raise ValueError(
                    f"Invalid type {dtype!r} for {t.name}, expected: "
                    f"[{', '.join(repr(d) for d in _VALID_DTYPES)}]."
                )


def _create_slot(primary: Variable, initial_value: Callable[[], Tensor], op_name: str) -> Variable:
    """A slot variable of ``primary``: ``get_variable("")`` in the variable scope
    ``<primary>/<op_name>`` (uniquified, under the caller's variable scope, as TF1's
    ``slot_creator``), non-trainable, in ``GLOBAL_VARIABLES``, colocated with
    ``primary``."""
    graph = primary.graph
    with (
        _init_scope(graph),
        variable_scope(None, default_name=f"{primary.op.name}/{op_name}") as scope,
        graph.colocate_with(primary.op, ignore_existing=True),
    ):
        scope.set_partitioner(None)  # a slot is never partitioned itself (TF1 too)
        slot = get_variable(
            "",
            dtype=primary.dtype.base_dtype,
            initializer=initial_value,
            trainable=False,
            collections=[GLOBAL_VARIABLES],
            validate_shape=primary.shape.is_fully_defined(),
        )
    info = primary.save_slice_info
    if info is not None and tuple(slot.shape.as_list()) == tuple(info.var_shape):
        # The slot of a part of a partitioned variable is the same part of a partitioned
        # slot, as TF1's slot_creator records it: a checkpoint holds ``emb/Adam`` in
        # slices (``emb/part_0/Adam`` is no checkpoint key), so either library restores it.
        slot_name = slot.op.name[len(primary.op.name) + 1 :]
        slot.set_save_slice_info(
            SaveSliceInfo(
                f"{info.full_name}/{slot_name}", info.full_shape, info.var_offset, info.var_shape
            )
        )
    return slot
