"""``tf.contrib.rnn``: TF 1.15's aliases of the core recurrent cells and static RNNs.

``static_bidirectional_rnn`` is ``tf.nn.static_bidirectional_rnn``, looked up when
accessed (see ``missing.py``).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from ..framework import scopes
from ..layers.rnn import static_rnn as static_rnn
from ..layers.rnn_cells import BasicLSTMCell as BasicLSTMCell
from ..layers.rnn_cells import BasicRNNCell as BasicRNNCell
from ..layers.rnn_cells import DropoutWrapper as DropoutWrapper
from ..layers.rnn_cells import GRUCell as GRUCell
from ..layers.rnn_cells import LSTMCell as LSTMCell
from ..layers.rnn_cells import LSTMStateTuple as LSTMStateTuple
from ..layers.rnn_cells import MultiRNNCell as MultiRNNCell
from ..layers.rnn_cells import ResidualWrapper as ResidualWrapper
from ..layers.rnn_cells import RNNCell as RNNCell
from .missing import contrib_hook


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


# tf.contrib.rnn.core_rnn_cell.X: the old home of the same cells.
core_rnn_cell = SimpleNamespace(
    BasicLSTMCell=BasicLSTMCell,
    BasicRNNCell=BasicRNNCell,
    DeviceWrapper=DeviceWrapper,
    DropoutWrapper=DropoutWrapper,
    GRUCell=GRUCell,
    LSTMCell=LSTMCell,
    LSTMStateTuple=LSTMStateTuple,
    MultiRNNCell=MultiRNNCell,
    RNNCell=RNNCell,
)

__getattr__ = contrib_hook(
    "rnn",
    __name__,
    lazy={"static_bidirectional_rnn": ("dataflow.nn", "static_bidirectional_rnn")},
)

del contrib_hook, SimpleNamespace  # not TF1 names
