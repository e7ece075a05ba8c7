"""``tf.train.ExponentialMovingAverage`` and the update it builds,
``assign_moving_average``, as TF1 names and computes them.

``apply(var_list)`` gives each variable (or float tensor) a shadow variable, created
once, the way TF1's ``slot_creator`` makes a slot: ``get_variable("")`` in the variable
scope ``<var>/<ema name>`` opened with ``default_name`` (so ``w/ExponentialMovingAverage``,
under the caller's variable scope), non-trainable, colocated with a variable. A
variable's shadow starts at the variable's value (its initial value when it is not
initialized yet); a tensor's at zeros. Each ``apply`` returns one ``group`` (named by
the name scope ``<ema name>``) of ``shadow -= (shadow - value) * (1 - decay)``, with
``decay = min(decay, (1 + n) / (10 + n))`` when ``num_updates`` ``n`` is given.

With ``zero_debias`` a tensor's shadow is corrected for its zero start (Adam's
rule): a ``biased`` average and a ``local_step`` count kept beside it, and the shadow
set to ``biased / (1 - decay ** local_step)``.

``variables_to_restore`` maps checkpoint names to variables so that a ``Saver`` loads
each variable from its shadow's entry: how evaluation uses the averaged weights.
"""

from __future__ import annotations

import contextlib
from typing import Any

from ..framework import dtypes
from ..framework.graph import Tensor, convert_to_tensor, get_default_graph
from ..framework.scopes import name_scope
from ..ops import math as math_ops
from ..ops.control.cond import cond
from ..ops.control.group import group
from ..ops.state.initializers import zeros_initializer
from ..ops.state.scope import get_variable, get_variable_scope
from ..ops.state.scope_context import variable_scope
from ..ops.state.variables import GraphKeys, Variable, is_variable_initialized

_FLOAT_TYPES = (dtypes.float16, dtypes.float32, dtypes.float64)


def assign_moving_average(
    variable: Variable, value: Any, decay: Any, zero_debias: bool = True, name: str | None = None
) -> Tensor:
    """``variable -= (variable - value) * (1 - decay)``; returns the new value.

    With ``zero_debias`` the update goes through a ``biased`` average and a
    ``local_step`` count created beside ``variable`` (for averages started at zero).
    """
    with name_scope(name, "AssignMovingAvg") as scope:
        one_minus_decay = convert_to_tensor(1.0 - convert_to_tensor(decay), name="decay")
        if one_minus_decay.dtype != variable.dtype.base_dtype:
            one_minus_decay = math_ops.cast(one_minus_decay, variable.dtype.base_dtype)
        value = convert_to_tensor(value)
        if zero_debias:
            return _zero_debias(variable, value, one_minus_decay)
        return variable.assign_sub((variable - value) * one_minus_decay, name=scope)


def _zero_debias(unbiased: Variable, value: Tensor, one_minus_decay: Tensor) -> Tensor:
    graph = get_default_graph()
    with variable_scope(unbiased.name[: -len(":0")]):
        with graph.control_dependencies(None), graph.colocate_with(unbiased.op):
            biased = get_variable(
                _unique_in_scope("biased"),
                shape=unbiased.shape,
                dtype=unbiased.dtype.base_dtype,
                initializer=zeros_initializer(),
                trainable=False,
            )
            local_step = get_variable(
                _unique_in_scope("local_step"),
                shape=[],
                dtype=unbiased.dtype.base_dtype,
                initializer=zeros_initializer(),
                trainable=False,
            )
    update_biased = biased.assign_sub((biased - value) * one_minus_decay)
    update_local_step = local_step.assign_add(1)
    bias_factor = 1 - math_ops.pow(1.0 - one_minus_decay, update_local_step)
    return unbiased.assign(update_biased / bias_factor, name=graph.get_name_scope() + "/")


def _unique_in_scope(name: str) -> str:
    """``name``, or ``name_N`` when the current variable scope already has one."""
    scope = get_variable_scope()
    if scope.reuse:
        return name
    taken = {v.op.name for v in get_default_graph().get_collection(GraphKeys.GLOBAL_VARIABLES)}
    full = f"{scope.name}/{name}"
    if full not in taken:
        return name
    idx = 1
    while f"{full}_{idx}" in taken:
        idx += 1
    return f"{name}_{idx}"


class ExponentialMovingAverage:
    """Maintains moving averages of variables (and tensors) in shadow variables.

    Args:
        decay: the decay, a float (typically close to 1: 0.999, 0.9999).
        num_updates: optional count of updates (usually the global step); the decay
            used is then ``min(decay, (1 + num_updates) / (10 + num_updates))``.
        zero_debias: debias the averages of tensors (which start at zero).
        name: the name scope of the update ops and the suffix of shadow names.

    Example::

        ema = tf.train.ExponentialMovingAverage(decay=0.999)
        with tf.control_dependencies([train_step]):
            train_op = ema.apply(tf.trainable_variables())
        ...
        saver = tf.train.Saver(ema.variables_to_restore())  # evaluate with averages
    """

    def __init__(
        self,
        decay: Any,
        num_updates: Any = None,
        zero_debias: bool = False,
        name: str = "ExponentialMovingAverage",
    ) -> None:
        self._decay = decay
        self._num_updates = num_updates
        self._zero_debias = zero_debias
        self._name = name
        self._averages: dict[Any, Variable] = {}

    @property
    def name(self) -> str:
        """The name of this moving average (its ops' scope, its shadows' suffix)."""
        return self._name

    def apply(self, var_list: Any = None) -> Any:
        """Creates the shadow variables of ``var_list`` (default: the trainable
        variables) that do not exist yet, and returns the op updating all of them.

        Raises:
            TypeError: an element is not half, float or double.
        """
        graph = get_default_graph()
        if var_list is None:
            var_list = graph.get_collection(GraphKeys.TRAINABLE_VARIABLES)
        var_list = list(var_list)
        debiased = set()
        for var in var_list:
            if var.dtype.base_dtype not in _FLOAT_TYPES:
                raise TypeError(f"The variables must be half, float, or double: {var.name}")
            if var in self._averages:
                continue
            with graph.control_dependencies(None):
                if isinstance(var, Variable):
                    avg = self._shadow_of_variable(var)
                    graph.add_to_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, var)
                else:
                    avg = self._shadow_of_tensor(convert_to_tensor(var))
                    if self._zero_debias:
                        debiased.add(avg)
            self._averages[var] = avg
        with name_scope(self._name) as scope:
            decay = convert_to_tensor(self._decay, dtype=dtypes.float32, name="decay")
            if self._num_updates is not None:
                n = math_ops.cast(self._num_updates, dtypes.float32, name="num_updates")
                decay = math_ops.minimum(decay, (1.0 + n) / (10.0 + n))
            updates = [
                assign_moving_average(
                    self._averages[var], var, decay, self._averages[var] in debiased
                )
                for var in var_list
            ]
            return group(*updates, name=scope)

    def _shadow_of_variable(self, var: Variable) -> Variable:
        graph = var.graph
        with graph.colocate_with(var.op, ignore_existing=True):
            initial = cond(is_variable_initialized(var), var.read_value, lambda: var.initial_value)
        return self._slot(var.op.name, var.op, initial, None, var.dtype.base_dtype)

    def _shadow_of_tensor(self, tensor: Tensor) -> Variable:
        shape = tensor.shape
        if not shape.is_fully_defined():
            raise ValueError(
                f"ExponentialMovingAverage: the shape of {tensor.name} must be known to "
                f"average it, got {shape}"
            )
        # A tensor's shadow sits with it only when it is a variable's handle (TF1).
        colocate = tensor.op if tensor.op.type == "VarHandleOp" else None
        return self._slot(tensor.op.name, colocate, zeros_initializer(), shape, tensor.dtype)

    def _slot(
        self, prefix: str, colocate: Any, initializer: Any, shape: Any, dtype: Any
    ) -> Variable:
        graph = get_default_graph()
        with variable_scope(None, default_name=f"{prefix}/{self._name}"):
            colocation = (
                graph.colocate_with(colocate, ignore_existing=True)
                if colocate is not None
                else contextlib.nullcontext()
            )
            with colocation:
                return get_variable(
                    "", shape=shape, dtype=dtype, initializer=initializer, trainable=False
                )

    def average(self, var: Any) -> Variable | None:
        """The shadow variable of ``var``, or None if ``apply`` has not seen it."""
        return self._averages.get(var)

    def average_name(self, var: Any) -> str:
        """The name of ``var``'s shadow variable: the one ``apply`` made, or the one it
        would make (for ``Saver`` maps built before, or without, ``apply``)."""
        if var in self._averages:
            return self._averages[var].name[: -len(":0")]
        return get_default_graph().unique_name(
            f"{var.name[: -len(':0')]}/{self._name}", mark_as_used=False
        )

    def variables_to_restore(self, moving_avg_variables: Any = None) -> dict[str, Any]:
        """A ``{checkpoint name: variable}`` map restoring each averaged variable from
        its shadow's entry and every other global variable from its own.

        Args:
            moving_avg_variables: the variables to restore from their averages
                (default: the trainable variables and ``moving_average_variables()``).
        """
        graph = get_default_graph()
        if moving_avg_variables is None:
            moving_avg_variables = graph.get_collection(
                GraphKeys.TRAINABLE_VARIABLES
            ) + graph.get_collection(GraphKeys.MOVING_AVERAGE_VARIABLES)
        averaged = list(dict.fromkeys(moving_avg_variables))
        name_map = {self.average_name(v): v for v in averaged}
        averaged_names = {v.name for v in averaged}
        for v in graph.get_collection(GraphKeys.GLOBAL_VARIABLES):
            if v.name not in averaged_names and v.op.name not in name_map:
                name_map[v.op.name] = v
        return name_map
