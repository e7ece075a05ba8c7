"""``tf.contrib.seq2seq``'s decoding loop: helpers, ``BasicDecoder``, ``dynamic_decode``.

``dynamic_decode`` runs one ``while_loop`` in a variable scope ``decoder``. Its state is
``(time, outputs TensorArrays, cell state, next inputs, finished [batch], sequence
lengths [batch])``; each iteration calls ``decoder.step``, writes the step's outputs at
``time``, and ends when every sequence is finished (or after ``maximum_iterations``). A
sequence's length is the step at which it first reported finished, plus one. With
``impute_finished``, finished sequences emit zeros and keep their state.

A ``BasicDecoder`` step runs the cell (and ``output_layer``) and asks its helper for the
sample ids, whether each sequence is finished, and the next inputs: ``TrainingHelper``
reads the given inputs (teacher forcing) until each sequence's length;
``GreedyEmbeddingHelper`` feeds back the embedding of the arg-max until ``end_token``
(``SampleEmbeddingHelper``: of a sample from the softmax).
All as TF 1.15's ``contrib/seq2seq/python/ops`` (``helper.py``, ``basic_decoder.py``,
``decoder.py``).
"""

from __future__ import annotations

import collections
from typing import Any

from .. import nn
from .._util import nest
from ..framework import dtypes
from ..framework.graph import Tensor, convert_to_tensor
from ..framework.scopes import name_scope
from ..ops import array as array_ops
from ..ops.control.cond import cond
from ..ops.control.tensor_array import TensorArray
from ..ops.control.while_loop import while_loop
from ..ops.math import (
    argmax,
    cast,
    equal,
    greater_equal,
    logical_not,
    logical_or,
    reduce_all,
    where_v2,
)
from ..ops.random.random_ops import multinomial
from ..ops.state.scope_context import variable_scope


def _batch_major(t: Tensor) -> Tensor:
    """``[time, batch, ...]`` <-> ``[batch, time, ...]``."""
    rank = t.shape.rank
    if rank is None:
        raise ValueError(f"a decoder's outputs need a known rank, {t.name} has none")
    return array_ops.transpose(t, [1, 0, *range(2, rank)])


class Helper:
    """What a ``BasicDecoder`` asks at each step (TF 1.15's ``Helper`` interface)."""

    batch_size: Any
    sample_ids_dtype = dtypes.int32

    def initialize(self, name: str | None = None) -> tuple:
        """``(finished, first inputs)``."""
        raise NotImplementedError

    def sample(self, time: Any, outputs: Tensor, state: Any, name: str | None = None) -> Tensor:
        """The sample ids of a step's outputs: their arg-max."""
        return cast(argmax(outputs, axis=-1), dtypes.int32)

    def next_inputs(
        self, time: Any, outputs: Any, state: Any, sample_ids: Tensor, name: str | None = None
    ) -> tuple:
        """``(finished, next inputs, next state)``."""
        raise NotImplementedError


class TrainingHelper(Helper):
    """Feeds ``inputs`` ``[batch, time, depth]`` (``[time, batch, depth]`` if
    ``time_major``) one step at a time; sequence ``b`` is finished after
    ``sequence_length[b]`` steps."""

    def __init__(
        self, inputs: Any, sequence_length: Any, time_major: bool = False, name: str | None = None
    ):
        with name_scope(name, "TrainingHelper", [inputs, sequence_length]):
            inputs = convert_to_tensor(inputs, name="inputs")
            if not time_major:
                inputs = _batch_major(inputs)
            self._inputs = TensorArray(inputs.dtype, size=0, dynamic_size=True).unstack(inputs)
            self._sequence_length = cast(convert_to_tensor(sequence_length), dtypes.int32)
            if self._sequence_length.shape.rank != 1:
                raise ValueError(
                    "Expected sequence_length to be a vector, but received shape: "
                    f"{self._sequence_length.shape}"
                )
            self._zero_inputs = array_ops.zeros_like(inputs[0])
            self.batch_size = array_ops.size(self._sequence_length)

    def _read(self, finished: Tensor, time: Any) -> Tensor:
        return cond(
            reduce_all(finished), lambda: self._zero_inputs, lambda: self._inputs.read(time)
        )

    def initialize(self, name: str | None = None) -> tuple:
        with name_scope(name, "TrainingHelperInitialize"):
            finished = equal(0, self._sequence_length)
            return finished, self._read(finished, 0)

    def next_inputs(
        self, time: Any, outputs: Any, state: Any, sample_ids: Tensor, name: str | None = None
    ) -> tuple:
        with name_scope(name, "TrainingHelperNextInputs"):
            next_time = time + 1
            finished = greater_equal(next_time, self._sequence_length)
            return finished, self._read(finished, next_time), state


class GreedyEmbeddingHelper(Helper):
    """Starts from the embedding of ``start_tokens`` ``[batch]`` and feeds back the
    embedding of each step's arg-max; a sequence is finished at ``end_token``."""

    def __init__(self, embedding: Any, start_tokens: Any, end_token: Any):
        if callable(embedding):
            self._embedding_fn = embedding
        else:
            params = convert_to_tensor(embedding)
            self._embedding_fn = lambda ids: nn.embedding_lookup(params, ids)
        self._start_tokens = cast(convert_to_tensor(start_tokens), dtypes.int32)
        self._end_token = cast(convert_to_tensor(end_token), dtypes.int32)
        if self._start_tokens.shape.rank != 1:
            raise ValueError("start_tokens must be a vector")
        if self._end_token.shape.rank != 0:
            raise ValueError("end_token must be a scalar")
        self.batch_size = array_ops.size(self._start_tokens)
        self._start_inputs = self._embedding_fn(self._start_tokens)

    def initialize(self, name: str | None = None) -> tuple:
        finished = array_ops.tile(convert_to_tensor([False]), array_ops.stack([self.batch_size]))
        return finished, self._start_inputs

    def sample(self, time: Any, outputs: Tensor, state: Any, name: str | None = None) -> Tensor:
        if not isinstance(outputs, Tensor):
            raise TypeError(f"Expected outputs to be a single Tensor, got: {type(outputs)}")
        return super().sample(time, outputs, state, name)

    def next_inputs(
        self, time: Any, outputs: Any, state: Any, sample_ids: Tensor, name: str | None = None
    ) -> tuple:
        finished = equal(sample_ids, self._end_token)
        next_inputs = cond(
            reduce_all(finished),
            lambda: self._start_inputs,
            lambda: self._embedding_fn(sample_ids),
        )
        return finished, next_inputs, state


class SampleEmbeddingHelper(GreedyEmbeddingHelper):
    """``GreedyEmbeddingHelper`` that samples each step's ids from the softmax of the
    outputs (divided by ``softmax_temperature``, if given) instead of taking the
    arg-max."""

    def __init__(
        self,
        embedding: Any,
        start_tokens: Any,
        end_token: Any,
        softmax_temperature: Any = None,
        seed: int | None = None,
    ):
        super().__init__(embedding, start_tokens, end_token)
        self._softmax_temperature, self._seed = softmax_temperature, seed

    def sample(self, time: Any, outputs: Tensor, state: Any, name: str | None = None) -> Tensor:
        if not isinstance(outputs, Tensor):
            raise TypeError(f"Expected outputs to be a single Tensor, got: {type(outputs)}")
        logits = (
            outputs if self._softmax_temperature is None else outputs / self._softmax_temperature
        )
        ids = multinomial(logits, 1, seed=self._seed, output_dtype=dtypes.int32)
        return array_ops.reshape(ids, [-1])


class BasicDecoderOutput(collections.namedtuple("BasicDecoderOutput", ("rnn_output", "sample_id"))):
    """A ``BasicDecoder`` step's outputs: the cell's (projected) output and sample ids."""


class BasicDecoder:
    """A cell, a helper, an initial state and an optional ``output_layer`` (a
    ``tf.layers.Dense``) applied to the cell's output."""

    def __init__(self, cell: Any, helper: Helper, initial_state: Any, output_layer: Any = None):
        if not callable(cell):
            raise TypeError(f"cell must be an RNNCell, received: {type(cell)}")
        if not isinstance(helper, Helper):
            raise TypeError(f"helper must be a Helper, received: {type(helper)}")
        self._cell, self._helper = cell, helper
        self._initial_state, self._output_layer = initial_state, output_layer

    @property
    def batch_size(self) -> Any:
        return self._helper.batch_size

    @property
    def output_dtype(self) -> BasicDecoderOutput:
        dtype = nest.flatten(self._initial_state)[0].dtype
        return BasicDecoderOutput(dtype, self._helper.sample_ids_dtype)

    def initialize(self, name: str | None = None) -> tuple:
        """``(finished, first inputs, initial state)``."""
        return (*self._helper.initialize(), self._initial_state)

    def step(self, time: Any, inputs: Any, state: Any, name: str | None = None) -> tuple:
        """``(outputs, next state, next inputs, finished)`` of one step."""
        with name_scope(name, "BasicDecoderStep", [time, inputs]):
            cell_outputs, cell_state = self._cell(inputs, state)
            if self._output_layer is not None:
                cell_outputs = self._output_layer(cell_outputs)
            sample_ids = self._helper.sample(time, cell_outputs, cell_state)
            finished, next_inputs, next_state = self._helper.next_inputs(
                time, cell_outputs, cell_state, sample_ids
            )
        return BasicDecoderOutput(cell_outputs, sample_ids), next_state, next_inputs, finished


def _where_rows(finished: Tensor, old: Tensor, new: Tensor) -> Tensor:
    """``old`` for the finished rows, else ``new``."""
    if isinstance(new, TensorArray) or new.shape.rank == 0:
        return new  # TF passes TensorArrays (alignment histories) and scalars through
    rank = new.shape.rank
    if rank is None:
        raise ValueError(f"a decoder's state needs a known rank, {new.name} has none")
    return where_v2(array_ops.reshape(finished, [-1] + [1] * (rank - 1)), old, new)


def dynamic_decode(
    decoder: BasicDecoder,
    output_time_major: bool = False,
    impute_finished: bool = False,
    maximum_iterations: Any = None,
    parallel_iterations: int = 32,
    swap_memory: bool = False,
    scope: Any = None,
) -> tuple:
    """Runs ``decoder`` until every sequence is finished (see the module docstring).

    Returns:
        ``(final_outputs, final_state, final_sequence_lengths)``; the outputs are a
        ``BasicDecoderOutput`` of ``[batch, time, ...]`` tensors (``[time, batch, ...]``
        if ``output_time_major``).

    Raises:
        ValueError: ``maximum_iterations`` not a scalar.
    """
    with variable_scope(scope, "decoder"):
        if maximum_iterations is not None:
            maximum_iterations = convert_to_tensor(
                maximum_iterations, dtype=dtypes.int32, name="maximum_iterations"
            )
            if maximum_iterations.shape.rank != 0:
                raise ValueError("maximum_iterations must be a scalar")
        finished, inputs, state = decoder.initialize()
        if maximum_iterations is not None:
            finished = logical_or(finished, greater_equal(0, maximum_iterations))
        lengths = array_ops.zeros_like(finished, dtype=dtypes.int32)
        dtypes_ = nest.flatten(decoder.output_dtype)
        outputs_ta = [TensorArray(d, size=0, dynamic_size=True) for d in dtypes_]

        def condition(time: Any, tas: Any, state: Any, inputs: Any, finished: Any, lengths: Any):
            return logical_not(reduce_all(finished))

        def body(time: Any, tas: Any, state: Any, inputs: Any, finished: Any, lengths: Any):
            outputs, next_state, next_inputs, step_finished = decoder.step(time, inputs, state)
            next_finished = logical_or(step_finished, finished)
            next_lengths = where_v2(
                logical_not(finished), array_ops.fill(array_ops.shape(lengths), time + 1), lengths
            )
            emit = nest.flatten(outputs)
            if impute_finished:
                emit = [_where_rows(finished, array_ops.zeros_like(o), o) for o in emit]
                flat_state = [
                    _where_rows(finished, old, new)
                    for old, new in zip(nest.flatten(state), nest.flatten(next_state))
                ]
                next_state = nest.pack_sequence_as(next_state, flat_state)
            tas = [ta.write(time, out) for ta, out in zip(tas, emit)]
            return time + 1, tas, next_state, next_inputs, next_finished, next_lengths

        result = while_loop(
            condition,
            body,
            (
                convert_to_tensor(0, dtype=dtypes.int32),
                outputs_ta,
                state,
                inputs,
                finished,
                lengths,
            ),
            parallel_iterations=parallel_iterations,
            maximum_iterations=maximum_iterations,
            swap_memory=swap_memory,
        )
        final = [ta.stack() for ta in result[1]]
        if not output_time_major:
            final = [_batch_major(t) for t in final]
        final_outputs = nest.pack_sequence_as(decoder.output_dtype, final)
        return final_outputs, result[2], result[5]
