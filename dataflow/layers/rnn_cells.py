"""``tf.nn.rnn_cell``: TF1's recurrent cells, as layers with TF1's variable names.

``BasicRNNCell``, ``BasicLSTMCell``, ``GRUCell`` and ``LSTMCell`` (peepholes and
projection) compute one time step, ``(output, new_state) = cell(inputs, state)``; their
weights are made on the first call in the cell's scope (``rnn/basic_lstm_cell/kernel``
under ``static_rnn``), and later steps reuse them. ``MultiRNNCell`` stacks cells
(``cell_0``, ``cell_1``, ...), ``DropoutWrapper`` and ``ResidualWrapper`` wrap one. The
formulas are TF1's (``rnn_cell_impl``), gate order included, so that values loaded from
a TF1 checkpoint give TF1's numbers.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable, Sequence
from typing import Any

from ..framework import dtypes
from ..framework.graph import Tensor, convert_to_tensor, get_default_graph
from ..framework.scopes import name_scope
from ..framework.tensor_shape import TensorShape
from ..ops import array as array_ops
from ..ops.linalg.products import matmul
from ..ops.math.arith import add, multiply, sigmoid, tanh
from ..ops.math.composite import clip_by_value
from ..ops.nn.impl import bias_add
from ..ops.nn.impl import dropout as nn_dropout
from ..ops.nn.rnn import lstm_sequence
from ..ops.state.initializers import constant_initializer, zeros_initializer
from ..ops.state.scope_context import variable_scope
from .base import Layer, channels_dim


class LSTMStateTuple(namedtuple("LSTMStateTuple", ("c", "h"))):
    """An LSTM's state: the cell state ``c`` and the output ``h``."""

    __slots__ = ()

    @property
    def dtype(self) -> dtypes.DType:
        return self.c.dtype


def _flatten_state(state: Any) -> list:
    if isinstance(state, (tuple, list)):
        return [leaf for part in state for leaf in _flatten_state(part)]
    return [state]


class RNNCell(Layer):
    """The cell interface: ``state_size``, ``output_size``, ``zero_state`` and
    ``__call__(inputs, state) -> (output, new_state)``."""

    def __init__(
        self, trainable: bool = True, name: str | None = None, dtype: Any = None, **kwargs: Any
    ):
        super().__init__(trainable, name, dtype, **kwargs)

    @property
    def state_size(self) -> Any:
        raise NotImplementedError

    @property
    def output_size(self) -> int:
        raise NotImplementedError

    def zero_state(self, batch_size: Any, dtype: Any) -> Any:
        """Zeros of ``state_size`` for ``batch_size`` sequences."""
        with name_scope(None, f"{type(self).__name__}ZeroState", [batch_size]):
            return _zeros_like_size(self.state_size, batch_size, dtypes.as_dtype(dtype))

    def __call__(self, inputs: Any, state: Any, scope: Any = None) -> Any:
        if scope is not None:
            with variable_scope(scope):
                return super().__call__(inputs, state)
        return super().__call__(inputs, state)

    def _fusable(self) -> bool:
        """Whether ``_run_sequence`` gives this cell's results over a whole sequence."""
        return False

    def _run_sequence(self, inputs: Tensor, state: Any) -> tuple:
        """The cell over every step of the time-major ``inputs`` ``[time, batch,
        depth]`` in one op: ``(outputs [time, batch, units], final state)``, with the
        weights ``__call__`` would make (only where ``_fusable``)."""
        raise NotImplementedError


def _lstm_over_sequence(cell: Any, inputs: Tensor, state: Any) -> tuple:
    """``BasicLSTMCell``'s or a plain ``LSTMCell``'s ``_run_sequence``: the same weights,
    formulas and gate order as their ``call``, one ``LSTMSequence`` op for all steps."""

    def run() -> tuple:
        cell._build_once(inputs.shape[1:], inputs.dtype)
        c, h = state
        hs, cs = lstm_sequence(inputs, c, h, cell._kernel, cell._bias, cell._forget_bias)
        return hs, LSTMStateTuple(cs[-1], hs[-1])

    return cell._in_scope(run)


def _zeros_like_size(size: Any, batch_size: Any, dtype: dtypes.DType) -> Any:
    if isinstance(size, LSTMStateTuple):
        return LSTMStateTuple(*(_zeros_like_size(s, batch_size, dtype) for s in size))
    if isinstance(size, (tuple, list)):
        return tuple(_zeros_like_size(s, batch_size, dtype) for s in size)
    return array_ops.zeros(array_ops.stack([batch_size, int(size)]), dtype)


class BasicRNNCell(RNNCell):
    """``output = new_state = activation(W [inputs, state] + b)``."""

    def __init__(
        self,
        num_units: int,
        activation: Callable | None = None,
        reuse: Any = None,
        name: str | None = None,
        dtype: Any = None,
        **kwargs: Any,
    ):
        super().__init__(name=name, dtype=dtype, _reuse=reuse, **kwargs)
        self._num_units = int(num_units)
        self._activation = activation or tanh

    state_size = property(lambda self: self._num_units)
    output_size = property(lambda self: self._num_units)

    def build(self, input_shape: Any) -> None:
        depth = channels_dim(TensorShape(input_shape), type(self).__name__)
        self._kernel = self.add_weight("kernel", [depth + self._num_units, self._num_units])
        self._bias = self.add_weight("bias", [self._num_units], initializer=zeros_initializer())

    def call(self, inputs: Tensor, state: Tensor) -> tuple:
        joined = array_ops.concat([inputs, state], 1)
        output = self._activation(bias_add(matmul(joined, self._kernel), self._bias))
        return output, output


class GRUCell(RNNCell):
    """Gated recurrent unit (Cho et al., 2014), TF1's form: gates ``r, u`` from
    ``gates/kernel`` (bias ones), candidate from ``candidate/kernel``, ``h = u * state +
    (1 - u) * candidate``."""

    def __init__(
        self,
        num_units: int,
        activation: Callable | None = None,
        reuse: Any = None,
        kernel_initializer: Any = None,
        bias_initializer: Any = None,
        name: str | None = None,
        dtype: Any = None,
        **kwargs: Any,
    ):
        super().__init__(name=name, dtype=dtype, _reuse=reuse, **kwargs)
        self._num_units = int(num_units)
        self._activation = activation or tanh
        self._kernel_initializer, self._bias_initializer = kernel_initializer, bias_initializer

    state_size = property(lambda self: self._num_units)
    output_size = property(lambda self: self._num_units)

    def build(self, input_shape: Any) -> None:
        depth = channels_dim(TensorShape(input_shape), "GRUCell")
        n = self._num_units
        with variable_scope("gates"):
            self._gate_kernel = self.add_weight(
                "kernel", [depth + n, 2 * n], initializer=self._kernel_initializer
            )
            self._gate_bias = self.add_weight(
                "bias", [2 * n], initializer=self._bias_initializer or constant_initializer(1.0)
            )
        with variable_scope("candidate"):
            self._candidate_kernel = self.add_weight(
                "kernel", [depth + n, n], initializer=self._kernel_initializer
            )
            self._candidate_bias = self.add_weight(
                "bias", [n], initializer=self._bias_initializer or zeros_initializer()
            )

    def call(self, inputs: Tensor, state: Tensor) -> tuple:
        gates = sigmoid(
            bias_add(
                matmul(array_ops.concat([inputs, state], 1), self._gate_kernel), self._gate_bias
            )
        )
        r, u = array_ops.split(gates, 2, axis=1)
        candidate = bias_add(
            matmul(array_ops.concat([inputs, r * state], 1), self._candidate_kernel),
            self._candidate_bias,
        )
        c = self._activation(candidate)
        new_h = u * state + (1.0 - u) * c
        return new_h, new_h


class BasicLSTMCell(RNNCell):
    """LSTM without peepholes, TF1's gate order ``i, j, f, o`` and ``forget_bias``
    added to the forget gate; the state is an ``LSTMStateTuple(c, h)``."""

    def __init__(
        self,
        num_units: int,
        forget_bias: float = 1.0,
        state_is_tuple: bool = True,
        activation: Callable | None = None,
        reuse: Any = None,
        name: str | None = None,
        dtype: Any = None,
        **kwargs: Any,
    ):
        super().__init__(name=name, dtype=dtype, _reuse=reuse, **kwargs)
        if not state_is_tuple:
            raise ValueError("BasicLSTMCell: state_is_tuple=False is not provided")
        self._num_units = int(num_units)
        self._forget_bias = float(forget_bias)
        self._activation = activation or tanh

    state_size = property(lambda self: LSTMStateTuple(self._num_units, self._num_units))
    output_size = property(lambda self: self._num_units)

    def build(self, input_shape: Any) -> None:
        depth = channels_dim(TensorShape(input_shape), type(self).__name__)
        n = self._num_units
        self._kernel = self.add_weight("kernel", [depth + n, 4 * n])
        self._bias = self.add_weight("bias", [4 * n], initializer=zeros_initializer())

    def call(self, inputs: Tensor, state: Any) -> tuple:
        c, h = state
        gates = bias_add(matmul(array_ops.concat([inputs, h], 1), self._kernel), self._bias)
        i, j, f, o = array_ops.split(gates, 4, axis=1)
        # TF1's calls, so the state and output are named as TF1's (`Add_1`, `Mul_2`).
        forget = sigmoid(add(f, convert_to_tensor(self._forget_bias, dtype=f.dtype)))
        new_c = add(multiply(c, forget), multiply(sigmoid(i), self._activation(j)))
        new_h = multiply(self._activation(new_c), sigmoid(o))
        return new_h, LSTMStateTuple(new_c, new_h)

    def _fusable(self) -> bool:
        return type(self) is BasicLSTMCell and self._activation is tanh

    def _run_sequence(self, inputs: Tensor, state: Any) -> tuple:
        return _lstm_over_sequence(self, inputs, state)


class LSTMCell(RNNCell):
    """LSTM with optional peepholes (``w_f_diag``, ``w_i_diag``, ``w_o_diag``), cell
    clipping and an output projection (``projection/kernel``), as TF1's ``LSTMCell``."""

    def __init__(
        self,
        num_units: int,
        use_peepholes: bool = False,
        cell_clip: float | None = None,
        initializer: Any = None,
        num_proj: int | None = None,
        proj_clip: float | None = None,
        num_unit_shards: Any = None,
        num_proj_shards: Any = None,
        forget_bias: float = 1.0,
        state_is_tuple: bool = True,
        activation: Callable | None = None,
        reuse: Any = None,
        name: str | None = None,
        dtype: Any = None,
        **kwargs: Any,
    ):
        super().__init__(name=name, dtype=dtype, _reuse=reuse, **kwargs)
        if not state_is_tuple:
            raise ValueError("LSTMCell: state_is_tuple=False is not provided")
        self._num_units, self._use_peepholes = int(num_units), use_peepholes
        self._cell_clip, self._proj_clip = cell_clip, proj_clip
        self._initializer, self._num_proj = initializer, num_proj
        self._forget_bias = float(forget_bias)
        self._activation = activation or tanh

    @property
    def state_size(self) -> LSTMStateTuple:
        return LSTMStateTuple(self._num_units, self._num_proj or self._num_units)

    @property
    def output_size(self) -> int:
        return self._num_proj or self._num_units

    def build(self, input_shape: Any) -> None:
        depth = channels_dim(TensorShape(input_shape), "LSTMCell")
        n, h_depth = self._num_units, self._num_proj or self._num_units
        self._kernel = self.add_weight(
            "kernel", [depth + h_depth, 4 * n], initializer=self._initializer
        )
        self._bias = self.add_weight("bias", [4 * n], initializer=zeros_initializer())
        if self._use_peepholes:
            self._w_f = self.add_weight("w_f_diag", [n], initializer=self._initializer)
            self._w_i = self.add_weight("w_i_diag", [n], initializer=self._initializer)
            self._w_o = self.add_weight("w_o_diag", [n], initializer=self._initializer)
        if self._num_proj is not None:
            with variable_scope("projection"):
                self._projection = self.add_weight(
                    "kernel", [n, self._num_proj], initializer=self._initializer
                )

    def call(self, inputs: Tensor, state: Any) -> tuple:
        c_prev, m_prev = state
        gates = bias_add(matmul(array_ops.concat([inputs, m_prev], 1), self._kernel), self._bias)
        i, j, f, o = array_ops.split(gates, 4, axis=1)
        if self._use_peepholes:
            c = sigmoid(f + self._forget_bias + self._w_f * c_prev) * c_prev + sigmoid(
                i + self._w_i * c_prev
            ) * self._activation(j)
        else:
            c = sigmoid(f + self._forget_bias) * c_prev + sigmoid(i) * self._activation(j)
        if self._cell_clip is not None:
            c = clip_by_value(c, -self._cell_clip, self._cell_clip)
        if self._use_peepholes:
            m = sigmoid(o + self._w_o * c) * self._activation(c)
        else:
            m = sigmoid(o) * self._activation(c)
        if self._num_proj is not None:
            m = matmul(m, self._projection)
            if self._proj_clip is not None:
                m = clip_by_value(m, -self._proj_clip, self._proj_clip)
        return m, LSTMStateTuple(c, m)

    def _fusable(self) -> bool:
        plain = not self._use_peepholes and self._num_proj is None and self._cell_clip is None
        return type(self) is LSTMCell and plain and self._activation is tanh

    def _run_sequence(self, inputs: Tensor, state: Any) -> tuple:
        return _lstm_over_sequence(self, inputs, state)


class MultiRNNCell(RNNCell):
    """Cells stacked: each one's output is the next one's input; the state is the tuple
    of theirs (variables under ``cell_0``, ``cell_1``, ...)."""

    def __init__(self, cells: Sequence[RNNCell], state_is_tuple: bool = True):
        super().__init__()
        if not cells:
            raise ValueError("Must specify at least one cell for MultiRNNCell.")
        if not state_is_tuple:
            raise ValueError("MultiRNNCell: state_is_tuple=False is not provided")
        self._cells = list(cells)

    state_size = property(lambda self: tuple(cell.state_size for cell in self._cells))
    output_size = property(lambda self: self._cells[-1].output_size)

    def zero_state(self, batch_size: Any, dtype: Any) -> Any:
        """Each cell's own zero state (so a ``DeviceWrapper`` places its own), named as
        TF1 names them (``MultiRNNCellZeroState/GRUCellZeroState/zeros``)."""
        with name_scope(None, f"{type(self).__name__}ZeroState", [batch_size]):
            return tuple(cell.zero_state(batch_size, dtype) for cell in self._cells)

    def call(self, inputs: Tensor, state: Any) -> tuple:
        current, new_states = inputs, []
        for k, cell in enumerate(self._cells):
            with variable_scope(f"cell_{k}"):
                current, new_state = cell(current, state[k])
            new_states.append(new_state)
        return current, tuple(new_states)

    def _fusable(self) -> bool:
        return type(self) is MultiRNNCell and all(cell._fusable() for cell in self._cells)

    def _run_sequence(self, inputs: Tensor, state: Any) -> tuple:
        # Layer by layer: each layer's whole output sequence is the next one's input,
        # which is what the step-by-step order computes too.
        def run() -> tuple:
            self._build_once(inputs.shape[1:], inputs.dtype)
            current, new_states = inputs, []
            for k, cell in enumerate(self._cells):
                with variable_scope(f"cell_{k}"):
                    current, new_state = cell._run_sequence(current, state[k])
                new_states.append(new_state)
            return current, tuple(new_states)

        return self._in_scope(run)


class DropoutWrapper(RNNCell):
    """Dropout on a cell's inputs and outputs (``input_keep_prob``,
    ``output_keep_prob``; ``state_keep_prob`` too), a fresh mask each step."""

    def __init__(
        self,
        cell: RNNCell,
        input_keep_prob: Any = 1.0,
        output_keep_prob: Any = 1.0,
        state_keep_prob: Any = 1.0,
        variational_recurrent: bool = False,
        input_size: Any = None,
        dtype: Any = None,
        seed: int | None = None,
        **kwargs: Any,
    ):
        super().__init__()
        if variational_recurrent:
            raise ValueError("DropoutWrapper: variational_recurrent is not provided")
        self._cell, self._seed = cell, seed
        self._input_keep, self._output_keep, self._state_keep = (
            input_keep_prob,
            output_keep_prob,
            state_keep_prob,
        )

    state_size = property(lambda self: self._cell.state_size)
    output_size = property(lambda self: self._cell.output_size)

    def _drop(self, value: Tensor, keep: Any) -> Tensor:
        if isinstance(keep, (int, float)) and keep == 1.0:
            return value
        return nn_dropout(value, keep_prob=keep, seed=self._seed)

    def __call__(self, inputs: Any, state: Any, scope: Any = None) -> Any:
        output, new_state = self._cell(
            self._drop(convert_to_tensor(inputs), self._input_keep), state, scope
        )
        if not (isinstance(self._state_keep, (int, float)) and self._state_keep == 1.0):
            new_state = _map_state(new_state, lambda s: self._drop(s, self._state_keep))
        return self._drop(output, self._output_keep), new_state


class ResidualWrapper(RNNCell):
    """The wrapped cell's output plus its input."""

    def __init__(self, cell: RNNCell, residual_fn: Callable | None = None):
        super().__init__()
        self._cell, self._residual_fn = cell, residual_fn or (lambda i, o: i + o)

    state_size = property(lambda self: self._cell.state_size)
    output_size = property(lambda self: self._cell.output_size)

    def __call__(self, inputs: Any, state: Any, scope: Any = None) -> Any:
        output, new_state = self._cell(inputs, state, scope)
        return self._residual_fn(convert_to_tensor(inputs), output), new_state


class DeviceWrapper(RNNCell):
    """Runs the wrapped cell's ops (and its zero state) on ``device``: a stacked
    ``MultiRNNCell`` spread over devices, one layer each, as TF1's model-parallel RNNs
    do."""

    def __init__(self, cell: RNNCell, device: str):
        super().__init__()
        self._cell, self._device = cell, device

    state_size = property(lambda self: self._cell.state_size)
    output_size = property(lambda self: self._cell.output_size)

    def zero_state(self, batch_size: Any, dtype: Any) -> Any:
        with name_scope(None, f"{type(self).__name__}ZeroState", [batch_size]):
            with get_default_graph().device(self._device):
                return self._cell.zero_state(batch_size, dtype)

    def __call__(self, inputs: Any, state: Any, scope: Any = None) -> Any:
        with get_default_graph().device(self._device):
            return self._cell(inputs, state, scope)


def _map_state(state: Any, fn: Callable) -> Any:
    if isinstance(state, LSTMStateTuple):
        return LSTMStateTuple(*(fn(s) for s in state))
    if isinstance(state, tuple):
        return tuple(_map_state(s, fn) for s in state)
    return fn(state)
