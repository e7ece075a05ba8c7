"""The TF1 optimizers beyond the classic five: Adadelta, FTRL-Proximal, proximal
gradient descent and Adagrad, and Adagrad dual averaging. Same structure, names,
defaults and slot names as TF1's
(``w/Adadelta``, ``w/Adadelta_1``, ``w/Ftrl``, ``w/Ftrl_1``, ``w/ProximalAdagrad``), so
checkpoints and numbers match TensorFlow's; ``training_ops_extra`` has the formulas."""

from __future__ import annotations

from typing import Any

from ...framework import dtypes
from ...framework.graph import Operation, Tensor, get_default_graph
from ...ops import math as math_ops
from ...ops.control.group import identity
from ...ops.state.variables import Variable
from . import training_ops_extra as ops
from .optimizer import Optimizer


class AdadeltaOptimizer(Optimizer):
    """Adadelta (Zeiler, 2012): steps scaled by the ratio of running RMS of past updates
    to that of gradients; slots ``accum`` and ``accum_update`` (zeros)."""

    def __init__(
        self,
        learning_rate: Any = 0.001,
        rho: Any = 0.95,
        epsilon: Any = 1e-8,
        use_locking: bool = False,
        name: str = "Adadelta",
    ):
        super().__init__(use_locking, name)
        self._lr, self._rho, self._epsilon = learning_rate, rho, epsilon

    def _create_slots(self, var_list: list[Variable]) -> None:
        for v in var_list:
            self._zeros_slot(v, "accum", self._name)
            self._zeros_slot(v, "accum_update", self._name)

    def _prepare(self) -> None:
        self._lr_t = self._hyper(self._lr, "lr")
        self._rho_t = self._hyper(self._rho, "rho")
        self._epsilon_t = self._hyper(self._epsilon, "epsilon")

    def _resource_apply_dense(self, grad: Tensor, var: Variable) -> Operation:
        return self._apply(grad, var, None)

    def _resource_apply_sparse(self, grad: Tensor, var: Variable, indices: Tensor) -> Operation:
        return self._apply(grad, var, indices)

    def _apply(self, grad: Tensor, var: Variable, indices: Tensor | None) -> Operation:
        lr, rho, epsilon = (self._cast(t, var) for t in (self._lr_t, self._rho_t, self._epsilon_t))
        return ops.resource_apply_adadelta(
            var,
            self.get_slot(var, "accum"),
            self.get_slot(var, "accum_update"),
            lr,
            rho,
            epsilon,
            grad,
            indices=indices,
        )


def _non_negative(value: Any, what: str) -> None:
    if isinstance(value, (int, float)) and value < 0.0:
        raise ValueError(f"{what} {value} must be greater than or equal to zero")


class ProximalGradientDescentOptimizer(Optimizer):
    """Gradient descent followed by the proximal (soft-threshold) step of L1 and L2
    regularization: sparse weights without an explicit penalty in the loss."""

    def __init__(
        self,
        learning_rate: Any,
        l1_regularization_strength: Any = 0.0,
        l2_regularization_strength: Any = 0.0,
        use_locking: bool = False,
        name: str = "ProximalGradientDescent",
    ):
        super().__init__(use_locking, name)
        self._lr, self._l1, self._l2 = (
            learning_rate,
            l1_regularization_strength,
            l2_regularization_strength,
        )

    def _prepare(self) -> None:
        self._lr_t = self._hyper(self._lr, "learning_rate")
        self._l1_t = self._hyper(self._l1, "l1_regularization_strength")
        self._l2_t = self._hyper(self._l2, "l2_regularization_strength")

    def _resource_apply_dense(self, grad: Tensor, var: Variable) -> Operation:
        return self._apply(grad, var, None)

    def _resource_apply_sparse(self, grad: Tensor, var: Variable, indices: Tensor) -> Operation:
        return self._apply(grad, var, indices)

    def _apply(self, grad: Tensor, var: Variable, indices: Tensor | None) -> Operation:
        lr, l1, l2 = (self._cast(t, var) for t in (self._lr_t, self._l1_t, self._l2_t))
        return ops.resource_apply_proximal_gradient_descent(var, lr, l1, l2, grad, indices=indices)


class ProximalAdagradOptimizer(Optimizer):
    """Adagrad's step size with the proximal step of L1/L2 regularization; slot
    ``accumulator`` (``initial_accumulator_value``, positive)."""

    def __init__(
        self,
        learning_rate: Any,
        initial_accumulator_value: float = 0.1,
        l1_regularization_strength: Any = 0.0,
        l2_regularization_strength: Any = 0.0,
        use_locking: bool = False,
        name: str = "ProximalAdagrad",
    ):
        if initial_accumulator_value <= 0.0:
            raise ValueError(
                f"initial_accumulator_value must be positive: {initial_accumulator_value}"
            )
        super().__init__(use_locking, name)
        self._lr, self._l1, self._l2 = (
            learning_rate,
            l1_regularization_strength,
            l2_regularization_strength,
        )
        self._initial = initial_accumulator_value

    def _create_slots(self, var_list: list[Variable]) -> None:
        for v in var_list:
            self._get_or_make_slot_with_initializer(
                v, self._initial, v.shape, v.dtype, "accumulator", self._name
            )

    def _prepare(self) -> None:
        self._lr_t = self._hyper(self._lr, "learning_rate")
        self._l1_t = self._hyper(self._l1, "l1_regularization_strength")
        self._l2_t = self._hyper(self._l2, "l2_regularization_strength")

    def _resource_apply_dense(self, grad: Tensor, var: Variable) -> Operation:
        return self._apply(grad, var, None)

    def _resource_apply_sparse(self, grad: Tensor, var: Variable, indices: Tensor) -> Operation:
        return self._apply(grad, var, indices)

    def _apply(self, grad: Tensor, var: Variable, indices: Tensor | None) -> Operation:
        lr, l1, l2 = (self._cast(t, var) for t in (self._lr_t, self._l1_t, self._l2_t))
        accum = self.get_slot(var, "accumulator")
        return ops.resource_apply_proximal_adagrad(var, accum, lr, l1, l2, grad, indices=indices)


class FtrlOptimizer(Optimizer):
    """FTRL-Proximal (McMahan et al., 2013), TF1's form: slots ``accum``
    (``initial_accumulator_value``) and ``linear`` (zeros), with optional L2 shrinkage.

    Raises:
        ValueError: a negative ``initial_accumulator_value``, regularization strength
            or shrinkage, or a positive ``learning_rate_power``.
    """

    def __init__(
        self,
        learning_rate: Any,
        learning_rate_power: Any = -0.5,
        initial_accumulator_value: float = 0.1,
        l1_regularization_strength: Any = 0.0,
        l2_regularization_strength: Any = 0.0,
        use_locking: bool = False,
        name: str = "Ftrl",
        accum_name: str | None = None,
        linear_name: str | None = None,
        l2_shrinkage_regularization_strength: Any = 0.0,
        beta: Any = None,
    ):
        super().__init__(use_locking, name)
        if initial_accumulator_value < 0.0:
            raise ValueError(
                f"initial_accumulator_value {initial_accumulator_value} needs to be positive "
                "or zero"
            )
        if isinstance(learning_rate_power, (int, float)) and learning_rate_power > 0.0:
            raise ValueError(
                f"learning_rate_power {learning_rate_power} needs to be negative or zero"
            )
        _non_negative(l1_regularization_strength, "l1_regularization_strength")
        _non_negative(l2_regularization_strength, "l2_regularization_strength")
        _non_negative(l2_shrinkage_regularization_strength, "l2_shrinkage_regularization_strength")
        if beta is not None:
            raise ValueError("FtrlOptimizer: beta is not provided (TF 2's addition)")
        self._lr, self._lr_power = learning_rate, learning_rate_power
        self._initial = initial_accumulator_value
        self._l1, self._l2 = l1_regularization_strength, l2_regularization_strength
        self._shrinkage = l2_shrinkage_regularization_strength
        self._accum_name, self._linear_name = accum_name, linear_name

    def _create_slots(self, var_list: list[Variable]) -> None:
        for v in var_list:
            self._get_or_make_slot_with_initializer(
                v, self._initial, v.shape, v.dtype, "accum", self._accum_name or self._name
            )
            self._zeros_slot(v, "linear", self._linear_name or self._name)

    def _prepare(self) -> None:
        self._lr_t = self._hyper(self._lr, "learning_rate")
        self._lr_power_t = self._hyper(self._lr_power, "learning_rate_power")
        self._l1_t = self._hyper(self._l1, "l1_regularization_strength")
        self._l2_t = self._hyper(self._l2, "l2_regularization_strength")
        self._shrinkage_t = self._hyper(self._shrinkage, "l2_shrinkage_regularization_strength")

    def _resource_apply_dense(self, grad: Tensor, var: Variable) -> Operation:
        return self._apply(grad, var, None)

    def _resource_apply_sparse(self, grad: Tensor, var: Variable, indices: Tensor) -> Operation:
        return self._apply(grad, var, indices)

    def _apply(self, grad: Tensor, var: Variable, indices: Tensor | None) -> Operation:
        lr, l1, l2, shrinkage, power = (
            self._cast(t, var)
            for t in (self._lr_t, self._l1_t, self._l2_t, self._shrinkage_t, self._lr_power_t)
        )
        return ops.resource_apply_ftrl(
            var,
            self.get_slot(var, "accum"),
            self.get_slot(var, "linear"),
            grad,
            lr,
            l1,
            l2,
            shrinkage,
            power,
            name=self._update_name(indices is not None),
            indices=indices,
        )

    def _update_name(self, sparse: bool) -> str:
        """TF1's name: without shrinkage TF1 runs ``ResourceApplyFtrl`` (the same update
        as its ``V2`` with zero shrinkage, which is the op here)."""
        name = "ResourceSparseApplyFtrl" if sparse else "ResourceApplyFtrl"
        no_shrinkage = isinstance(self._shrinkage, (int, float)) and self._shrinkage <= 0.0
        return name if no_shrinkage else name + "V2"


class AdagradDAOptimizer(Optimizer):
    """Adagrad dual averaging (Duchi et al., 2011), TF1's form: each step sets the
    variable from the sums of all its gradients so far (slot ``gradient_accumulator``,
    zeros) and of their squares (``gradient_squared_accumulator``, starting at
    ``initial_gradient_squared_accumulator_value``), with L1/L2 regularization scaled by
    the step count: the value of ``global_step`` plus one when the update runs. Meant
    for sparse linear models, where L1 makes exact zeros.

    Raises:
        ValueError: a non-positive ``initial_gradient_squared_accumulator_value``.
    """

    def __init__(
        self,
        learning_rate: Any,
        global_step: Any,
        initial_gradient_squared_accumulator_value: float = 0.1,
        l1_regularization_strength: Any = 0.0,
        l2_regularization_strength: Any = 0.0,
        use_locking: bool = False,
        name: str = "AdagradDA",
    ):
        if initial_gradient_squared_accumulator_value <= 0.0:
            raise ValueError(
                "initial_gradient_squared_accumulator_value must be positive: "
                f"{initial_gradient_squared_accumulator_value}"
            )
        super().__init__(use_locking, name)
        self._lr, self._global_step = learning_rate, global_step
        self._l1, self._l2 = l1_regularization_strength, l2_regularization_strength
        self._initial = initial_gradient_squared_accumulator_value
        self._step_on_worker: Tensor | None = None

    def _create_slots(self, var_list: list[Variable]) -> None:
        for v in var_list:
            self._zeros_slot(v, "gradient_accumulator", self._name)
            self._get_or_make_slot_with_initializer(
                v, self._initial, v.shape, v.dtype, "gradient_squared_accumulator", self._name
            )
        # The step the update counts (global_step + 1: the step being taken), read once
        # per apply beside the global step.
        with get_default_graph().colocate_with(self._global_step):
            step = math_ops.cast(identity(self._global_step), dtypes.int64)
            self._step_on_worker = step + 1

    def _prepare(self) -> None:
        self._lr_t = self._hyper(self._lr, "learning_rate")
        self._l1_t = self._hyper(self._l1, "l1_regularization_strength")
        self._l2_t = self._hyper(self._l2, "l2_regularization_strength")

    def _resource_apply_dense(self, grad: Tensor, var: Variable) -> Operation:
        return self._apply(grad, var, None)

    def _resource_apply_sparse(self, grad: Tensor, var: Variable, indices: Tensor) -> Operation:
        return self._apply(grad, var, indices)

    def _apply(self, grad: Tensor, var: Variable, indices: Tensor | None) -> Operation:
        lr, l1, l2 = (self._cast(t, var) for t in (self._lr_t, self._l1_t, self._l2_t))
        accum = self.get_slot(var, "gradient_accumulator")
        squared = self.get_slot(var, "gradient_squared_accumulator")
        assert self._step_on_worker is not None  # made by _create_slots
        return ops.resource_apply_adagrad_da(
            var, accum, squared, grad, lr, l1, l2, self._step_on_worker, indices=indices
        )
