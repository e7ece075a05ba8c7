"""``tf.contrib.layers.optimize_loss``: one call from a loss to a training op, as TF
1.15's ``contrib/layers/python/layers/optimizers.py`` builds it.

In a variable scope ``OptimizeLoss``: run ``update_ops`` (default: the ``UPDATE_OPS``
collection) before the loss; make the learning rate (a float becomes the non-trainable
variable ``OptimizeLoss/learning_rate``) and decay it with ``learning_rate_decay_fn``;
make the optimizer (a name, a class, an instance, or a function of the learning rate);
compute the gradients, add noise, multiply, clip (a float: by global norm; a function:
applied to the gradient list); write the requested summaries; apply the gradients,
incrementing ``global_step``. The result is the loss, computed before the update and
fetched after it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ... import train
from ...framework.graph import Tensor, convert_to_tensor, get_default_graph
from ...framework.indexed_slices import IndexedSlices
from ...ops.array import shape as shape_of
from ...ops.control.group import with_dependencies
from ...ops.math import cast
from ...ops.math.clip import clip_by_global_norm, global_norm
from ...ops.random.random_ops import truncated_normal
from ...ops.state.initializers import constant_initializer
from ...ops.state.scope import get_variable
from ...ops.state.scope_context import variable_scope
from ...ops.state.variables import GraphKeys, trainable_variables
from ...ops.summary.summary_ops import histogram, scalar
from ...train.training_util import assert_global_step, get_global_step

OPTIMIZER_CLS_NAMES: dict[str, Callable] = {
    "Adagrad": train.AdagradOptimizer,
    "Adam": train.AdamOptimizer,
    "Ftrl": train.FtrlOptimizer,
    "Momentum": lambda learning_rate: train.MomentumOptimizer(learning_rate, momentum=0.9),
    "RMSProp": train.RMSPropOptimizer,
    "SGD": train.GradientDescentOptimizer,
}
OPTIMIZER_SUMMARIES = [
    "learning_rate",
    "loss",
    "gradients",
    "gradient_norm",
    "global_gradient_norm",
]


def _learning_rate(learning_rate: Any) -> Any:
    if learning_rate is None:
        return None
    if isinstance(learning_rate, Tensor) and learning_rate.shape.rank == 0:
        return learning_rate
    if isinstance(learning_rate, (int, float)) and not isinstance(learning_rate, bool):
        if learning_rate < 0.0:
            raise ValueError(f"Invalid learning_rate {learning_rate}.")
        return get_variable(
            "learning_rate", [], trainable=False, initializer=constant_initializer(learning_rate)
        )
    raise ValueError(
        f"Learning rate should be 0d Tensor or float. Got {learning_rate} of type "
        f"{type(learning_rate)}"
    )


def _optimizer(optimizer: Any, lr: Any, learning_rate: Any) -> train.Optimizer:
    if isinstance(optimizer, str):
        if lr is None:
            raise ValueError(
                "Learning rate is None, but should be specified if optimizer is string "
                f"({optimizer})."
            )
        if optimizer not in OPTIMIZER_CLS_NAMES:
            raise ValueError(
                f"Optimizer name should be one of [{', '.join(OPTIMIZER_CLS_NAMES)}], you "
                f"provided {optimizer}."
            )
        return OPTIMIZER_CLS_NAMES[optimizer](learning_rate=lr)
    if isinstance(optimizer, type) and issubclass(optimizer, train.Optimizer):
        if lr is None:
            raise ValueError(
                "Learning rate is None, but should be specified if optimizer is class "
                f"({optimizer})."
            )
        optimizer_class: Any = optimizer  # a subclass, whose constructor takes the rate
        return optimizer_class(learning_rate=lr)
    if isinstance(optimizer, train.Optimizer):
        return optimizer
    if callable(optimizer):
        opt = optimizer(lr) if learning_rate is not None else optimizer()
        if not isinstance(opt, train.Optimizer):
            raise ValueError(
                f"Unrecognized optimizer: function should return subclass of Optimizer. Got {opt}."
            )
        return opt
    raise ValueError(
        "Unrecognized optimizer: should be string, subclass of Optimizer, instance of "
        f"subclass of Optimizer or function with one argument. Got {optimizer}."
    )


def _values(grad: Any) -> Any:
    return grad.values if isinstance(grad, IndexedSlices) else grad


def _scale(grad: Any, factor: Any) -> Any:
    if isinstance(grad, IndexedSlices):
        return IndexedSlices(grad.values * factor, grad.indices, grad.dense_shape)
    return grad * factor


def optimize_loss(
    loss: Any,
    global_step: Any,
    learning_rate: Any,
    optimizer: Any,
    gradient_noise_scale: float | None = None,
    gradient_multipliers: dict | None = None,
    clip_gradients: Any = None,
    learning_rate_decay_fn: Callable | None = None,
    update_ops: Any = None,
    variables: list | None = None,
    name: str | None = None,
    summaries: list | None = None,
    colocate_gradients_with_ops: bool = False,
    increment_global_step: bool = True,
) -> Tensor:
    """A training op for ``loss``: fetching it runs one step and gives the loss.

    Args:
        loss: a scalar tensor.
        global_step: the step variable (None: ``tf.train.get_global_step()``).
        learning_rate: a float or a scalar tensor (None only with an optimizer
            instance or a function of no arguments).
        optimizer: ``"SGD"``, ``"Adam"``, ``"Adagrad"``, ``"Momentum"`` (0.9),
            ``"RMSProp"``, ``"Ftrl"``; an ``Optimizer`` subclass or instance; or a
            function of the learning rate returning one.
        gradient_noise_scale: adds truncated-normal noise of this scale to each gradient.
        gradient_multipliers: ``{variable or its name: factor}``.
        clip_gradients: a float (clip by global norm) or a function of the
            ``(gradient, variable)`` list.
        learning_rate_decay_fn: ``fn(learning_rate, global_step)``.
        update_ops: ops to run before computing the loss (default ``UPDATE_OPS``).
        variables: what to train (default the trainable variables).
        name: the variable scope (default ``OptimizeLoss``).
        summaries: any of ``OPTIMIZER_SUMMARIES`` (default ``loss``,
            ``learning_rate``, ``global_gradient_norm``).
        colocate_gradients_with_ops: passed to ``compute_gradients``.
        increment_global_step: increment ``global_step`` with each update.

    Raises:
        ValueError: a bad learning rate, optimizer, summary name or ``clip_gradients``,
            a decay function without a global step, or no gradients.
    """
    loss = convert_to_tensor(loss)
    if loss.shape.rank not in (None, 0):
        raise ValueError(f"optimize_loss: loss must be a scalar, got shape {loss.shape}")
    if global_step is None:
        global_step = get_global_step()
    else:
        assert_global_step(global_step)
    with variable_scope(name, "OptimizeLoss", [loss, global_step]):
        if update_ops is None:
            update_ops = get_default_graph().get_collection(GraphKeys.UPDATE_OPS)
        if update_ops:
            loss = with_dependencies(list(update_ops), loss)
        lr = _learning_rate(learning_rate)
        if summaries is None:
            summaries = ["loss", "learning_rate", "global_gradient_norm"]
        for s in summaries:
            if s not in OPTIMIZER_SUMMARIES:
                raise ValueError(
                    f"Summaries should be one of [{', '.join(OPTIMIZER_SUMMARIES)}], you "
                    f"provided {s}."
                )
        if learning_rate is not None and learning_rate_decay_fn is not None:
            if global_step is None:
                raise ValueError("global_step is required for learning_rate_decay_fn.")
            lr = learning_rate_decay_fn(lr, global_step)
        if lr is not None and "learning_rate" in summaries:
            scalar("learning_rate", lr)
        opt = _optimizer(optimizer, lr, learning_rate)
        if variables is None:
            variables = trainable_variables()
        gradients = opt.compute_gradients(
            loss, variables, colocate_gradients_with_ops=colocate_gradients_with_ops
        )
        if gradient_noise_scale is not None:
            gradients = [
                (g if g is None else _scale_noise(g, gradient_noise_scale), v) for g, v in gradients
            ]
        if gradient_multipliers is not None:
            gradients = _multiply(gradients, gradient_multipliers)
        if not any(g is not None for g, _ in gradients):
            raise ValueError(
                "Empty list of (gradient, var) pairs encountered. This is most likely to be "
                "caused by an improper value of gradient_multipliers."
            )
        norm_summaries = "global_gradient_norm" in summaries or "gradient_norm" in summaries
        if norm_summaries:
            scalar("global_norm/gradient_norm", global_norm([g for g, _ in gradients]))
        if isinstance(clip_gradients, (int, float)) and not isinstance(clip_gradients, bool):
            grads, variables_ = zip(*gradients)
            clipped, _ = clip_by_global_norm(list(grads), clip_gradients)
            gradients = list(zip(clipped, variables_))
        elif callable(clip_gradients):
            gradients = clip_gradients(gradients)
        elif clip_gradients is not None:
            raise ValueError(f"Unknown type {type(clip_gradients)} for clip_gradients")
        if "loss" in summaries:
            scalar("loss", loss)
        for grad, var in gradients:
            if grad is None:
                continue
            var_name = var.name.replace(":", "_")
            if "gradients" in summaries:
                histogram(f"gradients/{var_name}", _values(grad))
            if "gradient_norm" in summaries:
                scalar(f"gradient_norm/{var_name}", global_norm([_values(grad)]))
        if clip_gradients is not None and norm_summaries:
            scalar("global_norm/clipped_gradient_norm", global_norm([g for g, _ in gradients]))
        update = opt.apply_gradients(
            gradients, global_step=global_step if increment_global_step else None, name="train"
        )
        return with_dependencies([update], loss)


def _scale_noise(grad: Any, scale: float) -> Any:
    values = _values(grad)
    noise = truncated_normal(shape_of(values)) * scale
    if isinstance(grad, IndexedSlices):
        return IndexedSlices(values + noise, grad.indices, grad.dense_shape)
    return grad + noise


def _multiply(gradients: list, multipliers: dict) -> list:
    out = []
    for grad, var in gradients:
        key = var if var in multipliers else var.op.name if var.op.name in multipliers else None
        if grad is not None and key is not None:
            grad = _scale(grad, cast(multipliers[key], _values(grad).dtype))
        out.append((grad, var))
    return out
