"""The TF1 optimizers: gradient descent, momentum, Adagrad, RMSProp and Adam.

Each class declares its slots (``_create_slots``), turns its hyper-parameters into
tensors (``_prepare``) and emits one fused update op per variable
(``_resource_apply_dense``, see ``training_ops`` for the formulas), or its sparse form
for an ``IndexedSlices`` gradient (``_resource_apply_sparse``: only the gathered rows
of the variable and its slots change, except Adam's, whose moments decay everywhere
as in TF1; gradient descent scatters ``-lr * grad`` rows, repeats included). Names, defaults,
slot names and slot initial values follow TF1 exactly, so a checkpoint's variable
names (``w/Adam``, ``w/Adam_1``, ``beta1_power``) and the numbers match TensorFlow's.

Example::

    opt = tf.train.AdamOptimizer(0.01)
    train_op = opt.minimize(loss, global_step=tf.train.get_or_create_global_step())
    opt.get_slot(w, "m")            # the variable 'w/Adam'
"""

from __future__ import annotations

from typing import Any

from ...framework.graph import Operation, Tensor, get_default_graph
from ...ops.control import group as control
from ...ops.state.variables import Variable
from . import training_ops
from .optimizer import Optimizer


class GradientDescentOptimizer(Optimizer):
    """Plain gradient descent: ``var -= learning_rate * grad``.

    Args:
        learning_rate: a float, a scalar tensor, or a callable returning one.
        use_locking: accepted for TF1 compatibility.
        name: name scope of the update ops.
    """

    def __init__(
        self, learning_rate: Any, use_locking: bool = False, name: str = "GradientDescent"
    ):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._learning_rate_tensor: Tensor | None = None

    def _prepare(self) -> None:
        self._learning_rate_tensor = self._hyper(self._learning_rate, "learning_rate")

    def _resource_apply_dense(self, grad: Tensor, var: Variable) -> Operation:
        assert self._learning_rate_tensor is not None  # made by _prepare
        return training_ops.resource_apply_gradient_descent(
            var, self._cast(self._learning_rate_tensor, var), grad
        )

    def _resource_apply_sparse_duplicate_indices(
        self, grad: Tensor, var: Variable, indices: Tensor
    ) -> Operation:
        """TF1's: ``ResourceScatterAdd`` of ``-grad * lr``, repeated rows one by one."""
        assert self._learning_rate_tensor is not None  # made by _prepare
        return var.scatter_add(indices, -grad * self._cast(self._learning_rate_tensor, var)).op


class MomentumOptimizer(Optimizer):
    """Gradient descent with momentum (TF1's form: ``accum = momentum * accum + grad``,
    ``var -= learning_rate * accum``), optionally Nesterov's.

    Args:
        learning_rate: a float, a scalar tensor, or a callable returning one.
        momentum: a float, a scalar tensor, or a callable returning one.
        use_locking: accepted for TF1 compatibility.
        name: name scope of the update ops; slot ``momentum`` is ``<var>/<name>``.
        use_nesterov: use Nesterov momentum.
    """

    def __init__(
        self,
        learning_rate: Any,
        momentum: Any,
        use_locking: bool = False,
        name: str = "Momentum",
        use_nesterov: bool = False,
    ):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._momentum = momentum
        self._use_nesterov = use_nesterov

    def _create_slots(self, var_list: list[Variable]) -> None:
        for v in var_list:
            self._zeros_slot(v, "momentum", self._name)

    def _prepare(self) -> None:
        self._learning_rate_tensor = self._hyper(self._learning_rate, "learning_rate")
        self._momentum_tensor = self._hyper(self._momentum, "momentum")

    def _resource_apply_dense(self, grad: Tensor, var: Variable) -> Operation:
        return self._apply(grad, var, None)

    def _resource_apply_sparse(self, grad: Tensor, var: Variable, indices: Tensor) -> Operation:
        return self._apply(grad, var, indices)

    def _apply(self, grad: Tensor, var: Variable, indices: Tensor | None) -> Operation:
        return training_ops.resource_apply_momentum(
            var,
            self.get_slot(var, "momentum"),
            self._cast(self._learning_rate_tensor, var),
            grad,
            self._cast(self._momentum_tensor, var),
            use_nesterov=self._use_nesterov,
            indices=indices,
        )


class AdagradOptimizer(Optimizer):
    """Adagrad: per-coordinate steps scaled by the root of the summed squared gradients.

    Args:
        learning_rate: a float, a scalar tensor, or a callable returning one.
        initial_accumulator_value: starting value of the accumulators (positive).
        use_locking: accepted for TF1 compatibility.
        name: name scope of the update ops; slot ``accumulator`` is ``<var>/<name>``.

    Raises:
        ValueError: ``initial_accumulator_value`` is not positive.
    """

    def __init__(
        self,
        learning_rate: Any,
        initial_accumulator_value: float = 0.1,
        use_locking: bool = False,
        name: str = "Adagrad",
    ):
        if initial_accumulator_value <= 0.0:
            raise ValueError(
                f"initial_accumulator_value must be positive: {initial_accumulator_value}"
            )
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_accumulator_value = initial_accumulator_value

    def _create_slots(self, var_list: list[Variable]) -> None:
        for v in var_list:
            self._get_or_make_slot_with_initializer(
                v, self._initial_accumulator_value, v.shape, v.dtype, "accumulator", self._name
            )

    def _prepare(self) -> None:
        self._learning_rate_tensor = self._hyper(self._learning_rate, "learning_rate")

    def _resource_apply_dense(self, grad: Tensor, var: Variable) -> Operation:
        return self._apply(grad, var, None)

    def _resource_apply_sparse(self, grad: Tensor, var: Variable, indices: Tensor) -> Operation:
        return self._apply(grad, var, indices)

    def _apply(self, grad: Tensor, var: Variable, indices: Tensor | None) -> Operation:
        return training_ops.resource_apply_adagrad(
            var,
            self.get_slot(var, "accumulator"),
            self._cast(self._learning_rate_tensor, var),
            grad,
            indices=indices,
        )


class RMSPropOptimizer(Optimizer):
    """RMSProp with optional momentum and centering (Hinton's lecture 6e, as in TF1).

    The ``rms`` slot starts at ones (TF1's choice), ``momentum`` and ``mg`` at zeros.

    Args:
        learning_rate: a float, a scalar tensor, or a callable returning one.
        decay: discounting factor of the squared-gradient average.
        momentum: momentum of the steps.
        epsilon: added inside the square root.
        use_locking: accepted for TF1 compatibility.
        centered: normalize by the estimated variance of the gradient instead of its
            second moment (slot ``mg``).
        name: name scope of the update ops.
    """

    def __init__(
        self,
        learning_rate: Any,
        decay: Any = 0.9,
        momentum: Any = 0.0,
        epsilon: Any = 1e-10,
        use_locking: bool = False,
        centered: bool = False,
        name: str = "RMSProp",
    ):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._decay = decay
        self._momentum = momentum
        self._epsilon = epsilon
        self._centered = centered

    def _create_slots(self, var_list: list[Variable]) -> None:
        for v in var_list:
            self._get_or_make_slot_with_initializer(v, 1.0, v.shape, v.dtype, "rms", self._name)
            if self._centered:
                self._zeros_slot(v, "mg", self._name)
            self._zeros_slot(v, "momentum", self._name)

    def _prepare(self) -> None:
        self._learning_rate_tensor = self._hyper(self._learning_rate, "learning_rate")
        self._decay_tensor = self._hyper(self._decay, "decay")
        self._momentum_tensor = self._hyper(self._momentum, "momentum")
        self._epsilon_tensor = self._hyper(self._epsilon, "epsilon")

    def _resource_apply_dense(self, grad: Tensor, var: Variable) -> Operation:
        return self._apply(grad, var, None)

    def _resource_apply_sparse(self, grad: Tensor, var: Variable, indices: Tensor) -> Operation:
        return self._apply(grad, var, indices)

    def _apply(self, grad: Tensor, var: Variable, indices: Tensor | None) -> Operation:
        lr, decay, momentum, epsilon = (
            self._cast(t, var)
            for t in (
                self._learning_rate_tensor,
                self._decay_tensor,
                self._momentum_tensor,
                self._epsilon_tensor,
            )
        )
        rms, mom = self.get_slot(var, "rms"), self.get_slot(var, "momentum")
        if self._centered:
            return training_ops.resource_apply_centered_rms_prop(
                var,
                self.get_slot(var, "mg"),
                rms,
                mom,
                lr,
                decay,
                momentum,
                epsilon,
                grad,
                indices=indices,
            )
        return training_ops.resource_apply_rms_prop(
            var, rms, mom, lr, decay, momentum, epsilon, grad, indices=indices
        )


class AdamOptimizer(Optimizer):
    """Adam (Kingma and Ba, 2015) in TF1's form, bias correction folded into the step:
    ``lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t)``,
    ``var -= lr_t * m / (sqrt(v) + epsilon)``.

    ``beta1^t`` and ``beta2^t`` are the non-slot variables ``beta1_power`` and
    ``beta2_power`` (float32, colocated with the first variable by name), multiplied by
    ``beta1``/``beta2`` after each step's updates.

    Args:
        learning_rate: a float, a scalar tensor, or a callable returning one.
        beta1: decay of the first-moment estimates.
        beta2: decay of the second-moment estimates.
        epsilon: added to the denominator (TF1's "epsilon hat").
        use_locking: accepted for TF1 compatibility.
        name: name scope of the update ops; slots ``m``, ``v`` are ``<var>/<name>`` and
            ``<var>/<name>_1``.
    """

    def __init__(
        self,
        learning_rate: Any = 0.001,
        beta1: Any = 0.9,
        beta2: Any = 0.999,
        epsilon: Any = 1e-8,
        use_locking: bool = False,
        name: str = "Adam",
    ):
        super().__init__(use_locking, name)
        self._lr = learning_rate
        self._beta1 = beta1
        self._beta2 = beta2
        self._epsilon = epsilon

    def _get_beta_accumulators(self) -> tuple[Variable, Variable]:
        graph = get_default_graph()
        beta1_power = self._get_non_slot_variable("beta1_power", graph)
        beta2_power = self._get_non_slot_variable("beta2_power", graph)
        assert beta1_power is not None and beta2_power is not None  # made by _create_slots
        return beta1_power, beta2_power

    def _create_slots(self, var_list: list[Variable]) -> None:
        first_var = min(var_list, key=lambda x: x.name)
        self._create_non_slot_variable(
            self._call_if_callable(self._beta1), "beta1_power", first_var
        )
        self._create_non_slot_variable(
            self._call_if_callable(self._beta2), "beta2_power", first_var
        )
        for v in var_list:
            self._zeros_slot(v, "m", self._name)
            self._zeros_slot(v, "v", self._name)

    def _prepare(self) -> None:
        self._lr_t = self._hyper(self._lr, "learning_rate")
        self._beta1_t = self._hyper(self._beta1, "beta1")
        self._beta2_t = self._hyper(self._beta2, "beta2")
        self._epsilon_t = self._hyper(self._epsilon, "epsilon")
        self._powers_t: dict[Any, list[Tensor]] = {}

    def _powers(self, var: Variable) -> list[Tensor]:
        """``beta1_power``, ``beta2_power`` in ``var``'s dtype, read once per
        ``apply_gradients`` and dtype (TF1 reads them once per variable: same values,
        two kernel calls more per variable)."""
        powers = self._powers_t.get(var.dtype)
        if powers is None:
            powers = [self._cast(p.read_value(), var) for p in self._get_beta_accumulators()]
            self._powers_t[var.dtype] = powers
        return powers

    def _resource_apply_dense(self, grad: Tensor, var: Variable) -> Operation:
        return self._apply(grad, var, None)

    def _resource_apply_sparse(self, grad: Tensor, var: Variable, indices: Tensor) -> Operation:
        return self._apply(grad, var, indices)

    def _apply(self, grad: Tensor, var: Variable, indices: Tensor | None) -> Operation:
        beta1_power, beta2_power = self._powers(var)
        lr, beta1, beta2, epsilon = (
            self._cast(t, var) for t in (self._lr_t, self._beta1_t, self._beta2_t, self._epsilon_t)
        )
        return training_ops.resource_apply_adam(
            var,
            self.get_slot(var, "m"),
            self.get_slot(var, "v"),
            beta1_power,
            beta2_power,
            lr,
            beta1,
            beta2,
            epsilon,
            grad,
            indices=indices,
        )

    def _finish(self, update_ops: list[Operation], name_scope: str) -> Operation:
        graph = get_default_graph()
        beta1_power, beta2_power = self._get_beta_accumulators()
        with graph.control_dependencies(update_ops), graph.colocate_with(beta1_power.op):
            update_beta1 = beta1_power.assign(beta1_power * self._beta1_t)
            update_beta2 = beta2_power.assign(beta2_power * self._beta2_t)
        return control.group(*update_ops, update_beta1, update_beta2, name=name_scope)
