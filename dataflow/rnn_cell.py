"""``tf.nn.rnn_cell``: TF1's recurrent cells (see ``layers/rnn_cells.py``)."""

from ._util.missing_names import missing_name_hook
from .layers.rnn_cells import (
    BasicLSTMCell as BasicLSTMCell,
)
from .layers.rnn_cells import (
    BasicRNNCell as BasicRNNCell,
)
from .layers.rnn_cells import (
    DeviceWrapper as DeviceWrapper,
)
from .layers.rnn_cells import (
    DropoutWrapper as DropoutWrapper,
)
from .layers.rnn_cells import (
    GRUCell as GRUCell,
)
from .layers.rnn_cells import (
    LSTMCell as LSTMCell,
)
from .layers.rnn_cells import (
    LSTMStateTuple as LSTMStateTuple,
)
from .layers.rnn_cells import (
    MultiRNNCell as MultiRNNCell,
)
from .layers.rnn_cells import (
    ResidualWrapper as ResidualWrapper,
)
from .layers.rnn_cells import (
    RNNCell as RNNCell,
)

__getattr__ = missing_name_hook("nn.rnn_cell", __name__)

del missing_name_hook  # not a TF1 name: keep it out of the namespace
