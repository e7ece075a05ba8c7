"""``BatchNormalization`` (TF1's ``tf.layers.batch_normalization``).

Weights ``gamma``, ``beta`` (trainable) and ``moving_mean``, ``moving_variance`` (not),
over the ``axis`` dimension. When ``training``, the output is normalized with the
batch's statistics and the moving ones are pulled towards them,
``moving -= (moving - batch) * (1 - momentum)``, by update ops placed in
``GraphKeys.UPDATE_OPS`` (run them with the train op, as TF1 programs do); otherwise the
moving statistics normalize. ``training`` may be a bool tensor: both paths are built and
the step picks one. As in TF1, a 4-D input normalized over its last axis takes the fused
path, whose moving variance is updated with the sample (``n / (n - 1)``) variance.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..framework.graph import Tensor
from ..framework.scopes import name_scope
from ..framework.tensor_shape import TensorShape
from ..ops import array as array_ops
from ..ops.cast import cast
from ..ops.constant import constant
from ..ops.nn.impl import batch_normalization as nn_batch_normalization
from ..ops.nn.impl import moments
from ..ops.state.initializers import ones_initializer, zeros_initializer
from ..ops.state.variables import assign_sub
from .base import Layer
from .core import smart_cond


class BatchNormalization(Layer):
    """See the module docstring."""

    def __init__(
        self,
        axis: int = -1,
        momentum: float = 0.99,
        epsilon: float = 1e-3,
        center: bool = True,
        scale: bool = True,
        beta_initializer: Any = None,
        gamma_initializer: Any = None,
        moving_mean_initializer: Any = None,
        moving_variance_initializer: Any = None,
        beta_regularizer: Callable | None = None,
        gamma_regularizer: Callable | None = None,
        beta_constraint: Callable | None = None,
        gamma_constraint: Callable | None = None,
        renorm: bool = False,
        fused: bool | None = None,
        trainable: bool = True,
        virtual_batch_size: int | None = None,
        name: str | None = None,
        **kwargs: Any,
    ):
        super().__init__(trainable, name, **kwargs)
        if renorm or virtual_batch_size is not None:
            raise ValueError("BatchNormalization: renorm and virtual_batch_size are not provided")
        self.axis, self.momentum, self.epsilon = axis, float(momentum), float(epsilon)
        self.center, self.scale, self.fused = center, scale, fused
        self.beta_initializer = beta_initializer or zeros_initializer()
        self.gamma_initializer = gamma_initializer or ones_initializer()
        self.moving_mean_initializer = moving_mean_initializer or zeros_initializer()
        self.moving_variance_initializer = moving_variance_initializer or ones_initializer()
        self.beta_regularizer, self.gamma_regularizer = beta_regularizer, gamma_regularizer
        self.beta_constraint, self.gamma_constraint = beta_constraint, gamma_constraint

    def build(self, input_shape: TensorShape) -> None:
        rank = input_shape.rank
        if rank is None:
            raise ValueError("Input has undefined rank: batch normalization needs it")
        if not -rank <= self.axis < rank:
            raise ValueError(
                f"Invalid axis: {self.axis} for batch normalization of an input of rank {rank} "
                f"(shape {input_shape})"
            )
        self._axis = self.axis % rank
        size = input_shape.as_list()[self._axis]
        if size is None:
            raise ValueError(
                f"Input has undefined `axis` dimension. Received input with shape {input_shape}"
            )
        if self.fused is None:
            self.fused = rank == 4 and self._axis == 3
        self._reduce = [i for i in range(rank) if i != self._axis]
        self._param_shape = [1 if i != self._axis else size for i in range(rank)]
        self.gamma = (
            self.add_weight(
                "gamma",
                [size],
                initializer=self.gamma_initializer,
                regularizer=self.gamma_regularizer,
                constraint=self.gamma_constraint,
            )
            if self.scale
            else None
        )
        self.beta = (
            self.add_weight(
                "beta",
                [size],
                initializer=self.beta_initializer,
                regularizer=self.beta_regularizer,
                constraint=self.beta_constraint,
            )
            if self.center
            else None
        )
        self.moving_mean = self.add_weight(
            "moving_mean", [size], initializer=self.moving_mean_initializer, trainable=False
        )
        self.moving_variance = self.add_weight(
            "moving_variance", [size], initializer=self.moving_variance_initializer, trainable=False
        )

    def _broadcast(self, v: Any) -> Any:
        if v is None or self._axis == len(self._param_shape) - 1:
            return v
        return array_ops.reshape(v, self._param_shape)

    def _normalize(self, inputs: Tensor, mean: Any, variance: Any) -> Tensor:
        return nn_batch_normalization(
            inputs,
            self._broadcast(mean),
            self._broadcast(variance),
            self._broadcast(self.beta),
            self._broadcast(self.gamma),
            self.epsilon,
        )

    def call(self, inputs: Tensor, training: Any = False) -> Tensor:
        mean, variance = moments(inputs, self._reduce)

        def with_batch_statistics() -> Tensor:
            return self._normalize(inputs, mean, variance)

        def with_moving_statistics() -> Tensor:
            return self._normalize(inputs, self.moving_mean, self.moving_variance)

        outputs = smart_cond(training, with_batch_statistics, with_moving_statistics)
        if not (isinstance(training, bool) and not training):
            self._add_moving_updates(inputs, mean, variance, training)
        return outputs

    def _add_moving_updates(
        self, inputs: Tensor, mean: Tensor, variance: Tensor, training: Any
    ) -> None:
        if self.fused:  # TF's fused kernel reports the sample variance for the update
            count = array_ops.size(inputs) // array_ops.shape(inputs)[self._axis]
            n = cast(count, variance.dtype)
            variance = variance * n / (n - 1.0)
        decay = smart_cond(
            training,
            lambda: constant(1.0 - self.momentum, dtype=mean.dtype),
            lambda: constant(0.0, dtype=mean.dtype),
        )
        for moving, batch in ((self.moving_mean, mean), (self.moving_variance, variance)):
            # TF1's names: the op `<layer>/AssignMovingAvg/AssignSubVariableOp` (`_1` for the
            # variance) is the update found in UPDATE_OPS.
            with name_scope("AssignMovingAvg"):
                self.add_update(assign_sub(moving, (moving - batch) * decay).op)


def batch_normalization(
    inputs: Any,
    axis: int = -1,
    momentum: float = 0.99,
    epsilon: float = 1e-3,
    center: bool = True,
    scale: bool = True,
    beta_initializer: Any = None,
    gamma_initializer: Any = None,
    moving_mean_initializer: Any = None,
    moving_variance_initializer: Any = None,
    beta_regularizer: Callable | None = None,
    gamma_regularizer: Callable | None = None,
    beta_constraint: Callable | None = None,
    gamma_constraint: Callable | None = None,
    training: Any = False,
    trainable: bool = True,
    name: str | None = None,
    reuse: bool | None = None,
    renorm: bool = False,
    renorm_clipping: Any = None,
    renorm_momentum: float = 0.99,
    fused: bool | None = None,
    virtual_batch_size: int | None = None,
    adjustment: Any = None,
) -> Tensor:
    """The functional form of ``BatchNormalization`` (``name`` is its variable scope)."""
    layer = BatchNormalization(
        axis,
        momentum,
        epsilon,
        center,
        scale,
        beta_initializer,
        gamma_initializer,
        moving_mean_initializer,
        moving_variance_initializer,
        beta_regularizer,
        gamma_regularizer,
        beta_constraint,
        gamma_constraint,
        renorm,
        fused,
        trainable,
        virtual_batch_size,
        name=name,
        _scope=name,
        _reuse=reuse,
    )
    return layer(inputs, training=training)
