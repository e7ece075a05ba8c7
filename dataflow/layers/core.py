"""``Dense``, ``Flatten`` and ``Dropout`` (TF1's ``tf.layers`` core layers)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..framework import dtypes
from ..framework.graph import Tensor, convert_to_tensor
from ..framework.tensor_shape import TensorShape
from ..framework.tensor_util import constant_value
from ..ops import array as array_ops
from ..ops.control.cond import cond
from ..ops.control.group import identity
from ..ops.linalg.contraction import tensordot
from ..ops.linalg.products import matmul
from ..ops.nn.impl import bias_add
from ..ops.nn.impl import dropout as nn_dropout
from ..ops.state.initializers import glorot_uniform_initializer, zeros_initializer
from .base import Layer, channels_dim


def smart_cond(pred: Any, true_fn: Callable[[], Any], false_fn: Callable[[], Any]) -> Any:
    """``true_fn()`` or ``false_fn()`` when ``pred`` is known while building (a Python
    bool or a constant), else a ``cond`` chosen at each step (``training=`` tensors)."""
    if isinstance(pred, bool):
        return true_fn() if pred else false_fn()
    pred = convert_to_tensor(pred, dtype=dtypes.bool)
    known = constant_value(pred)
    if known is not None:
        return true_fn() if bool(known) else false_fn()
    return cond(pred, true_fn, false_fn)


class Dense(Layer):
    """``outputs = activation(inputs @ kernel + bias)``, over the last dimension."""

    def __init__(
        self,
        units: int,
        activation: Callable | None = None,
        use_bias: bool = True,
        kernel_initializer: Any = None,
        bias_initializer: Any = None,
        kernel_regularizer: Callable | None = None,
        bias_regularizer: Callable | None = None,
        activity_regularizer: Callable | None = None,
        kernel_constraint: Callable | None = None,
        bias_constraint: Callable | None = None,
        trainable: bool = True,
        name: str | None = None,
        **kwargs: Any,
    ):
        super().__init__(trainable, name, activity_regularizer=activity_regularizer, **kwargs)
        self.units = int(units)
        self.activation = activation
        self.use_bias = use_bias
        self.kernel_initializer = kernel_initializer or glorot_uniform_initializer()
        self.bias_initializer = bias_initializer or zeros_initializer()
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer
        self.kernel_constraint, self.bias_constraint = kernel_constraint, bias_constraint
        self.kernel = self.bias = None

    def build(self, input_shape: TensorShape) -> None:
        last = channels_dim(input_shape, "Dense")
        self.kernel = self.add_weight(
            "kernel",
            [last, self.units],
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint,
        )
        if self.use_bias:
            self.bias = self.add_weight(
                "bias",
                [self.units],
                initializer=self.bias_initializer,
                regularizer=self.bias_regularizer,
                constraint=self.bias_constraint,
            )

    def call(self, inputs: Tensor) -> Tensor:
        rank = inputs.shape.rank
        if rank is not None and rank > 2:
            outputs = tensordot(inputs, self.kernel, [[rank - 1], [0]])
        else:
            outputs = matmul(inputs, self.kernel)
        if self.use_bias:
            outputs = bias_add(outputs, self.bias)
        return self.activation(outputs) if self.activation is not None else outputs


class Flatten(Layer):
    """Every dimension but the first folded into one: ``[batch, h, w, c] -> [batch, h*w*c]``."""

    def __init__(self, data_format: str | None = None, name: str | None = None, **kwargs: Any):
        super().__init__(name=name, **kwargs)
        if data_format not in (None, "channels_last"):
            raise ValueError("Flatten: only data_format='channels_last' is provided")

    def call(self, inputs: Tensor) -> Tensor:
        dims = inputs.shape.as_list() if inputs.shape.rank is not None else None
        if dims is not None and None not in dims[1:]:
            size = int(np.prod([int(d or 0) for d in dims[1:]]))
            return array_ops.reshape(inputs, [-1, size])
        batch = array_ops.shape(inputs)[:1]
        return array_ops.reshape(inputs, array_ops.concat([batch, [-1]], 0))


class Dropout(Layer):
    """Zeroes a ``rate`` fraction of the inputs (and scales the rest by
    ``1 / (1 - rate)``) when ``training``; the identity otherwise."""

    def __init__(
        self,
        rate: float = 0.5,
        noise_shape: Any = None,
        seed: int | None = None,
        name: str | None = None,
        **kwargs: Any,
    ):
        super().__init__(name=name, **kwargs)
        self.rate, self.noise_shape, self.seed = rate, noise_shape, seed

    def call(self, inputs: Tensor, training: Any = False) -> Tensor:
        def dropped() -> Tensor:
            return nn_dropout(inputs, noise_shape=self.noise_shape, seed=self.seed, rate=self.rate)

        return smart_cond(training, dropped, lambda: identity(inputs))


def dense(
    inputs: Any,
    units: int,
    activation: Callable | None = None,
    use_bias: bool = True,
    kernel_initializer: Any = None,
    bias_initializer: Any = None,
    kernel_regularizer: Callable | None = None,
    bias_regularizer: Callable | None = None,
    activity_regularizer: Callable | None = None,
    kernel_constraint: Callable | None = None,
    bias_constraint: Callable | None = None,
    trainable: bool = True,
    name: str | None = None,
    reuse: bool | None = None,
) -> Tensor:
    """The functional form of ``Dense`` (``name`` is its variable scope)."""
    layer = Dense(
        units,
        activation,
        use_bias,
        kernel_initializer,
        bias_initializer,
        kernel_regularizer,
        bias_regularizer,
        activity_regularizer,
        kernel_constraint,
        bias_constraint,
        trainable,
        name=name,
        _scope=name,
        _reuse=reuse,
    )
    return layer(inputs)


def flatten(inputs: Any, name: str | None = None, data_format: str = "channels_last") -> Tensor:
    """The functional form of ``Flatten``."""
    return Flatten(data_format=data_format, name=name)(inputs)


def dropout(
    inputs: Any,
    rate: float = 0.5,
    noise_shape: Any = None,
    seed: int | None = None,
    training: Any = False,
    name: str | None = None,
) -> Tensor:
    """The functional form of ``Dropout``: the identity unless ``training``."""
    return Dropout(rate, noise_shape, seed, name=name)(inputs, training=training)
