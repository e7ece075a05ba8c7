"""``tf.contrib.rnn``'s cells that ``tf.nn.rnn_cell`` lacks: ``NASCell`` and
``LayerNormBasicLSTMCell`` (TF 1.15's ``contrib/rnn/python/ops/rnn_cell.py``).

Both are plain cells: their variables are made with ``get_variable`` when the cell is
first called, under the cell's scope (``rnn/nas_cell/kernel``,
``rnn/layer_norm_basic_lstm_cell/input/gamma``), so TF 1.15 checkpoints load by name.
"""

from __future__ import annotations

from typing import Any

import dataflow as tf

from ..rnn_cell import LSTMStateTuple, RNNCell


def _input_depth(inputs: Any) -> int:
    """The static last dimension of rank-2 ``inputs``.

    Raises:
        ValueError: the rank is not 2 or the depth is unknown.
    """
    shape = inputs.shape
    if shape.rank not in (None, 2):
        raise ValueError(f"Shape {shape} must have rank 2")
    depth = None if shape.rank is None else shape.as_list()[1]
    if depth is None:
        raise ValueError("Could not infer input size from inputs.get_shape()[-1]")
    return depth


class NASCell(RNNCell):
    """The recurrent cell found by Neural Architecture Search (Zoph and Le, ICLR 2017).

    Eight branches mix the input (``kernel``) and the previous output
    (``recurrent_kernel``, plus ``bias`` if ``use_biases``) through sigmoid, relu and tanh
    in a fixed three-level tree; the previous cell state enters once. With ``num_proj``
    the output goes through ``projection_weights``. The state is an ``LSTMStateTuple``.
    """

    def __init__(
        self, num_units: int, num_proj: int | None = None, use_biases: bool = False, reuse=None
    ):
        super().__init__(_reuse=reuse)
        self._num_units, self._num_proj, self._use_biases = num_units, num_proj, use_biases
        out = num_units if num_proj is None else num_proj
        self._state_size = LSTMStateTuple(num_units, out)
        self._output_size = out

    state_size = property(lambda self: self._state_size)
    output_size = property(lambda self: self._output_size)

    def build(self, input_shape: Any) -> None:
        pass  # the variables are made in call, as TF 1.15's NASCell makes them

    def call(self, inputs: Any, state: Any) -> tuple:
        c_prev, m_prev = state
        dtype = inputs.dtype
        depth = _input_depth(inputs)
        units = self._num_units
        w_m = tf.get_variable("recurrent_kernel", [self._output_size, 8 * units], dtype)
        w_x = tf.get_variable("kernel", [depth, 8 * units], dtype)
        m_part = tf.matmul(m_prev, w_m)
        x_part = tf.matmul(inputs, w_x)
        if self._use_biases:
            bias = tf.get_variable(
                "bias", [8 * units], dtype=dtype, initializer=tf.zeros_initializer()
            )
            m_part = tf.nn.bias_add(m_part, bias)
        m = tf.split(m_part, 8, axis=1)
        x = tf.split(x_part, 8, axis=1)
        # level 1: one activation per branch; branch 3 multiplies instead of adding
        a0 = tf.sigmoid(x[0] + m[0])
        a1 = tf.nn.relu(x[1] + m[1])
        a2 = tf.sigmoid(x[2] + m[2])
        a3 = tf.nn.relu(x[3] * m[3])
        a4 = tf.tanh(x[4] + m[4])
        a5 = tf.sigmoid(x[5] + m[5])
        a6 = tf.tanh(x[6] + m[6])
        a7 = tf.sigmoid(x[7] + m[7])
        # level 2, with the previous cell state injected into the first pair
        b0 = tf.tanh(tf.tanh(a0 * a1) + c_prev)
        b1 = tf.tanh(a2 + a3)
        b2 = tf.tanh(a4 * a5)
        b3 = tf.sigmoid(a6 + a7)
        new_c = b0 * b1
        new_m = tf.tanh(new_c * tf.tanh(b2 + b3))
        if self._num_proj is not None:
            proj = tf.get_variable("projection_weights", [units, self._num_proj], dtype)
            new_m = tf.matmul(new_m, proj)
        return new_m, LSTMStateTuple(new_c, new_m)


class LayerNormBasicLSTMCell(RNNCell):
    """A basic LSTM cell with layer normalization (Ba et al. 2016) of each gate's
    pre-activation and of the new cell state, and recurrent dropout of the candidate
    (Semeniuta et al. 2016).

    Variables: ``kernel`` ``[input + units, 4 * units]`` (gates ``i, j, f, o``), ``bias``
    only without ``layer_norm``, and ``gamma``/``beta`` (initialized to ``norm_gain`` and
    ``norm_shift``) under ``input``, ``transform``, ``forget``, ``output`` and ``state``.
    ``dropout_keep_prob`` below 1 (or a tensor) drops candidate units with
    ``dropout_prob_seed``.
    """

    def __init__(
        self,
        num_units: int,
        forget_bias: float = 1.0,
        input_size: Any = None,
        activation: Any = None,
        layer_norm: bool = True,
        norm_gain: float = 1.0,
        norm_shift: float = 0.0,
        dropout_keep_prob: Any = 1.0,
        dropout_prob_seed: int | None = None,
        reuse: Any = None,
    ):
        super().__init__(_reuse=reuse)
        del input_size  # deprecated and unused in TF 1.15 too
        self._num_units = num_units
        self._activation = activation or tf.tanh
        self._forget_bias = forget_bias
        self._keep_prob, self._seed = dropout_keep_prob, dropout_prob_seed
        self._layer_norm, self._gain, self._shift = layer_norm, norm_gain, norm_shift

    state_size = property(lambda self: LSTMStateTuple(self._num_units, self._num_units))
    output_size = property(lambda self: self._num_units)

    def build(self, input_shape: Any) -> None:
        pass  # the variables are made in call, as TF 1.15's cell makes them

    def _norm(self, x: Any, scope: str) -> Any:
        with tf.variable_scope(scope):
            depth = x.shape.as_list()[-1:]
            tf.get_variable(
                "gamma", depth, x.dtype, initializer=tf.constant_initializer(self._gain)
            )
            tf.get_variable(
                "beta", depth, x.dtype, initializer=tf.constant_initializer(self._shift)
            )
        return tf.contrib.layers.layer_norm(x, reuse=True, scope=scope)

    def call(self, inputs: Any, state: Any) -> tuple:
        c, h = state
        args = tf.concat([inputs, h], 1)
        width = 4 * self._num_units
        kernel = tf.get_variable("kernel", [args.shape.as_list()[-1], width], args.dtype)
        gates = tf.matmul(args, kernel)
        if not self._layer_norm:
            gates = tf.nn.bias_add(gates, tf.get_variable("bias", [width], args.dtype))
        i, j, f, o = tf.split(gates, 4, axis=1)
        if self._layer_norm:
            i, j = self._norm(i, "input"), self._norm(j, "transform")
            f, o = self._norm(f, "forget"), self._norm(o, "output")
        g = self._activation(j)
        if not isinstance(self._keep_prob, float) or self._keep_prob < 1:
            g = tf.nn.dropout(g, self._keep_prob, seed=self._seed)
        new_c = c * tf.sigmoid(f + self._forget_bias) + tf.sigmoid(i) * g
        if self._layer_norm:
            new_c = self._norm(new_c, "state")
        new_h = self._activation(new_c) * tf.sigmoid(o)
        return new_h, LSTMStateTuple(new_c, new_h)
