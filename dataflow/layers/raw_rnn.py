"""TF1's lower-level RNN drivers: ``raw_rnn`` (the caller's ``loop_fn`` decides each
step's input, when each sequence ends and what is emitted) and
``static_state_saving_rnn`` (``static_rnn`` whose state comes from and goes back to a
state saver).

``raw_rnn`` is one ``while_loop`` over ``(time, finished, input, emit arrays, state,
loop_state)``. ``loop_fn(0, None, None, None)`` gives the first ``(finished, input,
state, emit_structure, loop_state)``; each iteration runs the cell, then asks
``loop_fn(time + 1, output, cell_state, loop_state)`` for the next five. A batch entry
that had finished before the step keeps its state and emits zeros (a ``Select`` per
tensor, TF1's rule; scalars and ``TensorArray``s are taken as given), the emit is
written at ``time`` into a ``TensorArray`` of dynamic size per emitted tensor, and the
loop runs until every entry has finished. A ``loop_state`` of ``None`` travels as an
int32 0 and comes back as ``None``. Values and gradients are the loop's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._util import nest
from ..framework import dtypes
from ..framework.graph import Tensor, convert_to_tensor
from ..framework.scopes import control_dependencies
from ..framework.tensor_shape import TensorShape, as_shape
from ..ops import array as array_ops
from ..ops.control.group import identity
from ..ops.control.tensor_array import TensorArray
from ..ops.control.while_loop import while_loop
from ..ops.math.compare import logical_not, logical_or, where
from ..ops.math.reduce import reduce_all
from ..ops.state.scope_context import variable_scope
from .rnn import static_rnn


def _same_structure(expected: Any, got: Any, what: str) -> None:
    """``ValueError`` unless the two nests have the same shape of nesting."""
    if nest.is_nested(expected) != nest.is_nested(got) or len(nest.flatten(expected)) != len(
        nest.flatten(got)
    ):
        raise ValueError(
            f"raw_rnn: {what} must have the same structure as {expected!r}, got {got!r}"
        )


def _shape_of(size: Any) -> TensorShape:
    return as_shape(size) if not isinstance(size, Tensor) else TensorShape(None)


def raw_rnn(
    cell: Any,
    loop_fn: Callable,
    parallel_iterations: Any = None,
    swap_memory: bool = False,
    scope: Any = None,
) -> tuple[Any, Any, Any]:
    """Runs ``cell`` in a loop whose inputs, ends and emits ``loop_fn`` decides (TF1).

    ``loop_fn(time, cell_output, cell_state, loop_state)`` returns ``(finished,
    next_input, next_cell_state, emit_output, next_loop_state)``: at ``time`` 0 it is
    called with ``None`` for the last three and returns the initial state, and as
    ``emit_output`` either ``None`` (emit the cell's outputs) or a structure of
    tensors whose shapes (without the batch) and dtypes the emits will have; later it
    gets the cell's output and new state. ``finished`` is a ``[batch]`` bool vector.

    Args:
        cell: an ``RNNCell``.
        loop_fn: the callable above.
        parallel_iterations, swap_memory: accepted for TF1 compatibility.
        scope: variable scope (default ``rnn``).

    Returns:
        ``(emit_ta, final_state, final_loop_state)``: a ``TensorArray`` (or a structure
        of them, as the emit) holding one ``[batch, ...]`` emit per step, zeros for the
        entries finished before it; the state after the last step (a finished entry's
        frozen at its end); and the last ``loop_state`` (``None`` if it was never set).

    Raises:
        TypeError: ``cell`` is not an ``RNNCell`` or ``loop_fn`` not callable.
        ValueError: ``loop_fn``'s structures do not match the cell's.
    """
    if not all(hasattr(cell, a) for a in ("state_size", "output_size", "zero_state")):
        raise TypeError(f"cell must be an instance of RNNCell, got {cell!r}")
    if not callable(loop_fn):
        raise TypeError("loop_fn must be a callable")
    with variable_scope(scope or "rnn"):
        time = convert_to_tensor(0, dtype=dtypes.int32)
        finished, next_input, initial_state, emit_structure, init_loop_state = loop_fn(
            time, None, None, None
        )
        flat_input = [convert_to_tensor(x) for x in nest.flatten(next_input)]
        next_input = nest.pack_sequence_as(next_input, flat_input)
        static_batch = TensorShape([None])
        for x in flat_input:
            if x.shape.rank:
                static_batch = static_batch.merge_with(x.shape[:1])
        const_batch = static_batch.as_list()[0]
        batch: Any = const_batch if const_batch is not None else array_ops.shape(flat_input[0])[0]
        _same_structure(cell.state_size, initial_state, "the initial state")
        state = nest.pack_sequence_as(
            initial_state, [convert_to_tensor(s) for s in nest.flatten(initial_state)]
        )
        flat_state = nest.flatten(state)
        if emit_structure is not None:
            flat_emit = [convert_to_tensor(e) for e in nest.flatten(emit_structure)]
            sizes: list = [
                e.shape.as_list() if e.shape.is_fully_defined() else array_ops.shape(e)
                for e in flat_emit
            ]
            emit_dtypes = [e.dtype for e in flat_emit]
        else:
            emit_structure = cell.output_size
            sizes = [
                s if isinstance(s, (list, tuple, TensorShape)) else [s]
                for s in nest.flatten(emit_structure)
            ]
            emit_dtypes = [flat_state[0].dtype] * len(sizes)
        flat_ta = [
            TensorArray(
                dtype,
                size=0,
                dynamic_size=True,
                element_shape=TensorShape([const_batch]).concatenate(_shape_of(size)),
                name=f"rnn_output_{i}",
            )
            for i, (dtype, size) in enumerate(zip(emit_dtypes, sizes, strict=True))
        ]
        emit_ta = nest.pack_sequence_as(emit_structure, flat_ta)
        flat_zero = [
            array_ops.zeros(
                array_ops.concat([array_ops.reshape(batch, [1]), _size_vector(size)], 0),
                dtype,
            )
            for dtype, size in zip(emit_dtypes, sizes, strict=True)
        ]
        zero_emit = nest.pack_sequence_as(emit_structure, flat_zero)
        loop_state = (
            init_loop_state
            if init_loop_state is not None
            else convert_to_tensor(0, dtype=dtypes.int32)
        )

        def condition(unused_time: Any, finished: Tensor, *_: Any) -> Tensor:
            return logical_not(reduce_all(finished))

        def body(
            time: Tensor,
            finished: Tensor,
            current_input: Any,
            emit_ta: Any,
            state: Any,
            loop_state: Any,
        ) -> tuple:
            output, cell_state = cell(current_input, state)
            _same_structure(state, cell_state, "the cell's new state")
            _same_structure(cell.output_size, output, "the cell's output")
            next_time = time + 1
            next_finished, next_input, next_state, emit, next_loop_state = loop_fn(
                next_time, output, cell_state, loop_state
            )
            _same_structure(state, next_state, "loop_fn's next state")
            _same_structure(current_input, next_input, "loop_fn's next input")
            _same_structure(emit_ta, emit, "loop_fn's emit")
            loop_state = loop_state if next_loop_state is None else next_loop_state

            def keep_finished(current: Any, candidate: Any) -> Any:
                flat = []
                for cur, cand in zip(nest.flatten(current), nest.flatten(candidate), strict=True):
                    cand = cand if isinstance(cand, TensorArray) else convert_to_tensor(cand)
                    if isinstance(cur, TensorArray) or cur.shape.rank == 0:
                        flat.append(cand)
                    else:
                        flat.append(where(finished, cur, cand))
                return nest.pack_sequence_as(candidate, flat)

            emit = keep_finished(zero_emit, emit)
            next_state = keep_finished(state, next_state)
            written = [
                ta.write(time, e)
                for ta, e in zip(nest.flatten(emit_ta), nest.flatten(emit), strict=True)
            ]
            emit_ta = nest.pack_sequence_as(emit_ta, written)
            finished = logical_or(finished, next_finished)
            return next_time, finished, next_input, emit_ta, next_state, loop_state

        returned = while_loop(
            condition,
            body,
            (time, convert_to_tensor(finished), next_input, emit_ta, state, loop_state),
        )
        emit_ta, final_state, final_loop_state = returned[-3:]
        if init_loop_state is None:
            final_loop_state = None
        return emit_ta, final_state, final_loop_state


def _size_vector(size: Any) -> Tensor:
    """An emit's per-example shape as an int32 vector (a list, a shape or a tensor)."""
    if isinstance(size, Tensor):
        return size
    dims = as_shape(size).as_list()
    return (
        convert_to_tensor(dims, dtype=dtypes.int32) if dims else array_ops.zeros([0], dtypes.int32)
    )


def static_state_saving_rnn(
    cell: Any,
    inputs: list,
    state_saver: Any,
    state_name: Any,
    sequence_length: Any = None,
    scope: Any = None,
) -> tuple[list, Any]:
    """``static_rnn`` whose initial state is ``state_saver.state(name)`` and whose final
    state is given back with ``state_saver.save_state(name, value)`` (TF1).

    The outputs of the last step and the returned state are identities that run after
    every ``save_state`` op, so fetching them saves the state.

    Args:
        cell: an ``RNNCell``.
        inputs: a list of ``[batch, depth]`` tensors.
        state_saver: an object with ``state(name)`` and ``save_state(name, value)``.
        state_name: a name, or a structure of names matching ``cell.state_size``.
        sequence_length: optional ``[batch]`` lengths (as ``static_rnn``).
        scope: variable scope (default ``rnn``).

    Returns:
        ``(outputs, state)`` as ``static_rnn``.

    Raises:
        ValueError: ``state_name`` and ``cell.state_size`` differ in structure or size.
    """
    state_size = cell.state_size
    is_tuple = nest.is_nested(state_size)
    if is_tuple != nest.is_nested(state_name):
        raise ValueError(
            f"state_name should be the same type as cell.state_size. state_name: "
            f"{state_name!s}, cell.state_size: {state_size!s}"
        )
    if is_tuple:
        names = nest.flatten(state_name)
        sizes = nest.flatten(state_size)
        if len(names) != len(sizes):
            raise ValueError(
                f"#elems(state_name) != #elems(state_size): {len(names)} vs. {len(sizes)}"
            )
        initial_state = nest.pack_sequence_as(state_size, [state_saver.state(n) for n in names])
    else:
        names = [state_name]
        initial_state = state_saver.state(state_name)
    outputs, state = static_rnn(
        cell, inputs, initial_state=initial_state, sequence_length=sequence_length, scope=scope
    )
    flat_state = nest.flatten(state)
    saves = [state_saver.save_state(n, s) for n, s in zip(names, flat_state, strict=True)]
    with control_dependencies(saves):
        last = outputs[-1]
        outputs[-1] = nest.pack_sequence_as(last, [identity(o) for o in nest.flatten(last)])
        state = nest.pack_sequence_as(state, [identity(s) for s in flat_state])
    return outputs, state
