"""``tf.contrib.rnn``: TF 1.15's aliases of the core recurrent cells and static RNNs.

``static_bidirectional_rnn`` is ``tf.nn.static_bidirectional_rnn``, looked up when
accessed (see ``missing.py``).
"""

from __future__ import annotations

from types import SimpleNamespace

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
from .rnn_cells import LayerNormBasicLSTMCell as LayerNormBasicLSTMCell
from .rnn_cells import NASCell as NASCell
from .rnn_wrappers import DeviceWrapper as DeviceWrapper
from .rnn_wrappers import EmbeddingWrapper as EmbeddingWrapper
from .rnn_wrappers import OutputProjectionWrapper as OutputProjectionWrapper

# tf.contrib.rnn.core_rnn_cell.X: the old home of the same cells.
core_rnn_cell = SimpleNamespace(
    BasicLSTMCell=BasicLSTMCell,
    BasicRNNCell=BasicRNNCell,
    DeviceWrapper=DeviceWrapper,
    EmbeddingWrapper=EmbeddingWrapper,
    DropoutWrapper=DropoutWrapper,
    GRUCell=GRUCell,
    LSTMCell=LSTMCell,
    LSTMStateTuple=LSTMStateTuple,
    MultiRNNCell=MultiRNNCell,
    OutputProjectionWrapper=OutputProjectionWrapper,
    RNNCell=RNNCell,
)

__getattr__ = contrib_hook(
    "rnn",
    __name__,
    lazy={"static_bidirectional_rnn": ("dataflow.nn", "static_bidirectional_rnn")},
)

del contrib_hook, SimpleNamespace  # not TF1 names
