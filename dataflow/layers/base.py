"""``tf.layers.Layer``: TF1's layer base, with TF1's variable naming.

A layer owns a variable scope, chosen the first time it is called: the ``name`` given
to a functional form (``tf.layers.dense(x, 10, name="fc")``) is taken as the scope
itself, so a second layer of that name shares its variables only under ``reuse=True``
(and fails otherwise, as in TF1); without a name, or in the class form, the scope is the
snake-case class name made unique in the enclosing scope (``dense``, ``dense_1``, ...).
Variables are made with ``get_variable`` inside that scope (``dense/kernel``), so
checkpoints and ``get_variable`` reuse line up with TF1's. A layer builds its weights on
its first call, from the input's static shape; later calls reuse them. Regularizer
losses go to ``GraphKeys.REGULARIZATION_LOSSES`` and a layer's state updates (batch
normalization's moving statistics) to ``GraphKeys.UPDATE_OPS``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..framework import dtypes
from ..framework.graph import Tensor, convert_to_tensor, get_default_graph
from ..framework.scopes import name_scope
from ..framework.tensor_shape import TensorShape
from ..ops.state.scope import get_variable
from ..ops.state.scope_context import variable_scope
from ..ops.state.variables import GraphKeys


def snake_case(class_name: str) -> str:
    """Keras's rule: ``Conv2DTranspose`` -> ``conv2d_transpose``; a private class
    (``_Wrapper``) gets a ``private`` prefix (``private__wrapper``), as scope names may
    not start with ``_``."""
    words = re.sub(r"(.)([A-Z][a-z0-9]+)", r"\1_\2", class_name)
    snake = re.sub(r"([a-z])([A-Z])", r"\1_\2", words).lower()
    return "private" + snake if snake.startswith("_") else snake


class Layer:
    """Base class of TF1's layers; subclasses define ``build(input_shape)`` and
    ``call(inputs, ...)``."""

    def __init__(
        self,
        trainable: bool = True,
        name: str | None = None,
        dtype: Any = None,
        activity_regularizer: Callable | None = None,
        _scope: str | None = None,
        _reuse: bool | None = None,
    ):
        self.trainable = trainable
        self._base_name = name or snake_case(type(self).__name__)
        self._dtype = dtypes.as_dtype(dtype) if dtype is not None else None
        self._reuse = _reuse
        self.activity_regularizer = activity_regularizer
        self.built = False
        self._weights: list[Any] = []
        self.losses: list[Tensor] = []
        self.updates: list[Any] = []
        self._scope = None
        if _scope is not None:
            with variable_scope(_scope) as captured:
                self._scope = captured

    # --- naming --------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._scope.name.rsplit("/", 1)[-1] if self._scope is not None else self._base_name

    @property
    def scope_name(self) -> str:
        if self._scope is None:
            raise ValueError(
                "No name available for layer scope because the layer has not been used yet."
            )
        return self._scope.name

    @property
    def dtype(self) -> dtypes.DType | None:
        return self._dtype

    def _set_scope(self) -> None:
        if self._scope is not None:
            return
        if self._reuse:
            with variable_scope(self._base_name) as captured:
                self._scope = captured
        else:
            with variable_scope(None, default_name=self._base_name) as captured:
                self._scope = captured

    # --- weights -------------------------------------------------------------------------
    def add_weight(
        self,
        name: str,
        shape: Any,
        dtype: Any = None,
        initializer: Any = None,
        regularizer: Callable | None = None,
        trainable: bool = True,
        constraint: Callable | None = None,
    ) -> Any:
        """A variable ``<layer scope>/<name>`` (made, or reused under ``reuse``)."""
        variable = get_variable(
            name,
            shape=shape,
            dtype=dtype or self._dtype or dtypes.float32,
            initializer=initializer,
            regularizer=regularizer,
            trainable=trainable and self.trainable,
            constraint=constraint,
        )
        if variable not in self._weights:
            self._weights.append(variable)
        return variable

    @property
    def weights(self) -> list[Any]:
        return list(self._weights)

    @property
    def variables(self) -> list[Any]:
        return self.weights

    @property
    def trainable_weights(self) -> list[Any]:
        trainable = set(get_default_graph().get_collection(GraphKeys.TRAINABLE_VARIABLES))
        return [w for w in self._weights if w in trainable]

    @property
    def non_trainable_weights(self) -> list[Any]:
        trainable = set(self.trainable_weights)
        return [w for w in self._weights if w not in trainable]

    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights

    def add_update(self, update: Any) -> None:
        self.updates.append(update)
        get_default_graph().add_to_collection(GraphKeys.UPDATE_OPS, update)

    def add_loss(self, loss: Tensor) -> None:
        self.losses.append(loss)
        get_default_graph().add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)

    # --- calling -------------------------------------------------------------------------
    def build(self, input_shape: Any) -> None:
        self.built = True

    def call(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        return inputs

    def __call__(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        def call() -> Any:
            tensors = _to_tensors(inputs)
            self._build_once(_shapes(tensors), _first_dtype(tensors))
            outputs = self.call(tensors, *args, **kwargs)
            if self.activity_regularizer is not None:
                with name_scope("ActivityRegularizer"):
                    self.add_loss(self.activity_regularizer(outputs))
            return outputs

        return self._in_scope(call)

    def _in_scope(self, fn: Callable[[], Any]) -> Any:
        """``fn()`` inside the layer's variable and name scopes (what ``__call__`` does
        around ``call``; a recurrent cell run over a whole sequence goes through here)."""
        self._set_scope()
        reuse = True if self.built else self._reuse
        with variable_scope(self._scope, reuse=reuse, auxiliary_name_scope=False) as scope:
            with name_scope(scope.original_name_scope):
                return fn()

    def _build_once(self, input_shape: Any, dtype: dtypes.DType) -> None:
        if self._dtype is None:
            self._dtype = dtype
        if not self.built:
            self.build(input_shape)
            self.built = True

    apply = __call__


def _to_tensors(inputs: Any) -> Any:
    if isinstance(inputs, (list, tuple)):
        return type(inputs)(_to_tensors(x) for x in inputs)
    return convert_to_tensor(inputs)


def _first_dtype(inputs: Any) -> dtypes.DType:
    first = inputs[0] if isinstance(inputs, (list, tuple)) else inputs
    dtype = first.dtype
    return dtype if dtype.is_floating else dtypes.float32


def _shapes(inputs: Any) -> Any:
    if isinstance(inputs, (list, tuple)):
        return [x.shape for x in inputs]
    return inputs.shape


def channels_dim(input_shape: TensorShape, layer: str) -> int:
    """The static size of the last (channels) dimension, which builds the weights."""
    last = input_shape.as_list()[-1] if input_shape.rank else None
    if last is None:
        raise ValueError(
            f"The last dimension of the inputs to `{layer}` should be defined. Found `None`."
        )
    return int(last)
