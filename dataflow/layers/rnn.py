"""Running a cell over a sequence: ``static_rnn``, ``dynamic_rnn``,
``static_bidirectional_rnn`` and ``bidirectional_dynamic_rnn``, with TF1's
``sequence_length`` rule (outputs are zero past a sequence's length and its state stops
changing there) and TF1's scopes (``rnn``, ``bidirectional_rnn/fw``,
``bidirectional_rnn/bw``); and the sequence helpers ``reverse_sequence`` and
``sequence_mask``.

``dynamic_rnn`` is TF1's construction: the inputs unstacked into a ``TensorArray``
along time, one ``while_loop`` whose body reads step ``t``, runs the cell and writes
its output into a second ``TensorArray``, stacked after the loop; the number of time
steps may be known only when the step runs, and the gradient is the loop's. When the
number of steps is known at build time and small (``_UNROLL_LIMIT``), the loop is
unrolled instead, which gives the same values, variables and gradients but runs faster
here: no loop to interpret and no recomputation of the cell in the gradient (the
while-loop gradient recomputes each step's body from the recorded loop variables).
Unrolled plain LSTM cells without ``sequence_length`` go one step further: each layer
is one ``LSTMSequence`` op over all steps (``ops/nn/rnn.py`` says why it is faster),
with the same variables and, to float rounding, the same values and gradients.
"""

from __future__ import annotations

from typing import Any

from .._util import nest
from ..framework import dtypes
from ..framework.graph import Tensor, convert_to_tensor
from ..framework.scopes import name_scope
from ..ops import array as array_ops
from ..ops.array.indexing import gather_nd
from ..ops.array.join import concat
from ..ops.array.reorder import range_ as range_op
from ..ops.build import apply_op
from ..ops.cast import cast
from ..ops.control.tensor_array import TensorArray
from ..ops.control.while_loop import while_loop
from ..ops.math.arith import maximum, minimum
from ..ops.math.compare import less, where
from ..ops.math.reduce import reduce_max
from ..ops.state.scope_context import variable_scope
from .rnn_cells import LSTMStateTuple


def _map2(state: Any, other: Any, fn: Any) -> Any:
    if isinstance(state, LSTMStateTuple):
        return LSTMStateTuple(*(_map2(s, o, fn) for s, o in zip(state, other, strict=True)))
    if isinstance(state, tuple):
        return tuple(_map2(s, o, fn) for s, o in zip(state, other, strict=True))
    return fn(state, other)


def _keep_where(mask: Tensor, new: Tensor, old: Tensor) -> Tensor:
    full = array_ops.reshape(mask, [-1, 1]) & array_ops.ones_like(new, dtype=dtypes.bool)
    return where(full, new, old)


def static_rnn(
    cell: Any,
    inputs: list,
    initial_state: Any = None,
    dtype: Any = None,
    sequence_length: Any = None,
    scope: Any = None,
) -> tuple[list, Any]:
    """Runs ``cell`` over a list of ``[batch, depth]`` inputs; returns the outputs (a
    list) and the final state.

    Raises:
        TypeError: ``inputs`` is not a list (or tuple).
        ValueError: no inputs, or neither ``initial_state`` nor ``dtype``.
    """
    if not isinstance(inputs, (list, tuple)):
        raise TypeError(
            f"static_rnn: inputs must be a list of [batch, depth] tensors, got "
            f"{type(inputs).__name__}"
        )
    if not inputs:
        raise ValueError("inputs must not be empty")
    if initial_state is None and dtype is None:
        raise ValueError("If no initial_state is provided, dtype must be specified")
    with variable_scope(scope or "rnn"):
        inputs = [convert_to_tensor(x) for x in inputs]
        state = initial_state
        if state is None:
            state = cell.zero_state(array_ops.shape(inputs[0])[0], dtype)
        lengths = (
            None
            if sequence_length is None
            else cast(convert_to_tensor(sequence_length), dtypes.int32)
        )
        outputs = []
        for t, x in enumerate(inputs):
            output, new_state = cell(x, state)
            if lengths is not None:
                alive = less(t, lengths)
                output = _keep_where(alive, output, array_ops.zeros_like(output))
                new_state = _map2(new_state, state, lambda n, o, a=alive: _keep_where(a, n, o))
            outputs.append(output)
            state = new_state
        return outputs, state


# Unrolling a known number of steps up to this many (measured: benchmarks/bench_rnn.py).
_UNROLL_LIMIT = 64


def dynamic_rnn(
    cell: Any,
    inputs: Any,
    sequence_length: Any = None,
    initial_state: Any = None,
    dtype: Any = None,
    parallel_iterations: Any = None,
    swap_memory: bool = False,
    time_major: bool = False,
    scope: Any = None,
) -> tuple[Tensor, Any]:
    """Runs ``cell`` over ``inputs`` ``[batch, time, depth]`` (``[time, batch, depth]``
    when ``time_major``); returns the outputs in the same layout and the final state.

    Args:
        cell: an ``RNNCell``.
        inputs: the input sequences; the number of time steps may be unknown until the
            step runs.
        sequence_length: optional ``[batch]`` lengths: outputs past a sequence's length
            are zeros and its state stops changing there.
        initial_state: the cell's initial state (default: ``cell.zero_state``).
        dtype: the state's dtype when ``initial_state`` is not given.
        parallel_iterations, swap_memory: accepted for TF1 compatibility.
        time_major: the layout of ``inputs`` and of the returned outputs.
        scope: variable scope (default ``rnn``).

    Raises:
        TypeError: ``cell`` is not an ``RNNCell``.
        ValueError: ``inputs`` has rank below 3, ``sequence_length`` is not a vector,
            ``initial_state`` does not match the cell's state size, or neither
            ``initial_state`` nor ``dtype`` is given.
    """
    _require_cell(cell, "cell")
    inputs = convert_to_tensor(inputs)
    if sequence_length is not None:
        sequence_length = convert_to_tensor(sequence_length)
        if sequence_length.shape.rank not in (None, 1):
            raise ValueError(
                "dynamic_rnn: sequence_length must be a vector of length batch_size, got "
                f"shape {sequence_length.shape}"
            )
    if initial_state is not None:
        _check_state(cell, initial_state)
    dims = inputs.shape.as_list() if inputs.shape.rank is not None else None
    if dims is not None and len(dims) < 3:
        raise ValueError(
            f"dynamic_rnn: inputs must have rank >= 3 ([batch, time, depth]), got shape "
            f"{inputs.shape}"
        )
    if initial_state is None and dtype is None:
        raise ValueError("If there is no initial_state, you must give a dtype.")
    time_axis = 0 if time_major else 1
    steps = dims[time_axis] if dims is not None else None
    if steps is not None and 0 < steps <= _UNROLL_LIMIT and sequence_length is None:
        if dims is not None and len(dims) == 3 and cell._fusable():
            return _fused_rnn(cell, inputs, initial_state, dtype, time_major, scope)
    if dims is not None and steps is not None and 0 < steps <= _UNROLL_LIMIT:
        # TF1's names for what users fetch: the outputs are `rnn/transpose_1`, the
        # transposition back from time-major (the loop's layout) inside the scope.
        with variable_scope(scope or "rnn") as rnn_scope:
            if not time_major:
                inputs = array_ops.transpose(inputs, [1, 0, *range(2, len(dims))])
            unstacked = array_ops.unstack(inputs, num=steps, axis=0)
            per_step, state = static_rnn(
                cell, unstacked, initial_state, dtype, sequence_length, rnn_scope
            )
            outputs = array_ops.stack(per_step, axis=0)
            if not time_major:
                outputs = array_ops.transpose(outputs, [1, 0, *range(2, outputs.shape.rank or 3)])
            return outputs, state
    with variable_scope(scope or "rnn"):
        if not time_major:
            rank = inputs.shape.rank
            if rank is None:
                raise ValueError("dynamic_rnn: inputs must have a known rank")
            inputs = array_ops.transpose(inputs, [1, 0, *range(2, rank)])
        outputs, state = _time_loop(cell, inputs, sequence_length, initial_state, dtype)
        if not time_major:
            outputs = array_ops.transpose(outputs, [1, 0, *range(2, outputs.shape.rank or 2)])
        return outputs, state


def _require_cell(cell: Any, what: str) -> None:
    """Raises ``TypeError`` unless ``cell`` is an ``RNNCell`` (has the sizes and
    ``zero_state`` that the loops read)."""
    missing = [a for a in ("state_size", "output_size", "zero_state") if not hasattr(cell, a)]
    if missing:
        raise TypeError(
            f"The argument '{what}' ({cell!r}) is not an RNNCell: it lacks {', '.join(missing)}"
        )


def _check_state(cell: Any, state: Any) -> None:
    """Raises ``ValueError`` when a part of ``state`` has a known last dimension other
    than the cell's ``state_size`` says (TF1 fails building the first step's matmul)."""
    sizes = nest.flatten(cell.state_size)
    parts = nest.flatten(state)
    if len(sizes) != len(parts):
        return  # a structure mismatch: the cell's own call reports it
    for size, part in zip(sizes, parts, strict=True):
        dims = convert_to_tensor(part).shape
        if not isinstance(size, int) or dims.rank is None or dims.rank == 0:
            continue
        last = dims.as_list()[-1]
        if last is not None and last != size:
            raise ValueError(
                f"dynamic_rnn: initial_state has a part of shape {dims}, with {last} "
                f"units where the cell's state_size is {size}"
            )


def _fused_rnn(
    cell: Any, inputs: Tensor, initial_state: Any, dtype: Any, time_major: bool, scope: Any
) -> tuple[Tensor, Any]:
    """An LSTM (or a stack of them) over all steps at once (``ops/nn/rnn.py``): the
    unrolled path's variables, values and gradients from one op per layer."""
    with variable_scope(scope or "rnn"):
        if not time_major:
            inputs = array_ops.transpose(inputs, [1, 0, 2])
        state = initial_state
        if state is None:
            state = cell.zero_state(array_ops.shape(inputs)[1], dtype)
        outputs, state = cell._run_sequence(inputs, state)
        if not time_major:
            outputs = array_ops.transpose(outputs, [1, 0, 2])
        return outputs, state


def _time_loop(
    cell: Any, inputs: Tensor, sequence_length: Any, initial_state: Any, dtype: Any
) -> tuple[Tensor, Any]:
    """The ``while_loop`` over time-major ``inputs`` (TF1's ``_dynamic_rnn_loop``)."""
    shape = array_ops.shape(inputs)
    time_steps, batch = shape[0], shape[1]
    state = initial_state
    if state is None:
        state = cell.zero_state(batch, dtype)
    lengths = (
        None if sequence_length is None else cast(convert_to_tensor(sequence_length), dtypes.int32)
    )
    input_ta = TensorArray(inputs.dtype, size=time_steps, element_shape=inputs.shape[1:])
    input_ta = input_ta.unstack(inputs)
    batch_dim = inputs.shape.as_list()[1] if inputs.shape.rank is not None else None
    output_ta = TensorArray(
        inputs.dtype, size=time_steps, element_shape=[batch_dim, cell.output_size]
    )

    def step(time: Tensor, state: Any, output_ta: TensorArray) -> tuple:
        output, new_state = cell(input_ta.read(time), state)
        if lengths is not None:
            alive = less(time, lengths)
            output = _keep_where(alive, output, array_ops.zeros_like(output))
            new_state = _map2(new_state, state, lambda n, o: _keep_where(alive, n, o))
        return time + 1, new_state, output_ta.write(time, output)

    _, state, output_ta = while_loop(
        lambda time, *_: less(time, time_steps),
        step,
        (convert_to_tensor(0, dtype=dtypes.int32), state, output_ta),
    )
    outputs = output_ta.stack()
    outputs.set_shape(inputs.shape[:1].concatenate([batch_dim, cell.output_size]))
    return outputs, state


def reverse_sequence(
    input: Any, seq_lengths: Any, seq_axis: int = 1, batch_axis: int = 0, name: str | None = None
) -> Tensor:
    """Each sequence's first ``seq_lengths[b]`` steps reversed, the rest left in place
    (``[batch, time, ...]`` or ``[time, batch, ...]`` layouts)."""
    x = convert_to_tensor(input)
    if (seq_axis, batch_axis) not in ((1, 0), (0, 1)):
        raise ValueError(
            "reverse_sequence: only the [batch, time] and [time, batch] layouts are provided"
        )
    time_major = seq_axis == 0
    rank = x.shape.rank
    if rank is None:
        raise ValueError("reverse_sequence needs an input of known rank")
    if time_major:
        x = array_ops.transpose(x, [1, 0, *range(2, rank)])
    shape = array_ops.shape(x)
    batch, time = shape[0], shape[1]
    lengths = cast(convert_to_tensor(seq_lengths), dtypes.int32)
    t = array_ops.reshape(range_op(time), [1, -1])
    length = array_ops.reshape(lengths, [-1, 1])
    source = where(less(t, length), length - 1 - t, t * array_ops.ones_like(length))
    b = array_ops.reshape(range_op(batch), [-1, 1]) * array_ops.ones_like(t)
    out = gather_nd(x, array_ops.stack([b, minimum(source, time - 1)], axis=2))
    if time_major:
        out = array_ops.transpose(out, [1, 0, *range(2, rank)])
    return out


def sequence_mask(
    lengths: Any, maxlen: Any = None, dtype: Any = dtypes.bool, name: str | None = None
) -> Tensor:
    """A mask of the first ``lengths[i]`` steps of each row: ``mask[i..., j] = j <
    lengths[i...]``, of shape ``lengths.shape + [maxlen]``.

    Args:
        lengths: integer tensor of any rank.
        maxlen: scalar integer, the mask's last dimension (default: ``max(lengths)``,
            at least 0).
        dtype: the mask's dtype (``bool`` by default; other dtypes give 0 and 1).
        name: name scope (default ``SequenceMask``).

    Raises:
        ValueError: ``maxlen`` is not a scalar.
    """
    with name_scope(name, "SequenceMask"):
        lengths = convert_to_tensor(lengths)
        if maxlen is None:
            maxlen = maximum(
                convert_to_tensor(0, dtype=lengths.dtype),
                reduce_max(lengths, axis=list(range(lengths.shape.rank or 0))),
            )
        else:
            maxlen = convert_to_tensor(maxlen)
        if maxlen.shape.rank not in (None, 0):
            raise ValueError("maxlen must be scalar for sequence_mask")
        row = range_op(convert_to_tensor(0, dtype=maxlen.dtype), maxlen)
        # A Cast even between equal dtypes, as TF1's (it names the ops that follow).
        column = array_ops.expand_dims(lengths, -1)
        column = apply_op("Cast", [column], {"SrcT": column.dtype, "DstT": maxlen.dtype})
        mask = less(row, column)
        dtype = dtypes.as_dtype(dtype) if dtype is not None else dtypes.bool
        return mask if dtype == dtypes.bool else cast(mask, dtype)


def _reverse_steps(steps: list, lengths: Any) -> list:
    """TF1's ``_reverse_seq``: a list of ``[batch, ...]`` steps (or nests of them)
    reversed, each sequence's first ``lengths[b]`` steps only when lengths are given."""
    if lengths is None:
        return list(reversed(steps))
    flat = [nest.flatten(x) for x in steps]
    columns = []
    for column in zip(*flat):
        stacked = array_ops.stack(list(column))
        reversed_steps = reverse_sequence(stacked, lengths, 0, 1)
        reversed_steps.set_shape(stacked.shape)
        columns.append(array_ops.unstack(reversed_steps, num=len(column)))
    return [nest.pack_sequence_as(steps[0], [col[t] for col in columns]) for t in range(len(steps))]


def static_bidirectional_rnn(
    cell_fw: Any,
    cell_bw: Any,
    inputs: list,
    initial_state_fw: Any = None,
    initial_state_bw: Any = None,
    dtype: Any = None,
    sequence_length: Any = None,
    scope: Any = None,
) -> tuple[list, Any, Any]:
    """A forward and a backward ``static_rnn`` over a list of ``[batch, depth]`` inputs.

    Returns:
        ``(outputs, output_state_fw, output_state_bw)``: ``outputs[t]`` is the forward
        and backward outputs of step ``t`` concatenated along depth (the backward ones
        in input order; with ``sequence_length``, each sequence's first
        ``sequence_length[b]`` steps are the ones reversed).

    Raises:
        TypeError: ``inputs`` is not a list or tuple.
        ValueError: no inputs, or neither an initial state nor ``dtype``.
    """
    if not isinstance(inputs, (list, tuple)):
        raise TypeError("static_bidirectional_rnn: inputs must be a list")
    if not inputs:
        raise ValueError("static_bidirectional_rnn: inputs must not be empty")
    with variable_scope(scope or "bidirectional_rnn"):
        with variable_scope("fw") as fw_scope:
            out_fw, state_fw = static_rnn(
                cell_fw, inputs, initial_state_fw, dtype, sequence_length, scope=fw_scope
            )
        with variable_scope("bw") as bw_scope:
            reversed_inputs = _reverse_steps(list(inputs), sequence_length)
            tmp, state_bw = static_rnn(
                cell_bw, reversed_inputs, initial_state_bw, dtype, sequence_length, scope=bw_scope
            )
    out_bw = _reverse_steps(tmp, sequence_length)
    outputs = [concat([fw, bw], 1) for fw, bw in zip(out_fw, out_bw)]
    return outputs, state_fw, state_bw


def bidirectional_dynamic_rnn(
    cell_fw: Any,
    cell_bw: Any,
    inputs: Any,
    sequence_length: Any = None,
    initial_state_fw: Any = None,
    initial_state_bw: Any = None,
    dtype: Any = None,
    parallel_iterations: Any = None,
    swap_memory: bool = False,
    time_major: bool = False,
    scope: Any = None,
) -> tuple[tuple[Tensor, Tensor], tuple[Any, Any]]:
    """A forward and a backward ``dynamic_rnn`` over ``inputs``; returns
    ``((output_fw, output_bw), (state_fw, state_bw))``, the backward outputs in input
    order."""
    _require_cell(cell_fw, "cell_fw")
    _require_cell(cell_bw, "cell_bw")
    inputs = convert_to_tensor(inputs)
    seq_axis, batch_axis = (0, 1) if time_major else (1, 0)
    with variable_scope(scope or "bidirectional_rnn"):
        with variable_scope("fw") as fw_scope:
            out_fw, state_fw = dynamic_rnn(
                cell_fw,
                inputs,
                sequence_length,
                initial_state_fw,
                dtype,
                time_major=time_major,
                scope=fw_scope,
            )
        with variable_scope("bw") as bw_scope:
            if sequence_length is None:
                reversed_inputs = array_ops.reverse(inputs, [seq_axis])
            else:
                reversed_inputs = reverse_sequence(inputs, sequence_length, seq_axis, batch_axis)
            out_bw, state_bw = dynamic_rnn(
                cell_bw,
                reversed_inputs,
                sequence_length,
                initial_state_bw,
                dtype,
                time_major=time_major,
                scope=bw_scope,
            )
    # Outside the scopes, as TF1 does it (the backward outputs are `ReverseV2:0`).
    if sequence_length is None:
        out_bw = array_ops.reverse(out_bw, [seq_axis])
    else:
        out_bw = reverse_sequence(out_bw, sequence_length, seq_axis, batch_axis)
    return (out_fw, out_bw), (state_fw, state_bw)
