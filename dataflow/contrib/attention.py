"""``tf.contrib.seq2seq``'s attention: ``LuongAttention``, ``BahdanauAttention`` and
``AttentionWrapper``, as TF 1.15's ``attention_wrapper.py`` builds them.

An attention mechanism holds the ``memory`` ``[batch, max_time, depth]`` (rows past
``memory_sequence_length`` zeroed) and its ``keys``, the memory through a bias-free
``Dense`` layer ``memory_layer``. Called with a query ``[batch, units]`` it scores every
memory position (Luong: ``query . key``, times a learned ``attention_g`` if ``scale``;
Bahdanau: ``v . tanh(keys + query_layer(query))``, weight-normalised if ``normalize``),
masks positions past the memory's length with ``-inf`` and turns the scores into
alignments with a softmax.

``AttentionWrapper`` is a cell whose state is an ``AttentionWrapperState``. A step feeds
the wrapped cell ``concat([inputs, previous attention])``, queries the mechanism with
the cell's output, takes the alignment-weighted sum of the memory (the context), and
makes the attention ``attention_layer(concat([cell_output, context]))`` (the context
itself without ``attention_layer_size``); it outputs the attention (or the cell's output
if not ``output_attention``). Variables: ``memory_layer/kernel`` where the mechanism is
made; ``<wrapper>/attention_layer/kernel``, the cell's under ``<wrapper>/``, and the
mechanism's under ``<wrapper>/luong_attention/`` or ``<wrapper>/bahdanau_attention/``.
"""

from __future__ import annotations

import collections
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import nn
from ..framework import dtypes
from ..framework.graph import Tensor, convert_to_tensor
from ..framework.scopes import name_scope
from ..layers.core import Dense
from ..layers.rnn import sequence_mask
from ..layers.rnn_cells import RNNCell
from ..ops import array as array_ops
from ..ops.control.tensor_array import TensorArray
from ..ops.linalg.products import matmul
from ..ops.math import reduce_sum, rsqrt, square, tanh, where
from ..ops.state.initializers import constant_initializer, ones_initializer, zeros_initializer
from ..ops.state.scope import get_variable
from ..ops.state.scope_context import variable_scope


class _AttentionMechanism:
    def __init__(
        self,
        memory: Any,
        memory_sequence_length: Any,
        memory_layer: Dense,
        query_layer: Dense | None,
        probability_fn: Callable | None,
        score_mask_value: Any,
        name: str,
    ):
        with name_scope(None, "BaseAttentionMechanismInit", [memory]):
            memory = convert_to_tensor(memory, name="memory")
            if memory.shape.rank != 3 or memory.shape.as_list()[2] is None:
                raise ValueError(
                    f"{name}: memory must be [batch, max_time, depth] with a known depth, got "
                    f"shape {memory.shape}"
                )
            self._lengths = None
            if memory_sequence_length is not None:
                self._lengths = convert_to_tensor(
                    memory_sequence_length, name="memory_sequence_length"
                )
                mask = sequence_mask(self._lengths, array_ops.shape(memory)[1], dtype=memory.dtype)
                memory = memory * array_ops.expand_dims(mask, 2)
            self.values = memory
            self.keys = memory_layer(memory)
            self.query_layer: Any = query_layer
            self.batch_size = array_ops.shape(memory)[0]
            self.alignments_size = array_ops.shape(memory)[1]
        self._probability_fn = probability_fn or nn.softmax
        if score_mask_value is None:
            score_mask_value = memory.dtype.as_numpy_dtype(-np.inf)
        self._score_mask_value = score_mask_value

    def _alignments(self, score: Tensor) -> Tensor:
        if self._lengths is not None:
            mask = sequence_mask(self._lengths, array_ops.shape(score)[1])
            fill = array_ops.ones_like(score) * self._score_mask_value
            score = where(mask, score, fill)
        return self._probability_fn(score)

    def initial_alignments(self, batch_size: Any, dtype: Any) -> Tensor:
        """Zeros ``[batch_size, max_time]``."""
        return array_ops.zeros(array_ops.stack([batch_size, self.alignments_size]), dtype)

    def initial_state(self, batch_size: Any, dtype: Any) -> Tensor:
        """The mechanism's state before the first step: ``initial_alignments``."""
        return self.initial_alignments(batch_size, dtype)


class LuongAttention(_AttentionMechanism):
    """Multiplicative attention: ``score = query . keys`` (times a learned scalar
    ``attention_g`` if ``scale``); ``num_units`` is the keys' depth and must be the
    query's."""

    def __init__(
        self,
        num_units: int,
        memory: Any,
        memory_sequence_length: Any = None,
        scale: bool = False,
        probability_fn: Callable | None = None,
        score_mask_value: Any = None,
        dtype: Any = None,
        custom_key_value_fn: Any = None,
        name: str = "LuongAttention",
    ):
        if custom_key_value_fn is not None:
            raise ValueError("LuongAttention: custom_key_value_fn is not provided by dataflow")
        layer = Dense(num_units, name="memory_layer", use_bias=False, dtype=dtype)
        super().__init__(
            memory, memory_sequence_length, layer, None, probability_fn, score_mask_value, name
        )
        self._scale = scale

    def __call__(self, query: Any, state: Any) -> tuple:
        """``(alignments, next state)`` for ``query`` ``[batch, num_units]``.

        Raises:
            ValueError: the query's depth is not the keys'.
        """
        with variable_scope(None, "luong_attention", [query]):
            query = convert_to_tensor(query)
            depth, key_depth = query.shape.as_list()[-1], self.keys.shape.as_list()[-1]
            if depth != key_depth:
                raise ValueError(
                    "Incompatible or unknown inner dimensions between query and keys. Query "
                    f"has units: {depth}. Keys have units: {key_depth}. Perhaps you need to "
                    f"set num_units to the keys' dimension ({key_depth})?"
                )
            score = array_ops.squeeze(
                matmul(array_ops.expand_dims(query, 1), self.keys, transpose_b=True), [1]
            )
            if self._scale:
                g = get_variable(
                    "attention_g", shape=(), dtype=query.dtype, initializer=ones_initializer()
                )
                score = g * score
            alignments = self._alignments(score)
        return alignments, alignments


class BahdanauAttention(_AttentionMechanism):
    """Additive attention: ``score = v . tanh(keys + query_layer(query))`` over
    ``num_units``; with ``normalize``, ``v`` is weight-normalised (``attention_g``) and a
    bias ``attention_b`` is added inside the ``tanh``."""

    def __init__(
        self,
        num_units: int,
        memory: Any,
        memory_sequence_length: Any = None,
        normalize: bool = False,
        probability_fn: Callable | None = None,
        score_mask_value: Any = None,
        dtype: Any = None,
        custom_key_value_fn: Any = None,
        name: str = "BahdanauAttention",
    ):
        if custom_key_value_fn is not None:
            raise ValueError("BahdanauAttention: custom_key_value_fn is not provided by dataflow")
        super().__init__(
            memory,
            memory_sequence_length,
            Dense(num_units, name="memory_layer", use_bias=False, dtype=dtype),
            Dense(num_units, name="query_layer", use_bias=False, dtype=dtype),
            probability_fn,
            score_mask_value,
            name,
        )
        self._num_units, self._normalize = num_units, normalize

    def __call__(self, query: Any, state: Any) -> tuple:
        """``(alignments, next state)`` for ``query`` ``[batch, depth]``."""
        with variable_scope(None, "bahdanau_attention", [query]):
            processed = array_ops.expand_dims(self.query_layer(query), 1)
            dtype = processed.dtype
            v = get_variable("attention_v", [self._num_units], dtype=dtype)
            if self._normalize:
                g = get_variable(
                    "attention_g",
                    shape=(),
                    dtype=dtype,
                    initializer=constant_initializer(math.sqrt(1.0 / self._num_units)),
                )
                b = get_variable(
                    "attention_b", [self._num_units], dtype=dtype, initializer=zeros_initializer()
                )
                normed_v = g * v * rsqrt(reduce_sum(square(v)))
                score = reduce_sum(normed_v * tanh(self.keys + processed + b), [2])
            else:
                score = reduce_sum(v * tanh(self.keys + processed), [2])
            alignments = self._alignments(score)
        return alignments, alignments


class AttentionWrapperState(
    collections.namedtuple(
        "AttentionWrapperState",
        ("cell_state", "attention", "time", "alignments", "alignment_history", "attention_state"),
    )
):
    """The state of an ``AttentionWrapper``: the wrapped cell's state, the last
    attention, the step, the last alignments, their history (a ``TensorArray`` if
    ``alignment_history``, else ``()``) and the mechanism's state."""

    def clone(self, **kwargs: Any) -> AttentionWrapperState:
        """This state with the given fields replaced (``cell_state=...``)."""
        return self._replace(**kwargs)


class AttentionWrapper(RNNCell):
    """Wraps ``cell`` with one attention mechanism (see the module docstring)."""

    def __init__(
        self,
        cell: RNNCell,
        attention_mechanism: Any,
        attention_layer_size: int | None = None,
        alignment_history: bool = False,
        cell_input_fn: Callable | None = None,
        output_attention: bool = True,
        initial_cell_state: Any = None,
        name: str | None = None,
        attention_layer: Any = None,
        attention_fn: Any = None,
    ):
        super().__init__(name=name)
        if (
            isinstance(attention_mechanism, (list, tuple))
            or attention_layer is not None
            or (attention_fn is not None)
        ):
            raise ValueError(
                "AttentionWrapper: several attention mechanisms, attention_layer and "
                "attention_fn are not provided by dataflow"
            )
        if not isinstance(attention_mechanism, _AttentionMechanism):
            raise TypeError(
                "attention_mechanism must be an AttentionMechanism, saw type: "
                f"{type(attention_mechanism).__name__}"
            )
        self._cell = cell
        self._mechanism: Any = attention_mechanism  # a subclass's __call__ scores
        self._cell_input_fn = cell_input_fn or (
            lambda inputs, attention: array_ops.concat([inputs, attention], -1)
        )
        self._attention_layer = (
            Dense(attention_layer_size, name="attention_layer", use_bias=False)
            if attention_layer_size is not None
            else None
        )
        self._attention_size = (
            attention_layer_size
            if attention_layer_size is not None
            else attention_mechanism.values.shape.as_list()[-1]
        )
        self._alignment_history = alignment_history
        self._output_attention = output_attention
        self._initial_cell_state = initial_cell_state

    @property
    def output_size(self) -> Any:
        return self._attention_size if self._output_attention else self._cell.output_size

    def zero_state(self, batch_size: Any, dtype: Any) -> AttentionWrapperState:
        """The wrapped cell's zero state (or ``initial_cell_state``) with zero attention
        and alignments, at step 0."""
        with name_scope(None, "AttentionWrapperZeroState", [batch_size]):
            dtype = dtypes.as_dtype(dtype)
            cell_state = self._initial_cell_state
            if cell_state is None:
                cell_state = self._cell.zero_state(batch_size, dtype)
            alignments = self._mechanism.initial_alignments(batch_size, dtype)
            history = (
                TensorArray(dtype, size=0, dynamic_size=True) if self._alignment_history else ()
            )
            return AttentionWrapperState(
                cell_state=cell_state,
                attention=array_ops.zeros(
                    array_ops.stack([batch_size, self._attention_size]), dtype
                ),
                time=array_ops.zeros([], dtypes.int32),
                alignments=alignments,
                alignment_history=history,
                attention_state=self._mechanism.initial_state(batch_size, dtype),
            )

    def call(self, inputs: Any, state: AttentionWrapperState) -> tuple:
        if not isinstance(state, AttentionWrapperState):
            raise TypeError(
                "Expected state to be instance of AttentionWrapperState. Received type "
                f"{type(state)} instead."
            )
        cell_inputs = self._cell_input_fn(convert_to_tensor(inputs), state.attention)
        cell_output, next_cell_state = self._cell(cell_inputs, state.cell_state)
        alignments, next_attention_state = self._mechanism(cell_output, state.attention_state)
        context = array_ops.squeeze(
            matmul(array_ops.expand_dims(alignments, 1), self._mechanism.values), [1]
        )
        if self._attention_layer is not None:
            attention = self._attention_layer(array_ops.concat([cell_output, context], 1))
        else:
            attention = context
        history = state.alignment_history
        if self._alignment_history:
            history = history.write(state.time, alignments)
        next_state = AttentionWrapperState(
            cell_state=next_cell_state,
            attention=attention,
            time=state.time + 1,
            alignments=alignments,
            alignment_history=history,
            attention_state=next_attention_state,
        )
        return (attention if self._output_attention else cell_output), next_state
