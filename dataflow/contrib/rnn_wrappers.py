"""``tf.contrib.rnn``'s cell wrappers that ``tf.nn.rnn_cell`` lacks: ``DeviceWrapper``,
``OutputProjectionWrapper`` and ``EmbeddingWrapper`` (TF 1.15's ``core_rnn_cell.py``).
Each is a layer cell: its variables and the wrapped cell's are under its own scope
(``output_projection_wrapper/kernel``, ``embedding_wrapper/basic_lstm_cell/kernel``)."""

from __future__ import annotations

import math
from typing import Any

from ..framework import scopes
from ..framework.graph import convert_to_tensor
from ..layers.rnn_cells import RNNCell
from ..ops import array as array_ops
from ..ops.linalg.products import matmul
from ..ops.nn.impl import bias_add, embedding_lookup
from ..ops.state.initializers import random_uniform_initializer, zeros_initializer
from ..ops.state.scope import get_variable, get_variable_scope


class DeviceWrapper(RNNCell):
    """Runs the wrapped cell (and makes its zero state) on ``device``."""

    def __init__(self, cell: RNNCell, device: Any):
        super().__init__()
        self._cell, self._device = cell, device

    state_size = property(lambda self: self._cell.state_size)
    output_size = property(lambda self: self._cell.output_size)

    def zero_state(self, batch_size: Any, dtype: Any) -> Any:
        with scopes.device(self._device):
            return self._cell.zero_state(batch_size, dtype)

    def __call__(self, inputs: Any, state: Any, scope: Any = None) -> Any:
        with scopes.device(self._device):
            return self._cell(inputs, state, scope)


class OutputProjectionWrapper(RNNCell):
    """The wrapped cell's output through a linear map to ``output_size`` (variables
    ``output_projection_wrapper/kernel`` and ``bias``, the cell's under the same scope),
    then ``activation`` if given.

    Raises:
        ValueError: ``output_size < 1``.
    """

    def __init__(self, cell: RNNCell, output_size: int, activation: Any = None, reuse: Any = None):
        super().__init__(_reuse=reuse)
        if output_size < 1:
            raise ValueError(f"Parameter output_size must be > 0: {output_size}.")
        self._cell, self._output_size, self._activation = cell, output_size, activation

    state_size = property(lambda self: self._cell.state_size)
    output_size = property(lambda self: self._output_size)

    def zero_state(self, batch_size: Any, dtype: Any) -> Any:
        with scopes.name_scope(None, "OutputProjectionWrapperZeroState", [batch_size]):
            return self._cell.zero_state(batch_size, dtype)

    def call(self, inputs: Any, state: Any) -> tuple:
        output, new_state = self._cell(inputs, state)
        kernel = get_variable(
            "kernel", [output.shape.as_list()[1], self._output_size], dtype=output.dtype
        )
        bias = get_variable(
            "bias", [self._output_size], dtype=output.dtype, initializer=zeros_initializer()
        )
        projected = bias_add(matmul(output, kernel), bias)
        if self._activation is not None:
            projected = self._activation(projected)
        return projected, new_state


class EmbeddingWrapper(RNNCell):
    """Looks up integer inputs in an ``embedding`` ``[embedding_classes, embedding_size]``
    (``embedding_wrapper/embedding``, on the CPU; default initializer the scope's, else
    uniform on [-sqrt(3), sqrt(3)], variance 1) before the wrapped cell.

    Raises:
        ValueError: ``embedding_classes`` or ``embedding_size`` not positive.
    """

    def __init__(
        self,
        cell: RNNCell,
        embedding_classes: int,
        embedding_size: int,
        initializer: Any = None,
        reuse: Any = None,
    ):
        super().__init__(_reuse=reuse)
        if embedding_classes <= 0 or embedding_size <= 0:
            raise ValueError(
                "Both embedding_classes and embedding_size must be > 0: "
                f"{embedding_classes}, {embedding_size}."
            )
        self._cell, self._initializer = cell, initializer
        self._classes, self._size = embedding_classes, embedding_size

    state_size = property(lambda self: self._cell.state_size)
    output_size = property(lambda self: self._cell.output_size)

    def zero_state(self, batch_size: Any, dtype: Any) -> Any:
        with scopes.name_scope(None, "EmbeddingWrapperZeroState", [batch_size]):
            return self._cell.zero_state(batch_size, dtype)

    def build(self, input_shape: Any) -> None:
        pass  # integer ids: the embedding is made in call, with the state's dtype

    def call(self, inputs: Any, state: Any) -> tuple:
        with scopes.device("/cpu:0"):
            sqrt3 = math.sqrt(3)
            initializer = (
                self._initializer
                or get_variable_scope().initializer
                or random_uniform_initializer(-sqrt3, sqrt3)
            )
            dtype = (state[0] if isinstance(state, tuple) else state).dtype
            embedding = get_variable(
                "embedding", [self._classes, self._size], initializer=initializer, dtype=dtype
            )
            ids = array_ops.reshape(convert_to_tensor(inputs), [-1])
            embedded = embedding_lookup(embedding, ids)
        return self._cell(embedded, state)
